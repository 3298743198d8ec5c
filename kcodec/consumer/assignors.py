"""Classic consumer-group assignors, computed in C.

:func:`assign` takes member subscriptions (topics, owned partitions, generation, rack)
and topic metadata (partition counts, optionally the racks of each partition's replicas)
and returns an :class:`AssignmentResult`::

    >>> from kcodec.consumer.assignors import assign, Member
    >>> r = assign("cooperative-sticky",
    ...            [Member("c1", ["orders"]), Member("c2", ["orders"])], {"orders": 4})
    >>> r.assignment()["c1"]
    [TopicPartition(topic='orders', partition=0), TopicPartition(topic='orders', partition=2)]

Strategies (Kafka's names): ``range`` (KIP-881 rack aware), ``roundrobin`` (both give the
same output as Kafka's Java assignors), ``sticky`` (eager; stickiness from the StickyAssignor
user data) and ``cooperative-sticky`` (KIP-429; owned partitions and generation from the
subscription, KIP-792). Members are ordered as Kafka orders them: range and round-robin by
``group.instance.id`` first, then member id; the sticky assignors by member id (Java
``String`` order).

Also here: the member-side revoked/added/lost computation, the leader-side cooperative
check, and rebalance-protocol selection (KIP-429).
"""
from __future__ import annotations

import enum
import gc
import numbers
from dataclasses import dataclass, field
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple, Union)

import numpy as np

from kcodec._java import java_string_key
from kcodec.errors import ArgumentTypeError, InvalidArgumentError, KcodecError
from kcodec.framing import Reader

from .protocol import Subscription, TopicPartition, decode_sticky_user_data

__all__ = [
    "STRATEGIES", "Member", "AssignmentResult", "assign", "assign_arrays", "member_from_subscription",
    "RebalanceProtocol", "supported_protocols", "select_rebalance_protocol", "select_group_protocol",
    "MemberChanges", "member_changes", "validate_cooperative_assignment", "CooperativeAssignmentError",
]

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")


class RebalanceProtocol(enum.IntEnum):
    """KIP-429 rebalance protocols; the id says how advanced the protocol is."""
    EAGER = 0
    COOPERATIVE = 1


_PROTOCOLS = {
    "range": (RebalanceProtocol.EAGER,),
    "roundrobin": (RebalanceProtocol.EAGER,),
    "sticky": (RebalanceProtocol.EAGER,),
    "cooperative-sticky": (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER),
}


def supported_protocols(strategy: str) -> Tuple[RebalanceProtocol, ...]:
    """The rebalance protocols Kafka's assignor of that name supports."""
    try:
        return _PROTOCOLS[strategy]
    except KeyError:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}") from None


def select_rebalance_protocol(assignors: Sequence[Union[str, Iterable[RebalanceProtocol]]]) -> RebalanceProtocol:
    """A consumer's rebalance protocol from its assignor list (``ConsumerCoordinator``):
    only protocols every assignor supports count; the one with the highest id wins.

    Items are strategy names or iterables of :class:`RebalanceProtocol`.
    Raises ``ValueError`` when the assignors share no protocol (or the list is empty).
    """
    common: Optional[Set[RebalanceProtocol]] = None
    for a in assignors:
        protos = set(supported_protocols(a) if isinstance(a, str) else (RebalanceProtocol(p) for p in a))
        common = protos if common is None else common & protos
    if not common:
        raise ValueError(f"specified assignors {list(assignors)} do not have a commonly supported rebalance protocol")
    return max(common)


def select_group_protocol(member_protocols: Mapping[str, Sequence[str]]) -> str:
    """The assignor a classic group coordinator picks: among protocols every member
    supports, each member votes for its most preferred one; the most votes win (ties go to
    the earliest vote)."""
    lists = list(member_protocols.values())
    if not lists:
        raise ValueError("no members")
    candidates = set(lists[0])
    for l in lists[1:]:
        candidates &= set(l)
    if not candidates:
        raise ValueError("members share no protocol (INCONSISTENT_GROUP_PROTOCOL)")
    votes: Dict[str, int] = {}
    for l in lists:
        choice = next(p for p in l if p in candidates)
        votes[choice] = votes.get(choice, 0) + 1
    return max(votes, key=lambda p: votes[p])   # max keeps the first of equal counts


