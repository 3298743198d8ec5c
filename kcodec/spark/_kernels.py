"""The Arrow-level work behind the Spark column functions: Arrow arrays in, Arrow arrays out.

Everything here runs inside Spark's Python workers on one Arrow batch at a time.  The hot
path (every known record type at a known version, and any one message at a fixed
version) goes through the C bulk decoder :func:`kcodec.arrow.decode`, one pass per
(type, version) that reads its own rows in place (``select``) and leaves the others
null, so the passes' full-length columns make the result without gathering or
scattering rows; each pass is shaped once into the result's type (the union of the
message's versions, in Spark's types for the column functions) by plans built once per
layout; version prefixes are read in place (:func:`kcodec.slice_heads`), with no Python
object per row.  Rows the bulk path cannot take as they are (other record
types, version-prefix anomalies, rows the bulk decoder flags) are decoded one by one by
the single-record APIs (:func:`kcodec.offsets.decode_record`,
:func:`kcodec.consumer.read_subscription_raw`), so both paths give the same answer and
the error texts are theirs.
"""
from __future__ import annotations

import functools
import uuid
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute: not loaded by `import pyarrow` alone)

import kcodec
from kcodec import arrow as _ka
from kcodec.consumer import read_assignment_raw, read_subscription_raw
from kcodec.errors import KcodecError
from kcodec.offsets import decode_record, record_types

from ._types import _spark_arrow_type_cached, for_spark, nulls, shape, shape_columns, shaper, union_type

__all__ = ["PERMISSIVE", "FAILFAST", "ALL", "DEFAULT_RECORD_TYPES", "check_mode", "message_type", "decode_message",
           "offsets_type", "decode_offsets", "protocol_type", "decode_protocol",
           "encode_message", "FailFastError"]

PERMISSIVE, FAILFAST = "PERMISSIVE", "FAILFAST"
ERROR = "_error"
_UNKNOWN_TAGS = "_unknown_tagged_fields"
_SUB, _ASG = "ConsumerProtocolSubscription", "ConsumerProtocolAssignment"
_PROTOCOL_MAX = 3          # consumer protocol: newer prefixes are read with the v3 layout


class FailFastError(KcodecError):
    """A row failed to decode under ``mode="FAILFAST"`` (the message names the row)."""


def check_mode(options: Optional[Dict[str, Any]], default: str = PERMISSIVE) -> Tuple[str, Dict[str, Any]]:
    opts = dict(options or {})
    mode = str(opts.pop("mode", default)).upper()
    if mode not in (PERMISSIVE, FAILFAST):
        raise ValueError(f"mode must be PERMISSIVE or FAILFAST, not {mode!r}")
    return mode, opts


# --------------------------------------------------------------------------- helpers

def _binary(values: Any) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if not isinstance(values, pa.Array):
        values = pa.array(values, pa.binary())
    return values


def _heads(arr: pa.Array, k: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: its first ``k`` bytes (a (rows, k) uint8 array, zero-padded), how many it
    has (at most k) and whether the row is null.  Read in place from the Arrow buffers
    (:func:`kcodec.slice_heads`)."""
    n = len(arr)
    if n == 0:
        return np.zeros((0, k), np.uint8), np.zeros(0, np.int32), np.zeros(0, bool)
    bufs = arr.buffers()
    otype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offs = np.frombuffer(bufs[1], otype)[arr.offset:arr.offset + n + 1]
    lens = np.diff(offs).astype(np.int32, copy=False)
    if arr.null_count:
        lens[_ka.to_numpy(arr.is_null())] = -1
    heads, have = kcodec.slice_heads(bufs[2] if bufs[2] is not None else b"", offs[:-1].astype(np.int64), lens, k)
    return heads, have, have < 0


def _prefix16(arr: pa.Array) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the leading big-endian int16 (a row of one byte: that byte then 0; no
    bytes or null: 0), whether the row has one (>= 2 bytes), and whether the row is null.
    Read in place from the Arrow buffers with a few whole-column NumPy steps (half the
    cost of :func:`_heads`' general k-byte path on a 10k-row batch)."""
    n = len(arr)
    if n == 0:
        return np.zeros(0, np.int16), np.zeros(0, bool), np.zeros(0, bool)
    bufs = arr.buffers()
    t = arr.type
    otype = np.int64 if pa.types.is_large_binary(t) or pa.types.is_large_string(t) else np.int32
    offs = np.frombuffer(bufs[1], otype)[arr.offset:arr.offset + n + 1]
    start = offs[:-1]
    lens = offs[1:] - start
    if arr.null_count:
        isnull = _ka.to_numpy(arr.is_null())
        lens = np.where(isnull, 0, lens)        # a null slot may still span bytes
    else:
        isnull = np.zeros(n, bool)
    has = lens >= 2
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None and bufs[2].size else np.zeros(2, np.uint8)
    if has.all():
        ver = ((data[start].astype(np.uint16) << 8) | data[start + 1]).view(np.int16)
    else:
        one = lens >= 1
        hi = np.where(one, data[np.where(one, start, 0)], 0).astype(np.uint16)
        lo = np.where(has, data[np.where(has, start + 1, 0)], 0)
        ver = ((hi << 8) | lo).view(np.int16)
    return ver, has, isnull


def _py(v: Any) -> Any:
    """A decoded value in the shape Arrow takes (uuid as 16 bytes, unknown tags as
    ``{tag, data}``)."""
    if isinstance(v, dict):
        out = {k: _py(x) for k, x in v.items() if k != _UNKNOWN_TAGS}
        out[_UNKNOWN_TAGS] = [{"tag": t, "data": bytes(d)} for t, d in v.get(_UNKNOWN_TAGS, ())]
        return out
    if isinstance(v, list):
        return [_py(x) for x in v]
    if isinstance(v, uuid.UUID):
        return v.bytes
    return v


def _fail(what: str, rows: np.ndarray, errors: pa.Array, *inputs: pa.Array) -> None:
    i = int(rows[0])
    ctx = []
    for name, col in zip(("key", "value"), inputs) if len(inputs) > 1 else zip(("value",), inputs):
        b = col[i].as_py()
        ctx.append(f"{name}={'null' if b is None else bytes(b[:48]).hex() + ('...' if len(b) > 48 else '')}")
    raise FailFastError(f"{what}: row {i} of the batch ({len(rows)} bad rows): {errors[i].as_py()} "
                        f"[{', '.join(ctx)}]")


def _struct_of(batch: pa.RecordBatch) -> pa.StructArray:
    """The batch's columns (``_error`` included) as one struct column."""
    return pa.StructArray.from_arrays(batch.columns, names=batch.schema.names)


# --------------------------------------------------------------------------- projection

def fields_option(fields: Any) -> Optional[Tuple[str, ...]]:
    """The ``fields`` option as a tuple of dotted paths (None: every field)."""
    if fields is None:
        return None
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",")]
    out = tuple(str(f) for f in fields if str(f) and str(f) != ERROR)
    if not out:
        raise ValueError("fields: name at least one field path")
    return out


