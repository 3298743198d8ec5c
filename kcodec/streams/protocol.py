"""Kafka Streams' rebalance user data: ``SubscriptionInfo`` and ``AssignmentInfo``, v1-v11.

Streams runs on the classic consumer protocol (assignor name ``"stream"``): its
``SubscriptionInfo`` is the ``userData`` of the member's ConsumerProtocolSubscription, its
``AssignmentInfo`` the ``userData`` of the ConsumerProtocolAssignment.

* ``SubscriptionInfo`` is the generated, non-flexible ``SubscriptionInfoData`` (spec in
  ``kcodec/schemas/streams``), decoded by the engine.  Its first int32 is both the frame's
  version and the body's ``version`` field.  A version above 11 is a member running newer
  Streams: Kafka reads only the version and the latest supported version of it.
* ``AssignmentInfo`` is written by hand in Kafka (``DataOutputStream``); its layouts are the
  table :data:`ASSIGNMENT_LAYOUT` read and written by one interpreter.

Encoding new values writes what Kafka writes for the same constructor inputs: the sets and
maps Kafka builds inside its encoders (the ``HashSet<TaskId>`` of v1-v6 subscriptions, the
``HashMap`` grouping v7-v9 offset sums by subtopology, the ``HashMap`` topic dictionary of v5+
assignments) come out in Java's iteration order (:mod:`kcodec._java`); the maps the caller
hands over keep the caller's order.  Decoding keeps wire order and marks it
(``SubscriptionInfo.wire_order``, ``AssignmentInfo.topic_dictionary``), so encoding a decoded
value reproduces its bytes; :func:`subscription_to_json`/:func:`assignment_to_json` give
Kafka's decoded view with sets and maps sorted.
"""
from __future__ import annotations

import struct
import uuid as _uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np

import kcodec
from kcodec import _ext
from kcodec._java import (distinct_first, hash_order, java_string_key, string_hashes, task_set_order,
                          topic_partition_columns, topic_partition_hashes)
from kcodec.consumer import TopicPartition
from kcodec.errors import EncodeError
from kcodec.framing import Reader, VersionPrefix, Writer

__all__ = [
    "LATEST_SUPPORTED_VERSION", "EARLIEST_PROBEABLE_VERSION", "MIN_NAMED_TOPOLOGY_VERSION",
    "MIN_VERSION_OFFSET_SUM_SUBSCRIPTION", "UNKNOWN", "LATEST_OFFSET", "UNKNOWN_OFFSET_SUM",
    "ASSIGNOR_NAME", "AssignorError", "TaskId", "HostInfo", "TopicPartition",
    "SubscriptionInfo", "AssignmentInfo", "ASSIGNMENT_LAYOUT", "STREAMS_VERSION",
    "decode_subscription", "encode_subscription", "decode_assignment", "encode_assignment",
    "subscription_to_json", "assignment_to_json", "task_sort_key",
]

LATEST_SUPPORTED_VERSION = 11          # StreamsAssignmentProtocolVersions (unchanged since 3.0)
EARLIEST_PROBEABLE_VERSION = 3         # the first version carrying a latest-supported version
MIN_NAMED_TOPOLOGY_VERSION = 10
MIN_VERSION_OFFSET_SUM_SUBSCRIPTION = 7
UNKNOWN = -1
LATEST_OFFSET = -2                     # Task.LATEST_OFFSET: an active task running on the member
UNKNOWN_OFFSET_SUM = -3                # a task the member has state for, offset unknown (v1-v6)
LONG_MAX = (1 << 63) - 1               # nextRebalanceMs when no follow-up is scheduled
ASSIGNOR_NAME = "stream"

# The int32 version that starts both messages; SubscriptionInfo v3+ follows it with the
# sender's latest supported version (AssignmentInfo's second int is the *commonly* supported one).
STREAMS_VERSION = VersionPrefix("streams-version", 4, in_body=True,
                                latest_supported_from=EARLIEST_PROBEABLE_VERSION)
_SPEC = "SubscriptionInfoData"
_I32 = struct.Struct(">i")
# the compiled writers of the HashMap-ordered parts (csrc/kc_streams_userdata.c); None: the
# Python encoders below write everything
_ud = _ext.load("kcodec.streams._userdata")


