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
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .assignors import STRATEGIES, AssignmentResult, Member, assign, member_from_subscription
from .protocol import Subscription, TopicPartition, decode_assignment, decode_subscription

__all__ = ["Scenario", "load_scenario", "WhatIf", "what_if"]


@dataclass
class Scenario:
    """Members and topics to assign."""
    members: List[Member]
    partitions: Dict[str, int]
    partition_racks: Optional[Dict[str, List[List[str]]]] = None
    strategy: Optional[str] = None
    prefer_rack_aware: bool = False
    notes: List[str] = field(default_factory=list)


def _owned(spec: Any) -> List[TopicPartition]:
    if not spec:
        return []
    if isinstance(spec, Mapping):
        return [TopicPartition(t, int(p)) for t, ps in spec.items() for p in ps]
    out: List[TopicPartition] = []
    for x in spec:
        if isinstance(x, Mapping):
            if "partitions" in x:
                out.extend(TopicPartition(x["topic"], int(p)) for p in x["partitions"])
            else:
                out.append(TopicPartition(x["topic"], int(x["partition"])))
        else:
            t, p = x
            out.append(TopicPartition(t, int(p)))
    return out


def _member(spec: Mapping[str, Any], mid: Optional[str] = None) -> Member:
    if not isinstance(spec, Mapping):
        raise TypeError(f"a member is a JSON object, got {type(spec).__name__}")
    mid = spec.get("id", spec.get("member_id", mid))
    if mid is None:
        raise ValueError("a member needs an id")
    topics = spec.get("topics", [])
    if not isinstance(topics, list):
        raise TypeError(f"member {mid!r}: \"topics\" must be a list of topic names, got {type(topics).__name__}")
    return Member(str(mid), topics, _owned(spec.get("owned")),
                  spec.get("generation"), spec.get("rack"), spec.get("group_instance_id"))


def _count(topic: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"topic {topic!r}: the partition count must be an integer, got {v!r}")
    return v


def _bytes(v: Any) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return base64.b64decode(v)       # Kafka's JSON form of bytes
    raise TypeError(f"expected bytes or base64, got {type(v).__name__}")


def _group_member(m: Mapping[str, Any], generation: int, strategy: str) -> Tuple[Member, List[TopicPartition]]:
    sub_v, asg_v = m.get("subscription"), m.get("assignment")
    if isinstance(sub_v, Mapping):     # already decoded (kafka-dump-log / Kafka JSON of the body)
        gen = sub_v.get("generationId", -1)
        sub = Subscription(list(sub_v.get("topics", [])),
                           _bytes(sub_v.get("userData")) if sub_v.get("userData") else None,
                           _owned(sub_v.get("ownedPartitions")), gen if gen is not None and gen >= 0 else None,
                           sub_v.get("rackId") or None)
    else:
        sub = decode_subscription(_bytes(sub_v) or b"")
    if isinstance(asg_v, Mapping):
        assigned = _owned(asg_v.get("assignedPartitions"))
    elif asg_v:
        assigned = decode_assignment(_bytes(asg_v) or b"").partitions
    else:
        assigned = []
    sub.group_instance_id = m.get("groupInstanceId")
    mem = member_from_subscription(m["memberId"], sub, strategy)
    # at the next rebalance a member owns what it was assigned, at the group's generation
    mem.owned_partitions = list(assigned)
    mem.generation = generation
    return mem, assigned


def load_scenario(obj: Mapping[str, Any], strategy: Optional[str] = None) -> Scenario:
    """Build a :class:`Scenario` from its JSON form (see the module docs)."""
    strat = strategy or obj.get("strategy")
    parts: Dict[str, int] = {}
    racks: Dict[str, List[List[str]]] = {}
    for t, v in (obj.get("topics") or {}).items():
        if isinstance(v, Mapping):
            if "partitions" not in v:
                raise ValueError(f"topic {t!r}: \"partitions\" is missing")
            parts[t] = _count(t, v["partitions"])
            if v.get("racks") is not None:
                racks[t] = [list(r) for r in v["racks"]]
        else:
            parts[t] = _count(t, v)
    notes: List[str] = []
    members: List[Member] = []
    if "group" in obj:
        g = obj["group"]
        g = g.get("data", g) if isinstance(g, Mapping) else g
        if g.get("protocolType") not in (None, "consumer"):
            raise ValueError(f"group protocol type {g.get('protocolType')!r} is not the consumer protocol")
        strat = strat or g.get("protocol")
        if strat not in STRATEGIES:
            raise ValueError(f"group uses assignor {strat!r}; pass one of {STRATEGIES} as the strategy")
        gen = int(g.get("generation", -1))
        given = set(parts)
        inferred = False
        for m in g.get("members") or []:
            mem, assigned = _group_member(m, gen, strat)
            members.append(mem)
            for t, p in assigned:
                if t not in given:
                    parts[t] = max(parts.get(t, 0), p + 1)
                    inferred = True
        if inferred:
            notes.append("partition counts of some topics inferred from the current assignment "
                         "(give \"topics\" to be exact)")
    else:
        ms = obj.get("members") or []
        if isinstance(ms, Mapping):
            members = [_member(v, k) for k, v in ms.items()]
        else:
            members = [_member(v) for v in ms]
    ch = obj.get("changes") or {}
    if ch:
        leave = set(ch.get("leave", []))
        members = [m for m in members if m.member_id not in leave]
        for j in ch.get("join", []):
            members.append(_member(j))
        for t, n in (ch.get("topics") or {}).items():
            parts[t] = _count(t, n)
    return Scenario(members, parts, racks or None, strat, bool(obj.get("prefer_rack_aware", False)), notes)


@dataclass
class WhatIf:
    """The outcome of :func:`what_if`."""
    strategy: str
    result: AssignmentResult
    notes: List[str]

    def to_dict(self) -> Dict[str, Any]:
        r = self.result
        target = r.target_assignment()
        now = r.assignment()
        moved = r.moved()
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
    r = assign(strat, scenario.members, scenario.partitions, partition_racks=scenario.partition_racks,
               prefer_rack_aware=scenario.prefer_rack_aware)
    return WhatIf(strat, r, list(scenario.notes))
