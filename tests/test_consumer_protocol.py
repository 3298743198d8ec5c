"""Consumer embedded protocol: Kafka's own serializer vectors, the classic groups real
clients wrote to ``__consumer_offsets``, and the StickyAssignor user data forms."""
from __future__ import annotations

import json
import re
import struct
from typing import Any, Dict, List

import pytest

import kcodec
from kcodec.consumer import protocol as P
from kcodec.errors import DecodeError, EncodeError

from ._shared import fixtures_dir, read_jsonl, require, vectors_dir

VECTORS = read_jsonl(vectors_dir() / "consumer_protocol.jsonl")


def _ud(h):
    return None if h is None else bytes.fromhex(h)


def _sub_from_input(inp: Dict[str, Any]) -> P.Subscription:
    gen = inp.get("generation_id", -1)
    return P.Subscription(
        topics=list(inp["topics"]), user_data=_ud(inp.get("user_data_hex")),
        owned_partitions=[P.TopicPartition(x["topic"], x["partition"]) for x in inp.get("owned_partitions", [])],
        generation_id=None if gen is None or gen < 0 else gen, rack_id=inp.get("rack_id"))


def _asg_from_input(inp: Dict[str, Any]) -> P.Assignment:
    return P.Assignment([P.TopicPartition(x["topic"], x["partition"]) for x in inp["partitions"]],
                        _ud(inp.get("user_data_hex")))


def _tps(xs: List[P.TopicPartition]) -> List[Dict[str, Any]]:
    return [{"topic": t, "partition": p} for t, p in xs]


@pytest.mark.parametrize("vec", VECTORS, ids=[v["id"] for v in VECTORS])
def test_vector(vec):
    data = bytes.fromhex(vec["hex"])
    d = vec["decoded"]
    kind = vec["kind"]
    is_sub = kind.startswith("subscription")
    if kind.endswith("malformed") or d.get("java_exception"):
        with pytest.raises(DecodeError):
            (P.decode_subscription if is_sub else P.decode_assignment)(data)
        return
    if is_sub:
        s = P.decode_subscription(data)
        assert s.version == d["version_prefix"]
        assert s.topics == d["topics"]
        assert (None if s.user_data is None else s.user_data.hex()) == d["user_data_hex"]
        assert _tps(s.owned_partitions) == d["owned_partitions"]
        assert s.generation_id == d["generation_id"]
        assert s.rack_id == d["rack_id"]
        raw = P.read_subscription_raw(data)
    else:
        a = P.decode_assignment(data)
        assert a.version == d["version_prefix"]
        assert _tps(a.partitions) == d["partitions"]
        assert (None if a.user_data is None else a.user_data.hex()) == d["user_data_hex"]
        raw = P.read_assignment_raw(data)
    assert raw.parsed_version == d["parsed_as_version"]
    assert len(raw.trailing) == d["trailing_bytes_ignored"]
    # the generated message Kafka read, in its JSON form
    if "raw_message_json" in d:
        got = kcodec.to_kafka_json(raw.schema, raw.value, raw.parsed_version)
        assert got == d["raw_message_json"]
    # byte-exact rewriting of whatever was read
    assert P.write_raw(raw) == data
    # Kafka's serializer output is reproduced from the same input
    if kind in ("subscription", "assignment"):
        v = vec["requested_version"]
        enc = (P.encode_subscription(_sub_from_input(vec["input"]), v) if is_sub
               else P.encode_assignment(_asg_from_input(vec["input"]), v))
        assert enc == data
        # and from what was decoded (at the version read)
        again = (P.encode_subscription(P.decode_subscription(data), d["version_prefix"]) if is_sub
                 else P.encode_assignment(P.decode_assignment(data), d["version_prefix"]))
        assert again == data


def test_future_version_reads_as_v3_and_ignores_trailing():
    sub = P.Subscription(["topic"], b"", [P.TopicPartition("bar", 2)], 1, "rack-a")
    body = P.encode_subscription(sub, 3)[2:]
    data = struct.pack(">h", 100) + body + struct.pack(">h", 3) + b"bar"
    s = P.decode_subscription(data)
    assert (s.topics, s.owned_partitions, s.generation_id, s.rack_id, s.version) == (
        ["topic"], [P.TopicPartition("bar", 2)], 1, "rack-a", 100)
    a = P.decode_assignment(struct.pack(">h", 100) + P.encode_assignment(P.Assignment([("foo", 1)]), 3)[2:] + b"\x00\x03foo")
    assert a.partitions == [P.TopicPartition("foo", 1)]


