"""Spark column functions for Kafka's metadata, shaped like Spark's ``from_avro`` /
``from_protobuf``: a ``Column`` in, a typed struct ``Column`` out, an ``options`` dict.

Each runs as an Arrow UDF (``pyspark.sql.functions.arrow_udf``): Spark hands kcodec whole
Arrow batches, :mod:`kcodec.spark._kernels` decodes them with the C bulk decoder and
hands Arrow back (binary and large-binary input both work).

``options["mode"]``: ``"PERMISSIVE"`` (default for decoding) sets a bad row's fields to
null and says why in its ``_error`` field (message, version, field path, byte offset);
``"FAILFAST"`` fails the task with the row's context.  No row is ever dropped.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Union

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import Column

from . import _kernels as K
from ._types import for_spark, spark_type

__all__ = ["from_consumer_offsets", "from_consumer_subscription", "from_consumer_assignment",
           "from_kafka_message", "to_kafka_message", "register", "offsets_schema",
           "kafka_message_schema"]

ColumnOrName = Union["Column", str]


def _arrow_udf(fn: Callable[..., pa.Array], return_type: Any, nargs: int) -> Any:
    from pyspark.sql.functions import arrow_udf
    if nargs == 1:
        def one(a: pa.Array) -> pa.Array:
            return fn(a)
        return arrow_udf(one, return_type)

    def two(a: pa.Array, b: pa.Array) -> pa.Array:
        return fn(a, b)
    return arrow_udf(two, return_type)


def _spark_struct(t: pa.StructType) -> Any:
    return spark_type(t, nullable_top=True)


def offsets_schema(record_types: Optional[Sequence[str]] = None) -> Any:
    """The Spark type :func:`from_consumer_offsets` returns (``record_types``: as its option)."""
    return _spark_struct(K.offsets_type(record_types))


def kafka_message_schema(name: str, version: int, newer: str = "error") -> Any:
    """The Spark type :func:`from_kafka_message` returns for ``name`` at ``version``."""
    return _spark_struct(K.message_type(name, version, newer))


def _offsets_udf(mode: str, record_types: Optional[Sequence[str]] = None) -> Any:
    rts = None if record_types is None else tuple(record_types)
    typ = K.offsets_type(rts)           # checks the names here, on the driver

    def f(key: pa.Array, value: pa.Array) -> pa.Array:
        return for_spark(K.decode_offsets(key, value, mode=mode, record_types=rts), arrow_type=typ)
    return _arrow_udf(f, offsets_schema(rts), 2)


def _protocol_udf(schema: str, mode: str) -> Any:
    def f(col: pa.Array) -> pa.Array:
        return for_spark(K.decode_protocol(col, schema, mode=mode), arrow_type=K.protocol_type(schema))
    return _arrow_udf(f, _spark_struct(K.protocol_type(schema)), 1)


def _message_udf(name: str, version: int, newer: str, mode: str) -> Any:
    def f(col: pa.Array) -> pa.Array:
        return for_spark(K.decode_message(col, name, version, newer=newer, mode=mode))
    return _arrow_udf(f, kafka_message_schema(name, version, newer), 1)


def from_consumer_offsets(key: ColumnOrName, value: ColumnOrName,
                          options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode ``__consumer_offsets`` records (the ``key``/``value`` columns of Spark's Kafka
    source) with :mod:`kcodec.offsets`' semantics: record type, group, topic, partition,
    the key, one struct per value schema (offset commits, classic group metadata with
    its members' decoded subscriptions/assignments in ``members``, the KIP-848, share
    and streams group records), ``tombstone``, ``unknown`` record types as data
    (KIP-915), ``newer_than_known``, ``_error``.

    ``options["record_types"]`` (e.g. ``["OffsetCommit"]``, names as
    :func:`kcodec.offsets.record_types` gives them): the result holds only those types'
    value structs, a much narrower column that Spark moves far faster.  Rows of other
    types stay, with their record type, group, key and ``_error``, and are still
    checked; only their value struct is left out."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    if isinstance(rts, str):
        rts = [rts]
    return _offsets_udf(mode, rts)(key, value)


def from_consumer_subscription(col: ColumnOrName, options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode version-prefixed ``ConsumerProtocolSubscription`` bytes (a classic member's
    JoinGroup metadata): ``version``, topics, userData, ownedPartitions, generationId,
    rackId, ``_error``; prefixes above 3 are read with the v3 layout, as Kafka does."""
    mode, rest = K.check_mode(options)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _protocol_udf(K._SUB, mode)(col)


def from_consumer_assignment(col: ColumnOrName, options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode version-prefixed ``ConsumerProtocolAssignment`` bytes (SyncGroup)."""
    mode, rest = K.check_mode(options)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _protocol_udf(K._ASG, mode)(col)


def from_kafka_message(col: ColumnOrName, name: str, version: int,
                       options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode a binary column as any shipped message ``name`` at ``version`` (the body, no
    framing).  The struct's fields are the spec's (struct per struct, arrays, nullable
    where the version is, tagged fields, ``_unknown_tagged_fields`` as
    ``array<struct<tag:int,data:binary>>``) plus ``_error``.  ``options["newer"]``:
    ``"error"`` (default) or ``"latest"`` for a version above the newest known."""
    mode, rest = K.check_mode(options)
    newer = rest.pop("newer", "error")
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    K.message_type(name, version, newer)      # fail now, on the driver, for a bad name/version
    return _message_udf(name, version, newer, mode)(col)


def to_kafka_message(col: ColumnOrName, name: str, version: int,
                     options: Optional[Dict[str, Any]] = None) -> Any:
    """Encode a struct column (fields named as in :func:`from_kafka_message`; missing
    fields take their default) to message ``name``'s bytes at ``version``.  Default
    ``mode`` is FAILFAST (a row that does not encode fails the task); PERMISSIVE gives
    ``struct<value: binary, _error: string>``."""
    mode, rest = K.check_mode(options, default=K.FAILFAST)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    K.message_type(name, version)
    from pyspark.sql import types as T
    rt: Any = T.BinaryType() if mode == K.FAILFAST else T.StructType(
        [T.StructField("value", T.BinaryType()), T.StructField(K.ERROR, T.StringType())])

    def f(structs: pa.Array) -> pa.Array:
        return K.encode_message(structs, name, version, mode=mode)
    return _arrow_udf(f, rt, 1)(col)


def register(spark: Any, messages: Any = (), *, options: Optional[Dict[str, Any]] = None) -> None:
    """Make the functions callable from Spark SQL:

    ``kcodec_consumer_offsets(key, value)``, ``kcodec_consumer_subscription(bytes)``,
    ``kcodec_consumer_assignment(bytes)``; and for each ``(name, version)`` of
    ``messages``, ``kcodec_<name>_v<version>(bytes)`` (e.g. ``kcodec_OffsetCommitValue_v4``).
    ``options`` as for the column functions (one mode for all)."""
    mode, rest = K.check_mode(options)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    spark.udf.register("kcodec_consumer_offsets", _offsets_udf(mode))
    spark.udf.register("kcodec_consumer_subscription", _protocol_udf(K._SUB, mode))
    spark.udf.register("kcodec_consumer_assignment", _protocol_udf(K._ASG, mode))
    for name, version in messages:
        spark.udf.register(f"kcodec_{name}_v{version}", _message_udf(name, version, "error", mode))