def _paths_tree(paths: Sequence[str]) -> Dict[str, Any]:
    tree: Dict[str, Any] = {}
    for p in paths:
        node = tree
        parts = p.split(".")
        for i, part in enumerate(parts):
            if i == len(parts) - 1:
                node[part] = None           # the whole field
            else:
                got = node.setdefault(part, {})
                if got is None:             # the whole field is named already
                    break
                node = got
    return tree


def _field_paths(t: pa.DataType, prefix: str, depth: int = 1) -> List[str]:
    """Paths under ``t`` (a struct, or a list of structs) to ``depth`` levels, for messages."""
    if pa.types.is_list(t):
        t = t.value_type
    if not pa.types.is_struct(t):
        return []
    out = []
    for f in t:
        if f.name == ERROR:
            continue
        out.append(prefix + f.name)
        if depth > 1:
            out += _field_paths(f.type, prefix + f.name + ".", depth - 1)
    return out


def _prune(t: pa.StructType, tree: Dict[str, Any], prefix: str) -> pa.StructType:
    names = {f.name for f in t}
    for name, sub in tree.items():
        if name not in names:
            valid = _field_paths(t, prefix, 2)
            raise ValueError(f"fields: unknown field path {prefix + name!r}; valid paths"
                             f"{' under ' + prefix[:-1] if prefix else ''}: {valid}")
    out = []
    for f in t:
        if f.name not in tree:
            continue
        sub = tree[f.name]
        typ = f.type
        if sub is not None:
            path = prefix + f.name + "."
            if pa.types.is_struct(typ):
                typ = _prune(typ, sub, path)
            elif pa.types.is_list(typ) and pa.types.is_struct(typ.value_type):
                vf = typ.value_field
                typ = pa.list_(pa.field(vf.name, _prune(vf.type, sub, path), vf.nullable))
            else:
                raise ValueError(f"fields: {path[:-1]!r} is a {typ}, it has no field "
                                 f"{next(iter(sub))!r}")
        out.append(pa.field(f.name, typ, f.nullable))
    return pa.struct(out)


def project_type(full: pa.StructType, fields: Optional[Tuple[str, ...]]) -> pa.StructType:
    """``full`` (a column function's struct type, ``_error`` last) with only the fields at
    the dotted paths ``fields`` (a path into a list of structs names the items' field),
    in ``full``'s order, and ``_error``; ValueError naming an unknown path and the valid ones."""
    if fields is None:
        return full
    pruned = _prune(full, _paths_tree(fields), "")
    return pa.struct(list(pruned) + [full.field(ERROR)])


def _result_types(full: pa.StructType, spark: bool, fields: Optional[Tuple[str, ...]]
                  ) -> Tuple[pa.StructType, pa.StructType, Dict[str, pa.DataType]]:
    """A column function's unprojected type (in Spark's types with ``spark``), its result
    type (projected to ``fields``) and the result's fields by name."""
    if spark:
        full = _spark_arrow_type_cached(full, True)
    typ = project_type(full, fields)
    if typ == full:
        typ = full
    return full, typ, {f.name: f.type for f in typ}


@functools.lru_cache(maxsize=None)
def _version_keep(name: str, version: int, keep: Optional[Tuple[str, ...]],
                  newer: str = "error") -> Tuple[Optional[Tuple[str, ...]], pa.StructType]:
    """Of the top-level fields ``keep`` (None: all), those ``name`` has at ``version``, and
    the Arrow type of that version with only them (one object per selection, for the
    shaping caches)."""
    t = _ka.arrow_type(name, version, newer=newer)
    if keep is None:
        return None, t
    have = tuple(f.name for f in t if f.name in keep)
    return have, pa.struct([t.field(f) for f in have])


def _top_fields(t: pa.StructType) -> Tuple[str, ...]:
    return tuple(f.name for f in t)


# --------------------------------------------------------------------------- any message

@functools.lru_cache(maxsize=None)
def message_type(name: str, version: int, newer: str = "error") -> pa.StructType:
    """Arrow type of :func:`decode_message`'s result: the message's fields (Kafka types)
    plus ``_error``."""
    t = _ka.arrow_type(name, version, newer=newer)
    return pa.struct(list(t) + [pa.field(ERROR, pa.string())])


def decode_message(values: Any, name: str, version: int, *, newer: str = "error",
                   mode: str = PERMISSIVE) -> pa.StructArray:
    """Decode a binary column as message ``name`` at ``version`` (no framing).  A null
    value is a null row (not a struct of nulls, which :func:`encode_message` would take for
    a message of defaults)."""
    values = _binary(values)
    b = _ka.decode(name, values, version, newer=newer)
    err = b.column(ERROR)
    if mode == FAILFAST and err.null_count < len(err):
        _fail(f"{name} v{version}", np.flatnonzero(_valid(err)), err, values)
    if not values.null_count:
        return _struct_of(b)
    return pa.StructArray.from_arrays(b.columns, names=b.schema.names, mask=values.is_null())


def _to_value(v: Any, t: pa.DataType) -> Any:
    """An Arrow row (``to_pylist`` form) back to kcodec's Python mapping for encoding."""
    if v is None:
        return None
    if pa.types.is_struct(t):
        out: Dict[str, Any] = {}
        for f in t:
            if f.name == ERROR:
                continue
            x = v.get(f.name)
            if f.name == _UNKNOWN_TAGS:
                if x:
                    out[f.name] = [(int(e["tag"]), bytes(e["data"])) for e in x]
            elif x is not None or f.nullable:
                out[f.name] = _to_value(x, f.type)
        return out
    if pa.types.is_list(t):
        return [_to_value(x, t.value_type) for x in v]
    if pa.types.is_fixed_size_binary(t) and t.byte_width == 16:
        return uuid.UUID(bytes=bytes(v))
    return v


def encode_message(structs: Any, name: str, version: int, *, mode: str = FAILFAST) -> pa.Array:
    """Encode a struct column (fields named as Kafka's JSON) as message ``name`` at
    ``version``.  FAILFAST (default): raise on a row that does not encode; PERMISSIVE:
    a ``struct<value: binary, _error: string>`` with the reason per bad row.

    A null row, or one whose ``_error`` is set (a row :func:`decode_message` could not
    read: its fields are nulls, not the message), is not a message: never encoded (its
    fields would take their defaults), it is a bad row like one that does not encode."""
    if isinstance(structs, pa.ChunkedArray):
        structs = structs.combine_chunks()
    t = _ka.arrow_type(name, version)
    out: List[Optional[bytes]] = []
    errs: List[Optional[str]] = []
    # Encoding is for writing test data and rewriting records: one row at a time is fine.
    for i, row in enumerate(structs.to_pylist()):
        try:
            if row is None:
                raise ValueError("the input row is null: no message to encode")
            if row.get(ERROR) is not None:
                raise ValueError(f"the input row is a failed decode ({ERROR}: {row[ERROR]}), "
                                 "not a message")
            out.append(kcodec.encode(name, _to_value(row, t), version))
            errs.append(None)
        except (KcodecError, TypeError, ValueError) as e:
            if mode == FAILFAST:
                raise FailFastError(f"{name} v{version}: row {i} of the batch does not encode: {e}") from None
            out.append(None)
            errs.append(str(e))
    vals = pa.array(out, pa.binary())
    if mode == FAILFAST:
        return vals
    return pa.StructArray.from_arrays([vals, pa.array(errs, pa.string())], names=["value", ERROR])