class AssignorError:
    """``AssignorError`` codes carried in ``errorCode``."""
    NONE = 0
    INCOMPLETE_SOURCE_TOPIC_METADATA = 1
    VERSION_PROBING = 2            # legacy, no longer sent
    ASSIGNMENT_ERROR = 3
    SHUTDOWN_REQUESTED = 4


class TaskId(NamedTuple):
    """A Streams task: subtopology (topic group id), partition, optional named topology."""
    subtopology: int
    partition: int
    topology_name: Optional[str] = None

    def __str__(self) -> str:
        base = f"{self.subtopology}_{self.partition}"
        return f"{self.topology_name}__{base}" if self.topology_name else base


def task_sort_key(t: TaskId) -> Tuple[Any, ...]:
    """Kafka's ``TaskId.compareTo``: unnamed tasks first, then by name, subtopology, partition."""
    return (t.topology_name is not None, t.topology_name or "", t.subtopology, t.partition)


class HostInfo(NamedTuple):
    """A Streams instance's ``application.server`` endpoint."""
    host: str
    port: int


def _task_json(t: TaskId) -> Dict[str, Any]:
    return {"subtopology": t.subtopology, "partition": t.partition, "topology_name": t.topology_name}


def _tp_json(tp: TopicPartition) -> Dict[str, Any]:
    return {"topic": tp.topic, "partition": tp.partition}


# --------------------------------------------------------------------------- SubscriptionInfo

@dataclass
class SubscriptionInfo:
    """What a Streams member sends in its subscription.

    ``task_offset_sums`` maps every task the member has state for to its offset sum
    (``LATEST_OFFSET`` = running active task); v1-v6 carry it as previous active tasks and
    standby tasks, which decode to ``LATEST_OFFSET`` and ``UNKNOWN_OFFSET_SUM``.
    ``wire_order``: ``task_offset_sums`` is already in the order of the bytes it was decoded
    from (set by :func:`decode_subscription`); when False, encoding orders the sets and maps
    Kafka's constructor builds from it as Java iterates them.  A subscription newer than :data:`LATEST_SUPPORTED_VERSION` has ``future=True`` and only
    ``version``/``latest_supported_version`` (the rest of its bytes in ``trailing``).
    """
    version: int
    latest_supported_version: int = LATEST_SUPPORTED_VERSION
    process_id: _uuid.UUID = field(default_factory=lambda: _uuid.UUID(int=0))
    user_end_point: Optional[str] = None
    task_offset_sums: Dict[TaskId, int] = field(default_factory=dict)
    unique_field: int = 0
    error_code: int = 0
    client_tags: Dict[str, str] = field(default_factory=dict)
    future: bool = False
    trailing: bytes = b""          # bytes after the body (Kafka ignores them)
    wire_order: bool = False

    @property
    def prev_tasks(self) -> List[TaskId]:
        """Tasks the member ran as active (offset sum ``LATEST_OFFSET``)."""
        return [t for t, s in self.task_offset_sums.items() if s == LATEST_OFFSET]

    @property
    def standby_tasks(self) -> List[TaskId]:
        """Tasks the member has state for but did not run as active."""
        return [t for t, s in self.task_offset_sums.items() if s != LATEST_OFFSET]

    @property
    def host_info(self) -> Optional[HostInfo]:
        if not self.user_end_point:
            return None
        host, _, port = self.user_end_point.rpartition(":")
        return HostInfo(host, int(port)) if port.isdigit() else None


def _text(b: Optional[bytes]) -> Optional[str]:
    # Kafka keeps these as bytes and reads them as UTF-8; surrogateescape keeps any byte string
    return None if b is None else bytes(b).decode("utf-8", "surrogateescape")


def _utf8(s: Optional[str]) -> bytes:
    return b"" if s is None else s.encode("utf-8", "surrogateescape")


