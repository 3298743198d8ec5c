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
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

import kcodec
from kcodec import _ext
from kcodec.errors import CodecError

from . import _image_py
from ._columns import Column, ListColumn, _starts, last_per_key, zeros

_arrow: Any = None
try:
    from kcodec import arrow as _arrow
except ImportError:  # no pyarrow: the engine's dicts serve
    _arrow = None
from kcodec import log
from .records import CONTROL_MESSAGES, RECORD_TYPES, MetadataRecord, read_record, record_type_name

_kernels: Any = _ext.load("kcodec.kraft._image") or _image_py     # C, or its Python twin

__all__ = ["MetadataImage", "Topics", "Partitions", "Issue", "replay", "iter_record_columns",
           "RecordColumns"]

NO_LEADER_CHANGE = -2
_TOPIC, _PARTITION, _CHANGE = 2, 3, 5
_BULK = {_TOPIC: "TopicRecord", _PARTITION: "PartitionRecord", _CHANGE: "PartitionChangeRecord"}
_BEGIN, _END, _ABORT = 23, 24, 25
_HOT = np.zeros(256, bool)              # by a frame's API key byte: replayed in bulk
_HOT[[_TOPIC, _PARTITION, _CHANGE]] = True
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
        self.id_bytes: List[bytes] = []
        self.alive: List[bool] = []
        self.by_id: Dict[bytes, int] = {}     # uuid bytes -> index
        self.by_name: Dict[str, int] = {}
        self._uuids: List[_uuid.UUID] = []
        # live ids -> topic index: the kernels' hash table over the id of each index
        self._idarr = np.zeros((0, 16), np.uint8)
        self._slots = np.full(16, -1, np.int32)
        self._live = 0
        self._new: List[bytes] = []          # ids added since the last lookup

    def __len__(self) -> int:
        return len(self.by_id)

    @property
    def ids(self) -> List[_uuid.UUID]:
        """Topic ids by topic index (built on demand: replay keeps raw bytes)."""
        if len(self._uuids) < len(self.id_bytes):
            self._uuids.extend(_uuid.UUID(bytes=b) for b in self.id_bytes[len(self._uuids):])
        return self._uuids

    def add(self, name: str, topic_id: Union[_uuid.UUID, bytes]) -> int:
        return self.add_many([name], [topic_id if isinstance(topic_id, bytes) else topic_id.bytes])

    def add_many(self, names: Sequence[str], ids: Sequence[bytes]) -> int:
        """Add TopicRecords in order; returns the last one's index."""
        by_name, by_id = self.by_name, self.by_id
        first = len(self.names)
        new_names = dict(zip(names, range(first, first + len(names))))
        new_ids = dict(zip(ids, range(first, first + len(ids))))
        if (len(new_names) == len(names) and len(new_ids) == len(ids)
                and by_name.keys().isdisjoint(new_names) and by_id.keys().isdisjoint(new_ids)):
            # all new (the common case): no per-topic Python work
            self.names.extend(names)
            self.id_bytes.extend(ids)
            self.alive.extend([True] * len(names))
            by_id.update(new_ids)
            by_name.update(new_names)
            self._new.extend(ids)
            return len(self.names) - 1
        idx = -1
        for name, b in zip(names, ids):
            old = by_name.get(name)
            if old is not None and self.id_bytes[old] != b:
                self.remove(old)
            idx = by_id.get(b, -1)
            if idx < 0:
                idx = len(self.names)
                self.names.append(name)
                self.id_bytes.append(b)
                self.alive.append(True)
                by_id[b] = idx
                self._new.append(b)
            by_name[name] = idx
        return idx

    def remove(self, idx: int) -> None:
        self._sync()
        self.alive[idx] = False
        self.by_id.pop(self.id_bytes[idx], None)
        if self.by_name.get(self.names[idx]) == idx:
            del self.by_name[self.names[idx]]
        if _kernels.ids_drop(self._idarr, self._slots, idx):
            self._live -= 1

    def _sync(self) -> None:
        """Index the ids added since the last lookup (the id table grows by whole runs)."""
        if not self._new:
            return
        fresh = np.frombuffer(b"".join(self._new), np.uint8).reshape(-1, 16)
        first = len(self._idarr)
        self._idarr = np.concatenate([self._idarr, fresh])
        self._new = []
        live = self._live + len(fresh)
        if 2 * live <= len(self._slots):
            _kernels.ids_put(self._idarr, self._slots, np.arange(first, len(self._idarr), dtype=np.int32))
        else:       # grow: index the live ids afresh at under half load
            size = 16
            while size < 4 * live:
                size *= 2
            self._slots = np.full(size, -1, np.int32)
            _kernels.ids_put(self._idarr, self._slots, np.fromiter(self.by_id.values(), np.int32, len(self.by_id)))
        self._live = live

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """Topic index of each 16-byte id (rows of ``ids``), -1 when unknown."""
        self._sync()
        return _kernels.ids_find(self._idarr, self._slots, np.ascontiguousarray(ids, np.uint8))


