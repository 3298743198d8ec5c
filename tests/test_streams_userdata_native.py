"""The compiled Streams userData writers (csrc/kc_streams_userdata.c through
kcodec.streams._userdata) against the Python encoders of kcodec.streams.protocol: the same
bytes for any input, the Python ones still Kafka's bytes on the Java-made vectors, and the
errors (numbers beyond int32, strings writeUTF refuses, unknown topics) as the Python path
raises them."""
from __future__ import annotations

import gzip
import hashlib
import json
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kcodec.consumer import TopicPartition
from kcodec.errors import EncodeError
from kcodec.streams import protocol as P
from kcodec.streams.protocol import AssignmentInfo, HostInfo, SubscriptionInfo, TaskId

pytestmark = pytest.mark.skipif(P._ud is None, reason="kcodec.streams._userdata not built")

# topics with equal String.hashCodes ("Aa"/"BB", "AaAa"/"BBBB"/...), non-ASCII, NUL, astral
TOPICS = ["Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "t", "topic-1", "topic-2", "é", "a\x00b", "\U0001F600x", ""]
HOSTS = ["h", "host-1", "hôte", "\x00", "\U0001F600"]


def _python(monkeypatch):
    monkeypatch.setattr(P, "_ud", None)


def host_maps():
    tp = st.builds(TopicPartition, st.sampled_from(TOPICS), st.integers(-3, 40) | st.integers(-2**31, 2**31 - 1))
    host = st.builds(HostInfo, st.sampled_from(HOSTS), st.integers(-2**31, 2**31 - 1))
    return st.dictionaries(host, st.lists(tp, max_size=40), max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.integers(1, 11), host_maps(), host_maps(), st.booleans(), st.data())
def test_host_section_same_bytes_as_python(version, by_host, standby, give_dictionary, data):
    a = AssignmentInfo(version, partitions_by_host=by_host, standby_partitions_by_host=standby)
    want = P._host_section_py(a)
    assert P.encode_host_section(a) == want
    if give_dictionary and version >= 5:
        # a dictionary of the caller's: any indexes, a topic twice (the last wins), extra topics
        used = sorted({tp.topic for m in (by_host, standby) for ps in m.values() for tp in ps})
        extra = data.draw(st.lists(st.sampled_from(TOPICS), max_size=3))
        topics = data.draw(st.permutations(used + extra))
        a.topic_dictionary = [(data.draw(st.integers(-5, 50)), t) for t in topics]
        assert P.encode_host_section(a) == P._host_section_py(a)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.dictionaries(
    st.builds(TaskId, st.integers(-3, 30) | st.integers(-2**31, 2**31 - 1), st.integers(-3, 120), st.none()),
    st.sampled_from([-2, -3, 0, 7, 2**40]), max_size=300), st.booleans())
def test_task_sets_same_bytes_as_python(version, sums, wire_order):
    _same_as_python(SubscriptionInfo(version, 6 if version >= 3 else -1, uuid.UUID(int=5), "h:1", sums,
                                     wire_order=wire_order))


def _same_as_python(s):
    native = P.encode_subscription(s)
    saved, P._ud = P._ud, None
    try:
        assert native == P.encode_subscription(s)
    finally:
        P._ud = saved


def test_task_id_min_min_keeps_its_rank():
    # (MIN, MIN)'s compareTo key would be the HashMap model's "no rank": it must still sort first
    lo = -2**31
    sums = {TaskId(lo, lo + k): -2 for k in range(0, 400, 1)}
    _same_as_python(SubscriptionInfo(6, 6, uuid.UUID(int=1), None, sums))


@pytest.mark.parametrize("version", [3, 7, 11])
def test_errors_are_the_python_paths(version):
    def err(a):
        with pytest.raises(EncodeError) as e:
            P.encode_host_section(a)
        return e.value.path

    big = AssignmentInfo(version, partitions_by_host={HostInfo("h", 1): [TopicPartition("t", 0), TopicPartition("t", 2**31)]})
    assert err(big) == ("partitionsByHost[0].partitions[1].partition" if version < 5
                        else "partitionsByHost[0].partitions")
    long_host = AssignmentInfo(version, partitions_by_host={HostInfo("h" * 70000, 1): []})
    assert err(long_host) == "partitionsByHost[0].host"
    port = AssignmentInfo(version, partitions_by_host={HostInfo("h", 2**31): []})
    assert err(port) == "partitionsByHost[0].port"
    if version >= 5:
        missing = AssignmentInfo(version, partitions_by_host={HostInfo("h", 1): [TopicPartition("u", 0)]},
                                 topic_dictionary=[(0, "t")])
        assert err(missing) == "partitionsByHost[0].partitions"
    with pytest.raises(EncodeError) as e:
        P.encode_subscription(SubscriptionInfo(6, task_offset_sums={TaskId(0, 1, "named"): -2}))
    assert e.value.path == "taskOffsetSums"


def test_python_encoders_are_kafkas_bytes(monkeypatch):
    # the Java-made vectors of tests/test_java_parity.py through the Python encoders
    _python(monkeypatch)
    with gzip.open(Path(__file__).parent / "data" / "java" / "streams_userdata.jsonl.gz", "rt") as f:
        cases = [c for c in map(json.loads, f) if c["kind"] in ("sub", "asg") and not c.get("tp_ties")]
    task = lambda t: TaskId(t[0], t[1], t[2])  # noqa: E731
    hosts = lambda m: {HostInfo(h, p): [TopicPartition(t, n) for t, n in tps] for h, p, tps in m}  # noqa: E731
    for c in cases:
        if c["kind"] == "sub":
            got = P.encode_subscription(SubscriptionInfo(
                c["version"], c["latest"], uuid.UUID(c["process_id"]), c["endpoint"],
                {task(t): t[3] for t in c["tasks"]}, c["unique"], c["error"], dict(c["tags"])))
        else:
            got = P.encode_assignment(AssignmentInfo(
                c["version"], c["common"], [task(t) for t in c["active"]],
                {task(t): [TopicPartition(x, n) for x, n in tps] for t, tps in c["standby"]},
                hosts(c["hosts"]), hosts(c["standby_hosts"]), c["error"], c["next"]))
        e = c["expected"]
        assert (got.hex() == e["hex"]) if "hex" in e else (hashlib.sha256(got).hexdigest() == e["sha256"]), c["id"]
