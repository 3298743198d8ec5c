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
           "from_metadata_record", "from_streams_subscription", "from_streams_assignment",
           "from_kafka_message", "to_kafka_message", "register", "offsets_schema", "metadata_schema",
           "streams_schema", "kafka_message_schema"]

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


def offsets_schema(record_types: Any = None, fields: Any = None) -> Any:
    """The Spark type :func:`from_consumer_offsets` returns (``record_types``, ``fields``:
    as its options)."""
    return _spark_struct(K.project_type(K.offsets_type(record_types), K.fields_option(fields)))


def metadata_schema(record_types: Any = None, fields: Any = None) -> Any:
    """The Spark type :func:`from_metadata_record` returns (``record_types``, ``fields``:
    as its options)."""
    return _spark_struct(K.project_type(K.metadata_type(record_types), K.fields_option(fields)))


def streams_schema(kind: str) -> Any:
    """The Spark type :func:`from_streams_subscription` (``kind="subscription"``) or
    :func:`from_streams_assignment` (``"assignment"``) returns."""
    return _spark_struct(K.streams_type(kind))


def kafka_message_schema(name: str, version: int, newer: str = "error") -> Any:
    """The Spark type :func:`from_kafka_message` returns for ``name`` at ``version``."""
    return _spark_struct(K.message_type(name, version, newer))


def _offsets_udf(mode: str, record_types: Any = None, fields: Any = None) -> Any:
    rts = K._selected(record_types)     # checks the names and paths here, on the driver
    fs = K.fields_option(fields)
    schema = offsets_schema(rts, fs)

    def f(key: pa.Array, value: pa.Array) -> pa.Array:
        # built in Spark's types as it is decoded (no cast of the result afterwards)
        return K.decode_offsets(key, value, mode=mode, record_types=rts, fields=fs, spark=True)
    return _arrow_udf(f, schema, 2)


def _metadata_udf(mode: str, record_types: Any = None, fields: Any = None) -> Any:
    rts = K.metadata_selected(record_types)
    fs = K.fields_option(fields)
    schema = metadata_schema(rts, fs)

    def f(value: pa.Array) -> pa.Array:
        return K.decode_metadata(value, mode=mode, record_types=rts, fields=fs, spark=True)
    return _arrow_udf(f, schema, 1)


def _streams_udf(kind: str, mode: str) -> Any:
    schema = streams_schema(kind)

    def f(col: pa.Array) -> pa.Array:
        return for_spark(K.decode_streams(col, kind, mode=mode), arrow_type=K.streams_type(kind))
    return _arrow_udf(f, schema, 1)


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
      assignments, parallel to ``GroupMetadataValue.members`` (read with Kafka's
      consumer protocol in every worker, whatever decoders the driver registered with
      :func:`kcodec.offsets.register_protocol_decoder`; the Streams ``userData`` in
      them decodes with :func:`from_streams_subscription` / :func:`from_streams_assignment`);
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

    ``options["fields"]``: only these fields, as dotted paths into the struct above
    (``["group", "topic", "partition", "OffsetCommitValue.offset",
    "OffsetCommitValue.commitTimestamp"]``; a path through an array names its items'
    field, ``"GroupMetadataValue.members.memberId"``), plus ``_error``.  The C decoder
    then builds only those fields of each message (every row is still decoded and
    checked), and Spark moves only them: the fastest way to read a few fields.  An
    unknown path fails at once, naming the valid ones.

    ``options["mode"]``: ``"PERMISSIVE"`` (default) or ``"FAILFAST"``."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    fields = rest.pop("fields", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _offsets_udf(mode, rts, fields)(key, value)


