"""Rack-aware task assignment (KIP-925): Kafka 4.1.1's ``RackAwareTaskAssignor``, with its
min-cost-flow graphs solved in C (``csrc/kc_streams_rack.c``).

With ``rack.aware.assignment.strategy`` ``min_traffic`` or ``balance_subtopology`` the
HighAvailabilityTaskAssignor and the LegacyStickyTaskAssignor re-place the tasks they have
assigned so that fewer of a task's partitions are read across racks, at the same number of
tasks per client:

* the cost of a task on a client is ``traffic_cost`` for every partition of the task with no
  replica on the client's rack (source partitions for actives, changelog partitions for
  standbys), plus ``non_overlap_cost`` if the client does not hold the task now;
* actives: one min-cost flow over every (task, client) pair (``min_traffic``), or with one
  client node per subtopology whose capacity spreads each subtopology's tasks in proportion to
  the client's task count (``balance_subtopology``, started from a max flow);
* standbys: always ``min_traffic``, between every two clients on different racks, swapping
  standbys that the standby assignor allows to move, at most 4 rounds.

Two modes solve the active graphs (``rack_aware_assignment_mode``):

* ``"fast"`` (the default): the same min-cost flow solved by a primal-dual algorithm (Dijkstra
  with potentials, then a blocking flow over the zero-reduced-cost arcs) on a graph compressed
  by task class (subtopology, owner, off-rack partition counts) and rack: Kafka's optimal total
  cost and constraints (every client keeps its task count; ``balance_subtopology``'s
  per-subtopology capacities), in milliseconds at 10,000 tasks x 1,000 clients, but where
  several assignments share the optimal cost it may pick another one than Kafka;
* ``"exact"``: Kafka's cycle cancelling in Kafka's order (Bellman-Ford from a dummy node, the
  cycle named by the first relaxation of the last pass), so the same inputs give Kafka's
  assignment move for move; ``min_traffic`` runs it on the graph's structure (O(tasks x racks)
  per pass instead of O(tasks x clients)), ``balance_subtopology`` on the generic graph.

Standby graphs (two clients each) are always solved exactly.  Costs when not configured: HighAvailabilityTaskAssignor 10 / 1,
LegacyStickyTaskAssignor 1 / 10, stateless tasks always 1 / 0.  The FallbackPriorTaskAssignor
never optimises (Kafka passes it no rack assignor).

It runs only where ``canEnableRackAwareAssignor`` allows: a strategy other than ``none``, a
rack on every client (every consumer of the client sends the same ``rack.id``), and rack
information for every source partition of every task, and with standbys for every changelog
partition (a replica without ``broker.rack`` disables it; a partition with no replicas listed is
treated as unknown, where Kafka would describe the topic through the admin client).

    >>> import uuid
    >>> from kcodec.streams import TaskId, TopicPartition
    >>> from kcodec.streams.assignors import StreamsClient
    >>> from kcodec.streams.racks import TaskPartitions, optimize_active_tasks
    >>> a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    >>> t0, t1 = TaskId(0, 0), TaskId(0, 1)
    >>> parts = TaskPartitions({t0: [TopicPartition("in", 0)], t1: [TopicPartition("in", 1)]},
    ...                        replica_racks={TopicPartition("in", 0): ["r1"], TopicPartition("in", 1): ["r2"]})
    >>> clients = [StreamsClient(a, rack_id="r2"), StreamsClient(b, rack_id="r1")]
    >>> active, cost = optimize_active_tasks(clients, {a: [t0], b: [t1]}, parts, traffic_cost=10, non_overlap_cost=1)
    >>> [str(t) for t in active[a]], [str(t) for t in active[b]], cost
    (['0_1'], ['0_0'], 2)
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .assignors import (RACK_AWARE_STRATEGIES, AssignmentConfigs, StreamsClient, process_id_key)
from .protocol import TaskId, TopicPartition, task_sort_key

__all__ = ["RACK_AWARE_MODES", "TaskPartitions", "check_costs", "active_tasks_cost", "can_enable_rack_aware_assignor", "optimize_active_tasks",
           "optimize_standby_tasks", "standby_tasks_cost", "min_cost_flow", "max_flow"]


@dataclass(frozen=True)
class TaskPartitions:
    """What the rack-aware assignor knows of the tasks and the cluster: the source partitions
    of each task (``partitionsForTask``), its changelog partitions
    (``changelogPartitionsForTask``) and the racks of each partition's replicas (None for a
    broker without ``broker.rack``)."""
    source: Mapping[TaskId, Iterable[TopicPartition]]
    changelog: Mapping[TaskId, Iterable[TopicPartition]] = field(default_factory=dict)
    replica_racks: Mapping[TopicPartition, Sequence[Optional[str]]] = field(default_factory=dict)

    def racks_of(self, tp: TopicPartition) -> Optional[frozenset]:
        """The partition's racks, or None when Kafka would not know them all."""
        racks = self.replica_racks.get(tp)
        if not racks or any(r is None for r in racks):
            return None
        return frozenset(racks)


