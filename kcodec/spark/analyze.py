"""``kcodec analyze``: a ``__consumer_offsets`` history on Spark, from bytes to a report.

Reads segment directories (:func:`kcodec.spark.read_log`) or a Parquet/JSON dump of a
Kafka-source read, decodes every record (:func:`kcodec.spark.from_consumer_offsets`),
folds group state per ``__consumer_offsets`` partition with :class:`kcodec.offsets.Folder`
(the fold ``kcodec offsets groups`` runs, so the states are the same), writes Parquet
tables and prints a summary; optionally a self-contained HTML report with charts.
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kcodec.log import METADATA_TOPIC, OFFSETS_TOPIC

from ._fold import TIMELINE_TABLES, PackedRows, _jsonable, load_row

__all__ = ["analyze", "Analysis", "sample_path"]


def sample_path() -> str:
    """The bundled sample: ``__consumer_offsets`` segments a Kafka 4.1.1 broker wrote
    (classic, consumer, share and streams groups from several clients)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")


_TABLE_SCHEMAS = {
    "groups": ("group_id string, type string, state string, generation int, protocol_type string, "
               "protocol string, leader string, current_state_timestamp long, target_assignment_epoch int, "
               "members int, offsets int, partition string"),
    "members": ("group_id string, member_id string, instance_id string, client_id string, client_host string, "
                "rack_id string, session_timeout_ms int, rebalance_timeout_ms int, "
                "subscribed_topics array<string>, member_epoch int, assigned string"),
    "committed_offsets": ("group_id string, topic string, partition int, offset long, leader_epoch int, "
                          "metadata string, commit_timestamp long, expire_timestamp long, log_offset long, "
                          "transactional boolean"),
    "partitions": ("partition string, records long, deleted_groups array<string>, aborted_records long, "
                   "open_transactions long, unknown_records map<string,long>, errors array<string>, "
                   "corrupt_batches long, flagged long"),
}


@dataclasses.dataclass
class Analysis:
    """What :func:`analyze` found (small, driver-side) and where the tables went."""
    source: str
    out: Optional[str]
    records: int
    flagged: int
    corrupt_batches: int
    groups: List[Dict[str, Any]]
    by_state: List[Dict[str, Any]]
    assignors: List[Dict[str, Any]]
    rebalances: List[Dict[str, Any]]       # {"bucket": epoch seconds, "count"}
    commits: List[Dict[str, Any]]          # {"bucket": epoch seconds, "count"}
    bucket_seconds: int
    deleted_groups: List[str]
    aborted_records: int
    unknown_records: Dict[str, int]
    errors: List[str]
    downgrade: Optional[List[Dict[str, Any]]] = None
    seconds: float = 0.0
    # the report's data (kcodec.offsets.timeline, when installed): group events and
    # commits per group, topic and minute
    # (read-only sequences of dicts: PackedRows keeps them compressed, a long history's
    # timeline would otherwise be the biggest thing the driver holds)
    group_events: Sequence[Dict[str, Any]] = dataclasses.field(default_factory=list)
    commit_counts: Sequence[Dict[str, Any]] = dataclasses.field(default_factory=list)
    # flagged records and corrupt batches ({file, position, offset, record_type, reason}),
    # the first FLAGGED_CAP per partition; flagged_total counts them all
    flagged_rows: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    flagged_total: int = 0
    # the KRaft metadata history (kcodec.spark.metadata.metadata_history's tables) when a
    # __cluster_metadata tree was given or found under the path
    metadata: Optional[Dict[str, List[Dict[str, Any]]]] = None
    metadata_source: Optional[str] = None
    # partition directories under the path of topics other than __consumer_offsets and
    # __cluster_metadata (relative to the path): not read
    left_out: List[str] = dataclasses.field(default_factory=list)


def _is_dump(path: str) -> bool:
    low = path.rstrip("/").lower()
    return low.endswith(".parquet") or low.endswith(".json") or low.endswith(".jsonl")


