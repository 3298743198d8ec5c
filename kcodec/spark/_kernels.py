"""The Arrow-level work behind the Spark column functions: Arrow arrays in, Arrow arrays out.

Everything here runs inside Spark's Python workers on one Arrow batch at a time.  The hot
path (offset commits, the bulk of any ``__consumer_offsets`` read, and any one message
at a fixed version) goes through the C bulk decoder :func:`kcodec.arrow.decode`: row
selection, version-prefix reading and reassembly are NumPy/Arrow vector operations, with
no Python object per row.  Rows the bulk path cannot take as they are (other record
types, version-prefix anomalies, rows the bulk decoder flags) are decoded one by one by
the single-record APIs (:func:`kcodec.offsets.decode_record`,
:func:`kcodec.consumer.read_subscription_raw`), so both paths give the same answer and
the error texts are theirs.
"""
from __future__ import annotations

import functools
import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pyarrow as pa

import kcodec
from kcodec import arrow as _ka
from kcodec.consumer import read_assignment_raw, read_subscription_raw
from kcodec.errors import KcodecError
from kcodec.offsets import decode_record, record_types

from ._types import conform, for_spark, nulls, union_type

__all__ = ["PERMISSIVE", "FAILFAST", "check_mode", "message_type", "decode_message",
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


def _prefix16(arr: pa.Array) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the leading big-endian int16, whether the row has one (>= 2 bytes), and
    whether the row is null.  Read straight from the Arrow buffers."""
    n = len(arr)
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else np.zeros(n, bool)
    if n == 0:
        return np.zeros(0, np.int16), np.zeros(0, bool), nulls
    bufs = arr.buffers()
    otype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offs = np.frombuffer(bufs[1], otype)[arr.offset:arr.offset + n + 1]
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    has = (np.diff(offs) >= 2) & ~nulls
    out = np.zeros(n, np.uint16)
    s = offs[:-1][has]
    out[has] = (data[s].astype(np.uint16) << 8) | data[s + 1]
    return out.view(np.int16), has, nulls


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


def _merge(n: int, parts: Sequence[Tuple[np.ndarray, pa.Array]], typ: pa.DataType,
           key: Optional[Tuple[Any, ...]] = None) -> pa.Array:
    """One array of length ``n`` from pieces placed at row indices; other rows null
    (``key``: names ``typ`` for :func:`nulls`)."""
    parts = [(i, a) for i, a in parts if len(i)]
    if not parts:
        return nulls(n, typ, key)
    if len(parts) == 1 and len(parts[0][0]) == n:     # row indices are sorted and distinct
        return parts[0][1]
    total = sum(len(a) for _, a in parts)
    pos = np.full(n, total, np.int64)
    base = 0
    for idx, a in parts:
        pos[idx] = np.arange(base, base + len(a))
        base += len(a)
    cat = pa.concat_arrays([a for _, a in parts] + [nulls(1, typ, key)])
    return cat.take(pa.array(pos))


def _fail(what: str, rows: np.ndarray, errors: pa.Array, *inputs: pa.Array) -> None:
    i = int(rows[0])
    ctx = []
    for name, col in zip(("key", "value"), inputs) if len(inputs) > 1 else zip(("value",), inputs):
        b = col[i].as_py()
        ctx.append(f"{name}={'null' if b is None else bytes(b[:48]).hex() + ('...' if len(b) > 48 else '')}")
    raise FailFastError(f"{what}: row {i} of the batch ({len(rows)} bad rows): {errors[i].as_py()} "
                        f"[{', '.join(ctx)}]")


def _assemble(n: int, typ: pa.StructType, parts: Dict[str, List[Tuple[np.ndarray, pa.Array]]],
              sidx: np.ndarray, slow_rows: List[Dict[str, Any]], mode: str, what: str,
              *inputs: pa.Array) -> pa.StructArray:
    """The result column: bulk parts plus the exact path's rows (``slow_rows`` at
    ``sidx``); FAILFAST raises on the first row with an ``_error``."""
    if len(sidx):
        sarr = pa.array(slow_rows, typ)
        for j, f in enumerate(typ):
            parts[f.name].append((sidx, sarr.field(j)))
    # typ is a cached layout object, so its id names it for the all-null arrays
    out = pa.StructArray.from_arrays([_merge(n, parts[f.name], f.type, (id(typ), f.name)) for f in typ],
                                     fields=list(typ))
    err = out.field(ERROR)
    if mode == FAILFAST and err.null_count < n:
        _fail(what, np.flatnonzero(err.is_valid().to_numpy(zero_copy_only=False)), err, *inputs)
    return out


def _struct_of(batch: pa.RecordBatch, drop_error: bool = True) -> pa.StructArray:
    names = [n for n in batch.schema.names if not (drop_error and n == ERROR)]
    return pa.StructArray.from_arrays([batch.column(n) for n in names], names=names)


# --------------------------------------------------------------------------- any message

@functools.lru_cache(maxsize=None)
def message_type(name: str, version: int, newer: str = "error") -> pa.StructType:
    """Arrow type of :func:`decode_message`'s result: the message's fields (Kafka types)
    plus ``_error``."""
    t = _ka.arrow_type(name, version, newer=newer)
    return pa.struct(list(t) + [pa.field(ERROR, pa.string())])


def decode_message(values: Any, name: str, version: int, *, newer: str = "error",
                   mode: str = PERMISSIVE) -> pa.StructArray:
    """Decode a binary column as message ``name`` at ``version`` (no framing)."""
    values = _binary(values)
    b = _ka.decode(name, values, version, newer=newer)
    err = b.column(ERROR)
    if mode == FAILFAST and err.null_count < len(err):
        _fail(f"{name} v{version}", np.flatnonzero(err.is_valid().to_numpy(zero_copy_only=False)), err, values)
    return _struct_of(b, drop_error=False)


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
    a ``struct<value: binary, _error: string>`` with the reason per bad row."""
    if isinstance(structs, pa.ChunkedArray):
        structs = structs.combine_chunks()
    t = _ka.arrow_type(name, version)
    out: List[Optional[bytes]] = []
    errs: List[Optional[str]] = []
    # Encoding is for writing test data and rewriting records: one row at a time is fine.
    for i, row in enumerate(structs.to_pylist()):
        if row is None:
            out.append(None)
            errs.append(None)
            continue
        try:
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

