"""``kcodec analyze``: a ``__consumer_offsets`` history on Spark, from bytes to a report.

Reads segment directories (:func:`kcodec.spark.read_log`) or a Parquet/JSON dump of a
Kafka-source read, decodes every record (:func:`kcodec.spark.from_consumer_offsets`),
folds group state per ``__consumer_offsets`` partition with :class:`kcodec.offsets.Folder`
(the fold ``kcodec offsets groups`` runs, so the states are the same), writes Parquet
tables and prints a summary; optionally a self-contained HTML report with charts.
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
import uuid
from typing import Any, Dict, List, Optional

__all__ = ["analyze", "Analysis", "sample_path", "FOLD_SCHEMA"]

FOLD_SCHEMA = "table string, group_id string, data string"
_STATE_EPOCH_TYPES = ("ConsumerGroupMetadataValue", "ShareGroupMetadataValue", "StreamsGroupMetadataValue")


def sample_path() -> str:
    """The bundled sample: ``__consumer_offsets`` segments a Kafka 4.1.1 broker wrote
    (classic, consumer, share and streams groups from several clients)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")


def _jsonable(o: Any) -> Any:
    if isinstance(o, (bytes, bytearray)):
        return bytes(o).hex()
    if isinstance(o, uuid.UUID):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(_jsonable(x) for x in o)
    if isinstance(o, dict):
        return {(k if isinstance(k, str) else "-".join(map(str, k)) if isinstance(k, tuple) else str(k)):
                _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(x) for x in o]
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: _jsonable(getattr(o, f.name)) for f in dataclasses.fields(o)}
    if hasattr(o, "_asdict"):
        return _jsonable(o._asdict())
    return o


def _fold_partition(pdf: Any) -> Any:
    """Fold one ``__consumer_offsets`` partition's rows (log order) with kcodec.offsets'
    Folder, as ``kcodec.offsets.fold`` does for segment files."""
    import pandas as pd
    from kcodec.offsets import Folder, decode_record
    pdf = pdf.sort_values(["offset"], kind="stable")
    f = Folder()
    part = None
    corrupt = 0
    for row in pdf.itertuples(index=False):
        part = row.source
        if row.error is not None and not (isinstance(row.error, float)):
            f.errors.append(f"{row.file}@{row.batch_position}: {row.error}")
            corrupt += 1
            continue
        ts = int(row.timestamp_ms)
        if row.is_control:
            f.add(None, partition=part, offset=int(row.offset), timestamp=ts,
                  producer_id=int(row.producer_id), control=row.control_type)
            continue
        key = None if row.key is None else bytes(row.key)
        value = None if row.value is None else bytes(row.value)
        f.add(decode_record(key, value, errors="report"), partition=part, offset=int(row.offset),  # type: ignore[arg-type]
              timestamp=ts, transactional=bool(row.is_transactional), producer_id=int(row.producer_id))
    st = f.state()
    out: List[Dict[str, Any]] = []
    for gid, g in st.groups.items():
        gd = {"group_id": gid, "type": g.type, "state": g.state, "generation": g.generation,
              "protocol_type": g.protocol_type, "protocol": g.protocol, "leader": g.leader,
              "current_state_timestamp": g.current_state_timestamp,
              "target_assignment_epoch": g.target_assignment_epoch, "members": len(g.members),
              "offsets": len(g.offsets), "partition": part}
        out.append({"table": "groups", "group_id": gid, "data": json.dumps(gd)})
        for mid, m in g.members.items():
            md = {"group_id": gid, "member_id": mid, "instance_id": m.instance_id, "client_id": m.client_id,
                  "client_host": m.client_host, "rack_id": m.rack_id,
                  "session_timeout_ms": m.session_timeout_ms, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                  "subscribed_topics": m.subscribed_topics, "member_epoch": m.member_epoch,
                  "assigned": json.dumps(_jsonable(m.assigned)) if m.assigned is not None else None}
            out.append({"table": "members", "group_id": gid, "data": json.dumps(md)})
        for (topic, p), c in g.offsets.items():
            od = {"group_id": gid, "topic": topic, "partition": p, "offset": c.offset,
                  "leader_epoch": c.leader_epoch, "metadata": c.metadata,
                  "commit_timestamp": c.commit_timestamp, "expire_timestamp": c.expire_timestamp,
                  "log_offset": c.log_offset, "transactional": c.transactional}
            out.append({"table": "committed_offsets", "group_id": gid, "data": json.dumps(od)})
    summary = {"partition": part, "records": st.records_read, "deleted_groups": sorted(st.deleted_groups),
               "aborted_records": st.aborted_records,
               "open_transactions": sum(st.open_transactions.values()),
               "unknown_records": {str(k): v for k, v in st.unknown_records.items()}, "errors": st.errors,
               "corrupt_batches": corrupt}
    out.append({"table": "partitions", "group_id": None, "data": json.dumps(summary)})
    return pd.DataFrame(out, columns=["table", "group_id", "data"])


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
                   "corrupt_batches long"),
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


