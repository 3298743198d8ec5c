"""What would an assignor do to this group?

A scenario is JSON (or the equivalent dict)::

    {
      "strategy": "cooperative-sticky",              # optional (the CLI can override)
      "topics": {"orders": 6,
                 "payments": {"partitions": 3, "racks": [["a", "b"], ["b"], ["c"]]}},
      "members": [
        {"id": "c1", "topics": ["orders", "payments"], "owned": {"orders": [0, 1, 2]},
         "generation": 4, "rack": "a", "group_instance_id": null},
        {"id": "c2", "topics": ["orders"], "owned": [["orders", 3]], "generation": 4}
      ],
      "changes": {"leave": ["c1"], "join": [{"id": "c3", "topics": ["orders"]}],
                  "topics": {"orders": 12}},                    # optional what-if events
      "prefer_rack_aware": false
    }

or, instead of ``members``, a classic group as ``__consumer_offsets`` stores it:
``"group": <GroupMetadataValue>`` in Kafka's JSON form (what ``kafka-dump-log`` and
``kcodec decode`` print: subscription/assignment as decoded objects or base64 bytes) or
kcodec's Python form (bytes). Members then own their current assignment at the group's
generation. Topic partition counts not given are inferred from the assignments.

A scenario asks for at most :data:`MAX_PARTITIONS` (2,000,000) partitions in all topics
together, after ``changes.topics`` and counts inferred from a group's assignment: the
what-if report holds a few hundred bytes per partition (the 2,000,000 of the cap take about
0.8 GB), and a larger count is refused at once, naming the field, rather than grown into.

A member in ``changes.leave`` is out of the group before the assignor runs; each partition
it owned that another member gets counts as moved (``c1 -> c2``). Under KIP-429 those
partitions need no revocation, so a cooperative plan can still take one round.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from kcodec.errors import ArgumentTypeError, InvalidArgumentError, expect_type

from .assignors import STRATEGIES, AssignmentResult, Member, assign, member_from_subscription
from .protocol import Subscription, TopicPartition, decode_assignment, decode_subscription

__all__ = ["Scenario", "load_scenario", "WhatIf", "what_if", "MAX_PARTITIONS"]

#: the most partitions (all topics together) a scenario may ask for; see the module docs
MAX_PARTITIONS = 2_000_000


@dataclass
class Scenario:
    """Members and topics to assign."""
    members: List[Member]
    partitions: Dict[str, int]
    partition_racks: Optional[Dict[str, List[List[str]]]] = None
    strategy: Optional[str] = None
    prefer_rack_aware: bool = False
    notes: List[str] = field(default_factory=list)
    #: members that left (``changes.leave``) -> the partitions they owned: those partitions
    #: change owner when another member gets them
    departed: Dict[str, List[TopicPartition]] = field(default_factory=dict)


def _owned(spec: Any, where: str) -> List[TopicPartition]:
    """Owned partitions as ``{"topic": [partitions]}``, ``[["topic", p], ...]`` or
    ``[{"topic": t, "partition": p} | {"topic": t, "partitions": [...]}, ...]``."""
    if not spec:
        return []
    if isinstance(spec, Mapping):
        return [TopicPartition(_name(t, f"{where}.key"), _int(p, f"{where}[{t!r}][{i}]"))
                for t, ps in spec.items() for i, p in enumerate(_list(ps, f"{where}[{t!r}]"))]
    out: List[TopicPartition] = []
    for i, x in enumerate(_list(spec, where)):
        at = f"{where}[{i}]"
        if isinstance(x, Mapping):
            t = _name(x.get("topic"), f"{at}.topic")
            if "partitions" in x:
                out.extend(TopicPartition(t, _int(p, f"{at}.partitions[{j}]"))
                           for j, p in enumerate(_list(x["partitions"], f"{at}.partitions")))
            else:
                out.append(TopicPartition(t, _int(x.get("partition"), f"{at}.partition")))
        elif isinstance(x, (list, tuple)) and len(x) == 2:
            out.append(TopicPartition(_name(x[0], f"{at}[0]"), _int(x[1], f"{at}[1]")))
        else:
            raise ArgumentTypeError(at, f"expected [\"topic\", partition] or {{\"topic\": ..., "
                                        f"\"partition\": ...}}, got {x!r}")
    return out


def _list(v: Any, where: str) -> list:
    expect_type(v, (list, tuple), where, "a list")
    return list(v)


def _int(v: Any, where: str, minimum: int = 0, maximum: int = 0x7FFFFFFF, why: str = "") -> int:
    expect_type(v, int, where, "an integer")
    if v < minimum or v > maximum:
        raise InvalidArgumentError(where, f"must be from {minimum} to {maximum}{why}, got {v}")
    return v


_CAP = f" (a scenario asks for at most {MAX_PARTITIONS} partitions in all)"


def _check_total(parts: Mapping[str, int], where: str) -> None:
    """The cap on a scenario's partitions, all topics together (MAX_PARTITIONS)."""
    total = sum(parts.values())
    if total > MAX_PARTITIONS:
        big = max(parts, key=parts.__getitem__)
        raise InvalidArgumentError(where, f"{total} partitions in all topics together "
                                          f"(the largest: {big!r}, {parts[big]}); a scenario "
                                          f"asks for at most {MAX_PARTITIONS}")


