"""HighAvailabilityTaskAssignor: cases of Kafka's HighAvailabilityTaskAssignorTest and
invariants under random groups."""
from __future__ import annotations

import random
import uuid

import numpy as np
import pytest

from kcodec.streams import TaskId
from kcodec.streams.assignors import AssignmentConfigs, StreamsClient, assign_tasks, process_id_key

MAX = (1 << 63) - 1
PID = [uuid.UUID(f"00000000-0000-0000-0000-00000000000{i}") for i in range(10)]


def T(s, p):
    return TaskId(s, p)


def test_sticky_for_active_and_standby_while_warming_up():
    tasks = [T(s, p) for s in range(3) for p in range(3)]
    clients = [StreamsClient(PID[1], task_lags={t: 0 for t in tasks}),
               StreamsClient(PID[2], task_lags={t: 10 for t in tasks}),
               StreamsClient(PID[3], task_lags={t: MAX for t in tasks})]
    r = assign_tasks(clients, tasks, configs=AssignmentConfigs(11, 2, 1, 60_000))
    counts = [len(r.active[p]) + len(r.standby[p]) + len(r.warmup[p]) for p in PID[1:4]]
    assert counts == [9, 9, 2]
    assert r.probing_rebalance_needed


def test_skip_warmups_when_acceptable_lag_is_max():
    tasks = [T(s, p) for s in range(3) for p in range(3)]
    clients = [StreamsClient(PID[1], task_lags={t: 0 for t in tasks}),
               StreamsClient(PID[2], task_lags={t: MAX for t in tasks}),
               StreamsClient(PID[3], task_lags={t: MAX for t in tasks})]
    r = assign_tasks(clients, tasks, configs=AssignmentConfigs(MAX, 1, 1, 60_000))
    assert [len(r.active[p]) + len(r.standby[p]) for p in PID[1:4]] == [6, 6, 6]
    assert not r.probing_rebalance_needed


def test_assign_to_most_caught_up_when_none_is_caught_up():
    t = T(0, 0)
    clients = [StreamsClient(PID[1], task_lags={t: MAX}), StreamsClient(PID[2], task_lags={t: 1000}),
               StreamsClient(PID[3], task_lags={t: 500})]
    r = assign_tasks(clients, [t], configs=AssignmentConfigs(0, 2, 1, 60_000))
    assert r.active == {PID[1]: [], PID[2]: [], PID[3]: [t]}
    assert r.warmup[PID[1]] == [t] and r.standby[PID[2]] == [t]
    assert r.probing_rebalance_needed


def test_not_more_than_max_warmup_replicas():
    tasks = [T(0, p) for p in range(4)]
    clients = [StreamsClient(PID[1], task_lags={t: 0 for t in tasks}),
               StreamsClient(PID[2], task_lags={t: MAX for t in tasks})]
    r = assign_tasks(clients, tasks, configs=AssignmentConfigs(100, 1, 0, 60_000))
    assert r.active[PID[1]] == tasks and not r.active[PID[2]]
    assert len(r.warmup[PID[2]]) + len(r.standby[PID[2]]) == 1 and not r.standby[PID[1]]
    assert r.probing_rebalance_needed


def test_stateless_tasks_go_to_fewest_actives_per_thread():
    tasks = {T(0, p): False for p in range(6)}
    clients = [StreamsClient(PID[1], capacity=1), StreamsClient(PID[2], capacity=2)]
    r = assign_tasks(clients, tasks)
    assert (len(r.active[PID[1]]), len(r.active[PID[2]])) == (2, 4)
    assert not r.probing_rebalance_needed


def test_process_id_order_is_javas_signed_order():
    hi = uuid.UUID("80000000-0000-0000-0000-000000000000")   # negative msb sorts first in Java
    assert sorted([PID[1], hi], key=process_id_key) == [hi, PID[1]]


def _random_group(rng):
    n_clients = rng.randint(1, 8)
    n_tasks = rng.randint(0, 30)
    tasks = [T(rng.randint(0, 3), p) for p in range(n_tasks)]
    tasks = list(dict.fromkeys(tasks))
    stateful = {t: rng.random() < 0.7 for t in tasks}
    ends = {t: rng.choice([0, 50, 20_000, 100_000]) for t in tasks}
    clients = []
    for i in range(n_clients):
        sums = {}
        for t in tasks:
            x = rng.random()
            if x < 0.2:
                sums[t] = -2
            elif x < 0.4:
                sums[t] = rng.randint(0, ends[t] + 10)
        clients.append(StreamsClient(uuid.UUID(int=rng.getrandbits(128)), rng.randint(1, 4), sums))
    cfg = AssignmentConfigs(rng.choice([0, 100, 10_000, MAX]), rng.randint(1, 3), rng.randint(0, 2), 60_000)
    return clients, stateful, ends, cfg


@pytest.mark.parametrize("seed", range(300))
def test_invariants_random_groups(seed):
    rng = random.Random(seed)
    clients, stateful, ends, cfg = _random_group(rng)
    r = assign_tasks(clients, stateful, ends, cfg)
    role = r.role
    # every active task exactly once; never two replicas of a task on one client (by construction
    # of the role matrix), standbys and warm-ups only for stateful tasks
    assert (np.count_nonzero(role == 1, axis=0) == 1).all()
    for j, t in enumerate(r.tasks):
        if not stateful[t]:
            assert np.count_nonzero(role[:, j] >= 2) == 0
        else:
            assert np.count_nonzero(role[:, j] == 2) <= cfg.num_standby_replicas + 1
    # warm-ups bounded by max.warmup.replicas
    assert np.count_nonzero(role == 3) <= cfg.max_warmup_replicas
    # caught-up clients preferred: an active on a client that is not caught up only when
    # no caught-up client exists for the task
    for c, cl in enumerate(r.clients):
        for t in r.active[cl]:
            if not stateful[t]:
                continue
            client = next(x for x in clients if x.process_id == cl)
            def lag(x):
                s = x.task_offset_sums.get(t, 0)
                return s if s in (-2, -3) else (ends[t] if ends[t] < s else ends[t] - s)
            def up(x):
                return lag(x) == -2 or cfg.acceptable_recovery_lag == MAX or 0 <= lag(x) <= cfg.acceptable_recovery_lag
            if not up(client):
                assert not any(up(x) for x in clients)
