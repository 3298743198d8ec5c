"""The simulator against KIP-268's upgrade matrix and the KIP-429 draft's learner scenarios,
and Kafka's KIP-441 behaviour on the same scaling events."""
from __future__ import annotations

import pytest

from kcodec.streams.simulate import (KIP429_SCENARIOS, run_kip429_scenario, simulate_scale,
                                     simulate_upgrade)

OLD = ["0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1"]


@pytest.mark.parametrize("old", OLD)
def test_pre_2_0_upgrade_needs_upgrade_from(old):
    # without the config the old leader cannot read the new subscription and the upgrade fails
    r = simulate_upgrade(old, "2.0", 3)
    assert not r.completed and "unable to decode subscription data" in r.error
    # with it: two rolling bounces, no error, everyone on version 3
    r = simulate_upgrade(old, "2.0", 3, upgrade_from=old)
    assert r.completed and r.bounces == 6 and set(r.final_versions.values()) == {3}


@pytest.mark.parametrize("old", OLD)
def test_pre_2_0_to_later_releases_with_upgrade_from(old):
    r = simulate_upgrade(old, "4.1", 3, upgrade_from=old)
    assert r.completed and set(r.final_versions.values()) == {11}


@pytest.mark.parametrize("frm,to", [("2.0", "2.1"), ("2.0", "4.1"), ("2.3", "3.8"), ("3.8", "4.1"), ("4.1", "12")])
@pytest.mark.parametrize("leader", [0, 1, -1])
def test_single_rolling_bounce_suffices_with_version_probing(frm, to, leader):
    r = simulate_upgrade(frm, to, 5, leader_position=leader)
    assert r.completed and r.bounces == 5


def test_version_probing_rebalances_when_the_version_rises():
    r = simulate_upgrade("4.1", "12", 3)
    probing = [x for x in r.rounds if x.version_probing]
    assert probing and all(x.followups for x in probing)
    # one follow-up per bounce: a probe while old members remain, the upgrade after the last
    assert r.followup_rebalances == 3


def test_leader_bounced_last_upgrades_when_it_leaves():
    # KIP-268: with the leader bounced last, the metadata upgrade needs one more rebalance
    # after the others are done; 4.1.1's members trigger it themselves as the leader leaves
    last = simulate_upgrade("4.1", "12", 3, leader_position=-1)
    leave = next(i for i, x in enumerate(last.rounds) if x.cause == "leave S1")
    assert last.rounds[leave].commonly_supported == 12 and last.rounds[leave + 1].cause == "follow-up"
    assert last.rounds[leave + 1].subscription_versions == {"S2": 12, "S3": 12}


@pytest.mark.parametrize("frm,to", [("2.4", "3.8"), ("2.6", "4.1"), ("4.1", "12")])
def test_no_extra_rebalance_for_the_leader_bounced_last_since_2_4(frm, to):
    # KIP-268's "one more rebalance if the leader is bounced last" came from 2.0-2.3 members,
    # which took the leader's own supported version "for the next rebalance" without asking
    # for one.  Since 2.4 (KAFKA-8649) the assignment carries the group's commonly supported
    # version and every member rejoins at once when it rises above the version it sent
    # (StreamsPartitionAssignor.maybeUpdateSubscriptionVersion).  It rises in the first
    # rebalance without an old instance, whoever leads it, so the count does not depend on
    # the leader's place in the bounce order.
    runs = [simulate_upgrade(frm, to, 4, leader_position=p) for p in (0, 1, 2, -1)]
    assert all(r.completed for r in runs)
    assert len({(r.rebalances, r.followup_rebalances) for r in runs}) == 1
    for r in runs:
        ups = [i for i, x in enumerate(r.rounds) if any("end of the rolling upgrade" in f for f in x.followups)]
        # exactly one upgrade trigger: in the rebalance after the last old instance left
        assert len(ups) == 1 and r.rounds[ups[0]].cause.startswith("leave")
        assert r.rounds[ups[0]].cause == "leave " + [x.cause for x in r.rounds if x.cause.startswith("leave")][-1][6:]


def test_same_version_bounce_needs_no_follow_up():
    r = simulate_upgrade("4.1", "4.1", 3)
    assert r.completed and r.followup_rebalances == 0 and r.rebalances == 6


@pytest.mark.parametrize("name", sorted(KIP429_SCENARIOS))
def test_kip429_learner_scenarios(name):
    got = run_kip429_scenario(name)
    counts = [{m: (len(a), len(l)) for m, (a, l) in r.items()} for r in got]
    assert counts == KIP429_SCENARIOS[name]["expect"]


def test_kip429_scale_up_exact_tasks():
    got = run_kip429_scenario("scale-up")
    assert got[0]["S4"] == ([], ["T1"]) and got[1]["S5"] == ([], ["T3"])
    assert got[3] == {"S1": (["T2"], []), "S2": (["T4"], []), "S3": (["T5"], []), "S4": (["T1"], []),
                      "S5": (["T3"], [])}


@pytest.mark.parametrize("kw", [dict(add=1), dict(add=2), dict(remove=1), dict(add=1, leader_crash=True)])
def test_both_designs_reach_balance(kw):
    learner = simulate_scale(3, tasks=5, assignor="learner", **kw)
    ha = simulate_scale(3, tasks=5, assignor="ha", **kw)
    assert learner.balanced and ha.balanced
    assert learner.rounds_to_balance is not None and ha.rounds_to_balance is not None
    for r in learner.rounds + ha.rounds:
        # every task has exactly one active owner after each round
        owned = [t for ts in r.active.values() for t in ts]
        assert len(owned) == len(set(owned))


def test_ha_warmups_bounded_and_converges_within_kip441_rounds():
    # KIP-441 / TaskAssignorConvergenceTest: adding a node converges within
    # stateful tasks / max.warmup.replicas + 1 probing rebalances
    ha = simulate_scale(3, tasks=12, add=1, assignor="ha")
    assert all(sum(len(v) for v in r.warming.values()) <= 2 for r in ha.rounds)
    probing = sum(1 for a, b in zip(ha.rounds, ha.rounds[1:]) if b.time_s - a.time_s > 30)
    assert ha.balanced and probing <= 12 // 2 + 1


@pytest.mark.parametrize("seed", range(25))
def test_ha_converges_within_kip441_probing_rounds_random(seed):
    # TaskAssignorConvergenceTest's bound for adding nodes: stateful tasks / max.warmup.replicas + 1
    import random
    from kcodec.streams.assignors import AssignmentConfigs
    rng = random.Random(seed)
    n, add, tasks, w = rng.randint(1, 5), rng.randint(1, 3), rng.randint(1, 20), rng.randint(1, 3)
    r = simulate_scale(n, add=add, tasks=tasks, assignor="ha", configs=AssignmentConfigs(max_warmup_replicas=w))
    probing = sum(1 for a, b in zip(r.rounds, r.rounds[1:]) if b.time_s - a.time_s > 30)
    assert r.balanced and probing <= tasks // w + 1
    assert all(sum(len(v) for v in x.warming.values()) <= w for x in r.rounds)
