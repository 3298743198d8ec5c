"""The history of a KRaft cluster's metadata, from its ``__cluster_metadata`` log.

:func:`metadata_history` reads a ``__cluster_metadata`` tree (``.log`` segments and
``.checkpoint`` snapshots) with :func:`kcodec.spark.read_log` and
:func:`kcodec.spark.from_metadata_record` (decoded in the executors, only the fields the
tables need), brings the few record types it follows to the driver and replays them in
offset order into small tables, one row per change, each with the record's ``offset``
and ``timestamp``:

- ``topics``: topics created (TopicRecord) and deleted (RemoveTopicRecord);
- ``partitions``: partitions created (PartitionRecord) and every leader or ISR change
  (PartitionChangeRecord), with the leader and ISR before and after;
- ``isr_by_broker``: the same per broker: a broker that became or stopped being a
  partition's leader, joined or left its ISR (ISR expands and shrinks);
- ``brokers``: registrations (RegisterBrokerRecord), fencing and unfencing
  (FenceBrokerRecord, UnfenceBrokerRecord, BrokerRegistrationChangeRecord), controlled
  shutdowns and unregistrations;
- ``features``: finalized feature levels (FeatureLevelRecord: ``metadata.version`` and
  the others), with the level before.

Snapshots summarise the log before their end offset: their records are replayed only
where the retained log does not cover those offsets (``source`` says which file a row
comes from), so no change is counted twice; ``bootstrap.checkpoint`` only when there is
no log at all.
"""
from __future__ import annotations

import base64
import os
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple

__all__ = ["metadata_history", "print_metadata_history", "MetadataHistory", "HISTORY_RECORD_TYPES", "TABLES"]

#: The record types the history follows.
HISTORY_RECORD_TYPES = (
    "TopicRecord", "RemoveTopicRecord", "PartitionRecord", "PartitionChangeRecord", "RegisterBrokerRecord",
    "UnregisterBrokerRecord", "BrokerRegistrationChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
    "FeatureLevelRecord",
)

_FIELDS = [
    "record_type", "TopicRecord.name", "TopicRecord.topicId", "RemoveTopicRecord.topicId",
    "PartitionRecord.partitionId", "PartitionRecord.topicId", "PartitionRecord.replicas", "PartitionRecord.isr",
    "PartitionRecord.leader", "PartitionRecord.leaderEpoch",
    "PartitionChangeRecord.partitionId", "PartitionChangeRecord.topicId", "PartitionChangeRecord.isr",
    "PartitionChangeRecord.leader", "PartitionChangeRecord.replicas",
    "RegisterBrokerRecord.brokerId", "RegisterBrokerRecord.brokerEpoch", "RegisterBrokerRecord.rack",
    "RegisterBrokerRecord.fenced", "RegisterBrokerRecord.inControlledShutdown",
    "UnregisterBrokerRecord.brokerId", "UnregisterBrokerRecord.brokerEpoch",
    "BrokerRegistrationChangeRecord.brokerId", "BrokerRegistrationChangeRecord.brokerEpoch",
    "BrokerRegistrationChangeRecord.fenced", "BrokerRegistrationChangeRecord.inControlledShutdown",
    "FenceBrokerRecord.id", "FenceBrokerRecord.epoch", "UnfenceBrokerRecord.id", "UnfenceBrokerRecord.epoch",
    "FeatureLevelRecord.name", "FeatureLevelRecord.featureLevel",
]

#: table name -> its columns, in order
TABLES: Dict[str, Tuple[str, ...]] = {
    "topics": ("offset", "timestamp", "event", "topic", "topic_id", "source"),
    "partitions": ("offset", "timestamp", "topic", "partition", "event", "leader_before", "leader",
                   "isr_before", "isr", "source"),
    "isr_by_broker": ("offset", "timestamp", "broker", "topic", "partition", "event", "source"),
    "brokers": ("offset", "timestamp", "broker", "epoch", "event", "rack", "source"),
    "features": ("offset", "timestamp", "feature", "level_before", "level", "source"),
}

_NO_LEADER_CHANGE = -2      # PartitionChangeRecord.leader's default: the leader did not change
_SNAPSHOT = re.compile(r"(\d+)-(\d+)\.checkpoint$")


def _topic_id(raw: Any) -> Optional[str]:
    """Kafka's text form of a topic id (``Uuid.toString``: URL-safe base64, no padding)."""
    if raw is None:
        return None
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii").rstrip("=")


def _ordered(rows: List[Any]) -> List[Any]:
    """The rows to replay, in order: snapshot records only where the retained log does not
    cover their offsets (the newest such snapshot), the bootstrap snapshot only without a
    log, then the log by offset."""
    log = [r for r in rows if str(r["file"]).endswith(".log")]
    snaps: Dict[str, int] = {}
    for r in rows:
        base = os.path.basename(str(r["file"]))
        m = _SNAPSHOT.match(base)
        if m:
            snaps[r["file"]] = int(m.group(1))
    first = min((r["offset"] for r in log), default=None)
    use = None
    if snaps:
        covered = {f: end for f, end in snaps.items() if first is None or end > first}
        older = {f: end for f, end in snaps.items() if first is not None and end <= first}
        pick = older or (covered if first is None else {})
        if pick:
            use = max(pick, key=pick.__getitem__)
    out = []
    if use is not None:
        out += sorted((r for r in rows if r["file"] == use), key=lambda r: r["offset"])
    elif first is None:         # nothing but bootstrap.checkpoint
        out += sorted((r for r in rows if str(r["file"]).endswith("bootstrap.checkpoint")),
                      key=lambda r: r["offset"])
    if first is not None:
        lo = (snaps[use] if use is not None else -1)
        out += sorted((r for r in log if r["offset"] >= lo), key=lambda r: r["offset"])
    return out


