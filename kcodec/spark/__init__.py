"""kcodec on Spark: Kafka metadata decoding as column functions, a log-segment source,
fleet-wide assignor what-ifs, and the ``kcodec analyze`` job.

    >>> from kcodec.spark import from_consumer_offsets, read_log
    >>> df = read_log(spark, "s3a://backups/kafka/__consumer_offsets-*")
    >>> df.select(from_consumer_offsets("key", "value").alias("r")).select("r.group", "r.OffsetCommitValue.offset")

Needs the ``spark`` extra (``pip install 'kcodec[spark]'``: PySpark 4.1+, pyarrow).
"""
from __future__ import annotations

from ._kernels import FAILFAST, PERMISSIVE, FailFastError
from ._source import read_log
from .functions import (from_consumer_assignment, from_consumer_offsets, from_consumer_subscription,
                        from_kafka_message, kafka_message_schema, offsets_schema, register,
                        to_kafka_message)
from .whatif import assignor_whatif

__all__ = [
    "from_consumer_offsets", "from_consumer_subscription", "from_consumer_assignment",
    "from_kafka_message", "to_kafka_message", "register", "offsets_schema",
    "kafka_message_schema", "read_log", "assignor_whatif", "PERMISSIVE", "FAILFAST",
    "FailFastError",
]
