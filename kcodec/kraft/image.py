"""The metadata image: ``__cluster_metadata`` records and snapshots replayed the way
Kafka's MetadataDelta/MetadataImage apply them.

Topics and partitions are columnar (NumPy; a million partitions take tens of MB);
brokers, controllers, configs, quotas, ACLs, SCRAM users, delegation tokens, producer
ids and features are small dicts.  Metadata transactions are honoured: records between
BeginTransactionRecord and EndTransactionRecord are applied at the end, an
AbortTransactionRecord drops them, and a log that ends inside a transaction leaves them
out (``open_transaction`` says so).  A SnapshotHeader starts the image afresh; log
records a snapshot already contains (offsets below its end offset) are skipped.

Runs of TopicRecord / PartitionRecord / PartitionChangeRecord are decoded with the
engine's bulk path and applied column-wise; everything else record by record.
"""
from __future__ import annotations

import os
import re
import uuid as _uuid
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

import kcodec
from kcodec.errors import CodecError

from ._columns import Column, ListColumn, last_per_key
from ._log import log
from .records import CONTROL_MESSAGES, RECORD_TYPES, MetadataRecord, read_record, record_type_name

__all__ = ["MetadataImage", "Topics", "Partitions", "Issue", "replay"]

NO_LEADER_CHANGE = -2
_TOPIC, _PARTITION, _CHANGE = 2, 3, 5
_BULK = {_TOPIC: "TopicRecord", _PARTITION: "PartitionRecord", _CHANGE: "PartitionChangeRecord"}
_BEGIN, _END, _ABORT = 23, 24, 25
_ZERO_UUID = _uuid.UUID(int=0)
_LIST_FIELDS = (("replicas", "replicas"), ("isr", "isr"), ("removing_replicas", "removingReplicas"),
                ("adding_replicas", "addingReplicas"), ("elr", "eligibleLeaderReplicas"),
                ("last_known_elr", "lastKnownElr"))


class Issue(NamedTuple):
    """A record replay could not use as it is: unknown type, newer version, bad bytes, or
    a record that refers to something the image does not have."""
    offset: int
    file: Optional[str]
    api_key: Optional[int]
    version: Optional[int]
    kind: str          # unknown_type | newer_version | error | invalid
    message: str
    raw: bytes


class Topics:
    """Topic table: name and id per topic index; deleted topics keep their index."""

    def __init__(self) -> None:
        self.names: List[str] = []
        self.ids: List[_uuid.UUID] = []
        self.alive: List[bool] = []
        self.by_id: Dict[bytes, int] = {}     # uuid bytes -> index
        self.by_name: Dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def add(self, name: str, topic_id: _uuid.UUID) -> int:
        old = self.by_name.get(name)
        if old is not None and self.ids[old] != topic_id:
            self.alive[old] = False
            self.by_id.pop(self.ids[old].bytes, None)
        idx = self.by_id.get(topic_id.bytes)
        if idx is None:
            idx = len(self.names)
            self.names.append(name)
            self.ids.append(topic_id)
            self.alive.append(True)
            self.by_id[topic_id.bytes] = idx
        self.by_name[name] = idx
        return idx

    def remove(self, idx: int) -> None:
        self.alive[idx] = False
        self.by_id.pop(self.ids[idx].bytes, None)
        if self.by_name.get(self.names[idx]) == idx:
            del self.by_name[self.names[idx]]


class Partitions:
    """Partition table: one row per (topic index, partition id), NumPy columns."""

    def __init__(self) -> None:
        self.topic = Column("int32")
        self.partition = Column("int32")
        self.leader = Column("int32")
        self.leader_epoch = Column("int32")
        self.partition_epoch = Column("int32")
        self.leader_recovery_state = Column("int8")
        self.alive = Column("bool")
        self.replicas = ListColumn()
        self.isr = ListColumn()
        self.removing_replicas = ListColumn()
        self.adding_replicas = ListColumn()
        self.elr = ListColumn()
        self.last_known_elr = ListColumn()
        self.directories: List[Optional[List[_uuid.UUID]]] = []   # None: never assigned
        self.index: Dict[int, int] = {}    # (topic << 32 | partition) -> row

    def __len__(self) -> int:
        return len(self.index)

    @property
    def rows(self) -> int:
        return self.topic.n

    def nbytes(self) -> int:
        cols = [self.topic, self.partition, self.leader, self.leader_epoch, self.partition_epoch,
                self.leader_recovery_state, self.alive]
        return (sum(c.data.nbytes for c in cols)
                + sum(getattr(self, a).nbytes() for a, _ in _LIST_FIELDS))

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        get = self.index.get
        return np.fromiter((get(k, -1) for k in keys.tolist()), np.int64, len(keys))

    def row(self, r: int) -> Dict[str, Any]:
        d: Dict[str, Any] = {
            "partitionId": int(self.partition.data[r]),
            "leader": int(self.leader.data[r]),
            "leaderEpoch": int(self.leader_epoch.data[r]),
            "partitionEpoch": int(self.partition_epoch.data[r]),
            "leaderRecoveryState": int(self.leader_recovery_state.data[r]),
        }
        for attr, name in _LIST_FIELDS:
            v = getattr(self, attr).get(r)
            d[name] = [] if v is None else v
        dirs = self.directories[r]
        d["directories"] = [] if dirs is None else list(dirs)
        return d