class Partitions:
    """Partition table: one row per (topic index, partition id), NumPy columns; list
    fields in :class:`ListColumn`; directories as indexes into ``dir_ids``."""

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
        self.directories = ListColumn()
        self.dir_ids: List[_uuid.UUID] = []
        self.dir_index: Dict[bytes, int] = {}
        self._dir_keys = np.zeros((0, 16), np.uint8)     # dir_ids' bytes, and their index
        self._dir_slots = np.full(16, -1, np.int32)
        self._keys = np.zeros(0, np.int64)     # sorted partition_keys of live rows
        self._rows = np.zeros(0, np.int64)
        self._kbuf, self._rbuf = self._keys, self._rows     # room to append (keys, rows: views)
        self._topic_start: Optional[np.ndarray] = None   # per topic: its first key's position

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def rows(self) -> int:
        return self.topic.n

    def nbytes(self) -> int:
        cols = [self.topic, self.partition, self.leader, self.leader_epoch, self.partition_epoch,
                self.leader_recovery_state, self.alive]
        return (sum(c.data.nbytes for c in cols) + self._kbuf.nbytes + self._rbuf.nbytes
                + sum(getattr(self, a).nbytes() for a, _ in _LIST_FIELDS)
                + self.directories.nbytes())

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Row of each key (:func:`_image_py.partition_keys`), -1 when unknown."""
        keys = np.asarray(keys, np.int64)
        return self.find((keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32))

    def find(self, topic: np.ndarray, partition: np.ndarray) -> np.ndarray:
        """Row of each (topic index, partition id), -1 when unknown."""
        if not len(self._keys) or not len(topic):
            return np.full(len(topic), -1, np.int64)
        if self._topic_start is None:
            # partitions of a topic are mostly 0..N-1: the kernel guesses the position
            # from where the topic starts in the sorted keys, and searches the misses
            top = int(self._keys[-1] >> 32) + 1
            self._topic_start = np.searchsorted(self._keys, np.arange(top, dtype=np.int64) << 32)
        return _kernels.parts_find(self._keys, self._rows, self._topic_start,
                                   np.ascontiguousarray(topic, np.int32),
                                   np.ascontiguousarray(partition, np.int32))

    def index_add(self, keys: np.ndarray, rows: np.ndarray) -> None:
        """Index new rows (a key already indexed points to its new row)."""
        n = len(self._keys)
        if len(keys) and bool((keys[1:] > keys[:-1]).all()) and (not n or keys[0] > self._keys[-1]):
            # new partitions after all known ones, ascending (as a log creates them): append
            m = n + len(keys)
            if m > len(self._kbuf):
                size = max(m, 2 * len(self._kbuf))
                kb, rb = zeros(size, np.int64), zeros(size, np.int64)
                kb[:n], rb[:n] = self._keys, self._rows
                self._kbuf, self._rbuf = kb, rb
            self._kbuf[n:m], self._rbuf[n:m] = keys, rows
            self._keys, self._rows = self._kbuf[:m], self._rbuf[:m]
            self._topic_start = None
            return
        order = np.argsort(keys, kind="stable")
        k, r = keys[order], rows[order]
        last = np.ones(len(k), bool)
        last[:-1] = k[1:] != k[:-1]          # the last duplicate of a key wins
        k, r = k[last], r[last]
        pos = np.searchsorted(self._keys, k)
        hit = np.zeros(len(k), bool)
        inb = pos < len(self._keys)
        hit[inb] = self._keys[pos[inb]] == k[inb]
        if hit.any():
            self.alive.data[self._rows[pos[hit]]] = False
            self._rows[pos[hit]] = r[hit]
        self._set_index(np.insert(self._keys, pos[~hit], k[~hit]), np.insert(self._rows, pos[~hit], r[~hit]))

    def _set_index(self, keys: np.ndarray, rows: np.ndarray) -> None:
        self._keys = self._kbuf = keys
        self._rows = self._rbuf = rows
        self._topic_start = None

    def index_remove(self, keys: np.ndarray) -> None:
        pos = np.searchsorted(self._keys, keys)
        inb = pos < len(self._keys)
        pos, keys = pos[inb], keys[inb]
        pos = pos[self._keys[pos] == keys]
        keep = np.ones(len(self._keys), bool)
        keep[pos] = False
        self._set_index(self._keys[keep], self._rows[keep])

    def dir_indexes(self, flat: np.ndarray) -> np.ndarray:
        """Directory-table indexes of 16-byte directory ids (a cluster has few distinct
        directories: look them up in the id index, learn the ones not seen yet)."""
        if not len(flat):
            return np.zeros(0, np.int32)
        flat = np.ascontiguousarray(flat, np.uint8)
        out = _kernels.ids_find(self._dir_keys, self._dir_slots, flat)
        miss = np.flatnonzero(out < 0)
        while len(miss):
            # learn the distinct ids among the first misses, then look the misses up again
            for at in miss[:64].tolist():
                b = flat[at].tobytes()
                if b not in self.dir_index:
                    self.dir_index[b] = len(self.dir_ids)
                    self.dir_ids.append(_uuid.UUID(bytes=b))
            self._index_dirs()
            out[miss] = _kernels.ids_find(self._dir_keys, self._dir_slots, flat[miss])
            miss = miss[out[miss] < 0]
        return out

    def _index_dirs(self) -> None:
        self._dir_keys = np.frombuffer(b"".join(u.bytes for u in self.dir_ids), np.uint8).reshape(-1, 16)
        size = 16
        while size < 4 * len(self.dir_ids):
            size *= 2
        self._dir_slots = np.full(size, -1, np.int32)
        _kernels.ids_put(self._dir_keys, self._dir_slots, np.arange(len(self.dir_ids), dtype=np.int32))

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
        dirs = self.directories.get(r)
        d["directories"] = [] if dirs is None else [self.dir_ids[i] for i in dirs]
        return d

    def row_key(self, r: int) -> int:
        return int(_image_py.partition_keys(self.topic.data[r], self.partition.data[r]))


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
        # the partition leader epoch of the last batch read (a snapshot taken here is
        # named and written with it, as the controller's are)
        self.last_epoch: int = -1
        self._last_batch_offset: int = -1
        self.issues: List[Issue] = []
        # the log's batches that failed (bad CRC, cut, undecompressable...): none of their
        # records is in the image (the log reader withholds them); each is an issue too
        self.batch_errors: List[log.BatchError] = []
        self.record_counts: Dict[str, int] = {}
        self.versions_seen: Dict[str, int] = {}     # spec name -> highest version replayed
        self.open_transaction: Optional[str] = None
        self.aborted_transactions: int = 0

    # ------------------------------------------------------------------ views

    @property
    def damaged(self) -> bool:
        """Whether the log had bytes replay could not read: a batch that failed (see
        :attr:`batch_errors`) or a record or control record that did not decode (issues of
        kind ``error``).  The image then lacks what they held: it is not the cluster's
        state, and nothing written from it (a snapshot, a plan) may claim to be."""
        return bool(self.batch_errors) or any(i.kind == "error" for i in self.issues)

    def damage(self) -> List[str]:
        """What of the log could not be read, one line each: every corrupt batch, then
        every record or control record that did not decode (empty: not :attr:`damaged`)."""
        out = [str(e) for e in self.batch_errors]
        batches = {(e.file, e.position) for e in self.batch_errors}
        for i in self.issues:
            if i.kind == "error" and (i.file, i.offset) not in batches:
                out.append(f"{i.file + ': ' if i.file else ''}offset {i.offset}: {i.message}")
        return out

    def finalized_features(self) -> Dict[str, int]:
        """Finalized feature levels as a 4.1.1 broker reports them (ApiVersions'
        finalized features, ``kafka-features describe``): the features image with
        metadata.version, plus kraft.version only when above 0 (KRaftMetadataCache adds
        the KRaftVersion control record's level; at 0 there is no entry)."""
        out = dict(self.features)
        if self.metadata_version is not None:
            out["metadata.version"] = self.metadata_version
        if self.kraft_version > 0:
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
        if not -2**31 <= partition < 2**31:         # not an int32 partition id: none has it
            raise KeyError(f"{topic}-{partition}")
        r = int(self.partitions.lookup(_image_py.partition_keys([idx], [partition]))[0])
        if r < 0:
            raise KeyError(f"{topic}-{partition}")
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
            "corrupt_batches": len(self.batch_errors),
            "open_transaction": self.open_transaction,
        }

    # ------------------------------------------------------------------ shell (ls / cat)

    @staticmethod
    def _path(path: str) -> List[str]:
        # a config resource's name may be empty (the cluster-wide default broker config):
        # /configs/broker/ and /configs/broker//min.insync.replicas address it
        segs = path.split("/")
        while segs and segs[0] == "":
            segs.pop(0)
        if len(segs) >= 3 and segs[0] == "configs" and segs[1]:
            if len(segs) == 4 and segs[2] and segs[3] == "":
                segs.pop()                 # /configs/TOPIC/orders/
            return segs
        return [p for p in segs if p]

    def ls(self, path: str = "/") -> List[str]:
        """Children of an image path, in the spirit of kafka-metadata-shell
        (``/configs/broker/`` is the cluster-wide default broker config: its name is empty)."""
        parts = self._path(path)
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
        """The value at an image path (``/topics/orders/0``, ``/features``, ``/brokers/1``,
        ``/configs/broker//min.insync.replicas`` for the cluster-wide default)."""
        parts = self._path(path)
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

    def _apply_topics(self, names: List[str], ids: List[bytes]) -> None:
        self.topics.add_many(names, ids)

    def _apply_partitions(self, pc: "_PartCols", version: int) -> None:
        p = self.partitions
        tidx = self.topics.lookup(pc.topic_ids)
        known = tidx >= 0
        if not known.all():
            for i in np.nonzero(~known)[0].tolist():
                self.issues.append(Issue(int(pc.offsets[i]), pc.file, _PARTITION, version, "invalid",
                                         f"PartitionRecord for unknown topic id "
                                         f"{_uuid.UUID(bytes=bytes(pc.topic_ids[i]))}", b""))
            pc = pc.take(np.nonzero(known)[0])
            tidx = tidx[known]
        m = len(tidx)
        if not m:
            return
        base = p.rows
        p.topic.extend(tidx)
        p.partition.extend(pc.scalar["partitionId"])
        p.leader.extend(pc.scalar["leader"])
        p.leader_epoch.extend(pc.scalar["leaderEpoch"])
        p.partition_epoch.extend(pc.scalar["partitionEpoch"])
        p.leader_recovery_state.extend(pc.scalar["leaderRecoveryState"])
        p.alive.extend(np.ones(m, bool))
        for attr, field in _LIST_FIELDS:
            flat, lens = pc.lists[field]
            # absent or null lists of a new partition are empty
            getattr(p, attr).append_flat(flat, np.maximum(lens, 0))
        flat, lens = pc.lists["directories"]
        p.directories.append_flat(p.dir_indexes(flat), np.maximum(lens, 0))
        keys = _image_py.partition_keys(tidx, pc.scalar["partitionId"])
        p.index_add(keys, np.arange(base, base + m, dtype=np.int64))

    def _apply_changes(self, pc: "_PartCols", version: int) -> None:
        p = self.partitions
        tidx = self.topics.lookup(pc.topic_ids)
        rows = p.find(tidx, pc.scalar["partitionId"])
        bad = rows < 0
        if bad.any():
            for i in np.nonzero(bad)[0].tolist():
                self.issues.append(Issue(int(pc.offsets[i]), pc.file, _CHANGE, version, "invalid",
                                         f"PartitionChangeRecord for unknown partition "
                                         f"{_uuid.UUID(bytes=bytes(pc.topic_ids[i]))}-"
                                         f"{int(pc.scalar['partitionId'][i])}", b""))
            rows[bad] = -1         # the kernel skips them
            if bad.all():
                return
        # in log order: every change bumps the partition epoch, a leader change also the
        # leader epoch, a list present replaces the row's list
        lists, cols = [], []
        n = len(rows)
        for attr, field in _LIST_FIELDS + (("directories", "directories"),):
            col = getattr(p, attr)
            if pc.raw is not None:          # the decoded Arrow layout, as it is
                lin = pc.raw[field]
                if lin is not None and field == "directories":
                    lin = lin[:3] + (p.dir_indexes(lin[3]),)
            else:
                flat, lens = pc.lists[field]
                has = lens >= 0          # absent (-2) and null (-1): no change
                if not has.any():
                    lin = None
                else:
                    flat = p.dir_indexes(flat) if field == "directories" else np.ascontiguousarray(flat, np.int32)
                    off = np.zeros(n + 1, np.int32)
                    np.cumsum(np.maximum(lens, 0), out=off[1:])
                    lin = (off, None if has.all() else np.packbits(has, bitorder="little"), 0, flat)
            if lin is not None:
                col.values.reserve(int(lin[0][n]) - int(lin[0][0]))
            lists.append(lin)
            cols.append((col.start.data, col.length.data, col.null.data.view(np.uint8),
                         col.values.data, col.values.n))
        used = _kernels.apply_changes(
            np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(pc.scalar["leader"], np.int32),
            np.ascontiguousarray(pc.scalar["leaderRecoveryState"], np.int8), lists,
            p.leader.data, p.leader_epoch.data, p.partition_epoch.data,
            p.leader_recovery_state.data, cols)
        del cols, lists         # views of the columns: they would pin the mappings
        for (attr, _f), u in zip(_LIST_FIELDS + (("directories", ""),), used):
            getattr(p, attr).values.n = u
        r = rows
        rep = pc.present("replicas") & (r >= 0)
        if rep.any():
            # replicas changed: directories that no longer line up become MIGRATING
            rr = np.unique(r[rep])
            mism = rr[p.directories.length.data[rr] != p.replicas.length.data[rr]]
            mism = mism[p.directories.length.data[mism] > 0]
            if len(mism):
                zero = p.dir_indexes(np.zeros((1, 16), np.uint8))[0]
                ln = p.replicas.length.data[mism].astype(np.int64)
                p.directories.set_flat(mism, np.full(int(ln.sum()), zero, np.int32), _starts(ln), ln)

    def _remove_topic(self, idx: int) -> None:
        p = self.partitions
        rows = np.array(self._topic_rows(idx), np.int64)
        if len(rows):
            p.alive.data[rows] = False
            p.index_remove(np.sort(_image_py.partition_keys(idx, p.partition.data[rows])))
        name = self.topics.names[idx]
        self.topics.remove(idx)
        self.configs.pop((2, name), None)

    def _clear_elr(self, idx: Optional[int]) -> None:
        p = self.partitions
        n = p.rows
        mask = p.alive.data[:n].copy()
        if idx is not None:
            mask &= p.topic.data[:n] == idx
        mask &= (p.elr.length.data[:n] > 0) | (p.last_known_elr.length.data[:n] > 0)
        rows = np.nonzero(mask)[0]
        if len(rows):
            zeros = np.zeros(len(rows), np.int64)
            p.elr.set_flat(rows, np.zeros(0, np.int32), zeros, zeros)
            p.last_known_elr.set_flat(rows, np.zeros(0, np.int32), zeros, zeros)
            p.partition_epoch.data[rows] += 1

    def reset(self) -> None:
        """Forget everything (a snapshot starts here)."""
        keep_issues, keep_errors = self.issues, self.batch_errors
        self.__init__()  # type: ignore[misc]
        self.issues, self.batch_errors = keep_issues, keep_errors

    def compact(self) -> None:
        """Drop deleted partition rows and superseded list values."""
        p = self.partitions
        n = p.rows
        keep = np.nonzero(p.alive.data[:n])[0]
        live_values = sum(int(getattr(p, a).length.view.sum()) for a, _ in _LIST_FIELDS)
        all_values = sum(getattr(p, a).values.n for a, _ in _LIST_FIELDS)
        if len(keep) > 0.8 * n and all_values < 2 * live_values + 1024:
            return      # little to gain: superseded values are under half
        q = Partitions()
        for a in ("topic", "partition", "leader", "leader_epoch", "partition_epoch",
                  "leader_recovery_state", "alive"):
            getattr(q, a).extend(getattr(p, a).data[keep])
        for a, _ in _LIST_FIELDS + (("directories", ""),):
            setattr(q, a, getattr(p, a).compact(keep))
        q.dir_ids, q.dir_index = p.dir_ids, p.dir_index
        q._dir_keys, q._dir_slots = p._dir_keys, p._dir_slots
        keys = _image_py.partition_keys(q.topic.view, q.partition.view)
        order = np.argsort(keys, kind="stable")
        q._set_index(keys[order], order.astype(np.int64))
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
    img._apply_partitions(_partcols_from_dicts("PartitionRecord", [v], np.array([-1]), None), 0)