def decode_subscription(data: Any) -> SubscriptionInfo:
    """Decode a Streams subscription (the ConsumerProtocolSubscription's ``userData``).

    Raises :class:`DecodeError` (field path and byte offset) on bad or truncated bytes."""
    r = Reader(data, message=_SPEC)
    head = STREAMS_VERSION.read(r)
    v = head.version
    if v == 0:
        raise r.fail("unsupported version 0", "version", 0)
    if v > LATEST_SUPPORTED_VERSION:
        # a newer member: Kafka reads the version and latest supported version, nothing more
        return SubscriptionInfo(v, head.latest_supported, future=True, trailing=bytes(r.buf[8:]))
    d = kcodec.read(_SPEC, r.buf, v, trailing="allow")
    w = d.value
    sums: Dict[TaskId, int] = {}
    if v < MIN_VERSION_OFFSET_SUM_SUBSCRIPTION:
        for t in w["prevTasks"]:
            sums[TaskId(t["topicGroupId"], t["partition"])] = LATEST_OFFSET
        for t in w["standbyTasks"]:
            sums[TaskId(t["topicGroupId"], t["partition"])] = UNKNOWN_OFFSET_SUM
    elif v < MIN_NAMED_TOPOLOGY_VERSION:
        for g in w["taskOffsetSums"]:
            for p in g["partitionToOffsetSum"]:
                sums[TaskId(g["topicGroupId"], p["partition"])] = p["offsetSum"]
    else:
        for t in w["taskOffsetSums"]:
            sums[TaskId(t["topicGroupId"], t["partition"], t["namedTopology"])] = t["offsetSum"]
    return SubscriptionInfo(
        version=v,
        latest_supported_version=w.get("latestSupportedVersion", UNKNOWN),
        process_id=w["processId"],
        user_end_point=_text(w.get("userEndPoint")) or None,
        task_offset_sums=sums,
        unique_field=w.get("uniqueField", 0),
        error_code=w.get("errorCode", 0),
        client_tags={_text(t["key"]): _text(t["value"]) for t in w.get("clientTags") or []},  # type: ignore[misc]
        trailing=d.trailing, wire_order=True)


def _task_set_order(tasks: List[TaskId]) -> List[TaskId]:
    # Kafka 4.1.1 SubscriptionInfo (v1-v6): prevTasks/standbyTasks are fresh HashSet<TaskId>s
    return task_set_order(tasks)


def _subtopology_order(subtopologies: List[int]) -> List[int]:
    # v7-v9: offset sums grouped with HashMap<Integer, List>.computeIfAbsent(subtopology)
    return [subtopologies[i] for i in hash_order(subtopologies, np.asarray(subtopologies, dtype=np.int64),
                                                 compute_if_absent=True)]


