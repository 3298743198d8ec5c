"""The fold of one ``__consumer_offsets`` partition inside a Spark task.

The partition's files stream in log order through the columnar path ``kcodec offsets
groups`` uses (:func:`kcodec.offsets.columns.iter_offset_columns` into
:meth:`kcodec.offsets.Folder.add_columns`), so a task holds the fold state (live keys),
never the history; what it sends back is small: the partition's groups, members,
committed offsets, a summary and the counts behind the time series, as JSON rows.

No PySpark here: this runs in Spark's Python workers.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

__all__ = ["fold_partition", "fold_rows", "FLAGGED_CAP", "rows_of_state", "load_row", "PackedRows",
           "TIMELINE_TABLES", "DUMP_FOLD_SCHEMA", "partition_rows"]

FLAGGED_CAP = 1000          # flagged rows kept per partition (the total is always counted)
_EPOCH_TYPES = {"GroupMetadata": "generation", "ConsumerGroupMetadata": "epoch",
                "ShareGroupMetadata": "epoch", "StreamsGroupMetadata": "epoch"}
_COMMIT_TYPES = ("OffsetCommit", "LegacyOffsetCommit")
_MAX_BUCKETS = 100_000      # commit-count buckets per partition before they coarsen
# the report's timeline (kcodec.offsets.timeline): rows that grow with the history's length
TIMELINE_TABLES = ("group_events", "commit_counts")
# fold_dump_batches' rows (mapInArrow): a row's JSON in data, or its compressed JSON in packed
DUMP_FOLD_SCHEMA = "table string, data string, packed binary"


def _jsonable(o: Any) -> Any:
    import dataclasses
    import uuid
    if isinstance(o, (bytes, bytearray)):
        return bytes(o).hex()
    if isinstance(o, uuid.UUID):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(_jsonable(x) for x in o)
    if isinstance(o, dict):
        return {(k if isinstance(k, str) else "-".join(map(str, k)) if isinstance(k, tuple) else str(k)):
                _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, PackedRows)):
        return [_jsonable(x) for x in o]
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return {f.name: _jsonable(getattr(o, f.name)) for f in dataclasses.fields(o)}
    if hasattr(o, "_asdict"):
        return _jsonable(o._asdict())
    return o


class _Stats:
    """What the summary needs besides the state, gathered per chunk with NumPy."""

    def __init__(self) -> None:
        self.records = 0
        self.lo: Optional[int] = None
        self.hi: Optional[int] = None
        self.resolution = 1             # seconds per commit-count bucket
        self.commits: Dict[int, int] = {}
        self.gens: Dict[Tuple[str, int], int] = {}    # (group, generation/epoch) -> first ms
        self.assignors: set = set()                    # (assignor, group)
        self.flagged = 0
        self.flagged_rows: List[Dict[str, Any]] = []

    def _count(self, secs: np.ndarray) -> None:
        if not len(secs):
            return
        u, c = np.unique(secs // self.resolution, return_counts=True)
        for k, v in zip(u.tolist(), c.tolist()):
            self.commits[k] = self.commits.get(k, 0) + v
        if len(self.commits) > _MAX_BUCKETS:       # a long history: minutes, then hours...
            f = 60 if self.resolution < 3600 else 24
            merged: Dict[int, int] = {}
            for k, v in self.commits.items():
                merged[k // f] = merged.get(k // f, 0) + v
            self.commits = merged
            self.resolution *= f

    def flag(self, row: Dict[str, Any], record: bool = True) -> None:
        """A flagged row (kept up to FLAGGED_CAP); ``record``: it is a record (counted in
        ``flagged``), not a corrupt batch (counted by the caller as such)."""
        self.flagged += record
        if len(self.flagged_rows) < FLAGGED_CAP:
            self.flagged_rows.append(row)

    def add(self, cols: Dict[str, Any], path: Optional[str]) -> None:
        kind = cols["kind"]
        ts = cols["timestamp"]
        data = kind != 3
        n = int(data.sum())
        self.records += n
        if n:
            t = ts[data]
            lo, hi = int(t.min()), int(t.max())
            self.lo = lo if self.lo is None else min(self.lo, lo)
            self.hi = hi if self.hi is None else max(self.hi, hi)
        secs = [ts[kind == 0] // 1000]
        offs = cols["offset"]
        extra = []
        for i, rec in cols["other"]:
            name = rec.type_name
            if rec.error or rec.unknown or rec.newer_than_known:
                reason = rec.error or ("unknown record type" if rec.unknown else "value version newer than known")
                self.flag({"file": path, "position": None, "offset": int(offs[i]),
                           "record_type": rec.record_type, "reason": reason})
            if rec.error or rec.value is None:
                continue
            if name in _COMMIT_TYPES:
                extra.append(int(ts[i]) // 1000)
            field = _EPOCH_TYPES.get(name)
            if field is not None:
                gen = rec.value.get(field)
                gid = rec.group_id
                if gen is not None and gen > 0 and gid is not None:
                    k = (gid, int(gen))
                    t0 = int(ts[i])
                    if k not in self.gens or t0 < self.gens[k]:
                        self.gens[k] = t0
            if name == "GroupMetadata" and rec.value.get("protocol"):
                self.assignors.add((rec.value["protocol"], rec.group_id))
            elif name == "ConsumerGroupMemberMetadata" and rec.value.get("serverAssignor"):
                self.assignors.add((rec.value["serverAssignor"], rec.group_id))
        if extra:
            secs.append(np.array(extra, np.int64))
        self._count(np.concatenate(secs))


def _timeline() -> Any:
    try:
        from kcodec.offsets.timeline import Timeline  # lands with the report's data
    except ImportError:
        return None
    return Timeline()


def _group_summary(g: Any) -> Dict[str, Any]:
    try:
        from kcodec.offsets.timeline import group_summary
    except ImportError:
        return {}
    try:
        return dict(group_summary(g))
    except Exception:       # the report's extras never sink the fold
        return {}


def rows_of_state(st: Any, part: Optional[str]) -> Iterator[Tuple[str, str]]:
    """The folded state of one partition as ``(table, JSON)`` rows."""
    for gid, g in st.groups.items():
        gd = {"group_id": gid, "type": g.type, "state": g.state, "generation": g.generation,
              "protocol_type": g.protocol_type, "protocol": g.protocol, "leader": g.leader,
              "current_state_timestamp": g.current_state_timestamp,
              "target_assignment_epoch": g.target_assignment_epoch, "members": len(g.members),
              "offsets": len(g.offsets), "partition": part}
        extra = _group_summary(g)
        if extra:
            gd["summary"] = _jsonable(extra)
        yield "groups", json.dumps(gd)
        for mid, m in g.members.items():
            md = {"group_id": gid, "member_id": mid, "instance_id": m.instance_id, "client_id": m.client_id,
                  "client_host": m.client_host, "rack_id": m.rack_id,
                  "session_timeout_ms": m.session_timeout_ms, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                  "subscribed_topics": m.subscribed_topics, "member_epoch": m.member_epoch,
                  "assigned": json.dumps(_jsonable(m.assigned)) if m.assigned is not None else None}
            yield "members", json.dumps(md)
        for (topic, p), c in g.offsets.items():
            od = {"group_id": gid, "topic": topic, "partition": p, "offset": c.offset,
                  "leader_epoch": c.leader_epoch, "metadata": c.metadata,
                  "commit_timestamp": c.commit_timestamp, "expire_timestamp": c.expire_timestamp,
                  "log_offset": c.log_offset, "transactional": c.transactional}
            yield "committed_offsets", json.dumps(od)


def _pack(doc: Any) -> bytes:
    import cramjam
    return bytes(cramjam.zstd.compress(json.dumps(doc).encode(), level=1))


def load_row(data: Any) -> Any:
    """One ``(table, data)`` row's data as the fold wrote it: JSON, or zstd-compressed
    JSON bytes (:func:`fold_partition`'s ``partitions`` and timeline rows)."""
    if isinstance(data, (bytes, bytearray)):
        import cramjam
        data = bytes(cramjam.zstd.decompress(data))
    return json.loads(data)


class PackedRows(Sequence):
    """A read-only list of JSON rows kept as zstd-compressed JSON arrays (one per folded
    partition, ~19x smaller than the Python dicts) and parsed a chunk at a time when
    iterated: the timeline's rows grow with the history's length, and the driver holds
    them for the summary and the report without holding them as objects."""

    def __init__(self, chunks: Optional[List[Tuple[bytes, int]]] = None) -> None:
        self._chunks: List[Tuple[bytes, int]] = list(chunks or [])     # (packed JSON array, rows)

    def add(self, rows: "PackedRows") -> None:
        """Append another PackedRows' chunks."""
        self._chunks += rows._chunks

    def __len__(self) -> int:
        return sum(n for _, n in self._chunks)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for data, _ in self._chunks:
            yield from load_row(data)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(self)[i]
        if i < 0:
            i += len(self)
        for data, n in self._chunks:
            if 0 <= i < n:
                return load_row(data)[i]
            i -= n
        raise IndexError("PackedRows index out of range")

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"PackedRows({len(self)} rows in {len(self._chunks)} chunks)"

    def __reduce__(self) -> Any:
        return PackedRows, (self._chunks,)


def _summary(part: Optional[str], st: Any, stats: "_Stats", corrupt: int) -> Dict[str, Any]:
    """The ``partitions`` row of one folded partition (its totals, the counts behind the
    time series, its flagged rows), JSON-able."""
    return {"partition": part, "records": stats.records, "deleted_groups": sorted(st.deleted_groups),
            "aborted_records": st.aborted_records,
            "open_transactions": sum(st.open_transactions.values()),
            "unknown_records": {str(k): v for k, v in st.unknown_records.items()},
            "errors": st.errors, "corrupt_batches": corrupt, "flagged": stats.flagged,
            "flagged_rows": stats.flagged_rows, "lo": stats.lo, "hi": stats.hi,
            "resolution": stats.resolution,
            "commits": [[k, v] for k, v in sorted(stats.commits.items())],
            "gens": [[g, e, t] for (g, e), t in stats.gens.items()],
            "assignors": sorted([a, g] for a, g in stats.assignors)}


def partition_rows(part: Optional[str], st: Any, stats: "_Stats", tl: Any, corrupt: int
                   ) -> Iterator[Tuple[str, Any]]:
    """A folded partition's ``(table, data)`` rows: its state as JSON, then its
    ``partitions`` row and the timeline's rows as zstd-compressed JSON bytes.

    The timeline grows with the history (every group event, commits per group, topic and
    minute): compressed (~19x), it passes through the JVM (task result, collect) and stays
    in the driver (PackedRows) as a few MB, not hundreds.  Its rows follow their
    partition's row (collect keeps the order); the summary says how many there are."""
    yield from rows_of_state(st, part)
    result = tl.result() if tl is not None else {}       # JSON-able as it is
    timeline = {k: result.get(k, []) for k in TIMELINE_TABLES}
    doc = _summary(part, st, stats, corrupt)
    doc.update({f"{k}_rows": len(v) for k, v in timeline.items()})
    yield "partitions", _pack(doc)
    del doc, result
    for k in TIMELINE_TABLES:
        yield k, _pack(timeline.pop(k))


def fold_partition(part: str, files: List[str], *, chunk_size: Optional[int] = None
                   ) -> Iterator[Tuple[str, str]]:
    """Fold one partition's ``files`` (its segments, in log order, any path
    :func:`kcodec.spark._scan.open_input` opens) and yield its ``(table, JSON)`` rows:
    ``groups``, ``members``, ``committed_offsets`` and one ``partitions`` row (summary,
    counts for the time series, flagged rows, the report's timeline) and a ``corrupt`` row
    per corrupt batch (as :func:`kcodec.spark.read_log` gives it: topic, partition, file,
    batch_position, error)."""
    from kcodec.log import DEFAULT_CHUNK
    from kcodec.offsets import Folder
    from kcodec.offsets.columns import iter_offset_columns
    from ._scan import open_input
    from ._scan import topic_partition
    f = Folder()
    tl = _timeline()
    stats = _Stats()
    corrupt = 0
    bad: List[str] = []
    for path in files:
        src = open_input(path)
        topic, pnum = topic_partition(path)
        try:
            for cols in iter_offset_columns(src, chunk_size=chunk_size or DEFAULT_CHUNK):
                for e in cols["errors"]:
                    corrupt += 1
                    # the row read_log gives a corrupt batch, so analyze's flagged table
                    # needs no second scan of the log to find them
                    bad.append(json.dumps({"topic": topic, "partition": pnum, "file": path,
                                           "batch_position": e.position,
                                           "error": f"{e.reason}: {e.message} (skipped to {e.skipped_to})"}))
                    f.errors.append(str(e))
                    stats.flag({"file": e.file, "position": e.position, "offset": None,
                                "record_type": None, "reason": f"{e.reason}: {e.message}"}, record=False)
                f.add_columns(cols, partition=part)
                if tl is not None:
                    tl.add_columns(cols, partition=part)
                stats.add(cols, path)
        finally:
            src.close()
    yield from partition_rows(part, f.state(), stats, tl, corrupt)
    for row in bad:
        yield "corrupt", row


def fold_rows(items: Iterator[Tuple[str, List[str]]]) -> Iterator[Tuple[str, str]]:
    """``mapPartitions`` body: the rows of each ``(partition, files)`` of a Spark partition."""
    for part, files in items:
        yield from fold_partition(part, files)


def fold_dump_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """``mapInArrow`` body for a Kafka-source dump (rows with ``source``, ``offset``,
    ``timestamp_ms``, ``key``, ``value``, ``is_control``, ``control_type``,
    ``is_transactional``, ``producer_id``, sorted by source and offset within the Spark
    partition): each source partition's rows stream, a run of rows at a time, through the
    columnar fold a segment takes (:func:`kcodec.offsets.columns.record_columns` into
    :class:`kcodec.offsets.Folder`), then its rows come out as :func:`fold_partition`'s do,
    in :data:`DUMP_FOLD_SCHEMA` (JSON in ``data``, compressed rows in ``packed``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from kcodec.offsets import Folder
    from kcodec.offsets.columns import record_columns
    cur: Optional[str] = None
    f: Any = None
    tl: Any = None
    stats = _Stats()

    def flush() -> Any:
        # JSON rows in data, compressed ones in packed (DUMP_FOLD_SCHEMA)
        rows = list(partition_rows(cur, f.state(), stats, tl, 0))
        return pa.RecordBatch.from_pydict(
            {"table": [t for t, _ in rows], "data": [None if isinstance(d, bytes) else d for _, d in rows],
             "packed": [d if isinstance(d, bytes) else None for _, d in rows]},
            schema=pa.schema([("table", pa.string()), ("data", pa.string()), ("packed", pa.binary())]))

    for b in batches:
        n = b.num_rows
        if not n:
            continue
        source = b.column("source")
        # the rows come sorted by source: cut the batch where the source changes
        cuts = [0]
        if n > 1:
            changed = pc.fill_null(pc.not_equal(source.slice(1), source.slice(0, n - 1)), True)
            cuts += (np.flatnonzero(np.asarray(changed, bool)) + 1).tolist()
        cuts.append(n)
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            run = b.slice(lo, hi - lo)
            src = source[lo].as_py()
            if f is None or src != cur:
                if f is not None:
                    yield flush()
                cur, f, tl, stats = src, Folder(), _timeline(), _Stats()
            control = run.column("control_type")
            control = pc.if_else(run.column("is_control"), pc.fill_null(control, "UNKNOWN"),
                                 pa.scalar(None, pa.string()))
            cols = record_columns(run.column("key"), run.column("value"), run.column("offset"),
                                  run.column("timestamp_ms"), producer_id=run.column("producer_id"),
                                  transactional=run.column("is_transactional"), control_type=control)
            f.add_columns(cols, partition=cur)
            if tl is not None:
                tl.add_columns(cols, partition=cur)
            stats.add(cols, None)
    if f is not None:
        yield flush()
