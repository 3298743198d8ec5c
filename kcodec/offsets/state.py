"""Fold ``__consumer_offsets`` records into the group state a coordinator would load.

Rules (Kafka's coordinator loader):

* last value wins per key, a tombstone deletes the key;
* read_committed: records of a transactional batch are held per (partition, producer
  id) until the partition's COMMIT marker (then applied, each one only if no later
  record of the log already replaced it) or ABORT marker (dropped); transactions still
  open at the end are held back and reported;
* unknown record types are skipped (KIP-915) and counted;
* a classic group is ``Empty`` without members, else ``Stable`` (what a loading
  coordinator sets); consumer/share/streams groups derive their state from group
  epoch, target assignment epoch and member epochs (``Empty``, ``Assigning``,
  ``Reconciling``, ``Stable``; streams also ``NotReady`` without a topology).

Offsets committed by a group without any group record (``assign()`` + commit) belong to
an ``Empty`` classic group, as the coordinator creates one for them.
"""
from __future__ import annotations

import os

import numpy as np
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Set, Tuple

from kcodec.fold import RecordHandlers

from ..errors import CorruptRecordError
from .records import OffsetsRecord, decode_record

__all__ = ["CommittedOffset", "Member", "GroupState", "OffsetsState", "Folder", "fold", "fold_log"]

# Record type ids (key int16) of the group coordinator, 4.1.1.
OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA = 2
CONSUMER = {"metadata": 3, "partition_metadata": 4, "member": 5, "target_metadata": 6,
            "target_member": 7, "current_assignment": 8, "regex": 16}
SHARE = {"partition_metadata": 9, "member": 10, "metadata": 11, "target_metadata": 12,
         "target_member": 13, "current_assignment": 14, "state_partition_metadata": 15}
_CONSUMER_TYPES = frozenset(CONSUMER.values())
STREAMS = {"metadata": 17, "partition_metadata": 18, "member": 19, "target_metadata": 20,
           "target_member": 21, "current_assignment": 22, "topology": 23}


@dataclass
class CommittedOffset:
    """A committed offset as the coordinator holds it."""
    topic: str
    partition: int
    offset: int
    leader_epoch: Optional[int]      # None when not recorded (-1 or value version < 3)
    metadata: str
    commit_timestamp: int
    expire_timestamp: Optional[int]  # value version 1 only
    topic_id: Any = None             # uuid.UUID when recorded (tagged, 4.1+); None for none
                                     # (Kafka's Uuid.ZERO_UUID, as -1 is for the timestamps)
    log_offset: int = -1             # offset of the record in __consumer_offsets
    transactional: bool = False


@dataclass
class Member:
    """A group member with what the log says about it."""
    member_id: str
    instance_id: Optional[str] = None
    client_id: Optional[str] = None
    client_host: Optional[str] = None
    rack_id: Optional[str] = None
    session_timeout_ms: Optional[int] = None
    rebalance_timeout_ms: Optional[int] = None
    subscribed_topics: Optional[List[str]] = None
    subscribed_topic_regex: Optional[str] = None
    # classic: decoded embedded subscription/assignment (dict) or raw bytes
    subscription: Any = None
    assignment: Any = None
    # assigned partitions: classic {topic name: [p]}, consumer/share {topic id: [p]},
    # streams {"active"/"standby"/"warmup": [{subtopologyId, partitions}]}
    assigned: Any = None
    target_assignment: Any = None
    member_epoch: Optional[int] = None
    previous_member_epoch: Optional[int] = None
    member_state: Optional[int] = None
    pending_revocation: Any = None
    raw: Dict[str, Any] = field(default_factory=dict)   # latest value per record kind


