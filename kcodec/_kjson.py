"""Kafka's JSON form of message values (what ``<Message>JsonConverter`` writes).

Kafka's converter lower-cases the first letter of field names (kept in our values),
writes bytes and records as standard base64, uuids as base64url without padding
(``Uuid.toString``), omits tagged fields at their default, and drops unknown tagged
fields.  ``from_kafka_json`` is the inverse (absent tagged fields take their default).
"""
from __future__ import annotations

import base64
import uuid as _uuid
from typing import Any, Dict

from ._program import T_ARRAY, T_BYTES, T_FLOAT64, T_RECORDS, T_STRUCT, T_UUID, Program, StructPlan, _copy_default
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


def _to(prog: Program, t: int, arg: int, v: Any) -> Any:
    if v is None:
        return None
    if t == T_UUID:
        return uuid_to_kafka(v)
    if t == T_BYTES or t == T_RECORDS:
        return base64.b64encode(bytes(v)).decode("ascii")
    if t == T_STRUCT:
        return _to_struct(prog, prog.structs[arg], v)
    if t == T_ARRAY:
        et, sidx = arg & 0xFF, arg >> 8
        return [_to(prog, et, sidx, x) for x in v]
    return v


def _to_struct(prog: Program, sp: StructPlan, value: Dict[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for f in sp.ordered:
        key = f.name
        if f.tagged:
            v = value.get(key, f.default)
            if _is_default(f, v):
                continue
        else:
            v = value[key] if key in value else f.default
        out[key] = _to(prog, f.type, f.arg, v)
    return out


def to_kafka_json(prog: Program, value: Dict[str, Any]) -> Dict[str, Any]:
    return _to_struct(prog, prog.structs[0], value)


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
