"""LegacyStickyTaskAssignor and FallbackPriorTaskAssignor: cases of Kafka's
LegacyStickyTaskAssignorTest (rack strategy none; Kafka's test keeps clients in a TreeMap),
Java hash orders worked by hand, and invariants under random groups."""
from __future__ import annotations

import random
import uuid

import numpy as np
import pytest

from kcodec.streams import TaskId
from kcodec.streams.assignors import (AssignmentConfigs, StreamsClient, assign_tasks_fallback,
                                      assign_tasks_sticky, process_id_hash, task_id_hash)

PID = [uuid.UUID(int=i) for i in range(10)]    # processIdForInt: new UUID(0, n)


def T(s, p):
    return TaskId(s, p)


def C(n, cap=1, active=(), standby=()):
    return StreamsClient(PID[n], cap, prev_active=list(active), prev_standby=list(standby))


def sticky(clients, tasks, standbys=0, **kw):
    kw.setdefault("client_map", "sorted")
    return assign_tasks_sticky(clients, tasks, AssignmentConfigs(num_standby_replicas=standbys), **kw)


def act(r, n):
    return set(r.active[PID[n]])


def test_java_hash_codes():
    # Objects.hash(0, 0, null) = 31 * (31 * 31 + 0) + 0; UUID(0, 1).hashCode() = 1
    assert task_id_hash(T(0, 0)) == 29791
    assert task_id_hash(T(1, 2)) == 31 * (31 * 32 + 2)
    assert task_id_hash(TaskId(0, 0, "a")) == 29791 + 97
    assert process_id_hash(PID[1]) == 1
    assert process_id_hash(uuid.UUID(int=(1 << 64) | 1)) == 0          # msb ^ lsb = 0
    assert process_id_hash(uuid.UUID(int=(0xFFFFFFFF << 64))) == -1


def test_previous_active_hashmap_order_decides_quota():
    # prev actives 0_0 (bucket 15) and 0_1 (bucket 14): 0_1 iterates first and takes the
    # single-task quota of client 1; 0_0 then goes to the empty client 2.
    r = sticky([C(1, active=[T(0, 0), T(0, 1)]), C(2)], [T(0, p) for p in range(3)], client_map="hash")
    assert act(r, 1) == {T(0, 1), T(0, 2)} and act(r, 2) == {T(0, 0)}
    assert not r.probing_rebalance_needed


def test_one_active_each_when_task_count_equals_clients():
    r = sticky([C(1), C(2), C(3)], [T(0, 0), T(0, 1), T(0, 2)])
    assert [len(act(r, n)) for n in (1, 2, 3)] == [1, 1, 1]


def test_topic_group_ids_evenly_across_clients():
    tasks = [T(1, 0), T(1, 1), T(2, 2), T(2, 0), T(2, 1), T(1, 2)]
    for standbys in (0, 1):
        r = sticky([C(1, 2), C(2, 2), C(3, 2)], tasks, standbys)
        for n in (1, 2, 3):
            assert sorted(t.subtopology for t in act(r, n)) == [1, 2]


def test_does_not_migrate_active_tasks():
    tasks = [T(0, 0), T(0, 1), T(0, 2)]
    r = sticky([C(1, active=[T(0, 0)]), C(2, active=[T(0, 1)])], tasks)
    assert T(0, 0) in act(r, 1) and T(0, 1) in act(r, 2)
    r = sticky([C(1, active=[T(0, 1)]), C(2, active=[T(0, 2)])], tasks)
    assert T(0, 1) in act(r, 1) and T(0, 2) in act(r, 2)
    assert sorted(r.owner()) == tasks


def test_migrates_to_new_process_without_changing_all():
    r = sticky([C(1, active=[T(0, 0), T(0, 2)]), C(2, active=[T(0, 1)]), C(3)], [T(0, p) for p in range(3)])
    assert act(r, 2) == {T(0, 1)} and len(act(r, 1)) == 1 and len(act(r, 3)) == 1


def test_assigns_by_capacity():
    r = sticky([C(1, 1), C(2, 2)], [T(0, 0), T(0, 1), T(0, 2)])
    assert (len(act(r, 1)), len(act(r, 2))) == (1, 2)
    tasks = [T(s, p) for s in range(4) for p in range(3)]
    r = sticky([C(2, 2), C(1, 1)], tasks)
    assert (len(act(r, 2)), len(act(r, 1))) == (8, 4)