def _dump_input(spark: Any, path: str) -> Any:
    """A Kafka-source dump (Parquet/JSON) with the columns the fold needs."""
    from pyspark.sql import functions as F
    low = path.rstrip("/").lower()
    df = spark.read.parquet(path) if low.endswith(".parquet") else spark.read.json(path)
    cols = set(df.columns)
    for c in ("key", "value"):
        if dict(df.dtypes).get(c) == "string":      # JSON: Spark writes binary as base64
            df = df.withColumn(c, F.unbase64(c))
    ts = F.col("timestamp")
    if dict(df.dtypes).get("timestamp") == "string":
        ts = F.to_timestamp("timestamp")
    defaults = {"is_transactional": F.lit(False), "is_control": F.lit(False),
                "control_type": F.lit(None).cast("string"), "producer_id": F.lit(-1).cast("long"),
                "error": F.lit(None).cast("string"), "file": F.lit(path),
                "batch_position": F.lit(None).cast("long"), "topic": F.lit(None).cast("string")}
    df = df.withColumn("timestamp", ts.cast("timestamp"))
    for c, v in defaults.items():
        if c not in cols:
            df = df.withColumn(c, v)
    return df


def _fold_frame(df: Any) -> Any:
    """Fold a DataFrame of log rows (a Kafka-source dump, or segments only Hadoop reads):
    rows of each source partition streamed in offset order through the Folder (sorted
    within Spark partitions, which spill to disk: no partition's history in memory)."""
    from pyspark.sql import functions as F
    from ._fold import DUMP_FOLD_SCHEMA, fold_dump_batches
    src = F.when(F.col("topic").isNotNull() & F.col("partition").isNotNull(),
                 F.concat_ws("-", "topic", F.col("partition").cast("string"))).otherwise(F.col("file"))
    rows = (df.where(F.col("error").isNull())
            .select(src.alias("source"), "offset",
                    F.round(F.col("timestamp").cast("double") * 1000).cast("long").alias("timestamp_ms"),
                    "key", "value", "is_control", "control_type", "is_transactional", "producer_id"))
    n = max(1, df.sparkSession.sparkContext.defaultParallelism)
    return (rows.repartition(n, "source").sortWithinPartitions("source", "offset")
            .mapInArrow(fold_dump_batches, DUMP_FOLD_SCHEMA))


def _partitions(listed: List[Any]) -> List[Any]:
    """(partition name, its files in log order, bytes) per partition directory, the
    biggest first (so the longest folds start first)."""
    from ._scan import topic_partition
    by: Dict[str, Any] = {}
    for path, size in listed:
        d = os.path.dirname(path)
        t, p = topic_partition(path)
        name = f"{t}-{p}" if t is not None else d
        e = by.setdefault(d, [name, [], 0])
        e[1].append(path)
        e[2] += size
    return sorted(by.values(), key=lambda e: -e[2])


class _Progress:
    """One bar over the job: its phase, Spark tasks done of the phase's, the input's size,
    elapsed time and ETA (rich on a terminal; a plain line every 15 s otherwise)."""

    def __init__(self, spark: Any, enabled: Optional[bool], total_bytes: int = 0) -> None:
        import sys
        self.sc = spark.sparkContext
        self.tty = sys.stderr.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.step = "starting"
        self.total_bytes = total_bytes
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._progress: Any = None
        self._t0 = time.monotonic()

    def __enter__(self) -> "_Progress":
        if self.enabled:
            if self.tty:
                from rich.console import Console
                from rich.progress import (BarColumn, Progress, SpinnerColumn, TextColumn,
                                           TimeElapsedColumn, TimeRemainingColumn)
                self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                          TextColumn("{task.completed}/{task.total} tasks"),
                                          TimeElapsedColumn(), TimeRemainingColumn(),
                                          console=Console(stderr=True), transient=True)
                self._progress.start()
                self._task = self._progress.add_task(self.step, total=None)
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def _counts(self) -> Any:
        tracker = self.sc.statusTracker()
        done = total = 0
        for sid in tracker.getActiveStageIds():
            info = tracker.getStageInfo(sid)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return done, total

    def _poll(self) -> None:
        import sys
        last = time.monotonic()
        while not self._stop.wait(0.25):
            try:
                done, total = self._counts()
            except Exception:       # the gateway can go away at shutdown
                return
            if self._progress is not None:
                self._progress.update(self._task, description=self.step, completed=done, total=total or None)
            elif time.monotonic() - last >= 15:
                last = time.monotonic()
                print(f"kcodec analyze: {self.step}: {done}/{total} tasks, "
                      f"{time.monotonic() - self._t0:.0f} s", file=sys.stderr, flush=True)

    def set(self, step: str) -> None:
        import sys
        if self.total_bytes and step.startswith("folding"):
            step = f"{step} ({self.total_bytes / (1 << 20):,.0f} MiB)"
        self.step = step
        if self._progress is not None:
            self._progress.update(self._task, description=step, completed=0, total=None)
        elif self.enabled:
            print(f"kcodec analyze: {step}", file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)
        if self._progress is not None:
            self._progress.stop()