def can_enable_rack_aware_assignor(clients: Iterable[StreamsClient], configs: AssignmentConfigs,
                                   partitions: Optional[TaskPartitions]) -> bool:
    """``RackAwareTaskAssignor.canEnableRackAwareAssignor``."""
    if configs.rack_aware_assignment_strategy == "none" or partitions is None:
        return False
    if any(c.rack() is None for c in clients):
        return False
    if any(partitions.racks_of(tp) is None for tps in partitions.source.values() for tp in tps):
        return False
    if configs.num_standby_replicas == 0:
        return True
    return all(partitions.racks_of(tp) is not None for tps in partitions.changelog.values() for tp in tps)


def _miss(order: Sequence[TaskId], by_task: Mapping[TaskId, Iterable[TopicPartition]], partitions: TaskPartitions,
          racks: List[str]) -> np.ndarray:
    """[task, rack]: partitions of the task without a replica on the rack; -1 with none."""
    rid = {r: i for i, r in enumerate(racks)}
    miss = np.full((len(order), len(racks)), -1, dtype=np.int32)
    seen: Dict[TopicPartition, np.ndarray] = {}
    for i, t in enumerate(order):
        tps = list(dict.fromkeys(by_task.get(t, ())))    # a Set<TopicPartition> in Kafka
        if not tps:
            continue
        off = np.zeros(len(racks), dtype=np.int32)
        for tp in tps:
            row = seen.get(tp)
            if row is None:
                on = partitions.racks_of(tp)
                if on is None:
                    raise ValueError(f"topic partition {tp} has no rack information")
                row = seen[tp] = np.array([r not in on for r in racks], dtype=np.int32)
            off += row
        miss[i] = off
    return miss


def _groups(order: Sequence[TaskId]) -> Tuple[np.ndarray, int]:
    """Each task's subtopology index, in Kafka's Subtopology order (id, then named topology
    with none first)."""
    keys = sorted({(t.subtopology, t.topology_name is not None, t.topology_name or "") for t in order})
    gid = {k: i for i, k in enumerate(keys)}
    g = np.array([gid[(t.subtopology, t.topology_name is not None, t.topology_name or "")] for t in order],
                 dtype=np.int32)
    return g, max(len(keys), 1)


RACK_AWARE_MODES = ("fast", "exact")
_JAVA_INT = (-(1 << 31) + 1, (1 << 31) - 1)   # -2**31 excluded: Kafka cannot negate it