def encode_subscription(info: SubscriptionInfo, *, keep_trailing: bool = True) -> bytes:
    """Encode ``info`` at ``info.version`` as Kafka's ``SubscriptionInfo.encode`` does.

    Raises :class:`EncodeError` above version 11 (Kafka throws IllegalStateException) and
    for named topologies below v10."""
    v = info.version
    if info.future:
        w = Writer().int32(v, "version").int32(info.latest_supported_version, "latestSupportedVersion")
        return w.getvalue() + (info.trailing if keep_trailing else b"")
    if not 1 <= v <= LATEST_SUPPORTED_VERSION:
        raise EncodeError(f"Unknown metadata version: {v}; latest supported version: "
                          f"{LATEST_SUPPORTED_VERSION}", message=_SPEC, version=v, path="version")
    # v1-v6 task sets written by C; None: a named task or a number beyond int32 (checked below)
    tasks = _ud.task_sets(info.task_offset_sums, not info.wire_order) \
        if _ud is not None and v < MIN_VERSION_OFFSET_SUM_SUBSCRIPTION else None
    if v < MIN_NAMED_TOPOLOGY_VERSION and tasks is None and any(t.topology_name for t in info.task_offset_sums):
        raise EncodeError(f"Named topologies are not compatible with older protocol versions",
                          message=_SPEC, version=v, path="taskOffsetSums")
    # like Kafka's SubscriptionInfo constructor, fields the version cannot carry are left out
    w: Dict[str, Any] = {"version": v, "processId": info.process_id}
    if v >= 2:
        w["userEndPoint"] = _utf8(info.user_end_point)
    if v >= EARLIEST_PROBEABLE_VERSION:
        w["latestSupportedVersion"] = info.latest_supported_version
    if tasks is not None:
        w["prevTasks"] = w["standbyTasks"] = ()      # spliced in below
    elif v < MIN_VERSION_OFFSET_SUM_SUBSCRIPTION:
        prev = [t for t, s in info.task_offset_sums.items() if s == LATEST_OFFSET]
        standby = [t for t, s in info.task_offset_sums.items() if s != LATEST_OFFSET]
        if not info.wire_order:
            prev, standby = _task_set_order(prev), _task_set_order(standby)
        w["prevTasks"] = [{"topicGroupId": t.subtopology, "partition": t.partition} for t in prev]
        w["standbyTasks"] = [{"topicGroupId": t.subtopology, "partition": t.partition} for t in standby]
    elif v < MIN_NAMED_TOPOLOGY_VERSION:
        groups: Dict[int, List[Dict[str, int]]] = {}
        for t, s in info.task_offset_sums.items():
            groups.setdefault(t.subtopology, []).append({"partition": t.partition, "offsetSum": s})
        order = list(groups) if info.wire_order else _subtopology_order(list(groups))
        w["taskOffsetSums"] = [{"topicGroupId": g, "partitionToOffsetSum": groups[g]} for g in order]
    else:
        w["taskOffsetSums"] = [{"topicGroupId": t.subtopology, "partition": t.partition,
                                "offsetSum": s, "namedTopology": t.topology_name}
                               for t, s in info.task_offset_sums.items()]
    if v >= 8:
        w["uniqueField"] = info.unique_field
    if v >= 9:
        w["errorCode"] = info.error_code
    if v >= 11:
        w["clientTags"] = [{"key": _utf8(k), "value": _utf8(x)} for k, x in info.client_tags.items()]
    out = kcodec.encode(_SPEC, w, v)
    if tasks is not None:
        # prevTasks and standbyTasks follow version, latestSupportedVersion (v3+) and processId
        # (SubscriptionInfoData.json): two empty arrays, int32 zeros, at a fixed offset
        at = 24 if v >= EARLIEST_PROBEABLE_VERSION else 20
        out = b"".join((out[:at], tasks, out[at + 8:]))
    return out + info.trailing if keep_trailing and info.trailing else out


def subscription_to_json(info: SubscriptionInfo) -> Dict[str, Any]:
    """Kafka's decoded view (``SubscriptionInfo`` accessors), sets and maps sorted."""
    sums = sorted(info.task_offset_sums.items(), key=lambda kv: task_sort_key(kv[0]))
    return {
        "version": info.version,
        "latest_supported_version": info.latest_supported_version,
        "process_id": str(info.process_id),
        "user_end_point": info.user_end_point,
        "prev_tasks": [_task_json(t) for t, s in sums if s == LATEST_OFFSET],
        "standby_tasks": [_task_json(t) for t, s in sums if s != LATEST_OFFSET],
        "task_offset_sums": [dict(_task_json(t), offset_sum=s) for t, s in sums],
        "error_code": info.error_code,
        "client_tags": dict(sorted(info.client_tags.items())),
    }


# --------------------------------------------------------------------------- AssignmentInfo

# AssignmentInfo's layouts, by version: the blocks in wire order (Kafka's AssignmentInfo.encode).
#   version      int32 usedVersion
#   common       int32 commonlySupportedVersion                          (v3+)
#   active       int32 n, n x TaskId                                     (TaskId: int32 subtopology,
#   standby      int32 n, n x (TaskId, TP-set)                            int32 partition, v10+ int32
#   hosts        int32 n, n x (UTF host, int32 port, TP-set)   (v2-v4)    nChars + UTF-16BE name)
#   dictionary   int32 n, n x (int32 index, UTF topic)                   (v5+)
#   dict_hosts   int32 n, n x (UTF host, int32 port, int32 k, k x (int32 index, int32 partition))
#   dict_standby_hosts   the same for standby partitions                 (v6+)
#   error        int32 errCode                                           (v4+)
#   next_rebalance int64 nextRebalanceMs                                 (v7+)
_V7 = ("version", "common", "active", "standby", "dictionary", "dict_hosts", "dict_standby_hosts",
       "error", "next_rebalance")
