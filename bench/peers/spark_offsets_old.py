"""``kcodec.spark._kernels.decode_offsets`` as it was before the one-C-call kernel
(main at dad48bc): one ``kcodec.arrow.decode`` pass per (record type, value version) and
per embedded consumer-protocol version, each shaped into the union of the message's
versions (and Spark's types) by pyarrow, combined with NumPy masks.  Kept as the peer of
``bench/bench_spark_kernels.py``'s in-process A/B; not part of the package.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
import pyarrow as pa

from kcodec import arrow as _ka
from kcodec.offsets import decode_record
from kcodec.offsets import record_types
from kcodec.offsets import record_types as _offsets_record_types
from kcodec.spark._kernels import (ERROR, PERMISSIVE, _ASG, _GROUP_KEYS, _PROTOCOL_MAX, _SUB, _TOP_KEYS, _binary,
                                   _by_version, _coalesce, _finish, _offsets_row, _offsets_type, _prefix16,
                                   _present, _result_types, _selected, _top_fields, _valid, _version_keep,
                                   _with_nulls, fields_option)
from kcodec.spark._types import nulls, shape, shape_columns, shaper

__all__ = ["decode_offsets"]


_EMPTY_BYTES: Dict[int, pa.Array] = {}


def _embedded(col: pa.Array, consumer: np.ndarray, schema: str, etype: "_Embedded") -> Tuple[pa.Array, np.ndarray]:
    """Consumer-protocol bytes of classic members (one per member; ``consumer``: the members
    of consumer groups, the only ones decoded) as ``etype`` rows (:func:`_embedded_type`,
    or its Spark form), bulk-decoded; also which members need the exact path (errors,
    trailing bytes, versions above 3, where Kafka's reader rules apply)."""
    ver, has, _ = _prefix16(col)
    ok = consumer & has & (ver >= 0) & (ver <= _PROTOCOL_MAX)
    body, bad = _by_version(schema, col, ver, ok, range(_PROTOCOL_MAX + 1), etype.body)
    m = len(col)
    ver_a = _ka.from_numpy(ver)
    empty = _EMPTY_BYTES.get(m)
    if empty is None:
        if len(_EMPTY_BYTES) > 64:
            _EMPTY_BYTES.clear()
        empty = _EMPTY_BYTES[m] = pa.repeat(pa.scalar(b"", pa.binary()), m)
    arr = pa.StructArray.from_arrays([ver_a, ver_a, body, empty, nulls(m, pa.string(), ("emb-error",))],
                                     fields=etype.fields)
    return arr, (consumer & ~ok) | bad


class _Embedded(NamedTuple):
    fields: List[pa.Field]          # of an _embedded_type (or its Spark form)
    body: pa.StructType             # its "value"


class _Members(NamedTuple):
    """The parts of a ``members`` type, as objects kept for the shaping caches (pyarrow
    hands out a new type object on every access)."""
    typ: pa.DataType
    item: List[pa.Field]
    subscription: _Embedded
    assignment: _Embedded


def _members_parts(typ: pa.DataType) -> _Members:
    item = typ.value_type

    def emb(name: str) -> _Embedded:
        t = item.field(name).type
        return _Embedded(list(t), t.field("value").type)
    return _Members(typ, list(item), emb("subscription"), emb("assignment"))


def _members(vb: pa.RecordBatch, mt: _Members) -> Tuple[pa.Array, np.ndarray]:
    """``members`` (of type ``mt.typ``: :func:`_members_type` or its Spark form) for a
    full-length GroupMetadataValue batch: the members' decoded subscription and assignment
    for protocol type "consumer" (null for other protocol types, as kcodec.offsets leaves
    them), and which rows need the exact path.  Only the members' own rows are decoded."""
    ms = vb.column("members")
    n = len(ms)
    consumer = _ka.to_numpy(pa.compute.equal(vb.column("protocolType"), "consumer").fill_null(False))
    consumer &= _valid(ms)
    offs = _ka.to_numpy(ms.offsets)
    start = int(offs[0])
    flat = ms.values.slice(start, int(offs[-1]) - start)
    member_row = np.repeat(np.arange(n), np.diff(offs))
    cm = consumer[member_row]
    subs, bad_s = _embedded(flat.field("subscription"), cm, _SUB, mt.subscription)
    asgs, bad_a = _embedded(flat.field("assignment"), cm, _ASG, mt.assignment)
    bad_rows = np.zeros(n, bool)
    bad_rows[member_row[bad_s | bad_a]] = True
    rel = offs - start if start else offs
    arr = pa.ListArray.from_arrays(_ka.from_numpy(rel.astype(np.int32, copy=False)),
                                   pa.StructArray.from_arrays([subs, asgs], fields=mt.item),
                                   type=mt.typ, mask=_ka.from_numpy(~consumer))
    return arr, bad_rows


class _Out(NamedTuple):
    """What :func:`decode_offsets` builds for one selection, computed once: the result
    type (Kafka's types, or Spark's with ``spark=True``; projected to ``fields``), the
    unprojected type (the exact path's rows), each result field's type by name, and what
    each record type's key and value passes keep."""
    typ: pa.StructType
    full: pa.StructType
    fields: Dict[str, pa.DataType]
    members: Optional[_Members]             # of the unprojected type, when members are returned
    keys: Dict[str, Optional[Tuple[str, ...]]]      # key schema -> its top-level fields kept
    values: Dict[str, Optional[Tuple[str, ...]]]    # value schema -> ... (() : checked only)
    full_names: frozenset                           # the unprojected type's field names


def _result_name(f: str) -> str:
    """Where a key field goes in the result."""
    return "group" if f in _GROUP_KEYS else f if f in _TOP_KEYS else "key." + f


@functools.lru_cache(maxsize=None)
def _offsets_out(names: Tuple[str, ...], spark: bool, fields: Optional[Tuple[str, ...]] = None) -> _Out:
    full, typ, ftypes = _result_types(_offsets_type(names), spark, fields)
    want = set(ftypes)
    if "key" in ftypes:
        want |= {"key." + g.name for g in ftypes["key"]}
    keys: Dict[str, Optional[Tuple[str, ...]]] = {}
    values: Dict[str, Optional[Tuple[str, ...]]] = {}
    for info in record_types().values():
        kt = _ka.arrow_type(info.key, 0)
        keys[info.key] = None if fields is None else tuple(f.name for f in kt if _result_name(f.name) in want)
        vname = info.value
        if vname not in ftypes:
            keep: Optional[Tuple[str, ...]] = ()       # decoded to check it only
        elif fields is None:
            keep = None
        else:
            keep = _top_fields(ftypes[vname])
        if vname == "GroupMetadataValue" and "members" in ftypes and keep is not None:
            keep = tuple(sorted(set(keep) | {"members", "protocolType"}))
        values[vname] = keep
    members = _members_parts({f.name: f.type for f in full}["members"]) if "members" in ftypes else None
    return _Out(typ, full, ftypes, members, keys, values, frozenset(full.names))


def decode_offsets(key: Any, value: Any, *, mode: str = PERMISSIVE, record_types: Any = None,
                   fields: Any = None, spark: bool = False) -> pa.StructArray:
    """Decode ``__consumer_offsets`` key/value columns (Kafka types; see :func:`offsets_type`,
    also for ``record_types``; ``spark=True``: built directly in the types Spark takes,
    :func:`kcodec.spark._types.spark_arrow_type` of it, as the column function returns).
    ``fields``: dotted paths of the fields to return (:func:`project_type`); the C
    decoder then builds only the top-level fields of each message they need (every row is
    still decoded and checked).

    Known record types at a known value version (and tombstones) are decoded by the C
    bulk decoder, one pass per (type, version) over the whole batch, each reading only its
    own rows in place; the columns of the result are those passes' full-length arrays,
    combined where several types share one (``group``).  Type 0 (0.8.2; its values switch
    schema), unknown types, version-prefix anomalies and rows the bulk decoder flags take
    :func:`kcodec.offsets.decode_record`, whose answers and error texts are the reference."""
    out = _offsets_out(_selected(record_types), spark, fields_option(fields))
    typ, ftypes = out.typ, out.fields
    types = _offsets_record_types()
    key, value = _binary(key), _binary(value)
    n = len(key)
    if len(value) != n:
        raise ValueError("key and value columns differ in length")
    rtype, khas, knull = _prefix16(key)
    vver, vhas, vnull = _prefix16(value)
    good = np.zeros(n, bool)          # rows the bulk path decoded
    raw = np.zeros(n, bool)           # ... whose value bytes go to raw_value (type not selected)
    pieces: Dict[str, List[pa.Array]] = {}
    for rt in _present(rtype, khas):
        info = types.get(rt)
        if info is None or rt == 0:
            continue
        ok_v = vhas & (vver >= 0) & (vver <= info.value_max)
        rows = khas & (rtype == rt) & (vnull | ok_v)
        if not rows.any():
            continue
        kb = _ka.decode(info.key, key, 0, skip=2, select=None if rows.all() else rows, fields=out.keys[info.key])
        kerr = kb.column(ERROR)
        if kerr.null_count < n:
            rows &= ~_valid(kerr)
        vf = info.value if info.value in ftypes else None
        vkeep = out.values[info.value]
        vals: List[pa.Array] = []
        has_value = rows & ~vnull
        for v in _present(vver, has_value):
            sel = has_value & (vver == v)
            vk, vt = _version_keep(info.value, v, vkeep)
            vb = _ka.decode(info.value, value, v, skip=2, select=None if sel.all() else sel, fields=vk)
            verr = vb.column(ERROR)
            if verr.null_count < n:
                e = _valid(verr)
                rows &= ~e
                sel &= ~e
            if info.value == "GroupMetadataValue" and out.members is not None:
                mem, mbad = _members(vb, out.members)
                rows &= ~mbad           # an embedded payload needs Kafka's exact reader rules
                mt = ftypes["members"]
                pieces.setdefault("members", []).append(
                    shape(mem, shaper(out.members.typ, mt)) if mt is not out.members.typ else mem)
            if vf is None:
                continue                # decoded to check it; the bytes go to raw_value
            vals.append(shape_columns(vb, shaper(vt, ftypes[vf]), sel))
        if vf is not None and vals:
            pieces.setdefault(vf, []).append(_coalesce(vals, n, ftypes[vf], ()))
        elif info.value not in out.full_names:
            raw |= rows & ~vnull        # (a projection leaves raw_value as the full result has it)
        good |= rows
        for f in kb.schema.names:
            if f != ERROR:
                pieces.setdefault(_result_name(f), []).append(kb.column(f))
    cols: Dict[str, pa.Array] = {}
    for f in typ:
        if f.name == "key":
            kt = f.type
            kids = [_coalesce(pieces.get("key." + g.name, []), n, g.type, (id(typ), "key", g.name)) for g in kt]
            kids = [k if k.type == g.type else k.cast(g.type) for k, g in zip(kids, kt)]
            cols["key"] = pa.StructArray.from_arrays(kids, fields=list(kt), mask=_ka.from_numpy(~good))
        elif f.name in pieces:
            cols[f.name] = _coalesce(pieces[f.name], n, f.type, (id(typ), f.name))
    if "record_type" in ftypes:
        cols["record_type"] = _with_nulls(_ka.from_numpy(rtype), good)
    if "value_version" in ftypes:
        cols["value_version"] = _with_nulls(_ka.from_numpy(vver), good & ~vnull)
    if "tombstone" in ftypes:
        cols["tombstone"] = _with_nulls(_ka.from_numpy(vnull), good)
    if "unknown" in ftypes or "newer_than_known" in ftypes:
        no = _with_nulls(_ka.from_numpy(np.zeros(n, bool)), good)
        cols["unknown"] = cols["newer_than_known"] = no
    if raw.any() and "raw_value" in ftypes:
        cols["raw_value"] = pa.compute.if_else(_ka.from_numpy(raw), value.cast(pa.binary()),
                                               pa.scalar(None, pa.binary()))
    # a row null in both key and value stays null (not an error)
    sidx = np.flatnonzero(~good & ~(knull & vnull))
    rows_py: List[Dict[str, Any]] = []
    for i in sidx.tolist():
        rows_py.append(_offsets_row(decode_record(key[i].as_py(), value[i].as_py(), errors="report"), out.full))
    return _finish(typ, cols, n, sidx, rows_py, mode, "__consumer_offsets record", key, value,
                   row_type=out.full)
