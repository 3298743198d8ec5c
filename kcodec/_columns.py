"""The column tree of a program, as the bulk decoder (csrc/kc_columns.c) builds it.

Nodes are numbered in pre-order (a node, then each child's subtree in turn); node 0 is
the message.  A struct's children are its regular fields (wire order), its tagged
fields (ascending tag) and, when flexible, ``_unknown_tagged_fields``
(list<struct<tag: int32, data: binary>>).  Each node carries the default an absent
tagged field takes (for a default struct: each of its fields' defaults).
Both engines' Arrow output (:mod:`kcodec.arrow`) and the native ``decode_bulk`` use it.
"""
from __future__ import annotations

import struct as _struct
import uuid as _uuid
from typing import Any, List, NamedTuple, Optional, Tuple

import numpy as np

from ._program import (T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_INT32, T_STRING,
                       T_STRUCT, T_UUID, Program)

__all__ = ["Node", "layout", "slice_heads", "UNKNOWN_TAGS_KEY", "N_STRUCT", "N_LIST", "N_FIXED",
           "N_BOOL", "N_VAR"]

UNKNOWN_TAGS_KEY = "_unknown_tagged_fields"
# keep in sync with csrc/kc_columns.h
N_STRUCT, N_LIST, N_FIXED, N_BOOL, N_VAR = 1, 2, 3, 4, 5


class Node(NamedTuple):
    kind: int                   # N_*
    type: int                   # T_* of the value
    name: str                   # field name in its struct ("item" for list elements)
    nullable: bool              # may be null in this version (tagged: or null by default)
    kids: Tuple[int, ...]       # child node indices
    default: Tuple[bool, int, Optional[bytes]]   # (null, fixed value, bytes) when absent
    regular: int = 0            # a struct's regular fields: its first kids (then tagged)


def _kind(t: int) -> int:
    if t == T_STRUCT:
        return N_STRUCT
    if t == T_ARRAY:
        return N_LIST
    if t == T_BOOL:
        return N_BOOL
    if t in (T_STRING, T_BYTES) or t > T_UUID:
        return N_VAR
    return N_FIXED


def _default(t: int, dv: Any) -> Tuple[bool, int, Optional[bytes]]:
    if dv is None:
        return (True, 0, None)
    if t == T_FLOAT64:
        return (False, _struct.unpack("<q", _struct.pack("<d", float(dv)))[0], None)
    if t == T_UUID:
        return (False, 0, dv.bytes if isinstance(dv, _uuid.UUID) else bytes(dv))
    if t == T_STRING:
        return (False, 0, dv.encode("utf-8"))
    if _kind(t) == N_VAR:
        return (False, 0, bytes(dv))
    if t in (T_STRUCT, T_ARRAY):
        return (False, 0, None)
    return (False, int(dv), None)


class _Builder:
    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.nodes: List[Optional[Node]] = []

    def add(self, kind: int, t: int, name: str, nullable: bool, default: Any) -> int:
        self.nodes.append(Node(kind, t, name, nullable, (), default))
        return len(self.nodes) - 1

    def set_kids(self, i: int, kids: List[int]) -> None:
        self.nodes[i] = self.nodes[i]._replace(kids=tuple(kids))  # type: ignore[union-attr]

    def value(self, t: int, arg: int, name: str, nullable: bool, dv: Any) -> int:
        if t == T_STRUCT:
            return self.struct(arg, name, nullable, dv)
        i = self.add(_kind(t), t, name, nullable, _default(t, dv))
        if t == T_ARRAY:
            self.set_kids(i, [self.value(arg & 0xFF, arg >> 8, "item", False, None)])
        return i

    def struct(self, sidx: int, name: str, nullable: bool, dv: Any) -> int:
        sp = self.prog.structs[sidx]
        i = self.add(N_STRUCT, T_STRUCT, name, nullable, _default(T_STRUCT, dv))
        kids = [self.value(f.type, f.arg, f.name, f.nullable, f.default) for f in sp.fields]
        kids += [self.value(f.type, f.arg, f.name, f.nullable or f.default is None, f.default)
                 for f in sp.tagged]
        if sp.flexible:
            kids.append(self.unknown())
        self.set_kids(i, kids)
        self.nodes[i] = self.nodes[i]._replace(regular=len(sp.fields))  # type: ignore[union-attr]
        return i

    def unknown(self) -> int:
        lst = self.add(N_LIST, T_ARRAY, UNKNOWN_TAGS_KEY, False, (False, 0, None))
        st = self.add(N_STRUCT, T_STRUCT, "item", False, (False, 0, None))
        tag = self.add(N_FIXED, T_INT32, "tag", False, (False, 0, None))
        data = self.add(N_VAR, T_BYTES, "data", False, (False, 0, b""))
        self.set_kids(st, [tag, data])
        self.set_kids(lst, [st])
        return lst


def layout(prog: Program) -> List[Node]:
    """The program's column tree in pre-order (cached on the program)."""
    d = prog.__dict__
    got = d.get("_kc_layout")
    if got is None:
        b = _Builder(prog)
        b.struct(0, prog.name, False, {})
        got = d["_kc_layout"] = [n for n in b.nodes if n is not None]
    return got


def slice_heads(buffer: Any, positions: Any, lengths: Any, k: int, *,
                take: Any = None) -> Tuple[np.ndarray, np.ndarray]:
    """The first ``k`` (<= 8) bytes of each record slice ``buffer[positions[i]:
    positions[i] + lengths[i]]`` (version prefixes, frame heads), read in place (strided
    positions/lengths, e.g. fields of the log reader's record array, included; ``take``:
    row i is slice ``take[i]``).  Returns ``(heads, have)``: a (rows, k) uint8 array,
    zero-padded, and per row the bytes it has (at most k; -1 a null row; -2 a slice
    outside the buffer)."""
    import kcodec
    if kcodec.NATIVE:
        return kcodec._engine.slice_heads(buffer, positions, lengths, k, take=take)
    if not 0 <= k <= 8:
        raise ValueError("k must be 0..8")
    b = np.frombuffer(buffer, np.uint8)
    pos = np.asarray(positions, np.int64)
    ln = np.asarray(lengths, np.int64)
    if take is not None:
        tk = np.asarray(take, np.int64)
        inside = (tk >= 0) & (tk < len(pos))
        t = np.where(inside, tk, 0)
        pos, ln = (pos[t], np.where(inside, ln[t], 0)) if len(pos) else (np.zeros(len(tk), np.int64),) * 2
        bad_take = ~inside
    else:
        bad_take = np.zeros(len(pos), bool)
    bad = bad_take | ((ln >= 0) & ((pos < 0) | (pos > len(b)) | (ln > len(b) - pos)))
    have = np.where(ln < 0, -1, np.minimum(np.maximum(ln, 0), k)).astype(np.int32)
    have[bad] = -2
    heads = np.zeros((len(pos), k), np.uint8)
    for i in range(k):
        on = have > i
        heads[on, i] = b[pos[on] + i]
    return heads, have