# --------------------------------------------------------------------------- consumer protocol

def _valid(arr: pa.Array) -> np.ndarray:
    """Which rows of ``arr`` are not null, as NumPy (through the buffers, no pandas)."""
    if not arr.null_count:
        return np.ones(len(arr), bool)
    return _ka.to_numpy(arr.is_valid())


def _with_nulls(arr: pa.Array, valid: np.ndarray) -> pa.Array:
    """A null-free fixed-width array ``arr`` with the rows where ``valid`` is False nulled."""
    if valid.all():
        return arr
    bits = pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(arr.type, len(arr), [bits, arr.buffers()[1]])


def _coalesce(arrays: List[pa.Array], n: int, typ: pa.DataType, key: Tuple[Any, ...]) -> pa.Array:
    """Full-length arrays that are null outside their own rows, as one."""
    if not arrays:
        return nulls(n, typ, key)
    if len(arrays) == 1:
        return arrays[0]
    if len(arrays) == 2 and not pa.types.is_nested(typ):
        # e.g. ``group`` from two key types: a select is cheaper than Arrow's coalesce
        return pa.compute.if_else(arrays[1].is_valid(), arrays[1], arrays[0])
    return pa.compute.coalesce(*arrays)


def _by_version(schema: str, col: pa.Array, ver: np.ndarray, rows: np.ndarray, versions: Sequence[int],
                body_t: pa.StructType) -> Tuple[pa.Array, np.ndarray]:
    """The rows ``rows`` (a mask) of version-prefixed ``col`` decoded, each with the layout of
    its prefix (one of ``versions``), shaped to ``body_t`` (a :func:`union_type`, or its
    Spark form): a full-length struct, null on other rows and on the rows that did not
    decode, which come back as a mask.  The C bulk decoder reads the rows in place
    (``select``): no gathering and no scattering back."""
    bad = np.zeros(len(col), bool)
    parts: List[pa.Array] = []
    present = _present(ver, rows)
    for v in present:
        if v not in versions:
            continue
        sel = rows & (ver == v) if len(present) > 1 else rows
        b = _ka.decode(schema, col, v, skip=2, select=None if sel.all() else sel)
        err = b.column(ERROR)
        if err.null_count < len(err):
            e = _valid(err)
            bad |= e
            sel = sel & ~e
        parts.append(shape_columns(b, shaper(_ka.arrow_type(schema, v), body_t), sel))
    return _coalesce(parts, len(col), body_t, (id(body_t), "by_version")), bad


def _override(full: pa.Array, idx: np.ndarray, part: pa.Array) -> pa.Array:
    """``full`` with the rows ``idx`` (sorted) replaced by ``part``."""
    if not len(idx):
        return full
    n = len(full)
    if len(idx) == n:
        return part
    pos = np.arange(n, dtype=np.int64)
    pos[idx] = n + np.arange(len(idx))
    return pa.concat_arrays([full, part]).take(_ka.from_numpy(pos))


def _finish(typ: pa.StructType, cols: Dict[str, pa.Array], n: int, sidx: np.ndarray,
            slow_rows: List[Dict[str, Any]], mode: str, what: str, *inputs: pa.Array,
            row_type: Optional[pa.StructType] = None) -> pa.StructArray:
    """The result column: the bulk path's full-length ``cols`` (missing: all null) with the
    exact path's rows (``slow_rows`` at ``sidx``, of ``row_type``: ``typ`` unprojected)
    put in; FAILFAST raises on the first row with an ``_error``."""
    children = [cols[f.name] if f.name in cols else nulls(n, f.type, (id(typ), f.name)) for f in typ]
    if len(sidx):
        if row_type is not None and row_type is not typ:
            sarr = shape(pa.array(slow_rows, row_type), shaper(row_type, typ))
        else:
            sarr = pa.array(slow_rows, typ)
        children = [_override(c, sidx, sarr.field(j)) for j, c in enumerate(children)]
    out = pa.StructArray.from_arrays(children, fields=list(typ))
    err = out.field(ERROR)
    if mode == FAILFAST and err.null_count < n:
        _fail(what, np.flatnonzero(_valid(err)), err, *inputs)
    return out


@functools.lru_cache(maxsize=None)
def protocol_type(schema: str) -> pa.StructType:
    """``ConsumerProtocolSubscription``/``Assignment``: the int16 ``version`` prefix, the
    fields of every version 0-3, ``_error``."""
    return pa.struct([pa.field("version", pa.int16())] + list(_protocol_body(schema)) + [pa.field(ERROR, pa.string())])


@functools.lru_cache(maxsize=None)
def _protocol_body(schema: str) -> pa.StructType:
    return union_type([_ka.arrow_type(schema, v) for v in range(_PROTOCOL_MAX, -1, -1)])


def decode_protocol(values: Any, schema: str, *, mode: str = PERMISSIVE) -> pa.StructArray:
    """Version-prefixed consumer-protocol bytes, as Kafka's ``ConsumerProtocol`` reads them
    (prefix above 3 read with the v3 layout, bytes after the body ignored)."""
    values = _binary(values)
    typ, body_t = protocol_type(schema), _protocol_body(schema)
    n = len(values)
    ver, has, isnull = _prefix16(values)
    fast = has & (ver >= 0) & (ver <= _PROTOCOL_MAX)
    body, bad = _by_version(schema, values, ver, fast, range(_PROTOCOL_MAX + 1), body_t)
    fast &= ~bad          # e.g. trailing bytes, which Kafka ignores: the exact path decides
    cols = {f.name: body.field(j) for j, f in enumerate(body_t)}
    cols["version"] = _with_nulls(_ka.from_numpy(ver), fast)
    sidx = np.flatnonzero(~isnull & ~fast)
    rows: List[Dict[str, Any]] = []
    if len(sidx):
        reader = read_subscription_raw if schema == _SUB else read_assignment_raw
        for i in sidx.tolist():
            try:
                raw = reader(values[i].as_py())
                rows.append({"version": raw.version, **_py(raw.value)})
            except KcodecError as e:
                rows.append({ERROR: str(e)})
    return _finish(typ, cols, n, sidx, rows, mode, schema, values)


