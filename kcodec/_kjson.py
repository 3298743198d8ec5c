"""Kafka's JSON form of message values (what ``<Message>JsonConverter`` writes).

Kafka's converter lower-cases the first letter of field names (kept in our values),
writes bytes and records as standard base64, uuids as base64url without padding
(``Uuid.toString``), omits tagged fields at their default, and drops unknown tagged
fields.  ``from_kafka_json`` is the inverse (absent tagged fields take their default).
"""
from __future__ import annotations

import base64
import json
import uuid as _uuid
from binascii import b2a_base64
from json.encoder import encode_basestring
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ._program import (T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_INT8, T_INT16, T_INT32, T_INT64, T_RECORDS,
                       T_STRING, T_STRUCT, T_UINT16, T_UINT32, T_UUID, Program, StructPlan, _copy_default)
from ._codec_py import UNKNOWN_TAGS_KEY, _is_default
from .errors import EncodeError

__all__ = ["to_kafka_json", "to_kafka_json_text", "from_kafka_json", "uuid_to_kafka", "uuid_from_kafka",
           "JsonFragment"]


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
# (no per-value dispatch on field types), and a second set writes the JSON text directly.
# Both give exactly what the interpretive definition gives: a value of an unexpected type
# takes the general route (``_to`` conversion, then ``json``'s encoder for the text).

_Conv = Callable[[Any], Any]
_COMPILED: Dict[int, Tuple[Program, List[_Conv], List[_Conv]]] = {}   # id(prog) -> converters
_COMPILED_MAX = 1024


def _b64(v: Any) -> str:
    return b2a_base64(v if type(v) is bytes else bytes(v), newline=False).decode("ascii")


_dumps = json.JSONEncoder(ensure_ascii=False).encode   # what json.dumps(x, ensure_ascii=False) writes
_str = encode_basestring                                # a str as JSON text (ensure_ascii=False)
_INT_LIST_CHARS = "[]0123456789, -"