def from_metadata_record(value: ColumnOrName, options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode ``__cluster_metadata`` record values (KRaft's MetadataRecordSerde frame:
    frame version, API key, record version, then the record; the ``value`` column of
    :func:`kcodec.spark.read_log` over a ``__cluster_metadata-0`` directory, ``.log``
    segments and ``.checkpoint`` snapshots alike) with :mod:`kcodec.kraft`'s semantics.
    The struct's fields:

    - ``api_key`` (smallint), ``record_type`` (the spec name, ``"TopicRecord"``, null for
      a type kcodec does not know), ``version``;
    - ``unknown`` (an API key kcodec does not know: data, kept in ``raw_value``, not an
      error), ``newer_than_known`` (a version above the newest known, read with the newest
      layout, as Kafka does);
    - one struct per record type (``TopicRecord``, ``PartitionRecord``,
      ``PartitionChangeRecord``, ``RegisterBrokerRecord``, ``FeatureLevelRecord``, ...:
      the fields of all its versions, set on the rows of that type);
    - ``raw_value``: the bytes of a row in no struct (type not selected, unknown type,
      value that did not decode); ``_error``.

    Control records (``is_control``: leader changes, snapshot headers/footers, KRaft
    voters) are not metadata records: filter them out first
    (``df.where(~df.is_control)``), or their rows come back with ``_error`` set.

    ``options``: ``record_types`` (spec names, or ``"all"``, the default), ``fields``
    (dotted paths, as for :func:`from_consumer_offsets`: ``["record_type",
    "TopicRecord.name", "TopicRecord.topicId"]``), ``mode``."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    fields = rest.pop("fields", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _metadata_udf(mode, rts, fields)(value)


def from_streams_subscription(col: ColumnOrName, options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode Kafka Streams ``SubscriptionInfo`` bytes (v1-v11: the ``userData`` of a
    ``stream`` group member's subscription, e.g.
    ``from_consumer_subscription(...).userData``) as :func:`kcodec.streams.decode_subscription`
    does: ``version``, ``latest_supported_version``, ``process_id`` (UUID text),
    ``user_end_point``, ``task_offset_sums`` (``subtopology``, ``partition``,
    ``topology_name``, ``offset_sum``; -2 a running active task, -3 a task with state
    whose offset v1-v6 do not carry), ``prev_tasks`` and ``standby_tasks`` (the tasks run
    as active / held as standby, derived as Kafka does), ``unique_field``, ``error_code``,
    ``client_tags``, ``future`` (a newer member: only the versions are read),
    ``_error``.  Versions 1-11 are read by the C bulk decoder (the spec'd
    ``SubscriptionInfoData``), the rest row by row.  ``options["mode"]`` as for the other
    functions."""
    mode, rest = K.check_mode(options)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _streams_udf("subscription", mode)(col)


def from_streams_assignment(col: ColumnOrName, options: Optional[Dict[str, Any]] = None) -> Any:
    """Decode Kafka Streams ``AssignmentInfo`` bytes (v1-v11: the ``userData`` of a member's
    assignment) as :func:`kcodec.streams.decode_assignment` does: ``version``,
    ``commonly_supported_version``, ``active_tasks`` (one per assigned partition),
    ``standby_tasks`` (task and its partitions), ``partitions_by_host`` and
    ``standby_partitions_by_host`` (``host``, ``port``, ``partitions``),
    ``error_code``, ``next_rebalance_ms``, ``_error``.  AssignmentInfo is Kafka's
    hand-written format, decoded row by row (identical values once)."""
    mode, rest = K.check_mode(options)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return _streams_udf("assignment", mode)(col)


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
    ``kcodec_consumer_assignment(bytes)``, ``kcodec_metadata_record(value)``,
    ``kcodec_streams_subscription(bytes)``, ``kcodec_streams_assignment(bytes)``; and for
    each ``(name, version)`` of ``messages``, ``kcodec_<name>_v<version>(bytes)`` (e.g.
    ``kcodec_OffsetCommitValue_v4``).  ``options`` as for the column functions (one mode
    for all; ``record_types`` and ``fields`` for ``kcodec_consumer_offsets``;
    ``metadata_record_types`` and ``metadata_fields`` for ``kcodec_metadata_record``)."""
    mode, rest = K.check_mode(options)
    rts = rest.pop("record_types", None)
    fields = rest.pop("fields", None)
    mrts = rest.pop("metadata_record_types", None)
    mfields = rest.pop("metadata_fields", None)
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    spark.udf.register("kcodec_consumer_offsets", _offsets_udf(mode, rts, fields))
    spark.udf.register("kcodec_consumer_subscription", _protocol_udf(K._SUB, mode))
    spark.udf.register("kcodec_consumer_assignment", _protocol_udf(K._ASG, mode))
    spark.udf.register("kcodec_metadata_record", _metadata_udf(mode, mrts, mfields))
    spark.udf.register("kcodec_streams_subscription", _streams_udf("subscription", mode))
    spark.udf.register("kcodec_streams_assignment", _streams_udf("assignment", mode))
    for name, version in messages:
        spark.udf.register(f"kcodec_{name}_v{version}", _message_udf(name, version, "error", mode))
