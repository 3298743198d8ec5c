"""Rack-aware task assignment (KIP-925): Kafka's GraphTest and RackAwareTaskAssignorTest cases
with the values those tests assert, canEnableRackAwareAssignor's conditions, the wiring into the
HighAvailabilityTaskAssignor and LegacyStickyTaskAssignor, random invariants and bad input."""
from __future__ import annotations

import dataclasses
import itertools
import random
import uuid

import numpy as np
import pytest

from kcodec.streams import TaskId, TopicPartition
from kcodec.streams.assignors import (AssignmentConfigs, StreamsClient, assign_standbys, assign_tasks,
                                      assign_tasks_fallback, assign_tasks_sticky)
from kcodec.streams.racks import (TaskPartitions, active_tasks_cost, can_enable_rack_aware_assignor, max_flow,
                                  min_cost_flow, optimize_active_tasks, optimize_standby_tasks, standby_tasks_cost)

# ---- Kafka's GraphTest ----

SQUARE = [(0, 1, 1, 3, 1), (0, 3, 1, 1, 0), (2, 1, 1, 1, 0), (2, 3, 1, 2, 1), (-1, 0, 1, 0, 1), (-1, 2, 1, 0, 1),
          (1, 99, 1, 0, 1), (3, 99, 1, 0, 1)]


def flowing(edges, flows):
    return sorted((e[0], e[1]) for e, f in zip(edges, flows) if f)


def test_graph_min_cost_flow():
    flows, cost = min_cost_flow(SQUARE, -1, 99)
    assert cost == 2          # was 5
    assert flowing(SQUARE, flows) == [(-1, 0), (-1, 2), (0, 3), (1, 99), (2, 1), (3, 99)]


def test_graph_detected_node_not_in_negative_cycle():
    edges = [(-1, 0, 1, 0, 1), (-1, 1, 1, 0, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 10, 1),
             (1, 2, 1, 1, 0), (1, 3, 1, 10, 1), (1, 4, 1, 1, 0), (2, 99, 0, 0, 0), (3, 99, 1, 0, 1), (4, 99, 1, 0, 1)]
    flows, cost = min_cost_flow(edges, -1, 99)
    assert cost == 2          # was 20
    assert flowing(edges, flows) == [(-1, 0), (-1, 1), (0, 3), (1, 4), (3, 99), (4, 99)]


def test_graph_deterministic_whatever_the_edge_order():
    edges = [(0, 1, 1, 2, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 1, 0), (1, 5, 1, 1, 1), (2, 5, 1, 1, 0),
             (3, 5, 1, 1, 0), (4, 5, 1, 1, 0)]
    rnd = random.Random(7)
    for _ in range(10):
        rnd.shuffle(edges)
        flows, cost = min_cost_flow(edges, 0, 5)
        assert cost == 2
        assert flowing(edges, flows) == [(0, 2), (2, 5)]     # of 2, 3, 4 the smallest node wins


def test_graph_just_source_sink():
    assert min_cost_flow([(0, 1, 1, 1, 1)], 0, 1) == ([1], 1)


@pytest.mark.parametrize("edges,source,sink,message", [
    ([(0, 1, -1, 0, 0)], 0, 1, "invalid graph"),                                     # negative capacity
    ([(0, 1, 1, 0, 2)], 0, 1, "invalid graph"),                                      # flow above capacity
    ([(0, 1, 1, 1, 1), (1, 0, 1, 0, 0)], 0, 1, "invalid graph"),                     # both ways
    ([(0, 1, 1, 1, 0), (1, 2, 1, 1, 0)], 1, 2, "source node 1 shouldn't have input"),
    ([(0, 1, 1, 1, 0), (1, 2, 1, 1, 0)], 0, 1, "sink node 1 shouldn't have output"),
    ([(0, 1, 1, 1, 1), (0, 2, 2, 1, 2), (1, 3, 1, 1, 1), (2, 3, 2, 1, 0)], 0, 3, "input flow for node 2"),
    ([(0, 1, 1, 1, 1), (0, 2, 2, 1, 2), (1, 3, 1, 1, 1), (2, 3, 2, 1, 2)], None, 3, "output flow of the source"),
    ([(0, 1, 1, 1, 1), (2, 3, 2, 1, 2)], 0, 1, "input flow for node 3"),
    ([(0, 1, 1, 1, 1), (2, 3, 2, 1, 2)], 0, 3, "input flow for node 1"),
    ([(0, 1, 1 << 31, 0, 0)], 0, 1, "Java int"),
])
def test_graph_invalid(edges, source, sink, message):
    with pytest.raises(ValueError, match=message):
        min_cost_flow(edges, source, sink)


