"""``read_log``: Kafka log segments (any path Spark reads) as a DataFrame.

Spark lists and reads the files (``binaryFile`` source: local, HDFS, S3A, ABFS...); each
task splits its files into batches and records with kcodec's log reader (record batches
split and CRC-checked in C).  Columns carry Spark's Kafka-source names where they apply.
A corrupt batch becomes a row with ``error`` set (its readable records are still there),
so nothing is skipped silently.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterator, List, Optional

import numpy as np
import pyarrow as pa

# The log reader, imported in this one place (it moves to kcodec.log).
try:
    from kcodec import log as _log  # type: ignore[attr-defined]
except ImportError:
    from kcodec import records as _log

__all__ = ["read_log", "LOG_SCHEMA", "records_of_file", "segment_files"]


_HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
LOG_SCHEMA = pa.schema([
    ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")), ("timestampType", pa.int32()),
    ("key", pa.binary()), ("value", pa.binary()), ("headers", pa.list_(_HEADER)),
    ("batch_base_offset", pa.int64()), ("producer_id", pa.int64()), ("producer_epoch", pa.int16()),
    ("partition_leader_epoch", pa.int32()), ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()), ("control_type", pa.string()),
    ("file", pa.string()), ("batch_position", pa.int64()), ("error", pa.string()),
])
_DIR = re.compile(r"^(.+)-(\d+)$")


def _topic_partition(path: str) -> "tuple[Optional[str], Optional[int]]":
    m = _DIR.match(os.path.basename(os.path.dirname(path.rstrip("/"))))
    return (m.group(1), int(m.group(2))) if m else (None, None)


def _control_types(keys: List[Optional[bytes]], is_control: np.ndarray) -> List[Optional[str]]:
    out: List[Optional[str]] = [None] * len(keys)
    for i in np.flatnonzero(is_control).tolist():
        k = keys[i]
        t = int.from_bytes(k[2:4], "big", signed=True) if k is not None and len(k) >= 4 else None
        out[i] = _log.CONTROL_TYPES.get(t, "UNKNOWN") if t is not None else "UNKNOWN"
    return out


def records_of_file(data: Any, path: str) -> Iterator[pa.RecordBatch]:
    """The rows of one segment file's bytes, as Arrow batches of :data:`LOG_SCHEMA`."""
    topic, partition = _topic_partition(path)
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
    """Read Kafka log segments (``*.log``) and snapshots (``*.checkpoint``) under ``path``
    (a directory tree such as a copied ``__consumer_offsets-*`` or ``__cluster_metadata-0``,
    or a file; any filesystem Spark reads) into a DataFrame.

    Columns: ``topic``, ``partition`` (from the ``<topic>-<partition>`` directory name),
    ``offset``, ``timestamp``, ``timestampType``, ``key``, ``value``, ``headers`` (as
    Spark's Kafka source names them); ``batch_base_offset``, ``producer_id``,
    ``producer_epoch``, ``partition_leader_epoch``, ``is_transactional``, ``is_control``,
    ``control_type`` (COMMIT/ABORT/... for control records), ``file``, ``batch_position``;
    ``error``: set on a row standing for a corrupt batch (bad CRC, cut, unparsable), whose
    readable records are rows of their own.  Files are split across tasks whole
    (``files_per_task``; default: up to 4 tasks per core Spark has, one file per task
    when there are more cores than that);
    Spark's ``binaryFile`` source reads a file whole, so files above 2 GiB are refused
    by Spark (Kafka's default segment size is 1 GiB).
    """
    from pyspark.sql import functions as F
    from ._types import spark_type
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


def _natural(s: str) -> List[Any]:
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", s)]


def segment_files(spark: Any, paths: List[str]) -> List[str]:
    """The ``*.log`` / ``*.checkpoint`` files under ``paths``, listed with Hadoop's
    FileSystem (any scheme Spark reads) in log order.  Spark's own directory listing
    cannot be used: it hides names starting with ``_``, and every internal topic's
    directory (``__consumer_offsets-0``) starts with one."""
    out: List[str] = []
    jvm = getattr(spark, "_jvm", None)
    for p in paths:
        if jvm is None:         # Spark Connect: no JVM gateway; local paths only
            out += _log.log_files(p)
            continue
        hp = jvm.org.apache.hadoop.fs.Path(p)
        fs = hp.getFileSystem(spark._jsc.hadoopConfiguration())
        if not fs.exists(hp):
            raise FileNotFoundError(p)
        it = fs.listFiles(hp, True)
        while it.hasNext():
            name = it.next().getPath().toString()
            if name.endswith((".log", ".checkpoint")):
                out.append(name)
    out.sort(key=lambda f: (_natural(os.path.dirname(f)), not f.endswith(".checkpoint"), os.path.basename(f)))
    return out
