"""Standby placement with client tags (KIP-708, ClientTagAwareStandbyTaskAssignor): cases of
Kafka's ClientTagAwareStandbyTaskAssignorTest through the HighAvailabilityTaskAssignor's
standby step, and the full assignor's invariants with tags under random groups."""
from __future__ import annotations

import random
import uuid

import numpy as np
import pytest

from kcodec.streams import TaskId
from kcodec.streams.assignors import AssignmentConfigs, StreamsClient, assign_standbys, assign_tasks

from .test_streams_sticky import random_tasks

PID = [uuid.UUID(int=i) for i in range(10)]
Z, CL = "zone", "cluster"


def T(s, p):
    return TaskId(s, p)


def run(spec, standbys, *tags):
    """spec: {n: (capacity, {tag: value}, [active tasks])}"""
    clients = [StreamsClient(PID[n], cap, client_tags=tg) for n, (cap, tg, _) in spec.items()]
    active = {PID[n]: acts for n, (_, _, acts) in spec.items()}
    tasks = [t for _, _, acts in spec.values() for t in acts]
    return assign_standbys(clients, active, tasks, AssignmentConfigs(
        num_standby_replicas=standbys, rack_aware_assignment_tags=tags))


def holders(r, t):
    return {PID.index(p) for p, ts in r.standby.items() if t in ts}


def count(r, n):
    return len(r.standby[PID[n]])


def test_active_tasks_on_the_same_zone():
    zc = {1: (Z + "1", CL + "1"), 2: (Z + "2", CL + "1"), 3: (Z + "3", CL + "1"), 4: (Z + "1", CL + "2"),
          5: (Z + "2", CL + "2"), 6: (Z + "3", CL + "2"), 7: (Z + "1", CL + "3"), 8: (Z + "2", CL + "3"),
          9: (Z + "3", CL + "3")}
    acts = {1: [T(0, 0), T(1, 0)], 4: [T(0, 1), T(1, 1)], 7: [T(0, 2), T(1, 2)]}
    r = run({n: (2, {Z: z, CL: c}, acts.get(n, [])) for n, (z, c) in zc.items()}, 2, Z, CL)
    assert [count(r, n) for n in (1, 4, 7)] == [0, 0, 0]
    # Kafka's test walks the tasks in HashSet order and gets two standbys each; the HA
    # assignor walks them in TaskId order: 0_0 -> 5, 9; 0_1 -> 2, 9; 0_2 -> 3, 5; 1_0 -> 6, 8;
    # 1_1 -> 2, 9; 1_2 -> 3, 5 (least loaded, then ProcessId), and no two clients share tags,
    # so balancing moves nothing
    assert [count(r, n) for n in (2, 3, 5, 6, 8, 9)] == [2, 2, 3, 1, 1, 3]
    for t in (T(0, 0), T(1, 0)):
        assert holders(r, t) in ({9, 5}, {6, 8})
    for t in (T(0, 1), T(1, 1)):
        assert holders(r, t) in ({2, 9}, {3, 8})
    for t in (T(0, 2), T(1, 2)):
        assert holders(r, t) in ({5, 3}, {2, 6})


def test_partial_rack_awareness():
    spec = {1: (1, {CL: "c1", Z: "z1"}, [T(0, 0)]), 2: (1, {CL: "c1", Z: "z2"}, []),
            3: (1, {CL: "c1", Z: "z3"}, []), 4: (1, {CL: "c2", Z: "z1"}, []),
            5: (1, {CL: "c2", Z: "z2"}, []), 6: (1, {CL: "c2", Z: "z3"}, [T(1, 0)])}
    r = run(spec, 2, CL, Z)
    assert count(r, 2) == 1 and count(r, 5) == 1
    assert sum(count(r, n) for n in range(1, 7)) == 4
    assert holders(r, T(0, 0)) in ({5, 3}, {5, 6})
    assert holders(r, T(1, 0)) in ({2, 4}, {2, 1})