def _change(img: MetadataImage, v: dict) -> None:
    img._apply_changes(_partcols_from_dicts("PartitionChangeRecord", [v], np.array([-1]), None), 0)


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


def _set_or_remove(table: Dict[Any, Dict[str, Any]], owner: Any, name: str, value: Any,
                   remove: bool) -> None:
    """Set ``table[owner][name]``, or remove it and an owner left with nothing (as Kafka's
    config and quota images drop an entity whose last entry goes)."""
    if remove:
        entries = table.get(owner)
        if entries is not None:
            entries.pop(name, None)
            if not entries:
                del table[owner]
    else:
        table.setdefault(owner, {})[name] = value


def _config(img: MetadataImage, v: dict) -> None:
    _set_or_remove(img.configs, (v["resourceType"], v["resourceName"]), v["name"], v["value"],
                   v["value"] is None)


def _quota(img: MetadataImage, v: dict) -> None:
    entity = tuple(sorted((e["entityType"], e["entityName"]) for e in v["entity"]))
    _set_or_remove(img.client_quotas, entity, v["key"], v["value"], v["remove"])


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

_PART_SCALARS = ("partitionId", "leader", "leaderEpoch", "partitionEpoch", "leaderRecoveryState")
_PART_LISTS = ("replicas", "isr", "removingReplicas", "addingReplicas", "eligibleLeaderReplicas",
               "lastKnownElr", "directories")


