"""Random schema-conforming values for any compiled program (tests only)."""
from __future__ import annotations

import random
import uuid
from typing import Any, Dict

from kcodec._program import (
    INT_RANGES, T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_RECORDS, T_STRING, T_STRUCT, T_UUID,
    F_NULLABLE, Program,
)

_CHARS = "abcXYZ019 _-.é€😀\u0000中"


def random_value(prog: Program, rnd: random.Random, unknown_tags: bool = True) -> Dict[str, Any]:
    return _struct(prog, 0, rnd, unknown_tags, 0)


def _scalar(t: int, rnd: random.Random) -> Any:
    if t in INT_RANGES:
        lo, hi = INT_RANGES[t]
        return rnd.choice([lo, hi, 0, -1 if lo < 0 else 1, rnd.randint(lo, hi)])
    if t == T_BOOL:
        return rnd.random() < 0.5
    if t == T_FLOAT64:
        return rnd.choice([0.0, -0.0, 1.5, -2.25e300, 5e-324, rnd.uniform(-1e9, 1e9)])
    if t == T_UUID:
        return uuid.UUID(int=rnd.getrandbits(128))
    if t == T_STRING:
        return "".join(rnd.choice(_CHARS) for _ in range(rnd.choice([0, 1, 5, 40, 200])))
    if t in (T_BYTES, T_RECORDS):
        return bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 1, 7, 130])))
    raise AssertionError(t)


def _value(prog: Program, t: int, flags: int, arg: int, rnd: random.Random, unk: bool, depth: int) -> Any:
    if flags & F_NULLABLE and rnd.random() < 0.2:
        return None
    if t == T_STRUCT:
        return _struct(prog, arg, rnd, unk, depth + 1)
    if t == T_ARRAY:
        n = rnd.choice([0, 1, 2, 3]) if depth < 4 else 0
        return [_value(prog, arg & 0xFF, 0, arg >> 8, rnd, unk, depth) for _ in range(n)]
    return _scalar(t, rnd)


def _struct(prog: Program, sidx: int, rnd: random.Random, unk: bool, depth: int) -> Dict[str, Any]:
    sp = prog.structs[sidx]
    out: Dict[str, Any] = {}
    for f in sp.fields:
        out[f.name] = _value(prog, f.type, f.flags, f.arg, rnd, unk, depth)
    for f in sp.tagged:
        if rnd.random() < 0.5:
            out[f.name] = _value(prog, f.type, f.flags, f.arg, rnd, unk, depth)
        else:
            out[f.name] = _default_copy(f.default)
    if sp.flexible and unk and rnd.random() < 0.3:
        used = {f.tag for f in sp.tagged} | set(sp.bad_tags)
        base = max(used) + 1 if used else 0
        tags = sorted(set(rnd.choice([base, base + 1, 127, 128, 16384, 2147483646, 4294967295])
                          for _ in range(rnd.randint(1, 3))))
        out["_unknown_tagged_fields"] = [
            (tg, bytes(rnd.getrandbits(8) for _ in range(rnd.choice([0, 1, 3, 200])))) for tg in tags
            if tg not in used]
        if not out["_unknown_tagged_fields"]:
            del out["_unknown_tagged_fields"]
    return out


def _default_copy(v: Any) -> Any:
    if isinstance(v, list):
        return []
    if isinstance(v, dict):
        return {k: _default_copy(x) for k, x in v.items()}
    return v
