"""Arrow <-> Spark types, in one place.

kcodec's Arrow decoder (:mod:`kcodec.arrow`) keeps Kafka's types exactly: ``uint16`` /
``uint32`` as unsigned Arrow integers and ``uuid`` as ``fixed_size_binary(16)``.  Spark has
neither unsigned integers nor fixed-size binary, so every array leaving kcodec for Spark
has the widened type (``uint16`` -> ``int32``, ``uint32`` -> ``int64``,
``fixed_size_binary`` -> ``binary``, large variants -> regular, list items named
``element``), through vectorised ``pyarrow`` casts of the leaves, never a loop over rows.

The same shaping plans (:func:`shaper`, :func:`shape`) also give every version of a
message the columns of the union of its versions (:func:`union_type`): the kernels shape
each decoder pass straight into the type they return, Kafka's or Spark's, in one rebuild.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["spark_arrow_type", "spark_type", "for_spark", "union_type", "shaper", "shape", "shape_columns"]


_BY_ID: "dict[tuple[int, bool], tuple[pa.DataType, pa.DataType]]" = {}
_RECENT: "list[pa.DataType]" = []


def _spark_arrow_type_cached(t: pa.DataType, nullable_top: bool) -> pa.DataType:
    # Hashing a deep Arrow type costs tens of microseconds: key by identity (the
    # kernels' types are the same objects every batch) and keep the type alive.
    hit = _BY_ID.get((id(t), nullable_top))
    if hit is not None and hit[0] is t:
        return hit[1]
    r = spark_arrow_type(t, nullable_top)
    if len(_BY_ID) > 1024:
        _BY_ID.clear()
    _BY_ID[(id(t), nullable_top)] = (t, r)
    return r


def spark_arrow_type(t: pa.DataType, nullable_top: bool = False) -> pa.DataType:
    """The Arrow type Spark expects for ``t``: the same values, widened where Spark lacks
    the type, list items named ``element``, nullability kept (``nullable_top``: the
    top-level struct's fields made nullable, as :func:`spark_type` does)."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, spark_arrow_type(f.type), nullable_top or f.nullable) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(pa.field("element", spark_arrow_type(t.value_type), t.value_field.nullable))
    if t == pa.uint8():
        return pa.int16()
    if t == pa.uint16():
        return pa.int32()
    if t in (pa.uint32(), pa.uint64()):
        return pa.int64()
    if pa.types.is_fixed_size_binary(t) or pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.string()
    return t


def spark_type(t: pa.DataType, nullable_top: bool = False) -> Any:
    """The Spark SQL type of Arrow type ``t`` (through :func:`spark_arrow_type`).
    ``nullable_top``: make the top-level struct's fields nullable (a bad row nulls them)."""
    from pyspark.sql import types as T
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, spark_type(f.type), nullable_top or f.nullable) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(spark_type(t.value_type), t.value_field.nullable)
    t = spark_arrow_type(t)
    simple = {pa.int8(): T.ByteType(), pa.int16(): T.ShortType(), pa.int32(): T.IntegerType(),
              pa.int64(): T.LongType(), pa.float32(): T.FloatType(), pa.float64(): T.DoubleType(),
              pa.bool_(): T.BooleanType(), pa.string(): T.StringType(), pa.binary(): T.BinaryType()}
    if t in simple:
        return simple[t]
    if pa.types.is_timestamp(t):
        return T.TimestampType()
    raise TypeError(f"no Spark type for Arrow {t}")


def for_spark(arr: pa.Array, nullable_top: bool = True, arrow_type: "pa.DataType | None" = None) -> pa.Array:
    """``arr`` as Spark expects it (:func:`spark_arrow_type`): leaves cast, structs and
    lists rebuilt around them; vectorised.  (Arrow's cast cannot do this: it refuses a
    non-nullable field holding nulls, which a nested field does under a null parent.)"""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    # arrow_type: the (equal) type object the kernel built ``arr`` from, for the cache
    src = arrow_type if arrow_type is not None else _known(arr.type)
    target = _spark_arrow_type_cached(src, nullable_top)
    return shape(arr, shaper(src, target))


def _known(t: pa.DataType) -> pa.DataType:
    """One object per distinct type among those seen last (``arr.type`` is a new object on
    every access; the shaping caches key by identity)."""
    for have in _RECENT:
        if have == t:
            return have
    _RECENT.insert(0, t)
    del _RECENT[8:]
    return t


# ------------------------------------------------------------------ shaping plans
#
# A plan turns an array of one Arrow type into another with the same values: fields the
# source lacks become nulls (or, for unknown tagged fields, empty lists), fields are
# reordered and renamed, leaves cast.  Plans are built once per (source, target) pair of
# type objects and kept, so a batch costs one rebuild per node that differs and nothing
# for subtrees that already match.

_PLANS: "dict[tuple[int, int], tuple[pa.DataType, pa.DataType, Any]]" = {}


def shaper(src: pa.DataType, dst: pa.DataType) -> Any:
    """The plan (see :func:`shape`) from ``src`` to ``dst``, cached by the type objects'
    identity (pass the same objects every batch)."""
    k = (id(src), id(dst))
    hit = _PLANS.get(k)
    if hit is not None and hit[0] is src and hit[1] is dst:
        return hit[2]
    plan = _plan(src, dst, top=True)
    if len(_PLANS) > 4096:
        _PLANS.clear()
        _NULLS.clear()      # its keys name plans by id
    _PLANS[k] = (src, dst, plan)
    return plan


