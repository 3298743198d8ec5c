"""The classic consumer embedded protocol (JoinGroup / SyncGroup member bytes).

``ConsumerProtocolSubscription`` and ``ConsumerProtocolAssignment`` v0-v3 behind Kafka's
int16 version prefix, decoded and encoded through the spec engine, with the behaviours of
Kafka's ``ConsumerProtocol``:

* a version prefix above 3 is read with the v3 layout and trailing bytes are ignored
  (future versions may only append fields); bytes after the body are ignored at every
  version, as Kafka's generated readers never check what remains;
* a negative prefix, or fewer than two bytes, raises :class:`~kcodec.errors.DecodeError`;
* a ``GenerationId`` below 0 reads as ``None``, an empty or null ``RackId`` as ``None``;
* the encoder sorts subscription topics and owned partitions and groups assignment
  partitions per topic in first-appearance order, byte for byte as Kafka writes them.

Also the ``StickyAssignor`` user data (v0 and v1 with generation), both in the form
Kafka's Java client writes (no version prefix) and the form kafka-python 3.x writes
(an int16 version prefix before the same body).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

import kcodec
from kcodec._java import java_string_key
from kcodec.errors import DecodeError, EncodeError
from kcodec.framing import INT16_VERSION, Reader, Writer, read_framed, write_framed

__all__ = [
    "TopicPartition", "Subscription", "Assignment", "StickyUserData",
    "decode_subscription", "encode_subscription", "decode_assignment", "encode_assignment",
    "decode_sticky_user_data", "encode_sticky_user_data", "java_string_key",
    "RawMessage", "read_subscription_raw", "read_assignment_raw", "write_raw",
    "subscription_trailing_bytes", "assignment_trailing_bytes",
    "PROTOCOL_TYPE", "LATEST_VERSION",
]

PROTOCOL_TYPE = "consumer"
LATEST_VERSION = 3
_SUB = "ConsumerProtocolSubscription"
_ASG = "ConsumerProtocolAssignment"


class TopicPartition(NamedTuple):
    """A topic partition (sorts by topic, then partition)."""
    topic: str
    partition: int


@dataclass
class Subscription:
    """A member's subscription (``ConsumerProtocolSubscription``)."""
    topics: List[str]
    user_data: Optional[bytes] = None
    owned_partitions: List[TopicPartition] = field(default_factory=list)
    generation_id: Optional[int] = None   # None: unknown (-1 on the wire)
    rack_id: Optional[str] = None         # None: no rack (null or "" on the wire)
    group_instance_id: Optional[str] = None  # not on the wire; from JoinGroup
    version: int = LATEST_VERSION         # the version prefix read or to write


@dataclass
class Assignment:
    """A member's assignment (``ConsumerProtocolAssignment``)."""
    partitions: List[TopicPartition]
    user_data: Optional[bytes] = None
    version: int = LATEST_VERSION


class RawMessage(NamedTuple):
    """Consumer-protocol bytes exactly as read: for byte-exact rewriting of what any client
    wrote (topic order, an empty rack string, trailing bytes of a newer version)."""
    schema: str                # "ConsumerProtocolSubscription" / "ConsumerProtocolAssignment"
    version: int               # the int16 version prefix
    parsed_version: int        # the layout it was read with (prefix clamped to 3)
    value: Dict[str, Any]      # the engine's decoded body
    trailing: bytes            # bytes after the body (ignored by Kafka)


def _read_raw(data: Any, name: str) -> RawMessage:
    # Kafka's ConsumerProtocol: a prefix above the newest known version is read with the
    # newest layout, and whatever follows the body is ignored
    f = read_framed(data, INT16_VERSION, name, newer="latest", trailing="allow")
    # (tuple.__new__: a group metadata record holds many of these; no Python-level __new__)
    return _tuple(RawMessage, (name, f.version, f.parsed_version, f.value, f.trailing))


_tuple = tuple.__new__


def read_subscription_raw(data: bytes) -> RawMessage:
    """Read subscription bytes without interpreting them (see :class:`RawMessage`)."""
    return _read_raw(data, _SUB)