# --------------------------------------------------------------------------- __consumer_offsets

ALL = "all"
#: What :func:`offsets_type` decodes into value structs when not told: the record types of
#: the classic group coordinator, which is what a ``__consumer_offsets`` topic mostly holds.
DEFAULT_RECORD_TYPES = ("LegacyOffsetCommit", "OffsetCommit", "GroupMetadata")
_GROUP_KEYS = ("group", "groupId")          # every coordinator key starts with one of them
_TOP_KEYS = _GROUP_KEYS + ("topic", "partition")


def _embedded_type(schema: str) -> pa.StructType:
    return pa.struct([("version", pa.int16()), ("parsed_version", pa.int16()), ("value", _protocol_body(schema)),
                      ("trailing", pa.binary()), ("error", pa.string())])


@functools.lru_cache(maxsize=None)
def _value_types() -> Dict[str, pa.StructType]:
    values: Dict[str, pa.StructType] = {}
    for _, info in sorted(record_types().items()):
        s = kcodec.spec(info.value)
        vs = range(s.valid_versions.highest, s.valid_versions.lowest - 1, -1)
        values[info.value] = union_type([_ka.arrow_type(info.value, v) for v in vs])
    return values


@functools.lru_cache(maxsize=None)
def _members_type() -> pa.DataType:
    return pa.list_(pa.struct([("subscription", _embedded_type(_SUB)), ("assignment", _embedded_type(_ASG))]))


def _selected(names: Any) -> Tuple[str, ...]:
    """``record_types`` as the sorted tuple of the names it selects (checked)."""
    return _selected_names(names if names is None or isinstance(names, (str, tuple)) else tuple(names))


@functools.lru_cache(maxsize=256)
def _selected_names(names: Any) -> Tuple[str, ...]:
    types = record_types()
    by_name = {info.name: rt for rt, info in types.items()}
    if names is None:
        names = DEFAULT_RECORD_TYPES
    elif isinstance(names, str):
        names = tuple(by_name) if names.lower() == ALL else (names,)
    unknown = sorted(set(names) - set(by_name))
    if unknown:
        raise ValueError(f"unknown record types {unknown}; known: {sorted(by_name)} (or {ALL!r})")
    return tuple(sorted(set(names), key=by_name.__getitem__))


def offsets_type(record_types: Any = None) -> pa.StructType:
    """Arrow type of :func:`decode_offsets`, in this order:

    ``record_type`` (int16, the key's prefix), ``group``, ``topic`` and ``partition`` (from
    the key: every type has a group, offset commits a topic and partition), ``key`` (the
    other key fields of the selected types, e.g. ``memberId``; left out when they have
    none), ``value_version``, ``tombstone``, ``unknown`` (KIP-915: a type this coordinator
    does not know), ``newer_than_known``, one struct per selected value schema
    (``OffsetCommitValue``, ``GroupMetadataValue``, ``ConsumerGroupMemberMetadataValue``,
    ...; the fields of all its versions, set on the rows of that type), ``members`` (with
    ``GroupMetadata``: a classic consumer group's decoded member subscriptions and
    assignments, parallel to ``GroupMetadataValue.members``), ``raw_value`` (the value
    bytes of a row whose value is in no struct here: a type not selected, an unknown type,
    a value that did not decode) and ``_error``.

    ``record_types``: names as :func:`kcodec.offsets.record_types` gives them, one name, or
    ``"all"``; default :data:`DEFAULT_RECORD_TYPES` (offset commits and classic group
    metadata).  Rows of every type are decoded and checked either way; a type not selected
    keeps its row with type, group, topic/partition and ``raw_value``."""
    return _offsets_type(_selected(record_types))


@functools.lru_cache(maxsize=None)
def _offsets_type(names: Tuple[str, ...]) -> pa.StructType:
    types = record_types()
    by_name = {info.name: info for info in types.values()}
    values = _value_types()
    keep = [by_name[x].value for x in names]
    if "LegacyOffsetCommit" in names and "OffsetCommitValue" not in keep:
        keep.append("OffsetCommitValue")        # newer type-0 values are OffsetCommitValue
    extras = union_type([pa.struct([f for f in _ka.arrow_type(by_name[x].key, 0) if f.name not in _TOP_KEYS])
                         for x in names])
    fields: List[Any] = [("record_type", pa.int16()), ("group", pa.string()), ("topic", pa.string()),
                         ("partition", pa.int32())]
    if extras.num_fields:
        fields.append(("key", extras))
    fields += [("value_version", pa.int16()), ("tombstone", pa.bool_()), ("unknown", pa.bool_()),
               ("newer_than_known", pa.bool_())]
    fields += [(v, values[v]) for v in values if v in keep]
    if "GroupMetadata" in names:
        fields.append(("members", _members_type()))
    fields += [("raw_value", pa.binary()), (ERROR, pa.string())]
    return pa.struct(fields)


def _value_field(rtype: int, info: Any, vv: Optional[int]) -> str:
    # Type 0 (the 0.8.2 offset key): value versions past the legacy schema are
    # OffsetCommitValue, as kcodec.offsets (and Kafka's pre-4.0 loader) read them.
    types = record_types()
    if rtype == 0 and vv is not None and vv > info.value_max and 1 in types:
        return types[1].value
    return info.value


def _emb(e: Any) -> Optional[Dict[str, Any]]:
    if e is None:
        return None
    return {"version": e.version, "parsed_version": e.parsed_version, "value": _py(e.value),
            "trailing": bytes(e.trailing) if e.trailing is not None else None, "error": e.error}


def _offsets_row(rec: Any, typ: pa.StructType) -> Dict[str, Any]:
    """One :class:`kcodec.offsets.OffsetsRecord` as a row of ``typ`` (an :func:`offsets_type`)."""
    key = rec.key or {}
    d: Dict[str, Any] = {
        "record_type": rec.record_type, "group": rec.group_id, "topic": key.get("topic"),
        "partition": key.get("partition"), "value_version": rec.value_version, "tombstone": rec.tombstone,
        "unknown": rec.unknown, "newer_than_known": rec.newer_than_known, ERROR: rec.error,
    }
    names = set(typ.names)
    if "key" in names and rec.key is not None:
        d["key"] = {f.name: rec.key.get(f.name) for f in typ.field("key").type}
    placed = False
    if rec.value is not None:
        vf = _value_field(rec.record_type, record_types()[rec.record_type], rec.value_version)
        if vf in names:
            d[vf] = _py(rec.value)
            placed = True
    if not placed and rec.value_bytes is not None:
        d["raw_value"] = bytes(rec.value_bytes)
    if rec.members is not None and "members" in names:
        d["members"] = [{"subscription": _emb(m.get("subscription")),
                         "assignment": _emb(m.get("assignment"))} for m in rec.members]
    return d


