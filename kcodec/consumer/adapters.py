"""kcodec's assignors as drop-in partition assignors for kafka-python and aiokafka.

Switch a service with one config line::

    # kafka-python 3.x
    from kcodec.consumer.adapters import CooperativeStickyAssignor
    KafkaConsumer(..., partition_assignment_strategy=[CooperativeStickyAssignor])

    # aiokafka (eager protocol only: aiokafka has no cooperative rebalancing)
    from kcodec.consumer.adapters import AIOKafkaStickyAssignor
    AIOKafkaConsumer(..., partition_assignment_strategy=(AIOKafkaStickyAssignor,))

The assignors carry Kafka's names (``range``, ``roundrobin``, ``sticky``,
``cooperative-sticky``), so they interoperate with members running other clients'
assignors of the same name: the sticky user data is read in both the Java form and the
kafka-python 3.x form, and written in the form the host client's own sticky assignor writes
(kafka-python: int16-prefixed; aiokafka: Java's).

The classes are created only when the client library is importable.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .assignors import Member, assign, member_from_subscription
from .protocol import Subscription, TopicPartition, decode_subscription, encode_sticky_user_data

log = logging.getLogger(__name__)

__all__: List[str] = []


def _grouped(parts: Iterable[Tuple[str, int]]) -> List[Tuple[str, List[int]]]:
    by: Dict[str, List[int]] = defaultdict(list)
    for t, p in parts:
        by[t].append(int(p))
    return [(t, sorted(ps)) for t, ps in sorted(by.items())]


def _cluster_topics(cluster: Any, topics: Iterable[str]) -> Tuple[Dict[str, int], Optional[Dict[str, List[List[str]]]]]:
    """Partition counts (and replica racks when the metadata has them) from a client's
    ClusterMetadata (kafka-python and aiokafka share this interface)."""
    counts: Dict[str, int] = {}
    racks: Dict[str, List[List[str]]] = {}
    any_rack = False
    for t in set(topics):
        parts = cluster.partitions_for_topic(t)
        if not parts:
            continue
        n = max(parts) + 1
        counts[t] = n
        per: List[List[str]] = [[] for _ in range(n)]
        try:
            pmeta = cluster._partitions.get(t, {})   # both clients keep partition metadata here
            for p, md in pmeta.items():
                nodes = getattr(md, "replica_nodes", None)
                if nodes is None:
                    nodes = getattr(md, "replicas", None) or ()
                for node in nodes:
                    b = cluster.broker_metadata(node)
                    rack = getattr(b, "rack", None) if b is not None else None
                    if rack:
                        per[p].append(rack)
                        any_rack = True
        except Exception:  # metadata without replica details: no rack awareness
            pass
        racks[t] = per
    return counts, (racks if any_rack else None)


def _run(strategy: str, members: List[Member], cluster: Any) -> Dict[str, List[Tuple[str, List[int]]]]:
    """member id -> [(topic, [partition, ...])], the layout both clients' assignment
    objects take (built in C, no per-partition tuples)."""
    topics = {t for m in members for t in m.topics}
    counts, racks = _cluster_topics(cluster, topics)
    return assign(strategy, members, counts, partition_racks=racks).assignment_by_topic()


# ------------------------------------------------------------------ kafka-python 3.x

try:
    from kafka.coordinator.assignors.abstract import (AbstractPartitionAssignor as _KPAbstract,
                                                      RebalanceProtocol as _KPProtocol)
    from kafka.protocol.consumer.metadata import (ConsumerProtocolAssignment as _KPAssignment,
                                                  ConsumerProtocolSubscription as _KPSubscription)
except ImportError:  # kafka-python not installed
    _KPAbstract = None


def _kp_subscription(md: Any) -> Subscription:
    """kafka-python's decoded ConsumerProtocolSubscription (or raw bytes) -> ours."""
    if isinstance(md, (bytes, bytearray, memoryview)):
        return decode_subscription(bytes(md))
    ud = getattr(md, "user_data", None)
    if ud is not None and not isinstance(ud, (bytes, bytearray, memoryview)):
        ud = ud.encode()            # kafka-python's own StickyAssignorUserData object
    owned = [TopicPartition(tp.topic, p) for tp in (getattr(md, "owned_partitions", None) or ())
             for p in tp.partitions]
    gen = getattr(md, "generation_id", None)
    rack = getattr(md, "rack_id", None)
    return Subscription(list(md.topics), None if ud is None else bytes(ud), owned,
                        gen if gen is not None and gen >= 0 else None, rack or None)