def _name(v: Any, where: str) -> str:
    expect_type(v, str, where, "a string")
    return v


def _optional(v: Any, types: Any, where: str, what: str) -> Any:
    return None if v is None else expect_type(v, types, where, what)


def _or_empty(v: Any, empty: Any) -> Any:
    """``v``, or ``empty`` for null (an empty list where an object belongs stays an error)."""
    return empty if v is None else v


def _member(spec: Mapping[str, Any], mid: Optional[str] = None, where: str = "member") -> Member:
    expect_type(spec, Mapping, where, "a member object")
    mid = spec.get("id", spec.get("member_id", mid))
    if mid is None:
        raise InvalidArgumentError(f"{where}.id", "a member needs an id")
    expect_type(mid, (str, int), f"{where}.id", "a member id string")
    topics = spec.get("topics", [])
    if not isinstance(topics, list):
        raise ArgumentTypeError(f"{where}.topics", f"member {mid!r}: \"topics\" must be a list of "
                                f"topic names, got {type(topics).__name__}")
    for i, t in enumerate(topics):
        _name(t, f"{where}.topics[{i}]")
    gen = _optional(spec.get("generation"), int, f"{where}.generation", "an integer generation")
    return Member(str(mid), topics, _owned(spec.get("owned"), f"{where}.owned"), gen,
                  _optional(spec.get("rack"), str, f"{where}.rack", "a rack id string"),
                  _optional(spec.get("group_instance_id"), str, f"{where}.group_instance_id",
                            "a string"))


def _count(topic: str, v: Any, where: str = "") -> int:
    where = where or f"topics[{topic!r}]"
    if isinstance(v, bool) or not isinstance(v, int):
        raise ArgumentTypeError(where, f"topic {topic!r}: the partition count must be an "
                                f"integer, got {v!r}")
    return _int(v, where, maximum=MAX_PARTITIONS, why=_CAP)


def _bytes(v: Any, where: str = "") -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        try:
            return base64.b64decode(v, validate=True)       # Kafka's JSON form of bytes
        except ValueError:
            raise InvalidArgumentError(where, "not base64") from None
    raise ArgumentTypeError(where, f"expected bytes or base64, got {type(v).__name__}")