def test_graph_max_flow():
    assert max_flow([(0, 1, 100, 0, 0)], 0, 1) == ([100], 100)
    sink_bound = [(0, 1, 10, 0, 0), (0, 2, 10, 0, 0), (0, 3, 10, 0, 0), (1, 4, 5, 0, 0), (2, 5, 5, 0, 0),
                  (3, 6, 5, 0, 0), (4, 7, 2, 0, 0), (5, 7, 2, 0, 0), (6, 7, 2, 0, 0)]
    assert max_flow(sink_bound, 0, 7) == ([2] * 9, 6)
    source_bound = [(0, 1, 1, 0, 0), (0, 2, 2, 0, 0), (0, 3, 3, 0, 0), (1, 4, 5, 0, 0), (2, 5, 5, 0, 0),
                    (3, 6, 5, 0, 0), (4, 7, 10, 0, 0), (5, 7, 10, 0, 0), (6, 7, 10, 0, 0)]
    assert max_flow(source_bound, 0, 7) == ([1, 2, 3] * 3, 6)


# ---- Kafka's RackAwareTaskAssignorTest (AssignmentTestUtils' cluster) ----

REPLICAS = {0: ["rack0", "rack1"], 1: ["rack1", "rack2"], 2: ["rack0", "rack2"], 3: ["rack1", "rack3"],
            4: ["rack3", "rack4"]}