class _Out(NamedTuple):
    """What :func:`decode_offsets` builds for one selection, computed once: the result
    type (Kafka's types, or Spark's with ``spark=True``; projected to ``fields``), the
    unprojected type (the exact path's rows), each result field's type by name."""
    typ: pa.StructType
    full: pa.StructType
    fields: Dict[str, pa.DataType]
    full_names: frozenset                           # the unprojected type's field names


@functools.lru_cache(maxsize=None)
def _offsets_out(names: Tuple[str, ...], spark: bool, fields: Optional[Tuple[str, ...]] = None) -> _Out:
    full, typ, ftypes = _result_types(_offsets_type(names), spark, fields)
    return _Out(typ, full, ftypes, frozenset(full.names))


@functools.lru_cache(maxsize=64)
def _offsets_kernel(names: Tuple[str, ...], spark: bool, fields: Optional[Tuple[str, ...]],
                    flat: bool = True) -> Any:
    """The C kernel of one selection (its union trees, field maps and result layout built
    once), or None without the native engine (``flat=False``: without flat programs, the
    reference the tests hold them to)."""
    if not kcodec.NATIVE:
        return None
    from ._oplan import Plan
    out = _offsets_out(names, spark, fields)
    plan = Plan(out.typ, spark, "members" in out.fields, out.full_names,
                lambda f: "group" if f in _GROUP_KEYS else f)
    return plan.kernel(out.typ, flat)


def decode_offsets(key: Any, value: Any, *, mode: str = PERMISSIVE, record_types: Any = None,
                   fields: Any = None, spark: bool = False) -> pa.StructArray:
    """Decode ``__consumer_offsets`` key/value columns (Kafka types; see :func:`offsets_type`,
    also for ``record_types``; ``spark=True``: built directly in the types Spark takes,
    :func:`kcodec.spark._types.spark_arrow_type` of it, as the column function returns).
    ``fields``: dotted paths of the fields to return (:func:`project_type`); the others
    are decoded and checked, not kept (every row is still decoded and checked).

    One C call per batch (csrc/kc_ocols.c): each row's key prefix picks its record type
    and the value's its version; the engine's program for it decodes the row straight
    into the result's columns (each value schema's versions share one struct, fields a
    version lacks null; ``group`` from every key type in one column), classic consumer
    members' subscriptions and assignments in the same pass, in Kafka's or Spark's types.
    Type 0 (0.8.2; its values switch schema), unknown types, version-prefix anomalies and
    rows that fail anywhere (errors, trailing bytes, embedded versions above 3) take
    :func:`kcodec.offsets.decode_record`, whose answers and error texts are the reference."""
    names = _selected(record_types)
    fo = fields_option(fields)
    out = _offsets_out(names, spark, fo)
    typ = out.typ
    key, value = _binary(key), _binary(value)
    n = len(key)
    if len(value) != n:
        raise ValueError("key and value columns differ in length")
    kernel = _offsets_kernel(names, spark, fo)
    if kernel is not None:
        arr, status = kernel.decode(key, value)
        sidx = np.flatnonzero(status == 0)
        if not len(sidx):
            return arr
        cols = {f.name: arr.field(j) for j, f in enumerate(typ)}
    else:           # the pure-Python engine: every row takes the exact path
        both_null = ~_valid(key) & ~_valid(value)
        sidx = np.flatnonzero(~both_null)
        cols = {}
    rows_py = [_offsets_row(decode_record(key[i].as_py(), value[i].as_py(), errors="report"), out.full)
               for i in sidx.tolist()]
    return _finish(typ, cols, n, sidx, rows_py, mode, "__consumer_offsets record", key, value,
                   row_type=out.full)


# --------------------------------------------------------------------------- __cluster_metadata

def _metadata_names() -> Dict[int, str]:
    from kcodec.kraft.records import RECORD_TYPES
    return RECORD_TYPES


@functools.lru_cache(maxsize=None)
def _metadata_value_types() -> Dict[str, pa.StructType]:
    """Spec name -> the union of its versions' Arrow types, by API key."""
    out: Dict[str, pa.StructType] = {}
    for _, name in sorted(_metadata_names().items()):
        vv = kcodec.spec(name).valid_versions
        out[name] = union_type([_ka.arrow_type(name, v) for v in range(vv.highest, vv.lowest - 1, -1)])
    return out


def metadata_selected(names: Any) -> Tuple[str, ...]:
    """``record_types`` of :func:`metadata_type` as the tuple of spec names it selects, by
    API key (checked)."""
    return _metadata_selected(names if names is None or isinstance(names, (str, tuple)) else tuple(names))


@functools.lru_cache(maxsize=256)
def _metadata_selected(names: Any) -> Tuple[str, ...]:
    by_name = {name: api for api, name in _metadata_names().items()}
    if names is None or (isinstance(names, str) and names.lower() == ALL):
        names = tuple(by_name)
    elif isinstance(names, str):
        names = (names,)
    unknown = sorted(set(names) - set(by_name))
    if unknown:
        raise ValueError(f"unknown metadata record types {unknown}; known: {sorted(by_name)} (or {ALL!r})")
    return tuple(sorted(set(names), key=by_name.__getitem__))


def metadata_type(record_types: Any = None) -> pa.StructType:
    """Arrow type of :func:`decode_metadata`, in this order: ``api_key`` (int16, the
    frame's record type), ``record_type`` (its spec name, ``"PartitionChangeRecord"``;
    null for a type the 4.1.1 specs do not have), ``version`` (the record's version),
    ``unknown`` (an API key kcodec does not know: the row is data, not an error),
    ``newer_than_known`` (a version above the newest known, decoded with the newest
    layout as Kafka does), one struct per selected record type (``TopicRecord``,
    ``PartitionRecord``, ...: the fields of all its versions, set on the rows of that
    type), ``raw_value`` (the value bytes of a row in no struct here: a type not
    selected, an unknown type, a value that did not decode) and ``_error``.
    ``record_types``: spec names, one name, or ``"all"`` (default)."""
    return _metadata_type(metadata_selected(record_types))


@functools.lru_cache(maxsize=None)
def _metadata_type(names: Tuple[str, ...]) -> pa.StructType:
    values = _metadata_value_types()
    fields: List[Any] = [("api_key", pa.int16()), ("record_type", pa.string()), ("version", pa.int16()),
                         ("unknown", pa.bool_()), ("newer_than_known", pa.bool_())]
    fields += [(name, values[name]) for name in names]
    fields += [("raw_value", pa.binary()), (ERROR, pa.string())]
    return pa.struct(fields)


@functools.lru_cache(maxsize=None)
def _metadata_name_table() -> pa.Array:
    """Spec name by API key 0-127 (null where none), to take the rows' names from."""
    names = _metadata_names()
    return pa.array([names.get(i) for i in range(128)], pa.string())