def read_assignment_raw(data: bytes) -> RawMessage:
    """Read assignment bytes without interpreting them (see :class:`RawMessage`)."""
    return _read_raw(data, _ASG)


def write_raw(raw: RawMessage) -> bytes:
    """The bytes :func:`read_subscription_raw` / :func:`read_assignment_raw` read."""
    w = Writer()
    INT16_VERSION.write(w, raw.version)
    return w.raw(kcodec.encode(raw.schema, raw.value, raw.parsed_version)).raw(raw.trailing).getvalue()


def decode_subscription(data: bytes) -> Subscription:
    """Decode version-prefixed subscription bytes as Kafka's ``deserializeSubscription``."""
    raw = read_subscription_raw(data)
    version, v = raw.version, raw.value
    owned = [TopicPartition(tp["topic"], p) for tp in v.get("ownedPartitions") or () for p in tp["partitions"]]
    gen = v.get("generationId", -1)
    rack = v.get("rackId")
    return Subscription(
        topics=list(v["topics"]),
        user_data=v["userData"],
        owned_partitions=owned,
        generation_id=gen if gen is not None and gen >= 0 else None,
        rack_id=rack if rack else None,
        version=version,
    )


def subscription_trailing_bytes(data: bytes) -> int:
    """How many bytes Kafka leaves unread after the subscription body."""
    return len(read_subscription_raw(data).trailing)


def assignment_trailing_bytes(data: bytes) -> int:
    """How many bytes Kafka leaves unread after the assignment body."""
    return len(read_assignment_raw(data).trailing)


def _check_version(version: int, name: str) -> int:
    if not isinstance(version, int) or version < 0 or version > 32767:
        raise EncodeError(f"{name}: version must be 0..32767, got {version!r}")
    return min(version, LATEST_VERSION)  # Kafka writes v3 when asked for anything newer


def encode_subscription(sub: Subscription, version: int = LATEST_VERSION, *, sort: bool = True) -> bytes:
    """Encode as Kafka's ``serializeSubscription``: int16 version + body.

    Topics are sorted, owned partitions sorted by (topic, partition) and grouped per topic
    (``sort=False`` keeps the given order, as some clients write it); fields the version
    lacks (owned partitions < v1, generation < v2, rack < v3) are dropped.
    """
    v = _check_version(version, _SUB)
    value: Dict[str, Any] = {
        "topics": sorted(sub.topics, key=java_string_key) if sort else list(sub.topics),
        "userData": None if sub.user_data is None else bytes(sub.user_data),
    }
    if v >= 1:
        grouped: List[Dict[str, Any]] = []
        owned = sub.owned_partitions
        for tp in (sorted(owned, key=lambda tp: (java_string_key(tp[0]), tp[1])) if sort else owned):
            if grouped and grouped[-1]["topic"] == tp[0]:
                grouped[-1]["partitions"].append(tp[1])
            else:
                grouped.append({"topic": tp[0], "partitions": [tp[1]]})
        value["ownedPartitions"] = grouped
    if v >= 2:
        value["generationId"] = -1 if sub.generation_id is None else sub.generation_id
    if v >= 3:
        value["rackId"] = sub.rack_id
    return write_framed(INT16_VERSION, _SUB, value, v)


def decode_assignment(data: bytes) -> Assignment:
    """Decode version-prefixed assignment bytes as Kafka's ``deserializeAssignment``."""
    raw = read_assignment_raw(data)
    version, v = raw.version, raw.value
    parts = [TopicPartition(tp["topic"], p) for tp in v["assignedPartitions"] for p in tp["partitions"]]
    return Assignment(partitions=parts, user_data=v["userData"], version=version)


def encode_assignment(asg: Assignment, version: int = LATEST_VERSION) -> bytes:
    """Encode as Kafka's ``serializeAssignment`` (partitions grouped per topic in
    first-appearance order, not sorted)."""
    v = _check_version(version, _ASG)
    order: List[str] = []
    by_topic: Dict[str, List[int]] = {}
    for topic, p in asg.partitions:
        if topic not in by_topic:
            by_topic[topic] = []
            order.append(topic)
        by_topic[topic].append(p)
    value = {
        "assignedPartitions": [{"topic": t, "partitions": by_topic[t]} for t in order],
        "userData": None if asg.user_data is None else bytes(asg.user_data),
    }
    return write_framed(INT16_VERSION, _ASG, value, v)


