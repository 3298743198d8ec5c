"""Kafka Streams task assignment: Kafka 4.1.1's ``HighAvailabilityTaskAssignor`` (KIP-441),
with its loops in C (``csrc/kc_streams_ha.c``).

Clients are Streams instances (one ProcessId, ``capacity`` = stream threads); tasks are
stateful (changelogged) or stateless.  Each client reports task offset sums; the leader turns
them into lags against the changelog end offset sums (``ClientState.computeTaskLags``) and:

1. spreads stateful actives round-robin, then balances them over threads;
2. places ``num.standby.replicas`` standbys on the least loaded clients, balanced likewise;
3. moves every active (then standby) whose client is not caught up (lag above
   ``acceptable.recovery.lag``) while a more caught-up client exists: to a caught-up client,
   leaving a warm-up replica behind while the global ``max.warmup.replicas`` budget lasts;
4. places stateless tasks on the clients with the fewest actives per thread;
5. asks for a probing rebalance (after ``probing.rebalance.interval.ms``) when it moved anything.

    >>> import uuid
    >>> from kcodec.streams import TaskId
    >>> from kcodec.streams.assignors import StreamsClient, assign_tasks
    >>> a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    >>> tasks = [TaskId(0, p) for p in range(4)]
    >>> clients = [StreamsClient(a, task_offset_sums={t: -2 for t in tasks}), StreamsClient(b)]
    >>> res = assign_tasks(clients, tasks, end_offset_sums={t: 100_000 for t in tasks})
    >>> [len(res.active[a]), len(res.warmup[b]), res.probing_rebalance_needed]
    [4, 2, True]

With ``rack_aware_assignment_tags`` configured (KIP-708) standbys are placed as Kafka's
``ClientTagAwareStandbyTaskAssignor`` places them: each on the least loaded client whose tag
values differ from the active's and the standbys' so far (a tag key is let go once every value
of it is used), the rest on the least loaded clients, and standbys only rebalance between
clients with the same tags.  With ``rack_aware_assignment_strategy`` ``min_traffic`` or
``balance_subtopology`` (KIP-925) and the tasks' partitions with their replica racks
(``partitions=``, see :mod:`kcodec.streams.racks`), actives, standbys and stateless tasks are
then re-placed by Kafka's min-cost-flow optimisation to cut cross-rack traffic, solved
``rack_aware_assignment_mode="fast"`` (the default: Kafka's optimal cost by a primal-dual
solver) or ``"exact"`` (Kafka's cycle cancelling, Kafka's assignment move for move); the result's
``rack_aware_mode`` says which ran.

The two other assignors Kafka 4.1.1 keeps run on the same clients (their previous active and
standby tasks, from ``prev_active`` / ``prev_standby`` or else the offset sums: -2 active, any
other standby): :func:`assign_tasks_sticky` (``LegacyStickyTaskAssignor``, chosen with
``internal.task.assignor.class``) and :func:`assign_tasks_fallback` (``FallbackPriorTaskAssignor``,
which Kafka runs when it cannot fetch the changelog end offsets: previous actives stay put and a
follow-up rebalance is requested).  Both walk Java ``HashMap``/``HashSet`` collections, whose
iteration order decides ties; it is reproduced from ``UUID.hashCode`` / ``TaskId.hashCode``
(JDK 17 table sizing unless ``jdk >= 19``; bins Java would turn into trees are not modelled):

    >>> a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    >>> clients = [StreamsClient(a, prev_active=[TaskId(0, 0), TaskId(0, 1)]), StreamsClient(b)]
    >>> res = assign_tasks_sticky(clients, [TaskId(0, p) for p in range(3)])
    >>> [str(t) for t in res.active[a]], [str(t) for t in res.active[b]]   # 0_1 iterates first
    (['0_1', '0_2'], ['0_0'])
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

if TYPE_CHECKING:
    from .racks import TaskPartitions

from .._java import java_hashmap_capacity, java_uuid_hash, task_id_hash as _task_id_hash
from .protocol import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId, task_sort_key

__all__ = ["AssignmentConfigs", "StreamsClient", "TaskAssignment", "assign_standbys", "assign_tasks",
           "assign_tasks_fallback", "assign_tasks_sticky", "compute_lags", "process_id_key", "process_id_hash",
           "standby_task_assignor", "task_id_hash"]

LONG_MAX = (1 << 63) - 1

# StreamsConfig.RACK_AWARE_ASSIGNMENT_STRATEGY_* (the values are case-sensitive)
RACK_AWARE_STRATEGIES = ("none", "min_traffic", "balance_subtopology")
# the assignors' default (traffic, non-overlap) costs when none are configured
HA_RACK_COSTS = (10, 1)          # HighAvailabilityTaskAssignor
STICKY_RACK_COSTS = (1, 10)      # LegacyStickyTaskAssignor (stateful tasks)
STATELESS_RACK_COSTS = (1, 0)    # stateless tasks, in both


@dataclass(frozen=True)
class AssignmentConfigs:
    """The StreamsConfig settings the assignor reads (4.1.1 defaults)."""
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000
    rack_aware_assignment_tags: Tuple[str, ...] = ()   # client tag keys standbys spread over
    rack_aware_assignment_strategy: str = "none"       # none | min_traffic | balance_subtopology
    rack_aware_assignment_traffic_cost: Optional[int] = None      # None: the assignor's default
    rack_aware_assignment_non_overlap_cost: Optional[int] = None  # None: the assignor's default
    # kcodec's own: how the KIP-925 active graphs are solved, "fast" (Kafka's optimal cost) or
    # "exact" (Kafka's cycle cancelling, Kafka's assignment move for move); see kcodec.streams.racks
    rack_aware_assignment_mode: str = "fast"

    def __post_init__(self) -> None:
        if self.rack_aware_assignment_strategy not in RACK_AWARE_STRATEGIES:
            raise ValueError("rack.aware.assignment.strategy must be one of " + ", ".join(RACK_AWARE_STRATEGIES))
        for name, v in (("traffic_cost", self.rack_aware_assignment_traffic_cost),
                        ("non_overlap_cost", self.rack_aware_assignment_non_overlap_cost)):
            if v is not None and not -(1 << 31) <= v < (1 << 31):
                raise ValueError(f"rack.aware.assignment.{name} must be a Java int")
        if self.rack_aware_assignment_mode not in ("fast", "exact"):
            raise ValueError("rack_aware_assignment_mode must be 'fast' or 'exact'")
        if self.acceptable_recovery_lag < 0:
            raise ValueError("acceptable.recovery.lag must be >= 0")
        if self.max_warmup_replicas < 1:
            raise ValueError("max.warmup.replicas must be >= 1")
        if self.num_standby_replicas < 0:
            raise ValueError("num.standby.replicas must be >= 0")
        if self.probing_rebalance_interval_ms < 60_000:
            raise ValueError("probing.rebalance.interval.ms must be >= 60000")


@dataclass
class StreamsClient:
    """One Streams instance as the leader sees it."""
    process_id: _uuid.UUID
    capacity: int = 1                                    # stream threads (consumers)
    task_offset_sums: Dict[TaskId, int] = field(default_factory=dict)
    task_lags: Optional[Dict[TaskId, int]] = None        # lags given directly (tests, simulations)
    prev_active: Optional[Iterable[TaskId]] = None      # sticky/fallback: default offset sum -2
    prev_standby: Optional[Iterable[TaskId]] = None     # sticky/fallback: default other offset sums
    client_tags: Dict[str, str] = field(default_factory=dict)   # client.tag.* (SubscriptionInfo v11)
    rack_id: Optional[str] = None                        # client.rack of its consumers
    consumer_racks: Optional[Dict[str, Optional[str]]] = None   # rack.id per consumer member

    def rack(self) -> Optional[str]:
        """The client's rack as ``RackAwareTaskAssignor.validateClientRack`` derives it: the
        rack every consumer of the process sends (``consumer_racks``, else ``rack_id``); None
        when a consumer has none, two disagree, or there are no consumers."""
        if self.consumer_racks is None:
            return self.rack_id
        racks = set(self.consumer_racks.values())
        if not racks or None in racks or len(racks) > 1:
            return None
        return next(iter(racks))

    def previous_tasks(self) -> Tuple[List[TaskId], List[TaskId]]:
        """(previous active, previous standby) tasks in TaskId order, as ``ClientState`` holds
        them (``initializeRemainingPrevTasksFromTaskOffsetSums``)."""
        act = set(self.prev_active) if self.prev_active is not None else {
            t for t, s in self.task_offset_sums.items() if s == LATEST_OFFSET}
        sb = set(self.prev_standby) if self.prev_standby is not None else {
            t for t, s in self.task_offset_sums.items() if s != LATEST_OFFSET}
        return sorted(act, key=task_sort_key), sorted(sb - act, key=task_sort_key)


@dataclass
class TaskAssignment:
    """Where each task runs.  Warm-ups are standbys placed only to restore state for a
    later probing rebalance (Kafka sends them as standby tasks)."""
    clients: List[_uuid.UUID]                 # ProcessId order
    tasks: List[TaskId]                       # TaskId order
    role: np.ndarray                          # [client, task]: 0 none, 1 active, 2 standby, 3 warm-up
    active_movements: int
    standby_movements: int
    active: Dict[_uuid.UUID, List[TaskId]] = field(default_factory=dict)
    standby: Dict[_uuid.UUID, List[TaskId]] = field(default_factory=dict)
    warmup: Dict[_uuid.UUID, List[TaskId]] = field(default_factory=dict)
    follow_up: bool = False                   # FallbackPriorTaskAssignor: always rebalance again
    rack_aware: bool = False                  # the KIP-925 optimisation ran (canEnableRackAwareAssignor)
    rack_aware_mode: Optional[str] = None     # then how its active graphs were solved: "fast" or "exact"

    @property
    def probing_rebalance_needed(self) -> bool:
        return self.follow_up or self.active_movements + self.standby_movements > 0

    def owner(self) -> Dict[TaskId, _uuid.UUID]:
        """The active owner of every task."""
        return {t: c for c, ts in self.active.items() for t in ts}


def process_id_key(u: _uuid.UUID) -> tuple:
    """``java.util.UUID.compareTo``: signed most significant long, then signed least."""
    hi, lo = u.int >> 64, u.int & ((1 << 64) - 1)
    return (hi - (1 << 64) if hi >> 63 else hi, lo - (1 << 64) if lo >> 63 else lo)


def compute_lags(clients: Sequence[StreamsClient], tasks: Sequence[TaskId],
                 end_offset_sums: Mapping[TaskId, int]) -> np.ndarray:
    """``ClientState.computeTaskLags`` for every (client, task): -2 running active, -3
    unknown offset sum, the end offset sum when the client's offset is beyond it (corrupt
    state), else end - offset (a client without state: the whole end offset sum)."""
    index = {t: i for i, t in enumerate(tasks)}
    ends = np.array([end_offset_sums.get(t, 0) for t in tasks], dtype=np.int64)
    lag = np.tile(ends, (len(clients), 1))
    rows: List[int] = []
    cols: List[int] = []
    sums: List[int] = []
    for c, cl in enumerate(clients):
        if cl.task_lags is not None:
            for t, x in cl.task_lags.items():
                if t in index:
                    lag[c, index[t]] = x
            continue
        for t, s in cl.task_offset_sums.items():
            i = index.get(t)
            if i is not None:
                rows.append(c)
                cols.append(i)
                sums.append(s)
    if sums:
        r, k, s = np.array(rows), np.array(cols), np.array(sums, dtype=np.int64)
        e = ends[k]
        # -2 running, -3 unknown; an offset beyond the end (corrupt) lags the whole end
        lag[r, k] = np.where((s == LATEST_OFFSET) | (s == UNKNOWN_OFFSET_SUM), s, np.where(e < s, e, e - s))
    return lag


def assign_tasks(clients: Iterable[StreamsClient], tasks: Union[Iterable[TaskId], Mapping[TaskId, bool]],
                 end_offset_sums: Optional[Mapping[TaskId, int]] = None,
                 configs: AssignmentConfigs = AssignmentConfigs(), *,
                 stateful: Optional[Iterable[TaskId]] = None,
                 partitions: Optional["TaskPartitions"] = None) -> TaskAssignment:
    """Run the HighAvailabilityTaskAssignor.

    ``tasks``: every task, or ``{task: is_stateful}``; ``stateful`` names the stateful ones
    (default: all, or the mapping's flags).  ``end_offset_sums``: changelog end offset sum
    per stateful task (missing: 0).  ``partitions``: the tasks' partitions and their replica
    racks, for the rack-aware optimisation (:mod:`kcodec.streams.racks`) that
    ``configs.rack_aware_assignment_strategy`` turns on."""
    from ._tasks import ha_assign

    cl = sorted(clients, key=lambda c: process_id_key(c.process_id))
    _check_unique(cl)
    flags = _task_flags(tasks, stateful)
    order = sorted(flags, key=task_sort_key)
    lag = compute_lags(cl, order, end_offset_sums or {})
    st = np.fromiter((flags[t] for t in order), dtype=np.uint8, count=len(order))
    cap = np.array([c.capacity for c in cl], dtype=np.int32)
    # Kafka's HA assignor asks StandbyTaskAssignorFactory with no RackAwareTaskAssignor (null)
    tag_of = _standby_tags(cl, configs, False) if configs.num_standby_replicas > 0 else None
    tags = _tag_inputs(cl, order, flags, *tag_of) if tag_of else {}
    rack = _rack(cl, order, configs, partitions, HA_RACK_COSTS, tags=tag_of[1] if tag_of else None)
    role, am, sm = ha_assign(st, cap, lag, configs.num_standby_replicas, configs.max_warmup_replicas,
                             configs.acceptable_recovery_lag, rack=rack, **tags)
    res = _result([c.process_id for c in cl], order, role, am, sm)
    res.rack_aware = rack is not None
    res.rack_aware_mode = configs.rack_aware_assignment_mode if rack is not None else None
    return res


def _rack(cl: Sequence[StreamsClient], order: List[TaskId], configs: AssignmentConfigs,
          partitions: Optional["TaskPartitions"], default_costs: Tuple[int, int], *,
          tags: Optional[Sequence[Mapping[str, str]]] = None,
          pid_order: Optional[Sequence[int]] = None):
    """The rack-aware optimiser's input, or None where canEnableRackAwareAssignor says no."""
    from .racks import can_enable_rack_aware_assignor, configured_costs, rack_input

    if not can_enable_rack_aware_assignor(cl, configs, partitions):
        return None
    return rack_input(cl, order, partitions, configs.rack_aware_assignment_strategy,
                      configured_costs(configs, default_costs), standby=configs.num_standby_replicas > 0,
                      pid_order=pid_order, tags=tags, mode=configs.rack_aware_assignment_mode)


def standby_task_assignor(configs: AssignmentConfigs, clients: Optional[Iterable[StreamsClient]] = None) -> str:
    """Which standby assignor Kafka's ``StandbyTaskAssignorFactory.create`` picks:
    ``"client_tag"`` (ClientTagAwareStandbyTaskAssignor on the ``client_tags``) when
    ``rack_aware_assignment_tags`` is set; else ``"rack"`` (the same assignor with each client's
    rack as its only tag, key ``rack``) when handed a RackAwareTaskAssignor - here: ``clients``
    given - whose ``validClientRack`` holds (every client has one rack, see
    :meth:`StreamsClient.rack`; the strategy is not consulted, so ``"none"`` too); else
    ``"default"`` (DefaultStandbyTaskAssignor).  Kafka 4.1.1's HighAvailabilityTaskAssignor
    hands it null and its LegacyStickyTaskAssignor places standbys itself, so the rack-only
    variant runs only where a caller passes the rack assignor, as :func:`assign_standbys`
    does with ``racks_as_tags=True``."""
    if configs.rack_aware_assignment_tags:
        return "client_tag"
    if clients is not None and all(c.rack() is not None for c in clients):
        return "rack"
    return "default"


def _standby_tags(cl: Sequence[StreamsClient], configs: AssignmentConfigs, racks_as_tags: bool):
    """(tag keys, each client's tags) of the chosen tag-aware standby assignor, or None."""
    kind = standby_task_assignor(configs, cl if racks_as_tags else None)
    if kind == "client_tag":
        return list(dict.fromkeys(configs.rack_aware_assignment_tags)), [c.client_tags for c in cl]
    if kind == "rack":
        return ["rack"], [{"rack": c.rack()} for c in cl]
    return None


def _tag_inputs(cl: Sequence[StreamsClient], order: List[TaskId], flags: Mapping[TaskId, bool],
                keys: Sequence[str], tag_of: Sequence[Mapping[str, str]]) -> Dict[str, np.ndarray]:
    """The ClientTagAwareStandbyTaskAssignor's view of the clients: the tag ``keys`` it spreads
    standbys over and each client's tags (``clientTagFunction``)."""
    values: List[Dict[str, int]] = [{} for _ in keys]
    client_tag = np.full((len(cl), len(keys)), -1, dtype=np.int32)
    for c in range(len(cl)):
        for k, key in enumerate(keys):
            v = tag_of[c].get(key)
            if v is not None:
                client_tag[c, k] = values[k].setdefault(v, len(values[k]))
    # isAllowedTaskMovement: every tag of the source (configured or not) equal on the destination
    groups: Dict[frozenset, int] = {}
    gid = np.array([groups.setdefault(frozenset(t.items()), len(groups)) for t in tag_of])
    sets = list(groups)
    sub = np.array([[a <= b for b in sets] for a in sets], dtype=np.uint8)
    sf = np.array([i for i, t in enumerate(order) if flags[t]], dtype=np.int64)
    # tasksToRemainingStandbys: a HashMap filled from the stateful tasks in TaskId order
    spread = _spread([task_id_hash(order[i]) for i in sf])
    pending = sf[_hash_order(spread, java_hashmap_capacity(len(sf)))].astype(np.int32)
    return {"client_tag": client_tag, "n_tag_values": np.array([len(v) for v in values], dtype=np.int32),
            "move_allowed": sub[np.ix_(gid, gid)], "pending_order": pending}


def assign_standbys(clients: Iterable[StreamsClient], active: Mapping[_uuid.UUID, Iterable[TaskId]],
                    tasks: Union[Iterable[TaskId], Mapping[TaskId, bool]],
                    configs: AssignmentConfigs = AssignmentConfigs(), *,
                    stateful: Optional[Iterable[TaskId]] = None,
                    partitions: Optional["TaskPartitions"] = None,
                    racks_as_tags: bool = False) -> TaskAssignment:
    """Only the HighAvailabilityTaskAssignor's standby step (``assignStandbyReplicaTasks``):
    the ``DefaultStandbyTaskAssignor`` or, with ``rack_aware_assignment_tags``, the
    ``ClientTagAwareStandbyTaskAssignor``, then standbys balanced over threads and, where
    enabled, optimised for rack traffic, around the given active tasks (each exactly once).
    ``racks_as_tags``: hand the factory the rack assignor, as Kafka's own tests do (its HA
    assignor passes null): without tags and with every client on a rack the standbys spread
    over racks (:func:`standby_task_assignor` ``"rack"``)."""
    from ._tasks import standby_assign

    cl = sorted(clients, key=lambda c: process_id_key(c.process_id))
    _check_unique(cl)
    flags = _task_flags(tasks, stateful)
    order = sorted(flags, key=task_sort_key)
    index = {t: i for i, t in enumerate(order)}
    row = {c.process_id: i for i, c in enumerate(cl)}
    role = np.zeros((len(cl), len(order)), dtype=np.uint8)
    for pid, ts in active.items():
        for t in ts:
            if role[:, index[t]].any():
                raise ValueError(f"task {t} is active on two clients")
            role[row[pid], index[t]] = 1
    st = np.fromiter((flags[t] for t in order), dtype=np.uint8, count=len(order))
    cap = np.array([c.capacity for c in cl], dtype=np.int32)
    tag_of = _standby_tags(cl, configs, racks_as_tags)
    tags = _tag_inputs(cl, order, flags, *tag_of) if tag_of else {}
    rack = _rack(cl, order, configs, partitions, HA_RACK_COSTS, tags=tag_of[1] if tag_of else None) \
        if configs.num_standby_replicas > 0 else None
    role = standby_assign(st, cap, role, configs.num_standby_replicas, rack=rack, **tags)
    res = _result([c.process_id for c in cl], order, role, 0, 0)
    res.rack_aware = rack is not None
    res.rack_aware_mode = configs.rack_aware_assignment_mode if rack is not None else None
    return res


def _check_unique(cl: Sequence[StreamsClient]) -> None:
    if len({c.process_id for c in cl}) != len(cl):
        raise ValueError("duplicate process ids")


def _task_flags(tasks: Union[Iterable[TaskId], Mapping[TaskId, bool]],
                stateful: Optional[Iterable[TaskId]]) -> Dict[TaskId, bool]:
    if isinstance(tasks, Mapping):
        return dict(tasks)
    ts = list(tasks)
    sf = set(ts) if stateful is None else set(stateful)
    return {t: t in sf for t in ts}


def _result(pids: List[_uuid.UUID], order: List[TaskId], role: np.ndarray, am: int, sm: int,
            follow_up: bool = False) -> TaskAssignment:
    res = TaskAssignment(pids, order, role, am, sm, follow_up=follow_up)
    for c, pid in enumerate(pids):
        row = role[c]
        res.active[pid] = [order[i] for i in np.flatnonzero(row == 1)]
        res.standby[pid] = [order[i] for i in np.flatnonzero(row == 2)]
        res.warmup[pid] = [order[i] for i in np.flatnonzero(row == 3)]
    return res


# ---- Java hashing, for the HashMap/HashSet orders the sticky assignor walks ----

def process_id_hash(u: _uuid.UUID) -> int:
    """``ProcessId.hashCode`` = ``UUID.hashCode``: the two halves of msb ^ lsb, xored."""
    return java_uuid_hash(u)


def task_id_hash(t: TaskId) -> int:
    """``TaskId.hashCode`` = ``Objects.hash(subtopology, partition, topologyName)``."""
    return _task_id_hash(t.subtopology, t.partition, t.topology_name)


def _spread(hashes: Sequence[int]) -> np.ndarray:
    h = np.array(hashes, dtype=np.int64).astype(np.uint32)
    return h ^ (h >> np.uint32(16))


def _copy_capacity(n: int, jdk: int) -> int:
    """Table size of ``new HashSet<>(collection)`` holding ``n`` elements."""
    want = -(-max(n, 12) * 4 // 3) if jdk >= 19 else max(int(n / 0.75) + 1, 16)
    cap = 1
    while cap < want:
        cap <<= 1
    return cap


def _hash_order(spread: np.ndarray, capacity: int) -> np.ndarray:
    """Iteration order of a hash table of ``capacity`` filled in index order."""
    return np.argsort(spread & np.uint32(capacity - 1), kind="stable")


def _client_map_order(cl: Sequence[StreamsClient], client_map: str) -> List[StreamsClient]:
    if client_map == "hash":        # StreamsPartitionAssignor's HashMap, filled in the given order
        idx = _hash_order(_spread([process_id_hash(c.process_id) for c in cl]), java_hashmap_capacity(len(cl)))
        return [cl[i] for i in idx]
    if client_map == "sorted":      # a TreeMap, as Kafka's assignor tests use
        return sorted(cl, key=lambda c: process_id_key(c.process_id))
    if client_map == "given":
        return list(cl)
    raise ValueError("client_map must be 'hash', 'sorted' or 'given'")


def assign_tasks_sticky(clients: Iterable[StreamsClient],
                        tasks: Union[Iterable[TaskId], Mapping[TaskId, bool]],
                        configs: AssignmentConfigs = AssignmentConfigs(), *,
                        stateful: Optional[Iterable[TaskId]] = None, preserve_active: bool = False,
                        client_map: str = "hash", jdk: int = 17,
                        partitions: Optional["TaskPartitions"] = None) -> TaskAssignment:
    """Run Kafka's ``LegacyStickyTaskAssignor``, with the rack-aware optimisation where
    ``configs`` and ``partitions`` enable it (never with ``preserve_active``: Kafka's
    FallbackPriorTaskAssignor passes no rack assignor).

    ``client_map``: the iteration order of Kafka's client map: ``"hash"`` (the leader's
    ``HashMap``, clients inserted in the given order, as ``StreamsPartitionAssignor`` fills it
    from the subscriptions), ``"sorted"`` (a ``TreeMap``) or ``"given"``.  Task sets are taken
    as Kafka's ``HashSet`` s filled in TaskId order.  ``preserve_active``: every previous
    active stays on its owner (``FallbackPriorTaskAssignor``).  Never asks for a probing
    rebalance."""
    from ._tasks import sticky_assign

    cl = _client_map_order(list(clients), client_map)
    _check_unique(cl)
    flags = _task_flags(tasks, stateful)
    order = sorted(flags, key=task_sort_key)
    index = {t: i for i, t in enumerate(order)}
    T = len(order)
    prev = [c.previous_tasks() for c in cl]

    # previousActiveTaskAssignment: HashMap<TaskId, ProcessId>, clients in map order, each
    # client's previous actives in TaskId order; the last put wins, the first fixes the slot
    first: Dict[TaskId, int] = {}
    owner = np.full(T, -1, dtype=np.int32)
    for c, (act, _) in enumerate(prev):
        for t in act:
            first.setdefault(t, len(first))
            i = index.get(t)
            if i is not None:
                owner[i] = c
    seq = list(first)
    slots = _hash_order(_spread([task_id_hash(t) for t in seq]), java_hashmap_capacity(len(seq)))
    prev_active_order = np.array([index[seq[k]] for k in slots if seq[k] in index], dtype=np.int32)

    # previousStandbyTaskAssignment: per task the clients (map order) that had it as standby
    owners: List[List[int]] = [[] for _ in range(T)]
    for c, (_, sb) in enumerate(prev):
        for t in sb:
            i = index.get(t)
            if i is not None:
                owners[i].append(c)
    offsets = np.zeros(T + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(o) for o in owners])
    sb_clients = np.array([c for o in owners for c in o], dtype=np.int32)

    thash = _spread([task_id_hash(t) for t in order])
    unassigned_order = _hash_order(thash, _copy_capacity(T, jdk)).astype(np.int32)
    sf = np.array([i for i, t in enumerate(order) if flags[t]], dtype=np.int64)
    stateful_order = sf[_hash_order(thash[sf], java_hashmap_capacity(len(sf)))].astype(np.int32)

    cap = np.array([c.capacity for c in cl], dtype=np.int32)
    chash = _spread([process_id_hash(c.process_id) for c in cl])
    rank = sorted(range(len(cl)), key=lambda c: process_id_key(cl[c].process_id))
    rack = None if preserve_active else _rack(cl, order, configs, partitions, STICKY_RACK_COSTS, pid_order=rank)
    role = sticky_assign(cap, chash, owner, prev_active_order, offsets, sb_clients, unassigned_order,
                         stateful_order, configs.num_standby_replicas, preserve_active, jdk >= 19, rack=rack)
    # report clients in ProcessId order, as the HA assignor does
    res = _result([cl[c].process_id for c in rank], order, role[rank], 0, 0, follow_up=preserve_active)
    res.rack_aware = rack is not None
    res.rack_aware_mode = configs.rack_aware_assignment_mode if rack is not None else None
    return res


def assign_tasks_fallback(clients: Iterable[StreamsClient],
                          tasks: Union[Iterable[TaskId], Mapping[TaskId, bool]],
                          configs: AssignmentConfigs = AssignmentConfigs(), *,
                          stateful: Optional[Iterable[TaskId]] = None, client_map: str = "hash",
                          jdk: int = 17) -> TaskAssignment:
    """Kafka's ``FallbackPriorTaskAssignor``: the sticky assignor keeping every previous active
    task on its owner (quota or not), and always a follow-up rebalance."""
    return assign_tasks_sticky(clients, tasks, configs, stateful=stateful, preserve_active=True,
                               client_map=client_map, jdk=jdk)
