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

from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Union

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


def offsets_schema(record_types: Any = None) -> Any:
    """The Spark type :func:`from_consumer_offsets` returns (``record_types``: as its option)."""
    return _spark_struct(K.offsets_type(record_types))


def kafka_message_schema(name: str, version: int, newer: str = "error") -> Any:
    """The Spark type :func:`from_kafka_message` returns for ``name`` at ``version``."""
    return _spark_struct(K.message_type(name, version, newer))


def _offsets_udf(mode: str, record_types: Any = None) -> Any:
    rts = K._selected(record_types)     # checks the names here, on the driver

    def f(key: pa.Array, value: pa.Array) -> pa.Array:
        # built in Spark's types as it is decoded (no cast of the result afterwards)
        return K.decode_offsets(key, value, mode=mode, record_types=rts, spark=True)
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
    source) with :mod:`kcodec.offsets`' semantics.  The struct's fields:

    - ``record_type`` (smallint: the key's type prefix, 1 offset commit, 2 group metadata,
      3-8 KIP-848 consumer groups, 10-15 share groups, 16 regular expressions, 17-23
      streams groups; names in :func:`kcodec.offsets.record_types`), ``group``, ``topic``
      and ``partition`` (from the key), ``key`` (the other key fields of the selected
      types, such as ``memberId``; absent when they have none), ``value_version``,
      ``tombstone``, ``unknown`` (KIP-915: a record type kcodec does not know is data,
      not an error), ``newer_than_known``;
    - one struct per selected record type's value (``OffsetCommitValue``,
      ``GroupMetadataValue``, ``ConsumerGroupMemberMetadataValue``, ...: the fields of
      all its versions, set on the rows of that type) and, with ``GroupMetadata``,
      ``members``: a classic consumer group's members' decoded subscriptions and
      assignments, parallel to ``GroupMetadataValue.members``;
    - ``raw_value``: the value bytes of a row whose value is in no struct of this
      result (a type not selected, an unknown type, a value that did not decode);
    - ``_error``.

    ``options["record_types"]``: which types get a value struct, as names
    (``["OffsetCommit", "ConsumerGroupMemberMetadata"]``), or ``"all"``.  Default: the
    classic group coordinator's ``LegacyOffsetCommit``, ``OffsetCommit`` and
    ``GroupMetadata``, what ``__consumer_offsets`` mostly holds.  Every struct is a set
    of Arrow buffers as long as the batch that Spark moves and converts whether a row
    uses it or not, so the narrow default is several times faster than ``"all"``.  No
    row is ever left out: a row of another type is still decoded and checked, and comes
    with its type, group, topic/partition, ``raw_value`` and ``_error``
    (``from_kafka_message("r.raw_value", ...)`` or ``record_types="all"`` decodes it).

    ``options["mode"]``: ``"PERMISSIVE"`` (default) or ``"FAILFAST"``."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
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
    ``struct<value: binary, _error: string>``, ``value`` null and ``_error`` saying why on
    a bad row.  A null row and a row :func:`from_kafka_message` failed on (its ``_error``
    set) are bad rows: never encoded as a default message."""
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
    ``options`` as for the column functions (one mode for all; ``record_types`` for
    ``kcodec_consumer_offsets``)."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    spark.udf.register("kcodec_consumer_offsets", _offsets_udf(mode, rts))
    spark.udf.register("kcodec_consumer_subscription", _protocol_udf(K._SUB, mode))
    spark.udf.register("kcodec_consumer_assignment", _protocol_udf(K._ASG, mode))
    for name, version in messages:
        spark.udf.register(f"kcodec_{name}_v{version}", _message_udf(name, version, "error", mode))
