"""Group history from a ``__consumer_offsets`` log: rebalances, members, commit rates.

:class:`Folder` answers "what would a coordinator load now"; :class:`Timeline` answers
"what happened on the way": every coordinator operation that changed a group's epoch
(classic generation or KIP-848/share/streams group epoch), membership or state, with the
members (and their client ids and hosts) that joined and left, and offset commits counted
per group, topic and minute.

How operations are recognised.  Kafka's coordinator writes all the records of one
operation (a join, a heartbeat that computes a new assignment, a member leaving) with one
timestamp, so a group's records with the same timestamp are taken as one operation and
the group is looked at after each:

* classic groups: each ``GroupMetadataValue`` is the whole group (generation, protocol,
  members) and an operation of its own; its tombstone deletes the group (state ``Dead``);
* consumer, share and streams groups: a member metadata record adds or updates a member,
  its tombstone removes it; the group epoch record sets the epoch (its tombstone deletes
  the group); target assignment and current assignment records give the state (Kafka's
  ``Assigning``/``Reconciling``/``Stable``, derived as :class:`Folder` does).

An event is emitted when the epoch, the member set or the state changed.  Offset commits
are counted at their record's timestamp; transactional commits (``TxnOffsetCommit``) are
held per (partition, producer id) until the partition's COMMIT marker and dropped on
ABORT, as a read_committed reader sees them; commits of transactions still open at the
end are not counted (:attr:`Timeline.open_transaction_commits` says how many).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .columns import KIND_COMMIT, KIND_CONTROL
from .state import (CONSUMER, GROUP_METADATA, GROUP_RECORDS, OFFSET_COMMIT_TYPES, SHARE, STREAMS,
                    GroupState, _derive_state)

__all__ = ["Timeline", "group_summary", "DEFAULT_ASSIGNORS", "MINUTE_MS"]

MINUTE_MS = 60_000

#: The server-side assignor a group uses when its members name none, as Kafka 4.1.1 names
#: it: ``group.consumer.assignors`` (default ``uniform,range``: the first is the default),
#: ``group.share.assignors`` (``simple``), and the streams groups' only task assignor
#: (``StickyTaskAssignor.name()`` = ``sticky``).
DEFAULT_ASSIGNORS = {"consumer": "uniform", "share": "simple", "streams": "sticky"}

_KIND_OF: Dict[int, str] = {t: kind for kind, table in (("consumer", CONSUMER), ("share", SHARE),
                                                        ("streams", STREAMS)) for t in table.values()}
_MEMBER_METADATA = {CONSUMER["member"], SHARE["member"], STREAMS["member"]}
_GROUP_EPOCH = {CONSUMER["metadata"], SHARE["metadata"], STREAMS["metadata"]}
_CURRENT_ASSIGNMENT = {CONSUMER["current_assignment"], SHARE["current_assignment"],
                       STREAMS["current_assignment"]}
_TARGET_EPOCH = {CONSUMER["target_metadata"], SHARE["target_metadata"], STREAMS["target_metadata"]}
_TOPOLOGY = STREAMS["topology"]
_TXN = 0x10


def _who(m: Any) -> Dict[str, Any]:
    return {"member_id": m.member_id, "instance_id": m.instance_id, "client_id": m.client_id,
            "client_host": m.client_host}


def _has_metadata(m: Any) -> bool:
    return any(n.endswith("MemberMetadata") or n == "GroupMetadataValue" for n in m.raw)


class _Track:
    """One group as the log has built it so far, and what was last reported of it."""
    __slots__ = ("g", "ts", "partition", "offset", "deleted", "reported")

    def __init__(self, gid: str) -> None:
        self.g = GroupState(gid)
        self.ts: Optional[int] = None          # timestamp of the operation being read
        self.partition: Any = None
        self.offset = -1
        self.deleted = False
        # (epoch, state, {member id: who}) as of the last event
        self.reported: Tuple[Any, str, Dict[str, Dict[str, Any]]] = (None, "Dead", {})


class Timeline:
    """Feed a ``__consumer_offsets`` partition in log order (:meth:`add_columns` with the
    chunks of :func:`kcodec.offsets.iter_offset_columns`, or :meth:`add` one decoded
    record at a time), then :meth:`result`.  Several partitions may be fed to one
    timeline (a group lives in one partition)."""

    def __init__(self) -> None:
        self._tracks: Dict[str, _Track] = {}
        self._events: List[Dict[str, Any]] = []
        self._commits: Counter = Counter()      # (group, topic, minute) -> commits
        self._held: Dict[Tuple[Any, int], Counter] = {}   # (partition, producer id) -> held commits

    # ------------------------------------------------------------------ input

    def add_columns(self, cols: Dict[str, Any], *, partition: Any = None) -> None:
        """Feed one chunk of :func:`kcodec.offsets.iter_offset_columns` (the same dicts
        :meth:`kcodec.offsets.Folder.add_columns` takes)."""
        kind = np.asarray(cols["kind"])
        ts = np.asarray(cols["timestamp"])
        txn = (np.asarray(cols["batch_attributes"]) & _TXN) != 0
        commit = kind == KIND_COMMIT
        plain = np.flatnonzero(commit & ~txn)
        if len(plain):
            self._count_plain(cols, plain, ts[plain] // MINUTE_MS)
        # group records, transactional commits and markers: in log order, row by row (few)
        other = dict(cols["other"])
        ctl = dict(cols.get("control") or [])
        rows = sorted(set(other) | set(ctl) | set(np.flatnonzero(commit & txn).tolist()))
        if not rows:
            return
        offs, pids = cols["offset"], cols["batch_producer_id"]
        for i in rows:
            if i in other:
                self.add(other[i], partition=partition, offset=int(offs[i]), timestamp=int(ts[i]),
                         transactional=bool(txn[i]), producer_id=int(pids[i]))
            elif i in ctl:
                self.add(None, partition=partition, offset=int(offs[i]), timestamp=int(ts[i]),
                         producer_id=int(pids[i]), control=ctl[i])
            else:
                held = self._held.setdefault((partition, int(pids[i])), Counter())
                held[(_at(cols["group"], i), _at(cols["topic"], i), int(ts[i]) // MINUTE_MS)] += 1

    def _count_plain(self, cols: Dict[str, Any], idx: np.ndarray, minute: np.ndarray) -> None:
        group, topic = cols["group"], cols["topic"]
        if hasattr(group, "dictionary_encode"):     # Arrow columns: count without Python rows
            import pyarrow as pa
            from kcodec.arrow import from_numpy
            take = from_numpy(idx.astype(np.int64))
            t = pa.table({"g": group.take(take), "t": topic.take(take), "m": from_numpy(minute.astype(np.int64))})
            agg = t.group_by(["g", "t", "m"]).aggregate([([], "count_all")])
            for g, tp, m, n in zip(*(agg.column(c).to_pylist() for c in ("g", "t", "m", "count_all"))):
                self._commits[(g, tp, m)] += n
            return
        for i, m in zip(idx.tolist(), minute.tolist()):
            self._commits[(group[i], topic[i], m)] += 1

    def add(self, rec: Any, *, partition: Any = None, offset: int = 0, timestamp: Optional[int] = None,
            transactional: bool = False, producer_id: int = -1, control: Optional[str] = None) -> None:
        """Feed one decoded record (:func:`kcodec.offsets.decode_record`) in log order, or a
        transaction marker (``control`` = ``"COMMIT"``/``"ABORT"`` of ``producer_id``)."""
        if control is not None:
            held = self._held.pop((partition, producer_id), None)
            if held and control == "COMMIT":
                self._commits.update(held)
            return
        if rec is None or getattr(rec, "error", None) or getattr(rec, "unknown", False):
            return
        rt = rec.record_type
        ts = int(timestamp) if timestamp is not None else 0
        if rt in OFFSET_COMMIT_TYPES:
            if rec.tombstone or not rec.key:
                return
            k = (rec.key["group"], rec.key["topic"], ts // MINUTE_MS)
            if transactional:
                self._held.setdefault((partition, producer_id), Counter())[k] += 1
            else:
                self._commits[k] += 1
            return
        gid = rec.group_id
        if gid is None or (rt != GROUP_METADATA and rt not in _KIND_OF):
            return
        tr = self._tracks.get(gid)
        if tr is None:
            tr = self._tracks[gid] = _Track(gid)
        if tr.ts is not None and (tr.ts != ts or rt == GROUP_METADATA):
            # a new operation on this group (a classic group's record is one by itself)
            self._close(tr)
        tr.ts, tr.partition, tr.offset = ts, partition, offset
        self._apply(tr, rec)

    def _apply(self, tr: _Track, rec: Any) -> None:
        g, rt = tr.g, rec.record_type
        k, v = rec.key or {}, rec.value or {}
        if rt == GROUP_METADATA:
            if rec.tombstone:
                tr.deleted = True
                g.members.clear()
                return
            tr.deleted = False
            g.members.clear()       # the record is the whole group
            GROUP_RECORDS.dispatch(rt, g, rec, k, v, tr.offset, False)
            return
        if g.type != _KIND_OF[rt]:
            g.type = _KIND_OF[rt]
        if rec.tombstone:
            mid = k.get("memberId")
            if rt in _MEMBER_METADATA:
                g.members.pop(mid, None)
            elif rt in _CURRENT_ASSIGNMENT and mid in g.members:
                g.members[mid].member_epoch = None
            elif rt in _GROUP_EPOCH:
                tr.deleted = True
                g.members.clear()
            elif rt in _TARGET_EPOCH:
                g.target_assignment_epoch = None
            elif rt == _TOPOLOGY:
                g.topology = None
            return
        tr.deleted = False
        GROUP_RECORDS.dispatch(rt, g, rec, k, v, tr.offset, False)

    def _close(self, tr: _Track) -> None:
        """The operation read so far on ``tr`` is complete: report what it changed."""
        self._report(tr)

    # ------------------------------------------------------------------ output

    def result(self) -> Dict[str, Any]:
        """``{"group_events": [...], "commit_counts": [...]}`` (JSON-able; events sorted by
        timestamp then group, counts by group, topic, minute)."""
        for tr in self._tracks.values():
            if tr.ts is not None:
                self._report(tr)
                tr.ts = None
        events = sorted(self._events, key=lambda e: (e["timestamp"], e["group_id"], e["offset"]))
        counts = [{"group_id": g, "topic": t, "minute": m, "count": n}
                  for (g, t, m), n in sorted(self._commits.items())]
        return {"group_events": events, "commit_counts": counts}

    @property
    def open_transaction_commits(self) -> int:
        """Transactional commits whose transaction had no marker yet (not counted)."""
        return sum(sum(c.values()) for c in self._held.values())

    def _report(self, tr: _Track) -> None:
        g = tr.g
        live = {mid: m for mid, m in g.members.items() if _has_metadata(m)}
        if tr.deleted:
            state, epoch = "Dead", g.generation
        else:
            state = _derive_state(dataclasses.replace(g, members=live))
            epoch = g.generation
        who = {mid: _who(m) for mid, m in live.items()}
        old_epoch, old_state, old_who = tr.reported
        if (epoch, state) == (old_epoch, old_state) and who.keys() == old_who.keys():
            return
        tr.reported = (epoch, state, who)
        ev: Dict[str, Any] = {
            "group_id": g.group_id, "timestamp": tr.ts, "kind": g.type, "epoch": epoch,
            "members": len(who), "state": state,
            "joined": [who[m] for m in sorted(who.keys() - old_who.keys())],
            "left": [old_who[m] for m in sorted(old_who.keys() - who.keys())],
            "rebalance": epoch is not None and epoch != old_epoch and epoch > 0,
            "protocol_type": g.protocol_type if g.type == "classic" else None,
            "assignor": _assignor(g, live),
            "partition": None if tr.partition is None else str(tr.partition), "offset": tr.offset,
        }
        self._events.append(ev)


def _at(col: Any, i: int) -> Any:
    v = col[i]
    return v.as_py() if hasattr(v, "as_py") else v


def _assignor(g: GroupState, members: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The assignor a group uses, as Kafka names it: a classic group's protocol (the
    client-side assignor its members agreed on); a consumer group's members'
    ``serverAssignor`` or, when they name none, the broker's default; share and streams
    groups' server-side assignor."""
    members = g.members if members is None else members
    if g.type == "classic":
        return g.protocol or None
    if g.type == "consumer":
        names = sorted({(m.raw.get("ConsumerGroupMemberMetadataValue") or {}).get("serverAssignor") or
                        DEFAULT_ASSIGNORS["consumer"] for m in members.values()})
        return ",".join(names) or None
    return DEFAULT_ASSIGNORS.get(g.type)


def group_summary(g: GroupState) -> Dict[str, Any]:
    """One row about a folded group (:attr:`kcodec.offsets.OffsetsState.groups`), for tables:
    ``protocol_type`` (classic groups: ``consumer``, ``connect``, ...; None otherwise) and
    ``assignor`` (see :func:`_assignor`; None for a group without members that names none)
    as separate columns, ``static_members`` (the group instance ids of its static members)
    and the client hosts of its members."""
    return {
        "group_id": g.group_id, "type": g.type, "state": g.state, "epoch": g.generation,
        "protocol_type": g.protocol_type if g.type == "classic" else None,
        "assignor": _assignor(g) if (g.members or g.type == "classic") else None,
        "members": len(g.members),
        "static_members": sorted(m.instance_id for m in g.members.values() if m.instance_id),
        "client_hosts": sorted({m.client_host for m in g.members.values() if m.client_host}),
        "offsets": len(g.offsets),
        "converted_from": g.converted_from,
    }