# --------------------------------------------------------------- StickyAssignor user data

@dataclass
class StickyUserData:
    """``StickyAssignor`` user data: the previous assignment and (v1) its generation.

    ``form`` tells how it was written: ``"java"`` (Kafka's Java client, no prefix) or
    ``"kafka-python"`` (kafka-python 3.x, int16 version prefix); ``None`` when unreadable.
    """
    partitions: List[TopicPartition]
    generation: Optional[int] = None
    version: int = 1
    form: Optional[str] = "java"


def _read_sticky_body(r: Reader, version: int) -> Tuple[List[TopicPartition], Optional[int]]:
    """The body after any prefix: int32 topic count, then per topic a string and an int32
    array of partitions; v1 ends with the int32 generation."""
    count = r.int32("topics")
    if count < 0 or count > r.remaining // 6:   # each topic takes at least 6 bytes
        raise r.fail(f"invalid topic count {count}", "topics")
    parts: List[TopicPartition] = []
    for i in range(count):
        topic = r.string16(f"topics[{i}].topic", nullable=False)
        n = r.int32(f"topics[{i}].partitions")
        if n < 0 or n > r.remaining // 4:
            raise r.fail(f"invalid partition count {n}", f"topics[{i}].partitions")
        parts += [TopicPartition(topic, r.int32()) for _ in range(n)]  # type: ignore[arg-type]
    gen = r.int32("generation") if version >= 1 else None
    return parts, gen


def decode_sticky_user_data(data: Optional[bytes]) -> StickyUserData:
    """Read StickyAssignor user data in either the Java or the kafka-python 3.x form.

    Exact parses win (Java v1, kafka-python prefixed, Java v0); then Java's lenient reading
    (v1 then v0, trailing bytes ignored). Unreadable or empty data gives no partitions and
    no generation (Kafka's ``DEFAULT_GENERATION``), as Kafka does.
    """
    if not data:
        return StickyUserData([], None, 0, None)
    buf = bytes(data)
    lenient = None
    for form, version in (("java", 1), ("kafka-python", None), ("java", 0)):
        r = Reader(buf, message="StickyAssignorUserData")
        try:
            ver = version
            if ver is None:
                ver = INT16_VERSION.read(r).version
                if ver > 1:
                    continue
            parts, gen = _read_sticky_body(r, ver)
        except DecodeError:
            continue
        if not r.remaining:
            return StickyUserData(parts, gen, ver, form)
        if lenient is None and form == "java":
            lenient = StickyUserData(parts, gen, ver, form)
    if lenient is not None:
        return lenient
    return StickyUserData([], None, 0, None)


def encode_sticky_user_data(partitions: Iterable[Tuple[str, int]], generation: Optional[int] = None,
                            *, form: str = "java") -> bytes:
    """Write StickyAssignor user data: v1 when a generation is given, else v0.

    ``form="java"`` writes Kafka's Java layout (no prefix; partitions grouped per topic in
    first-appearance order); ``form="kafka-python"`` adds kafka-python's int16 version prefix.
    """
    order: List[str] = []
    by_topic: Dict[str, List[int]] = {}
    for topic, p in partitions:
        if topic not in by_topic:
            by_topic[topic] = []
            order.append(topic)
        by_topic[topic].append(int(p))
    if form not in ("java", "kafka-python"):
        raise ValueError("form must be 'java' or 'kafka-python'")
    version = 0 if generation is None else 1
    w = Writer()
    if form == "kafka-python":
        INT16_VERSION.write(w, version)
    w.int32(len(order), "topics")
    for t in order:
        w.string16(t, "topic")
        ps = by_topic[t]
        w.int32(len(ps), "partitions")
        for p in ps:
            w.int32(p, "partitions")
    if version == 1:
        w.int32(generation, "generation")  # type: ignore[arg-type]
    return w.getvalue()