def replay(rows: Iterable[Dict[str, Any]]) -> Dict[str, List[Dict[str, Any]]]:
    """The history tables (:data:`TABLES`) from decoded rows in replay order: each a dict
    with ``offset``, ``timestamp``, ``file`` and ``r`` (a :func:`from_metadata_record` row
    with the fields the history uses, as a dict)."""
    tables: Dict[str, List[Dict[str, Any]]] = {k: [] for k in TABLES}
    topics: Dict[Optional[str], str] = {}
    parts: Dict[Tuple[Optional[str], int], Tuple[int, List[int]]] = {}
    levels: Dict[str, int] = {}

    def add(table: str, row: Dict[str, Any], **cols: Any) -> None:
        d = {"offset": row["offset"], "timestamp": row["timestamp"], "source": os.path.basename(str(row["file"]))}
        d.update(cols)
        tables[table].append({c: d.get(c) for c in TABLES[table]})

    def broker_events(row: Dict[str, Any], topic: str, p: int, leader0: int, isr0: List[int],
                      leader: int, isr: List[int]) -> None:
        if leader != leader0:
            if leader0 >= 0:
                add("isr_by_broker", row, broker=leader0, topic=topic, partition=p, event="lost leadership")
            if leader >= 0:
                add("isr_by_broker", row, broker=leader, topic=topic, partition=p, event="became leader")
        for b in sorted(set(isr0) - set(isr)):
            add("isr_by_broker", row, broker=b, topic=topic, partition=p, event="left ISR")
        for b in sorted(set(isr) - set(isr0)):
            add("isr_by_broker", row, broker=b, topic=topic, partition=p, event="joined ISR")

    for row in rows:
        r = row["r"]
        rt = r.get("record_type")
        v = r.get(rt) if rt else None
        if v is None:
            continue
        if rt == "TopicRecord":
            tid = _topic_id(v["topicId"])
            topics[tid] = v["name"]
            add("topics", row, event="created", topic=v["name"], topic_id=tid)
        elif rt == "RemoveTopicRecord":
            tid = _topic_id(v["topicId"])
            add("topics", row, event="deleted", topic=topics.pop(tid, None), topic_id=tid)
        elif rt == "PartitionRecord":
            tid, p = _topic_id(v["topicId"]), v["partitionId"]
            topic = topics.get(tid, tid)
            isr = list(v["isr"] or [])
            parts[(tid, p)] = (v["leader"], isr)
            add("partitions", row, topic=topic, partition=p, event="created", leader_before=None,
                leader=v["leader"], isr_before=None, isr=isr)
            broker_events(row, topic, p, -1, [], v["leader"], isr)
        elif rt == "PartitionChangeRecord":
            tid, p = _topic_id(v["topicId"]), v["partitionId"]
            topic = topics.get(tid, tid)
            leader0, isr0 = parts.get((tid, p), (-1, []))
            leader = leader0 if v["leader"] == _NO_LEADER_CHANGE else v["leader"]
            isr = isr0 if v["isr"] is None else list(v["isr"])
            parts[(tid, p)] = (leader, isr)
            what = []
            if leader != leader0:
                what.append("leader")
            if set(isr) != set(isr0):
                shrink, grow = set(isr0) - set(isr), set(isr) - set(isr0)
                what.append("ISR shrink" if shrink and not grow else "ISR expand" if grow and not shrink
                            else "ISR change")
            if not what:
                what.append("replicas" if v.get("replicas") is not None else "other")
            add("partitions", row, topic=topic, partition=p, event=", ".join(what), leader_before=leader0,
                leader=leader, isr_before=isr0, isr=isr)
            broker_events(row, topic, p, leader0, isr0, leader, isr)
        elif rt == "RegisterBrokerRecord":
            add("brokers", row, broker=v["brokerId"], epoch=v["brokerEpoch"], rack=v["rack"],
                event="registered" + (" (fenced)" if v["fenced"] else "")
                + (" (in controlled shutdown)" if v["inControlledShutdown"] else ""))
        elif rt == "UnregisterBrokerRecord":
            add("brokers", row, broker=v["brokerId"], epoch=v["brokerEpoch"], event="unregistered")
        elif rt == "FenceBrokerRecord":
            add("brokers", row, broker=v["id"], epoch=v["epoch"], event="fenced")
        elif rt == "UnfenceBrokerRecord":
            add("brokers", row, broker=v["id"], epoch=v["epoch"], event="unfenced")
        elif rt == "BrokerRegistrationChangeRecord":
            # Fenced: 1 fenced, -1 unfenced, 0 unchanged; InControlledShutdown: 1 entered
            what = {1: ["fenced"], -1: ["unfenced"]}.get(v["fenced"], [])
            if v["inControlledShutdown"] == 1:
                what.append("controlled shutdown")
            add("brokers", row, broker=v["brokerId"], epoch=v["brokerEpoch"],
                event=", ".join(what) or "registration changed")
        elif rt == "FeatureLevelRecord":
            before = levels.get(v["name"])
            levels[v["name"]] = v["featureLevel"]
            add("features", row, feature=v["name"], level_before=before, level=v["featureLevel"])
    return tables