class MetadataImage:
    """The cluster metadata as replayed from a log and/or snapshot."""

    def __init__(self) -> None:
        self.metadata_version: Optional[int] = None
        self.features: Dict[str, int] = {}          # finalized, level > 0, metadata.version apart
        self.kraft_version: int = 0                 # from KRaftVersion control records
        self.voters: Optional[dict] = None          # the last VotersRecord
        self.leader: Optional[dict] = None          # the last LeaderChange (+ "epoch")
        self.brokers: Dict[int, dict] = {}
        self.controllers: Dict[int, dict] = {}
        self.topics = Topics()
        self.partitions = Partitions()
        self.configs: Dict[Tuple[int, str], Dict[str, str]] = {}
        self.client_quotas: Dict[Tuple[Tuple[str, Optional[str]], ...], Dict[str, float]] = {}
        self.acls: Dict[_uuid.UUID, dict] = {}
        self.scram_credentials: Dict[Tuple[str, int], dict] = {}
        self.delegation_tokens: Dict[str, dict] = {}
        self.producer_ids: Optional[dict] = None
        self.zk_migration_state: Optional[int] = None
        self.last_offset: int = -1
        self.issues: List[Issue] = []
        self.record_counts: Dict[str, int] = {}
        self.versions_seen: Dict[str, int] = {}     # spec name -> highest version replayed
        self.open_transaction: Optional[str] = None
        self.aborted_transactions: int = 0

    # ------------------------------------------------------------------ views

    def finalized_features(self) -> Dict[str, int]:
        """Finalized feature levels as ``kafka-features describe`` reports them
        (metadata.version and kraft.version included)."""
        out = dict(self.features)
        if self.metadata_version is not None:
            out["metadata.version"] = self.metadata_version
        out["kraft.version"] = self.kraft_version
        return out

    def topic_names(self) -> List[str]:
        return sorted(self.topics.by_name)

    def topic(self, name: str) -> Dict[str, Any]:
        idx = self.topics.by_name[name]
        p = self.partitions
        rows = [r for r in self._topic_rows(idx)]
        return {"name": name, "topicId": self.topics.ids[idx],
                "partitions": {int(p.partition.data[r]): p.row(r) for r in rows}}

    def _topic_rows(self, idx: int) -> List[int]:
        p = self.partitions
        n = p.rows
        sel = np.nonzero((p.topic.data[:n] == idx) & p.alive.data[:n])[0]
        return sorted(sel.tolist(), key=lambda r: int(p.partition.data[r]))

    def partition(self, topic: str, partition: int) -> Dict[str, Any]:
        idx = self.topics.by_name[topic]
        r = self.partitions.index[(idx << 32) | partition]
        return self.partitions.row(r)

    def partition_count(self) -> int:
        return len(self.partitions)

    def supported_features(self) -> Dict[str, Dict[int, Dict[str, Tuple[int, int]]]]:
        """The feature ranges each registered node supports:
        ``{"brokers": {id: {feature: (min, max)}}, "controllers": {...}}``."""
        def ranges(reg: dict) -> Dict[str, Tuple[int, int]]:
            return {f["name"]: (f["minSupportedVersion"], f["maxSupportedVersion"])
                    for f in reg.get("features", [])}
        return {"brokers": {b: ranges(r) for b, r in sorted(self.brokers.items())},
                "controllers": {c: ranges(r) for c, r in sorted(self.controllers.items())}}

    def summary(self) -> Dict[str, Any]:
        return {
            "metadata.version": self.metadata_version,
            "features": self.finalized_features(),
            "topics": len(self.topics),
            "partitions": len(self.partitions),
            "brokers": sorted(self.brokers),
            "controllers": sorted(self.controllers),
            "last_offset": self.last_offset,
            "issues": len(self.issues),
            "open_transaction": self.open_transaction,
        }

    # ------------------------------------------------------------------ shell (ls / cat)

    def ls(self, path: str = "/") -> List[str]:
        """Children of an image path, in the spirit of kafka-metadata-shell."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return ["acls", "brokers", "clientQuotas", "configs", "controllers",
                    "delegationTokens", "features", "producerIds", "scramCredentials", "topics"]
        head, rest = parts[0], parts[1:]
        if head == "topics":
            if not rest:
                return self.topic_names()
            if len(rest) == 1:
                return [str(p) for p in sorted(self.topic(rest[0])["partitions"])]
            return []
        if head == "brokers":
            return [str(b) for b in sorted(self.brokers)] if not rest else []
        if head == "controllers":
            return [str(c) for c in sorted(self.controllers)] if not rest else []
        if head == "features":
            return sorted(self.finalized_features()) if not rest else []
        if head == "configs":
            if not rest:
                return sorted({_RESOURCE_TYPES.get(t, str(t)) for t, _ in self.configs})
            if len(rest) == 1:
                return sorted(n for t, n in self.configs if _RESOURCE_TYPES.get(t, str(t)) == rest[0])
            return sorted(self._configs_of(rest[0], rest[1]))
        if head == "acls":
            return sorted(str(a) for a in self.acls)
        if head == "scramCredentials":
            return sorted(f"{n}/{m}" for n, m in self.scram_credentials)
        if head == "delegationTokens":
            return sorted(self.delegation_tokens)
        if head == "clientQuotas":
            return sorted(_entity_text(e) for e in self.client_quotas)
        if head == "producerIds":
            return []
        raise KeyError(path)

    def _configs_of(self, rtype: str, name: str) -> Dict[str, str]:
        for (t, n), cfg in self.configs.items():
            if _RESOURCE_TYPES.get(t, str(t)) == rtype and n == name:
                return cfg
        raise KeyError(f"/configs/{rtype}/{name}")

    def cat(self, path: str) -> Any:
        """The value at an image path (``/topics/orders/0``, ``/features``, ``/brokers/1``)."""
        parts = [p for p in path.split("/") if p]
        if not parts:
            return self.summary()
        head, rest = parts[0], parts[1:]
        try:
            if head == "topics":
                if not rest:
                    return self.topic_names()
                t = self.topic(rest[0])
                if len(rest) == 1:
                    return t
                return t["partitions"][int(rest[1])]
            if head == "brokers":
                return self.brokers[int(rest[0])] if rest else self.brokers
            if head == "controllers":
                return self.controllers[int(rest[0])] if rest else self.controllers
            if head == "features":
                f = self.finalized_features()
                return f[rest[0]] if rest else f
            if head == "configs":
                if len(rest) == 2:
                    return self._configs_of(rest[0], rest[1])
                if len(rest) == 3:
                    return self._configs_of(rest[0], rest[1])[rest[2]]
                return self.ls(path)
            if head == "producerIds":
                return self.producer_ids
            if head == "acls":
                return self.acls[_uuid.UUID(rest[0])] if rest else list(self.acls.values())
            if head == "scramCredentials":
                if rest:
                    n, m = rest[0], int(rest[1])
                    return self.scram_credentials[(n, m)]
                return list(self.scram_credentials.values())
            if head == "delegationTokens":
                return self.delegation_tokens[rest[0]] if rest else list(self.delegation_tokens.values())
            if head == "clientQuotas":
                if rest:
                    for e, q in self.client_quotas.items():
                        if _entity_text(e) == rest[0]:
                            return q
                    raise KeyError(rest[0])
                return {_entity_text(e): q for e, q in self.client_quotas.items()}
        except (KeyError, IndexError, ValueError):
            pass
        raise KeyError(f"no such image path: {path}")

    # ------------------------------------------------------------------ replay

    def _issue(self, offset: int, file: Optional[str], mr: Optional[MetadataRecord], kind: str,
               message: str, raw: bytes = b"") -> None:
        self.issues.append(Issue(offset, file, mr.api_key if mr else None,
                                 mr.version if mr else None, kind, message,
                                 mr.raw if mr else raw))

    def _count(self, name: str, version: int, n: int = 1) -> None:
        self.record_counts[name] = self.record_counts.get(name, 0) + n
        if version > self.versions_seen.get(name, -1):
            self.versions_seen[name] = version

    def apply_record(self, name: str, value: dict, version: int, offset: int = -1,
                     file: Optional[str] = None) -> None:
        """Apply one decoded metadata record (outside any transaction bookkeeping)."""
        self._count(name, version)
        fn = _APPLY.get(name)
        if fn is None:
            return
        try:
            fn(self, value)
        except _Invalid as e:
            self.issues.append(Issue(offset, file, RECORD_TYPES_BY_NAME.get(name), version,
                                     "invalid", str(e), b""))

    # bulk runs ---------------------------------------------------------------

    def _apply_topics(self, cols: Dict[str, Any]) -> None:
        names = cols["name"].to_pylist() if hasattr(cols["name"], "to_pylist") else list(cols["name"])
        ids = _uuids(cols["topicId"])
        for n, i in zip(names, ids):
            self.topics.add(n, i)

    def _apply_partitions(self, cols: Dict[str, Any], version: int) -> None:
        p = self.partitions
        n = len(cols["partitionId"])
        tidx = self._topic_indexes(cols["topicId"])
        known = tidx >= 0
        if not known.all():
            for i in np.nonzero(~known)[0].tolist():
                self.issues.append(Issue(-1, None, _PARTITION, version, "invalid",
                                         f"PartitionRecord for unknown topic id {_uuids(cols['topicId'])[i]}", b""))
        keys = (tidx.astype(np.int64) << 32) | cols["partitionId"].astype(np.int64)
        existing = p.lookup(keys)
        # a PartitionRecord for an existing partition replaces it: point the old row dead
        for r in existing[(existing >= 0) & known].tolist():
            p.alive.data[r] = False
        sel = np.nonzero(known)[0]
        base = p.rows
        m = len(sel)
        p.topic.extend(tidx[sel])
        p.partition.extend(cols["partitionId"][sel])
        p.leader.extend(cols["leader"][sel])
        p.leader_epoch.extend(cols["leaderEpoch"][sel])
        p.partition_epoch.extend(cols["partitionEpoch"][sel])
        p.leader_recovery_state.extend(cols["leaderRecoveryState"][sel])
        p.alive.extend(np.ones(m, bool))
        sl = sel.tolist()
        for attr, field in _LIST_FIELDS:
            col = cols.get(field)
            lists = [col[i] for i in sl] if col is not None else [None] * m
            if attr in ("removing_replicas", "adding_replicas", "replicas", "isr"):
                lists = [[] if x is None else x for x in lists]
            getattr(p, attr).append_rows(lists)
        dirs = cols.get("directories")
        if dirs is not None:
            p.directories.extend(_uuid_lists(dirs[i]) for i in sl)
        else:
            p.directories.extend([None] * m)
        idx = p.index
        for k, r in zip(keys[sel].tolist(), range(base, base + m)):
            idx[k] = r

    def _apply_changes(self, cols: Dict[str, Any], version: int) -> None:
        p = self.partitions
        tidx = self._topic_indexes(cols["topicId"])
        keys = (tidx.astype(np.int64) << 32) | cols["partitionId"].astype(np.int64)
        rows = p.lookup(keys)
        rows[tidx < 0] = -1
        bad = rows < 0
        if bad.any():
            ids = _uuids(cols["topicId"])
            for i in np.nonzero(bad)[0].tolist():
                self.issues.append(Issue(-1, None, _CHANGE, version, "invalid",
                                         f"PartitionChangeRecord for unknown partition "
                                         f"{ids[i]}-{int(cols['partitionId'][i])}", b""))
        ok = np.nonzero(~bad)[0]
        r = rows[ok]
        # every change bumps the partition epoch; a leader change also the leader epoch
        np.add.at(p.partition_epoch.data, r, 1)
        leader = cols["leader"][ok]
        moved = leader != NO_LEADER_CHANGE
        if moved.any():
            np.add.at(p.leader_epoch.data, r[moved], 1)
            last = last_per_key(r[moved])
            p.leader.data[r[moved][last]] = leader[moved][last]
        lrs = cols["leaderRecoveryState"][ok]
        setl = lrs != -1
        if setl.any():
            last = last_per_key(r[setl])
            p.leader_recovery_state.data[r[setl][last]] = lrs[setl][last]
        okl = ok.tolist()
        for attr, field in _LIST_FIELDS:
            col = cols.get(field)
            if col is None:
                continue
            vals = [col[i] for i in okl]
            has = np.fromiter((v is not None for v in vals), bool, len(vals))
            if not has.any():
                continue
            hr = r[has]
            last = last_per_key(hr)
            hv = [v for v in vals if v is not None]
            getattr(p, attr).set_rows(hr[last], [hv[i] for i in last.tolist()])
        dirs = cols.get("directories")
        if dirs is not None:
            for i, row in zip(okl, r.tolist()):
                if dirs[i] is not None:
                    p.directories[row] = _uuid_lists(dirs[i])
        reps = cols.get("replicas")
        if reps is not None:
            # replicas changed without directories: Kafka resets them to MIGRATING
            for i, row in zip(okl, r.tolist()):
                if reps[i] is not None and (dirs is None or dirs[i] is None):
                    cur = p.directories[row]
                    if cur is not None and len(cur) != len(reps[i]):
                        p.directories[row] = [_ZERO_UUID] * len(reps[i])

    def _topic_indexes(self, ids_col: Any) -> np.ndarray:
        get = self.topics.by_id.get
        return np.fromiter((get(b, -1) for b in _uuid_bytes(ids_col)), np.int64, len(ids_col))

    def _remove_topic(self, idx: int) -> None:
        p = self.partitions
        for r in self._topic_rows(idx):
            p.alive.data[r] = False
            del p.index[(idx << 32) | int(p.partition.data[r])]
        name = self.topics.names[idx]
        self.topics.remove(idx)
        self.configs.pop((2, name), None)

    def _clear_elr(self, idx: Optional[int]) -> None:
        p = self.partitions
        n = p.rows
        mask = p.alive.data[:n].copy()
        if idx is not None:
            mask &= p.topic.data[:n] == idx
        for r in np.nonzero(mask)[0].tolist():
            if (p.elr.length.data[r] or p.last_known_elr.length.data[r]):
                p.elr.set_rows(np.array([r]), [[]])
                p.last_known_elr.set_rows(np.array([r]), [[]])
                p.partition_epoch.data[r] += 1

    def reset(self) -> None:
        """Forget everything (a snapshot starts here)."""
        keep_issues = self.issues
        self.__init__()  # type: ignore[misc]
        self.issues = keep_issues

    def compact(self) -> None:
        """Drop deleted partition rows and superseded list values."""
        p = self.partitions
        n = p.rows
        keep = np.nonzero(p.alive.data[:n])[0]
        q = Partitions()
        for a in ("topic", "partition", "leader", "leader_epoch", "partition_epoch",
                  "leader_recovery_state", "alive"):
            getattr(q, a).extend(getattr(p, a).data[keep])
        for a, _ in _LIST_FIELDS:
            setattr(q, a, getattr(p, a).compact(keep))
        kl = keep.tolist()
        q.directories = [p.directories[r] for r in kl]
        q.index = {(int(t) << 32) | int(pp): i for i, (t, pp) in
                   enumerate(zip(q.topic.view.tolist(), q.partition.view.tolist()))}
        self.partitions = q


RECORD_TYPES_BY_NAME = {v: k for k, v in RECORD_TYPES.items()}
# ConfigResource.Type ids
_RESOURCE_TYPES = {2: "topic", 4: "broker", 8: "broker-logger", 16: "client-metrics", 32: "group"}


def _entity_text(entity: Tuple[Tuple[str, Optional[str]], ...]) -> str:
    return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in entity)


class _Invalid(Exception):
    pass


def _uuid_bytes(col: Any) -> List[bytes]:
    if hasattr(col, "to_pylist"):
        return [b if isinstance(b, bytes) else b.bytes for b in col.to_pylist()]
    return [u.bytes for u in col]


def _uuids(col: Any) -> List[_uuid.UUID]:
    return [_uuid.UUID(bytes=b) for b in _uuid_bytes(col)]


def _uuid_lists(v: Any) -> Optional[List[_uuid.UUID]]:
    if v is None:
        return None
    return [x if isinstance(x, _uuid.UUID) else _uuid.UUID(bytes=bytes(x)) for x in v]


# ---------------------------------------------------------------------- record appliers

def _feature_level(img: MetadataImage, v: dict) -> None:
    name, level = v["name"], v["featureLevel"]
    if name == "metadata.version":
        img.metadata_version = level
    elif name == "kraft.version":
        pass   # KAFKA-18979: kraft.version comes from the KRaftVersion control record
    elif level == 0:
        img.features.pop(name, None)
    else:
        img.features[name] = level


def _register_broker(img: MetadataImage, v: dict) -> None:
    img.brokers[v["brokerId"]] = dict(v)


def _unregister_broker(img: MetadataImage, v: dict) -> None:
    b = img.brokers.get(v["brokerId"])
    if b is None or b["brokerEpoch"] != v["brokerEpoch"]:
        raise _Invalid(f"Unable to replay {v}: no broker registration with that epoch found")
    del img.brokers[v["brokerId"]]


def _broker(img: MetadataImage, v: dict) -> dict:
    b = img.brokers.get(v["brokerId"])
    if b is None or b["brokerEpoch"] != v["brokerEpoch"]:
        raise _Invalid(f"no broker {v['brokerId']} registration with epoch {v['brokerEpoch']}")
    return b


def _fence(img: MetadataImage, v: dict) -> None:
    _broker(img, {"brokerId": v["id"], "brokerEpoch": v["epoch"]})["fenced"] = True


def _unfence(img: MetadataImage, v: dict) -> None:
    _broker(img, {"brokerId": v["id"], "brokerEpoch": v["epoch"]})["fenced"] = False


def _broker_change(img: MetadataImage, v: dict) -> None:
    b = _broker(img, v)
    if v.get("fenced", 0) == 1:        # BrokerRegistrationFencingChange: 1 fence, -1 unfence
        b["fenced"] = True
    elif v.get("fenced", 0) == -1:
        b["fenced"] = False
    if v.get("inControlledShutdown", 0) == 1:
        b["inControlledShutdown"] = True
    if v.get("logDirs"):
        b["logDirs"] = list(v["logDirs"])


def _register_controller(img: MetadataImage, v: dict) -> None:
    img.controllers[v["controllerId"]] = dict(v)


def _topic(img: MetadataImage, v: dict) -> None:
    img.topics.add(v["name"], v["topicId"])


def _partition(img: MetadataImage, v: dict) -> None:
    img._apply_partitions(_one(v), 0)


def _change(img: MetadataImage, v: dict) -> None:
    img._apply_changes(_one(v), 0)


def _one(v: dict) -> Dict[str, Any]:
    cols: Dict[str, Any] = {}
    for k, x in v.items():
        if isinstance(x, (int, bool)) and not isinstance(x, bool):
            cols[k] = np.array([x])
        elif k == "topicId":
            cols[k] = [x]
        else:
            cols[k] = [x]
    return cols


def _remove_topic(img: MetadataImage, v: dict) -> None:
    idx = img.topics.by_id.get(v["topicId"].bytes)
    if idx is None:
        raise _Invalid(f"Unable to delete topic with id {v['topicId']}: no such topic found.")
    img._remove_topic(idx)


def _clear_elr(img: MetadataImage, v: dict) -> None:
    name = v["topicName"]
    if name:
        idx = img.topics.by_name.get(name)
        if idx is None:
            raise _Invalid(f"Unable to clear elr for topic with name {name}: no such topic found.")
        img._clear_elr(idx)
    else:
        img._clear_elr(None)


def _config(img: MetadataImage, v: dict) -> None:
    key = (v["resourceType"], v["resourceName"])
    if v["value"] is None:
        cfg = img.configs.get(key)
        if cfg is not None:
            cfg.pop(v["name"], None)
            if not cfg:
                del img.configs[key]
    else:
        img.configs.setdefault(key, {})[v["name"]] = v["value"]


def _quota(img: MetadataImage, v: dict) -> None:
    entity = tuple(sorted((e["entityType"], e["entityName"]) for e in v["entity"]))
    if v["remove"]:
        q = img.client_quotas.get(entity)
        if q is not None:
            q.pop(v["key"], None)
            if not q:
                del img.client_quotas[entity]
    else:
        img.client_quotas.setdefault(entity, {})[v["key"]] = v["value"]


def _producer_ids(img: MetadataImage, v: dict) -> None:
    img.producer_ids = dict(v)


def _acl(img: MetadataImage, v: dict) -> None:
    img.acls[v["id"]] = dict(v)


def _remove_acl(img: MetadataImage, v: dict) -> None:
    if img.acls.pop(v["id"], None) is None:
        raise _Invalid(f"Failed to remove ACL {v['id']}: not found")


def _scram(img: MetadataImage, v: dict) -> None:
    img.scram_credentials[(v["name"], v["mechanism"])] = dict(v)


def _remove_scram(img: MetadataImage, v: dict) -> None:
    img.scram_credentials.pop((v["name"], v["mechanism"]), None)


def _token(img: MetadataImage, v: dict) -> None:
    img.delegation_tokens[v["tokenId"]] = dict(v)


def _remove_token(img: MetadataImage, v: dict) -> None:
    img.delegation_tokens.pop(v["tokenId"], None)


def _zk_migration(img: MetadataImage, v: dict) -> None:
    img.zk_migration_state = v["zkMigrationState"]


_APPLY = {
    "FeatureLevelRecord": _feature_level,
    "RegisterBrokerRecord": _register_broker,
    "UnregisterBrokerRecord": _unregister_broker,
    "FenceBrokerRecord": _fence,
    "UnfenceBrokerRecord": _unfence,
    "BrokerRegistrationChangeRecord": _broker_change,
    "RegisterControllerRecord": _register_controller,
    "TopicRecord": _topic,
    "PartitionRecord": _partition,
    "PartitionChangeRecord": _change,
    "RemoveTopicRecord": _remove_topic,
    "ClearElrRecord": _clear_elr,
    "ConfigRecord": _config,
    "ClientQuotaRecord": _quota,
    "ProducerIdsRecord": _producer_ids,
    "AccessControlEntryRecord": _acl,
    "RemoveAccessControlEntryRecord": _remove_acl,
    "UserScramCredentialRecord": _scram,
    "RemoveUserScramCredentialRecord": _remove_scram,
    "DelegationTokenRecord": _token,
    "RemoveDelegationTokenRecord": _remove_token,
    "ZkMigrationStateRecord": _zk_migration,
}


# ---------------------------------------------------------------------- the replay loop

class _Row(NamedTuple):
    offset: int
    file: Optional[str]
    api_key: int
    version: int
    body: Any          # memoryview/bytes of the record body (frame stripped) or None
    mr: Optional[MetadataRecord]   # set when the frame could not be split the fast way
    raw: Optional[bytes] = None    # the whole framed value


def _snapshot_end(file: Optional[str]) -> Optional[int]:
    if not file:
        return None
    m = re.match(r"(\d{20})-(\d+)\.checkpoint$", os.path.basename(file))
    return int(m.group(1)) if m else None


class _Replayer:
    def __init__(self, img: MetadataImage) -> None:
        self.img = img
        self.txn: Optional[List[_Row]] = None
        self.skip_below = -1
        self.snapshot_file: Optional[str] = None

    # control records --------------------------------------------------------
    def control(self, key: Optional[bytes], value: Optional[bytes], offset: int, file: Optional[str],
                epoch: int) -> None:
        img = self.img
        if key is None or len(key) < 4:
            img.issues.append(Issue(offset, file, None, None, "error", "control record key shorter than 4 bytes", key or b""))
            return
        ctype = int.from_bytes(key[2:4], "big", signed=True)
        entry = CONTROL_MESSAGES.get(ctype)
        if entry is None or value is None:
            return
        try:
            v = kcodec.read(entry[1], value, 0, trailing="allow").value
        except CodecError as e:
            img.issues.append(Issue(offset, file, None, None, "error", f"{entry[1]}: {e}", value))
            return
        if ctype == 3:          # SnapshotHeader: a snapshot replaces the image
            self.flush()
            self.txn = None
            img.reset()
            end = _snapshot_end(file)
            if end is not None:
                self.skip_below, self.snapshot_file = end, file
        elif ctype == 2:
            img.leader = dict(v, epoch=epoch)
        elif ctype == 5:
            img.kraft_version = v["kRaftVersion"]
        elif ctype == 6:
            img.voters = v
        img.last_offset = max(img.last_offset, offset)

    # metadata records --------------------------------------------------------
    def rows(self, rows: List[_Row]) -> None:
        """Feed rows in log order; transactions buffer them."""
        pending: List[_Row] = []
        for row in rows:
            if row.offset < self.skip_below and row.file != self.snapshot_file:
                continue      # already in the snapshot
            k = row.api_key
            if k == _BEGIN or k == _END or k == _ABORT:
                self._apply(pending)
                pending = []
                self._txn_marker(row)
                continue
            if self.txn is not None:
                self.txn.append(row)
            else:
                pending.append(row)
        self._apply(pending)

    def _txn_marker(self, row: _Row) -> None:
        img = self.img
        mr = row.mr or _decode_row(row)
        img._count(RECORD_TYPES[row.api_key], row.version)
        img.last_offset = max(img.last_offset, row.offset)
        if row.api_key == _BEGIN:
            if self.txn is not None:
                img.issues.append(Issue(row.offset, row.file, _BEGIN, row.version, "invalid",
                                        "BeginTransactionRecord inside a transaction", b""))
                self._apply(self.txn)
            self.txn = []
            img.open_transaction = (mr.value or {}).get("name", "") if mr.ok else ""
        elif row.api_key == _END:
            rows, self.txn = (self.txn or []), None
            img.open_transaction = None
            self._apply(rows)
        else:
            self.txn = None
            img.open_transaction = None
            img.aborted_transactions += 1

    def flush(self) -> None:
        """End of input: an open transaction stays unapplied."""

    def _apply(self, rows: List[_Row]) -> None:
        i, n = 0, len(rows)
        img = self.img
        while i < n:
            k = rows[i].api_key
            if k in _BULK and rows[i].mr is None:
                j = i
                seen_change = False
                while j < n and rows[j].api_key in _BULK and rows[j].mr is None:
                    kj = rows[j].api_key
                    if kj == _CHANGE:
                        seen_change = True
                    elif seen_change:
                        break      # a new topic/partition after changes: keep log order
                    j += 1
                self._bulk(rows[i:j])
                i = j
                continue
            self._single(rows[i])
            i += 1
        if rows:
            img.last_offset = max(img.last_offset, rows[-1].offset)

    def _single(self, row: _Row) -> None:
        img = self.img
        mr = row.mr or _decode_row(row)
        if mr.status == "unknown_type" or mr.status == "error":
            img._issue(row.offset, row.file, mr, mr.status, mr.error or "")
            return
        if mr.status == "newer_version":
            img._issue(row.offset, row.file, mr, "newer_version",
                       f"{mr.type} version {mr.version} is newer than the specs; replayed "
                       f"with the newest known layout")
        img.apply_record(mr.type, mr.value, mr.version, row.offset, row.file)  # type: ignore[arg-type]

    def _bulk(self, rows: List[_Row]) -> None:
        img = self.img
        for key in (_TOPIC, _PARTITION, _CHANGE):
            sel = [r for r in rows if r.api_key == key]
            if not sel:
                continue
            name = _BULK[key]
            for ver in sorted({r.version for r in sel}):
                part = [r for r in sel if r.version == ver]
                newer = ver > kcodec.spec(name).valid_versions.highest
                cols = kcodec.decode_bulk(name, [r.body for r in part], ver,
                                          newer="latest" if newer else "error")
                okm = np.asarray(cols["_ok"], bool)
                if not okm.all():
                    for r, e in zip(part, cols["_error"]):
                        if e is not None:
                            img.issues.append(Issue(r.offset, r.file, key, ver, "error", e,
                                                    bytes(r.raw if r.raw is not None else r.body)))
                    keep = np.nonzero(okm)[0]
                    cols = {c: _take(v, keep) for c, v in cols.items() if not c.startswith("_")}
                if newer:
                    for r in part:
                        img.issues.append(Issue(r.offset, r.file, key, ver, "newer_version",
                                                f"{name} version {ver} is newer than the specs; "
                                                "replayed with the newest known layout",
                                                bytes(r.raw or b"")))
                m = int(okm.sum())
                if not m:
                    continue
                img._count(name, ver, m)
                if key == _TOPIC:
                    img._apply_topics(cols)
                elif key == _PARTITION:
                    img._apply_partitions(cols, ver)
                else:
                    img._apply_changes(cols, ver)


def _take(v: Any, keep: np.ndarray) -> Any:
    if isinstance(v, np.ndarray):
        return v[keep]
    if hasattr(v, "take"):
        import pyarrow as pa
        return v.take(pa.array(keep))
    return [v[i] for i in keep.tolist()]


def _decode_row(row: _Row) -> MetadataRecord:
    name = RECORD_TYPES.get(row.api_key)
    raw = bytes(row.raw) if row.raw is not None else bytes(row.body)
    if name is None:
        return MetadataRecord(row.api_key, None, row.version, None, raw, "unknown_type",
                              f"Unknown metadata id {row.api_key}")
    newer = row.version > kcodec.spec(name).valid_versions.highest
    try:
        v = kcodec.decode(name, row.body, row.version, newer="latest" if newer else "error")
    except CodecError as e:
        return MetadataRecord(row.api_key, name, row.version, None, raw, "error", str(e))
    return MetadataRecord(row.api_key, name, row.version, v, raw, "newer_version" if newer else "ok")


def _split_frames(values: List[Optional[bytes]]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(api_key, version, fast) per value: the frame read the fast way (three one-byte
    varints, frame version 1); ``fast`` False rows need the full frame reader."""
    n = len(values)
    head = np.frombuffer(b"".join((v[:3] if v is not None and len(v) >= 3 else b"\xff\xff\xff")
                                  for v in values), np.uint8).reshape(n, 3) if n else np.zeros((0, 3), np.uint8)
    fast = (head[:, 0] == 1) & (head[:, 1] < 0x80) & (head[:, 2] < 0x80)
    return head[:, 1].astype(np.int32), head[:, 2].astype(np.int32), fast


