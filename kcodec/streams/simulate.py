"""A rebalance simulator for Kafka Streams groups.

:func:`simulate_upgrade` runs a rolling bounce from one Streams release to another with the
subscription and assignment bytes each member would really send (SubscriptionInfo /
AssignmentInfo, wrapped in the consumer protocol), the leader's and members' version rules
(:mod:`~kcodec.streams.probing`) and the leader's position in the bounce order.  A simulated
later version (``to="12"``) keeps v11's layout under a higher version number, as Kafka's own
version-probing tests do.

Members follow 4.1.1's rules: they rejoin at once when the assignment's commonly supported
version rises above the version they sent (KAFKA-8649, Kafka 2.4).  KIP-268's "one more
rebalance when the leader is bounced last" was a property of 2.0-2.3 members, which took the
leader's own supported version for the next rebalance without asking for one; with 4.1.1's
rules the final upgrade rebalance follows the first rebalance without an old instance,
whoever leads it, and the leader's position does not change the count.

:func:`simulate_scale` runs scale-out / scale-in / crashes through either Kafka's
HighAvailabilityTaskAssignor (``"ha"``: warm-ups and probing rebalances, real bytes through
:func:`~kcodec.streams.leader.assign_group`) or the KIP-429 draft's learner design
(``"learner"``, :mod:`~kcodec.streams.learner`), reporting per round which tasks are active,
warming up / learning, standby or unavailable, the rounds until balance and the task-seconds
during which a task had no running active.
"""
from __future__ import annotations

import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from kcodec.consumer import Subscription, decode_assignment as decode_consumer_assignment
from kcodec.consumer import encode_subscription as encode_consumer_subscription
from kcodec.errors import DecodeError, InvalidArgumentError, expect_type

from .assignors import AssignmentConfigs
from .learner import LearnerMember, learner_assign
from .probing import (TaskAssignmentError, leader_versions, member_on_assignment, release_version,
                      subscription_version)
from .protocol import (LATEST_OFFSET, LATEST_SUPPORTED_VERSION, AssignmentInfo, SubscriptionInfo, TaskId,
                       decode_assignment, decode_subscription, encode_assignment, encode_subscription)

__all__ = ["UpgradeRound", "UpgradeReport", "simulate_upgrade", "ScaleRound", "ScaleReport", "simulate_scale"]

_I32_MAX = (1 << 31) - 1


# --------------------------------------------------------------------------- wire helpers

def _patch(data: bytes, version: int) -> bytes:
    return version.to_bytes(4, "big") + data[4:]


def _encode_sub(info: SubscriptionInfo) -> bytes:
    if info.version <= LATEST_SUPPORTED_VERSION:
        return encode_subscription(info)
    body = encode_subscription(SubscriptionInfo(LATEST_SUPPORTED_VERSION, LATEST_SUPPORTED_VERSION, info.process_id,
                                                info.user_end_point, info.task_offset_sums))
    return info.version.to_bytes(4, "big") + info.latest_supported_version.to_bytes(4, "big") + body[8:]


def _decode_sub(data: bytes, reader_latest: int) -> SubscriptionInfo:
    """What a member of newest version ``reader_latest`` reads (newer than that: only the
    two leading versions; a simulated version up to ``reader_latest``: v11's layout)."""
    v = int.from_bytes(data[:4], "big", signed=True)
    if LATEST_SUPPORTED_VERSION < v <= reader_latest:
        info = decode_subscription(_patch(data, LATEST_SUPPORTED_VERSION))
        info.version = v
        info.latest_supported_version = int.from_bytes(data[4:8], "big", signed=True)
        return info
    info = decode_subscription(data)
    if v > reader_latest and not info.future:
        # an older release cannot read a newer version it does not know
        return SubscriptionInfo(v, info.latest_supported_version if v >= 3 else -1, future=True)
    return info


def _encode_asg(a: AssignmentInfo) -> bytes:
    if a.version <= LATEST_SUPPORTED_VERSION:
        return encode_assignment(a)
    v = a.version
    a.version = LATEST_SUPPORTED_VERSION
    try:
        return _patch(encode_assignment(a), v)
    finally:
        a.version = v