@dataclass
class GroupState:
    """A group as a coordinator would load it."""
    group_id: str
    type: str = "classic"               # classic, consumer, share, streams
    state: str = "Empty"
    generation: Optional[int] = None    # classic generation / group epoch
    protocol_type: Optional[str] = None
    protocol: Optional[str] = None
    leader: Optional[str] = None
    current_state_timestamp: Optional[int] = None
    target_assignment_epoch: Optional[int] = None
    metadata_hash: Optional[int] = None
    members: Dict[str, Member] = field(default_factory=dict)
    # "consumer": a classic group the coordinator converted from a consumer-protocol
    # (KIP-848) group, whose member assignments its server-side assignor computed
    converted_from: Optional[str] = None
    offsets: Dict[Tuple[str, int], CommittedOffset] = field(default_factory=dict)
    regexes: Dict[str, Any] = field(default_factory=dict)
    topology: Optional[Dict[str, Any]] = None
    records: Dict[int, Any] = field(default_factory=dict)  # group-level latest values by type

    @property
    def epoch(self) -> Optional[int]:
        return self.generation


@dataclass
class OffsetsState:
    """The folded log."""
    groups: Dict[str, GroupState]
    deleted_groups: Set[str]                          # groups whose records were all deleted
    deleted_offsets: Dict[str, Set[Tuple[str, int]]]  # group -> offsets tombstoned and not re-committed
    open_transactions: Dict[Tuple[Any, int], int]     # (partition, producer id) -> records held back
    aborted_records: int
    unknown_records: Dict[int, int]                   # record type -> count (skipped)
    errors: List[str]                                 # corrupt batches / undecodable records
    records_read: int = 0


class _Commit(NamedTuple):
    """An offset commit from the columnar fast path (no dicts)."""
    group: str
    topic: str
    partition: int
    tombstone: bool
    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int
    expire_timestamp: int
    value_version: int


def _pylist(col: Any, idx: np.ndarray) -> List[Any]:
    if hasattr(col, "take"):
        from kcodec.arrow import from_numpy
        return col.take(from_numpy(np.asarray(idx, np.int64))).to_pylist()
    return [col[i] for i in idx.tolist()]


class _Take:
    """Python lists of the columns of a chunk, for the rows ``idx`` only."""

    def __init__(self, cols: Dict[str, Any], idx: np.ndarray) -> None:
        self.rows = idx.tolist()
        self.kind = cols["kind"][idx].tolist()
        self.offs = cols["offset"][idx].tolist()
        self.tss = cols["timestamp"][idx].tolist()
        self.pids = cols["batch_producer_id"][idx].tolist()
        self.attrs = cols["batch_attributes"][idx].tolist()
        self.part = cols["partition"][idx].tolist()
        self.coff = cols["commit_offset"][idx].tolist()
        self.le = cols["leader_epoch"][idx].tolist()
        self.cts = cols["commit_timestamp"][idx].tolist()
        self.ets = cols["expire_timestamp"][idx].tolist()
        self.vv = cols["value_version"][idx].tolist()
        self.grp = _pylist(cols["group"], idx)
        self.top = _pylist(cols["topic"], idx)
        self.meta = _pylist(cols["metadata"], idx)