def _metadata_row(rec: Any, typ: pa.StructType) -> Dict[str, Any]:
    """One :class:`kcodec.kraft.MetadataRecord` as a row of ``typ`` (a :func:`metadata_type`)."""
    d: Dict[str, Any] = {"api_key": rec.api_key, "record_type": rec.type, "version": rec.version,
                         "unknown": rec.status == "unknown_type", "newer_than_known": rec.status == "newer_version",
                         ERROR: rec.error if rec.status == "error" else None}
    if rec.ok and rec.type in typ.names:
        d[rec.type] = _py(rec.value)
    else:
        d["raw_value"] = bytes(rec.raw)
    return d


class _MetaOut(NamedTuple):
    typ: pa.StructType
    full: pa.StructType
    fields: Dict[str, pa.DataType]
    values: Dict[str, Optional[Tuple[str, ...]]]    # spec name -> top-level fields kept (() : checked only)
    full_names: frozenset


@functools.lru_cache(maxsize=None)
def _metadata_out(names: Tuple[str, ...], spark: bool, fields: Optional[Tuple[str, ...]]) -> _MetaOut:
    full, typ, ftypes = _result_types(_metadata_type(names), spark, fields)
    values: Dict[str, Optional[Tuple[str, ...]]] = {}
    for name in _metadata_names().values():
        values[name] = () if name not in ftypes else None if fields is None else _top_fields(ftypes[name])
    return _MetaOut(typ, full, ftypes, values, frozenset(full.names))


def decode_metadata(values: Any, *, mode: str = PERMISSIVE, record_types: Any = None, fields: Any = None,
                    spark: bool = False) -> pa.StructArray:
    """Decode ``__cluster_metadata`` record values (the MetadataRecordSerde frame: varint
    frame version, API key, version, then the record) into :func:`metadata_type` rows
    (``record_types``, ``fields`` and ``spark`` as for :func:`decode_offsets`).

    Rows with the common 3-byte frame head (frame version 1, one-byte API key and
    version) are decoded by the C bulk decoder, one pass per (type, version) reading its
    own rows in place; other heads, versions below the spec's and rows the bulk decoder
    flags take :func:`kcodec.kraft.read_record`, whose answers and error texts are the
    reference.  A null value gives a null row."""
    from kcodec.kraft.records import read_record
    out = _metadata_out(metadata_selected(record_types), spark, fields_option(fields))
    typ, ftypes = out.typ, out.fields
    names = _metadata_names()
    values = _binary(values)
    n = len(values)
    heads, have, isnull = _heads(values, 3)
    if n:
        h0, api, ver = heads[:, 0], heads[:, 1].astype(np.int16), heads[:, 2].astype(np.int16)
        fast = (have == 3) & (h0 == 1) & (api < 0x80) & (ver < 0x80)
    else:
        api = ver = np.zeros(0, np.int16)
        fast = np.zeros(0, bool)
    good = np.zeros(n, bool)
    raw = np.zeros(n, bool)
    unknown = np.zeros(n, bool)
    newer = np.zeros(n, bool)
    pieces: Dict[str, pa.Array] = {}
    for a in _present(api, fast):
        name = names.get(a)
        rows = fast & (api == a)
        if name is None:                # a type these specs lack: data, not an error
            unknown |= rows
            raw |= rows
            good |= rows
            continue
        vv = kcodec.spec(name).valid_versions
        vf = name if name in ftypes else None
        vals: List[pa.Array] = []
        for v in _present(ver, rows):
            if v < vv.lowest:
                continue                # the exact path says why
            sel = rows & (ver == v)
            later = "latest" if v > vv.highest else "error"
            vk, vt = _version_keep(name, v, out.values[name], later)
            vb = _ka.decode(name, values, v, newer=later, skip=3, select=None if sel.all() else sel, fields=vk)
            err = vb.column(ERROR)
            if err.null_count < n:
                sel &= ~_valid(err)
            if later == "latest":
                newer |= sel
            good |= sel
            if vf is None:
                if name not in out.full_names:
                    raw |= sel
            else:
                vals.append(shape_columns(vb, shaper(vt, ftypes[vf]), sel))
        if vals:
            pieces[vf] = _coalesce(vals, n, ftypes[vf], ())      # type: ignore[index]
    cols: Dict[str, pa.Array] = dict(pieces)
    if "api_key" in ftypes:
        cols["api_key"] = _with_nulls(_ka.from_numpy(api), good)
    if "version" in ftypes:
        cols["version"] = _with_nulls(_ka.from_numpy(ver), good)
    if "record_type" in ftypes and good.any():
        idx = _with_nulls(_ka.from_numpy(np.minimum(api, 127).astype(np.int16)), good & ~unknown)
        cols["record_type"] = _metadata_name_table().take(idx)
    if "unknown" in ftypes:
        cols["unknown"] = _with_nulls(_ka.from_numpy(unknown), good)
    if "newer_than_known" in ftypes:
        cols["newer_than_known"] = _with_nulls(_ka.from_numpy(newer), good)
    if "raw_value" in ftypes and raw.any():
        cols["raw_value"] = pa.compute.if_else(_ka.from_numpy(raw), values.cast(pa.binary()),
                                               pa.scalar(None, pa.binary()))
    sidx = np.flatnonzero(~good & ~isnull)
    rows_py = [_metadata_row(read_record(values[i].as_py()), out.full) for i in sidx.tolist()]
    return _finish(typ, cols, n, sidx, rows_py, mode, "__cluster_metadata record", values, row_type=out.full)


def _present(prefix: np.ndarray, rows: np.ndarray) -> List[int]:
    """The distinct int16 prefixes on ``rows``, ascending (one comparison when, as in
    nearly every batch, a single value fills them)."""
    if not rows.any():
        return []
    at = prefix[rows]
    first = at[0]
    if (at == first).all():
        return [int(first)]
    lo, hi = int(at.min()), int(at.max())
    if hi - lo < 256:           # record types, versions: a count beats a sort
        return (np.flatnonzero(np.bincount(at.astype(np.intp) - lo)) + lo).tolist()
    return np.unique(at).tolist()


def spark_ready(arr: pa.Array) -> pa.Array:
    """:func:`kcodec.spark._types.for_spark` (re-exported for the UDF wrappers)."""
    return for_spark(arr)


# --------------------------------------------------------------------------- Kafka Streams user data

