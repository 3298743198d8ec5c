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

Client tags (``rack.aware.assignment.tags``) and the rack-aware min-cost-flow optimisation are
not implemented: with them configured Kafka's placement differs.
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Set, Union

import numpy as np

from .protocol import LATEST_OFFSET, UNKNOWN_OFFSET_SUM, TaskId, task_sort_key

__all__ = ["AssignmentConfigs", "StreamsClient", "TaskAssignment", "assign_tasks", "compute_lags",
           "process_id_key"]

LONG_MAX = (1 << 63) - 1


@dataclass(frozen=True)
class AssignmentConfigs:
    """The StreamsConfig settings the assignor reads (4.1.1 defaults)."""
    acceptable_recovery_lag: int = 10_000
    max_warmup_replicas: int = 2
    num_standby_replicas: int = 0
    probing_rebalance_interval_ms: int = 600_000

    def __post_init__(self) -> None:
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

    @property
    def probing_rebalance_needed(self) -> bool:
        return self.active_movements + self.standby_movements > 0

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
                 stateful: Optional[Iterable[TaskId]] = None) -> TaskAssignment:
    """Run the HighAvailabilityTaskAssignor.

    ``tasks``: every task, or ``{task: is_stateful}``; ``stateful`` names the stateful ones
    (default: all, or the mapping's flags).  ``end_offset_sums``: changelog end offset sum
    per stateful task (missing: 0)."""
    from ._tasks import ha_assign

    cl = sorted(clients, key=lambda c: process_id_key(c.process_id))
    if len({c.process_id for c in cl}) != len(cl):
        raise ValueError("duplicate process ids")
    if isinstance(tasks, Mapping):
        flags = dict(tasks)
    else:
        ts = list(tasks)
        sf = set(ts) if stateful is None else set(stateful)
        flags = {t: t in sf for t in ts}
    order = sorted(flags, key=task_sort_key)
    lag = compute_lags(cl, order, end_offset_sums or {})
    st = np.fromiter((flags[t] for t in order), dtype=np.uint8, count=len(order))
    cap = np.array([c.capacity for c in cl], dtype=np.int32)
    role, am, sm = ha_assign(st, cap, lag, configs.num_standby_replicas, configs.max_warmup_replicas,
                             configs.acceptable_recovery_lag)
    res = TaskAssignment([c.process_id for c in cl], order, role, am, sm)
    for c, pid in enumerate(res.clients):
        row = role[c]
        res.active[pid] = [order[i] for i in np.flatnonzero(row == 1)]
        res.standby[pid] = [order[i] for i in np.flatnonzero(row == 2)]
        res.warmup[pid] = [order[i] for i in np.flatnonzero(row == 3)]
    return res