@functools.lru_cache(maxsize=None)
def protocol_type(schema: str) -> pa.StructType:
    """``ConsumerProtocolSubscription``/``Assignment``: the int16 ``version`` prefix, the
    fields of every version 0-3, ``_error``."""
    body = union_type([_ka.arrow_type(schema, v) for v in range(_PROTOCOL_MAX, -1, -1)])
    return pa.struct([pa.field("version", pa.int16())] + list(body) + [pa.field(ERROR, pa.string())])


def decode_protocol(values: Any, schema: str, *, mode: str = PERMISSIVE) -> pa.StructArray:
    """Version-prefixed consumer-protocol bytes, as Kafka's ``ConsumerProtocol`` reads them
    (prefix above 3 read with the v3 layout, bytes after the body ignored)."""
    values = _binary(values)
    typ = protocol_type(schema)
    n = len(values)
    ver, has, nulls = _prefix16(values)
    fields = {f.name: [] for f in typ}   # type: Dict[str, List[Tuple[np.ndarray, pa.Array]]]
    slow = [np.flatnonzero(~nulls & ~(has & (ver >= 0) & (ver <= _PROTOCOL_MAX)))]
    for v in range(_PROTOCOL_MAX + 1):
        idx = np.flatnonzero(has & (ver == v))
        if not len(idx):
            continue
        b = _ka.decode(schema, values.take(pa.array(idx)), v, skip=2)
        bad = b.column(ERROR).is_valid().to_numpy(zero_copy_only=False)
        if bad.any():       # e.g. trailing bytes, which Kafka ignores: the exact path decides
            slow.append(idx[bad])
            keep = np.flatnonzero(~bad)
            b = b.take(pa.array(keep))
            idx = idx[keep]
        body = conform(_struct_of(b), pa.struct([f for f in typ if f.name not in ("version", ERROR)]))
        fields["version"].append((idx, pa.array(np.full(len(idx), v, np.int16))))
        for j, f in enumerate(body.type):
            fields[f.name].append((idx, body.field(j)))
    sidx = np.sort(np.concatenate(slow))
    rows: List[Dict[str, Any]] = []
    if len(sidx):
        reader = read_subscription_raw if schema == _SUB else read_assignment_raw
        for i in sidx.tolist():
            try:
                raw = reader(values[i].as_py())
                rows.append({"version": raw.version, **_py(raw.value)})
            except KcodecError as e:
                rows.append({ERROR: str(e)})
    return _assemble(n, typ, fields, sidx, rows, mode, schema, values)