class _PartCols:
    """PartitionRecord / PartitionChangeRecord rows as columns: ``scalar[name]`` integer
    arrays, ``topic_ids`` (n, 16) uint8, ``lists[name] = (flat values, lengths)`` with
    lengths -2 absent, -1 null; ``offsets`` the log offsets.  From a bulk decode the
    lists are kept as Arrow lays them out, ``raw[name] = (offsets, validity bitmap or
    None, its bit offset, values)`` or None when absent, and ``lists`` is built on demand."""
    __slots__ = ("scalar", "topic_ids", "_lists", "raw", "offsets", "file")

    def __init__(self, scalar, topic_ids, lists, offsets, file, raw=None):
        self.scalar, self.topic_ids, self._lists, self.offsets, self.file, self.raw = \
            scalar, topic_ids, lists, offsets, file, raw

    @property
    def lists(self) -> Dict[str, Tuple[np.ndarray, np.ndarray]]:
        if self._lists is None:
            self._lists = {s: _flat_lens(s, self.raw[s], len(self.topic_ids)) for s in _PART_LISTS}
        return self._lists

    def present(self, name: str) -> np.ndarray:
        """Per row: does it carry list ``name`` (not absent, not null)?"""
        if self._lists is not None or self.raw is None:
            return self.lists[name][1] >= 0
        raw, n = self.raw[name], len(self.topic_ids)
        if raw is None:
            return np.zeros(n, bool)
        if raw[1] is None:
            return np.ones(n, bool)
        return np.unpackbits(raw[1], bitorder="little")[raw[2]:raw[2] + n].view(bool)

    def take(self, idx: np.ndarray) -> "_PartCols":
        lists = {}
        for k, (flat, lens) in self.lists.items():
            ln = np.maximum(lens, 0).astype(np.int64)
            st = _starts(ln)[idx]
            sl = ln[idx]
            total = int(sl.sum())
            pos = np.repeat(st - _starts(sl), sl) + np.arange(total)
            lists[k] = (flat[pos], lens[idx])
        return _PartCols({k: v[idx] for k, v in self.scalar.items()}, self.topic_ids[idx], lists,
                         self.offsets[idx], self.file)


