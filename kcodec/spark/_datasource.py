"""``kcodec_log``: the PySpark Python data source behind :func:`kcodec.spark.read_log`.

Its partitions are lists of file byte ranges (planned on the driver by ``read_log``);
each task opens its ranges through ``pyarrow.fs`` and yields ``pyarrow.RecordBatch``es
built from kcodec's C scanner, optionally decoded in the same pass.  The batches are of
:data:`~kcodec.spark._scan.WIRE_SCHEMA`: a file's number (``_file``) stands for its
``topic``, ``partition`` and ``file``, which ``read_log`` puts back on the JVM side.
"""
from __future__ import annotations

import json
from typing import Any, Iterator, List

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

__all__ = ["KafkaLogSource", "register"]


class _Ranges(InputPartition):
    def __init__(self, splits: List[Any]) -> None:
        super().__init__(splits)
        self.splits = splits


class _Reader(DataSourceReader):
    def __init__(self, options: Any) -> None:
        self.parts = json.loads(options["partitions"])
        self.decode = options.get("decode") or None
        self.opts = json.loads(options.get("options") or "{}")
        self.chunk = int(options.get("chunk_size") or 0) or None

    def partitions(self) -> List[InputPartition]:
        return [_Ranges(p) for p in self.parts]

    def read(self, partition: Any) -> Iterator[Any]:
        from ._scan import Split, decode_batch, split_batches
        kw = {"chunk_size": self.chunk} if self.chunk else {}
        for path, start, end, file_id in partition.splits:
            for b in split_batches(Split(path, start, end), file_id=file_id, **kw):
                yield decode_batch(b, self.decode, self.opts)


class KafkaLogSource(DataSource):
    """Kafka log segments as rows (see :func:`kcodec.spark.read_log`)."""

    @classmethod
    def name(cls) -> str:
        return "kcodec_log"

    def schema(self) -> str:  # read_log always passes its schema
        raise ValueError("kcodec_log needs a schema (use kcodec.spark.read_log)")

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.options)


def register(spark: Any) -> None:
    """Make ``spark.read.format("kcodec_log")`` available (once per session)."""
    if getattr(spark, "_kcodec_log_registered", False):
        return
    spark.dataSource.register(KafkaLogSource)
    try:
        spark._kcodec_log_registered = True
    except Exception:
        pass