# --------------------------------------------------------------------------- __consumer_offsets

def _embedded_type(schema: str) -> pa.StructType:
    body = union_type([_ka.arrow_type(schema, v) for v in range(_PROTOCOL_MAX, -1, -1)])
    return pa.struct([("version", pa.int16()), ("parsed_version", pa.int16()), ("value", body),
                      ("trailing", pa.binary()), ("error", pa.string())])


@functools.lru_cache(maxsize=None)
def _offsets_layout() -> Tuple[pa.StructType, Dict[int, Any], Dict[str, pa.StructType]]:
    types = record_types()
    keys = union_type([_ka.arrow_type(info.key, 0) for _, info in sorted(types.items())])
    values: Dict[str, pa.StructType] = {}
    for _, info in sorted(types.items()):
        s = kcodec.spec(info.value)
        vs = range(s.valid_versions.highest, s.valid_versions.lowest - 1, -1)
        values[info.value] = union_type([_ka.arrow_type(info.value, v) for v in vs])
    fields = [("record_type", pa.int16()), ("type_name", pa.string()), ("group", pa.string()),
              ("topic", pa.string()), ("partition", pa.int32()), ("key", keys),
              ("value_version", pa.int16()), ("tombstone", pa.bool_()), ("unknown", pa.bool_()),
              ("newer_than_known", pa.bool_())]
    fields += list(values.items())
    fields.append(("members", pa.list_(pa.struct([("subscription", _embedded_type(_SUB)),
                                                 ("assignment", _embedded_type(_ASG))]))))
    fields.append((ERROR, pa.string()))
    return pa.struct(fields), types, values


def offsets_type(record_types: Optional[Sequence[str]] = None) -> pa.StructType:
    """Arrow type of :func:`decode_offsets`: ``record_type``, ``type_name``, ``group``,
    ``topic``, ``partition``, ``key`` (every key field of the group coordinator's record
    types), ``value_version``, ``tombstone``, ``unknown`` (KIP-915), ``newer_than_known``,
    one struct per value schema (``OffsetCommitValue``, ``GroupMetadataValue``,
    ``ConsumerGroupMemberMetadataValue``, ...; the fields of all its versions, set on the
    rows of that type), ``members`` (a classic consumer group's decoded member
    subscriptions/assignments, parallel to ``GroupMetadataValue.members``), ``_error``.

    ``record_types`` (names as :func:`kcodec.offsets.record_types` gives them, e.g.
    ``["OffsetCommit", "GroupMetadata"]``): keep only those types' value structs (and
    ``members`` only with ``GroupMetadata``); every other field stays."""
    return _narrow_type(None if record_types is None else tuple(record_types))


@functools.lru_cache(maxsize=None)
def _narrow_type(names: Optional[Tuple[str, ...]]) -> pa.StructType:
    full, types, _ = _offsets_layout()
    if names is None:
        return full
    by_name = {info.name: info for info in types.values()}
    unknown = sorted(set(names) - set(by_name))
    if unknown:
        raise ValueError(f"unknown record types {unknown}; known: {sorted(by_name)}")
    all_values = {info.value for info in types.values()}
    keep = {by_name[x].value for x in names}
    if "LegacyOffsetCommit" in names and 1 in types:    # newer type-0 values are OffsetCommitValue
        keep.add(types[1].value)
    return pa.struct([f for f in full
                      if (f.name not in all_values or f.name in keep)
                      and (f.name != "members" or "GroupMetadata" in names)])


def _value_field(rtype: int, info: Any, vv: int) -> str:
    # Type 0 (the 0.8.2 offset key): value versions past the legacy schema are
    # OffsetCommitValue, as kcodec.offsets (and Kafka's pre-4.0 loader) read them.
    types = record_types()
    if rtype == 0 and vv > info.value_max and 1 in types:
        return types[1].value
    return info.value


def _emb(e: Any) -> Optional[Dict[str, Any]]:
    if e is None:
        return None
    return {"version": e.version, "parsed_version": e.parsed_version, "value": _py(e.value),
            "trailing": bytes(e.trailing) if e.trailing is not None else None, "error": e.error}