def _bulk_decode(name: str, version: int, ch: "_Chunk", rows: np.ndarray) -> Tuple[Any, np.ndarray, Any]:
    """One bulk decode (pyarrow) of the values of ``rows`` in place: the RecordBatch, each
    row's ok flag, and the error texts (None when every row decoded)."""
    newer = "latest" if version > kcodec.spec(name).valid_versions.highest else "error"
    got = _arrow.decode(name, _arrow.Slices(ch.buf, ch.vpos, ch.vlen, take=rows), version,
                        newer=newer, skip=3)
    err = got.column(_arrow.ERROR_COLUMN)
    if err.null_count == len(err):        # every row decoded
        return got, np.ones(len(rows), bool), None
    return got, _arrow.to_numpy(err.is_null()), err.to_pylist()


def _extract(name: str, version: int, ch: "_Chunk", rows: np.ndarray
             ) -> Tuple[_PartCols, np.ndarray, Optional[List[Optional[str]]]]:
    """Columns of the records ``rows`` of a chunk, each row's ok flag, and the error texts
    (None when every row decoded)."""
    offsets = ch.offsets[rows]
    if _arrow is not None:
        got, ok, errs = _bulk_decode(name, version, ch, rows)
        return _partcols_from_arrow(name, got, offsets, ch.file), ok, errs
    # no pyarrow: the engine's dicts, laid out the same way
    newer = "latest" if version > kcodec.spec(name).valid_versions.highest else "error"
    dicts, ok, errs = [], np.ones(len(rows), bool), [None] * len(rows)
    for i, body in enumerate(ch.bodies(rows)):
        try:
            dicts.append(kcodec.decode(name, body, version, newer=newer))
        except CodecError as ex:
            ok[i], errs[i] = False, str(ex)
            dicts.append({})
    return _partcols_from_dicts(name, dicts, offsets, ch.file), ok, None if ok.all() else errs


def _fixed16(col: Any) -> np.ndarray:
    """A ``binary(16)`` Arrow array's bytes as an (n, 16) uint8 array (zeros on nulls)."""
    n = len(col)
    raw = np.frombuffer(col.buffers()[1], np.uint8)[col.offset * 16:(col.offset + n) * 16]
    return raw.reshape(n, 16)


def _partcols_from_arrow(name: str, got: Any, offsets: np.ndarray, file: Optional[str]) -> _PartCols:
    change = name == "PartitionChangeRecord"
    dflt = {"leaderRecoveryState": -1 if change else 0, "leader": NO_LEADER_CHANGE if change else -1}
    names = set(got.schema.names)
    n = got.num_rows
    scalar = {}
    for s in _PART_SCALARS:
        d = dflt.get(s, -1)
        if s in names:
            col = got.column(s)
            scalar[s] = _arrow.to_numpy(col.fill_null(d) if col.null_count else col)
        else:
            scalar[s] = np.full(n, d, np.int32)
    ids = _fixed16(got.column("topicId")) if "topicId" in names else np.zeros((n, 16), np.uint8)
    raw: Dict[str, Any] = {}
    for s in _PART_LISTS:
        if s not in names:        # not in this version: absent
            raw[s] = None
            continue
        col = got.column(s)
        bufs = col.buffers()
        lo = np.frombuffer(bufs[1], np.int32)[col.offset:col.offset + n + 1]
        vals = col.values
        flat = (_fixed16(vals) if s == "directories"
                else np.frombuffer(vals.buffers()[1], np.int32)[vals.offset:vals.offset + len(vals)])
        valid = None
        if col.null_count:
            valid = np.frombuffer(bufs[0], np.uint8)
        raw[s] = (lo, valid, col.offset, flat)
    return _PartCols(scalar, ids, None, offsets, file, raw)


def _flat_lens(name: str, raw: Any, n: int) -> Tuple[np.ndarray, np.ndarray]:
    """A list column's (flat values, lengths: -2 absent, -1 null) from its Arrow layout."""
    if raw is None:
        flat = np.zeros((0, 16), np.uint8) if name == "directories" else np.zeros(0, np.int32)
        return flat, np.full(n, -2, np.int32)
    lo, valid, voff, values = raw
    lens = np.diff(lo).astype(np.int32)
    if valid is not None:
        lens[~np.unpackbits(valid, bitorder="little")[voff:voff + n].view(bool)] = -1
    return values[int(lo[0]):int(lo[-1])], lens


def _partcols_from_dicts(name: str, dicts: Sequence[dict], offsets: np.ndarray,
                         file: Optional[str]) -> _PartCols:
    change = name == "PartitionChangeRecord"
    dflt = {"leaderRecoveryState": -1 if change else 0, "leader": NO_LEADER_CHANGE if change else -1}
    scalar = {s: np.array([d.get(s, dflt.get(s, -1)) for d in dicts], np.int64) for s in _PART_SCALARS}
    ids = np.frombuffer(b"".join((d["topicId"].bytes if "topicId" in d else bytes(16)) for d in dicts),
                        np.uint8).reshape(-1, 16)
    lists = {}
    for s in _PART_LISTS:
        vals = [d.get(s, _MISSING) for d in dicts]
        lens = np.array([-2 if v is _MISSING else (-1 if v is None else len(v)) for v in vals], np.int32)
        if s == "directories":
            flat = np.frombuffer(b"".join(u.bytes for v in vals if v and v is not _MISSING for u in v),
                                 np.uint8).reshape(-1, 16)
        else:
            flat = np.array([x for v in vals if v and v is not _MISSING for x in v], np.int32)
        lists[s] = (flat, lens)
    return _PartCols(scalar, ids, lists, offsets, file)