def _input(spark: Any, path: str) -> Any:
    """A DataFrame with the columns the job needs, from segments or a Kafka-source dump."""
    from pyspark.sql import functions as F
    from ._source import read_log, segment_files
    low = path.rstrip("/").lower()
    if low.endswith(".parquet") or low.endswith(".json") or low.endswith(".jsonl"):
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
                    "batch_position": F.lit(None).cast("long")}
        df = df.withColumn("timestamp", ts.cast("timestamp"))
        for c, v in defaults.items():
            if c not in cols:
                df = df.withColumn(c, v)
        return df
    if not segment_files(spark, [path]):
        raise SystemExit(f"kcodec analyze: no segment files (*.log) under {path}")
    return read_log(spark, path)


class _SparkProgress:
    """Spark's active stages as a rich progress bar (polled from the status tracker)."""

    def __init__(self, spark: Any, enabled: bool) -> None:
        self.sc = spark.sparkContext
        self.enabled = enabled
        self.step = ""
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._progress: Any = None

    def __enter__(self) -> "_SparkProgress":
        if self.enabled:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
            self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                      TextColumn("{task.completed}/{task.total} tasks"), TimeElapsedColumn(),
                                      transient=True)
            self._progress.start()
            self._task = self._progress.add_task("starting", total=None)
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def _poll(self) -> None:
        tracker = self.sc.statusTracker()
        while not self._stop.wait(0.25):
            try:
                done = total = 0
                for sid in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(sid)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
                self._progress.update(self._task, description=self.step, completed=done, total=total or None)
            except Exception:       # the gateway can go away at shutdown
                return

    def set(self, step: str) -> None:
        self.step = step
        if self._progress is not None:
            self._progress.update(self._task, description=step)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)
        if self._progress is not None:
            self._progress.stop()


def _type_names() -> Any:
    """A map column from record type to its name (``OffsetCommit``, ...) for the tables."""
    from pyspark.sql import functions as F
    from kcodec.offsets import record_types
    return F.create_map(*[c for rt, info in sorted(record_types().items())
                          for c in (F.lit(rt).cast("short"), F.lit(info.name))])