def _offsets_row(rec: Any) -> Dict[str, Any]:
    """One :class:`kcodec.offsets.OffsetsRecord` as a row of :func:`offsets_type`."""
    key = rec.key or {}
    d: Dict[str, Any] = {
        "record_type": rec.record_type, "type_name": rec.type_name, "group": rec.group_id,
        "topic": key.get("topic"), "partition": key.get("partition"), "key": _py(rec.key),
        "value_version": rec.value_version, "tombstone": rec.tombstone, "unknown": rec.unknown,
        "newer_than_known": rec.newer_than_known, ERROR: rec.error,
    }
    if rec.value is not None:
        info = record_types()[rec.record_type]
        d[_value_field(rec.record_type, info, rec.value_version)] = _py(rec.value)
    if rec.members is not None:
        d["members"] = [{"subscription": _emb(m.get("subscription")),
                         "assignment": _emb(m.get("assignment"))} for m in rec.members]
    return d


def _embedded(col: pa.Array, schema: str, etype: pa.StructType) -> Tuple[Optional[pa.Array], np.ndarray]:
    """Consumer-protocol bytes of classic members (one per member) as :func:`_embedded_type`
    rows, bulk-decoded; also which members need the exact path (errors, trailing bytes,
    versions above 3, where Kafka's reader rules apply)."""
    m = len(col)
    ver, has, nulls = _prefix16(col)
    bad = ~(has & (ver >= 0) & (ver <= _PROTOCOL_MAX))
    body_t = etype.field("value").type
    parts: List[Tuple[np.ndarray, pa.Array]] = []
    for v in range(_PROTOCOL_MAX + 1):
        idx = np.flatnonzero(~bad & (ver == v))
        if not len(idx):
            continue
        b = _ka.decode(schema, col.take(pa.array(idx)), v, skip=2)
        e = b.column(ERROR).is_valid().to_numpy(zero_copy_only=False)
        bad[idx[e]] = True
        parts.append((idx, conform(_struct_of(b), body_t)))
    if bad.any():
        return None, bad
    ver_a = pa.array(ver.astype(np.int16))
    arr = pa.StructArray.from_arrays(
        [ver_a, ver_a, _merge(m, parts, body_t), pa.repeat(pa.scalar(b"", pa.binary()), m), pa.nulls(m, pa.string())],
        fields=list(etype))
    return arr, bad


def _fast_type(rt: int, info: Any, idx: np.ndarray, key: pa.Array, value: pa.Array, vver: np.ndarray,
               vnull: np.ndarray, n: int, typ: pa.StructType, vt: pa.StructType,
               parts: Dict[str, List[Tuple[np.ndarray, pa.Array]]]) -> np.ndarray:
    """Bulk-decode the rows ``idx`` of record type ``rt``; add their columns to ``parts``
    and return which of them were decoded (the others take the exact path)."""
    whole = len(idx) == n
    kb = _ka.decode(info.key, key if whole else key.take(pa.array(idx)), 0, skip=2)
    good = ~kb.column(ERROR).is_valid().to_numpy(zero_copy_only=False)
    sub_v, sub_null = vver[idx], vnull[idx]
    vparts: List[Tuple[np.ndarray, pa.Array]] = []
    mparts: List[Tuple[np.ndarray, pa.Array]] = []
    for v in range(info.value_max + 1):
        sel = np.flatnonzero(good & ~sub_null & (sub_v == v))
        if not len(sel):
            continue
        vb = _ka.decode(info.value, value if whole and len(sel) == n else value.take(pa.array(idx[sel])),
                        v, skip=2)
        vbad = vb.column(ERROR).is_valid().to_numpy(zero_copy_only=False)
        if vbad.any():
            good[sel[vbad]] = False
            keep = np.flatnonzero(~vbad)
            sel, vb = sel[keep], vb.take(pa.array(keep))
        val = conform(_struct_of(vb), vt)
        if info.value == "GroupMetadataValue" and len(sel):
            mem = _members(vb)
            if mem is None:       # an embedded payload needs Kafka's exact reader rules
                good[sel] = False
                continue
            mparts.append((sel, mem))
        vparts.append((sel, val))
    gsel = np.flatnonzero(good)
    if not len(gsel):
        return good
    rows = idx[gsel]
    if len(gsel) != len(idx):
        kb = kb.take(pa.array(gsel))
    m = len(rows)
    knames = kb.schema.names
    parts["record_type"].append((rows, pa.array(np.full(m, rt, np.int16))))
    parts["type_name"].append((rows, pa.repeat(pa.scalar(info.name), m)))
    gcol = "group" if "group" in knames else "groupId" if "groupId" in knames else None
    if gcol is not None:
        parts["group"].append((rows, kb.column(gcol)))
    for f in ("topic", "partition"):
        if f in knames:
            parts[f].append((rows, kb.column(f).cast(typ.field(f).type)))
    parts["key"].append((rows, conform(_struct_of(kb), typ.field("key").type)))
    tomb = sub_null[gsel]
    parts["value_version"].append((rows, pa.array(vver[rows], mask=tomb)))
    parts["tombstone"].append((rows, pa.array(tomb)))
    f0 = pa.array(np.zeros(m, bool))
    parts["unknown"].append((rows, f0))
    parts["newer_than_known"].append((rows, f0))
    # value parts are indexed within idx: map them to rows of the batch
    pos = np.full(len(idx), -1, np.int64)
    pos[gsel] = np.arange(m)
    for name, vp in ((info.value, vparts), ("members", mparts)):
        for sel, arr in vp:
            keep = pos[sel] >= 0
            parts[name].append((rows[pos[sel][keep]], arr if keep.all() else arr.filter(pa.array(keep))))
    return good


