"""Pure-Python reference engine.

Executes the same compiled programs as the C engine (``kcodec/_program.py``), one
field at a time.  It is the test oracle for the native path and the fallback when the
extension is unavailable (``KCODEC_NO_EXTENSIONS=1``).  It defines the value mapping:

* struct -> ``dict`` keyed by Kafka's JSON field name; every field of the version is
  present (a tagged field absent on the wire takes its default);
* int8..int64, uint16, uint32 -> ``int``; bool -> ``bool``; float64 -> ``float``;
  string -> ``str``; bytes and records -> ``bytes``; uuid -> ``uuid.UUID``;
  array -> ``list``; null -> ``None``;
* unknown tagged fields -> ``"_unknown_tagged_fields": [(tag, payload bytes), ...]`` in
  wire order, only when there are any.
"""
from __future__ import annotations

import operator
import struct as _struct
import uuid as _uuid
from typing import Any, Dict, List, Optional, Tuple

from ._program import (
    F_COMPACT, F_NULLABLE, INT_RANGES, T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_INT8,
    T_INT16, T_INT32, T_INT64, T_RECORDS, T_STRING, T_STRUCT, T_UINT16, T_UINT32, T_UUID,
    FieldPlan, Program, StructPlan, _copy_default, is_default_value,
)
from ._numbers import is_bool, is_integral, is_real
from .errors import DecodeError, EncodeError, UnsupportedVersionError

__all__ = ["decode", "encode", "UNKNOWN_TAGS_KEY"]

UNKNOWN_TAGS_KEY = "_unknown_tagged_fields"
MAX_DEPTH = 64
MAX_STRING = 0x7FFF

_FIXED = {
    T_INT8: _struct.Struct(">b"), T_INT16: _struct.Struct(">h"), T_UINT16: _struct.Struct(">H"),
    T_INT32: _struct.Struct(">i"), T_UINT32: _struct.Struct(">I"), T_INT64: _struct.Struct(">q"),
    T_FLOAT64: _struct.Struct(">d"),
}
_I16 = _FIXED[T_INT16]
_I32 = _FIXED[T_INT32]
_I8 = _FIXED[T_INT8]


class _Fail(Exception):
    def __init__(self, reason: str, offset: int) -> None:
        self.reason = reason
        self.offset = offset


# ----------------------------------------------------------------------------------------------
# decoding

