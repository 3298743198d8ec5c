"""Standbys spread over racks without client tags: StandbyTaskAssignorFactory's rack-only
variant (a ClientTagAwareStandbyTaskAssignor whose one tag is the client's rack).  Cases of
Kafka's StandbyTaskAssignorFactoryTest, ClientTagAwareStandbyTaskAssignorTest and
RackAwareTaskAssignorTest, and that Kafka's HighAvailabilityTaskAssignor never picks it
(it hands the factory no RackAwareTaskAssignor)."""
from __future__ import annotations

import random
import uuid

import numpy as np
import pytest

from kcodec.streams import TaskId, TopicPartition
from kcodec.streams.assignors import (AssignmentConfigs, StreamsClient, assign_standbys, assign_tasks,
                                      standby_task_assignor)
from kcodec.streams.racks import TaskPartitions, optimize_standby_tasks, standby_tasks_cost

from .test_streams_rack import ACTIVE6, PARTS, PROCESS_RACK, STANDBY6, clients

PID = [uuid.UUID(int=i) for i in range(10)]


def T(s, p):
    return TaskId(s, p)


def holders(r, t):
    return {PID.index(p) for p, ts in r.standby.items() if t in ts}


# ---- StandbyTaskAssignorFactoryTest ----

def rack_clients(valid: bool):
    cl = [StreamsClient(PID[1], rack_id="r1"), StreamsClient(PID[2], consumer_racks={"c1": "r2", "c2": "r2"})]
    if not valid:
        cl.append(StreamsClient(PID[3], rack_id=None))
    return cl


@pytest.mark.parametrize("state", ["null", "disabled", "enabled"])
def test_factory_with_tags_is_client_tag_aware(state):
    cl = None if state == "null" else rack_clients(state == "enabled")
    assert standby_task_assignor(AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_tags=("az",)),
                                 cl) == "client_tag"


@pytest.mark.parametrize("state,expected", [("null", "default"), ("disabled", "default"), ("enabled", "rack")])
def test_factory_without_tags_is_default_or_rack(state, expected):
    cl = None if state == "null" else rack_clients(state == "enabled")
    assert standby_task_assignor(AssignmentConfigs(num_standby_replicas=1), cl) == expected


@pytest.mark.parametrize("consumer_racks", [{}, {"c1": None}, {"c1": "r1", "c2": "r2"}])
def test_factory_invalid_client_racks(consumer_racks):
    # validateClientRack: a consumer without a rack, two consumers on different racks, or a
    # process with no consumer at all make the racks invalid
    cl = [StreamsClient(PID[1], rack_id="r1"), StreamsClient(PID[2], consumer_racks=consumer_racks)]
    assert standby_task_assignor(AssignmentConfigs(), cl) == "default"


@pytest.mark.parametrize("strategy", ["none", "min_traffic", "balance_subtopology"])
def test_factory_ignores_the_strategy(strategy):
    # validClientRack does not read rack.aware.assignment.strategy (it only mutes its errors)
    cfg = AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_strategy=strategy)
    assert standby_task_assignor(cfg, rack_clients(True)) == "rack"
    assert standby_task_assignor(cfg, []) == "rack"        # no client, nothing invalid


# ---- ClientTagAwareStandbyTaskAssignorTest.shouldDistributeStandbyTasksUsingFunctionAndSupplierTags ----

ACTS9 = {1: [T(0, 0), T(1, 0)], 2: [T(0, 1), T(1, 1)], 3: [T(0, 2), T(1, 2)]}


def nine(tagged: bool):
    out = []
    for n in range(1, 10):
        k = (n - 1) % 3 + 1
        out.append(StreamsClient(PID[n], 2, client_tags={"zone": f"zone{k}"}) if tagged
                   else StreamsClient(PID[n], 2, rack_id=f"rack{k}"))
    return out


def test_rack_only_variant_matches_zone_tags():
    tasks = [t for ts in ACTS9.values() for t in ts]
    active = {PID[n]: ts for n, ts in ACTS9.items()}
    by_rack = assign_standbys(nine(False), active, tasks, AssignmentConfigs(num_standby_replicas=2),
                              racks_as_tags=True)
    by_zone = assign_standbys(nine(True), active, tasks,
                              AssignmentConfigs(num_standby_replicas=2, rack_aware_assignment_tags=("zone",)))
    for r in (by_rack, by_zone):
        counts = {PID.index(p): len(ts) for p, ts in r.standby.items()}
        assert [counts[n] for n in (1, 2, 3)] == [0, 0, 0]
        assert [counts[n] for n in range(4, 10)] == [2] * 6
        assert sum(counts.values()) == 12
        for t, allowed in ((T(0, 0), {2, 3, 5, 6, 8, 9}), (T(1, 0), {2, 3, 5, 6, 8, 9}),
                           (T(0, 1), {1, 3, 4, 6, 7, 9}), (T(1, 1), {1, 3, 4, 6, 7, 9}),
                           (T(0, 2), {1, 2, 4, 5, 7, 8}), (T(1, 2), {1, 2, 4, 5, 7, 8})):
            assert len(holders(r, t)) == 2 and holders(r, t) <= allowed
    assert np.array_equal(by_rack.role, by_zone.role)