def _group_member(m: Mapping[str, Any], generation: int, strategy: str,
                  where: str = "group.members") -> Tuple[Member, List[TopicPartition]]:
    expect_type(m, Mapping, where, "a member object")
    sub_v, asg_v = m.get("subscription"), m.get("assignment")
    if isinstance(sub_v, Mapping):     # already decoded (kafka-dump-log / Kafka JSON of the body)
        gen = _optional(sub_v.get("generationId", -1), int, f"{where}.subscription.generationId",
                        "an integer")
        topics = _list(sub_v.get("topics", []), f"{where}.subscription.topics")
        for i, t in enumerate(topics):
            _name(t, f"{where}.subscription.topics[{i}]")
        sub = Subscription(topics,
                           _bytes(sub_v.get("userData"), f"{where}.subscription.userData")
                           if sub_v.get("userData") else None,
                           _owned(sub_v.get("ownedPartitions"), f"{where}.subscription.ownedPartitions"),
                           gen if gen is not None and gen >= 0 else None,
                           _optional(sub_v.get("rackId"), str, f"{where}.subscription.rackId", "a string")
                           or None)
    else:
        sub = decode_subscription(_bytes(sub_v, f"{where}.subscription") or b"")
    if isinstance(asg_v, Mapping):
        assigned = _owned(asg_v.get("assignedPartitions"), f"{where}.assignment.assignedPartitions")
    elif asg_v:
        assigned = decode_assignment(_bytes(asg_v, f"{where}.assignment") or b"").partitions
    else:
        assigned = []
    sub.group_instance_id = _optional(m.get("groupInstanceId"), str, f"{where}.groupInstanceId", "a string")
    if "memberId" not in m:
        raise InvalidArgumentError(f"{where}.memberId", "is missing")
    mem = member_from_subscription(_name(m["memberId"], f"{where}.memberId"), sub, strategy)
    # at the next rebalance a member owns what it was assigned, at the group's generation
    mem.owned_partitions = list(assigned)
    mem.generation = generation
    return mem, assigned


def load_scenario(obj: Mapping[str, Any], strategy: Optional[str] = None) -> Scenario:
    """Build a :class:`Scenario` from its JSON form (see the module docs).  A field of the
    wrong type or value is a :class:`kcodec.errors.InvalidArgumentError` (a ValueError;
    :class:`~kcodec.errors.ArgumentTypeError` also a TypeError) naming its path
    (``members[1].owned['orders'][0]``)."""
    expect_type(obj, Mapping, "scenario", "a scenario object")
    strat = strategy or _optional(obj.get("strategy"), str, "strategy", "an assignor name")
    parts: Dict[str, int] = {}
    racks: Dict[str, List[List[str]]] = {}
    topics = _or_empty(obj.get("topics"), {})
    expect_type(topics, Mapping, "topics", "an object of topic: partition count")
    for t, v in topics.items():
        if isinstance(v, Mapping):
            if "partitions" not in v:
                raise InvalidArgumentError(f"topics[{t!r}]", f"topic {t!r}: \"partitions\" is missing")
            parts[t] = _count(t, v["partitions"], f"topics[{t!r}].partitions")
            if v.get("racks") is not None:
                racks[t] = [[_name(x, f"topics[{t!r}].racks[{i}][{j}]")
                             for j, x in enumerate(_list(r, f"topics[{t!r}].racks[{i}]"))]
                            for i, r in enumerate(_list(v["racks"], f"topics[{t!r}].racks"))]
        else:
            parts[t] = _count(t, v)
    _check_total(parts, "topics")
    notes: List[str] = []
    members: List[Member] = []
    departed: Dict[str, List[TopicPartition]] = {}
    if "group" in obj:
        g = obj["group"]
        g = g.get("data", g) if isinstance(g, Mapping) else g
        expect_type(g, Mapping, "group", "a GroupMetadataValue object")
        if g.get("protocolType") not in (None, "consumer"):
            raise InvalidArgumentError("group.protocolType", f"group protocol type "
                                       f"{g.get('protocolType')!r} is not the consumer protocol")
        strat = strat or g.get("protocol")
        if strat not in STRATEGIES:
            raise InvalidArgumentError("group.protocol", f"group uses assignor {strat!r}; pass "
                                       f"one of {STRATEGIES} as the strategy")
        gen = expect_type(g.get("generation", -1), int, "group.generation", "an integer")
        given = set(parts)
        inferred = False
        for i, m in enumerate(_list(g.get("members") or [], "group.members")):
            mem, assigned = _group_member(m, gen, strat, f"group.members[{i}]")
            members.append(mem)
            for t, p in assigned:
                if t not in given:
                    parts[t] = max(parts.get(t, 0), p + 1)
                    inferred = True
        if inferred:
            _check_total(parts, "group.members")    # counts inferred from the assignments
            notes.append("partition counts of some topics inferred from the current assignment "
                         "(give \"topics\" to be exact)")
    else:
        ms = _or_empty(obj.get("members"), [])
        if isinstance(ms, Mapping):
            members = [_member(v, k, f"members[{k!r}]") for k, v in ms.items()]
        else:
            members = [_member(v, None, f"members[{i}]") for i, v in enumerate(_list(ms, "members"))]
    ch = _or_empty(obj.get("changes"), {})
    expect_type(ch, Mapping, "changes", "an object")
    if ch:
        leave = set(_name(x, f"changes.leave[{i}]") for i, x in enumerate(_list(ch.get("leave", []), "changes.leave")))
        departed = {m.member_id: list(m.owned_partitions) for m in members if m.member_id in leave}
        members = [m for m in members if m.member_id not in leave]
        for i, j in enumerate(_list(ch.get("join", []), "changes.join")):
            members.append(_member(j, None, f"changes.join[{i}]"))
        ct = _or_empty(ch.get("topics"), {})
        expect_type(ct, Mapping, "changes.topics", "an object of topic: partition count")
        for t, n in ct.items():
            parts[t] = _count(t, n, f"changes.topics[{t!r}]")
        _check_total(parts, "changes.topics")
    prefer = expect_type(obj.get("prefer_rack_aware", False), bool, "prefer_rack_aware", "true or false")
    return Scenario(members, parts, racks or None, strat, prefer, notes, departed)