def _buckets(parts: List[Dict[str, Any]], bucket_seconds: Optional[int]) -> Any:
    """Rebalances (first record of each new generation / group epoch) and commits per
    bucket from the partitions' counts."""
    los = [p["lo"] for p in parts if p.get("lo") is not None]
    his = [p["hi"] for p in parts if p.get("hi") is not None]
    res = max([p.get("resolution") or 1 for p in parts] or [1])
    if bucket_seconds is None:
        width = (max(his) - min(los)) / 1000 if los else 0
        bucket_seconds = max(1, int(width // 40) or 1)
    bucket_seconds = -(-bucket_seconds // res) * res       # whole buckets of every partition's counts
    gens: Dict[Any, int] = {}
    for p in parts:
        for g, e, t in p.get("gens") or []:
            k = (g, e)
            if k not in gens or t < gens[k]:
                gens[k] = t
    reb: Dict[int, int] = {}
    for t in gens.values():
        b = (t // 1000) // bucket_seconds * bucket_seconds
        reb[b] = reb.get(b, 0) + 1
    com: Dict[int, int] = {}
    for p in parts:
        r = p.get("resolution") or 1
        for k, v in p.get("commits") or []:
            b = (k * r) // bucket_seconds * bucket_seconds
            com[b] = com.get(b, 0) + v
    return ([{"bucket": b, "count": c} for b, c in sorted(reb.items())],
            [{"bucket": b, "count": c} for b, c in sorted(com.items())], bucket_seconds)


def analyze(spark: Any, path: Optional[str] = None, out: Optional[str] = None, *,
            downgrade_to: Optional[str] = None, progress: Optional[bool] = False,
            bucket_seconds: Optional[int] = None, metadata: Optional[str] = None) -> Analysis:
    """Run the job on ``path`` (default: the bundled sample); write Parquet tables
    ``records``, ``committed_offsets``, ``groups``, ``members``, ``flagged``,
    ``partitions`` under ``out`` (when given) and return the :class:`Analysis`.

    Segment trees are folded one Spark task per ``__consumer_offsets`` partition, each
    streaming its segments through the columnar fold ``kcodec offsets groups`` runs
    (memory bounded by the live state, not the history); the ``records`` table
    (decoded rows, :func:`read_log` with ``decode="offsets"``) is only computed for
    ``out``.

    ``__cluster_metadata`` partitions found under ``path``, or the tree ``metadata``
    names, add the KRaft metadata history (:func:`kcodec.spark.metadata.metadata_history`)
    as :attr:`Analysis.metadata`."""
    from ._source import segment_files_sized
    t0 = time.monotonic()
    src = path or sample_path()
    dump = _is_dump(src)
    # below the path (a broker's log dir holds every topic), __consumer_offsets partitions
    # are folded and __cluster_metadata ones give the history; other topics are left out
    other: List[str] = []
    listed = [] if dump else segment_files_sized(spark, [src], topic=OFFSETS_TOPIC, left_out=other)
    found_meta = sorted({os.path.dirname(p) for p, _ in listed if _is_metadata(p)}
                        | {os.path.join(src, d) for d in other if is_metadata_dir(d)})
    left_out = [d for d in other if not is_metadata_dir(d)]
    listed = [(p, n) for p, n in listed if not _is_metadata(p)]
    if metadata is None and found_meta:
        metadata = found_meta if len(found_meta) > 1 else found_meta[0]
    if not dump and not listed and metadata is None:
        found = f"; found only {len(left_out)} of other topics: {', '.join(left_out[:10])}" if left_out else ""
        raise SystemExit(f"kcodec analyze: no {OFFSETS_TOPIC} segment files (*.log) under {src}{found}")
    from ._scan import readable_by_arrow
    direct = not dump and all(readable_by_arrow(p) for p, _ in listed)
    with _Progress(spark, progress, sum(s for _, s in listed)) as prog:
        prog.set("folding group state")
        if not listed and not dump:
            rows = []
        elif direct:
            from ._fold import fold_rows
            parts_in = [(name, files) for name, files, _ in _partitions(listed)]
            rows = (spark.sparkContext.parallelize(parts_in, len(parts_in))
                    .mapPartitions(fold_rows).collect())
        else:
            from ._source import read_log
            df = _dump_input(spark, src) if dump else read_log(spark, src)
            rows = [(r.table, r.data if r.packed is None else r.packed) for r in _fold_frame(df).collect()]
        fold_rows_ = _load_fold_rows(rows)
        del rows
        groups = sorted(fold_rows_["groups"], key=lambda g: g["group_id"])
        parts = fold_rows_["partitions"]

        history = None
        if metadata is not None:
            prog.set("reading the KRaft metadata history")
            from .metadata import metadata_history
            history = metadata_history(spark, metadata)

        if out:
            prog.set("writing Parquet")
            _write_tables(spark, src, out, dump, fold_rows_, direct, listed,
                          history.errors if history is not None else [])

        prog.set("summarising")
        counts: Dict[tuple, int] = {}
        for g in groups:
            k = (g["type"], g["state"], g["protocol_type"])
            counts[k] = counts.get(k, 0) + 1
        by_state = [{"type": k[0], "state": k[1], "protocol_type": k[2], "count": v}
                    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1]))]
        per: Dict[str, set] = {}
        for p in parts:
            for a, g in p.get("assignors") or []:
                per.setdefault(a, set()).add(g)
        assignors = [{"assignor": a, "groups": len(gs)}
                     for a, gs in sorted(per.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
        rebalances, commit_rows, bucket_seconds = _buckets(parts, bucket_seconds)
        unknown: Dict[str, int] = {}
        for p in parts:
            for k, v in (p["unknown_records"] or {}).items():
                unknown[k] = unknown.get(k, 0) + v
        downgrade = None
        if downgrade_to:
            prog.set(f"checking a downgrade to {downgrade_to}")
            downgrade = _downgrade(src, downgrade_to)
    from ._source import _natural
    parts.sort(key=lambda p: _natural(str(p["partition"] or "")))
    a = Analysis(src, out, sum(p["records"] for p in parts), sum(p.get("flagged") or 0 for p in parts),
                 sum(p.get("corrupt_batches") or 0 for p in parts), groups, by_state, assignors, rebalances,
                 commit_rows, bucket_seconds, sorted(g for p in parts for g in (p["deleted_groups"] or [])),
                 sum(p["aborted_records"] or 0 for p in parts), unknown,
                 [e for p in parts for e in (p["errors"] or [])], downgrade, time.monotonic() - t0)
    a.group_events, a.commit_counts = (_timeline_rows(parts, k) for k in TIMELINE_TABLES)
    a.flagged_rows = [r for p in parts for r in p.get("flagged_rows") or []]
    a.flagged_total = a.flagged + a.corrupt_batches
    a.metadata = history
    a.left_out = left_out
    if history is not None and history.errors:
        # the metadata log's corrupt batches and records that do not decode: reported as the
        # __consumer_offsets ones are (counted, flagged, exit 3)
        corrupt = sum(1 for e in history.errors if e["corrupt"])
        a.corrupt_batches += corrupt
        a.flagged += len(history.errors) - corrupt
        a.errors += history.error_lines()
        a.flagged_rows += [{"file": e["file"], "position": e["position"], "offset": e["offset"],
                            "record_type": None, "reason": e["reason"]} for e in history.errors]
        a.flagged_total = a.flagged + a.corrupt_batches
    a.metadata_source = None if metadata is None else (metadata if isinstance(metadata, str)
                                                        else ", ".join(metadata))
    return a


def _load_fold_rows(rows: List[Tuple[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """The fold's ``(table, data)`` rows (in the tasks' order) by table, parsed; the
    timeline's packed rows stay packed, in their partition's row."""
    out: Dict[str, List[Dict[str, Any]]] = {name: [] for name in (*_TABLE_SCHEMAS, "corrupt")}
    for table, data in rows:
        if table in TIMELINE_TABLES:
            # the partition whose row came just before (collect keeps the tasks' order);
            # parsed only when the summary or the report reads them
            p = out["partitions"][-1]
            p[table] = PackedRows([(data, p.pop(f"{table}_rows"))])
        else:
            out[table].append(load_row(data))
    return out


def _timeline_rows(parts: List[Dict[str, Any]], table: str) -> PackedRows:
    """The partitions' rows of a timeline table (packed by the tasks), in the
    partitions' order."""
    out = PackedRows()
    for p in parts:
        out.add(p.pop(table))
    return out


def is_metadata_dir(directory: str) -> bool:
    """A ``__cluster_metadata`` partition directory."""
    return os.path.basename(directory.rstrip("/")).startswith(METADATA_TOPIC + "-")


def _is_metadata(path: str) -> bool:
    """A file of a ``__cluster_metadata`` partition (its segments and snapshots)."""
    return is_metadata_dir(os.path.dirname(path.rstrip("/")))


def _type_names() -> Any:
    """A map column from record type to its name (``OffsetCommit``, ...) for the tables."""
    from pyspark.sql import functions as F
    from kcodec.offsets import record_types
    return F.create_map(*[c for rt, info in sorted(record_types().items())
                          for c in (F.lit(rt).cast("short"), F.lit(info.name))])


_CORRUPT_SCHEMA = "topic string, partition int, file string, batch_position long, error string"


def _write_records_in_tasks(spark: Any, listed: List[Tuple[str, int]], rpath: str) -> bool:
    """Write the ``records`` table from the tasks that scan and decode it
    (:mod:`kcodec.spark._records_table`), never through the JVM's rows; False where that
    cannot be done (no SparkContext, or no ``pyarrow.fs`` for the output's scheme)."""
    from ._records_table import write_records_task
    from ._scan import arrow_filesystem
    from ._source import _parallelism, plan_partitions
    if not hasattr(spark, "sparkContext"):
        return False
    try:
        fs, base = arrow_filesystem(rpath)
    except Exception:
        return False
    from pyarrow import fs as pafs
    if fs.get_file_info(base).type != pafs.FileType.NotFound:      # mode "overwrite"
        fs.delete_dir(base)
    fs.create_dir(base, recursive=True)
    parts = plan_partitions(listed, _parallelism(spark))
    (spark.sparkContext.parallelize(parts, len(parts))
     .mapPartitionsWithIndex(write_records_task(rpath)).collect())
    with fs.open_output_stream(base.rstrip("/") + "/_SUCCESS"):
        pass
    return True


def _write_tables(spark: Any, src: str, out: str, dump: bool,
                  fold_rows: Dict[str, List[Dict[str, Any]]], folded_corrupt: bool = False,
                  listed: Optional[List[Tuple[str, int]]] = None,
                  metadata_errors: Sequence[Dict[str, Any]] = ()) -> None:
    """The Parquet tables: the folded ones from the driver's small lists; ``records``
    (every decoded record; written by the tasks that scan and decode it when the fold
    read the segments itself, ``folded_corrupt``, from ``listed``; else from the fused
    source or the dump through Spark), ``flagged`` read back from it plus the corrupt
    batches (the fold's when ``folded_corrupt``: no second scan of the log)."""
    from pyspark.sql import functions as F
    from ._records_table import LOG_COLUMNS
    from ._source import read_log
    from .functions import from_consumer_offsets
    if "://" not in out:
        out = os.path.abspath(out)      # the tasks write `records` from their own working directory
        os.makedirs(out, exist_ok=True)
    rpath = os.path.join(out, "records")
    raw = None
    if not (folded_corrupt and listed and _write_records_in_tasks(spark, listed, rpath)):
        if dump:
            raw = _dump_input(spark, src).withColumn(
                "decoded", from_consumer_offsets("key", "value", {"record_types": "all"}))
        else:
            raw = read_log(spark, src, decode="offsets", options={"record_types": "all"}, topic=OFFSETS_TOPIC)
        recs = (raw.where(F.col("error").isNull() & ~F.col("is_control"))
                .select(*[F.col(src).alias(dst) for dst, src in LOG_COLUMNS], "decoded.*")
                .withColumn("type_name", _type_names()[F.col("record_type")]))
        recs.write.mode("overwrite").parquet(rpath)
    written = spark.read.parquet(rpath)
    flagged = written.where(F.col("_error").isNotNull() | F.col("unknown") | F.col("newer_than_known"))
    if dump:
        corrupt = None
    elif folded_corrupt:
        corrupt = spark.createDataFrame(fold_rows["corrupt"], _CORRUPT_SCHEMA).withColumn(
            "offset", F.lit(None).cast("long")).withColumn("timestamp", F.lit(None).cast("timestamp"))
    else:
        assert raw is not None
        corrupt = raw.where(F.col("error").isNotNull())
    fl = flagged.select("log_topic", "log_partition", "log_offset", "timestamp", "record_type", "type_name",
                        "group", "unknown", "newer_than_known", F.col("_error").alias("error"),
                        F.lit(None).cast("string").alias("file"), F.lit(None).cast("long").alias("position"))
    if metadata_errors:
        # the metadata log's corrupt batches and records that do not decode
        from ._scan import topic_partition
        rows = [{"topic": topic_partition(e["file"])[0], "partition": topic_partition(e["file"])[1],
                 "file": e["file"], "batch_position": e["position"], "error": e["reason"],
                 "offset": e["offset"]} for e in metadata_errors]
        meta = spark.createDataFrame(rows, _CORRUPT_SCHEMA + ", offset long").withColumn(
            "timestamp", F.lit(None).cast("timestamp"))
        corrupt = meta if corrupt is None else corrupt.select(*meta.columns).unionByName(meta)
    if corrupt is not None:
        fl = fl.unionByName(corrupt.select(
            F.col("topic").alias("log_topic"), F.col("partition").alias("log_partition"),
            F.col("offset").alias("log_offset"), "timestamp", F.lit(None).cast("short").alias("record_type"),
            F.lit(None).cast("string").alias("type_name"), F.lit(None).cast("string").alias("group"),
            F.lit(False).alias("unknown"), F.lit(False).alias("newer_than_known"), "error", "file",
            F.col("batch_position").alias("position")))
    fl.write.mode("overwrite").parquet(os.path.join(out, "flagged"))
    for name, schema in _TABLE_SCHEMAS.items():
        spark.createDataFrame(fold_rows[name], schema).coalesce(1).write.mode("overwrite").parquet(
            os.path.join(out, name))


def _downgrade(src: str, to: str) -> List[Dict[str, Any]]:
    """Downgrade blockers (:func:`kcodec.offsets.check_downgrade`); it reads local
    segment files, so this runs on the driver for local paths only."""
    from kcodec.offsets import check_downgrade
    if "://" in src and not src.startswith("file:"):
        return [{"outcome": "unchecked", "reason": "the downgrade check reads local segment files only"}]
    rep = check_downgrade(src.replace("file:", ""), to=to)     # (__consumer_offsets only)
    return [_jsonable(f) for f in rep.summary()]


# --------------------------------------------------------------------------- output for people

# the console summary and the HTML report live in kcodec.spark.report; re-exported for
# existing callers
from .report import print_summary, write_report  # noqa: E402,F401