class _Reader:
    __slots__ = ("buf", "pos", "end", "path")

    def __init__(self, buf: memoryview, pos: int, end: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = end
        self.path: List[Any] = []

    def take(self, n: int) -> int:
        p = self.pos
        if n < 0 or p + n > self.end:
            raise _Fail(f"needs {n} bytes, {self.end - p} left", p)
        self.pos = p + n
        return p

    def uvarint(self) -> int:
        # Kafka's readUnsignedVarint: at most 5 bytes, bits above 32 dropped.
        buf, p, end = self.buf, self.pos, self.end
        start = p
        value = 0
        shift = 0
        while True:
            if p >= end:
                raise _Fail("truncated varint", start)
            b = buf[p]
            p += 1
            if shift == 28:
                if b & 0x80:
                    raise _Fail("varint is too long", start)
                value |= (b << 28) & 0xFFFFFFFF
                break
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
        self.pos = p
        return value

    def fixed(self, t: int) -> Any:
        s = _FIXED[t]
        p = self.take(s.size)
        return s.unpack_from(self.buf, p)[0]

    def length(self, compact: bool, wide: bool) -> int:
        """A length/count prefix; returns -1 for null."""
        if compact:
            return self.uvarint() - 1
        if wide:
            return _I32.unpack_from(self.buf, self.take(4))[0]
        return _I16.unpack_from(self.buf, self.take(2))[0]


def _read_value(r: _Reader, prog: Program, t: int, flags: int, arg: int, name: str,
                depth: int, in_tag: bool) -> Any:
    if t == T_INT32 or t == T_INT64 or t == T_INT16 or t == T_INT8 or t == T_UINT16 \
            or t == T_UINT32 or t == T_FLOAT64:
        return r.fixed(t)
    if t == T_BOOL:
        return r.buf[r.take(1)] != 0
    if t == T_UUID:
        p = r.take(16)
        return _uuid.UUID(bytes=bytes(r.buf[p:p + 16]))
    compact = bool(flags & F_COMPACT)
    if t == T_STRING or t == T_BYTES or t == T_RECORDS:
        start = r.pos
        n = r.length(compact, t != T_STRING)
        if n < 0:
            if not flags & F_NULLABLE:
                raise _Fail(f"non-nullable field {name} was serialized as null", start)
            return None
        if t == T_STRING and n > MAX_STRING:
            raise _Fail(f"string field {name} had invalid length {n}", start)
        p = r.take(n)
        raw = bytes(r.buf[p:p + n])
        if t != T_STRING:
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _Fail(f"string field {name} is not valid UTF-8", p + e.start) from None
    if t == T_STRUCT:
        if flags & F_NULLABLE:
            start = r.pos
            if in_tag:
                present = r.uvarint() > 0
            else:
                present = _I8.unpack_from(r.buf, r.take(1))[0] >= 0
            if not present:
                return None
        return _read_struct(r, prog, arg, depth + 1)
    if t == T_ARRAY:
        start = r.pos
        n = r.length(compact, True)
        if n < 0:
            if not flags & F_NULLABLE:
                raise _Fail(f"non-nullable field {name} was serialized as null", start)
            return None
        if n > r.end - r.pos:
            raise _Fail(f"array field {name} claims {n} elements, {r.end - r.pos} bytes left", start)
        et = arg & 0xFF
        sidx = arg >> 8
        eflags = flags & F_COMPACT      # elements are never null
        out = []
        path = r.path
        path.append(0)
        for i in range(n):
            path[-1] = i
            out.append(_read_value(r, prog, et, eflags, sidx, name, depth, False))
        path.pop()
        return out
    raise _Fail(f"bad program: type {t}", r.pos)


def _read_struct(r: _Reader, prog: Program, sidx: int, depth: int) -> Dict[str, Any]:
    if depth > MAX_DEPTH:
        raise _Fail("nesting too deep", r.pos)
    sp: StructPlan = prog.structs[sidx]
    out: Dict[str, Any] = {}
    path = r.path
    for f in sp.fields:
        path.append(f.name)
        out[f.name] = _read_value(r, prog, f.type, f.flags, f.arg, f.name, depth, False)
        path.pop()
    if sp.flexible:
        seen = set()
        unknown: List[Tuple[int, bytes]] = []
        count_at = r.pos
        n = r.uvarint()
        if n > r.end - r.pos:
            raise _Fail(f"tagged field count {n} exceeds bytes left", count_at)
        for _ in range(n):
            tag = r.uvarint()
            size = r.uvarint()
            k = sp.tag_index.get(tag)
            if k is not None:
                f = sp.tagged[k]
                path.append(f.name)
                start = r.pos
                if size > r.end - start:
                    raise _Fail(f"tagged field {f.name} size {size} exceeds bytes left", start)
                saved_end = r.end
                r.end = start + size
                value = _read_value(r, prog, f.type, f.flags, f.arg, f.name, depth, True)
                if r.pos != r.end:
                    raise _Fail(f"tagged field {f.name} used {r.pos - start} of its {size} bytes", r.pos)
                r.end = saved_end
                path.pop()
                out[f.name] = value
                seen.add(f.name)
            elif tag in sp.bad_tags:
                raise _Fail(f"tag {tag} is not valid for version {prog.version}", r.pos)
            else:
                p = r.take(size)
                unknown.append((tag, bytes(r.buf[p:p + size])))
        for f in sp.tagged:
            if f.name not in seen:
                out[f.name] = _copy_default(f.default)
        if unknown:
            out[UNKNOWN_TAGS_KEY] = unknown
    return out


def _render_path(path: List[Any]) -> str:
    s = ""
    for p in path:
        if isinstance(p, int):
            s += f"[{p}]"
        else:
            s += ("." if s else "") + p
    return s


def decode(prog: Program, data: Any, pos: int = 0) -> Tuple[Dict[str, Any], int]:
    """Decode one message at ``pos``; returns ``(value, end position)``."""
    buf = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
    r = _Reader(buf, pos, len(buf))
    try:
        value = _read_struct(r, prog, 0, 0)
    except _Fail as e:
        raise DecodeError(e.reason, message=prog.name, version=prog.version,
                          path=_render_path(r.path), offset=e.offset) from None
    return value, r.pos


# ----------------------------------------------------------------------------------------------
# encoding

def _uvarint(v: int) -> bytes:
    v &= 0xFFFFFFFF
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


class _Writer:
    __slots__ = ("prog", "path")

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.path: List[Any] = []

    def fail(self, reason: str, cls: type = EncodeError) -> None:
        raise cls(reason, message=self.prog.name, version=self.prog.version,
                  path=_render_path(self.path))


def _length(out: bytearray, n: int, compact: bool, wide: bool) -> None:
    if compact:
        out += _uvarint(n + 1)
    elif wide:
        out += _I32.pack(n)
    else:
        out += _I16.pack(n)


def _write_value(w: _Writer, out: bytearray, t: int, flags: int, arg: int, v: Any,
                 in_tag: bool, depth: int) -> None:
    if t in INT_RANGES:
        if type(v) is bool or not isinstance(v, int):
            if not is_integral(v):
                w.fail(f"expected an integer, got {type(v).__name__}")
            v = operator.index(v)   # NumPy integers (decode_bulk's columns) are integers too
        lo, hi = INT_RANGES[t]
        if not lo <= v <= hi:
            w.fail(f"{v} is out of range [{lo}, {hi}]")
        out += _FIXED[t].pack(v)
        return
    if t == T_BOOL:
        if not is_bool(v):
            w.fail(f"expected a bool, got {type(v).__name__}")
        out.append(1 if v else 0)
        return
    if t == T_FLOAT64:
        if not is_real(v):
            w.fail(f"expected a float, got {type(v).__name__}")
        out += _FIXED[T_FLOAT64].pack(float(v))
        return
    if t == T_UUID:
        if isinstance(v, _uuid.UUID):
            out += v.bytes
        elif isinstance(v, (bytes, bytearray)) and len(v) == 16:
            out += v
        else:
            w.fail(f"expected a uuid.UUID, got {type(v).__name__}")
        return
    compact = bool(flags & F_COMPACT)
    if v is None:
        if not flags & F_NULLABLE:
            w.fail("null is not allowed for this field at this version")
        if t == T_STRUCT:
            if in_tag:
                out.append(0)
            else:
                out += _I8.pack(-1)
        else:
            _length(out, -1, compact, t != T_STRING)
        return
    if t == T_STRING:
        if not isinstance(v, str):
            w.fail(f"expected a str, got {type(v).__name__}")
        try:
            raw = v.encode("utf-8")
        except UnicodeEncodeError:
            w.fail("string is not encodable as UTF-8 (lone surrogate)")
        if len(raw) > MAX_STRING:
            w.fail(f"string is {len(raw)} bytes, more than Kafka's limit {MAX_STRING}")
        _length(out, len(raw), compact, False)
        out += raw
        return
    if t == T_BYTES or t == T_RECORDS:
        if not isinstance(v, (bytes, bytearray, memoryview)):
            w.fail(f"expected bytes, got {type(v).__name__}")
        raw = bytes(v)
        _length(out, len(raw), compact, True)
        out += raw
        return
    if t == T_STRUCT:
        if not isinstance(v, dict):
            w.fail(f"expected a dict, got {type(v).__name__}")
        if flags & F_NULLABLE:
            if in_tag:
                out.append(1)
            else:
                out.append(1)
        _write_struct(w, out, arg, v, depth + 1)
        return
    if t == T_ARRAY:
        if not isinstance(v, (list, tuple)):
            w.fail(f"expected a list, got {type(v).__name__}")
        _length(out, len(v), compact, True)
        et = arg & 0xFF
        sidx = arg >> 8
        eflags = flags & F_COMPACT
        w.path.append(0)
        for i, item in enumerate(v):
            w.path[-1] = i
            if item is None:
                w.fail("array elements cannot be null")
            _write_value(w, out, et, eflags, sidx, item, False, depth)
        w.path.pop()
        return
    w.fail(f"bad program: type {t}")


def _is_default(f: FieldPlan, v: Any) -> bool:
    return is_default_value(f.default, v)


def _write_struct(w: _Writer, out: bytearray, sidx: int, value: Dict[str, Any], depth: int) -> None:
    if depth > MAX_DEPTH:
        w.fail("nesting too deep")
    prog = w.prog
    sp: StructPlan = prog.structs[sidx]
    path = w.path
    known = sp.keys
    for key in value:
        if key not in known and key != UNKNOWN_TAGS_KEY:
            absent = next((f for f in sp.absent if f.json_name == key), None)
            if absent is None:
                path.append(key)
                w.fail(f"{sp.name} has no field {key!r}")
            v = value[key]
            if not absent.ignorable and not _is_absent_default(absent, v, prog.version):
                path.append(key)
                w.fail(f"attempted to write a non-default {absent.name} at version {prog.version}",
                       UnsupportedVersionError)
    for f in sp.fields:
        path.append(f.name)
        v = value[f.name] if f.name in value else _copy_default(f.default)
        _write_value(w, out, f.type, f.flags, f.arg, v, False, depth)
        path.pop()
    raw = value.get(UNKNOWN_TAGS_KEY) or []
    if not sp.flexible:
        if raw:
            w.fail(f"tagged fields were set, but version {prog.version} of {sp.name} does not support them",
                   UnsupportedVersionError)
        return
    entries: List[Tuple[int, bytes]] = []
    for f in sp.tagged:
        if f.name not in value:
            continue
        v = value[f.name]
        if _is_default(f, v):
            continue
        path.append(f.name)
        payload = bytearray()
        _write_value(w, payload, f.type, f.flags, f.arg, v, True, depth)
        path.pop()
        entries.append((f.tag, bytes(payload)))
    last = -1
    for item in raw:
        try:
            tag, payload = item
        except (TypeError, ValueError):
            path.append(UNKNOWN_TAGS_KEY)
            w.fail("unknown tagged fields must be (tag, bytes) pairs")
        if not isinstance(tag, int) or isinstance(tag, bool) or not 0 <= tag <= 0xFFFFFFFF \
                or not isinstance(payload, (bytes, bytearray, memoryview)):
            path.append(UNKNOWN_TAGS_KEY)
            w.fail("unknown tagged fields must be (tag, bytes) pairs with 0 <= tag < 2**32")
        if tag <= last:
            path.append(UNKNOWN_TAGS_KEY)
            w.fail(f"unknown tagged fields must be in ascending tag order ({tag} after {last})")
        reserved = sp.reserved_tag(tag)
        if reserved:
            path.append(UNKNOWN_TAGS_KEY)
            w.fail(reserved)
        last = tag
        entries.append((tag, bytes(payload)))
    # Known fields first on equal tags: Kafka writes raw tags below the next known tag
    # before it, so a raw tag equal to a known tag comes after it.  sort() is stable.
    entries.sort(key=lambda e: e[0])
    out += _uvarint(len(entries))
    for tag, payload in entries:
        out += _uvarint(tag)
        out += _uvarint(len(payload))
        out += payload


def _is_absent_default(fs: Any, v: Any, version: int) -> bool:
    d = fs.default_value(version)
    if isinstance(d, bool) or isinstance(v, bool):
        return type(d) is type(v) and d == v
    return bool(v == d)


def encode(prog: Program, value: Dict[str, Any]) -> bytes:
    """Encode ``value`` (a dict, as ``decode`` returns) as ``prog``'s message and version."""
    w = _Writer(prog)
    if not isinstance(value, dict):
        w.fail(f"expected a dict, got {type(value).__name__}")
    out = bytearray()
    _write_struct(w, out, 0, value, 0)
    return bytes(out)
