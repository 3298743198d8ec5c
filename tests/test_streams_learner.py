"""The KIP-429 draft's learner assignor on its own."""
from __future__ import annotations

import random

import pytest

from kcodec.streams.learner import LearnerMember, learner_assign


def test_ready_learner_takes_over_and_owner_keeps_the_rest():
    members = {"S1": LearnerMember(active=["T1", "T2"]), "S4": LearnerMember(learning=["T1"], ready={"T1"})}
    out = learner_assign(members, ["T1", "T2"])
    assert out["S4"].active == ["T1"] and out["S1"].active == ["T2"] and not out["S4"].learning


def test_unready_learner_keeps_learning():
    members = {"S1": LearnerMember(active=["T1", "T2"]), "S4": LearnerMember(learning=["T1"])}
    out = learner_assign(members, ["T1", "T2"])
    assert out["S1"].active == ["T1", "T2"] and out["S4"].learning == ["T1"]


def test_stateless_tasks_move_at_once():
    members = {"S1": LearnerMember(active=["T1", "T2", "T3"]), "S2": LearnerMember()}
    out = learner_assign(members, ["T1", "T2", "T3"], new_members=["S2"], stateless=["T1", "T2", "T3"])
    assert out["S2"].active and not out["S2"].learning


def test_standbys_avoid_the_active_and_learner():
    members = {"S1": LearnerMember(active=["T1"]), "S2": LearnerMember(active=["T2"])}
    out = learner_assign(members, ["T1", "T2"], num_standby_replicas=1)
    assert out["S1"].standby == ["T2"] and out["S2"].standby == ["T1"]


@pytest.mark.parametrize("seed", range(100))
def test_invariants(seed):
    rng = random.Random(seed)
    tasks = [f"T{i}" for i in range(rng.randint(1, 12))]
    names = [f"S{i}" for i in range(rng.randint(1, 6))]
    members = {m: LearnerMember() for m in names}
    for t in tasks:
        if rng.random() < 0.8:
            members[rng.choice(names)].active.append(t)
    for m in names:
        members[m].leaving = rng.random() < 0.2
    out = learner_assign(members, tasks, new_members=[m for m in names if rng.random() < 0.5])
    owned = [t for r in out.values() for t in r.active]
    assert sorted(owned) == sorted(tasks)                    # every active exactly once
    for r in out.values():                                   # never a task and its learner on one member
        assert not set(r.active) & set(r.learning)
    learned = [t for r in out.values() for t in r.learning]
    assert len(learned) == len(set(learned))