def test_keeps_stickiness_with_more_clients_than_tasks():
    tasks = [T(0, 0), T(0, 1), T(0, 2)]
    r = sticky([C(1, active=[T(0, 0)]), C(2, active=[T(0, 2)]), C(3, active=[T(0, 1)]), C(4), C(5)], tasks)
    assert (act(r, 1), act(r, 2), act(r, 3)) == ({T(0, 0)}, {T(0, 2)}, {T(0, 1)})
    r = sticky([C(1), C(2, active=[T(0, 0)]), C(3), C(4, active=[T(0, 2)]), C(5, active=[T(0, 1)])], tasks)
    assert (act(r, 2), act(r, 4), act(r, 5)) == ({T(0, 0)}, {T(0, 2)}, {T(0, 1)})


def test_previous_standby_owners_get_the_tasks():
    r = sticky([C(1, standby=[T(0, 2)]), C(2, standby=[T(0, 1)]), C(3, standby=[T(0, 0)])],
               [T(0, 0), T(0, 1), T(0, 2)])
    assert (act(r, 1), act(r, 2), act(r, 3)) == ({T(0, 2)}, {T(0, 1)}, {T(0, 0)})
    r = sticky([C(1, 1, [T(0, 0)], [T(0, 1)]), C(2, 2, [T(0, 2)], [T(0, 1)])], [T(0, 0), T(0, 1), T(0, 2)])
    assert act(r, 1) == {T(0, 0)} and act(r, 2) == {T(0, 2), T(0, 1)}


def test_standbys_away_from_actives():
    tasks = [T(0, p) for p in range(4)]
    r = sticky([C(n, active=[T(0, n - 1)]) for n in (1, 2, 3, 4)], tasks, 1)
    for n in (1, 2, 3, 4):
        assert T(0, n - 1) not in r.standby[PID[n]] and len(r.standby[PID[n]]) <= 2
    assert sum(1 for n in (1, 2, 3, 4) if r.standby[PID[n]]) >= 3
    assert sorted(t for n in (1, 2, 3, 4) for t in r.standby[PID[n]]) == tasks


def test_multiple_standby_replicas():
    tasks = [T(0, 0), T(0, 1), T(0, 2)]
    r = sticky([C(n, active=[T(0, n - 1)]) for n in (1, 2, 3)], tasks, 2)
    assert set(r.standby[PID[1]]) == {T(0, 1), T(0, 2)}
    assert set(r.standby[PID[2]]) == {T(0, 2), T(0, 0)}
    assert set(r.standby[PID[3]]) == {T(0, 0), T(0, 1)}
    r = sticky([C(1)], [T(0, 0)], 1)
    assert r.standby[PID[1]] == []


def test_balances_actives_and_standbys():
    r = sticky([C(1, 3), C(2), C(3)], [T(0, 0), T(0, 1), T(0, 2)])
    assert [len(act(r, n)) for n in (1, 2, 3)] == [1, 1, 1]
    r = sticky([C(n) for n in range(1, 7)], [T(0, 0), T(0, 1), T(0, 2)], 1)
    assert all(len(r.active[p]) + len(r.standby[p]) == 1 for p in PID[1:7])


def test_evenly_distributes_by_task_id_and_partition():
    tasks = [T(i, j) for i in range(2) for j in range(8)]
    r = sticky([C(n, 4) for n in (1, 2, 3, 4)], tasks, 1)
    for n in (1, 2, 3, 4):
        assert act(r, n) == {tasks[i] for i in range(n - 1, 16, 4)}


def test_no_two_hosts_with_the_same_assignment():
    tasks = [T(0, 0), T(0, 2), T(0, 1), T(0, 3)]
    cases = [
        [C(1), C(2), C(3), C(4)],
        [C(1, active=[T(0, 1), T(0, 2)]), C(2, active=[T(0, 3)]), C(3, active=[T(0, 0)]), C(4)],
        [C(1, 1, [T(0, 1), T(0, 2)], [T(0, 3), T(0, 0)]), C(2, 1, [T(0, 3), T(0, 0)], [T(0, 1), T(0, 2)]),
         C(3), C(4)],
    ]
    for clients in cases:
        r = sticky(clients, tasks, 1)
        held = [frozenset(r.active[p] + r.standby[p]) for p in PID[1:4]]
        assert len(set(held)) == 3


