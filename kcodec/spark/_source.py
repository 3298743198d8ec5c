"""``read_log``: Kafka log segments (any path Spark reads) as a DataFrame.

Files are listed with Hadoop's FileSystem (every scheme Spark reads), cut into byte
ranges at batch boundaries (from Kafka's ``.index`` files, or a walk over the batch
headers) and read by the tasks themselves through ``pyarrow.fs`` (local, S3, HDFS, GCS)
as a PySpark Python data source (:mod:`kcodec.spark._datasource`): each range is split
into batches and records by kcodec's C scanner (CRC-checked) and comes out as Arrow
record batches built from the scanner's arrays, no Python object per record.  With
``decode=`` the same pass decodes the records (``"offsets"``: what
:func:`~kcodec.spark.from_consumer_offsets` returns).  Paths only Hadoop reads go
through Spark's ``binaryFile`` source (a file per row, so files above 2 GiB are refused
there).  Columns carry Spark's Kafka-source names where they apply.  A corrupt batch
becomes one row with ``error`` set (file and position); none of its records are rows.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pyarrow as pa

from ._scan import (DECODERS, FILE_COLUMNS, LOG_SCHEMA, WIRE_SCHEMA, bytes_batches, decode_batch,
                    decoded_schema, plan_splits, readable_by_arrow, topic_partition)

# The log reader, imported in this one place.
from kcodec import log as _log

__all__ = ["read_log", "plan_partitions", "LOG_SCHEMA", "records_of_file", "segment_files", "segment_files_sized"]

_MIN_SPLIT = 16 << 20
_MAX_SPLIT = 128 << 20
_CHUNK: Optional[int] = None        # bytes the tasks read per step (None: kcodec.log's default)


def records_of_file(data: Any, path: str) -> Iterator[pa.RecordBatch]:
    """The rows of one segment file's bytes, as Arrow batches of :data:`LOG_SCHEMA`."""
    return bytes_batches(data, path)


def _map_files(decode: Optional[str], opts: Dict[str, Any]) -> Any:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for b in batches:
            paths = b.column("path").to_pylist()
            contents = b.column("content")
            for i, path in enumerate(paths):
                data = contents[i].as_buffer()
                for rb in bytes_batches(memoryview(data) if data is not None else b"", path):
                    yield decode_batch(rb, decode, opts)
    return run


def _groups(splits: List[Any], target: int, file_ids: Dict[str, int]) -> List[List[Any]]:
    """Splits packed into Spark partitions of about ``target`` bytes (small files share one),
    each as ``[path, start, end, file_id]``."""
    out: List[List[Any]] = []
    cur: List[Any] = []
    size = 0
    for s, n in splits:
        if cur and size + n > target:
            out.append(cur)
            cur, size = [], 0
        cur.append(list(s) + [file_ids[s.path]])
        size += n
    if cur:
        out.append(cur)
    return out


def _parallelism(spark: Any) -> int:
    return max(1, spark.sparkContext.defaultParallelism) if hasattr(spark, "sparkContext") else 2