def check_costs(traffic_cost: int, non_overlap_cost: int, max_off_rack: int) -> None:
    """Refuse costs whose graph edges leave a Java int: ``traffic_cost`` x ``k`` off-rack
    partitions (+ ``non_overlap_cost``) for k in 0..``max_off_rack``.  Kafka computes them in int
    arithmetic and wraps (a wrapped cost is not the traffic asked for), and a cost of -2**31 makes
    its cycle cancelling run for ever (the residual edge's negated cost wraps to itself).
    Raises :class:`kcodec.errors.InvalidArgumentError` naming the setting."""
    from ..errors import InvalidArgumentError

    lo, hi = _JAVA_INT
    for name, v in (("rack.aware.assignment.traffic_cost", traffic_cost),
                    ("rack.aware.assignment.non_overlap_cost", non_overlap_cost)):
        if not lo <= v <= hi:
            raise InvalidArgumentError(name, f"{v} is out of [-2**31 + 1, 2**31 - 1] (Kafka's negated residual cost "
                                "wraps at -2**31 and its cycle cancelling never ends)")
    ends = [traffic_cost * k + extra for k in (0, max_off_rack) for extra in (0, non_overlap_cost)]
    if not all(lo <= e <= hi for e in ends):
        raise InvalidArgumentError("rack.aware.assignment.traffic_cost", f"{traffic_cost} x {max_off_rack} off-rack partitions (+ non_overlap_cost "
                            f"{non_overlap_cost}) leaves the range of a Java int; Kafka would wrap it")


def rack_input(clients: Sequence[StreamsClient], order: Sequence[TaskId], partitions: TaskPartitions,
               strategy: str, costs: Tuple[int, int], *, standby: bool, pid_order: Optional[Sequence[int]] = None,
               tags: Optional[Sequence[Mapping[str, str]]] = None, mode: str = "fast"):
    """The C kernel's view (``_tasks.RackInput``) of clients (rows in the given order) and tasks
    (TaskId order); ``tags``: each client's tags as the standby assignor sees them, when its
    ``isAllowedTaskMovement`` constrains standby moves; ``mode``: ``"fast"`` or ``"exact"``
    (see the module docstring)."""
    from ._tasks import RackInput

    if strategy not in RACK_AWARE_STRATEGIES[1:]:
        raise ValueError("strategy must be 'min_traffic' or 'balance_subtopology'")
    if mode not in RACK_AWARE_MODES:
        raise ValueError("rack_aware_assignment_mode must be 'fast' or 'exact'")
    crack = [c.rack() for c in clients]
    if any(r is None for r in crack):
        raise ValueError("every client needs a rack")
    racks = sorted(set(crack))
    rid = {r: i for i, r in enumerate(racks)}
    src = _miss(order, partitions.source, partitions, racks)
    chg = _miss(order, partitions.changelog, partitions, racks) if standby else None
    check_costs(costs[0], costs[1], int(max(src.max(initial=0), chg.max(initial=0) if chg is not None else 0)))
    group, n_groups = _groups(order)
    tag_off = tag_ids = None
    n_tag_ids = 0
    if tags is not None:
        ids: Dict[Tuple[str, str], int] = {}
        per = [[ids.setdefault(kv, len(ids)) for kv in t.items()] for t in tags]
        tag_off = np.zeros(len(clients) + 1, dtype=np.int32)
        tag_off[1:] = np.cumsum([len(p) for p in per])
        tag_ids = np.array([i for p in per for i in p], dtype=np.int32)
        n_tag_ids = max(len(ids), 1)
    return RackInput(len(clients), len(order), RACK_AWARE_STRATEGIES.index(strategy),
                     np.array([rid[r] for r in crack], dtype=np.int32), len(racks), src, chg, group, n_groups,
                     costs[0], costs[1], pid_order=pid_order, tag_off=tag_off, tag_ids=tag_ids, n_tag_ids=n_tag_ids,
                     exact=mode == "exact")


def configured_costs(configs: AssignmentConfigs, default: Tuple[int, int]) -> Tuple[int, int]:
    t, n = configs.rack_aware_assignment_traffic_cost, configs.rack_aware_assignment_non_overlap_cost
    return (default[0] if t is None else t, default[1] if n is None else n)