def test_rebalances_across_clients():
    tasks = [T(0, 0), T(0, 2), T(0, 1), T(0, 3)]
    r = sticky([C(3, active=tasks), C(1), C(2), C(4)], tasks)
    assert [len(act(r, n)) for n in (1, 2, 3, 4)] == [1, 1, 1, 1]
    r = sticky([C(3, active=tasks), C(1), C(2)], tasks)
    assert [len(act(r, n)) for n in (3, 1, 2)] == [2, 1, 1]
    r = sticky([C(2, 1, [T(0, 0), T(0, 3), T(0, 2)]), C(3, 2)], [T(0, 0), T(0, 2), T(0, 3)])
    assert (len(act(r, 2)), len(act(r, 3))) == (1, 2)


def test_minimal_movement_when_a_client_is_added():
    p1, p2 = {T(0, 0), T(0, 2)}, {T(0, 1), T(0, 3)}
    r = sticky([C(1, active=p1), C(2, active=p2), C(3)], [T(0, 0), T(0, 2), T(0, 1), T(0, 3)])
    moved = act(r, 3)
    assert len(moved) == 1
    assert act(r, 2) == p2 if moved <= p1 else act(r, 1) == p1


def test_new_tasks_do_not_move_old_ones():
    tasks = [T(0, p) for p in range(6)]
    r = sticky([C(1, active=[T(0, 0), T(0, 1)]), C(2, active=[T(0, 2), T(0, 3)])], tasks)
    assert {T(0, 0), T(0, 1)} <= act(r, 1) and {T(0, 2), T(0, 3)} <= act(r, 2)
    r = sticky([C(1, active=[T(0, 2), T(0, 1)]), C(2, active=[T(0, 0), T(0, 3)]), C(3)], tasks)
    assert act(r, 1) >= {T(0, 2), T(0, 1)} and act(r, 2) >= {T(0, 0), T(0, 3)}
    assert act(r, 3) >= {T(0, 4), T(0, 5)}


ALL12 = [T(0, 0), T(1, 0), T(0, 1), T(0, 2), T(1, 1), T(2, 0), T(0, 3), T(1, 2), T(2, 1), T(1, 3), T(2, 2),
         T(2, 3)]


def test_tasks_not_previously_active_go_to_the_new_client():
    r = sticky([C(1, 1, [T(0, 1), T(1, 2), T(1, 3)], [T(0, 0), T(1, 1), T(2, 0), T(2, 1), T(2, 3)]),
                C(2, 1, [T(0, 0), T(1, 1), T(2, 2)],
                  [T(0, 1), T(1, 0), T(0, 2), T(2, 0), T(0, 3), T(1, 2), T(2, 1), T(1, 3), T(2, 3)]),
                C(3, 1, [T(2, 0), T(2, 1), T(2, 3)], [T(0, 2), T(1, 2)]),
                C(4, 1, [], ALL12)], ALL12)
    assert act(r, 1) == {T(0, 1), T(1, 2), T(1, 3)}
    assert act(r, 2) == {T(0, 0), T(1, 1), T(2, 2)}
    assert act(r, 3) == {T(2, 0), T(2, 1), T(2, 3)}
    assert act(r, 4) == {T(0, 2), T(0, 3), T(1, 0)}


def test_tasks_not_previously_active_go_to_multiple_new_clients():
    r = sticky([C(1, 1, [T(0, 1), T(1, 2), T(1, 3)], [T(0, 0), T(1, 1), T(2, 0), T(2, 1), T(2, 3)]),
                C(2, 1, [T(0, 0), T(1, 1), T(2, 2)],
                  [T(0, 1), T(1, 0), T(0, 2), T(2, 0), T(0, 3), T(1, 2), T(2, 1), T(1, 3), T(2, 3)]),
                C(3, 1, [], [T(2, 0), T(2, 1), T(2, 3)]),
                C(4, 1, [], [T(0, 2), T(0, 3), T(1, 0)])], ALL12)
    assert act(r, 1) == {T(0, 1), T(1, 2), T(1, 3)}
    assert act(r, 2) == {T(0, 0), T(1, 1), T(2, 2)}
    assert act(r, 3) == {T(2, 0), T(2, 1), T(2, 3)}
    assert act(r, 4) == {T(0, 2), T(0, 3), T(1, 0)}