def plan_partitions(listed: List[Tuple[str, int]], parallelism: int,
                    split_bytes: Optional[int] = None) -> List[List[Any]]:
    """The tasks' work for ``(file, size)`` in log order: files cut into byte ranges at
    batch boundaries and packed into Spark partitions of about ``split_bytes`` (default:
    the input spread over twice ``parallelism``, 16-128 MiB), each a list of
    ``[path, start, end, file's number in listed]``."""
    total = sum(n for _, n in listed)
    if split_bytes is None:
        split_bytes = min(_MAX_SPLIT, max(_MIN_SPLIT, -(-total // (2 * parallelism))))
    sizes = dict(listed)
    splits = plan_splits(listed, split_bytes)
    sized = [(s, ((s.end if s.end is not None else sizes[s.path]) - s.start)) for s in splits]
    return _groups(sized, split_bytes, {p: i for i, (p, _) in enumerate(listed)})


def read_log(spark: Any, path: "str | List[str]", *, decode: Optional[str] = None,
             options: Optional[Dict[str, Any]] = None, split_bytes: Optional[int] = None,
             topic: Optional[str] = None) -> Any:
    """Read Kafka log segments (``*.log``) and snapshots (``*.checkpoint``) under ``path``
    (a directory tree such as a copied ``__consumer_offsets-*`` or ``__cluster_metadata-0``,
    or a file; any filesystem Spark reads) into a DataFrame.

    Columns: ``topic``, ``partition`` (from the ``<topic>-<partition>`` directory name),
    ``offset``, ``timestamp``, ``timestampType``, ``key``, ``value``, ``headers`` (as
    Spark's Kafka source names them); ``batch_base_offset``, ``producer_id``,
    ``producer_epoch``, ``partition_leader_epoch``, ``is_transactional``, ``is_control``,
    ``control_type`` (COMMIT/ABORT/... for control records), ``file``, ``batch_position``;
    ``error``: set on the one row standing for a corrupt batch (bad CRC, cut,
    unparsable; its ``file`` and ``batch_position`` say where), whose records are not
    rows: damaged bytes never reach a result.

    ``decode``: also decode each record in the same pass, into one more struct column
    (``"offsets"``: column ``decoded``, what :func:`~kcodec.spark.from_consumer_offsets`
    gives, ``options`` as its options: ``record_types``, ``fields``, ``mode``); null on
    control records and corrupt-batch rows.  A narrow ``fields`` list is the cheapest
    way to read a few fields of a big history.  ``split_bytes``: bytes per task (default: the
    input spread over twice the cores Spark has, 16-128 MiB); files are cut at batch
    boundaries, so a 1 GiB segment is read by several tasks.  ``topic``: below a
    directory (a broker's log dir), read only that topic's partition directories (see
    :func:`kcodec.log.list_log_files`).

    The tasks send Spark each row without ``topic``, ``partition`` and ``file`` (the same
    on every row of a file) but with the file's number, from which Spark fills them in:
    the columns are what they always were, at ~90 fewer bytes of Arrow per row.
    """
    from ._types import spark_type
    paths = [path] if isinstance(path, str) else list(path)
    opts = dict(options or {})
    if decode is not None and decode not in DECODERS:
        raise ValueError(f"decode must be one of {sorted(DECODERS)} or None, got {decode!r}")
    arrow_schema = decoded_schema(decode, opts)
    schema = spark_type(pa.struct(list(arrow_schema)))
    listed = segment_files_sized(spark, paths, topic=topic)
    if not listed:
        return spark.createDataFrame([], schema)
    par = _parallelism(spark)
    if all(readable_by_arrow(p) for p, _ in listed) and hasattr(spark, "dataSource"):
        from ._datasource import register
        names = [p for p, _ in listed]
        register(spark)
        wire = spark_type(pa.struct(list(decoded_schema(decode, opts, WIRE_SCHEMA))))
        df = (spark.read.format("kcodec_log").schema(wire)
              .option("partitions", json.dumps(plan_partitions(listed, par, split_bytes)))
              .option("decode", decode or "").option("options", json.dumps(opts))
              .option("chunk_size", str(_CHUNK or "")).load())
        return df.select(*[_file_column(names, f.name) if f.name in FILE_COLUMNS else f.name
                           for f in arrow_schema])
    # a filesystem only Hadoop reads: Spark reads each file whole
    names = [p for p, _ in listed]
    files = spark.read.format("binaryFile").load(names).select("path", "content")
    files = files.repartition(max(1, min(len(names), 4 * par)))
    return files.mapInArrow(_map_files(decode, opts), schema)


def _file_column(names: List[str], column: str) -> Any:
    """``topic``, ``partition`` or ``file`` of each row, looked up by its ``_file`` number
    in a literal array of the files' values (made in one call, however many files)."""
    import numpy as np
    from pyspark.sql import functions as F
    if column == "file":
        return F.get(F.lit(np.array(names, np.str_)), F.col("_file")).alias(column)
    tps = [topic_partition(p) for p in names]
    if column == "topic":       # no Kafka topic is named "": it stands for None
        vals, none = np.array([t or "" for t, _ in tps], np.str_), F.lit("")
    else:
        vals, none = np.array([-1 if q is None else q for _, q in tps], np.int32), F.lit(-1)
    col = F.get(F.lit(vals), F.col("_file"))
    if any(v is None for v in (t if column == "topic" else q for t, q in tps)):
        col = F.nullif(col, none)
    return col.alias(column)


def _natural(s: str) -> List[Any]:
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", s)]


def segment_files_sized(spark: Any, paths: List[str], *, topic: Optional[str] = None,
                        left_out: Optional[List[str]] = None) -> List[Tuple[str, int]]:
    """``(file, size)`` of the ``*.log`` / ``*.checkpoint`` files under ``paths``, listed
    with Hadoop's FileSystem (any scheme Spark reads) in log order.  Spark's own directory
    listing cannot be used: it hides names starting with ``_``, and every internal
    topic's directory (``__consumer_offsets-0``) starts with one.

    ``topic``: below a directory, only that topic's partition directories (as
    :func:`kcodec.log.list_log_files` lists them); what is not read is appended to
    ``left_out``."""
    out: List[Tuple[str, int]] = []
    left: List[str] = []
    jvm = getattr(spark, "_jvm", None)
    for p in paths:
        if jvm is None:         # Spark Connect: no JVM gateway; local paths only
            files, other = _log.list_log_files(p, topic=topic)
            out += [(f, os.path.getsize(f)) for f in files]
            left += other
            continue
        hp = jvm.org.apache.hadoop.fs.Path(p)
        fs = hp.getFileSystem(spark._jsc.hadoopConfiguration())
        if not fs.exists(hp):
            raise FileNotFoundError(p)
        root = fs.makeQualified(hp).toString().rstrip("/")
        it = fs.listFiles(hp, True)
        while it.hasNext():
            st = it.next()
            name = st.getPath().toString()
            if name.endswith((".log", ".checkpoint")):
                rel = name[len(root):] if name.startswith(root + "/") else os.path.basename(name)
                why = _log.left_out_by_topic(os.path.dirname(rel.strip("/")), os.path.basename(name), topic)
                if why is not None:
                    if why not in left:
                        left.append(why)
                    continue
                out.append((name, int(st.getLen())))
    out.sort(key=lambda f: (_natural(os.path.dirname(f[0])), not f[0].endswith(".checkpoint"),
                            os.path.basename(f[0])))
    if left_out is not None:
        left_out += sorted(left, key=_natural)
    return out


def segment_files(spark: Any, paths: List[str]) -> List[str]:
    """The ``*.log`` / ``*.checkpoint`` files under ``paths`` in log order
    (:func:`segment_files_sized` without the sizes)."""
    return [p for p, _ in segment_files_sized(spark, paths)]
