"""``read_log`` as it was before commit 691dc54 (issue 23 section 2's "today's"
``read_log``), kept as a benchmark peer: Spark's ``binaryFile`` source reads each segment
whole into one row, the rows are shuffled by path, and each task builds its Arrow
columns from :func:`kcodec.log.iter_columns`' Python lists (a ``bytes`` object per key,
value and header).  Our own earlier code, loaded by ``bench/bench_spark_read.py`` only;
not part of the package.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional

import numpy as np
import pyarrow as pa

from kcodec import log as _log
from kcodec.spark._scan import LOG_SCHEMA, topic_partition
from kcodec.spark._source import segment_files

__all__ = ["read_log"]

_HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])


def _control_types(keys: List[Optional[bytes]], is_control: np.ndarray) -> List[Optional[str]]:
    out: List[Optional[str]] = [None] * len(keys)
    for i in np.flatnonzero(is_control).tolist():
        k = keys[i]
        t = int.from_bytes(k[2:4], "big", signed=True) if k is not None and len(k) >= 4 else None
        out[i] = _log.CONTROL_TYPES.get(t, "UNKNOWN") if t is not None else "UNKNOWN"
    return out


def records_of_file(data: Any, path: str) -> Iterator[pa.RecordBatch]:
    topic, partition = topic_partition(path)
    for cols in _log.iter_columns(data, with_headers=True):
        n = len(cols["offset"])
        battr = cols["batch_attributes"]
        ctl = (battr & 0x20) != 0
        arrays: Dict[str, Any] = {
            "topic": pa.array([topic] * n, pa.string()), "partition": pa.array([partition] * n, pa.int32()),
            "offset": pa.array(cols["offset"]),
            "timestamp": pa.array(cols["timestamp"] * 1000, pa.timestamp("us", tz="UTC")),
            "timestampType": pa.array(((battr & 0x08) != 0).astype(np.int32)),
            "key": pa.array(cols["key"], pa.binary()), "value": pa.array(cols["value"], pa.binary()),
            "headers": pa.array([[{"key": k, "value": v} for k, v in h] for h in cols["headers"]],
                                pa.list_(_HEADER)),
            "batch_base_offset": pa.array(cols["batch_base_offset"]),
            "producer_id": pa.array(cols["batch_producer_id"]),
            "producer_epoch": pa.array(cols["batch_producer_epoch"].astype(np.int16)),
            "partition_leader_epoch": pa.array(cols["batch_partition_leader_epoch"].astype(np.int32)),
            "is_transactional": pa.array((battr & 0x10) != 0), "is_control": pa.array(ctl),
            "control_type": pa.array(_control_types(cols["key"], ctl), pa.string()),
            "file": pa.array([path] * n, pa.string()),
            "batch_position": pa.array(cols["batch_position"].astype(np.int64)),
            "error": pa.nulls(n, pa.string()),
        }
        yield pa.RecordBatch.from_arrays([arrays[f.name].cast(f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)
        if cols["errors"]:
            errs = cols["errors"]
            m = len(errs)
            e: Dict[str, Any] = {f.name: pa.nulls(m, f.type) for f in LOG_SCHEMA}
            e["topic"] = pa.array([topic] * m, pa.string())
            e["partition"] = pa.array([partition] * m, pa.int32())
            e["file"] = pa.array([path] * m, pa.string())
            e["batch_position"] = pa.array([x.position for x in errs], pa.int64())
            e["error"] = pa.array([f"{x.reason}: {x.message} (skipped to {x.skipped_to})" for x in errs],
                                  pa.string())
            yield pa.RecordBatch.from_arrays([e[f.name] for f in LOG_SCHEMA], schema=LOG_SCHEMA)


def _map_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for b in batches:
        paths = b.column("path").to_pylist()
        contents = b.column("content")
        for i, path in enumerate(paths):
            data = contents[i].as_buffer()
            yield from records_of_file(memoryview(data) if data is not None else b"", path)


def read_log(spark: Any, path: "str | List[str]", *, files_per_task: Optional[int] = None) -> Any:
    """The pre-691dc54 ``read_log``: whole files as ``binaryFile`` rows, repartitioned by
    path, records built per chunk from Python lists."""
    from pyspark.sql import functions as F
    from kcodec.spark._types import spark_type
    paths = [path] if isinstance(path, str) else list(path)
    schema = spark_type(pa.struct(list(LOG_SCHEMA)))
    names = segment_files(spark, paths)
    if not names:
        return spark.createDataFrame([], schema)
    files = spark.read.format("binaryFile").load(names).select("path", "content")
    if files_per_task is None:
        files_per_task = -(-len(names) // (4 * max(1, spark.sparkContext.defaultParallelism)))
    files = files.repartition(max(1, -(-len(names) // max(1, files_per_task))), F.col("path"))
    return files.mapInArrow(_map_files, schema)