def _decode_asg(data: bytes) -> AssignmentInfo:
    v = int.from_bytes(data[:4], "big", signed=True)
    if v > LATEST_SUPPORTED_VERSION:
        a = decode_assignment(_patch(data, LATEST_SUPPORTED_VERSION))
        a.version = v
        return a
    return decode_assignment(data)


# --------------------------------------------------------------------------- upgrades

@dataclass
class _Instance:
    name: str
    release: str
    latest: int
    used: int
    upgrade_from: Optional[str]
    pid: _uuid.UUID


@dataclass
class UpgradeRound:
    """One rebalance of a rolling upgrade."""
    cause: str                              # "leave X", "join X", "follow-up"
    leader: str
    leader_release: str
    subscription_versions: Dict[str, int]
    assignment_version: Optional[int]
    commonly_supported: Optional[int]
    version_probing: bool
    followups: List[str]                    # members that rejoin at once (and why)
    error: Optional[str] = None
    subscription_bytes: int = 0
    assignment_bytes: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class UpgradeReport:
    rounds: List[UpgradeRound]
    bounces: int
    final_versions: Dict[str, int]
    target_version: int
    error: Optional[str]

    @property
    def rebalances(self) -> int:
        return len(self.rounds)

    @property
    def followup_rebalances(self) -> int:
        return sum(1 for r in self.rounds if r.cause == "follow-up")

    @property
    def completed(self) -> bool:
        """No error and every member on the target version."""
        return self.error is None and all(v == self.target_version for v in self.final_versions.values())

    def to_dict(self) -> Dict[str, Any]:
        return {"rebalances": self.rebalances, "followup_rebalances": self.followup_rebalances,
                "bounces": self.bounces, "completed": self.completed, "error": self.error,
                "target_version": self.target_version, "final_versions": self.final_versions,
                "rounds": [r.to_dict() for r in self.rounds]}


def _rebalance(members: List[_Instance], cause: str, rounds: List[UpgradeRound]) -> List[str]:
    """One rebalance with real bytes; returns the members asking for another one now."""
    leader = members[0]                                   # the longest-standing member leads
    subs = {m.name: encode_consumer_subscription(Subscription(["in"], _encode_sub(
        SubscriptionInfo(m.used, m.latest if m.used >= 3 else -1, m.pid, f"{m.name}:1")))) for m in members}
    infos: Dict[str, SubscriptionInfo] = {}
    from kcodec.consumer import decode_subscription as decode_consumer_subscription
    for m in members:
        ud = decode_consumer_subscription(subs[m.name]).user_data
        infos[m.name] = _decode_sub(ud, leader.latest)  # type: ignore[arg-type]
    rnd = UpgradeRound(cause, leader.name, leader.release, {m.name: m.used for m in members}, None, None, False, [],
                       subscription_bytes=sum(len(b) for b in subs.values()))
    rounds.append(rnd)
    try:
        lv = leader_versions(infos, leader_latest=leader.latest)
    except TaskAssignmentError as e:
        rnd.error = f"leader {leader.name} ({leader.release}): {e}"
        return []
    if lv.error_code:
        rnd.error = lv.error
        return []
    rnd.assignment_version, rnd.version_probing = lv.min_received, lv.version_probing
    rnd.commonly_supported = lv.commonly_supported
    future = set(lv.future_members)
    again: List[str] = []
    tasks = [TaskId(0, p) for p in range(len(members))]
    for i, m in enumerate(members):
        if m.name in future and leader.latest < 8:
            # leaders before 2.6: an empty assignment at the leader's own version (KIP-268)
            a = AssignmentInfo(leader.latest, leader.latest)
        else:
            common = lv.commonly_supported if lv.min_received >= 3 else -1
            a = AssignmentInfo(lv.min_received, common, [tasks[i]])
        data = _encode_asg(a)
        rnd.assignment_bytes += len(data)
        got = _decode_asg(data)
        try:
            upd = member_on_assignment(m.used, got.version, got.commonly_supported_version, latest_supported=m.latest)
        except TaskAssignmentError as e:
            rnd.error = f"member {m.name}: {e}"
            return []
        if upd.rebalance_now:
            again.append(f"{m.name}: {upd.reason} (v{m.used} -> v{upd.used_version})")
        m.used = upd.used_version
    rnd.followups = again
    return again


