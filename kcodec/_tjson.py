"""Plans for the tape JSON writer (csrc/kc_tjson.h): Kafka's JSON form of a message
(what :func:`kcodec.to_kafka_json` gives) written in C from the spec engine's tape.

:func:`tjson_plan` compiles a :class:`~kcodec._program.Program` into the writer's plan:
for each struct, its fields in the schema's order with their key texts, where the tape
has them, the tagged fields' defaults (a tagged field at its default is left out), and
which bytes fields hold an embedded message.  The writer prints in one of two styles:
``"py"`` (``json.dumps(..., ensure_ascii=False)``'s text of that form) or ``"compact"``
(Jackson's, as Kafka's own tools print it).
"""
from __future__ import annotations

import json
import uuid
from array import array
from typing import Any, Dict, List, Optional, Tuple

from ._program import (F_TAGGED, T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_INT8, T_INT16, T_INT32,
                       T_INT64, T_RECORDS, T_STRING, T_STRUCT, T_UINT16, T_UINT32, T_UUID, Program)

__all__ = ["tjson_plan", "default_words", "MAGIC"]

MAGIC = 0x544A0001
_D_NONE, _D_INT, _D_NULL, _D_EMPTY, _D_STR, _D_UUID_ZERO = range(6)
_INTS = (T_BOOL, T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64)
_REFS = (T_STRING, T_BYTES, T_RECORDS, T_UUID, T_ARRAY, T_STRUCT)


def _i32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def default_words(f: Any, blob: bytearray) -> Tuple[int, int, int]:
    """How the writer tells a tagged field at its default: ``(kind, d0, d1)``; ValueError
    for a default it cannot compare (the caller then prints the message another way)."""
    d, t = f.default, f.type
    if t in _INTS and type(d) in (bool, int) and (type(d) is bool) == (t == T_BOOL):
        v = int(d) & 0xFFFFFFFFFFFFFFFF
        return _D_INT, _i32(v & 0xFFFFFFFF), _i32(v >> 32)
    if d is None and t in _REFS:
        return _D_NULL, 0, 0
    if t == T_STRING and type(d) is str:
        b = d.encode()
        at = len(blob)
        blob += b
        return _D_STR, at, len(b)
    if (t in (T_BYTES, T_RECORDS) and type(d) is bytes and not d) or (t == T_ARRAY and d == []):
        return _D_EMPTY, 0, 0
    if t == T_UUID and isinstance(d, uuid.UUID) and d.int == 0:
        return _D_UUID_ZERO, 0, 0
    raise ValueError(f"tagged field {f.name}: default {d!r} of type {t}")


def tjson_plan(prog: Program, style: str = "py",
               embeds: Optional[Dict[Tuple[str, str], int]] = None) -> Tuple["array[int]", bytes]:
    """The writer's plan of ``prog`` (int32 words, no NumPy: the KRaft dump's fast path
    starts without it) and its blob.  ``embeds`` maps
    ``(struct name, field name)`` of bytes fields to the index of the embedded message
    table the writer is given.  ValueError when the writer cannot print the message
    exactly (float64 fields, defaults it cannot compare)."""
    sep = ": " if style == "py" else ":"
    embeds = embeds or {}
    blob = bytearray()
    blocks: List[List[int]] = []
    for sp in prog.structs:
        words = [len(sp.ordered)]
        regular = {id(f): i for i, f in enumerate(sp.fields)}
        for f in sp.ordered:
            if f.type == T_FLOAT64 or (f.type == T_ARRAY and (f.arg & 0xFF) == T_FLOAT64):
                raise ValueError(f"{sp.name}.{f.name}: float64")
            key = (json.dumps(f.name, ensure_ascii=False) + sep).encode()
            at = len(blob)
            blob += key
            embed = embeds.get((sp.name, f.name), -1)
            if f.flags & F_TAGGED:
                kind, d0, d1 = default_words(f, blob)
                words += [at, len(key), -1 - sp.tag_index[f.tag], kind, d0, d1, embed]
            else:
                words += [at, len(key), regular[id(f)], _D_NONE, 0, 0, embed]
        blocks.append(words)
    n = len(blocks)
    plan = [MAGIC, n] + [0] * n
    for i, words in enumerate(blocks):
        plan[2 + i] = len(plan)
        plan += words
    return array("i", plan), bytes(blob) + bytes(16)     # KC_TJ_PAD