_MISSING = object()
# records whose place among topic/partition records matters
_BARRIERS = {RECORD_TYPES_BY_NAME["RemoveTopicRecord"], RECORD_TYPES_BY_NAME["ClearElrRecord"]}


def _snapshot_end(file: Optional[str]) -> Optional[int]:
    if not file:
        return None
    m = re.match(r"(\d{20})-(\d+)\.checkpoint$", os.path.basename(file))
    return int(m.group(1)) if m else None


class _Chunk:
    """One window of the log (:func:`kcodec.log.iter_chunks`), its compressed batches'
    records merged in log order: the record values stay in one buffer, read in place,
    per row the frame's API key and version.  A window without compressed batches is the
    reader's own buffer, valid until the reader moves on: :meth:`keep` copies it when
    replay holds the chunk longer (inside a metadata transaction)."""

    def __init__(self, ch: Any) -> None:
        parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
        if len(parts) == 1:
            self.buf, recs = ch.data, ch.records
        else:
            bufs, rs, base = [], [], 0
            for b, r in parts:
                r = r.copy()
                for f in ("key_pos", "value_pos"):
                    r[f] += base
                bufs.append(bytes(b))
                rs.append(r)
                base += len(bufs[-1])
            self.buf = b"".join(bufs)
            recs = np.concatenate(rs)
            recs = recs[np.argsort(recs["batch_index"], kind="stable")]
        bi = recs["batch_index"]
        self.file = ch.file
        # the scanner's record fields are read where they are (strided), no copies
        self.offsets = recs["offset"]
        self.vpos, self.vlen = recs["value_pos"], recs["value_len"]
        self.kpos, self.klen = recs["key_pos"], recs["key_len"]
        self._bi, self._batches = bi, ch.batches
        bctrl = (ch.batches["attributes"] & 0x20) != 0
        self.ctrl = bctrl[bi] if bctrl.any() else np.zeros(len(bi), bool)
        self.api, self.ver, fast = _frame_heads(self.buf, self.vpos, self.vlen, wide=False)
        fast &= ~self.ctrl
        self.fast = fast
        self.hot = fast & _HOT[self.api]

    def epoch(self, i: int) -> int:
        """The partition leader epoch of row ``i``'s batch."""
        return int(self._batches["partition_leader_epoch"][self._bi[i]])

    def __len__(self) -> int:
        return len(self.offsets)

    def keep(self) -> None:
        if not isinstance(self.buf, bytes):
            self.buf = bytes(self.buf)

    def value(self, i: int) -> Optional[bytes]:
        n = int(self.vlen[i])
        return None if n < 0 else bytes(self.buf[int(self.vpos[i]):int(self.vpos[i]) + n])

    def key(self, i: int) -> Optional[bytes]:
        n = int(self.klen[i])
        return None if n < 0 else bytes(self.buf[int(self.kpos[i]):int(self.kpos[i]) + n])

    def bodies(self, rows: np.ndarray) -> List[bytes]:
        """The values of ``rows`` (all with the 3-byte frame head) without the head."""
        return log.slices(self.buf, self.vpos[rows] + 3, self.vlen[rows] - 3)