def test_default_without_the_rack_assignor():
    # racks_as_tags=False is Kafka's HA standby step (factory handed null): least loaded clients,
    # blind to racks, exactly as if the clients had none
    tasks = [t for ts in ACTS9.values() for t in ts]
    active = {PID[n]: ts for n, ts in ACTS9.items()}
    cfg = AssignmentConfigs(num_standby_replicas=2)
    plain = assign_standbys(nine(False), active, tasks, cfg)
    no_racks = assign_standbys([StreamsClient(PID[n], 2) for n in range(1, 10)], active, tasks, cfg)
    assert np.array_equal(plain.role, no_racks.role)
    spread = assign_standbys(nine(False), active, tasks, cfg, racks_as_tags=True)
    assert not np.array_equal(plain.role, spread.role)
    # one client without a rack: validClientRack fails, so the default assignor again
    broken = nine(False)
    broken[4].rack_id = None
    assert np.array_equal(assign_standbys(broken, active, tasks, cfg, racks_as_tags=True).role, plain.role)
    # configured tags win over racks
    tagged = [StreamsClient(c.process_id, 2, client_tags={"zone": "z"}, rack_id=c.rack_id) for c in nine(False)]
    tcfg = AssignmentConfigs(num_standby_replicas=2, rack_aware_assignment_tags=("zone",))
    assert np.array_equal(assign_standbys(tagged, active, tasks, tcfg, racks_as_tags=True).role,
                          assign_standbys(tagged, active, tasks, tcfg).role)


def test_ha_assignor_never_uses_the_rack_only_variant():
    # HighAvailabilityTaskAssignor.assignStandbyReplicaTasks: StandbyTaskAssignorFactory.create(configs, null)
    rnd = random.Random(4)
    tasks = [T(s, p) for s in range(2) for p in range(6)]
    for _ in range(5):
        with_racks = [StreamsClient(uuid.UUID(int=rnd.getrandbits(128)), rnd.randint(1, 3),
                                    task_lags={t: -2 for t in tasks}, rack_id=rnd.choice("abc")) for _ in range(6)]
        bare = [StreamsClient(c.process_id, c.capacity, task_lags=c.task_lags) for c in with_racks]
        for strategy in ("none", "min_traffic"):
            cfg = AssignmentConfigs(num_standby_replicas=2, rack_aware_assignment_strategy=strategy)
            a, b = assign_tasks(with_racks, tasks, {}, cfg), assign_tasks(bare, tasks, {}, AssignmentConfigs(
                num_standby_replicas=2))
            assert not a.rack_aware          # no partitions: the rack optimiser is off too
            assert np.array_equal(a.role, b.role)


# ---- RackAwareTaskAssignorTest ----

def test_should_optimize_standby_tasks_with_moving_constraint_rack_variant():
    cl = clients(1, 2, 3, 4, 6, 7)
    assert standby_task_assignor(AssignmentConfigs(num_standby_replicas=2), cl) == "rack"
    assert standby_tasks_cost(cl, STANDBY6, PARTS, 10) == 60
    out, cost = optimize_standby_tasks(cl, ACTIVE6, STANDBY6, PARTS, traffic_cost=10, non_overlap_cost=1,
                                       client_tag_constraint="rack")
    assert cost == 50
    assert {p: len(ts) for p, ts in out.items()} == {p: 2 for p in STANDBY6}
    for t in {t for ts in STANDBY6.values() for t in ts}:
        racks = [PROCESS_RACK[p.int] for p, ts in list(out.items()) + list(ACTIVE6.items()) if t in ts]
        assert len(set(racks)) == 3
    with pytest.raises(ValueError, match="client_tag_constraint"):
        optimize_standby_tasks(cl, ACTIVE6, STANDBY6, PARTS, client_tag_constraint="zone")


def random_standby_case(rnd, n_clients=50, n_racks=50, n_tasks=60, per_task=3):
    racks = [f"rack{i}" for i in range(n_racks)]
    tasks = [T(0, p) for p in range(n_tasks)]
    source = {t: [TopicPartition("topic0", t.partition * per_task + k) for k in range(per_task)] for t in tasks}
    changelog = {t: [TopicPartition("store-changelog", t.partition * per_task + k) for k in range(per_task)]
                 for t in tasks}
    replica = {tp: rnd.sample(racks, 3) for tps in list(source.values()) + list(changelog.values()) for tp in tps}
    cl = [StreamsClient(uuid.UUID(int=rnd.getrandbits(128)), rnd.randint(1, 3), rack_id=rnd.choice(racks))
          for _ in range(n_clients)]
    return cl, tasks, TaskPartitions(source, changelog, replica)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("strategy", ["min_traffic", "balance_subtopology"])
def test_should_optimize_random_standby(seed, strategy):
    # shouldOptimizeRandomStandby: the rack-only standbys sit on racks apart from the active's
    # and each other's, and the optimiser keeps that, every client's count, and lowers the cost
    rnd = random.Random(seed)
    cl, tasks, parts = random_standby_case(rnd)
    active = {c.process_id: [] for c in cl}
    for t in tasks:
        active[rnd.choice(cl).process_id].append(t)
    rack_of = {c.process_id: c.rack() for c in cl}
    base = assign_standbys(cl, active, tasks, AssignmentConfigs(num_standby_replicas=3), racks_as_tags=True)
    opt = assign_standbys(cl, active, tasks, AssignmentConfigs(num_standby_replicas=3,
                                                               rack_aware_assignment_strategy=strategy),
                          partitions=parts, racks_as_tags=True)
    assert opt.rack_aware and not base.rack_aware
    for r in (base, opt):
        for t in tasks:
            on = [p for p, ts in r.standby.items() if t in ts] + [p for p, ts in r.active.items() if t in ts]
            assert len(on) == 4 and len({rack_of[p] for p in on}) == 4
    assert {p: len(ts) for p, ts in opt.standby.items()} == {p: len(ts) for p, ts in base.standby.items()}
    assert standby_tasks_cost(cl, opt.standby, parts, 10) <= standby_tasks_cost(cl, base.standby, parts, 10)