ASSIGNMENT_LAYOUT: Dict[int, Tuple[str, ...]] = {
    1: ("version", "active", "standby"),
    2: ("version", "active", "standby", "hosts"),
    3: ("version", "common", "active", "standby", "hosts"),
    4: ("version", "common", "active", "standby", "hosts", "error"),
    5: ("version", "common", "active", "standby", "dictionary", "dict_hosts", "error"),
    6: ("version", "common", "active", "standby", "dictionary", "dict_hosts", "dict_standby_hosts", "error"),
    7: _V7, 8: _V7, 9: _V7, 10: _V7, 11: _V7,
}


@dataclass
class AssignmentInfo:
    """What the Streams leader sends each member.

    ``active_tasks`` is 1:1 with the ConsumerProtocolAssignment's partitions (a task with k
    input partitions appears k times).  Maps keep wire order; ``topic_dictionary`` (v5+) is
    the ``(index, topic)`` table as written, or None to build one when encoding."""
    version: int
    commonly_supported_version: int = LATEST_SUPPORTED_VERSION
    active_tasks: List[TaskId] = field(default_factory=list)
    standby_tasks: Dict[TaskId, List[TopicPartition]] = field(default_factory=dict)
    partitions_by_host: Dict[HostInfo, List[TopicPartition]] = field(default_factory=dict)
    standby_partitions_by_host: Dict[HostInfo, List[TopicPartition]] = field(default_factory=dict)
    error_code: int = 0
    next_rebalance_ms: int = LONG_MAX
    topic_dictionary: Optional[List[Tuple[int, str]]] = None
    trailing: bytes = b""

    @classmethod
    def version_probing(cls, used_version: int, commonly_supported_version: int) -> "AssignmentInfo":
        """The empty assignment the leader sends on version probing
        (``new AssignmentInfo(usedVersion, commonlySupportedVersion)``)."""
        return cls(used_version, commonly_supported_version)


_ASG = "AssignmentInfo"


def _read_task(r: Reader, v: int, path: str) -> TaskId:
    sub = r.int32(path + ".subtopology")
    part = r.int32(path + ".partition")
    name = None
    if v >= MIN_NAMED_TOPOLOGY_VERSION:
        at = r.pos
        n = r.int32(path + ".topologyName")
        if n < 0:
            raise r.fail(f"invalid named topology length {n}", path + ".topologyName", at)
        if n:
            raw = r.raw(2 * n, path + ".topologyName")
            name = raw.decode("utf-16-be", "surrogatepass")
    return TaskId(sub, part, name)