@dataclass
class WhatIf:
    """The outcome of :func:`what_if`."""
    strategy: str
    result: AssignmentResult
    notes: List[str]
    departed: Dict[str, List[TopicPartition]] = field(default_factory=dict)

    def moved(self) -> List[Tuple[TopicPartition, str, str]]:
        """(partition, previous owner, new owner) for every partition that changes owner,
        those of the members that left included (:meth:`AssignmentResult.moved`)."""
        return self.result.moved(self.departed)

    def to_dict(self) -> Dict[str, Any]:
        r = self.result
        target = r.target_assignment()
        now = r.assignment()
        moved = self.moved()
        out: Dict[str, Any] = {
            "strategy": self.strategy,
            "path": "general" if r.stats.get("general_path") else ("equal-subscriptions" if r.stats else "deterministic"),
            "members": len(r.member_ids),
            "partitions": int(r.base[-1]) if len(r.base) else 0,
            "assignment": {m: [f"{t}-{p}" for t, p in v] for m, v in target.items()},
            "partitions_moved": len(moved),
            "moves": [{"partition": f"{tp.topic}-{tp.partition}", "from": a, "to": b} for tp, a, b in moved],
            "balance": r.balance(),
            "counts": r.counts(),
            "unassigned": int(((r.target < 0)).sum()),
            "notes": list(self.notes),
        }
        if self.strategy == "cooperative-sticky":
            pending = r.pending()
            out["plan"] = {
                "round1": {
                    "assignment": {m: [f"{t}-{p}" for t, p in v] for m, v in now.items()},
                    "revoke": {m: [f"{t}-{p}" for t, p in v] for m, v in r.revoked().items() if v},
                },
                "round2": {"assign": {f"{tp.topic}-{tp.partition}": m for tp, m in sorted(pending.items())}},
                "rounds": 2 if pending else 1,
            }
        if r.stats:
            out["stats"] = {k: (int(v) if not isinstance(v, bool) else v) for k, v in r.stats.items()}
        return out


def what_if(scenario: Scenario, strategy: Optional[str] = None) -> WhatIf:
    """Run ``strategy`` (or the scenario's) over the scenario."""
    strat = strategy or scenario.strategy
    if strat is None:
        raise ValueError(f"no strategy: give one (--strategy, or \"strategy\" in the scenario) of {STRATEGIES}")
    if strat not in STRATEGIES:
        raise ValueError(f"strategy {strat!r}: expected one of {STRATEGIES}")
    _check_total(scenario.partitions, "partitions")
    r = assign(strat, scenario.members, scenario.partitions, partition_racks=scenario.partition_racks,
               prefer_rack_aware=scenario.prefer_rack_aware)
    return WhatIf(strat, r, list(scenario.notes), dict(scenario.departed))