def _at_least(name: str, value: Any, low: int, high: int) -> None:
    """An InvalidArgumentError naming ``name`` unless ``value`` is an int in [low, high]."""
    expect_type(value, int, name, "an integer")
    if not low <= value <= high:
        raise InvalidArgumentError(name, f"must be from {low} to {high}, got {value}")


def simulate_upgrade(from_release: str, to_release: str, instances: int = 3, *,
                     upgrade_from: Optional[str] = None, leader_position: int = 0,
                     second_bounce: Optional[bool] = None) -> UpgradeReport:
    """A rolling bounce of ``instances`` members from ``from_release`` to ``to_release``.

    ``upgrade_from``: the config set on the new release during the first bounce; then a
    second bounce removes it (KIP-268's two-bounce path; ``second_bounce`` overrides).
    ``leader_position``: where the initial leader is in the bounce order (0 first, -1 last).
    Leadership passes to the longest-standing member when the leader leaves."""
    _at_least("instances", instances, 1, 10_000)
    expect_type(leader_position, int, "leader_position", "an integer")
    for name, v in (("from_release", from_release), ("to_release", to_release)):
        expect_type(v, str, name, "a release such as '2.3'")
    old_latest = release_version(from_release)
    new_latest = release_version(to_release)
    names = [f"S{i + 1}" for i in range(instances)]
    pos = leader_position % instances
    bounce_order = [n for n in names if n != names[0]]
    bounce_order.insert(pos, names[0])                    # S1 leads at the start
    group = [_Instance(n, from_release, old_latest, subscription_version(from_release), None,
                       _uuid.UUID(int=i + 1)) for i, n in enumerate(names)]
    rounds: List[UpgradeRound] = []
    passes = [upgrade_from]
    if upgrade_from is not None and (second_bounce is None or second_bounce):
        passes.append(None)
    error: Optional[str] = None
    bounces = 0

    def settle(cause: str) -> Optional[str]:
        pending = _rebalance(group, cause, rounds)
        n = 0
        while pending and not rounds[-1].error and n < 10:
            pending = _rebalance(group, "follow-up", rounds)
            n += 1
        return rounds[-1].error

    for cfg in passes:
        for name in bounce_order:
            bounces += 1
            idx = next(i for i, m in enumerate(group) if m.name == name)
            m = group.pop(idx)
            if group:
                error = settle(f"leave {name}")
                if error:
                    break
            m.release, m.latest, m.upgrade_from = to_release, new_latest, cfg
            m.used = subscription_version(to_release, cfg)
            group.append(m)                               # rejoins last
            error = settle(f"join {name}")
            if error:
                break
        if error:
            break
    return UpgradeReport(rounds, bounces, {m.name: m.used for m in sorted(group, key=lambda x: x.name)},
                         new_latest, error)


# --------------------------------------------------------------------------- scaling

@dataclass
class ScaleRound:
    """The group after one rebalance."""
    time_s: float
    cause: str
    leader: str
    active: Dict[str, List[str]]
    warming: Dict[str, List[str]]           # warm-ups (ha) / learners (learner)
    standby: Dict[str, List[str]]
    unavailable: List[str]                  # tasks without a running active after the round
    revoked: Dict[str, List[str]]
    cross_rack: Optional[int] = None        # with racks: actives reading their input from another rack
    rack_aware_mode: Optional[str] = None   # the KIP-925 optimisation ran: "fast" or "exact" solver

    def to_dict(self) -> Dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ScaleReport:
    assignor: str
    rounds: List[ScaleRound]
    unavailable_task_seconds: float
    balanced: bool

    @property
    def rebalances(self) -> int:
        return len(self.rounds)

    @property
    def rounds_to_balance(self) -> Optional[int]:
        """Rebalances after the scaling event until actives are balanced and nothing is
        warming up any more (None: not reached)."""
        for i, r in enumerate(self.rounds):
            counts = [len(v) for k, v in r.active.items()]
            if (not any(r.warming.values()) and max(counts) - min(counts) <= 1 and not r.unavailable
                    and i >= self._event_round):
                return i - self._event_round + 1
        return None

    _event_round: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return {"assignor": self.assignor, "rebalances": self.rebalances,
                "rounds_to_balance": self.rounds_to_balance,
                "unavailable_task_seconds": self.unavailable_task_seconds, "balanced": self.balanced,
                "rounds": [r.to_dict() for r in self.rounds]}