def test_new_subscription_read_with_old_version():
    sub = P.Subscription(["t"], b"x", [P.TopicPartition("t", 0)], 7, "r")
    data = struct.pack(">h", 0) + P.encode_subscription(sub, 3)[2:]
    s = P.decode_subscription(data)
    assert s.topics == ["t"] and s.user_data == b"x" and s.owned_partitions == [] and s.generation_id is None


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xff\x00\x00\x00\x00", b"\x80\x00"])
def test_bad_prefix(data):
    for f in (P.decode_subscription, P.decode_assignment):
        with pytest.raises(DecodeError) as e:
            f(data)
        assert e.value.offset == 0


def test_truncated_and_absurd_lengths_raise_with_offsets():
    good = P.encode_subscription(P.Subscription(["orders", "payments"], b"abc", [("orders", 1)], 3, "r"), 3)
    for cut in range(2, len(good)):
        with pytest.raises(DecodeError) as e:
            P.decode_subscription(good[:cut])
        assert e.value.offset is not None and 2 <= e.value.offset <= cut
    with pytest.raises(DecodeError):
        P.decode_subscription(b"\x00\x03\x7f\xff\xff\xff")    # 2**31-1 topics claimed
    with pytest.raises(EncodeError):
        P.encode_subscription(P.Subscription(["t"]), -1)


def test_encoder_orders_like_kafka():
    sub = P.Subscription(["zeta", "alpha", "Mid"], None,
                         [("zeta", 3), ("alpha", 1), ("zeta", 0), ("alpha", 0)], 42, "rack")
    s = P.decode_subscription(P.encode_subscription(sub))
    assert s.topics == ["Mid", "alpha", "zeta"]
    assert s.owned_partitions == [("alpha", 0), ("alpha", 1), ("zeta", 0), ("zeta", 3)]
    assert P.decode_subscription(P.encode_subscription(sub, sort=False)).topics == ["zeta", "alpha", "Mid"]
    a = P.decode_assignment(P.encode_assignment(P.Assignment([("b", 1), ("a", 0), ("b", 0)])))
    assert a.partitions == [("b", 1), ("b", 0), ("a", 0)]   # grouped, first-appearance order


# --------------------------------------------------------------- StickyAssignor user data

@pytest.mark.parametrize("form", ["java", "kafka-python"])
@pytest.mark.parametrize("gen", [None, 0, 7])
def test_sticky_user_data_round_trip(form, gen):
    parts = [P.TopicPartition("orders", 0), P.TopicPartition("orders", 5), P.TopicPartition("日本", 1)]
    data = P.encode_sticky_user_data(parts, gen, form=form)
    ud = P.decode_sticky_user_data(data)
    assert ud.partitions == parts and ud.generation == gen and ud.form == form
    assert ud.version == (0 if gen is None else 1)


def test_sticky_user_data_matches_kafka_python_3():
    ud_mod = pytest.importorskip("kafka.coordinator.assignors.sticky.user_data")
    ref = ud_mod.StickyAssignorUserData([("t", [0, 1]), ("u", [3])], 5).encode()
    assert P.encode_sticky_user_data([("t", 0), ("t", 1), ("u", 3)], 5, form="kafka-python") == ref
    d = P.decode_sticky_user_data(ref)
    assert (d.form, d.generation, d.partitions) == ("kafka-python", 5, [("t", 0), ("t", 1), ("u", 3)])
    back = ud_mod.StickyAssignorUserData.decode(P.encode_sticky_user_data([("x", 2)], 9, form="kafka-python"))
    assert back.generation == 9 and [(tp.topic, list(tp.partitions)) for tp in back.previous_assignment] == [("x", [2])]


@pytest.mark.parametrize("data", [None, b"", b"\x00", b"\x00\x00\x00\x05\x00", b"\xff" * 9])
def test_sticky_user_data_unreadable_means_nothing_owned(data):
    ud = P.decode_sticky_user_data(data)
    assert ud.partitions == [] and ud.generation is None


def test_sticky_user_data_java_v1_with_trailing_is_lenient():
    data = P.encode_sticky_user_data([("t", 1)], 3) + b"\x01\x02\x03"
    ud = P.decode_sticky_user_data(data)
    assert ud.partitions == [("t", 1)] and ud.generation == 3


# --------------------------------------------------------------- real groups (fixtures)

def _classic_consumer_groups():
    """(group, generation, protocol, [(member dict)]) for each classic consumer-group
    GroupMetadataValue in the fixtures."""
    offsets = pytest.importorskip("kcodec.offsets", reason="the __consumer_offsets reader is not there yet")
    path = require(fixtures_dir() / "consumer_offsets" / "records.jsonl")
    out = []
    for r in read_jsonl(path):
        if not r.get("value_hex") or not r.get("key_hex"):
            continue
        rec = offsets.decode_record(bytes.fromhex(r["key_hex"]), bytes.fromhex(r["value_hex"]), errors="report")
        if rec.record_type != 2 or not rec.value or rec.value.get("protocolType") != "consumer":
            continue
        if rec.value.get("members"):
            out.append((rec.group_id, rec.value["generation"], rec.value["protocol"], rec.value["members"]))
    return out