class JsonFragment:
    """JSON text to place as is where a ``bytes`` field's value goes in
    :func:`~kcodec.to_kafka_json_text` (e.g. an embedded payload already rendered)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"JsonFragment({self.text!r})"


def _compiled(prog: Program) -> Tuple[List[_Conv], List[_Conv]]:
    hit = _COMPILED.get(id(prog))
    if hit is not None and hit[0] is prog:
        return hit[1], hit[2]
    convs: List[_Conv] = []
    texts: List[_Conv] = []
    for sp in prog.structs:
        convs.append(_generated_conv(sp, convs))
    for sp in prog.structs:
        texts.append(_generated_text(sp, convs, texts))
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    _COMPILED[id(prog)] = (prog, convs, texts)   # the program is kept: its id stays its own
    return convs, texts


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


def _value_text(convs: List[_Conv], texts: List[_Conv], t: int, arg: int) -> _Conv:
    """Writer of the JSON text of a non-null value of type ``t``."""
    general = _value_conv(convs, t, arg)
    slow: _Conv = _dumps if general is None else (lambda v: _dumps(general(v)))  # type: ignore[misc]
    if t == T_STRING:
        return lambda v: _str(v) if type(v) is str else slow(v)
    if t in (T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64):
        return lambda v: int.__repr__(v) if type(v) is int else slow(v)
    if t == T_BOOL:
        return lambda v: "true" if v is True else "false" if v is False else slow(v)
    if t == T_UUID:
        return lambda v: '"' + uuid_to_kafka(v) + '"'
    if t == T_BYTES or t == T_RECORDS:
        return lambda v: (v.text if type(v) is JsonFragment else '"' + _b64(v) + '"')
    if t == T_STRUCT:
        return lambda v: texts[arg](v)
    if t == T_ARRAY:
        et, sidx = arg & 0xFF, arg >> 8
        if et == T_STRUCT:
            def structs(v: Any) -> str:
                if type(v) is not list:
                    return slow(v)
                st = texts[sidx]
                return "[" + ", ".join(["null" if x is None else st(x) for x in v]) + "]"
            return structs
        if et in (T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64):
            def ints(v: Any) -> str:
                # a list of plain ints prints as JSON does; anything else shows in its repr
                r = repr(v) if type(v) is list else "x"
                return r if not r.strip(_INT_LIST_CHARS) else slow(v)
            return ints
        if et == T_STRING:
            def strings(v: Any) -> str:
                if type(v) is list:
                    try:
                        return "[" + ", ".join(map(_str, v)) + "]"
                    except TypeError:    # None or a non-string among them
                        pass
                return slow(v)
            return strings
    return slow


def _struct_text(sp: StructPlan, convs: List[_Conv], texts: List[_Conv]) -> _Conv:
    steps = tuple((f.name, f.default, _str(f.name) + ": ", _value_text(convs, texts, f.type, f.arg),
                   f if f.tagged else None) for f in sp.ordered)

    def text(value: Dict[str, Any]) -> str:
        return "{" + ", ".join([step[2] + ("null" if v is None else step[3](v))
                                for step, v in _present(value, steps)]) + "}"
    return text


# The per-struct functions above, unrolled into straight-line code (one dict look-up and one
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


def _generated_text(sp: StructPlan, convs: List[_Conv], texts: List[_Conv]) -> _Conv:
    ns: Dict[str, Any] = {"_general": _struct_text(sp, convs, texts), "_is_default": _is_default,
                          "_str": _str, "_int": int.__repr__, "_INTS": _INT_LIST_CHARS}
    lines = ["def text(value):", "    if type(value) is not dict:", "        return _general(value)",
             "    g = value.get", "    try:"]
    pieces = []       # (head literal, part variable, tagged)
    for i, f in enumerate(sp.ordered):
        ns[f"D{i}"], ns[f"T{i}"], ns[f"F{i}"] = f.default, _value_text(convs, texts, f.type, f.arg), f
        if f.type == T_STRING:
            expr = f"_str(v) if type(v) is str else T{i}(v)"
        elif f.type in _INT_TYPES:
            expr = f"_int(v) if type(v) is int else T{i}(v)"
        elif f.type == T_ARRAY and f.arg & 0xFF in _INT_TYPES:
            expr = f"r if type(v) is list and not (r := repr(v)).strip(_INTS) else T{i}(v)"
        else:
            expr = f"T{i}(v)"
        if f.tagged:
            lines += [f"        v = g({f.name!r}, D{i})",
                      f"        p{i} = None if _is_default(F{i}, v) else 'null' if v is None else {expr}"]
        else:
            lines += [f"        v = value[{f.name!r}]", f"        p{i} = 'null' if v is None else {expr}"]
        pieces.append((_str(f.name) + ": ", f"p{i}", f.tagged))
    if not any(t for _, _, t in pieces):
        out: List[str] = []
        for n, (head, var, _) in enumerate(pieces):
            out += [repr(("{" if n == 0 else ", ") + head), var]
        lines.append("        return ''.join((" + ", ".join(out) + (", " if out else "") + "'}'))"
                     if out else "        return '{}'")
    else:
        lines.append("        parts = []")
        for head, var, tagged in pieces:
            if tagged:
                lines.append(f"        if {var} is not None:")
                lines.append(f"            parts.append({head!r} + {var})")
            else:
                lines.append(f"        parts.append({head!r} + {var})")
        lines.append("        return '{' + ', '.join(parts) + '}'")
    lines += ["    except KeyError:", "        return _general(value)"]
    exec("\n".join(lines), ns)   # noqa: S102 - our own source, built above
    return ns["text"]


_INT_TYPES = (T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64)


def to_kafka_json(prog: Program, value: Dict[str, Any]) -> Dict[str, Any]:
    return _compiled(prog)[0][0](value)


def to_kafka_json_text(prog: Program, value: Dict[str, Any]) -> str:
    """``json.dumps(to_kafka_json(prog, value), ensure_ascii=False)``, written directly."""
    return _compiled(prog)[1][0](value)


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