@dataclass
class Member:
    """One member as the assignors see it."""
    member_id: str
    topics: Sequence[str]
    owned_partitions: Sequence[Tuple[str, int]] = ()
    generation: Optional[int] = None
    rack: Optional[str] = None
    group_instance_id: Optional[str] = None


def member_from_subscription(member_id: str, sub: Subscription, strategy: str) -> Member:
    """What Kafka's assignor of ``strategy`` takes from a decoded subscription.

    ``sticky`` reads owned partitions and generation from its user data (Java or
    kafka-python form); ``cooperative-sticky`` from the v1/v2 fields, falling back to the
    int32 generation in its user data when the subscription has none (as Kafka does).
    """
    owned: Sequence[Tuple[str, int]] = sub.owned_partitions
    gen = sub.generation_id
    if strategy == "sticky":
        ud = decode_sticky_user_data(sub.user_data)
        owned, gen = ud.partitions, ud.generation
    elif strategy == "cooperative-sticky" and gen is None and sub.user_data is not None:
        # CooperativeStickyAssignor's user data: an int32 generation (unreadable: -1)
        r = Reader(sub.user_data)
        gen = r.int32("generation") if r.remaining >= 4 else -1
    return Member(member_id, list(sub.topics), list(owned), gen, sub.rack_id, sub.group_instance_id)


def _member_order(members: Sequence[Member], strategy: str) -> List[int]:
    if strategy in ("range", "roundrobin"):
        # Kafka's MemberInfo order: static members (by instance id) first
        def key(i: int) -> Tuple[int, bytes]:
            m = members[i]
            if m.group_instance_id is not None:
                return (0, java_string_key(m.group_instance_id))
            return (1, java_string_key(m.member_id))
    else:
        def key(i: int) -> Tuple[int, bytes]:
            return (0, java_string_key(members[i].member_id))
    return sorted(range(len(members)), key=key)


def _as_members(members: Union[Mapping[str, Any], Iterable[Member]], strategy: str) -> List[Member]:
    if isinstance(members, Mapping):
        out = []
        for mid, v in members.items():
            if isinstance(v, Subscription):
                out.append(member_from_subscription(mid, v, strategy))
            elif isinstance(v, Member):
                _check_member(v)
                out.append(v)
            else:
                raise ArgumentTypeError(f"members[{mid!r}]", f"expected Subscription or Member, got {type(v).__name__}")
        return out
    if isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
        raise ArgumentTypeError("members", "expected {member_id: Subscription} or a list of Member, "
                                f"got {type(members).__name__}")
    out = list(members)
    for i, m in enumerate(out):
        if not isinstance(m, Member):
            raise ArgumentTypeError(f"members[{i}]", f"expected Member, got {type(m).__name__}")
        _check_member(m)
    return out


def _check_member(m: Member) -> None:
    """What the interning cannot tell: a topic string where a list belongs (it would be read
    as one-letter topics), and generations or racks of the wrong type."""
    if not isinstance(m.member_id, str):
        raise ArgumentTypeError("member_id", f"member id must be str, got {type(m.member_id).__name__}")
    if isinstance(m.topics, (str, bytes)):
        raise ArgumentTypeError(f"members[{m.member_id!r}].topics", f"member {m.member_id!r}: topics must be a list of topic names, not one {type(m.topics).__name__}")
    if m.generation is not None and (not isinstance(m.generation, numbers.Integral)
                                     or isinstance(m.generation, bool)):
        raise ArgumentTypeError(f"members[{m.member_id!r}].generation", f"member {m.member_id!r}: generation must be an int or None, got {type(m.generation).__name__}")
    if m.rack is not None and not isinstance(m.rack, str):
        raise ArgumentTypeError(f"members[{m.member_id!r}].rack", f"member {m.member_id!r}: rack must be str or None, got {type(m.rack).__name__}")


