"""Kafka's JSON form of message values (what ``<Message>JsonConverter`` writes).

Kafka's converter lower-cases the first letter of field names (kept in our values),
writes bytes and records as standard base64, uuids as base64url without padding
(``Uuid.toString``), omits tagged fields at their default, and drops unknown tagged
fields.  ``from_kafka_json`` is the inverse (absent tagged fields take their default).
"""
from __future__ import annotations

import base64
import uuid as _uuid
from binascii import b2a_base64
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ._program import (T_ARRAY, T_BYTES, T_FLOAT64, T_RECORDS, T_STRUCT, T_UUID, Program, StructPlan,
                       _copy_default)
from ._codec_py import UNKNOWN_TAGS_KEY, _is_default
from .errors import EncodeError

__all__ = ["to_kafka_json", "from_kafka_json", "uuid_to_kafka", "uuid_from_kafka"]


def uuid_to_kafka(u: _uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: base64url of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(u.bytes).decode("ascii").rstrip("=")


def uuid_from_kafka(s: str) -> _uuid.UUID:
    """Parse Kafka's 22-character base64url uuid (the dashed RFC form is accepted too)."""
    if len(s) == 36 and s.count("-") == 4:
        return _uuid.UUID(s)
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if len(raw) != 16:
        raise ValueError(f"not a Kafka uuid: {s!r}")
    return _uuid.UUID(bytes=raw)


# Converters are compiled once per program: a closure per struct walks the plan's fields
# (no per-value dispatch on field types).  They give exactly what the interpretive
# definition gives: a value of an unexpected type takes the general route.

_Conv = Callable[[Any], Any]
_COMPILED: Dict[int, Tuple[Program, List[_Conv]]] = {}   # id(prog) -> converters
_COMPILED_MAX = 1024


def _b64(v: Any) -> str:
    return b2a_base64(v if type(v) is bytes else bytes(v), newline=False).decode("ascii")


def _compiled(prog: Program) -> List[_Conv]:
    hit = _COMPILED.get(id(prog))
    if hit is not None and hit[0] is prog:
        return hit[1]
    convs: List[_Conv] = []
    for sp in prog.structs:
        convs.append(_generated_conv(sp, convs))
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[id(prog)] = (prog, convs)   # the program is kept: its id stays its own
    return convs


def _value_conv(convs: List[_Conv], t: int, arg: int) -> Optional[_Conv]:
    """Converter of a non-null value of type ``t`` (None: the value is its own JSON form)."""
    if t == T_UUID:
        return uuid_to_kafka
    if t == T_BYTES or t == T_RECORDS:
        return _b64
    if t == T_STRUCT:
        return lambda v: convs[arg](v)     # looked up late: structs may refer to each other
    if t == T_ARRAY:
        ec = _value_conv(convs, arg & 0xFF, arg >> 8)
        if ec is None:
            return list
        return lambda v: [None if x is None else ec(x) for x in v]  # type: ignore[misc]
    return None


def _field_convs(convs: List[_Conv], sp: StructPlan) -> Tuple[Any, ...]:
    return tuple((f.name, f.default, _value_conv(convs, f.type, f.arg), f if f.tagged else None)
                 for f in sp.ordered)


def _present(value: Dict[str, Any], steps: Tuple[Any, ...]) -> Iterator[Tuple[Any, Any]]:
    """``(step, field value)`` for each field the JSON form writes (``step``: key, default,
    ..., the plan when tagged): a tagged field at its default is left out."""
    for step in steps:
        key, default, tagged = step[0], step[1], step[-1]
        if tagged is not None:
            v = value.get(key, default)
            if _is_default(tagged, v):
                continue
        else:
            v = value[key] if key in value else default
        yield step, v


def _struct_conv(sp: StructPlan, steps: Tuple[Any, ...]) -> _Conv:
    def conv(value: Dict[str, Any]) -> Dict[str, Any]:
        return {step[0]: v if step[2] is None or v is None else step[2](v) for step, v in _present(value, steps)}
    return conv


# The per-struct function above, unrolled into straight-line code (one dict look-up and one
# type test per field, the output built in one expression).  Only indices, string literals
# (repr) and names bound in the function's namespace appear in the source.

def _generated_conv(sp: StructPlan, convs: List[_Conv]) -> _Conv:
    steps = _field_convs(convs, sp)
    ns: Dict[str, Any] = {"_general": _struct_conv(sp, steps), "_is_default": _is_default}
    lines = ["def conv(value):", "    if type(value) is not dict:", "        return _general(value)",
             "    g = value.get", "    try:"]
    exprs = []
    for i, (key, default, c, tagged) in enumerate(steps):
        ns[f"D{i}"], ns[f"C{i}"], ns[f"F{i}"] = default, c, tagged
        exprs.append(f"value[{key!r}]" if c is None
                     else f"(None if (v := value[{key!r}]) is None else C{i}(v))")
    if all(tagged is None for _, _, _, tagged in steps):
        lines.append("        return {" + ", ".join(f"{key!r}: {e}" for (key, *_), e in zip(steps, exprs)) + "}")
    else:
        # a tagged field at its default is left out: fill the dict field by field, in order
        lines.append("        out = {}")
        for i, ((key, _, c, tagged), e) in enumerate(zip(steps, exprs)):
            if tagged is None:
                lines.append(f"        out[{key!r}] = {e}")
            else:
                lines += [f"        v = g({key!r}, D{i})", f"        if not _is_default(F{i}, v):",
                          f"            out[{key!r}] = " + ("v" if c is None else f"None if v is None else C{i}(v)")]
        lines.append("        return out")
    # a field missing from the value takes its default: the general route
    lines += ["    except KeyError:", "        return _general(value)"]
    exec("\n".join(lines), ns)   # noqa: S102 - our own source, built above
    return ns["conv"]


def to_kafka_json(prog: Program, value: Dict[str, Any]) -> Dict[str, Any]:
    return _compiled(prog)[0](value)


def _from(prog: Program, t: int, arg: int, v: Any, path: str) -> Any:
    if v is None:
        return None
    try:
        if t == T_UUID:
            return uuid_from_kafka(v)
        if t == T_BYTES or t == T_RECORDS:
            return base64.b64decode(v, validate=True)
        if t == T_FLOAT64:
            return float(v)
    except (ValueError, TypeError) as e:
        raise EncodeError(f"bad JSON value: {e}", message=prog.name, version=prog.version, path=path) from None
    if t == T_STRUCT:
        return _from_struct(prog, prog.structs[arg], v, path)
    if t == T_ARRAY:
        et, sidx = arg & 0xFF, arg >> 8
        return [_from(prog, et, sidx, x, f"{path}[{i}]") for i, x in enumerate(v)]
    return v


def _from_struct(prog: Program, sp: StructPlan, obj: Dict[str, Any], path: str) -> Dict[str, Any]:
    if not isinstance(obj, dict):
        raise EncodeError("expected a JSON object", message=prog.name, version=prog.version, path=path)
    out: Dict[str, Any] = {}
    for f in sp.fields + sp.tagged:
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in obj:
            out[f.name] = _from(prog, f.type, f.arg, obj[f.name], sub)
        else:
            out[f.name] = _copy_default(f.default)
    for k, v in obj.items():
        if k not in out and k != UNKNOWN_TAGS_KEY:
            out[k] = v      # let the encoder judge fields of other versions
    return out


def from_kafka_json(prog: Program, obj: Dict[str, Any]) -> Dict[str, Any]:
    return _from_struct(prog, prog.structs[0], obj, "")
