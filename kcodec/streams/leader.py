"""The Streams group leader end to end: member subscription bytes in, assignment bytes out.

:func:`assign_group` decodes each member's ConsumerProtocolSubscription and its Streams
``SubscriptionInfo``, applies the version rules (:mod:`~kcodec.streams.probing`), groups the
members (threads) into clients by ProcessId (future members into one synthetic client), runs
the HighAvailabilityTaskAssignor (:mod:`~kcodec.streams.assignors`; or with ``assignor=``
``"sticky"`` / ``"fallback"`` the LegacyStickyTaskAssignor / FallbackPriorTaskAssignor), hands each client's tasks
to its threads as ``StreamsPartitionAssignor.assignTasksToThreads`` does, and encodes every
member's ConsumerProtocolAssignment with its ``AssignmentInfo`` (the host maps, the same for
every member, are encoded once).

Under the cooperative protocol a task with a partition another member still owns is not
handed out in this round: the member it is meant for gets ``nextRebalanceMs`` = 0 (keeping
it as a standby meanwhile if its client had its state) and receives it in the follow-up
rebalance, after the owner has revoked it.  Each member's partitions are listed in topic and
partition order, its active tasks parallel to them, as Kafka encodes them.
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from kcodec.consumer import (Assignment, Subscription, TopicPartition, decode_subscription,
                             encode_assignment as encode_consumer_assignment)

from .._java import java_hashmap_order
from .assignors import (AssignmentConfigs, StreamsClient, TaskAssignment, assign_tasks, assign_tasks_sticky,
                        process_id_key)
from .probing import LeaderVersions, assignment_versions, gives_future_members_tasks, leader_versions
from .protocol import (LATEST_SUPPORTED_VERSION, LONG_MAX, AssignmentInfo, HostInfo, SubscriptionInfo, TaskId,
                       decode_subscription as decode_streams_subscription, encode_assignment,
                       encode_host_section, task_sort_key)

if TYPE_CHECKING:
    from .racks import TaskPartitions

__all__ = ["Topology", "GroupAssignment", "assign_group", "JavaPriorityQueue"]

FUTURE_ID = _uuid.UUID(int=0xF07E)   # stands for every member on a newer version (Kafka: random)


@dataclass
class Topology:
    """The tasks of an application: input partitions per task, and which are stateful
    (with the changelog end offset sum of each stateful task)."""
    partitions: Dict[TaskId, List[TopicPartition]]
    stateful: Set[TaskId] = field(default_factory=set)
    end_offset_sums: Dict[TaskId, int] = field(default_factory=dict)
    # rack-aware assignment (KIP-925): changelog partitions per task and the racks of every
    # partition's replicas (None for a broker without broker.rack); empty: not known
    changelogs: Dict[TaskId, List[TopicPartition]] = field(default_factory=dict)
    replica_racks: Dict[TopicPartition, List[Optional[str]]] = field(default_factory=dict)

    def task_partitions(self) -> Optional["TaskPartitions"]:
        """What the rack-aware assignor reads, or None without replica racks."""
        from .racks import TaskPartitions
        if not self.replica_racks:
            return None
        return TaskPartitions(self.partitions, self.changelogs, self.replica_racks)

    @classmethod
    def single_topic(cls, topic: str, partitions: int, *, stateful: bool = True,
                     end_offset_sum: int = 0) -> "Topology":
        """One source topic, one subtopology: task 0_p reads partition p."""
        parts = {TaskId(0, p): [TopicPartition(topic, p)] for p in range(partitions)}
        sf = set(parts) if stateful else set()
        return cls(parts, sf, {t: end_offset_sum for t in sf})


class JavaPriorityQueue:
    """``java.util.PriorityQueue`` of comparable items: the same array layout, so iteration
    order (which Kafka leaks in assignTasksToThreads) matches."""

    def __init__(self, items: Sequence) -> None:
        self.q = list(items)
        self.k = {x: task_sort_key(x) for x in self.q}     # keys computed once
        for i in range((len(self.q) >> 1) - 1, -1, -1):
            self._down(i, self.q[i])
        self.pos = {x: i for i, x in enumerate(self.q)}

    def __len__(self) -> int:
        return len(self.q)

    def __contains__(self, x) -> bool:
        return x in self.pos

    def __iter__(self) -> Iterator:
        return iter(list(self.q))

    def _set(self, i: int, x) -> None:
        self.q[i] = x
        if hasattr(self, "pos"):
            self.pos[x] = i

    def _down(self, k: int, x) -> None:
        n = len(self.q)
        half = n >> 1
        while k < half:
            child = 2 * k + 1
            c = self.q[child]
            right = child + 1
            if right < n and self.k[c] > self.k[self.q[right]]:
                child = right
                c = self.q[child]
            if self.k[x] <= self.k[c]:
                break
            self._set(k, c)
            k = child
        self._set(k, x)

    def _up(self, k: int, x) -> None:
        while k > 0:
            parent = (k - 1) >> 1
            e = self.q[parent]
            if self.k[x] >= self.k[e]:
                break
            self._set(k, e)
            k = parent
        self._set(k, x)

    def poll(self):
        if not self.q:
            return None
        result = self.q[0]
        self.remove(result)
        return result

    def remove(self, x) -> None:
        i = self.pos.pop(x)
        last = self.q.pop()
        if i == len(self.q):
            return
        self._down(i, last)
        if self.q[i] is last:
            self._up(i, last)


def _prev_tasks_by_lag(tasks: Mapping[TaskId, int], lag_of) -> List[TaskId]:
    return sorted(tasks, key=lambda t: (lag_of(t), task_sort_key(t)))


def assign_tasks_to_threads(tasks: Sequence[TaskId], stateful: bool, consumers: Sequence[str],
                            prev_by_lag: Mapping[str, List[TaskId]], thread_load: Dict[str, int]) -> Dict[str, List[TaskId]]:
    """``StreamsPartitionAssignor.assignTasksToThreads``: an even share per thread, previous
    owners first (stateful), the rest interleaved; ``thread_load`` carries over between the
    calls for stateful actives, standbys and stateless actives."""
    out: Dict[str, List[TaskId]] = {c: [] for c in consumers}
    if len(consumers) == 1:       # one thread: it takes everything (the order is not kept)
        out[consumers[0]] = list(tasks)
        thread_load[consumers[0]] = thread_load.get(consumers[0], 0) + len(tasks)
        return out
    total = len(tasks) + sum(thread_load.values())
    min_per = total // len(consumers)
    pq = JavaPriorityQueue(sorted(tasks, key=task_sort_key))
    to_fill: List[str] = []
    prev_owner: Dict[TaskId, str] = {}
    if len(pq):
        for c in consumers:
            target = min_per - thread_load.get(c, 0)
            if stateful:
                for t in prev_by_lag.get(c, ()):
                    if t in pq:
                        if len(out[c]) < target:
                            out[c].append(t)
                            pq.remove(t)
                        else:
                            prev_owner[t] = c
            if len(out[c]) < target:
                to_fill.append(c)
        while to_fill:
            t = pq.poll()
            if t is None:
                raise RuntimeError("Ran out of unassigned stateful tasks but some members were not at capacity")
            c = to_fill.pop(0)
            out[c].append(t)
            if len(out[c]) + thread_load.get(c, 0) < min_per:
                to_fill.append(c)
        if len(pq):
            to_fill = [c for c in consumers if len(out[c]) + thread_load.get(c, 0) == min_per]
            for t in sorted(prev_owner, key=task_sort_key):
                c = prev_owner[t]
                if c in to_fill and t in pq:
                    out[c].append(t)
                    pq.remove(t)
                    to_fill.remove(c)
            for t in pq:
                out[to_fill.pop(0)].append(t)
    for c, ts in out.items():
        thread_load[c] = thread_load.get(c, 0) + len(ts)
    return out


@dataclass
class GroupAssignment:
    """What the leader sends: per member the ConsumerProtocolAssignment bytes (their
    ``userData`` is the AssignmentInfo), plus what it decided."""
    versions: LeaderVersions
    tasks: Optional[TaskAssignment]
    infos: Dict[str, AssignmentInfo]
    partitions: Dict[str, List[TopicPartition]]
    host_section: bytes = b""
    followup_rebalance_ms: Optional[int] = None

    def encoded(self) -> Iterator[Tuple[str, bytes]]:
        """``(member, ConsumerProtocolAssignment bytes)`` one at a time (a large group's
        assignments share their host maps; they need not all be in memory at once)."""
        for m, info in self.infos.items():
            ud = encode_assignment(info, host_section=self.host_section if info.version == self._hv else None)
            yield m, encode_consumer_assignment(Assignment(self.partitions[m], ud))

    @property
    def _hv(self) -> int:
        return next(iter(self.infos.values())).version if self.infos else -1


def _assign_sticky(clients: List[StreamsClient], subs: Mapping[str, Subscription],
                   by_client: Mapping[_uuid.UUID, List[str]], flags: Mapping[TaskId, bool],
                   topology: Topology, configs: AssignmentConfigs, fallback: bool) -> TaskAssignment:
    # previous actives: owned partitions' tasks and offset sums of -2 (ClientState.initializePrevTasks)
    task_of = {tp: t for t, tps in topology.partitions.items() for tp in tps}
    for c in clients:
        owned = {task_of[TopicPartition(*tp)] for m in by_client[c.process_id] for tp in subs[m].owned_partitions
                 if TopicPartition(*tp) in task_of}
        c.prev_active = owned | {t for t, v in c.task_offset_sums.items() if v == -2}
    # clientMetadataMap is filled walking the subscriptions HashMap<memberId, Subscription>
    ids = list(subs)
    member_client = {m: pid for pid, ms in by_client.items() for m in ms}
    seen: Dict[_uuid.UUID, StreamsClient] = {c.process_id: c for c in clients}
    ordered: List[StreamsClient] = []
    for i in java_hashmap_order(ids):
        pid = member_client.get(ids[i])
        if pid is not None and pid in seen:
            ordered.append(seen.pop(pid))
    return assign_tasks_sticky(ordered, flags, configs, preserve_active=fallback,
                               partitions=None if fallback else topology.task_partitions())


def assign_group(subscriptions: Mapping[str, bytes], topology: Topology,
                 configs: AssignmentConfigs = AssignmentConfigs(), *, now_ms: int = 0,
                 leader_latest: int = LATEST_SUPPORTED_VERSION, cooperative: bool = True,
                 assignor: str = "ha", leader: Optional[str] = None) -> GroupAssignment:
    """Run the Streams leader on the members' ConsumerProtocolSubscription bytes.

    ``assignor``: ``"ha"`` (HighAvailabilityTaskAssignor), ``"sticky"`` (LegacyStickyTaskAssignor)
    or ``"fallback"`` (FallbackPriorTaskAssignor, Kafka's choice when the end offsets cannot be
    fetched).  The sticky ones see the clients in the order of Kafka's client HashMap, filled
    from the subscriptions HashMap (member ids inserted in the order ``subscriptions`` gives).
    ``leader``: the member running the assignment; a probing rebalance's deadline goes to its
    client, as Kafka's leader gives it to its own process (default: the first member id)."""
    if assignor not in ("ha", "sticky", "fallback"):
        raise ValueError("assignor must be 'ha', 'sticky' or 'fallback'")
    subs: Dict[str, Subscription] = {m: decode_subscription(b) for m, b in subscriptions.items()}
    seen: Dict[bytes, SubscriptionInfo] = {}      # threads of one client often send the same bytes
    infos: Dict[str, SubscriptionInfo] = {}
    for m, s in subs.items():
        ud = s.user_data or b""
        info = seen.get(ud)
        if info is None:
            info = seen[ud] = decode_streams_subscription(ud)
        infos[m] = info
    lv = leader_versions(infos, leader_latest=leader_latest)
    used, common = assignment_versions(lv, leader_latest=leader_latest)
    members = sorted(subs)
    if lv.error_code:
        out = {m: AssignmentInfo(used, common, error_code=lv.error_code) for m in members}
        return GroupAssignment(lv, None, out, {m: [] for m in members})

    # members -> clients (ProcessId); future members share one client
    by_client: Dict[_uuid.UUID, List[str]] = {}
    host_of: Dict[_uuid.UUID, Optional[HostInfo]] = {}
    sums: Dict[_uuid.UUID, Dict[TaskId, int]] = {}
    consumer_sums: Dict[str, Dict[TaskId, int]] = {}
    future = set(lv.future_members)
    for m in members:
        info = infos[m]
        pid = FUTURE_ID if m in future else info.process_id
        by_client.setdefault(pid, []).append(m)
        host_of.setdefault(pid, None if m in future else info.host_info)
        sums.setdefault(pid, {}).update(info.task_offset_sums)
        consumer_sums[m] = info.task_offset_sums
    if future and not gives_future_members_tasks(leader_latest):
        # leaders before 2.6 send future members an empty assignment (KIP-268)
        for m in future:
            by_client[FUTURE_ID].remove(m)
        del by_client[FUTURE_ID]
    # client.tag.* of a client (v11 subscriptions; its threads send the same ones)
    # the client's rack: the rack.id all its consumers send (RackAwareTaskAssignor.validateClientRack)
    clients = [StreamsClient(pid, len(ms), sums[pid], client_tags=dict(infos[ms[0]].client_tags) if ms else {},
                             consumer_racks={m: subs[m].rack_id for m in ms})
               for pid, ms in by_client.items()]
    flags = {t: t in topology.stateful for t in topology.partitions}
    if assignor == "ha":
        res = assign_tasks(clients, flags, topology.end_offset_sums, configs, partitions=topology.task_partitions())
    else:
        res = _assign_sticky(clients, subs, by_client, flags, topology, configs, assignor == "fallback")

    # tasks -> threads, per client
    rank = {t: i for i, t in enumerate(res.tasks)}
    active_of: Dict[str, List[TaskId]] = {}
    standby_of: Dict[str, List[TaskId]] = {}
    for pid, ms in by_client.items():
        consumers = sorted(ms)

        def lag_of(t: TaskId, _pid=pid) -> int:
            s = sums[_pid].get(t, 0)
            end = topology.end_offset_sums.get(t, 0)
            return s if s in (-2, -3) else (end if end < s else end - s)

        # previous stateful tasks of each thread by lag (only needed to share among threads)
        prev = {} if len(consumers) == 1 else {
            m: _prev_tasks_by_lag({t: 0 for t in consumer_sums[m] if flags.get(t)}, lag_of) for m in consumers}
        load: Dict[str, int] = {}
        acts = res.active[pid]
        sf_act = [t for t in acts if flags[t]]
        sl_act = [t for t in acts if not flags[t]]
        stb = res.standby[pid] + res.warmup[pid]
        a1 = assign_tasks_to_threads(sf_act, True, consumers, prev, load)
        s1 = assign_tasks_to_threads(stb, True, consumers, prev, load)
        a2 = assign_tasks_to_threads(sl_act, False, consumers, prev, load)
        for m in consumers:
            active_of[m] = sorted(a1[m] + a2[m], key=rank.__getitem__)
            standby_of[m] = sorted(s1[m], key=rank.__getitem__)
    for m in future:
        active_of.setdefault(m, [])
        standby_of.setdefault(m, [])

    # the host maps every member receives (v2+)
    pbh: Dict[HostInfo, List[TopicPartition]] = {}
    sbh: Dict[HostInfo, List[TopicPartition]] = {}
    if lv.min_received >= 2:
        for pid in by_client:
            h = host_of.get(pid)
            if h is None:
                continue
            pbh[h] = [tp for t in res.active[pid] for tp in topology.partitions[t]]
            sbh[h] = [tp for t in res.standby[pid] + res.warmup[pid] for tp in topology.partitions[t]]

    # Cooperative hand-over (StreamsPartitionAssignor.populateActiveTaskAndPartitionsLists): a
    # task with a partition new to its consumer that some member still owns is withheld whole
    # until the owner has revoked it; the consumer it was meant for asks for the follow-up
    # rebalance at once, and keeps it as a standby meanwhile if its client had it as one.
    owned_by: Dict[str, Set[TopicPartition]] = {m: {TopicPartition(*tp) for tp in subs[m].owned_partitions}
                                                 for m in members}
    owned: Set[TopicPartition] = set().union(*owned_by.values())
    # ClientState.previouslyOwnedStandby: the tasks any consumer of the member's client had
    # state for without running them
    prev_standby: Dict[str, Set[TaskId]] = {}
    for ms in by_client.values():
        had = {t for c in ms for t in infos[c].standby_tasks}
        prev_standby.update({c: had for c in ms})
    out_infos: Dict[str, AssignmentInfo] = {}
    parts: Dict[str, List[TopicPartition]] = {}
    for m in members:
        pairs: List[Tuple[TopicPartition, TaskId]] = []
        removed: List[TaskId] = []
        for t in active_of.get(m, []):
            tps = topology.partitions[t]
            if cooperative and any(tp in owned and tp not in owned_by[m] for tp in tps):
                removed.append(t)
            else:
                pairs += [(tp, t) for tp in tps]
        pairs.sort(key=lambda p: (p[0].topic, p[0].partition))   # Kafka's PARTITION_COMPARATOR
        stb = {t: list(topology.partitions[t]) for t in standby_of.get(m, [])}
        for t in removed:
            if flags.get(t) and t in prev_standby.get(m, ()):
                stb[t] = list(topology.partitions[t])
        parts[m] = [tp for tp, _ in pairs]
        # a member with a task withheld asks for the follow-up rebalance at once
        out_infos[m] = AssignmentInfo(used, common, [t for _, t in pairs], stb, pbh, sbh, 0,
                                      0 if removed else LONG_MAX)
    followup = None
    if res.probing_rebalance_needed:
        followup = now_ms + configs.probing_rebalance_interval_ms
    lead = leader if leader in infos else (members[0] if members else None)
    lead_threads = by_client.get(FUTURE_ID if lead in future else infos[lead].process_id) if lead else None
    if followup is not None and lead_threads:
        # Kafka gives the probing deadline to the first consumer (member id order) of the
        # leader's client, unless that one already asks for an immediate rebalance
        first = out_infos[min(lead_threads)]
        if first.next_rebalance_ms != 0:
            first.next_rebalance_ms = followup
    host = encode_host_section(out_infos[members[0]]) if members else b""
    return GroupAssignment(lv, res, out_infos, parts, host, followup)