class AssignmentResult:
    """The outcome of one assignment round.

    ``owner[g]`` / ``target[g]`` are member indexes (into :attr:`member_ids`) per global
    partition ``g`` (topic :attr:`topics` ``[t]``, partition ``g - base[t]``), -1 for none.
    ``owner`` is what is handed out this round; ``target`` the assignment being converged to
    (they differ only for cooperative-sticky, by the partitions held back until revoked).
    Nothing per partition is built until a view asks for it; the views build their lists
    in C, in one pass over the owner array.
    """

    def __init__(self, strategy: str, member_ids: List[str], topics: List[str], base: np.ndarray,
                 owner: np.ndarray, target: np.ndarray, owned: List[Sequence[Tuple[str, int]]],
                 stats: Dict[str, Any], owned_arrays: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = None) -> None:
        self.strategy = strategy
        self.member_ids = member_ids
        self.topics = topics
        self.base = base
        self.owner = owner
        self.target = target
        self.owned = owned
        self.stats = stats
        self._owned_arrays = owned_arrays

    # ---- views
    def _lists(self, arr: np.ndarray, by_topic: bool = False) -> Dict[str, Any]:
        from kcodec.consumer import _assign
        lists = _assign.member_partitions(arr, self.base, self.topics, len(self.member_ids), TopicPartition, by_topic)
        return dict(zip(self.member_ids, lists))

    def assignment(self) -> Dict[str, List[TopicPartition]]:
        """Member id -> partitions handed out this round, sorted by (topic, partition)."""
        return self._lists(self.owner)

    def target_assignment(self) -> Dict[str, List[TopicPartition]]:
        """Member id -> partitions of the assignment being converged to."""
        return self._lists(self.target)

    def assignment_by_topic(self, target: bool = False) -> Dict[str, List[Tuple[str, List[int]]]]:
        """Member id -> ``[(topic, [partition, ...]), ...]``, the layout of the consumer
        protocol's Assignment (and of kafka-python's and aiokafka's assignment objects)."""
        return self._lists(self.target if target else self.owner, by_topic=True)

    def encoded(self, version: int = 3, user_data: Optional[bytes] = None,
                target: bool = False) -> Dict[str, bytes]:
        """Member id -> its ``ConsumerProtocolAssignment`` bytes (int16 version prefix
        included), ready for SyncGroup: what a group leader sends. Encoded by the spec
        engine straight from the owner array (no Python object per partition); partitions
        grouped per topic, topics in Java String order."""
        import kcodec
        from kcodec.consumer import _assign
        from .protocol import Assignment, encode_assignment
        if not 0 <= version:
            raise ValueError("version must be >= 0")
        arr = self.target if target else self.owner
        prog = kcodec.program("ConsumerProtocolAssignment", version, newer="latest")
        try:
            blobs = _assign.encode_member_assignments(arr, self.base, self.topics, len(self.member_ids),
                                                      prog.code, version, user_data)
        except NotImplementedError:   # a future schema with another layout: the object path
            lists = self._lists(arr)
            return {m: encode_assignment(Assignment(lists[m], user_data), version) for m in self.member_ids}
        return dict(zip(self.member_ids, blobs))

    def counts(self, target: bool = True) -> Dict[str, int]:
        arr = self.target if target else self.owner
        c = np.bincount(arr[arr >= 0], minlength=len(self.member_ids)) if arr.size else np.zeros(len(self.member_ids), int)
        return {m: int(c[i]) for i, m in enumerate(self.member_ids)}

    def balance(self) -> int:
        """max - min of the members' target partition counts (0 with no members)."""
        c = list(self.counts().values())
        return max(c) - min(c) if c else 0

    def _tp(self, g: int) -> TopicPartition:
        t = int(np.searchsorted(self.base, g, side="right")) - 1
        return TopicPartition(self.topics[t], int(g - self.base[t]))

    def pending(self) -> Dict[TopicPartition, str]:
        """Cooperative: partitions held back this round -> the member they go to next."""
        held = np.nonzero((self.owner < 0) & (self.target >= 0))[0]
        return {self._tp(int(g)): self.member_ids[int(self.target[g])] for g in held}

    def _claims(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every owned-partition claim as (member index, global partition or -1 when the
        topic or partition does not exist, position in the member's owned list)."""
        if self._owned_arrays is None:
            from kcodec.consumer import _assign
            self._owned_arrays = _assign.intern_pairs([list(o) for o in self.owned],
                                                      {t: i for i, t in enumerate(self.topics)}, True)
        off, ot, op = self._owned_arrays
        counts = np.diff(off)
        mem = np.repeat(np.arange(len(self.member_ids), dtype=np.int64), counts)
        pos = np.arange(len(ot), dtype=np.int64) - np.repeat(off[:-1], counts)
        ti = np.maximum(ot, 0)
        valid = (ot >= 0) & (op >= 0) & (op < (self.base[ti + 1] - self.base[ti]))
        g = np.where(valid, self.base[ti] + op, -1)
        return mem, g, pos

    def _claim_tp(self, m: int, g: int, pos: int) -> TopicPartition:
        if g >= 0:
            return self._tp(g)
        t, p = self.owned[m][pos]
        return TopicPartition(t, p)

    def revoked(self) -> Dict[str, List[TopicPartition]]:
        """Member id -> owned partitions it does not keep this round (it must revoke them)."""
        mem, g, pos = self._claims()
        keep = np.zeros(len(g), dtype=bool)
        ok = g >= 0
        keep[ok] = self.owner[g[ok]] == mem[ok]
        out: Dict[str, Set[TopicPartition]] = {m: set() for m in self.member_ids}
        for k in np.nonzero(~keep)[0].tolist():
            out[self.member_ids[mem[k]]].add(self._claim_tp(int(mem[k]), int(g[k]), int(pos[k])))
        return {m: sorted(v) for m, v in out.items()}

    def added(self) -> Dict[str, List[TopicPartition]]:
        """Member id -> partitions it gets this round that it did not own."""
        mem, g, _ = self._claims()
        ok = g >= 0
        had = np.zeros(len(self.owner), dtype=bool)
        new = self.owner.copy()
        # a partition the member owned and keeps is not added: mark (g, member) pairs kept
        keep = ok.copy()
        keep[ok] = self.owner[g[ok]] == mem[ok]
        had[g[keep]] = True
        new[had] = -1
        return self._lists(new)

    def moved(self, departed: Optional[Mapping[str, Iterable[Tuple[str, int]]]] = None
              ) -> List[Tuple[TopicPartition, str, str]]:
        """(partition, previous owner, new target owner) for every partition that changes
        owner: each owned partition of a member whose target owner is another member, and,
        with ``departed`` (member id -> the partitions it owned, for members that left the
        group before this round and so are not among :attr:`member_ids`), each of those
        partitions that now has a target owner. A departed member's partition that no
        member subscribes to is not moved (it is left unassigned)."""
        mem, g, _ = self._claims()
        ok = g >= 0
        tg = np.full(len(g), -1, dtype=np.int64)
        tg[ok] = self.target[g[ok]]
        sel = np.nonzero(ok & (tg >= 0) & (tg != mem))[0].tolist()
        out = {(self._tp(int(g[k])), self.member_ids[mem[k]], self.member_ids[tg[k]]) for k in sel}
        if departed:
            tid = {t: i for i, t in enumerate(self.topics)}
            here = set(self.member_ids)
            for m, parts in departed.items():
                if m in here:
                    continue        # still a member: its claims are counted above
                for t, p in parts:
                    i = tid.get(t)
                    if i is None or not 0 <= p < self.base[i + 1] - self.base[i]:
                        continue    # the partition no longer exists
                    to = int(self.target[self.base[i] + p])
                    if to >= 0:
                        out.add((TopicPartition(t, int(p)), m, self.member_ids[to]))
        return sorted(out)


#: the most partitions one assignment takes, all subscribed topics together: the engine
#: numbers them with int32 across topics (and keeps one slot past the last)
MAX_TOTAL_PARTITIONS = 2**31 - 2


def assign(strategy: str, members: Union[Mapping[str, Any], Iterable[Member]],
           partitions_per_topic: Mapping[str, int], *,
           partition_racks: Optional[Mapping[str, Sequence[Iterable[Optional[str]]]]] = None,
           prefer_rack_aware: bool = False, java_order: bool = True) -> AssignmentResult:
    """Run Kafka's ``strategy`` assignor.

    ``members``: :class:`Member` objects, or ``{member_id: Subscription}`` (decoded
    subscriptions; owned partitions and generation taken as the strategy's Kafka assignor
    takes them). ``partitions_per_topic``: partition counts of the topics that exist.
    ``partition_racks``: optional ``{topic: [racks of partition 0's replicas, ...]}`` for
    rack-aware assignment (KIP-881). ``prefer_rack_aware`` is Kafka's test switch that makes
    rack matching apply even when every partition has replicas on every rack.
    ``java_order``: with equal subscriptions the sticky assignors visit members' owned
    partitions in the iteration order of Java's ``HashMap`` (it decides which members keep
    one partition over the quota), so the result matches Kafka's Java assignor; ``False``
    visits them in member id order.
    """
    if strategy not in STRATEGIES:
        raise InvalidArgumentError("strategy", f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    if not isinstance(partitions_per_topic, Mapping):
        raise ArgumentTypeError("partitions_per_topic", "expected a mapping of topic: partition count, "
                                f"got {type(partitions_per_topic).__name__}")
    if partition_racks is not None and not isinstance(partition_racks, Mapping):
        raise ArgumentTypeError("partition_racks", "expected a mapping of topic: [racks per partition], "
                                f"got {type(partition_racks).__name__}")
    # interning creates no reference cycles; a cyclic-GC pass over a million owned-partition
    # tuples in the middle would only cost time
    was = gc.isenabled()
    gc.disable()
    try:
        return _assign(strategy, members, partitions_per_topic, partition_racks, prefer_rack_aware, java_order)
    finally:
        if was:
            gc.enable()


def _assign(strategy: str, members: Union[Mapping[str, Any], Iterable[Member]],
            partitions_per_topic: Mapping[str, int],
            partition_racks: Optional[Mapping[str, Sequence[Iterable[Optional[str]]]]],
            prefer_rack_aware: bool, java_order: bool) -> AssignmentResult:
    from kcodec.consumer import _assign
    ms = _as_members(members, strategy)
    ids = [m.member_id for m in ms]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate member ids")
    order = _member_order(ms, strategy)
    ms = [ms[i] for i in order]

    # topics: every subscribed topic (unknown ones get 0 partitions), interned in first-seen
    # order and then renumbered into Java String order, which the C assignors expect
    seen: Dict[str, int] = {}
    sub_off, sub_topic = _assign.intern_names([m.topics if isinstance(m.topics, list) else list(m.topics)
                                               for m in ms], seen)
    first_seen = list(seen)
    java_rank = sorted(range(len(first_seen)), key=lambda i: java_string_key(first_seen[i]))
    topics = [first_seen[i] for i in java_rank]
    renumber = np.empty(len(topics), dtype=np.int32)
    renumber[java_rank] = np.arange(len(topics), dtype=np.int32)
    sub_topic = renumber[sub_topic]
    tid = {t: i for i, t in enumerate(topics)}
    counts = np.zeros(len(topics), dtype=np.int32)
    for t, i in tid.items():
        n = partitions_per_topic.get(t)
        if n is not None:
            if not isinstance(n, numbers.Integral) or isinstance(n, bool):
                raise ArgumentTypeError(f"partitions_per_topic[{t!r}]", f"topic {t!r}: partition count must be an int, got {type(n).__name__}")
            if not 0 <= n <= MAX_TOTAL_PARTITIONS:
                raise InvalidArgumentError(f"partitions_per_topic[{t!r}]", f"topic {t!r}: partition count {n} "
                                           f"outside 0..{MAX_TOTAL_PARTITIONS}")
            counts[i] = n
    base = np.zeros(len(topics) + 1, dtype=np.int64)
    np.cumsum(counts, out=base[1:])
    if base[-1] > MAX_TOTAL_PARTITIONS:
        raise InvalidArgumentError("partitions_per_topic", f"{int(base[-1])} partitions in the "
                                   f"subscribed topics together; at most {MAX_TOTAL_PARTITIONS} "
                                   "(partitions are numbered with int32 across topics)")

    gens = np.full(len(ms), -1, dtype=np.int32)
    racks: Dict[str, int] = {}
    mrack = np.full(len(ms), -1, dtype=np.int32)
    for i, m in enumerate(ms):
        if m.generation is not None:
            gens[i] = max(-1, min(int(m.generation), 2**31 - 1))
        if m.rack:
            mrack[i] = racks.setdefault(m.rack, len(racks))
    owned = [m.owned_partitions if isinstance(m.owned_partitions, list) else list(m.owned_partitions) for m in ms]
    own_off, own_t, own_p = _assign.intern_pairs(owned, tid, True, [m.member_id for m in ms])

    prack_off = prack = None
    if partition_racks is not None and racks:
        per_topic = [partition_racks.get(t) for t in topics]
        for t, per in zip(topics, per_topic):
            if per is not None and (isinstance(per, (str, bytes)) or not isinstance(per, Sequence)):
                raise ArgumentTypeError(f"partition_racks[{t!r}]", "must be a list of rack lists (one per partition), "
                                        f"got {type(per).__name__}")
            if per is not None and len(per) != counts[tid[t]]:
                raise InvalidArgumentError(f"partition_racks[{t!r}]", f"has {len(per)} rack lists for "
                                           f"{counts[tid[t]]} partitions (one per partition)")
        prack_off, prack = _assign.intern_racks(per_topic, counts, racks, topics)

    visit = None
    if java_order and strategy in ("sticky", "cooperative-sticky") and len(ms) > 1:
        # the compiled twin of kcodec._java.java_hashmap_order (tests/test_java.py: equal)
        visit = _assign.java_hashmap_order([m.member_id for m in ms])
    owner, target, stats = assign_arrays(
        strategy, len(ms), counts, sub_off, sub_topic, own_off, own_t, own_p,
        gens, mrack if racks else None, len(racks), prack_off, prack, prefer_rack_aware, visit)
    return AssignmentResult(strategy, [m.member_id for m in ms], topics, base, owner, target,
                            owned, stats, (own_off, own_t, own_p))


def assign_arrays(strategy: str, n_members: int, part_count: Any, sub_off: Any, sub_topic: Any,
                  own_off: Any = None, own_topic: Any = None, own_part: Any = None,
                  generation: Any = None, member_rack: Any = None, n_racks: int = 0,
                  prack_off: Any = None, prack: Any = None,
                  prefer_rack_aware: bool = False,
                  visit_order: Any = None) -> Tuple[np.ndarray, np.ndarray, Dict[str, Any]]:
    """The array-level entry point (ids already interned; see ``csrc/kc_assign.h``)."""
    from kcodec.consumer import _assign
    return _assign.assign(strategy, n_members, part_count, sub_off, sub_topic, own_off, own_topic,
                          own_part, generation, member_rack, n_racks, prack_off, prack, prefer_rack_aware,
                          visit_order)


# ------------------------------------------------------------------ KIP-429 bookkeeping

class CooperativeAssignmentError(KcodecError):
    """An assignment hands a partition to a member in the same round another revokes it."""


@dataclass
class MemberChanges:
    """What a member does with a new assignment (``ConsumerCoordinator.onJoinComplete``)."""
    revoked: List[TopicPartition] = field(default_factory=list)   # onPartitionsRevoked
    added: List[TopicPartition] = field(default_factory=list)     # onPartitionsAssigned
    lost: List[TopicPartition] = field(default_factory=list)      # onPartitionsLost
    rejoin: bool = False    # cooperative: it revoked something, so it must rejoin


def member_changes(owned: Iterable[Tuple[str, int]], assigned: Iterable[Tuple[str, int]],
                   protocol: RebalanceProtocol = RebalanceProtocol.COOPERATIVE, *,
                   generation_lost: bool = False) -> MemberChanges:
    """Revoked / added / lost partitions for one member.

    Cooperative: revoked = owned - assigned (then rejoin if any), added = assigned - owned.
    Eager: everything owned was revoked before joining, everything assigned is added.
    A member that lost its generation (fenced, UNKNOWN_MEMBER_ID) loses all it owned.
    """
    own = sorted({TopicPartition(t, p) for t, p in owned})
    asg = sorted({TopicPartition(t, p) for t, p in assigned})
    if generation_lost:
        return MemberChanges(lost=own, added=asg)
    if protocol == RebalanceProtocol.EAGER:
        return MemberChanges(revoked=own, added=asg)
    so, sa = set(own), set(asg)
    revoked = [tp for tp in own if tp not in sa]
    return MemberChanges(revoked=revoked, added=[tp for tp in asg if tp not in so], rejoin=bool(revoked))


def validate_cooperative_assignment(owned: Mapping[str, Iterable[Tuple[str, int]]],
                                    assigned: Mapping[str, Iterable[Tuple[str, int]]]) -> None:
    """The leader's check (``validateCooperativeAssignment``): no partition may be added to
    one member while revoked from another in the same round. Raises
    :class:`CooperativeAssignmentError` naming the offending partitions."""
    added: Set[TopicPartition] = set()
    revoked: Set[TopicPartition] = set()
    for m in set(owned) | set(assigned):
        o = {TopicPartition(t, p) for t, p in owned.get(m, ())}
        a = {TopicPartition(t, p) for t, p in assigned.get(m, ())}
        added |= a - o
        revoked |= o - a
    bad = added & revoked
    if bad:
        raise CooperativeAssignmentError(
            "assignor supporting the COOPERATIVE protocol violates its requirements: "
            f"{sorted(bad)[:10]} added to one member while revoked from another")