def _last_plain_commits(cols: Dict[str, Any], other: Dict[int, Any],
                        as_of: Optional[int]) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Vectorised last-value-wins for a chunk: among plain (non-transactional) offset
    commits of keys that see nothing else in this chunk (no tombstone, transactional
    commit or generic-path commit), only the last one per key matters.  Returns (rows to
    apply, mask of all rows so handled) or None when the chunk needs the row-by-row path."""
    if not hasattr(cols["group"], "dictionary_encode") or len(cols["kind"]) < 64:
        return None
    if any(getattr(r, "record_type", None) in OFFSET_COMMIT_TYPES for r in other.values()):
        return None
    kind = cols["kind"]
    part = cols["partition"].astype(np.int64)
    if len(part) and (part.min() < 0 or part.max() >= (1 << 21)):
        return None
    from kcodec.arrow import to_numpy    # Arrow columns (checked above): pyarrow is there
    g = to_numpy(cols["group"].dictionary_encode().indices).astype(np.int64)
    t = to_numpy(cols["topic"].dictionary_encode().indices).astype(np.int64)
    if len(g) and (g.max() >= (1 << 21) or t.max() >= (1 << 21)):
        return None
    key = (g << 42) | (t << 21) | part
    txn = (cols["batch_attributes"] & 0x10) != 0
    valid = np.ones(len(kind), bool) if as_of is None else cols["timestamp"] <= as_of
    plain = (kind == 0) & ~txn & valid
    special = ((kind == 1) | ((kind == 0) & txn)) & valid
    handled = plain & ~np.isin(key, key[special]) if special.any() else plain
    idx = np.flatnonzero(handled)
    if not len(idx):
        return None
    rev = idx[::-1]
    _, first = np.unique(key[rev], return_index=True)
    return np.sort(rev[first]), handled


class Folder:
    """Incremental fold: feed records in log order with :meth:`add`, then :meth:`state`."""

    def __init__(self, *, as_of_ms: Optional[int] = None) -> None:
        self.as_of_ms = as_of_ms
        # logical key -> (order, OffsetsRecord); order = (partition, log offset)
        self.live: Dict[Tuple[Any, ...], Tuple[Any, Any, bool]] = {}
        self.pending: Dict[Tuple[Any, int], List[Tuple[Any, OffsetsRecord]]] = {}
        self.seen_groups: Set[str] = set()
        # group -> log order of its latest KIP-848 consumer-group record (live or tombstone)
        self.modern_seen: Dict[str, Any] = {}
        self.tombstoned_offsets: Dict[str, Set[Tuple[str, int]]] = {}
        self.aborted = 0
        self.unknown: Dict[int, int] = {}
        self.errors: List[str] = []
        self.count = 0

    @staticmethod
    def _identity(rec: Any) -> Tuple[Any, ...]:
        if isinstance(rec, _Commit):
            return ("oc", rec.group, rec.topic, rec.partition)
        if rec.record_type in OFFSET_COMMIT_TYPES and rec.key:   # types 0 and 1: one key
            k = rec.key
            return ("oc", k["group"], k["topic"], k["partition"])
        return (rec.record_type, rec.key_bytes[2:])

    def _apply(self, order: Any, rec: Any, transactional: bool,
               only_if_newer: bool = False) -> None:
        ident = self._identity(rec)
        cur = self.live.get(ident)
        if only_if_newer and cur is not None and cur[0] > order:
            return
        is_commit = ident[0] == "oc"
        g = ident[1] if is_commit else rec.group_id
        if g is not None:
            self.seen_groups.add(g)
            if not is_commit and rec.record_type in _CONSUMER_TYPES:
                self.modern_seen[g] = order
        if rec.tombstone:
            self.live.pop(ident, None)
            if is_commit:
                self.tombstoned_offsets.setdefault(g, set()).add((ident[2], ident[3]))
        else:
            self.live[ident] = (order, rec, transactional)
            if is_commit and g in self.tombstoned_offsets:
                self.tombstoned_offsets[g].discard((ident[2], ident[3]))

    def add_columns(self, cols: Dict[str, Any], *, partition: Any = None) -> None:
        """Feed one chunk of :func:`kcodec.offsets.columns.iter_offset_columns` (the fast
        path: offset commits arrive as columns, everything else as decoded records)."""
        other = dict(cols["other"])
        ctl = dict(cols.get("control") or [])
        as_of = self.as_of_ms
        pkey = partition if partition is not None else ""
        n = len(cols["kind"])
        skip = _last_plain_commits(cols, other, as_of)
        if skip is not None:
            fast_rows, handled = skip
            self.count += int(handled.sum())
            rest = np.flatnonzero(~handled)
        else:
            fast_rows = np.empty(0, np.int64)
            rest = np.arange(n)
        # Python objects only for the rows visited
        sel = np.concatenate([fast_rows, rest])
        S = _Take(cols, sel)
        live = self.live
        for j in range(len(fast_rows)):
            g, t, p = S.grp[j], S.top[j], S.part[j]
            live[("oc", g, t, p)] = ((pkey, S.offs[j]), _Commit(
                g, t, p, False, S.coff[j], S.le[j], S.meta[j], S.cts[j], S.ets[j], S.vv[j]), False)
            self.seen_groups.add(g)
            tomb = self.tombstoned_offsets.get(g)
            if tomb:
                tomb.discard((t, p))
        for j in range(len(fast_rows), len(sel)):
            i = S.rows[j]
            k = S.kind[j]
            ts = S.tss[j]
            if as_of is not None and ts > as_of:
                continue
            txn = bool(S.attrs[j] & 0x10)
            if k == 0 or k == 1:
                rec: Any = _Commit(S.grp[j], S.top[j], S.part[j], k == 1, S.coff[j], S.le[j],
                                   S.meta[j], S.cts[j], S.ets[j], S.vv[j])
            elif k == 2:
                rec = other[i]
            else:
                ctype = ctl.get(i)
                if ctype is None:
                    continue
                self.add(None, partition=partition, offset=S.offs[j], timestamp=ts,
                         producer_id=S.pids[j], control=ctype)
                continue
            self.add(rec, partition=partition, offset=S.offs[j], timestamp=ts,
                     transactional=txn, producer_id=S.pids[j])

    def add(self, rec: Optional[OffsetsRecord], *, partition: Any = None, offset: int = 0,
            timestamp: Optional[int] = None, transactional: bool = False, producer_id: int = -1,
            control: Optional[str] = None) -> None:
        """Feed one record.  ``control`` = "COMMIT"/"ABORT" for a transaction marker of
        ``producer_id`` (then ``rec`` is ignored)."""
        if self.as_of_ms is not None and timestamp is not None and timestamp > self.as_of_ms:
            return
        self.count += 1
        order = (partition if partition is not None else "", offset)
        if control is not None:
            held = self.pending.pop((partition, producer_id), [])
            if control == "COMMIT":
                for o, r in held:
                    self._apply(o, r, True, only_if_newer=True)
            elif control == "ABORT":
                self.aborted += len(held)
            return
        if rec is None:
            return
        if isinstance(rec, _Commit):
            if transactional:
                self.pending.setdefault((partition, producer_id), []).append((order, rec))
            else:
                self._apply(order, rec, False)
            return
        if rec.error:
            self.errors.append(f"{partition}@{offset}: {rec.error}")
            return
        if rec.unknown:
            self.unknown[rec.record_type] = self.unknown.get(rec.record_type, 0) + 1
            return
        if transactional:
            self.pending.setdefault((partition, producer_id), []).append((order, rec))
            return
        self._apply(order, rec, False)

    # ------------------------------------------------------------------ build the state

    def state(self) -> OffsetsState:
        """The groups the live records describe (each applied by its record type's
        handler, in log order), and what the fold saw on the way."""
        groups: Dict[str, GroupState] = {}
        for (order, rec, txn) in sorted(self.live.values(), key=lambda t: t[0]):
            if isinstance(rec, _Commit):
                _group(groups, rec.group).offsets[(rec.topic, rec.partition)] = CommittedOffset(
                    rec.topic, rec.partition, rec.offset,
                    None if rec.leader_epoch < 0 else rec.leader_epoch, rec.metadata,
                    rec.commit_timestamp, None if rec.expire_timestamp < 0 else rec.expire_timestamp,
                    None, order[1], txn)
                continue
            gid = rec.group_id
            if gid is None:
                continue
            g = _group(groups, gid)
            GROUP_RECORDS.dispatch(rec.record_type, g, rec, rec.key or {},
                                   rec.value or {}, order[1], txn)
            if rec.record_type == GROUP_METADATA and g.members and gid in self.modern_seen \
                    and self.modern_seen[gid] < order:
                # A classic group with members written after the group's consumer-protocol
                # records: the coordinator converted it (KIP-848 online downgrade, when the
                # last consumer-protocol member left); the assignments are the server
                # assignor's target, not a classic leader's.
                g.converted_from = "consumer"
        # Members known only from target assignments are not members (the target
        # assignment of a departed member is deleted with it); keep what has metadata.
        for g in groups.values():
            if g.type in ("consumer", "share", "streams"):
                for mid in [mid for mid, m in g.members.items()
                            if not any(n.endswith("MemberMetadata") for n in m.raw)]:
                    del g.members[mid]
            g.state = _derive_state(g)
        deleted = {gid for gid in self.seen_groups if gid not in groups}
        deleted_offsets = {g: set(s) for g, s in self.tombstoned_offsets.items() if s}
        open_tx = {k: len(v) for k, v in self.pending.items() if v}
        return OffsetsState(groups, deleted, deleted_offsets, open_tx, self.aborted,
                            dict(self.unknown), list(self.errors), self.count)


# --------------------------------------------------------------------------- record handlers

def _group(groups: Dict[str, GroupState], gid: str) -> GroupState:
    g = groups.get(gid)
    if g is None:
        g = groups[gid] = GroupState(gid)
    return g


def _member(g: GroupState, mid: str) -> Member:
    m = g.members.get(mid)
    if m is None:
        m = g.members[mid] = Member(mid)
    return m


# record type -> handler(group, record, key dict, value dict, log offset, transactional)
GROUP_RECORDS = RecordHandlers()


@GROUP_RECORDS.on(*OFFSET_COMMIT_TYPES)
def _offset_commit(g: GroupState, rec: OffsetsRecord, k: Dict[str, Any], v: Dict[str, Any],
                   log_offset: int, txn: bool) -> None:
    le = v.get("leaderEpoch", -1)
    et = v.get("expireTimestamp")
    g.offsets[(k["topic"], k["partition"])] = CommittedOffset(
        k["topic"], k["partition"], v["offset"], None if le is None or le < 0 else le,
        v.get("metadata", ""), v.get("commitTimestamp", -1),
        None if et is None or et < 0 else et, _topic_id(v.get("topicId")), log_offset, txn)


def _topic_id(u: Any) -> Any:
    return None if u is None or u.int == 0 else u


@GROUP_RECORDS.on(GROUP_METADATA)
def _group_metadata(g: GroupState, rec: OffsetsRecord, k: Dict[str, Any], v: Dict[str, Any],
                    log_offset: int, txn: bool) -> None:
    g.type = "classic"
    g.records[rec.record_type] = v
    g.protocol_type = v.get("protocolType")
    g.generation = v.get("generation")
    g.protocol = v.get("protocol")
    g.leader = v.get("leader")
    ts = v.get("currentStateTimestamp", -1)
    g.current_state_timestamp = None if ts is None or ts < 0 else ts
    for i, mv in enumerate(v.get("members") or []):
        m = _member(g, mv["memberId"])
        m.instance_id = mv.get("groupInstanceId")
        m.client_id = mv.get("clientId")
        m.client_host = mv.get("clientHost")
        m.session_timeout_ms = mv.get("sessionTimeout")
        # v0 has no rebalance timeout: the loader uses the session timeout
        m.rebalance_timeout_ms = mv.get("rebalanceTimeout", mv.get("sessionTimeout"))
        m.subscription = mv.get("subscription")
        m.assignment = mv.get("assignment")
        if rec.members is not None and i < len(rec.members):
            sub, asg = rec.members[i]["subscription"], rec.members[i]["assignment"]
            if sub.value is not None:
                m.subscription = sub.value
                m.subscribed_topics = list(sub.value.get("topics") or [])
                m.rack_id = sub.value.get("rackId")
            if asg.value is not None:
                m.assignment = asg.value
                m.assigned = {tp["topic"]: list(tp["partitions"])
                              for tp in asg.value.get("assignedPartitions") or []}
        m.raw["GroupMetadataValue"] = mv


# The consumer (KIP-848), share (KIP-932) and streams (KIP-1071) groups write the same
# roles of records, each under its own record types: one handler per role.

def _group_epoch(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                 v: Dict[str, Any]) -> None:
    g.generation = v.get("epoch")
    g.metadata_hash = v.get("metadataHash")
    g.records[rec.record_type] = v


def _target_epoch(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                  v: Dict[str, Any]) -> None:
    g.target_assignment_epoch = v.get("assignmentEpoch")
    g.records[rec.record_type] = v


def _regex(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any], v: Dict[str, Any]) -> None:
    g.regexes[k.get("regularExpression") or ""] = v


def _topology(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
              v: Dict[str, Any]) -> None:
    g.topology = v


def _group_record(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                  v: Dict[str, Any]) -> None:
    g.records[rec.record_type] = v


def _member_record(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                   v: Dict[str, Any]) -> Member:
    m = _member(g, k["memberId"])
    m.raw[rec.type_name or str(rec.record_type)] = v
    return m


def _member_metadata(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                     v: Dict[str, Any]) -> None:
    m = _member_record(kind, g, rec, k, v)
    m.instance_id = v.get("instanceId")
    m.rack_id = v.get("rackId")
    m.client_id = v.get("clientId")
    m.client_host = v.get("clientHost")
    m.rebalance_timeout_ms = v.get("rebalanceTimeoutMs")
    m.subscribed_topics = v.get("subscribedTopicNames")
    m.subscribed_topic_regex = v.get("subscribedTopicRegex")
    cmm = v.get("classicMemberMetadata")
    if cmm:
        m.session_timeout_ms = cmm.get("sessionTimeoutMs")


def _target_member(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                   v: Dict[str, Any]) -> None:
    _member_record(kind, g, rec, k, v).target_assignment = _assignment(kind, v, target=True)


def _current_assignment(kind: str, g: GroupState, rec: OffsetsRecord, k: Dict[str, Any],
                        v: Dict[str, Any]) -> None:
    m = _member_record(kind, g, rec, k, v)
    m.member_epoch = v.get("memberEpoch")
    m.previous_member_epoch = v.get("previousMemberEpoch")
    m.member_state = v.get("state")
    m.assigned = _assignment(kind, v)
    m.pending_revocation = _pending(kind, v)


_ROLES: Dict[str, Callable[..., Any]] = {
    "metadata": _group_epoch, "target_metadata": _target_epoch, "regex": _regex,
    "topology": _topology, "partition_metadata": _group_record,
    "state_partition_metadata": _group_record, "member": _member_metadata,
    "target_member": _target_member, "current_assignment": _current_assignment,
}


def _role_handler(kind: str, role_fn: Callable[..., Any]) -> Callable[..., None]:
    def handle(g: GroupState, rec: OffsetsRecord, k: Dict[str, Any], v: Dict[str, Any],
               log_offset: int, txn: bool) -> None:
        g.type = kind
        role_fn(kind, g, rec, k, v)
    return handle


for _kind, _table in (("consumer", CONSUMER), ("share", SHARE), ("streams", STREAMS)):
    for _role, _t in _table.items():
        GROUP_RECORDS.register(_t, _role_handler(_kind, _ROLES[_role]))


def _assignment(kind: str, v: Dict[str, Any], target: bool = False) -> Any:
    if kind == "streams":
        return {"active": v.get("activeTasks"), "standby": v.get("standbyTasks"),
                "warmup": v.get("warmupTasks")}
    parts = v.get("topicPartitions") if target else v.get("assignedPartitions")
    return {tp["topicId"]: list(tp["partitions"]) for tp in parts or []}


def _pending(kind: str, v: Dict[str, Any]) -> Any:
    if kind == "streams":
        return {"active": v.get("activeTasksPendingRevocation"),
                "standby": v.get("standbyTasksPendingRevocation"),
                "warmup": v.get("warmupTasksPendingRevocation")}
    if "partitionsPendingRevocation" in v:
        return {tp["topicId"]: list(tp["partitions"]) for tp in v["partitionsPendingRevocation"]}
    return None


def _derive_state(g: GroupState) -> str:
    if not g.members:
        return "Empty"
    if g.type == "classic":
        return "Stable"
    if g.type == "streams" and g.topology is None:
        return "NotReady"
    if g.type == "share":
        return "Stable"
    if g.target_assignment_epoch is None or (g.generation is not None
                                             and g.target_assignment_epoch < g.generation):
        return "Assigning"
    for m in g.members.values():
        if m.member_epoch != g.target_assignment_epoch or (m.member_state not in (None, 0)):
            return "Reconciling"
    return "Stable"


def _check_errors(errors: str) -> None:
    if errors not in ("report", "raise"):
        raise ValueError(f"errors must be 'report' or 'raise', got {errors!r}")


def _corrupt(batch_error: Any) -> CorruptRecordError:
    return CorruptRecordError(f"{batch_error.reason}: {batch_error.message}",
                              file=batch_error.file, position=batch_error.position)


def fold(records: Iterable[Tuple[Any, Any, Optional[OffsetsRecord]]], *,
         as_of_ms: Optional[int] = None, errors: str = "report") -> OffsetsState:
    """Fold ``(batch, record, decoded)`` triples (as :func:`kcodec.offsets.records.iter_decoded`
    yields them) into the loaded state.  ``as_of_ms`` ignores records stamped later.

    A corrupt batch (bad CRC, cut, undecompressable) contributes nothing: with
    ``errors="report"`` it is listed in :attr:`OffsetsState.errors`, with ``"raise"`` the
    first one raises :class:`~kcodec.errors.CorruptRecordError`."""
    from kcodec.log import parse_control_record
    _check_errors(errors)
    f = Folder(as_of_ms=as_of_ms)
    for batch, rec, dec in records:
        part = os.path.dirname(batch.file) if batch.file else None
        if batch.error is not None:
            if errors == "raise":
                raise _corrupt(batch.error)
            if rec is None or rec is batch.records[0]:     # (records: only if salvaged)
                f.errors.append(str(batch.error))
            continue          # its records are damaged bytes: never state
        if rec is None:
            continue
        if batch.is_control:
            try:
                c = parse_control_record(rec)
            except Exception as e:  # a corrupt marker is reported, not fatal
                f.errors.append(f"{part}@{rec.offset}: control record: {e}")
                continue
            f.add(None, partition=part, offset=rec.offset, timestamp=rec.timestamp,
                  producer_id=batch.producer_id, control=c.type_name)
            continue
        f.add(dec, partition=part, offset=rec.offset, timestamp=rec.timestamp,
              transactional=batch.is_transactional, producer_id=batch.producer_id)
    return f.state()


def fold_log(source: Any, *, as_of_ms: Optional[int] = None, fast: bool = True,
             errors: str = "report", **kwargs: Any) -> OffsetsState:
    """Read a ``__consumer_offsets`` log (files, directories, bytes) and fold it.

    ``fast=True`` folds the columnar decode (:mod:`kcodec.offsets.columns`), ``False``
    one decoded record object at a time; both give the same state.  Corrupt batches
    contribute nothing; ``errors`` says whether they are reported (in
    :attr:`OffsetsState.errors`) or raised, as in :func:`fold`."""
    _check_errors(errors)
    if not fast:
        from .records import iter_decoded
        return fold(iter_decoded(source, **kwargs), as_of_ms=as_of_ms, errors=errors)
    from .columns import iter_offset_columns
    f = Folder(as_of_ms=as_of_ms)
    for cols in iter_offset_columns(source, **kwargs):
        if cols["errors"] and errors == "raise":
            raise _corrupt(cols["errors"][0])
        for e in cols["errors"]:
            f.errors.append(str(e))
        part = os.path.dirname(cols["file"]) if cols["file"] else None
        f.add_columns(cols, partition=part)
    return f.state()


def fold_consumer_records(records: Iterable[Tuple[Optional[bytes], Optional[bytes]]]) -> OffsetsState:
    """Fold ``(key, value)`` pairs as a read_committed consumer delivers them (aborted
    records already filtered by the client, control records invisible)."""
    f = Folder()
    for i, (k, v) in enumerate(records):
        f.add(decode_record(k, v, errors="report"), offset=i)  # type: ignore[arg-type]
    return f.state()