def _plan(src: pa.DataType, dst: pa.DataType, top: bool = False) -> Any:
    if not top and src == dst:
        return None
    if pa.types.is_struct(dst) and pa.types.is_struct(src):
        have = {src.field(i).name: i for i in range(src.num_fields)}
        kids = []
        for f in dst:
            i = have.get(f.name, -1)
            if i >= 0:
                kids.append((i, _plan(src.field(i).type, f.type)))
            else:
                kids.append((-2 if f.name == UNKNOWN_TAGS else -1, None))
        return ("struct", dst, list(dst), kids)
    if pa.types.is_list(dst) and pa.types.is_list(src):
        return ("list", dst, _plan(src.value_type, dst.value_type))
    return ("cast", dst)


def shape(arr: pa.Array, plan: Any) -> pa.Array:
    """``arr`` rebuilt by ``plan`` (from :func:`shaper`)."""
    if plan is None:
        return arr
    kind, dst = plan[0], plan[1]
    n = len(arr)
    nc = arr.null_count
    if n and nc == n:        # e.g. the value struct of a record type the batch lacks
        return nulls(n, dst, (id(plan),))
    if kind == "cast":
        return arr.cast(dst)
    mask = arr.is_null() if nc else None
    if kind == "list":
        return pa.ListArray.from_arrays(arr.offsets, shape(arr.values, plan[2]), type=dst, mask=mask)
    return pa.StructArray.from_arrays(_kids(arr.field, n, plan), fields=plan[2], mask=mask)


def shape_columns(batch: pa.RecordBatch, plan: Any, valid: "np.ndarray | None" = None) -> pa.StructArray:
    """The columns of ``batch`` (laid out as the plan's source struct) as one struct array
    shaped by ``plan``; ``valid``: the rows that are not null."""
    n = batch.num_rows
    mask = None if valid is None or valid.all() else pa.Array.from_buffers(
        pa.bool_(), n, [None, pa.py_buffer(np.packbits(~valid, bitorder="little"))])
    return pa.StructArray.from_arrays(_kids(batch.column, n, plan), fields=plan[2], mask=mask)


def _kids(child: Any, n: int, plan: Any) -> "list[pa.Array]":
    out = []
    for (i, sub), f in zip(plan[3], plan[2]):
        if i >= 0:
            out.append(shape(child(i), sub))
        elif i == -2:
            out.append(_no_tags(n, f.type, (id(plan), f.name)))
        else:
            out.append(nulls(n, f.type, (id(plan), f.name)))
    return out


_NULLS: "dict[tuple[Any, ...], pa.Array]" = {}


def nulls(n: int, t: pa.DataType, key: "tuple[Any, ...] | None" = None) -> pa.Array:
    """``pa.nulls(n, t)``; with ``key`` (naming ``t`` cheaply: hashing a deep Arrow type is
    itself slow, and pyarrow hands out a new type object on every access) kept, as
    building an all-null array of a deep struct type costs milliseconds and every batch
    needs the same ones (arrays are immutable)."""
    if key is None:
        return pa.nulls(n, t)
    k = (n,) + key
    a = _NULLS.get(k)
    if a is None:
        if len(_NULLS) > 1024:
            _NULLS.clear()
        a = _NULLS[k] = pa.nulls(n, t)
    return a


def union_type(types: "list[pa.StructType]") -> pa.StructType:
    """One struct type holding every field of ``types`` (first type's order, then fields
    only older versions have), recursively; used to give all versions of a message one
    column type.  Fields absent from some version are nullable."""
    names: "dict[str, list[pa.Field]]" = {}
    for t in types:
        for f in t:
            names.setdefault(f.name, []).append(f)
    out = []
    for name, fs in names.items():
        ft = [f.type for f in fs]
        if all(pa.types.is_struct(x) for x in ft):
            typ: pa.DataType = union_type(ft)
        elif all(pa.types.is_list(x) and pa.types.is_struct(x.value_type) for x in ft):
            typ = pa.list_(pa.field("item", union_type([x.value_type for x in ft]),
                                    any(x.value_field.nullable for x in ft)))
        else:
            typ = ft[0]
        out.append(pa.field(name, typ, nullable=len(fs) < len(types) or any(f.nullable for f in fs)))
    return pa.struct(out)


UNKNOWN_TAGS = "_unknown_tagged_fields"


def _no_tags(n: int, t: pa.DataType, key: "tuple[Any, ...]") -> pa.Array:
    """Unknown tagged fields of rows from a version without them: an empty list, never
    null (a version without tagged fields has none), so all paths give the same rows."""
    k = (n, "no-tags") + key
    got = _NULLS.get(k)
    if got is None:
        if len(_NULLS) > 1024:
            _NULLS.clear()
        # from buffers: pa.array() would make pyarrow import pandas in a fresh worker
        got = _NULLS[k] = pa.ListArray.from_arrays(
            pa.Array.from_buffers(pa.int32(), n + 1, [None, pa.py_buffer(np.zeros(n + 1, np.int32))]),
            pa.nulls(0, t.value_type), type=t)
    return got