def test_new_client_without_flipping_existing_ones():
    r = sticky([C(1, active=[T(0, 1), T(0, 2)]), C(2)], [T(0, 1), T(0, 2)])
    assert len(act(r, 1)) == 1
    r = sticky([C(1, active=[T(0, 0), T(0, 1), T(0, 2)]), C(2, active=[T(0, 3), T(0, 4), T(0, 5)]), C(3)],
               [T(0, p) for p in range(6)])
    assert len(act(r, 1)) == 2 and act(r, 1) <= {T(0, 0), T(0, 1), T(0, 2)}
    assert len(act(r, 2)) == 2 and act(r, 2) <= {T(0, 3), T(0, 4), T(0, 5)}
    assert len(act(r, 3)) == 2
    r = sticky([C(1, active=[T(0, 0), T(0, 1), T(0, 2), T(0, 6)]), C(2, standby=[T(0, 3), T(0, 4), T(0, 5)]),
                C(3)], [T(0, p) for p in range(7)])
    assert len(act(r, 1)) >= 2 and not act(r, 1) & {T(0, 3), T(0, 4), T(0, 5)}
    assert len(act(r, 2)) >= 2 and not act(r, 2) & {T(0, 0), T(0, 1), T(0, 2)}
    assert len(act(r, 3)) == 2


def test_fallback_keeps_every_previous_active():
    # shouldViolateBalanceToPreserveActiveTaskStickiness (LegacyStickyTaskAssignor(true))
    tasks = [T(0, 0), T(0, 1), T(0, 2)]
    r = assign_tasks_fallback([C(1, active=tasks), C(2)], tasks, client_map="sorted")
    assert act(r, 1) == set(tasks) and act(r, 2) == set()
    assert r.probing_rebalance_needed            # FallbackPriorTaskAssignor returns true
    assert not sticky([C(1, active=tasks), C(2)], tasks).probing_rebalance_needed


def test_offset_sums_give_previous_tasks():
    c = StreamsClient(PID[1], task_offset_sums={T(0, 1): -2, T(0, 0): 5})
    assert c.previous_tasks() == ([T(0, 1)], [T(0, 0)])


def test_too_many_tasks_like_java():
    # maxPairs = n * (n - 1) / 2 overflows Java's int: new HashSet<>(negative) throws
    with pytest.raises(ValueError):
        sticky([C(1)], [T(0, p) for p in range(46342)])


def random_tasks(rng: random.Random, most: int, subtopologies: int):
    """Up to ``most`` distinct tasks over the given number of subtopologies."""
    return list(dict.fromkeys(T(rng.randint(0, subtopologies - 1), p) for p in range(rng.randint(0, most))))


@pytest.mark.parametrize("seed", range(40))
def test_random_invariants(seed):
    rng = random.Random(seed)
    n_clients = rng.randint(1, 12)
    tasks = random_tasks(rng, 40, 4)
    sf = {t for t in tasks if rng.random() < 0.7}
    standbys = rng.randint(0, 3)
    clients = []
    for n in range(n_clients):
        mine = [t for t in tasks if rng.random() < 0.2]
        k = rng.randint(0, len(mine))
        clients.append(StreamsClient(uuid.UUID(int=rng.getrandbits(128)), rng.randint(1, 4),
                                     prev_active=mine[:k], prev_standby=mine[k:]))
    for fallback in (False, True):
        r = (assign_tasks_fallback if fallback else assign_tasks_sticky)(
            clients, {t: t in sf for t in tasks}, AssignmentConfigs(num_standby_replicas=standbys))
        role = r.role
        assert (np.count_nonzero(role == 1, axis=0) == 1).all()          # every task active once
        assert set(np.unique(role)) <= {0, 1, 2}
        for j, t in enumerate(r.tasks):
            want = min(standbys, n_clients - 1) if t in sf else 0
            assert np.count_nonzero(role[:, j] == 2) == want               # never beside its active
        if fallback:                                                       # previous actives kept
            owner = r.owner()
            for c in clients:
                for t in c.prev_active:
                    assert owner[t] in {d.process_id for d in clients if t in d.prev_active}
        assert r.probing_rebalance_needed == fallback