class _Replayer:
    def __init__(self, img: MetadataImage) -> None:
        self.img = img
        self.txn: Optional[List[Tuple[_Chunk, np.ndarray]]] = None
        self.pending: List[Tuple[_Chunk, np.ndarray]] = []
        self.pending_change = False
        self.skip_below = -1
        self.snapshot_file: Optional[str] = None

    def feed(self, ch: _Chunk, idx: np.ndarray) -> None:
        """Rows ``idx`` (log order) of a chunk."""
        if self.skip_below >= 0 and ch.file != self.snapshot_file:
            idx = idx[(ch.offsets[idx] >= self.skip_below) | ch.ctrl[idx]]
        special = np.nonzero(~ch.hot[idx])[0].tolist()
        start = 0
        for p in special:
            if start < p:
                self._hot(ch, idx[start:p])
            start = p + 1
            self._special(ch, int(idx[p]))
        if start < len(idx):
            self._hot(ch, idx[start:])

    def _hot(self, ch: _Chunk, rows: np.ndarray) -> None:
        if self.txn is not None:
            self.txn.append((ch, rows))
            return
        while len(rows):
            a = ch.api[rows]
            if self.pending_change:
                cut = np.nonzero(a == _PARTITION)[0]
            else:
                c5 = np.nonzero(a == _CHANGE)[0]
                cut = np.nonzero(a[c5[0]:] == _PARTITION)[0] + c5[0] if len(c5) else c5
            if not len(cut):
                self.pending.append((ch, rows))
                self.pending_change = self.pending_change or bool((a == _CHANGE).any())
                return
            # a partition created after changes: apply what came before first
            if cut[0]:
                self.pending.append((ch, rows[:cut[0]]))
                self.pending_change = self.pending_change or bool((a[:cut[0]] == _CHANGE).any())
            self.flush()
            rows = rows[cut[0]:]

    def _special(self, ch: _Chunk, i: int) -> None:
        img = self.img
        off = int(ch.offsets[i])
        if ch.ctrl[i]:
            self.control(ch.key(i), ch.value(i), off, ch.file, ch.epoch(i))
            return
        v = ch.value(i)
        mr = _read_fast(ch, i, v) if v is not None else MetadataRecord(
            None, None, None, None, b"", "error", "null value")
        k = mr.api_key
        if k in (_BEGIN, _END, _ABORT) and mr.ok:
            self.flush()
            self._txn_marker(ch, i, mr)
            return
        if self.txn is not None:
            self.txn.append((ch, np.array([i], np.int64)))
            return
        if k in _BARRIERS or not mr.ok:
            self.flush()
        img.last_offset = max(img.last_offset, off)
        if mr.status in ("unknown_type", "error"):
            img._issue(off, ch.file, mr, mr.status, mr.error or "")
            return
        if mr.status == "newer_version":
            img._issue(off, ch.file, mr, "newer_version",
                       f"{mr.type} version {mr.version} is newer than the specs; replayed "
                       f"with the newest known layout")
        if k in (_PARTITION, _CHANGE):
            self.flush()
            pc = _partcols_from_dicts(mr.type, [mr.value], np.array([off]), ch.file)
            img._count(mr.type, mr.version)
            (img._apply_partitions if k == _PARTITION else img._apply_changes)(pc, mr.version)
            return
        img.apply_record(mr.type, mr.value, mr.version, off, ch.file)  # type: ignore[arg-type]

    def _txn_marker(self, ch: _Chunk, i: int, mr: MetadataRecord) -> None:
        img = self.img
        img._count(mr.type, mr.version)   # type: ignore[arg-type]
        img.last_offset = max(img.last_offset, int(ch.offsets[i]))
        if mr.api_key == _BEGIN:
            if self.txn is not None:
                img.issues.append(Issue(int(ch.offsets[i]), ch.file, _BEGIN, mr.version, "invalid",
                                        "BeginTransactionRecord inside a transaction", b""))
                segs, self.txn = self.txn, None
                for c, r in segs:
                    self.feed(c, r)
                self.flush()
            self.txn = []
            img.open_transaction = (mr.value or {}).get("name", "")
        elif mr.api_key == _END:
            segs, self.txn = (self.txn or []), None
            img.open_transaction = None
            for c, r in segs:
                self.feed(c, r)
            self.flush()
        else:
            self.txn = None
            img.open_transaction = None
            img.aborted_transactions += 1

    def control(self, key: Optional[bytes], value: Optional[bytes], offset: int, file: Optional[str],
                epoch: int) -> None:
        img = self.img
        if key is None or len(key) < 4:
            img.issues.append(Issue(offset, file, None, None, "error",
                                    "control record key shorter than 4 bytes", key or b""))
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

    def flush(self) -> None:
        """Apply the pending runs: topics, then partitions, then changes (log order
        within each; _hot keeps a partition created after a change out of the run)."""
        if not self.pending:
            return
        segs, self.pending, self.pending_change = self.pending, [], False
        img = self.img
        runs: List[Tuple[_Chunk, List[np.ndarray]]] = []
        for ch, rows in segs:          # one run per chunk: fewer, bigger bulk calls
            if runs and runs[-1][0] is ch:
                runs[-1][1].append(rows)
            else:
                runs.append((ch, [rows]))
        segs = [(ch, parts[0] if len(parts) == 1 else np.concatenate(parts)) for ch, parts in runs]
        for ch, rows in segs:
            img.last_offset = max(img.last_offset, int(ch.offsets[rows[-1]]))
        for key in (_TOPIC, _PARTITION, _CHANGE):
            for ch, rows in segs:
                sel = rows[ch.api[rows] == key]
                if not len(sel):
                    continue
                for ver in np.unique(ch.ver[sel]).tolist():
                    part = sel[ch.ver[sel] == ver]
                    self._bulk(ch, key, int(ver), part)

    def _bulk(self, ch: _Chunk, key: int, ver: int, rows: np.ndarray) -> None:
        img = self.img
        name = _BULK[key]
        newer = ver > kcodec.spec(name).valid_versions.highest
        if key == _TOPIC and _arrow is not None:
            got, okm, errs = _bulk_decode(name, ver, ch, rows)
            names = got.column("name").to_pylist()
            raw = _fixed16(got.column("topicId")).tobytes()
            ids = [raw[i:i + 16] for i in range(0, len(raw), 16)]
        elif key == _TOPIC:
            cols = kcodec.decode_bulk(name, ch.bodies(rows), ver, newer="latest" if newer else "error")
            okm = np.asarray(cols["_ok"], bool)
            names = cols["name"].to_pylist() if hasattr(cols["name"], "to_pylist") else list(cols["name"])
            tid = cols["topicId"].to_pylist() if hasattr(cols["topicId"], "to_pylist") else list(cols["topicId"])
            ids = [u.bytes if isinstance(u, _uuid.UUID) else u for u in tid]
            errs = cols["_error"]
        else:
            pc, okm, errs = _extract(name, ver, ch, rows)
        if not okm.all():
            for j in np.nonzero(~okm)[0].tolist():
                r = int(rows[j])
                img.issues.append(Issue(int(ch.offsets[r]), ch.file, key, ver, "error", errs[j],
                                        ch.value(r) or b""))
        if newer:
            for r in rows.tolist():
                img.issues.append(Issue(int(ch.offsets[r]), ch.file, key, ver, "newer_version",
                                        f"{name} version {ver} is newer than the specs; replayed "
                                        "with the newest known layout", ch.value(r) or b""))
        good = np.nonzero(okm)[0]
        if not len(good):
            return
        img._count(name, ver, len(good))
        if key == _TOPIC:
            if len(good) < len(rows):
                names = [names[i] for i in good.tolist()]
                ids = [ids[i] for i in good.tolist()]
            img._apply_topics(names, ids)
        elif key == _PARTITION:
            img._apply_partitions(pc if len(good) == len(rows) else pc.take(good), ver)
        else:
            img._apply_changes(pc if len(good) == len(rows) else pc.take(good), ver)


def _read_fast(ch: _Chunk, i: int, v: bytes) -> MetadataRecord:
    """:func:`read_record` of row ``i``, straight to the engine for the common 3-byte
    frame of a known record type and version (the framing reader for the rest, and for
    any error, so that its messages are the same)."""
    if ch.fast[i]:
        name = RECORD_TYPES.get(int(ch.api[i]))
        ver = int(ch.ver[i])
        if name is not None and ver <= kcodec.spec(name).valid_versions.highest:
            try:
                return MetadataRecord(int(ch.api[i]), name, ver, kcodec.decode(name, v[3:], ver),
                                      v, "ok")
            except CodecError:
                pass
    return read_record(v)