def _write_task(w: Writer, t: TaskId, v: int, path: str) -> None:
    w.int32(t.subtopology, path + ".subtopology").int32(t.partition, path + ".partition")
    if v >= MIN_NAMED_TOPOLOGY_VERSION:
        if t.topology_name:
            raw = t.topology_name.encode("utf-16-be", "surrogatepass")
            w.int32(len(raw) // 2, path + ".topologyName").raw(raw)
        else:
            w.int32(0, path + ".topologyName")
    elif t.topology_name is not None:
        raise EncodeError(f"Named topologies are not compatible with protocol version {v}",
                          message=_ASG, version=v, path=path)


_TASK_CACHE: Dict[Tuple[TaskId, bool], bytes] = {}


def _task_bytes(t: TaskId, v: int, where: Tuple[str, int]) -> bytes:
    # task ids repeat across the members of a rebalance: encode each once
    key = (t, v >= MIN_NAMED_TOPOLOGY_VERSION)
    b = _TASK_CACHE.get(key)
    if b is None:
        w = Writer()
        _write_task(w, t, v, f"{where[0]}[{where[1]}]")
        b = w.getvalue()
        if len(_TASK_CACHE) < 1 << 16:
            _TASK_CACHE[key] = b
    return b


_STANDBY_CACHE: Dict[Tuple[TaskId, bool, Tuple[TopicPartition, ...]], bytes] = {}


def _standby_bytes(t: TaskId, tps: List[TopicPartition], v: int, i: int) -> bytes:
    # a standby entry (task id + its partitions) is the same for every member holding it
    key = (t, v >= MIN_NAMED_TOPOLOGY_VERSION, tuple(tps))
    b = _STANDBY_CACHE.get(key)
    if b is None:
        b = _task_bytes(t, v, ("standbyTasks", i)) + _tps_bytes(tps, {}, f"standbyTasks[{i}].partitions")
        if len(_STANDBY_CACHE) < 1 << 16:
            _STANDBY_CACHE[key] = b
    return b


def _tps_bytes(tps: List[TopicPartition], utf: Dict[str, bytes], path: str) -> bytes:
    out = [_I32.pack(len(tps))]
    for tp in tps:
        u = utf.get(tp.topic)
        if u is None:
            u = utf[tp.topic] = Writer().java_utf(tp.topic, path).getvalue()
        out.append(u)
        try:
            out.append(_I32.pack(tp.partition))
        except struct.error:
            raise EncodeError(f"{tp.partition!r} does not fit int32", message=_ASG, path=path) from None
    return b"".join(out)


def _count(r: Reader, path: str, min_size: int) -> int:
    # a count must fit the bytes left: absurd counts fail here, before any allocation
    at = r.pos
    n = r.int32(path)
    if n < 0 or n * min_size > r.remaining:
        raise r.fail(f"invalid count {n} ({r.remaining} bytes left)", path, at)
    return n


def _read_tps(r: Reader, path: str) -> List[TopicPartition]:
    return [TopicPartition(r.java_utf(f"{path}[{i}].topic"), r.int32(f"{path}[{i}].partition"))
            for i in range(_count(r, path, 6))]


def _write_tps(w: Writer, tps: List[TopicPartition], path: str) -> None:
    w.int32(len(tps), path)
    for i, tp in enumerate(tps):
        w.java_utf(tp.topic, f"{path}[{i}].topic").int32(tp.partition, f"{path}[{i}].partition")


def _read_host(r: Reader, path: str) -> HostInfo:
    return HostInfo(r.java_utf(path + ".host"), r.int32(path + ".port"))


def _read_dict_hosts(r: Reader, topics: Dict[int, str], path: str) -> Dict[HostInfo, List[TopicPartition]]:
    out: Dict[HostInfo, List[TopicPartition]] = {}
    for i in range(_count(r, path, 10)):
        p = f"{path}[{i}]"
        host = _read_host(r, p)
        tps = []
        for j in range(_count(r, p + ".partitions", 8)):
            at = r.pos
            idx = r.int32(f"{p}.partitions[{j}].topicIndex")
            if idx not in topics:
                raise r.fail(f"topic index {idx} is not in the topic dictionary",
                             f"{p}.partitions[{j}].topicIndex", at)
            tps.append(TopicPartition(topics[idx], r.int32(f"{p}.partitions[{j}].partition")))
        out[host] = tps
    return out


def decode_assignment(data: Any) -> AssignmentInfo:
    """Decode a Streams assignment (the ConsumerProtocolAssignment's ``userData``).

    Versions outside 1-11 raise :class:`DecodeError` (Kafka: TaskAssignmentException
    "Unable to decode assignment data"); so do bad or truncated bytes, with field and offset."""
    r = Reader(data, message=_ASG)
    v = r.int32("version")
    r.version = v
    if v not in ASSIGNMENT_LAYOUT:
        raise r.fail(f"Unable to decode assignment data: used version: {v}; latest supported "
                     f"version: {LATEST_SUPPORTED_VERSION}", "version", 0)
    a = AssignmentInfo(v, UNKNOWN)
    topics: Dict[int, str] = {}
    for block in ASSIGNMENT_LAYOUT[v][1:]:
        if block == "common":
            a.commonly_supported_version = r.int32("commonlySupportedVersion")
        elif block == "active":
            a.active_tasks = [_read_task(r, v, f"activeTasks[{i}]")
                              for i in range(_count(r, "activeTasks", 8))]
        elif block == "standby":
            for i in range(_count(r, "standbyTasks", 12)):
                t = _read_task(r, v, f"standbyTasks[{i}]")
                a.standby_tasks[t] = _read_tps(r, f"standbyTasks[{i}].partitions")
        elif block == "hosts":
            for i in range(_count(r, "partitionsByHost", 10)):
                h = _read_host(r, f"partitionsByHost[{i}]")
                a.partitions_by_host[h] = _read_tps(r, f"partitionsByHost[{i}].partitions")
        elif block == "dictionary":
            pairs = []
            for i in range(_count(r, "topicDictionary", 6)):
                pairs.append((r.int32(f"topicDictionary[{i}].index"), r.java_utf(f"topicDictionary[{i}].topic")))
            a.topic_dictionary = pairs
            topics = dict(pairs)
        elif block == "dict_hosts":
            a.partitions_by_host = _read_dict_hosts(r, topics, "partitionsByHost")
        elif block == "dict_standby_hosts":
            a.standby_partitions_by_host = _read_dict_hosts(r, topics, "standbyPartitionsByHost")
        elif block == "error":
            a.error_code = r.int32("errorCode")
        elif block == "next_rebalance":
            a.next_rebalance_ms = r.int64("nextRebalanceMs")
    a.trailing = r.rest()     # Kafka's DataInputStream leaves them unread
    return a


def _dictionary(a: AssignmentInfo) -> List[Tuple[int, str]]:
    if a.topic_dictionary is not None:
        return a.topic_dictionary
    # Kafka 4.1.1 AssignmentInfo.encodeTopicDictionaryAndGet: the partitions of the host maps
    # encoded (v5: partitionsByHost only) collected into a HashSet<TopicPartition>; topics
    # numbered in that set's order into a HashMap<String, Integer>, written in its order
    maps = [a.partitions_by_host] + ([a.standby_partitions_by_host] if a.version >= 6 else [])
    try:
        names, tidx, part = topic_partition_columns(ps for m in maps for ps in m.values())
    except OverflowError:
        raise EncodeError("a partition does not fit int32", message=_ASG, version=a.version,
                          path="partitionsByHost") from None
    # the HashSet<TopicPartition>: each distinct pair once, in first-seen order
    first = distinct_first((tidx << 32) | (part & 0xFFFFFFFF))
    tidx, part = tidx[first], part[first]
    name_hash = string_hashes(names)
    # topics numbered in the order of their first partition in the HashSet<TopicPartition>
    seen = tidx[hash_order(topic_partition_hashes(name_hash[tidx], part), array=True)]
    by_set = seen[distinct_first(seen)]
    topics = [names[i] for i in by_set.tolist()]
    order = hash_order(name_hash[by_set], [java_string_key(t) for t in topics])
    return [(i, topics[i]) for i in order]


def encode_host_section(a: AssignmentInfo) -> bytes:
    """The host-map part of ``a`` (``hosts`` or ``dictionary`` + ``dict_*`` blocks): the same
    for every member of a rebalance, so a leader encodes it once (see :func:`encode_assignment`)."""
    v = a.version
    blocks = ASSIGNMENT_LAYOUT[v]
    if _ud is not None and ("hosts" in blocks or "dictionary" in blocks):
        maps = [a.partitions_by_host]
        if "dict_standby_hosts" in blocks:
            maps.append(a.standby_partitions_by_host)
        out = _ud.host_section(maps, "dictionary" in blocks, a.topic_dictionary)
        if out is not None:
            return out
    return _host_section_py(a)


def _host_section_py(a: AssignmentInfo) -> bytes:
    # encode_host_section in Python: without the compiled writers, and for the inputs they
    # leave to it (numbers beyond int32, strings writeUTF refuses, unknown topics: the errors)
    v = a.version
    w = Writer()
    blocks = ASSIGNMENT_LAYOUT[v]
    if "hosts" in blocks:
        w.int32(len(a.partitions_by_host), "partitionsByHost")
        for i, (h, tps) in enumerate(a.partitions_by_host.items()):
            w.java_utf(h.host, f"partitionsByHost[{i}].host").int32(h.port, f"partitionsByHost[{i}].port")
            _write_tps(w, tps, f"partitionsByHost[{i}].partitions")
    if "dictionary" in blocks:
        pairs = _dictionary(a)
        index = {t: i for i, t in pairs}
        w.int32(len(pairs), "topicDictionary")
        for i, (idx, t) in enumerate(pairs):
            w.int32(idx, f"topicDictionary[{i}].index").java_utf(t, f"topicDictionary[{i}].topic")
        maps = [("partitionsByHost", a.partitions_by_host)]
        if "dict_standby_hosts" in blocks:
            maps.append(("standbyPartitionsByHost", a.standby_partitions_by_host))
        for name, m in maps:
            w.int32(len(m), name)
            for i, (h, tps) in enumerate(m.items()):
                p = f"{name}[{i}]"
                w.java_utf(h.host, p + ".host").int32(h.port, p + ".port").int32(len(tps), p + ".partitions")
                flat: List[int] = []
                for tp in tps:
                    idx = index.get(tp.topic)
                    if idx is None:
                        raise EncodeError(f"topic {tp.topic!r} is not in the topic dictionary",
                                          message=_ASG, version=v, path=p + ".partitions")
                    flat += (idx, tp.partition)
                try:
                    w.raw(struct.pack(f">{len(flat)}i", *flat))
                except struct.error:
                    raise EncodeError("a partition does not fit int32", message=_ASG, version=v,
                                      path=p + ".partitions") from None
    return w.getvalue()


def encode_assignment(a: AssignmentInfo, *, host_section: Optional[bytes] = None,
                      keep_trailing: bool = True) -> bytes:
    """Encode ``a`` at ``a.version`` (Kafka's ``AssignmentInfo.encode``).

    ``host_section``: the bytes of :func:`encode_host_section` for this rebalance, reused
    across members instead of re-encoding the same host maps."""
    v = a.version
    if v not in ASSIGNMENT_LAYOUT:
        raise EncodeError(f"version must be between 1 and {LATEST_SUPPORTED_VERSION}; was: {v}",
                          message=_ASG, version=v, path="version")
    w = Writer()
    hosts_done = False
    for block in ASSIGNMENT_LAYOUT[v]:
        if block == "version":
            w.int32(v, "version")
        elif block == "common":
            w.int32(a.commonly_supported_version, "commonlySupportedVersion")
        elif block == "active":
            w.int32(len(a.active_tasks), "activeTasks")
            cache = _TASK_CACHE
            named = v >= MIN_NAMED_TOPOLOGY_VERSION
            w.raw(b"".join([cache.get((t, named)) or _task_bytes(t, v, ("activeTasks", i))
                            for i, t in enumerate(a.active_tasks)]))
        elif block == "standby":
            w.int32(len(a.standby_tasks), "standbyTasks")
            w.raw(b"".join([_standby_bytes(t, tps, v, i) for i, (t, tps) in enumerate(a.standby_tasks.items())]))
        elif block in ("hosts", "dictionary", "dict_hosts", "dict_standby_hosts"):
            if not hosts_done:
                w.raw(encode_host_section(a) if host_section is None else host_section)
                hosts_done = True
        elif block == "error":
            w.int32(a.error_code, "errorCode")
        elif block == "next_rebalance":
            w.int64(a.next_rebalance_ms, "nextRebalanceMs")
    if keep_trailing and a.trailing:
        w.raw(a.trailing)
    return w.getvalue()


def _host_json(m: Dict[HostInfo, List[TopicPartition]]) -> List[Dict[str, Any]]:
    return [{"host": h.host, "port": h.port,
             "partitions": [_tp_json(tp) for tp in sorted(set(tps))]}
            for h, tps in sorted(m.items())]


def assignment_to_json(a: AssignmentInfo) -> Dict[str, Any]:
    """Kafka's decoded view (``AssignmentInfo`` accessors): active tasks in list order, sets
    and maps sorted."""
    return {
        "version": a.version,
        "commonly_supported_version": a.commonly_supported_version,
        "active_tasks": [_task_json(t) for t in a.active_tasks],
        "standby_tasks": [{"task": _task_json(t), "partitions": [_tp_json(tp) for tp in sorted(set(tps))]}
                          for t, tps in sorted(a.standby_tasks.items(), key=lambda kv: task_sort_key(kv[0]))],
        "partitions_by_host": _host_json(a.partitions_by_host),
        "standby_partitions_by_host": _host_json(a.standby_partitions_by_host),
        "error_code": a.error_code,
        "next_rebalance_ms": a.next_rebalance_ms,
    }