if _KPAbstract is not None:

    class _KafkaPythonAssignor(_KPAbstract):
        """Common part of the kafka-python adapters."""
        name = "abstract"
        version = 3                   # the consumer protocol version written (Kafka writes 3)
        _protocols: Tuple[Any, ...] = (_KPProtocol.EAGER,)

        def __init__(self, client_rack: Optional[str] = None) -> None:
            self.client_rack = client_rack
            self.member_assignment: Optional[List[TopicPartition]] = None
            self.generation = -1

        def supported_protocols(self) -> List[Any]:
            return list(self._protocols)

        def _members(self, members: Sequence[Any]) -> List[Member]:
            out = []
            for m in members:
                sub = _kp_subscription(m.metadata)
                sub.group_instance_id = getattr(m, "group_instance_id", None)
                out.append(member_from_subscription(m.member_id, sub, self.name))
            return out

        def assign(self, cluster: Any, members: Sequence[Any]) -> Dict[str, Any]:
            result = _run(self.name, self._members(members), cluster)
            return {m.member_id: _KPAssignment(version=self.version, assigned_partitions=result[m.member_id],
                                               user_data=b"")
                    for m in members}

        def _user_data(self) -> bytes:
            return b""

        def metadata(self, topics: Iterable[str]) -> Any:
            owned = []
            if self._protocols[0] == _KPProtocol.COOPERATIVE and self.member_assignment:
                owned = [_KPSubscription.TopicPartition(version=self.version, topic=t, partitions=ps)
                         for t, ps in _grouped(self.member_assignment)]
            return _KPSubscription(version=self.version, topics=sorted(topics), user_data=self._user_data(),
                                   owned_partitions=owned, generation_id=self.generation,
                                   rack_id=self.client_rack)

        def on_assignment(self, assignment: Any, generation: int = -1) -> None:
            self.member_assignment = [TopicPartition(tp.topic, tp.partition) for tp in assignment.partitions()]
            self.generation = generation

    class RangeAssignor(_KafkaPythonAssignor):
        """Kafka's RangeAssignor (KIP-881 rack aware) for kafka-python."""
        name = "range"

    class RoundRobinAssignor(_KafkaPythonAssignor):
        """Kafka's RoundRobinAssignor for kafka-python."""
        name = "roundrobin"

    class StickyAssignor(_KafkaPythonAssignor):
        """Kafka's StickyAssignor (eager) for kafka-python; its user data is written in
        kafka-python's form, read in both kafka-python's and Java's."""
        name = "sticky"

        def _user_data(self) -> bytes:
            if self.member_assignment is None:
                return b""
            return encode_sticky_user_data(self.member_assignment, self.generation, form="kafka-python")

    class CooperativeStickyAssignor(_KafkaPythonAssignor):
        """Kafka's CooperativeStickyAssignor (KIP-429, KIP-792) for kafka-python: partitions
        that change owner are revoked in one rebalance and assigned in the next."""
        name = "cooperative-sticky"
        _protocols = (_KPProtocol.COOPERATIVE, _KPProtocol.EAGER)

    __all__ += ["RangeAssignor", "RoundRobinAssignor", "StickyAssignor", "CooperativeStickyAssignor"]


# ------------------------------------------------------------------ aiokafka

try:
    from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor as _AIOAbstract
    from aiokafka.coordinator.protocol import (ConsumerProtocolMemberAssignment as _AIOAssignment,
                                               ConsumerProtocolMemberMetadata as _AIOMetadata)
except ImportError:  # aiokafka not installed
    _AIOAbstract = None


if _AIOAbstract is not None:

    class _AIOKafkaAssignor(_AIOAbstract):
        """Common part of the aiokafka adapters (aiokafka calls them on the class)."""
        name = "abstract"
        version = 0
        member_assignment: Optional[List[TopicPartition]] = None
        generation: int = -1

        @classmethod
        def assign(cls, cluster: Any, members: Mapping[str, Any]) -> Dict[str, Any]:
            ms = []
            for member_id, md in members.items():
                ud = getattr(md, "user_data", None)
                sub = Subscription(list(md.subscription), None if ud is None else bytes(ud))
                ms.append(member_from_subscription(member_id, sub, cls.name))
            result = _run(cls.name, ms, cluster)
            return {mid: _AIOAssignment(cls.version, result[mid], b"") for mid in members}

        @classmethod
        def _user_data(cls) -> bytes:
            return b""

        @classmethod
        def metadata(cls, topics: Iterable[str]) -> Any:
            return _AIOMetadata(cls.version, sorted(topics), cls._user_data())

        @classmethod
        def on_assignment(cls, assignment: Any) -> None:
            cls.member_assignment = [TopicPartition(t, p) for t, p in assignment.partitions()]
            cls.generation += 1   # aiokafka does not pass the generation; count assignments

    class AIOKafkaRangeAssignor(_AIOKafkaAssignor):
        """Kafka's RangeAssignor for aiokafka."""
        name = "range"

    class AIOKafkaRoundRobinAssignor(_AIOKafkaAssignor):
        """Kafka's RoundRobinAssignor for aiokafka."""
        name = "roundrobin"

    class AIOKafkaStickyAssignor(_AIOKafkaAssignor):
        """Kafka's StickyAssignor (eager) for aiokafka, user data in Java's form (as
        aiokafka's own sticky assignor writes it). State lives on the class, as in
        aiokafka's own assignor: use one subclass per consumer in a process."""
        name = "sticky"

        @classmethod
        def _user_data(cls) -> bytes:
            if cls.member_assignment is None:
                return b""
            return encode_sticky_user_data(cls.member_assignment, cls.generation, form="java")

    __all__ += ["AIOKafkaRangeAssignor", "AIOKafkaRoundRobinAssignor", "AIOKafkaStickyAssignor"]


# Which client each adapter needs, so that a missing client says what to install instead of
# "cannot import name".
_NEEDS = {**{n: ("kafka-python", "kafka-python") for n in
             ("RangeAssignor", "RoundRobinAssignor", "StickyAssignor", "CooperativeStickyAssignor")},
          **{n: ("aiokafka", "aiokafka") for n in
             ("AIOKafkaRangeAssignor", "AIOKafkaRoundRobinAssignor", "AIOKafkaStickyAssignor")}}


def __getattr__(name: str) -> Any:
    if name in _NEEDS:
        client, extra = _NEEDS[name]
        raise ImportError(f"{name} is an adapter for {client}, which is not installed: "
                          f"pip install 'kcodec[{extra}]'", name=name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