def replay(source: Any, *, image: Optional[MetadataImage] = None, verify_crc: bool = True,
           compact: bool = True) -> MetadataImage:
    """Replay a metadata log, snapshot, directory (``bootstrap.checkpoint``,
    ``*.checkpoint`` snapshots and ``__cluster_metadata-0`` segments), bytes, or a list
    of those in order, into a :class:`MetadataImage`.  Corrupt batches, unknown record
    types and versions newer than the specs are recorded in ``image.issues``."""
    img = image if image is not None else MetadataImage()
    rp = _Replayer(img)
    for cols in log.iter_columns(source, verify_crc=verify_crc):
        for e in cols["errors"]:
            img.issues.append(Issue(e.position, e.file, None, None, "error", str(e), b""))
        file = cols["file"]
        offsets = cols["offset"].tolist()
        ctrl = ((cols["batch_attributes"] & 0x20) != 0).tolist()
        epochs = cols["batch_partition_leader_epoch"].tolist()
        values = cols["value"]
        keys_col = cols["key"]
        api, ver, fast = _split_frames(values)
        api_l, ver_l, fast_l = api.tolist(), ver.tolist(), fast.tolist()
        batch: List[_Row] = []
        for i, off in enumerate(offsets):
            if ctrl[i]:
                rp.rows(batch)
                batch = []
                rp.control(keys_col[i], values[i], off, file, epochs[i])
                continue
            v = values[i]
            if fast_l[i]:
                batch.append(_Row(off, file, api_l[i], ver_l[i], memoryview(v)[3:], None, v))
            else:
                mr = read_record(v) if v is not None else MetadataRecord(
                    None, None, None, None, b"", "error", "null value")
                batch.append(_Row(off, file, mr.api_key if mr.api_key is not None else -1,
                                  mr.version if mr.version is not None else -1, None, mr))
        rp.rows(batch)
    rp.flush()
    if compact:
        img.compact()
    return img