SOURCE = {(0, 0): 0, (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 3, (0, 5): 4, (0, 6): 2, (1, 0): 2, (1, 1): 3,
          (1, 2): 0, (1, 3): 1, (2, 0): 4, (2, 1): 3, (2, 2): 4, (2, 3): 0, (3, 0): 2, (3, 1): 3, (3, 2): 4}
CHANGELOG = {(0, 0): 0, (0, 1): 1, (0, 2): 1, (0, 3): 2, (0, 4): 3, (0, 5): 4, (0, 6): 0, (1, 0): 2, (1, 1): 3,
             (1, 2): 0, (1, 3): 4, (2, 0): 1, (2, 1): 2, (2, 2): 4, (2, 3): 3, (3, 0): 4, (3, 1): 3, (3, 2): 1}


def src(s, p):
    return TopicPartition(f"topic{s}", p)


def chg(s, p):
    return TopicPartition(f"store-{s}-changelog", p)


PARTS = TaskPartitions({TaskId(s, p): [src(s, p)] for s, p in SOURCE},
                       {TaskId(s, p): [chg(s, p)] for s, p in CHANGELOG},
                       {**{src(s, p): REPLICAS[r] for (s, p), r in SOURCE.items()},
                        **{chg(s, p): REPLICAS[r] for (s, p), r in CHANGELOG.items()}})
PROCESS_RACK = {1: "rack0", 2: "rack1", 3: "rack2", 4: "rack3", 5: "rack4", 6: "rack0", 7: "rack1"}
PID = {i: uuid.UUID(int=i) for i in range(1, 10)}      # processIdForInt(n) = UUID(0, n)


def T(s, p):
    return TaskId(s, p)


def clients(*ids, **kw):
    return [StreamsClient(PID[i], rack_id=PROCESS_RACK[i], **kw) for i in ids]


def named(m):
    return {pid.int: sorted(str(t) for t in ts) for pid, ts in m.items()}


STRATEGIES = [(True, "balance_subtopology"), (False, "min_traffic"), (True, "min_traffic"),
              (False, "balance_subtopology")]


def costs(stateful):
    return dict(traffic_cost=10, non_overlap_cost=1) if stateful else dict(traffic_cost=1, non_overlap_cost=0)


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("stateful,strategy", STRATEGIES)
def test_should_optimize_active_tasks(stateful, strategy, mode):
    cl = clients(1, 2, 3)
    active = {PID[1]: [T(0, 1), T(1, 1)], PID[2]: [T(1, 0)], PID[3]: [T(0, 0)]}
    assert active_tasks_cost(cl, active, PARTS, costs(stateful)["traffic_cost"]) == (40 if stateful else 4)
    out, cost = optimize_active_tasks(cl, active, PARTS, strategy=strategy, mode=mode, **costs(stateful))
    assert cost == (4 if stateful else 0)
    assert named(out) == {1: ["0_0", "1_0"], 2: ["1_1"], 3: ["0_1"]}


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("stateful,strategy", STRATEGIES)
def test_should_optimize_active_tasks_with_more_clients(stateful, strategy, mode):
    cl = clients(1, 2, 3)
    active = {PID[2]: [T(1, 0)], PID[3]: [T(0, 0)]}
    assert active_tasks_cost(cl, active, PARTS, costs(stateful)["traffic_cost"]) == (20 if stateful else 2)
    out, cost = optimize_active_tasks(cl, active, PARTS, strategy=strategy, mode=mode, **costs(stateful))
    assert cost == (2 if stateful else 0)
    assert named(out) == {1: [], 2: ["0_0"], 3: ["1_0"]}     # the empty client stays empty

    active = {PID[2]: [T(0, 1), T(1, 0)], PID[3]: [T(0, 0)]}
    out, cost = optimize_active_tasks(cl, active, PARTS, strategy=strategy, mode=mode, **costs(stateful))
    assert cost == (2 if stateful else 0)
    assert named(out) == {1: [], 2: ["0_0", "0_1"], 3: ["1_0"]}


@pytest.mark.parametrize("mode", ["exact", "fast"])
@pytest.mark.parametrize("stateful,strategy", STRATEGIES)
def test_should_balance_assignment_with_more_cost(stateful, strategy, mode):
    cl = clients(2, 5)
    active = {PID[2]: [T(0, 0), T(1, 1)], PID[5]: [T(0, 1)]}
    expected = 10 if stateful else 1
    assert active_tasks_cost(cl, active, PARTS, costs(stateful)["traffic_cost"]) == expected
    out, cost = optimize_active_tasks(cl, active, PARTS, strategy=strategy, mode=mode, **costs(stateful))
    assert cost == expected
    if stateful or strategy == "min_traffic":
        assert named(out) == {2: ["0_0", "1_1"], 5: ["0_1"]}
    elif mode == "exact":   # balance_subtopology starts from a max flow, so the tie goes the other way
        assert named(out) == {2: ["0_0", "0_1"], 5: ["1_1"]}
    else:                   # the fast mode reaches the same cost by the other assignment of the tie
        assert {p: len(ts) for p, ts in named(out).items()} == {2: 2, 5: 1}


ACTIVE6 = {PID[1]: [T(0, 0)], PID[2]: [T(0, 1)], PID[3]: [T(1, 0)], PID[4]: [T(1, 1)], PID[6]: [T(0, 2)],
           PID[7]: [T(1, 2)]}
STANDBY6 = {PID[1]: [T(0, 1), T(1, 1)], PID[2]: [T(0, 0), T(1, 0)], PID[3]: [T(0, 0), T(0, 2)],
            PID[4]: [T(0, 1), T(1, 2)], PID[6]: [T(1, 0), T(1, 2)], PID[7]: [T(0, 2), T(1, 1)]}


def test_should_optimize_standby_tasks_when_all_movable():
    cl = clients(1, 2, 3, 4, 6, 7)
    assert standby_tasks_cost(cl, STANDBY6, PARTS, 10) == 60
    out, cost = optimize_standby_tasks(cl, ACTIVE6, STANDBY6, PARTS, traffic_cost=10, non_overlap_cost=1)
    assert cost == 20
    assert {p: len(ts) for p, ts in out.items()} == {p: 2 for p in STANDBY6}     # counts kept
    for t in {t for ts in STANDBY6.values() for t in ts}:
        holders = [p for p, ts in out.items() if t in ts] + [p for p, ts in ACTIVE6.items() if t in ts]
        assert len(holders) == len(set(holders)) == 3


def test_should_optimize_standby_tasks_with_moving_constraint():
    # StandbyTaskAssignorFactory with a rack assignor: a ClientTagAwareStandbyTaskAssignor on the
    # tag "rack"; a move must not shrink the racks a task's replicas span
    cl = clients(1, 2, 3, 4, 6, 7)
    for c in cl:
        c.client_tags = {"rack": c.rack_id}
    out, cost = optimize_standby_tasks(cl, ACTIVE6, STANDBY6, PARTS, traffic_cost=10, non_overlap_cost=1,
                                       client_tag_constraint=True)
    assert cost == 50
    for t in {t for ts in STANDBY6.values() for t in ts}:
        racks = [PROCESS_RACK[p.int] for p, ts in list(out.items()) + list(ACTIVE6.items()) if t in ts]
        assert len(set(racks)) == 3


def test_should_not_crash_for_empty_standby():
    assert optimize_standby_tasks(clients(1, 2, 3), {PID[1]: [T(0, 0)]}, {}, PARTS)[1] == 0
    assert optimize_active_tasks(clients(1, 2), {}, PARTS) == ({PID[1]: [], PID[2]: []}, 0)


@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_throw_if_task_in_multiple_or_no_clients(strategy):
    with pytest.raises(ValueError, match="two clients|no client"):
        optimize_active_tasks(clients(1, 2), {PID[1]: [T(0, 0)], PID[2]: [T(0, 0)]}, PARTS, strategy=strategy)
    with pytest.raises(ValueError, match="partitions"):     # a task Kafka has no partitions for
        optimize_active_tasks(clients(1, 2), {PID[1]: [T(9, 0)]}, PARTS, strategy=strategy)


# ---- canEnableRackAwareAssignor ----

def enabled(cl, strategy="min_traffic", standbys=0, parts=PARTS):
    return can_enable_rack_aware_assignor(
        cl, AssignmentConfigs(num_standby_replicas=standbys, rack_aware_assignment_strategy=strategy), parts)


def test_can_enable_conditions():
    assert enabled(clients(1, 2, 3))
    assert not enabled(clients(1, 2, 3), "none")                       # shouldDisableAssignorFromConfig
    assert not enabled(clients(1, 2, 3), parts=None)
    no_rack = clients(1, 2) + [StreamsClient(PID[3])]
    assert not enabled(no_rack)                                         # shouldReturnFalseWhenRackMissingInProcess
    # the rack comes from the client's consumers: all must send the same one
    assert StreamsClient(PID[1], consumer_racks={"c1": "r", "c2": "r"}).rack() == "r"
    assert StreamsClient(PID[1], consumer_racks={"c1": "r", "c2": None}).rack() is None
    assert StreamsClient(PID[1], consumer_racks={"c1": "r", "c2": "s"}).rack() is None
    assert StreamsClient(PID[1], consumer_racks={}).rack() is None
    assert not enabled([StreamsClient(PID[1], consumer_racks={"c1": "rack0", "c2": "rack1"})])
    # a replica without broker.rack, or a partition missing from the metadata
    bad = TaskPartitions(PARTS.source, PARTS.changelog, {**PARTS.replica_racks, src(0, 0): ["rack0", None]})
    assert not enabled(clients(1, 2), parts=bad)
    missing = TaskPartitions(PARTS.source, PARTS.changelog,
                             {k: v for k, v in PARTS.replica_racks.items() if k != src(3, 2)})
    assert not enabled(clients(1, 2), parts=missing)
    # changelog racks matter only with standbys
    no_chg = TaskPartitions(PARTS.source, PARTS.changelog,
                            {k: v for k, v in PARTS.replica_racks.items() if "changelog" not in k.topic})
    assert enabled(clients(1, 2), parts=no_chg)
    assert not enabled(clients(1, 2), standbys=1, parts=no_chg)
    assert enabled(clients(1, 2), standbys=1)


# ---- wiring into the assignors ----

def random_cluster(rnd, n_clients, n_sub, n_part, n_racks=3):
    racks = [f"r{i}" for i in range(n_racks)]
    tasks = [TaskId(s, p) for s in range(n_sub) for p in range(n_part)]
    replica = {}
    source, changelog = {}, {}
    for t in tasks:
        source[t] = [TopicPartition(f"in{t.subtopology}", t.partition)]
        changelog[t] = [TopicPartition(f"chg{t.subtopology}", t.partition)]
        for tp in source[t] + changelog[t]:
            replica[tp] = rnd.sample(racks, rnd.randint(1, 2))
    cl = [StreamsClient(uuid.UUID(int=rnd.getrandbits(128)), rnd.randint(1, 2), rack_id=rnd.choice(racks))
          for _ in range(n_clients)]
    return cl, tasks, TaskPartitions(source, changelog, replica)


def test_ha_runs_the_optimizer_after_balancing_actives():
    """Without standbys and with every client caught up, the HA result is its rack-unaware
    result passed through optimizeActiveTasks with the HA costs (10, 1)."""
    rnd = random.Random(3)
    for _ in range(15):
        cl, tasks, parts = random_cluster(rnd, rnd.randint(2, 5), rnd.randint(1, 3), rnd.randint(2, 6))
        for c in cl:
            c.task_lags = {t: -2 for t in tasks}
        for strategy in ("min_traffic", "balance_subtopology"):
            cfg = AssignmentConfigs(rack_aware_assignment_strategy=strategy)
            plain = assign_tasks(cl, tasks, {}, AssignmentConfigs())
            rack = assign_tasks(cl, tasks, {}, cfg, partitions=parts)
            assert rack.rack_aware and not plain.rack_aware
            expect, _ = optimize_active_tasks(cl, plain.active, parts, strategy=strategy, traffic_cost=10,
                                              non_overlap_cost=1)
            assert named(rack.active) == named(expect)
            assert active_tasks_cost(cl, rack.active, parts, 1) <= active_tasks_cost(cl, plain.active, parts, 1)


def test_configured_costs_replace_the_defaults():
    rnd = random.Random(5)
    cl, tasks, parts = random_cluster(rnd, 4, 2, 5)
    for c in cl:
        c.task_lags = {t: -2 for t in tasks}
    plain = assign_tasks(cl, tasks, {}, AssignmentConfigs())
    # traffic cost 0: nothing to gain, so nothing moves
    kept = assign_tasks(cl, tasks, {}, AssignmentConfigs(rack_aware_assignment_strategy="min_traffic",
                                                         rack_aware_assignment_traffic_cost=0), partitions=parts)
    assert named(kept.active) == named(plain.active)
    cfg = AssignmentConfigs(rack_aware_assignment_strategy="min_traffic", rack_aware_assignment_traffic_cost=7,
                            rack_aware_assignment_non_overlap_cost=3)
    expect, _ = optimize_active_tasks(cl, plain.active, parts, traffic_cost=7, non_overlap_cost=3)
    assert named(assign_tasks(cl, tasks, {}, cfg, partitions=parts).active) == named(expect)


def test_sticky_runs_the_optimizer_and_fallback_never_does():
    rnd = random.Random(11)
    for _ in range(15):
        cl, tasks, parts = random_cluster(rnd, rnd.randint(2, 5), rnd.randint(1, 3), rnd.randint(2, 6))
        for c in cl:
            c.prev_active = [t for t in tasks if rnd.random() < 0.3]
        for strategy in ("min_traffic", "balance_subtopology"):
            cfg = AssignmentConfigs(rack_aware_assignment_strategy=strategy)
            plain = assign_tasks_sticky(cl, tasks, AssignmentConfigs())
            rack = assign_tasks_sticky(cl, tasks, cfg, partitions=parts)
            assert rack.rack_aware
            expect, _ = optimize_active_tasks(cl, plain.active, parts, strategy=strategy, traffic_cost=1,
                                              non_overlap_cost=10)
            assert named(rack.active) == named(expect)
            fb = assign_tasks_fallback(cl, tasks, cfg)
            assert not fb.rack_aware and named(fb.active) == named(assign_tasks_fallback(cl, tasks).active)


def check_valid(res, tasks, standbys):
    role = res.role
    assert ((role == 1).sum(axis=0) == 1).all()             # every active exactly once
    for i, t in enumerate(res.tasks):
        holders = np.flatnonzero(role[:, i])
        assert len(holders) == len(set(holders))            # never a task twice on a client
        assert (role[:, i] == 2).sum() <= standbys
    assert (role == 3).sum() <= AssignmentConfigs().max_warmup_replicas


@pytest.mark.parametrize("seed", range(6))
def test_random_invariants_with_standbys(seed):
    rnd = random.Random(seed)
    cl, tasks, parts = random_cluster(rnd, rnd.randint(3, 7), rnd.randint(1, 3), rnd.randint(2, 8))
    stateful = {t for t in tasks if rnd.random() < 0.7}
    for c in cl:
        c.task_lags = {t: rnd.choice([-2, 0, 5, 50_000]) for t in tasks}
    standbys = rnd.randint(1, 2)
    for strategy in ("min_traffic", "balance_subtopology"):
        cfg = AssignmentConfigs(num_standby_replicas=standbys, rack_aware_assignment_strategy=strategy)
        res = assign_tasks(cl, {t: t in stateful for t in tasks}, {t: 100_000 for t in stateful}, cfg,
                           partitions=parts)
        assert res.rack_aware
        check_valid(res, tasks, standbys)
        sticky = assign_tasks_sticky(cl, {t: t in stateful for t in tasks}, cfg, partitions=parts)
        check_valid(sticky, tasks, standbys)
        plain = assign_tasks_sticky(cl, {t: t in stateful for t in tasks},
                                    AssignmentConfigs(num_standby_replicas=standbys))
        # the optimiser keeps every client's count of actives and of standbys
        assert ((sticky.role == 1).sum(axis=1) == (plain.role == 1).sum(axis=1)).all()
        assert ((sticky.role == 2).sum(axis=1) == (plain.role == 2).sum(axis=1)).all()


def brute_force_min(cl, active, parts, traffic, non_overlap):
    """The cheapest re-placement keeping every client's count, by enumeration."""
    order = sorted({t for ts in active.values() for t in ts})
    owner = {t: p for p, ts in active.items() for t in ts}
    slots = [p for p, ts in sorted(active.items()) for _ in ts]
    best = None
    for perm in set(itertools.permutations(slots)):
        place = {}
        for t, p in zip(order, perm):
            place.setdefault(p, []).append(t)
        cost = active_tasks_cost(cl, place, parts, traffic) + non_overlap * sum(
            1 for t, p in zip(order, perm) if owner[t] != p)
        best = cost if best is None else min(best, cost)
    return best


@pytest.mark.parametrize("seed", range(25))
def test_min_traffic_is_optimal_and_never_worse(seed):
    rnd = random.Random(100 + seed)
    cl, tasks, parts = random_cluster(rnd, rnd.randint(2, 3), rnd.randint(1, 2), rnd.randint(2, 3))
    tasks = tasks[:6]
    active = {c.process_id: [] for c in cl}
    for t in tasks:
        active[rnd.choice(cl).process_id].append(t)
    traffic, non_overlap = rnd.choice([(10, 1), (1, 0), (1, 10), (0, 1)])
    out, cost = optimize_active_tasks(cl, active, parts, traffic_cost=traffic, non_overlap_cost=non_overlap)
    assert sorted(t for ts in out.values() for t in ts) == sorted(tasks)
    assert {p: len(ts) for p, ts in out.items()} == {p: len(ts) for p, ts in active.items()}
    assert cost <= active_tasks_cost(cl, active, parts, traffic)
    assert cost == brute_force_min(cl, active, parts, traffic, non_overlap)
    if traffic == 0:
        assert named(out) == named(active)                  # shouldMaintainOriginalAssignmentForMinCost


@pytest.mark.parametrize("seed", range(10))
def test_balance_subtopology_spreads_each_subtopology(seed):
    rnd = random.Random(200 + seed)
    cl, tasks, parts = random_cluster(rnd, rnd.randint(2, 5), rnd.randint(2, 4), rnd.randint(3, 8))
    active = {c.process_id: [] for c in cl}
    for i, t in enumerate(tasks):
        active[cl[i % len(cl)].process_id].append(t)
    out, _ = optimize_active_tasks(cl, active, parts, strategy="balance_subtopology")
    n = len(tasks)
    for s in {t.subtopology for t in tasks}:
        ns = sum(1 for t in tasks if t.subtopology == s)
        for p, ts in out.items():
            got = sum(1 for t in ts if t.subtopology == s)
            assert got <= -(-len(active[p]) * ns // n)   # ceil(count * tasks in subtopology / tasks)
    assert {p: len(ts) for p, ts in out.items()} == {p: len(ts) for p, ts in active.items()}


# ---- bad input ----

def test_bad_configs_and_inputs():
    with pytest.raises(ValueError, match="strategy"):
        AssignmentConfigs(rack_aware_assignment_strategy="MIN_TRAFFIC")
    with pytest.raises(ValueError, match="Java int"):
        AssignmentConfigs(rack_aware_assignment_traffic_cost=1 << 31)
    with pytest.raises(ValueError, match="rack"):
        optimize_active_tasks([StreamsClient(PID[1])], {PID[1]: [T(0, 0)]}, PARTS)
    with pytest.raises(ValueError, match="unknown client"):
        optimize_active_tasks(clients(1), {PID[2]: [T(0, 0)]}, PARTS)
    with pytest.raises(ValueError, match="strategy"):
        optimize_active_tasks(clients(1), {PID[1]: [T(0, 0)]}, PARTS, strategy="none")
    from kcodec.streams._tasks import RackInput, rack_optimize_active
    with pytest.raises(ValueError):
        RackInput(2, 1, 1, [0, 5], 2, [[0, 0]], None, None, 1, 1, 0)          # rack index out of range
    with pytest.raises(ValueError):
        RackInput(2, 1, 1, [0, 1], 2, [[0, 0, 0]], None, None, 1, 1, 0)       # miss matrix shape
    with pytest.raises(ValueError):
        RackInput(2, 1, 1, [0, 1], 2, [[0, 0]], None, None, 1, 1, 0, pid_order=[0, 0])
    ri = RackInput(2, 1, 1, [0, 1], 2, [[0, 1]], None, None, 1, 1, 0)
    with pytest.raises(ValueError, match="no client"):
        rack_optimize_active(ri, np.zeros((2, 1), dtype=np.uint8), [1], 1, 0)
    with pytest.raises(ValueError):
        rack_optimize_active(ri, np.zeros((3, 1), dtype=np.uint8), [1], 1, 0)


# ---- the leader, the simulator and the CLI ----

def _rack_subs(racks_by_member):
    from kcodec.consumer import Subscription, encode_subscription as enc_consumer
    from kcodec.streams import SubscriptionInfo, encode_subscription
    out = {}
    for m, (pid, rack) in racks_by_member.items():
        ud = encode_subscription(SubscriptionInfo(11, 11, pid, f"h{pid.int}:1", {}))
        out[m] = enc_consumer(Subscription(["in"], ud, rack_id=rack))
    return out


def test_leader_takes_client_racks_from_consumer_rack_ids():
    from kcodec.streams.leader import Topology, assign_group
    topo = Topology.single_topic("in", 6, end_offset_sum=0)
    topo.replica_racks = {TopicPartition("in", p): [f"r{p % 2}"] for p in range(6)}
    # the sticky assignor's default costs (1, 10) favour staying put: configure HA-like ones
    cfg = AssignmentConfigs(rack_aware_assignment_strategy="min_traffic", rack_aware_assignment_traffic_cost=10,
                            rack_aware_assignment_non_overlap_cost=1)
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    members = {"a-1": (a, "r0"), "a-2": (a, "r0"), "b-1": (b, "r1")}
    for assignor in ("ha", "sticky"):
        for mode in ("fast", "exact"):
            res = assign_group(_rack_subs(members), topo, dataclasses.replace(cfg, rack_aware_assignment_mode=mode),
                               assignor=assignor)
            assert res.tasks.rack_aware and res.tasks.rack_aware_mode == mode   # the leader says which solver ran
            # a (two threads) gets 4 tasks, b 2; every task b runs reads from its own rack r1
            assert all(t.partition % 2 == 1 for t in res.tasks.active[b])
    # two consumers of one process on different racks: Kafka turns the optimisation off
    split = {"a-1": (a, "r0"), "a-2": (a, "r1"), "b-1": (b, "r1")}
    assert not assign_group(_rack_subs(split), topo, cfg).tasks.rack_aware
    assert assign_group(_rack_subs(split), topo, cfg).tasks.rack_aware_mode is None
    assert not assign_group(_rack_subs(members), topo, cfg, assignor="fallback").tasks.rack_aware


def test_simulator_counts_cross_rack_reads():
    from kcodec.streams.simulate import simulate_scale
    finals = {}
    for strategy in ("none", "min_traffic", "balance_subtopology"):
        cfg = AssignmentConfigs(rack_aware_assignment_strategy=strategy)
        rep = simulate_scale(3, add=1, tasks=12, assignor="ha", configs=cfg, racks=3)
        assert rep.balanced
        finals[strategy] = rep.rounds[-1].cross_rack
    # 4 members on racks 0, 1, 2, 0 and 4 tasks per rack: at best 2 tasks of racks 1 and 2 read remotely
    assert finals["min_traffic"] == finals["balance_subtopology"] == 2 < finals["none"]
    with pytest.raises(ValueError):
        simulate_scale(3, racks=-1)


def test_cli_rack_aware_flags():
    import io
    import json as _json
    from kcodec.streams import cli
    import argparse
    p = argparse.ArgumentParser(prog="kcodec")
    cli.add_subparsers(p.add_subparsers(dest="command"))
    ns = p.parse_args(["streams", "simulate-scale", "--instances", "3", "--add", "1", "--tasks", "12",
                       "--assignor", "ha", "--racks", "3", "--rack-aware-assignment-strategy", "min_traffic",
                       "--rack-aware-assignment-traffic-cost", "10", "--json"])
    buf = io.StringIO()
    assert ns.func(ns, buf) == 0
    assert _json.loads(buf.getvalue())[0]["rounds"][-1]["cross_rack"] == 2
    ns = p.parse_args(["streams", "simulate-scale", "--assignor", "ha", "--racks", "2",
                       "--rack-aware-assignment-strategy", "min_traffic"])
    buf = io.StringIO()
    assert ns.func(ns, buf) == 0 and "actives reading across racks" in buf.getvalue()


@pytest.mark.parametrize("seed", range(8))
def test_skipping_unchanged_nodes_gives_kafkas_full_scan_result(seed):
    """The Bellman-Ford search skips nodes whose distance did not change; scanning every edge
    of every pass, as Kafka's code does, must pick the very same cycles."""
    from kcodec.streams._tasks import _rack_full_scan
    rnd = random.Random(300 + seed)
    cl, tasks, parts = random_cluster(rnd, rnd.randint(3, 7), rnd.randint(1, 3), rnd.randint(3, 9))
    for c in cl:
        c.task_lags = {t: rnd.choice([-2, 0, 50_000]) for t in tasks}
    results = []
    non_overlap = rnd.choice([0, 1])
    for full in (False, True):
        _rack_full_scan(full)
        try:
            out = []
            for strategy in ("min_traffic", "balance_subtopology"):
                cfg = AssignmentConfigs(num_standby_replicas=2, rack_aware_assignment_strategy=strategy,
                                        rack_aware_assignment_non_overlap_cost=non_overlap,
                                        rack_aware_assignment_mode="exact")
                res = assign_tasks(cl, tasks, {t: 100_000 for t in tasks}, cfg, partitions=parts)
                out.append(res.role.tolist())
        finally:
            _rack_full_scan(False)
        results.append(out)
    assert results[0] == results[1]