# ---- RackAwareTaskAssignor's own entry points, on explicit assignments ----

def _table(clients: Iterable[StreamsClient], active: Mapping[_uuid.UUID, Iterable[TaskId]],
           standby: Mapping[_uuid.UUID, Iterable[TaskId]]):
    cl = sorted(clients, key=lambda c: process_id_key(c.process_id))
    if len({c.process_id for c in cl}) != len(cl):
        raise ValueError("duplicate process ids")
    row = {c.process_id: i for i, c in enumerate(cl)}
    for pid in list(active) + list(standby):
        if pid not in row:
            raise ValueError(f"unknown client {pid}")
    tasks = sorted({t for ts in list(active.values()) + list(standby.values()) for t in ts}, key=task_sort_key)
    col = {t: i for i, t in enumerate(tasks)}
    role = np.zeros((len(cl), len(tasks)), dtype=np.uint8)
    for pid, ts in standby.items():
        for t in ts:
            role[row[pid], col[t]] = 2
    for pid, ts in active.items():
        for t in ts:
            if role[row[pid], col[t]]:
                raise ValueError(f"task {t} is both active and standby on {pid}")
            role[row[pid], col[t]] = 1
    return cl, tasks, role


def _mapping(cl, tasks, role, r: int) -> Dict[_uuid.UUID, List[TaskId]]:
    return {c.process_id: [tasks[i] for i in np.flatnonzero(role[k] == r)] for k, c in enumerate(cl)}


def optimize_active_tasks(clients: Iterable[StreamsClient], active: Mapping[_uuid.UUID, Iterable[TaskId]],
                          partitions: TaskPartitions, *, strategy: str = "min_traffic", traffic_cost: int = 10,
                          non_overlap_cost: int = 1, mode: str = "fast"
                          ) -> Tuple[Dict[_uuid.UUID, List[TaskId]], int]:
    """``RackAwareTaskAssignor.optimizeActiveTasks`` over every task in ``active`` (each on one
    client): the new active tasks per client (each client keeps its count) and the solved
    graph's total cost (cross-rack traffic plus ``non_overlap_cost`` per moved task).
    ``mode="exact"``: Kafka's assignment move for move; ``"fast"``: Kafka's optimal cost, maybe
    by another assignment of that cost."""
    from ._tasks import rack_optimize_active

    cl, tasks, role = _table(clients, active, {})
    if not tasks:
        return _mapping(cl, tasks, role, 1), 0
    ri = rack_input(cl, tasks, partitions, strategy, (traffic_cost, non_overlap_cost), standby=False, mode=mode)
    out, cost = rack_optimize_active(ri, role, np.ones(len(tasks), dtype=np.uint8), traffic_cost, non_overlap_cost)
    return _mapping(cl, tasks, out, 1), int(cost)


def optimize_standby_tasks(clients: Iterable[StreamsClient], active: Mapping[_uuid.UUID, Iterable[TaskId]],
                           standby: Mapping[_uuid.UUID, Iterable[TaskId]], partitions: TaskPartitions, *,
                           traffic_cost: int = 10, non_overlap_cost: int = 1,
                           client_tag_constraint: Union[bool, str] = False
                           ) -> Tuple[Dict[_uuid.UUID, List[TaskId]], int]:
    """``RackAwareTaskAssignor.optimizeStandbyTasks``: the new standby tasks per client and
    ``standByTasksCost`` afterwards.  ``client_tag_constraint``: moves must keep the number of
    distinct client tags over the task's holders, as the ClientTagAwareStandbyTaskAssignor
    allows them: True for the clients' ``client_tags``, ``"rack"`` for the rack-only variant
    (each client's rack as its one tag ``rack``, see ``standby_task_assignor``); False: any
    move is allowed."""
    from ._tasks import rack_optimize_standby

    cl, tasks, role = _table(clients, active, standby)
    if not tasks:
        return _mapping(cl, tasks, role, 2), 0
    ri = rack_input(cl, tasks, partitions, "min_traffic", (traffic_cost, non_overlap_cost), standby=True,
                    tags=_constraint_tags(cl, client_tag_constraint))
    out, cost = rack_optimize_standby(ri, role, traffic_cost, non_overlap_cost)
    return _mapping(cl, tasks, out, 2), int(cost)