def test_different_zones_even_when_clients_reached_capacity():
    zones = {1: "z1", 2: "z2", 3: "z3", 4: "z1", 5: "z2", 6: "z3"}
    acts = {1: T(0, 0), 2: T(0, 1), 3: T(0, 2), 4: T(1, 0), 5: T(1, 1), 6: T(1, 2)}
    r = run({n: (1, {Z: z, CL: "c1"}, [acts[n]]) for n, z in zones.items()}, 1, Z, CL)
    assert all(count(r, n) == 1 for n in zones)
    for t, ok in ((T(0, 0), {2, 5, 3, 6}), (T(1, 0), {2, 5, 3, 6}), (T(0, 1), {1, 4, 3, 6}),
                  (T(1, 1), {1, 4, 3, 6}), (T(0, 2), {1, 4, 2, 5}), (T(1, 2), {1, 4, 2, 5})):
        assert len(holders(r, t)) == 1 and holders(r, t) <= ok


def test_tags_outside_the_configured_ones_are_ignored():
    r = run({1: (1, {CL: "c1", Z: "z1"}, [T(0, 0)]), 2: (2, {CL: "c1", Z: "z2"}, []),
             3: (1, {CL: "c2", Z: "z1"}, [])}, 1, CL)
    assert sum(count(r, n) for n in (1, 2, 3)) == 1 and count(r, 3) == 1


def test_overlapping_values_of_different_keys():
    r = run({1: (2, {Z: "z1", CL: "c1"}, [T(0, 0)]), 2: (2, {Z: "c1", CL: "c3"}, [])}, 1, Z, CL)
    assert holders(r, T(0, 0)) == {2}


def test_least_loaded_when_no_other_tag_dimension():
    tg = {CL: "c1", Z: "z1"}
    r = run({1: (3, tg, [T(0, 0)]), 2: (3, tg, [T(0, 1)]), 3: (3, tg, [T(0, 2)]), 4: (3, tg, [T(1, 0)])}, 1, CL, Z)
    assert [count(r, n) for n in (1, 2, 3, 4)] == [1, 1, 1, 1]
    r = run({1: (3, tg, [T(0, 0)])}, 1, CL, Z)
    assert count(r, 1) == 0


def test_standbys_only_rebalance_between_clients_with_equal_tags():
    # the tag-aware pass puts both standbys of z1's actives on the single z2 client; the
    # thread balancing may not move them to the idle z1 client (isAllowedTaskMovement)
    spec = {1: (1, {Z: "z1"}, [T(0, 0), T(0, 1)]), 2: (1, {Z: "z2"}, []), 3: (1, {Z: "z1"}, [])}
    r = run(spec, 1, Z)
    assert holders(r, T(0, 0)) == holders(r, T(0, 1)) == {2}
    # without tags the default assignor spreads them
    clients = [StreamsClient(PID[n], 1) for n in (1, 2, 3)]
    r = assign_standbys(clients, {PID[1]: [T(0, 0), T(0, 1)]}, [T(0, 0), T(0, 1)],
                        AssignmentConfigs(num_standby_replicas=1))
    assert count(r, 2) == 1 and count(r, 3) == 1


@pytest.mark.parametrize("seed", range(30))
def test_ha_with_tags_invariants(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 9)
    tasks = random_tasks(rng, 12, 3)
    standbys = rng.randint(1, 3)
    clients = [StreamsClient(uuid.UUID(int=rng.getrandbits(128)), rng.randint(1, 3),
                             task_lags={t: rng.choice([-2, 0, 50, 100_000]) for t in tasks},
                             client_tags={Z: f"z{rng.randint(1, 3)}", CL: f"c{rng.randint(1, 2)}"})
               for _ in range(n)]
    cfg = AssignmentConfigs(acceptable_recovery_lag=100, num_standby_replicas=standbys,
                            rack_aware_assignment_tags=(Z, CL))
    r = assign_tasks(clients, tasks, {t: 100_000 for t in tasks}, cfg)
    role = r.role
    assert (np.count_nonzero(role == 1, axis=0) == 1).all()
    stb = np.count_nonzero((role == 2) | (role == 3), axis=0)
    assert (stb <= min(standbys, n - 1) + cfg.max_warmup_replicas).all()
    assert (np.count_nonzero(role == 3) <= cfg.max_warmup_replicas)