def _tname(t: TaskId) -> str:
    return f"T{t.partition + 1}"


def simulate_scale(instances: int = 3, *, add: int = 0, remove: int = 0, tasks: int = 5,
                   assignor: str = "learner", state_records: int = 100_000, restore_per_s: float = 10_000.0,
                   rebalance_s: float = 1.0, configs: AssignmentConfigs = AssignmentConfigs(max_warmup_replicas=2),
                   probing_interval_s: float = 60.0, leader_crash: bool = False, partial: bool = False,
                   max_rounds: int = 200, racks: int = 0) -> ScaleReport:
    """Start ``instances`` members owning ``tasks`` stateful tasks (balanced, state restored),
    then add ``add`` members, mark ``remove`` members as leaving (scale down) and optionally
    crash the leader; run rebalances until the group settles.

    ``restore_per_s``: records restored per second per task; ``state_records`` per task.
    ``racks`` (ha only): member Si sends ``rack.id`` ``rack{(i-1) % racks}``, input partition p
    has its replica on ``rack{p % racks}`` (its changelog on the next rack), so
    ``configs.rack_aware_assignment_strategy`` takes effect; rounds then count the actives
    reading across racks."""
    if assignor not in ("ha", "learner"):
        raise InvalidArgumentError("assignor", "must be 'ha' or 'learner'")
    # bounds keep the simulation's work (instances x tasks per round, max_rounds) finite
    _at_least("instances", instances, 1, 10_000)
    _at_least("add", add, 0, 10_000)
    _at_least("remove", remove, 0, instances)
    if instances + add - remove < 1:
        raise InvalidArgumentError("remove", f"removing {remove} of {instances + add} instances "
                                   "leaves none to run the tasks")
    _at_least("tasks", tasks, 0, 100_000)
    _at_least("state_records", state_records, 0, 2**63 - 1)
    _at_least("max_rounds", max_rounds, 1, 100_000)
    _at_least("racks", racks, 0, 10_000)
    for name, v in (("restore_per_s", restore_per_s), ("rebalance_s", rebalance_s),
                    ("probing_interval_s", probing_interval_s)):
        expect_type(v, (int, float), name, "a number")
        if not 0 < v < float("inf"):
            raise InvalidArgumentError(name, f"must be a positive number, got {v}")
    expect_type(configs, AssignmentConfigs, "configs", "AssignmentConfigs")
    task_ids = [TaskId(0, p) for p in range(tasks)]
    names = [f"S{i + 1}" for i in range(instances)]
    # balanced start: task i on member i % n, in order
    # learner: contiguous runs as the KIP-429 draft draws them (S1[T1, T2], S2[T3, T4], S3[T5]);
    # ha: the assignor's own steady state (round-robin in ProcessId order)
    owned: Dict[str, List[TaskId]] = {n: [] for n in names}
    for i, t in enumerate(task_ids):
        if assignor == "ha" or tasks < instances:
            owned[names[i % instances]].append(t)
        else:
            owned[names[i * instances // tasks]].append(t)
    restored: Dict[str, Dict[TaskId, float]] = {n: {t: float(state_records) for t in owned[n]} for n in names}
    new_names = [f"S{instances + i + 1}" for i in range(add)]
    leaving = set(names[len(names) - remove:]) if remove else set()
    members = names + new_names
    if leader_crash:
        members = members[1:]
    for n in new_names:
        owned[n] = []
        restored[n] = {}
    if leader_crash:
        owned.pop(names[0])
        restored.pop(names[0])
    rounds: List[ScaleRound] = []
    if assignor == "learner":
        rep = _run_learner(members, owned, restored, task_ids, set(new_names), leaving, state_records,
                           restore_per_s, rebalance_s, partial, leader_crash, max_rounds, rounds)
    else:
        rep = _run_ha(members, owned, restored, task_ids, leaving, state_records, restore_per_s, rebalance_s,
                      configs, probing_interval_s, max_rounds, rounds, racks)
    return rep


def _run_learner(members, owned, restored, task_ids, new, leaving, state, speed, reb_s, partial, crashed,
                 max_rounds, rounds) -> ScaleReport:
    now = 0.0
    unavailable = 0.0
    learning: Dict[str, List[TaskId]] = {m: [] for m in members}
    standby: Dict[str, List[TaskId]] = {m: [] for m in members}
    known = set() if crashed else set(members) - new      # the leader's history
    members = list(members)
    for _ in range(max_rounds):
        ready = {m: {t for t in learning[m] if restored[m].get(t, 0) >= state} for m in members}
        lm = {m: LearnerMember(list(owned[m]), list(learning[m]), ready[m], list(standby[m]), m in leaving)
              for m in members}
        # owners revoke what is being learned: unavailable for the rebalance
        being = {t for m in members for t in learning[m]}
        revoked = {m: [_tname(t) for t in owned[m] if t in being] for m in members}
        orphan = [t for t in task_ids if not any(t in owned[m] for m in members)]
        out = learner_assign(lm, task_ids, new_members=[m for m in members if m not in known])
        known = set(members)
        unavailable += reb_s * (len(being) + len(orphan))
        now += reb_s
        for m in members:
            for t in out[m].active:
                if t not in owned[m]:
                    # a task taken over without restored state restores before it runs
                    missing = max(0.0, state - restored[m].get(t, 0.0))
                    unavailable += missing / speed
                    restored[m][t] = float(state)
            owned[m] = list(out[m].active)
            learning[m] = list(out[m].learning)
            standby[m] = list(out[m].standby)
        gone = [m for m in members if m in leaving and not owned[m]]
        for m in gone:
            members.remove(m)
        rounds.append(ScaleRound(now, "rebalance", members[0] if members else "-",
                                 {m: [_tname(t) for t in owned[m]] for m in members},
                                 {m: [_tname(t) for t in learning[m]] for m in members},
                                 {m: [_tname(t) for t in standby[m]] for m in members}, [], revoked))
        if not any(learning[m] for m in members):
            counts = [len(owned[m]) for m in members]
            return ScaleReport("learner", rounds, unavailable, max(counts) - min(counts) <= 1)
        # the next rebalance: when a learner is done (partial) or a member has learned everything
        waits = []
        for m in members:
            left = [max(0.0, state - restored[m].get(t, 0.0)) / speed for t in learning[m]]
            if left:
                waits.append(min(left) if partial else max(left))
        dt = min(waits)
        now += dt
        for m in members:
            for t in learning[m]:
                restored[m][t] = min(float(state), restored[m].get(t, 0.0) + dt * speed)
    return ScaleReport("learner", rounds, unavailable, False)


def _rack_of(m: str, racks: int) -> Optional[str]:
    return f"rack{(int(m[1:]) - 1) % racks}" if racks else None


def _run_ha(members, owned, restored, task_ids, leaving, state, speed, reb_s, configs, probe_s,
            max_rounds, rounds, racks: int = 0) -> ScaleReport:
    from .leader import Topology, assign_group
    from kcodec.consumer import TopicPartition

    topo = Topology({t: [TopicPartition("in", t.partition)] for t in task_ids}, set(task_ids),
                    {t: state for t in task_ids})
    if racks:
        # input partition p has its replica on rack p % racks, its changelog partition on the next rack
        topo.changelogs = {t: [TopicPartition("app-store-changelog", t.partition)] for t in task_ids}
        topo.replica_racks = {
            **{TopicPartition("in", t.partition): [f"rack{t.partition % racks}"] for t in task_ids},
            **{TopicPartition("app-store-changelog", t.partition): [f"rack{(t.partition + 1) % racks}"]
               for t in task_ids}}
    pid = {m: _uuid.UUID(int=int(m[1:])) for m in members}
    now, unavailable = 0.0, 0.0
    standby: Dict[str, List[TaskId]] = {m: [] for m in members}
    live = [m for m in members if m not in leaving]
    # scale down in KIP-441: leaving members simply leave (no "leaving soon")
    for m in leaving:
        owned.pop(m, None)
    for _ in range(max_rounds):
        subs = {}
        for m in live:
            sums = {t: int(r) for t, r in restored[m].items()}
            sums.update({t: LATEST_OFFSET for t in owned[m]})
            ud = encode_subscription(SubscriptionInfo(11, 11, pid[m], f"{m}:1", sums))
            subs[m] = encode_consumer_subscription(Subscription(
                ["in"], ud, [TopicPartition("in", t.partition) for t in owned[m]], rack_id=_rack_of(m, racks)))
        res = assign_group(subs, topo, configs, now_ms=int(now * 1000))
        now += reb_s
        immediate = False
        warming: Dict[str, List[TaskId]] = {m: [] for m in live}
        revoked = {m: [] for m in live}
        had = {t for m in live for t in owned[m]}
        unavailable += reb_s * len([t for t in task_ids if t not in had])
        for m, data in res.encoded():
            a = decode_consumer_assignment(data)
            info = decode_assignment(a.user_data)  # type: ignore[arg-type]
            new_active = list(dict.fromkeys(info.active_tasks))
            revoked[m] = [_tname(t) for t in owned[m] if t not in new_active]
            for t in new_active:
                if t not in owned[m]:
                    missing = max(0.0, state - restored[m].get(t, 0.0))
                    unavailable += missing / speed
                    restored[m][t] = float(state)
            owned[m] = new_active
            standby[m] = list(info.standby_tasks)
            if info.next_rebalance_ms == 0:
                immediate = True
        assert res.tasks is not None
        for j, t in enumerate(res.tasks.tasks):
            for c, p in enumerate(res.tasks.clients):
                if res.tasks.role[c, j] == 3:
                    warming[next(m for m in live if pid[m] == p)].append(t)
        unassigned = [t for t in task_ids if not any(t in owned[m] for m in live)]
        rounds.append(ScaleRound(now, "rebalance", live[0], {m: [_tname(t) for t in owned[m]] for m in live},
                                 {m: [_tname(t) for t in warming[m]] for m in live},
                                 {m: [_tname(t) for t in standby[m] if t not in warming[m]] for m in live},
                                 [_tname(t) for t in unassigned], revoked,
                                 sum(1 for m in live for t in owned[m]
                                     if f"rack{t.partition % racks}" != _rack_of(m, racks)) if racks else None,
                                 res.tasks.rack_aware_mode))
        if immediate or unassigned:
            unavailable += reb_s * len(unassigned)
            continue
        if not res.tasks.probing_rebalance_needed:
            counts = [len(owned[m]) for m in live]
            return ScaleReport("ha", rounds, unavailable, max(counts) - min(counts) <= 1)
        now += probe_s
        for m in live:
            for t in standby[m]:
                restored[m][t] = min(float(state), restored[m].get(t, 0.0) + probe_s * speed)
    return ScaleReport("ha", rounds, unavailable, False)


# --------------------------------------------------------------------------- the KIP-429 draft's scenarios

# Each scenario: the stable start and the events before each rebalance, as the document writes
# them; ``expect`` holds the counts it gives after each rebalance: {member: (active, learning)}.
KIP429_SCENARIOS: Dict[str, Dict[str, Any]] = {
    "scale-up": {
        "start": {"S1": ["T1", "T2"], "S2": ["T3", "T4"], "S3": ["T5"]},
        "steps": [{"join": ["S4"]}, {"join": ["S5"]}, {"ready": ["S4"]}, {"ready": ["S5"]}],
        "expect": [{"S1": (2, 0), "S2": (2, 0), "S3": (1, 0), "S4": (0, 1)},
                   {"S1": (2, 0), "S2": (2, 0), "S3": (1, 0), "S4": (0, 1), "S5": (0, 1)},
                   {"S1": (1, 0), "S2": (2, 0), "S3": (1, 0), "S4": (1, 0), "S5": (0, 1)},
                   {"S1": (1, 0), "S2": (1, 0), "S3": (1, 0), "S4": (1, 0), "S5": (1, 0)}],
    },
    "scale-up-from-scratch": {
        "start": {},
        "tasks": ["T1", "T2", "T3", "T4", "T5"],
        "steps": [{"join": ["S1"]}, {"join": ["S2", "S3"]}, {"ready": ["S2", "S3"]}],
        "expect": [{"S1": (5, 0)},
                   {"S1": (5, 0), "S2": (0, 2), "S3": (0, 1)},
                   {"S1": (2, 0), "S2": (2, 0), "S3": (1, 0)}],
    },
    "scale-down": {
        "start": {"S1": ["T1", "T2"], "S2": ["T3", "T4"], "S3": ["T5"]},
        "steps": [{"leave_soon": ["S2"]}, {"ready": ["S3"]}, {"ready": ["S1"]}],
        "expect": [{"S1": (2, 1), "S2": (2, 0), "S3": (1, 1)},
                   {"S1": (2, 1), "S2": (1, 0), "S3": (2, 0)},
                   {"S1": (3, 0), "S2": (0, 0), "S3": (2, 0)}],
    },
    "leader-crash-during-scaling": {
        "start": {"S1": ["T1", "T2"], "S2": ["T3", "T4"], "S3": ["T5"]},
        "steps": [{"join": ["S4"]}, {"crash": ["S1"]}],
        "expect": [{"S1": (2, 0), "S2": (2, 0), "S3": (1, 0), "S4": (0, 1)},
                   {"S2": (2, 0), "S3": (2, 0), "S4": (1, 0)}],
    },
    "leader-crash-before-scaling": {
        "start": {"S1": ["T1"], "S2": ["T2", "T3", "T4", "T5"], "S3": []},
        "steps": [{"join": ["S4"], "crash": ["S1"]}],
        "expect": [{"S2": (4, 0), "S3": (1, 0), "S4": (0, 0)}],
    },
}


def run_kip429_scenario(name: str) -> List[Dict[str, Tuple[List[str], List[str]]]]:
    """Run one of :data:`KIP429_SCENARIOS` through :func:`~kcodec.streams.learner.learner_assign`;
    per rebalance ``{member: (active, learning)}``.  A crashed leader takes its history along:
    the next leader knows of no new members.  A member holding no task after a scale-down
    shuts down."""
    sc = KIP429_SCENARIOS[name]
    start = sc["start"]
    tasks = sc.get("tasks") or sorted({t for ts in start.values() for t in ts}, key=lambda t: int(t[1:]))
    members = {m: LearnerMember(active=list(ts)) for m, ts in start.items()}
    known: Set[str] = set(members)
    leader = min(members) if members else None
    out: List[Dict[str, Tuple[List[str], List[str]]]] = []
    for step in sc["steps"]:
        for m in step.get("crash", []):
            members.pop(m)
            if m == leader:
                known, leader = set(), None
        for m in step.get("join", []):
            members[m] = LearnerMember()
        for m in step.get("leave_soon", []):
            members[m].leaving = True
        for m in step.get("ready", []):
            members[m].ready = set(members[m].learning)
        if leader is None and members:
            leader = min(members)
            known = set(members) - set(step.get("join", [])) if known else set(members)
        new = [m for m in members if m not in known]
        res = learner_assign(members, tasks, new_members=new)
        known = set(members)
        out.append({m: (list(r.active), list(r.learning)) for m, r in res.items()})
        members = {m: LearnerMember(r.active, r.learning, set(), r.standby, r.leaving) for m, r in res.items()}
    return out
