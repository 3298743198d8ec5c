"""kcodec on Spark: Kafka metadata decoding as column functions, a log-segment source,
fleet-wide assignor what-ifs, and the ``kcodec analyze`` job.

    >>> from kcodec.spark import from_consumer_offsets, read_log
    >>> df = read_log(spark, "s3a://backups/kafka/__consumer_offsets-*")
    >>> df.select(from_consumer_offsets("key", "value").alias("r")).select("r.group", "r.OffsetCommitValue.offset")

Needs the ``spark`` extra (``pip install '.[spark]'`` in a checkout, or the wheel with
``[spark]``: PySpark 4.1+, pyarrow).
"""
from __future__ import annotations

from typing import Any

# Loaded on first use, so that ``kcodec.spark.cli`` (the ``kcodec analyze`` command) can be
# imported without pyspark/pyarrow.
_EXPORTS = {
    "from_consumer_offsets": "functions", "from_consumer_subscription": "functions",
    "from_consumer_assignment": "functions", "from_kafka_message": "functions",
    "from_metadata_record": "functions", "from_streams_subscription": "functions",
    "from_streams_assignment": "functions", "metadata_schema": "functions", "streams_schema": "functions",
    "metadata_history": "metadata", "print_metadata_history": "metadata",
    "to_kafka_message": "functions", "register": "functions", "offsets_schema": "functions",
    "kafka_message_schema": "functions", "read_log": "_source", "assignor_whatif": "whatif",
    "analyze": "analyze", "session": "_session", "use_this_python": "_session", "PERMISSIVE": "_kernels", "FAILFAST": "_kernels", "FailFastError": "_kernels",
}


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'kcodec.spark' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"{__name__}.{mod}"), name)


__all__ = [
    "from_consumer_offsets", "from_consumer_subscription", "from_consumer_assignment",
    "from_kafka_message", "to_kafka_message", "register", "offsets_schema",
    "kafka_message_schema", "read_log", "assignor_whatif", "session", "use_this_python",
    "PERMISSIVE", "FAILFAST",
    "FailFastError", "analyze", "from_metadata_record", "from_streams_subscription",
    "from_streams_assignment", "metadata_schema", "streams_schema", "metadata_history",
    "print_metadata_history",
]