_TASK = pa.struct([("subtopology", pa.int32()), ("partition", pa.int32()), ("topology_name", pa.string())])
_TP = pa.struct([("topic", pa.string()), ("partition", pa.int32())])
_HOSTS = pa.list_(pa.struct([("host", pa.string()), ("port", pa.int32()), ("partitions", pa.list_(_TP))]))
_STREAMS_TYPES = {
    "subscription": pa.struct([
        ("version", pa.int32()), ("latest_supported_version", pa.int32()), ("process_id", pa.string()),
        ("user_end_point", pa.string()),
        ("task_offset_sums", pa.list_(pa.struct(list(_TASK) + [pa.field("offset_sum", pa.int64())]))),
        ("prev_tasks", pa.list_(_TASK)), ("standby_tasks", pa.list_(_TASK)),
        ("unique_field", pa.int8()), ("error_code", pa.int32()),
        ("client_tags", pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))),
        ("future", pa.bool_()), (ERROR, pa.string())]),
    "assignment": pa.struct([
        ("version", pa.int32()), ("commonly_supported_version", pa.int32()), ("active_tasks", pa.list_(_TASK)),
        ("standby_tasks", pa.list_(pa.struct([("task", _TASK), ("partitions", pa.list_(_TP))]))),
        ("partitions_by_host", _HOSTS), ("standby_partitions_by_host", _HOSTS),
        ("error_code", pa.int32()), ("next_rebalance_ms", pa.int64()), (ERROR, pa.string())]),
}


def streams_type(kind: str) -> pa.StructType:
    """Arrow type of :func:`decode_streams` for ``kind`` ``"subscription"`` (Streams'
    SubscriptionInfo) or ``"assignment"`` (AssignmentInfo)."""
    t = _STREAMS_TYPES.get(kind)
    if t is None:
        raise ValueError(f"kind must be 'subscription' or 'assignment', not {kind!r}")
    return t


def _task(t: Any) -> Dict[str, Any]:
    return {"subtopology": t.subtopology, "partition": t.partition, "topology_name": t.topology_name}


def _tps(tps: Any) -> List[Dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]


def _hosts(m: Any) -> List[Dict[str, Any]]:
    return [{"host": h.host, "port": h.port, "partitions": _tps(tps)} for h, tps in m.items()]


def streams_row(info: Any) -> Dict[str, Any]:
    """A :class:`kcodec.streams.SubscriptionInfo` or ``AssignmentInfo`` as a row of
    :func:`streams_type` (wire order kept, as kcodec.streams keeps it)."""
    from kcodec.streams import LATEST_OFFSET, SubscriptionInfo
    if isinstance(info, SubscriptionInfo):
        return {"version": info.version, "latest_supported_version": info.latest_supported_version,
                "process_id": None if info.future else str(info.process_id),
                "user_end_point": info.user_end_point,
                "task_offset_sums": [dict(_task(t), offset_sum=s) for t, s in info.task_offset_sums.items()],
                "prev_tasks": [_task(t) for t, s in info.task_offset_sums.items() if s == LATEST_OFFSET],
                "standby_tasks": [_task(t) for t, s in info.task_offset_sums.items() if s != LATEST_OFFSET],
                "unique_field": info.unique_field, "error_code": info.error_code,
                "client_tags": [{"key": k, "value": v} for k, v in info.client_tags.items()],
                "future": info.future}
    return {"version": info.version, "commonly_supported_version": info.commonly_supported_version,
            "active_tasks": [_task(t) for t in info.active_tasks],
            "standby_tasks": [{"task": _task(t), "partitions": _tps(tps)} for t, tps in info.standby_tasks.items()],
            "partitions_by_host": _hosts(info.partitions_by_host),
            "standby_partitions_by_host": _hosts(info.standby_partitions_by_host),
            "error_code": info.error_code, "next_rebalance_ms": info.next_rebalance_ms}


_HEX = np.frombuffer(b"".join(b"%02x" % i for i in range(256)), np.uint8).reshape(256, 2)
_UUID_DIGITS = np.array([i for i in range(36) if i not in (8, 13, 18, 23)])


def _uuid_text(col: pa.Array) -> pa.Array:
    """A null-free ``fixed_size_binary(16)`` column as UUID text (``str(uuid.UUID)``)."""
    m = len(col)
    raw = np.frombuffer(col.buffers()[1], np.uint8)[col.offset * 16:(col.offset + m) * 16].reshape(m, 16)
    out = np.full((m, 36), ord("-"), np.uint8)
    out[:, _UUID_DIGITS] = _HEX[raw].reshape(m, 32)
    offs = np.arange(0, 36 * (m + 1), 36, dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), m, [None, pa.py_buffer(offs), pa.py_buffer(out.tobytes())])


def _list_of(offsets: np.ndarray, items: pa.StructArray) -> pa.Array:
    return pa.ListArray.from_arrays(_ka.from_numpy(offsets.astype(np.int32)), items)