def analyze(spark: Any, path: Optional[str] = None, out: Optional[str] = None, *,
            downgrade_to: Optional[str] = None, progress: bool = False,
            bucket_seconds: Optional[int] = None) -> Analysis:
    """Run the job on ``path`` (default: the bundled sample); write Parquet tables
    ``records``, ``committed_offsets``, ``groups``, ``members``, ``flagged``,
    ``partitions`` under ``out`` (when given) and return the :class:`Analysis`."""
    from pyspark.sql import functions as F
    from .functions import from_consumer_offsets
    t0 = time.monotonic()
    src = path or sample_path()
    with _SparkProgress(spark, progress) as prog:
        prog.set("reading and decoding")
        raw = _input(spark, src)
        if "topic" not in raw.columns:
            raw = raw.withColumn("topic", F.lit(None).cast("string"))
        raw = raw.withColumn("source", F.when(F.col("topic").isNotNull() & F.col("partition").isNotNull(),
                                              F.concat_ws("-", "topic", F.col("partition").cast("string")))
                             .otherwise(F.col("file")))
        raw = raw.cache()
        recs = (raw.where(F.col("error").isNull() & ~F.col("is_control"))
                .select(F.col("topic").alias("log_topic"), F.col("partition").alias("log_partition"),
                        F.col("offset").alias("log_offset"), "timestamp", "producer_id", "is_transactional",
                        from_consumer_offsets("key", "value", {"record_types": "all"}).alias("r"))
                # topic/partition: the decoded record's (an offset commit's); log_*: where it is
                .select("log_topic", "log_partition", "log_offset", "timestamp", "producer_id",
                        "is_transactional", "r.*")
                .withColumn("type_name", _type_names()[F.col("record_type")])
                .cache())
        stats = recs.agg(F.count("*").alias("n"), F.min("timestamp").alias("lo"), F.max("timestamp").alias("hi"),
                         F.sum((F.col("_error").isNotNull() | F.col("unknown") | F.col("newer_than_known"))
                               .cast("long")).alias("flagged")).first()
        flagged = recs.where(F.col("_error").isNotNull() | F.col("unknown") | F.col("newer_than_known"))
        corrupt = raw.where(F.col("error").isNotNull())

        prog.set("folding group state")
        folded = (raw.select("source", "offset", F.col("timestamp").cast("double").alias("ts"), "key", "value",
                             "is_control", "control_type", "is_transactional", "producer_id", "error",
                             "file", "batch_position")
                  .withColumn("timestamp_ms", F.round(F.col("ts") * 1000).cast("long")).drop("ts")
                  .groupBy("source").applyInPandas(_fold_partition, FOLD_SCHEMA))
        # the folded state is small (groups, members, offsets, not records): one job brings it home
        fold_rows: Dict[str, List[Dict[str, Any]]] = {name: [] for name in _TABLE_SCHEMAS}
        for r in folded.collect():
            fold_rows[r.table].append(json.loads(r.data))
        groups = sorted(fold_rows["groups"], key=lambda g: g["group_id"])
        parts = fold_rows["partitions"]

        if out:
            prog.set("writing Parquet")
            os.makedirs(out, exist_ok=True) if "://" not in out else None
            recs.write.mode("overwrite").parquet(os.path.join(out, "records"))
            (flagged.select("log_topic", "log_partition", "log_offset", "timestamp", "record_type", "type_name",
                            "group", "unknown", "newer_than_known", F.col("_error").alias("error"))
             .unionByName(corrupt.select(F.col("topic").alias("log_topic"), F.col("partition").alias("log_partition"),
                                         F.col("offset").alias("log_offset"), "timestamp",
                                         F.lit(None).cast("short").alias("record_type"),
                                         F.lit(None).cast("string").alias("type_name"),
                                         F.lit(None).cast("string").alias("group"), F.lit(False).alias("unknown"),
                                         F.lit(False).alias("newer_than_known"), "error"))
             .write.mode("overwrite").parquet(os.path.join(out, "flagged")))
            for name, schema in _TABLE_SCHEMAS.items():
                spark.createDataFrame(fold_rows[name], schema).coalesce(1).write.mode("overwrite").parquet(
                    os.path.join(out, name))

        prog.set("summarising")
        counts: Dict[tuple, int] = {}
        for g in groups:
            k = (g["type"], g["state"], g["protocol_type"])
            counts[k] = counts.get(k, 0) + 1
        by_state = [{"type": k[0], "state": k[1], "protocol_type": k[2], "count": v}
                    for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], kv[0][1]))]
        assignors = [r.asDict() for r in recs.where(F.col("GroupMetadataValue").isNotNull())
                     .select("group", F.col("GroupMetadataValue.protocol").alias("assignor"))
                     .union(recs.where(F.col("ConsumerGroupMemberMetadataValue").isNotNull())
                            .select("group", F.col("ConsumerGroupMemberMetadataValue.serverAssignor")))
                     .where(F.col("assignor").isNotNull() & (F.col("assignor") != ""))
                     .groupBy("assignor").agg(F.countDistinct("group").alias("groups"))
                     .orderBy(F.desc("groups"), "assignor").collect()]
        if bucket_seconds is None:
            width = (stats.hi - stats.lo).total_seconds() if stats.lo is not None else 0
            bucket_seconds = max(1, int(width // 40) or 1)
        bucket = (F.floor(F.col("timestamp").cast("double") / bucket_seconds) * bucket_seconds).cast("long")
        # a rebalance = a new generation (classic) or group epoch (consumer/share/streams)
        gens = recs.where(F.col("GroupMetadataValue").isNotNull()).select(
            "group", F.col("GroupMetadataValue.generation").cast("long").alias("gen"), "timestamp")
        for t in _STATE_EPOCH_TYPES:
            gens = gens.union(recs.where(F.col(t).isNotNull()).select(
                "group", F.col(f"{t}.epoch").cast("long").alias("gen"), "timestamp"))
        rebal = (gens.where(F.col("gen") > 0).groupBy("group", "gen").agg(F.min("timestamp").alias("timestamp"))
                 .select(F.lit("rebalance").alias("kind"), bucket.alias("bucket")))
        commits = (recs.where(F.col("OffsetCommitValue").isNotNull() | F.col("LegacyOffsetCommitValue").isNotNull())
                   .select(F.lit("commit").alias("kind"), bucket.alias("bucket")))
        series = rebal.union(commits).groupBy("kind", "bucket").count().orderBy("bucket").collect()
        rebalances = [{"bucket": r.bucket, "count": r["count"]} for r in series if r.kind == "rebalance"]
        commit_rows = [{"bucket": r.bucket, "count": r["count"]} for r in series if r.kind == "commit"]
        n_records = stats.n
        n_flagged = stats.flagged or 0
        n_corrupt = sum(p.get("corrupt_batches") or 0 for p in parts)
        errors = [e for p in parts for e in (p["errors"] or [])]
        unknown: Dict[str, int] = {}
        for p in parts:
            for k, v in (p["unknown_records"] or {}).items():
                unknown[k] = unknown.get(k, 0) + v
        downgrade = None
        if downgrade_to:
            prog.set(f"checking a downgrade to {downgrade_to}")
            downgrade = _downgrade(src, downgrade_to)
        raw.unpersist()
        recs.unpersist()
    return Analysis(src, out, n_records, n_flagged, n_corrupt, groups, by_state, assignors, rebalances,
                    commit_rows, bucket_seconds, sorted(g for p in parts for g in (p["deleted_groups"] or [])),
                    sum(p["aborted_records"] or 0 for p in parts), unknown, errors, downgrade,
                    time.monotonic() - t0)


def _downgrade(src: str, to: str) -> List[Dict[str, Any]]:
    """Downgrade blockers (:func:`kcodec.offsets.check_downgrade`); it reads local
    segment files, so this runs on the driver for local paths only."""
    from kcodec.offsets import check_downgrade
    if "://" in src and not src.startswith("file:"):
        return [{"outcome": "unchecked", "reason": "the downgrade check reads local segment files only"}]
    rep = check_downgrade(src.replace("file:", ""), to=to)
    return [_jsonable(f) for f in rep.summary()]


# --------------------------------------------------------------------------- output for people

def print_summary(a: Analysis, console: Any = None) -> None:
    """The summary as rich tables."""
    from rich.console import Console
    from rich.table import Table
    c = console or Console()
    c.print(f"[bold]kcodec analyze[/bold] {a.source}: {a.records:,} records, {len(a.groups)} groups, "
            f"{a.flagged} records flagged, {a.corrupt_batches} corrupt batches ({a.seconds:.1f} s)")
    t = Table(title="Groups")
    for col in ("group", "type", "state", "epoch", "protocol", "members", "offsets"):
        t.add_column(col, justify="right" if col in ("epoch", "members", "offsets") else "left")
    for g in a.groups:
        t.add_row(g["group_id"], g["type"], g["state"], "-" if g["generation"] is None else str(g["generation"]),
                  g["protocol"] or g["protocol_type"] or "-", str(g["members"]), str(g["offsets"]))
    c.print(t)
    t = Table(title="Groups by state and protocol")
    for col in ("type", "state", "protocol type", "groups"):
        t.add_column(col)
    for r in a.by_state:
        t.add_row(r["type"], r["state"], r["protocol_type"] or "-", str(r["count"]))
    c.print(t)
    t = Table(title="Assignors in use")
    t.add_column("assignor")
    t.add_column("groups", justify="right")
    for r in a.assignors:
        t.add_row(r["assignor"], str(r["groups"]))
    c.print(t)
    t = Table(title=f"Rebalances and commits per {a.bucket_seconds} s")
    for col in ("from (UTC)", "rebalances", "commits"):
        t.add_column(col)
    reb = {r["bucket"]: r["count"] for r in a.rebalances}
    com = {r["bucket"]: r["count"] for r in a.commits}
    for b in sorted(set(reb) | set(com)):
        t.add_row(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(b)), str(reb.get(b, 0)), str(com.get(b, 0)))
    c.print(t)
    if a.deleted_groups:
        c.print("deleted groups: " + ", ".join(a.deleted_groups))
    if a.aborted_records:
        c.print(f"records of aborted transactions: {a.aborted_records}")
    if a.unknown_records:
        c.print("unknown record types (kept as data): " + ", ".join(f"{k}: {v}" for k, v in a.unknown_records.items()))
    for e in a.errors[:20]:
        c.print(f"[red]flagged:[/red] {e}")
    if a.downgrade is not None:
        if not a.downgrade:
            c.print("downgrade: no blockers")
        for f in a.downgrade:
            c.print(f"downgrade blocker: {f}")
    if a.out:
        c.print(f"Parquet tables in {a.out}: records, committed_offsets, groups, members, flagged, partitions")


# the HTML report lives in kcodec.spark.report; re-exported for existing callers
from .report import write_report  # noqa: E402,F401