def _clients() -> Dict[str, str]:
    p = fixtures_dir() / "consumer_offsets" / "groups.json"
    if not p.exists():
        return {}
    out = {}
    for s in json.loads(p.read_text()).get("scenarios", []):
        if "group" in s and "client" in s:
            out.setdefault(s["group"], s["client"])
    return out


def _oracle() -> Dict[tuple, dict]:
    """kafka-dump-log's decoding of classic group members: (group, generation, member) -> member."""
    p = fixtures_dir() / "consumer_offsets" / "kafka-dump-log.txt"
    out = {}
    if not p.exists():
        return out
    for line in p.read_text(encoding="utf-8").splitlines():
        m = re.search(r'key: (\{.*?\}) payload: (\{.*\})\s*$', line)
        if not m:
            continue
        try:
            key, payload = json.loads(m.group(1)), json.loads(m.group(2))
        except ValueError:
            continue
        if str(key.get("type")) != "2" or not isinstance(payload.get("data"), dict):
            continue
        data = payload["data"]
        for mem in data.get("members") or []:
            out[(key["data"]["group"], data.get("generation"), mem.get("memberId"))] = mem
    return out


def _partition_counts(groups) -> Dict[str, int]:
    """Partitions per topic as the clients saw them: every partition any member of any
    generation was assigned or owned."""
    counts: Dict[str, int] = {}
    for _, _, _, members in groups:
        for mem in members:
            for tp in (P.decode_assignment(mem["assignment"]).partitions
                       + P.decode_subscription(mem["subscription"]).owned_partitions):
                counts[tp.topic] = max(counts.get(tp.topic, 0), tp.partition + 1)
    return counts


# clients whose leaders run Kafka's own assignor algorithms (librdkafka's sticky assignor is
# a port of Java's); kafka-python's sticky keeps owned partitions in topic order where Java
# 4.1.1 sorts them by partition, then topic, so its choices may differ within balance
EXACT_STICKY_CLIENTS = ("Java", "confluent-kafka")


def test_fixture_member_metadata_round_trips_and_feeds_assignors():
    from kcodec.consumer.assignors import assign
    groups = _classic_consumer_groups()
    if not groups:
        pytest.skip("no classic consumer groups in the fixtures")
    oracle = _oracle()
    clients = _clients()
    counts = _partition_counts(groups)
    checked = exact = 0
    for group, generation, protocol, members in groups:
        subs, asgs = {}, {}
        for mem in members:
            sb, ab = mem["subscription"], mem["assignment"]
            raw_s, raw_a = P.read_subscription_raw(sb), P.read_assignment_raw(ab)
            assert P.write_raw(raw_s) == sb and P.write_raw(raw_a) == ab
            s, a = P.decode_subscription(sb), P.decode_assignment(ab)
            if "Java" in clients.get(group, ""):
                # Kafka's own client: our canonical encoder writes the same bytes, but for
                # what Kafka itself normalises on reading: an empty rack is no rack, so
                # Kafka's own rewrite carries a null rack (the byte-exact path is write_raw)
                expected = sb
                if raw_s.value.get("rackId") == "":
                    expected = P.write_raw(raw_s._replace(value=dict(raw_s.value, rackId=None)))
                assert P.encode_subscription(s, s.version) == expected
                assert P.encode_assignment(a, a.version) == ab
            o = oracle.get((group, generation, mem["memberId"]))
            if o is not None:
                assert kcodec.to_kafka_json(raw_s.schema, raw_s.value, raw_s.parsed_version) == o["subscription"]
                assert kcodec.to_kafka_json(raw_a.schema, raw_a.value, raw_a.parsed_version) == o["assignment"]
            s.group_instance_id = mem.get("groupInstanceId")
            subs[mem["memberId"]] = s
            asgs[mem["memberId"]] = a
            checked += 1
        if protocol not in ("range", "roundrobin", "sticky", "cooperative-sticky"):
            continue
        topics = {t: counts[t] for s in subs.values() for t in s.topics if t in counts}
        r = assign(protocol, subs, topics)
        target = r.target_assignment()
        seen = [tp for parts in target.values() for tp in parts]
        assert len(seen) == len(set(seen)) == sum(topics.values())
        sizes = [len(v) for v in target.values()]
        assert max(sizes) - min(sizes) <= 1       # these groups subscribe alike
        theirs = {m: sorted(a.partitions) for m, a in asgs.items()}
        if not any(theirs.values()):
            continue                              # the leader had no topic metadata yet
        if protocol in ("range", "roundrobin") or any(c in clients.get(group, "") for c in EXACT_STICKY_CLIENTS):
            # what the client's leader handed out in this round, exactly
            assert {m: sorted(v) for m, v in r.assignment().items()} == theirs, (group, generation)
            exact += 1
    assert checked > 0 and exact > 0