def _subscription_rows(b: pa.RecordBatch, v: int) -> pa.StructArray:
    """Rows of one SubscriptionInfoData version (a batch without null rows) as
    :func:`streams_type` ("subscription") rows, the Kafka view kcodec.streams gives:
    v1-v6's previous active and standby tasks become offset sums -2 and -3, v7-v9's
    per-subtopology map is flattened, fields a version lacks take Kafka's defaults."""
    from kcodec.streams import LATEST_OFFSET, UNKNOWN, UNKNOWN_OFFSET_SUM
    m = b.num_rows
    col = b.column

    def const(x: int, dtype: Any) -> pa.Array:
        return _ka.from_numpy(np.full(m, x, dtype))

    def offsets(lst: pa.Array) -> np.ndarray:
        return np.frombuffer(lst.buffers()[1], np.int32)[lst.offset:lst.offset + m + 1]

    if v < 7:           # tasks run as active, then standby tasks: their offset sums are implied
        prev, standby = col("prevTasks"), col("standbyTasks")
        po, so = offsets(prev), offsets(standby)
        lp, ls = np.diff(po), np.diff(so)
        lens = lp + ls
        row = np.repeat(np.arange(m), lens)
        start = np.concatenate(([0], np.cumsum(lens)))
        k = np.arange(int(start[-1])) - start[row]
        is_prev = k < lp[row]
        take_p = np.where(is_prev, po[row] + k, 0)
        take_s = np.where(is_prev, 0, so[row] + k - lp[row])
        pv, sv = prev.values, standby.values

        def pick(name: str) -> np.ndarray:       # (a one-zero stand-in for an empty side)
            a = _ka.to_numpy(pv.field(name)) if len(pv) else np.zeros(1, np.int32)
            c = _ka.to_numpy(sv.field(name)) if len(sv) else np.zeros(1, np.int32)
            return np.where(is_prev, a[take_p], c[take_s]).astype(np.int32)
        sub, part = pick("topicGroupId"), pick("partition")
        sums = np.where(is_prev, LATEST_OFFSET, UNKNOWN_OFFSET_SUM).astype(np.int64)
        names = pa.nulls(len(sub), pa.string())
    else:
        tos = col("taskOffsetSums")
        to = offsets(tos)
        groups = tos.values
        if v < 10:      # subtopology -> [(partition, offset sum)]
            inner = groups.field("partitionToOffsetSum")
            io = np.frombuffer(inner.buffers()[1], np.int32)[inner.offset:inner.offset + len(inner) + 1]
            item_group = np.repeat(_ka.to_numpy(groups.field("topicGroupId")), np.diff(io))
            lo, hi = int(io[to[0]]), int(io[to[-1]])
            items = inner.values.slice(lo, hi - lo)
            rel = io - io[0]
            sub = item_group[lo - io[0]:hi - io[0]]
            part = _ka.to_numpy(items.field("partition"))
            sums = _ka.to_numpy(items.field("offsetSum"))
            start = rel[to] - (lo - io[0])
            names = pa.nulls(len(sub), pa.string())
        else:
            lo, hi = int(to[0]), int(to[-1])
            g = groups.slice(lo, hi - lo)
            sub, part = _ka.to_numpy(g.field("topicGroupId")), _ka.to_numpy(g.field("partition"))
            sums, names = _ka.to_numpy(g.field("offsetSum")), g.field("namedTopology")
            start = to - lo
        lens = np.diff(start)
        row = np.repeat(np.arange(m), lens)
    sub_a, part_a, sums_a = _ka.from_numpy(np.ascontiguousarray(sub, np.int32)), \
        _ka.from_numpy(np.ascontiguousarray(part, np.int32)), _ka.from_numpy(np.ascontiguousarray(sums, np.int64))
    t = streams_type("subscription")
    sums_t = t.field("task_offset_sums").type
    flat = pa.StructArray.from_arrays([sub_a, part_a, names, sums_a], fields=list(sums_t.value_type))
    active = np.asarray(sums) == LATEST_OFFSET
    task_fields = list(t.field("prev_tasks").type.value_type)

    def tasks(mask: np.ndarray) -> pa.Array:
        idx = _ka.from_numpy(np.flatnonzero(mask))
        items = pa.StructArray.from_arrays([sub_a.take(idx), part_a.take(idx), names.take(idx)], fields=task_fields)
        per = np.bincount(row[mask], minlength=m) if m else np.zeros(0, np.int64)
        return _list_of(np.concatenate(([0], np.cumsum(per))), items)
    end_point = col("userEndPoint") if v >= 2 else pa.nulls(m, pa.binary())
    end_point = pa.compute.if_else(pa.compute.equal(pa.compute.binary_length(end_point), 0),
                                   pa.scalar(None, pa.binary()), end_point).cast(pa.string())
    if v >= 11:
        tags = col("clientTags")
        tv = tags.values
        tag_items = pa.StructArray.from_arrays([tv.field("key").cast(pa.string()), tv.field("value").cast(pa.string())],
                                               fields=list(t.field("client_tags").type.value_type))
        client_tags = pa.ListArray.from_arrays(tags.offsets, tag_items)
    else:
        client_tags = _list_of(np.zeros(m + 1, np.int32),
                               pa.array([], t.field("client_tags").type.value_type))
    kids = [const(v, np.int32),
            col("latestSupportedVersion") if v >= 3 else const(UNKNOWN, np.int32),
            _uuid_text(col("processId")), end_point,
            _list_of(np.concatenate(([0], np.cumsum(lens))), flat), tasks(active), tasks(~active),
            col("uniqueField") if v >= 8 else const(0, np.int8),
            col("errorCode") if v >= 9 else const(0, np.int32), client_tags,
            _ka.from_numpy(np.zeros(m, bool)), pa.nulls(m, pa.string())]
    return pa.StructArray.from_arrays(kids, fields=list(t))


def _subscriptions_bulk(values: pa.Array) -> Tuple[List[Tuple[np.ndarray, pa.Array]], np.ndarray]:
    """The rows of SubscriptionInfo v1-v11 the C bulk decoder reads (one pass per version,
    each reading its own rows in place): ``(rows, struct rows)`` per version, and which
    rows it took."""
    heads, have, _ = _heads(values, 4)
    n = len(values)
    ver = heads.view(">i4").reshape(-1).astype(np.int32) if n else np.zeros(0, np.int32)
    ok = (have == 4) & (ver >= 1) & (ver <= 11)
    parts: List[Tuple[np.ndarray, pa.Array]] = []
    took = np.zeros(n, bool)
    for v in _present(ver, ok):
        sel = ok & (ver == v)
        b = _ka.decode("SubscriptionInfoData", values, v, select=None if sel.all() else sel)
        err = b.column(ERROR)
        if err.null_count < n:
            sel &= ~_valid(err)
        idx = np.flatnonzero(sel)
        if not len(idx):
            continue
        try:
            rows = _subscription_rows(b.take(_ka.from_numpy(idx)), v)
        except pa.ArrowInvalid:         # e.g. bytes that are not UTF-8: the exact path decides
            continue
        parts.append((idx, rows))
        took[idx] = True
    return parts, took


def decode_streams(values: Any, kind: str, *, mode: str = PERMISSIVE) -> pa.StructArray:
    """Decode Kafka Streams user data (``kind``: ``"subscription"`` or ``"assignment"``)
    as :func:`kcodec.streams.decode_subscription` / ``decode_assignment`` do.

    SubscriptionInfo v1-v11 is the generated ``SubscriptionInfoData``: the C bulk decoder
    reads it, one pass per version, and its columns are turned into Kafka's view with
    NumPy (no object per row).  AssignmentInfo is Kafka's hand-written format (no spec
    for the engine) and is decoded row by row by kcodec.streams, as are subscriptions the
    bulk path leaves (newer versions, errors, trailing bytes): user data is one value per
    member per rebalance, not a log's worth.  Identical values (a leader's repeated
    assignments) are decoded once."""
    from kcodec.streams import decode_assignment, decode_subscription
    typ = streams_type(kind)
    values = _binary(values)
    n = len(values)
    parts: List[Tuple[np.ndarray, pa.Array]] = []
    took = np.zeros(n, bool)
    if kind == "subscription":
        parts, took = _subscriptions_bulk(values)
        dec: Any = decode_subscription
    else:
        dec = decode_assignment
    slow = np.flatnonzero(~took & _valid(values))
    rows: List[Dict[str, Any]] = []
    seen: Dict[bytes, Dict[str, Any]] = {}
    for i in slow.tolist():
        b = values[i].as_py()
        got = seen.get(b)
        if got is None:
            try:
                got = streams_row(dec(b))
            except KcodecError as e:
                got = {ERROR: f"Streams {kind} user data: {e}"}
            if len(seen) < 4096:
                seen[b] = got
        rows.append(got)
    if len(slow):
        parts.append((slow, pa.array(rows, typ)))
    pos = np.full(n, -1, np.int64)
    base = 0
    for idx, arr in parts:
        pos[idx] = base + np.arange(len(idx))
        base += len(idx)
    if not parts:
        out = nulls(n, typ)
    else:
        whole = pa.concat_arrays([arr for _, arr in parts]) if len(parts) > 1 else parts[0][1]
        out = whole.take(_with_nulls(_ka.from_numpy(np.maximum(pos, 0)), pos >= 0))
    if mode == FAILFAST:
        err = out.field(ERROR)
        if err.null_count < n:
            _fail(f"Streams {kind}", np.flatnonzero(_valid(err)), err, values)
    return out