def _constraint_tags(cl: Sequence[StreamsClient], constraint: Union[bool, str]):
    if constraint == "rack":
        return [{"rack": c.rack()} for c in cl]
    if constraint is True:
        return [c.client_tags for c in cl]
    if constraint is False:
        return None
    raise ValueError("client_tag_constraint must be True, False or 'rack'")


def _cost(clients, placed: Mapping[_uuid.UUID, Iterable[TaskId]], partitions: TaskPartitions, traffic_cost: int,
          standby: bool) -> int:
    cl = sorted(clients, key=lambda c: process_id_key(c.process_id))
    order = sorted({t for ts in placed.values() for t in ts}, key=task_sort_key)
    if not order:
        return 0
    racks = sorted({c.rack() for c in cl if c.rack() is not None})
    miss = _miss(order, partitions.changelog if standby else partitions.source, partitions, racks)
    col = {t: i for i, t in enumerate(order)}
    by_pid = {c.process_id: c for c in cl}
    total = 0
    for pid, ts in placed.items():
        r = by_pid[pid].rack()
        if r is None:
            raise ValueError(f"client {pid} has no rack")
        for t in ts:
            m = int(miss[col[t], racks.index(r)])
            if m < 0:
                raise ValueError(f"task {t} has no topic partitions")
            total += traffic_cost * m
    return total


def active_tasks_cost(clients: Iterable[StreamsClient], active: Mapping[_uuid.UUID, Iterable[TaskId]],
                      partitions: TaskPartitions, traffic_cost: int) -> int:
    """``RackAwareTaskAssignor.activeTasksCost``: ``traffic_cost`` per source partition read
    across racks by the given actives."""
    return _cost(list(clients), active, partitions, traffic_cost, False)


def standby_tasks_cost(clients: Iterable[StreamsClient], standby: Mapping[_uuid.UUID, Iterable[TaskId]],
                       partitions: TaskPartitions, traffic_cost: int) -> int:
    """``RackAwareTaskAssignor.standByTasksCost``: ``traffic_cost`` per changelog partition
    read across racks by the given standbys."""
    return _cost(list(clients), standby, partitions, traffic_cost, True)


def min_cost_flow(edges: Iterable[Tuple[int, int, int, int, int]], source: Optional[int] = None,
                  sink: Optional[int] = None) -> Tuple[List[int], int]:
    """Kafka's ``Graph.solveMinCostFlow`` on edges ``(u, v, capacity, cost, flow)`` (integer
    nodes): the flow of every edge afterwards and the total cost.  A cost of -2**31 is refused
    (:class:`kcodec.errors.InvalidArgumentError`): Kafka negates it to itself in the residual graph and
    never finishes; so is a graph whose |cost| x capacity sum overflows 64 bits.  Every other
    input ends: each cancelled cycle lowers the cost by at least 1."""
    from ._tasks import min_cost_flow as _mcf

    flows, cost = _mcf(list(edges), source, sink)
    return flows.tolist(), int(cost)


def max_flow(edges: Iterable[Tuple[int, int, int, int, int]], source: int, sink: int) -> Tuple[List[int], int]:
    """Kafka's ``Graph.calculateMaxFlow``: the flow of every edge and the maximum flow."""
    from ._tasks import max_flow as _mf

    flows, total = _mf(list(edges), source, sink)
    return flows.tolist(), int(total)