def replay(source: Any, *, image: Optional[MetadataImage] = None, verify_crc: bool = True,
           compact: bool = True) -> MetadataImage:
    """Replay a metadata log, snapshot, directory (``bootstrap.checkpoint``,
    ``*.checkpoint`` snapshots and ``__cluster_metadata-0`` segments), bytes, or a list
    of those in order, into a :class:`MetadataImage`.  Unknown record types and versions
    newer than the specs are recorded in ``image.issues``; so is each corrupt batch (none
    of whose records is applied: :mod:`kcodec.log` never hands them out), also listed in
    ``image.batch_errors`` (see :attr:`MetadataImage.damaged`)."""
    img = image if image is not None else MetadataImage()
    rp = _Replayer(img)
    for lc in log.iter_chunks(log.topic_source(source, log.METADATA_TOPIC), verify_crc=verify_crc):
        for e in (lc.errors[i] for i in sorted(lc.errors)):
            img.batch_errors.append(e)
            img.issues.append(Issue(e.position, e.file, None, None, "error", str(e), b""))
        _note_last_epoch(img, lc)
        ch = _Chunk(lc)
        if not len(ch):
            continue
        rp.feed(ch, np.arange(len(ch.offsets), dtype=np.int64))
        rp.flush()
        for c, _rows in rp.txn or ():
            c.keep()        # held past this window: the reader reuses its buffer
    rp.flush()
    if compact:
        img.compact()
    return img


def _note_last_epoch(img: MetadataImage, lc: Any) -> None:
    """Keep the epoch of the readable batch with the highest last offset so far."""
    b = lc.batches
    if not len(b):
        return
    ok = np.ones(len(b), bool)
    ok[list(lc.errors)] = False
    if not ok.any():
        return
    last = b["base_offset"][ok] + b["last_offset_delta"][ok]
    i = int(np.argmax(last))
    if int(last[i]) >= img._last_batch_offset:
        img._last_batch_offset = int(last[i])
        img.last_epoch = int(b["partition_leader_epoch"][ok][i])


def _frame_heads(buf: Any, pos: np.ndarray, lens: np.ndarray, wide: bool = True
                 ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per record value ``buf[pos:pos + lens]``: its API key and version (int64, or the
    bytes as uint8 unless ``wide``), and whether the frame head is the common 3 bytes
    (frame version 1, one-byte uvarints); read in place by ``kcodec.slice_heads``, no
    object per record."""
    heads, have = kcodec.slice_heads(buf, pos, lens, 3)
    h0, h1, h2 = heads[:, 0], heads[:, 1], heads[:, 2]
    fast = (have == 3) & (h0 == 1) & (h1 < 0x80) & (h2 < 0x80)
    if not wide:
        return h1, h2, fast
    return h1.astype(np.int64), h2.astype(np.int64), fast


def _groups(api: np.ndarray, ver: np.ndarray, idx: np.ndarray) -> Iterator[Tuple[int, int, np.ndarray]]:
    """``(api key, version, rows of idx)`` per distinct pair (both below 0x80: the fast
    frames), by ascending pair, rows in log order: one counting pass and one stable sort."""
    key = (api << 7) | ver
    counts = np.bincount(key, minlength=1 << 14)
    present = np.flatnonzero(counts)
    if len(present) == 1:
        yield int(present[0]) >> 7, int(present[0]) & 0x7F, idx
        return
    order = idx[np.argsort(key, kind="stable")]
    for k, rows in zip(present.tolist(), np.split(order, np.cumsum(counts[present])[:-1])):
        yield k >> 7, k & 0x7F, rows


class RecordColumns:
    """What :func:`iter_record_columns` returns: an iterator of ``(record type, version,
    batch)`` whose :attr:`errors` lists, as reading goes, the log's batches that failed
    (:class:`kcodec.log.BatchError`; none of their records is in any batch yielded)."""

    def __init__(self, source: Any, verify_crc: bool) -> None:
        self.errors: List[log.BatchError] = []
        self._it = _record_columns(source, verify_crc, self.errors)

    def __iter__(self) -> "RecordColumns":
        return self

    def __next__(self) -> Tuple[str, int, Any]:
        return next(self._it)


def iter_record_columns(source: Any, *, verify_crc: bool = True) -> RecordColumns:
    """Decode every metadata record of a log into columns, one ``(record type, version,
    batch)`` per part of a chunk of the log and type/version (by API key and version).
    ``batch`` is a ``pyarrow.RecordBatch`` (needs pyarrow): the record's fields
    as :func:`kcodec.arrow.decode` gives them, ``_error`` (null when the record decoded),
    and ``offset``.  Each group is one bulk decode of the record values in place (the log
    reader's chunk, no bytes object per record).  Control records, unknown types and
    frames other than the common 3-byte head (frame version 1, one-byte API key and
    version) are left to :func:`replay` (which reports them).  A batch that failed (bad
    CRC, cut, ...) gives no rows: it is in the returned iterator's ``errors`` list
    (:class:`RecordColumns`), complete once the iterator is exhausted."""
    return RecordColumns(source, verify_crc)


def _record_columns(source: Any, verify_crc: bool, errors: List[Any]) -> Iterator[Tuple[str, int, Any]]:
    from kcodec import arrow     # needs pyarrow
    for ch in log.iter_chunks(log.topic_source(source, log.METADATA_TOPIC), verify_crc=verify_crc):
        errors.extend(ch.errors[i] for i in sorted(ch.errors))
        parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
        for buf, recs in parts:
            if not len(recs):
                continue
            pos, lens = recs["value_pos"], recs["value_len"]
            api, ver, fast = _frame_heads(buf, pos, lens)
            fast &= (ch.batches["attributes"][recs["batch_index"]] & 0x20) == 0
            idx = np.nonzero(fast)[0]
            if not len(idx):
                continue
            for a, v, rows in _groups(api[idx], ver[idx], idx):
                name = RECORD_TYPES.get(a)
                if name is None:
                    continue
                newer = "latest" if v > kcodec.spec(name).valid_versions.highest else "error"
                got = arrow.decode(name, arrow.Slices(buf, pos, lens, take=rows), v,
                                   newer=newer, skip=3)
                yield name, v, got.append_column("offset", arrow.from_numpy(recs["offset"][rows]))
