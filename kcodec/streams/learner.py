"""The learner-task assignor of the KIP-429 draft (``reference/kips/003_88d3f5cd876a5f42.txt``):
the incremental Streams rebalancing design that KIP-441 later shipped as warm-up replicas.

A learner is a standby restoring an active task's state on its future owner.  The leader
assigns in the order active, learner, standby:

* actives: to a member whose learner of the task is ready, else the previous owner, else an
  unready learner (the owner is gone), else a member with a standby, else the least loaded;
* existing learners stay; new learners are picked from the heaviest members (their first
  task not already being learned) for the lightest receivers, while loads differ by more than
  one.  Receivers are the new members the leader knows of (v1.0: learners only for new
  instances; a leader without history knows of none) or, when members are "leaving soon"
  (scale down), every member that stays; a leaving member's tasks are all learned;
* the owner of a task being learned revokes it at the start of every rebalance (the only
  revocation), and gets it back unless the learner is ready.

    >>> from kcodec.streams.learner import LearnerMember, learner_assign
    >>> members = {"S1": LearnerMember(active=["T1", "T2"]), "S2": LearnerMember(active=["T3", "T4"]),
    ...            "S3": LearnerMember(active=["T5"]), "S4": LearnerMember()}
    >>> out = learner_assign(members, ["T1", "T2", "T3", "T4", "T5"], new_members={"S4"})
    >>> out["S4"].learning, out["S1"].active
    (['T1'], ['T1', 'T2'])
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Hashable, Iterable, List, Mapping, Optional, Set

__all__ = ["LearnerMember", "learner_assign"]


@dataclass
class LearnerMember:
    """A member as it joins: what it owns, learns (and which learners are ready), its
    standbys, and whether it is leaving soon (scale down)."""
    active: List[Hashable] = field(default_factory=list)
    learning: List[Hashable] = field(default_factory=list)
    ready: Set[Hashable] = field(default_factory=set)
    standby: List[Hashable] = field(default_factory=list)
    leaving: bool = False


def learner_assign(members: Mapping[str, LearnerMember], tasks: Iterable[Hashable], *,
                   new_members: Iterable[str] = (), num_standby_replicas: int = 0,
                   stateless: Iterable[Hashable] = ()) -> Dict[str, LearnerMember]:
    """One rebalance of the learner algorithm; members are taken in name order.  Returns the
    new assignment (``ready`` is empty: learners report readiness when they rejoin).
    Stateless tasks have nothing to learn: they move at once."""
    names = sorted(members)
    order = list(tasks)
    pos = {t: i for i, t in enumerate(order)}
    no_state = set(stateless)
    new = set(new_members)
    out = {m: LearnerMember(leaving=members[m].leaving) for m in names}
    staying = [m for m in names if not members[m].leaving] or names

    def load(m: str) -> int:
        return len(out[m].active) + len(out[m].learning)

    # 1. actives
    owner: Dict[Hashable, str] = {}
    homeless: List[Hashable] = []
    for t in order:
        ready = [m for m in names if t in members[m].learning and t in members[m].ready]
        prev = [m for m in names if t in members[m].active]
        learner = [m for m in names if t in members[m].learning]
        standby = [m for m in names if t in members[m].standby]
        if ready:
            pick = ready[0]
        elif prev:
            pick = prev[0]
        elif learner:
            pick = learner[0]
        elif standby:
            pick = standby[0]
        else:
            homeless.append(t)        # placed once every claimed task is
            continue
        out[pick].active.append(t)
        owner[t] = pick
    for t in homeless:
        pick = min(staying, key=lambda m: (len(out[m].active), names.index(m)))
        out[pick].active.append(t)
        owner[t] = pick

    # 2. existing learners stay while their task is still owned elsewhere
    learned: Set[Hashable] = set()
    for m in names:
        for t in members[m].learning:
            if owner.get(t) not in (None, m) and t not in learned and not members[m].leaving:
                out[m].learning.append(t)
                learned.add(t)

    # 3. new learners
    leaving = [m for m in names if members[m].leaving]
    receivers = [m for m in names if not members[m].leaving] if leaving else [m for m in names if m in new]

    def effective(m: str) -> int:      # what a member will own once learning is done
        return sum(1 for t in out[m].active if t not in learned) + len(out[m].learning)

    def lightest() -> Optional[str]:
        return min(receivers, key=lambda m: (effective(m), names.index(m))) if receivers else None

    def give(t: Hashable, to: str) -> None:
        if t in no_state:              # nothing to restore: the task moves now
            out[owner[t]].active.remove(t)
            out[to].active.append(t)
            owner[t] = to
        else:
            out[to].learning.append(t)
            learned.add(t)

    for m in leaving:
        for t in list(out[m].active):
            if t not in learned and receivers:
                give(t, lightest())  # type: ignore[arg-type]
    while receivers:
        givers = [m for m in names if not members[m].leaving
                  and any(t not in learned for t in out[m].active)]
        if not givers:
            break
        h = max(givers, key=lambda m: (effective(m), -names.index(m)))
        lo = lightest()
        if lo is None or lo == h or effective(h) - effective(lo) <= 1:
            break
        t = min((t for t in out[h].active if t not in learned), key=lambda t: pos[t])
        give(t, lo)

    # 4. standbys: members without the task, fewest tasks first
    if num_standby_replicas > 0:
        for t in order:
            if t in no_state:
                continue
            for _ in range(num_standby_replicas):
                free = [m for m in staying if t not in out[m].active and t not in out[m].learning
                        and t not in out[m].standby]
                if not free:
                    break
                prev = [m for m in free if t in members[m].standby or t in members[m].active]
                pick = prev[0] if prev else min(free, key=lambda m: (load(m) + len(out[m].standby), names.index(m)))
                out[pick].standby.append(t)
    for m in names:
        out[m].active.sort(key=lambda t: pos[t])
        out[m].learning.sort(key=lambda t: pos[t])
    return out


def being_learned(assignment: Mapping[str, Any]) -> Set[Hashable]:
    """Tasks some member is learning: their owners revoke them when the next rebalance starts."""
    return {t for m in assignment.values() for t in m.learning}