def _members(vb: pa.RecordBatch) -> Optional[pa.Array]:
    """``members`` for GroupMetadataValue rows: the members' decoded subscription and
    assignment for protocol type "consumer" (null for other protocol types, as
    kcodec.offsets leaves them), or None when some member needs the exact path."""
    typ = offsets_type().field("members").type
    ms = vb.column("members")
    consumer = pa.compute.equal(vb.column("protocolType"), "consumer").fill_null(False).to_numpy(zero_copy_only=False)
    start, end = ms.offsets[0].as_py(), ms.offsets[-1].as_py()
    flat = ms.values.slice(start, end - start)
    et = typ.value_type
    subs, bad_s = _embedded(flat.field("subscription"), _SUB, et.field("subscription").type)
    if subs is None:
        return None
    asgs, bad_a = _embedded(flat.field("assignment"), _ASG, et.field("assignment").type)
    if asgs is None:
        return None
    offsets = pa.compute.subtract(ms.offsets, pa.scalar(start, ms.offsets.type))
    return pa.ListArray.from_arrays(offsets, pa.StructArray.from_arrays([subs, asgs], fields=list(et)),
                                    type=typ, mask=pa.array(~consumer))


def decode_offsets(key: Any, value: Any, *, mode: str = PERMISSIVE,
                   record_types: Optional[Sequence[str]] = None) -> pa.StructArray:
    """Decode ``__consumer_offsets`` key/value columns (Kafka types; see :func:`offsets_type`,
    also for ``record_types``: every row is decoded and checked, only the asked-for value
    structs are built)."""
    full, types, vtypes = _offsets_layout()
    typ = offsets_type(record_types)
    key, value = _binary(key), _binary(value)
    n = len(key)
    if len(value) != n:
        raise ValueError("key and value columns differ in length")
    rtype, khas, _ = _prefix16(key)
    vver, vhas, vnull = _prefix16(value)
    parts: Dict[str, List[Tuple[np.ndarray, pa.Array]]] = {f.name: [] for f in full}
    slow: List[np.ndarray] = []
    handled = np.zeros(n, bool)
    for rt, info in types.items():
        # Known record types at a known value version (or tombstones): bulk-decoded per
        # (type, version).  Type 0 (0.8.2) keeps the exact path: its values switch schema.
        if rt == 0:
            continue
        ok_v = vhas & (vver >= 0) & (vver <= info.value_max)
        idx = np.flatnonzero(khas & (rtype == rt) & (vnull | ok_v))
        if len(idx):
            handled[idx] = _fast_type(rt, info, idx, key, value, vver, vnull, n, full, vtypes[info.value], parts)
    slow.append(np.flatnonzero(~handled))
    sidx = np.sort(np.concatenate(slow)) if slow else np.zeros(0, np.int64)
    rows_py: List[Dict[str, Any]] = []
    if len(sidx):
        for i in sidx.tolist():
            k = key[i].as_py()
            v = value[i].as_py()
            if k is None and v is None:
                rows_py.append({})      # a null row stays null (not an error)
                continue
            rows_py.append(_offsets_row(decode_record(k, v, errors="report")))
    return _assemble(n, typ, parts, sidx, rows_py, mode, "__consumer_offsets record", key, value)


def spark_ready(arr: pa.Array) -> pa.Array:
    """:func:`kcodec.spark._types.for_spark` (re-exported for the UDF wrappers)."""
    return for_spark(arr)