class MetadataHistory(Dict[str, List[Dict[str, Any]]]):
    """:func:`metadata_history`'s tables (a dict: table name -> rows), plus
    :attr:`errors`: what could not be read, each ``{"file", "position", "offset",
    "reason", "corrupt"}`` (a corrupt batch, ``corrupt`` True, at its byte ``position``,
    none of whose records is in the tables; or a record that does not decode, at its
    ``offset``), in log order."""

    errors: List[Dict[str, Any]]

    def __init__(self, tables: Dict[str, List[Dict[str, Any]]],
                 errors: Optional[List[Dict[str, Any]]] = None) -> None:
        super().__init__(tables)
        self.errors = list(errors or [])

    def error_lines(self) -> List[str]:
        """One line per error: ``file@position: reason`` (a corrupt batch) or
        ``file@offset N: reason`` (a record that does not decode)."""
        return [f"{e['file']}@{e['position'] if e['corrupt'] else 'offset ' + str(e['offset'])}: {e['reason']}"
                for e in self.errors]


def metadata_history(spark: Any, path: "str | List[str]") -> MetadataHistory:
    """The history of the cluster's metadata under ``path`` (a ``__cluster_metadata-0``
    directory, its parent with ``bootstrap.checkpoint``, or files; any filesystem
    :func:`kcodec.spark.read_log` reads; below a directory only ``__cluster_metadata``
    partitions) as the tables of :data:`TABLES`: a list of rows (dicts) per table, in
    offset order.  Records are decoded in the executors; only the followed record
    types' few fields reach the driver.  Corrupt batches and records that do not decode
    are in :attr:`MetadataHistory.errors` (nothing of them is in the tables)."""
    from pyspark.sql import functions as F
    from kcodec.log import METADATA_TOPIC
    from ._source import _natural, read_log
    from .functions import from_metadata_record
    df = read_log(spark, path, topic=METADATA_TOPIC)
    bad = F.col("error").isNotNull()
    got = (df.where(bad | (~F.col("is_control") & F.col("value").isNotNull()))
           .select("offset", "timestamp", "file", "batch_position", "error",
                   F.when(~bad, from_metadata_record("value", {"record_types": list(HISTORY_RECORD_TYPES),
                                                                "fields": _FIELDS})).alias("r"))
           .where(bad | F.col("r.record_type").isNotNull() | F.col("r._error").isNotNull())
           .collect())
    rows, errors = [], []
    for x in got:
        if x["error"] is not None or x["r"]["_error"] is not None:
            corrupt = x["error"] is not None
            errors.append({"file": x["file"], "position": x["batch_position"],
                           "offset": None if corrupt else x["offset"],
                           "reason": x["error"] if corrupt else x["r"]["_error"], "corrupt": corrupt})
            continue
        rows.append({"offset": x["offset"], "timestamp": x["timestamp"], "file": x["file"],
                     "r": x["r"].asDict(recursive=True)})
    errors.sort(key=lambda e: (_natural(str(e["file"])), e["position"] or 0, e["offset"] or 0))
    return MetadataHistory(replay(_ordered(rows)), errors)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, list):
        return "[" + ",".join(str(x) for x in v) + "]"
    if hasattr(v, "isoformat"):
        return v.isoformat(sep=" ", timespec="milliseconds")
    return str(v)


def print_metadata_history(tables: Dict[str, List[Dict[str, Any]]], console: Any = None, *,
                           limit: int = 50) -> None:
    """Print :func:`metadata_history`'s tables as rich tables (the last ``limit`` rows of
    each; the count of the others is said)."""
    from rich.console import Console
    from rich.table import Table
    console = console or Console()
    titles = {"topics": "Topics created and deleted", "partitions": "Partition leader and ISR changes",
              "isr_by_broker": "Leadership and ISR changes per broker",
              "brokers": "Broker registrations and fencing", "features": "Feature levels"}
    for name, cols in TABLES.items():
        rows = tables.get(name) or []
        shown = rows[-limit:] if limit else rows
        title = titles.get(name, name)
        if len(shown) < len(rows):
            title += f" (last {len(shown)} of {len(rows)})"
        t = Table(title=title, title_justify="left")
        for c in cols:
            t.add_column(c, justify="right" if c in ("offset", "partition", "broker", "epoch", "level",
                                                     "level_before", "leader", "leader_before") else "left")
        for r in shown:
            t.add_row(*(_cell(r.get(c)) for c in cols))
        console.print(t)
