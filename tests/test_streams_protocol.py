"""Streams rebalance user data against Kafka 4.1.1's own bytes (vectors) and a real
broker's ``__consumer_offsets`` (fixtures)."""
from __future__ import annotations

import uuid

import pytest

from kcodec.errors import DecodeError, EncodeError
from kcodec.offsets import decode_record, to_json
from kcodec import streams as ks
from kcodec.streams import (AssignmentInfo, HostInfo, SubscriptionInfo, TaskId, TopicPartition,
                            assignment_to_json, decode_assignment, decode_subscription, encode_assignment,
                            encode_subscription, subscription_to_json)

from ._shared import fixtures_dir, read_jsonl, require, vectors_dir


def _vectors():
    path = vectors_dir() / "streams.jsonl"
    return read_jsonl(path)


VECTORS = _vectors()
DECODABLE = [v for v in VECTORS if "hex" in v]


@pytest.mark.parametrize("vec", DECODABLE, ids=[v["id"] for v in DECODABLE])
def test_vector_decodes_to_kafka_json_and_reencodes(vec):
    data = bytes.fromhex(vec["hex"])
    expected = {k: x for k, x in vec["decoded"].items() if k != "java_toString"}
    sub = vec["kind"].startswith("subscription")
    dec, to_json_, enc = ((decode_subscription, subscription_to_json, encode_subscription) if sub
                          else (decode_assignment, assignment_to_json, encode_assignment))
    if "java_exception" in expected:
        with pytest.raises(DecodeError) as e:
            dec(data)
        assert e.value.offset == 0 and e.value.path == "version"
        return
    value = dec(data)
    assert to_json_(value) == expected
    assert enc(value) == data


def test_vectors_cover_every_kind():
    if not VECTORS:
        pytest.skip("no vectors")
    kinds = {v["kind"] for v in VECTORS}
    assert {"subscription", "assignment", "assignment-version-probing", "subscription-future"} <= kinds


@pytest.mark.parametrize("vec", [v for v in VECTORS if v["kind"] in ("subscription-error", "assignment-error")],
                         ids=lambda v: v["id"])
def test_version_12_is_refused_when_writing(vec):
    with pytest.raises(EncodeError):
        if vec["kind"] == "subscription-error":
            encode_subscription(SubscriptionInfo(12, 12))
        else:
            encode_assignment(AssignmentInfo(12))


@pytest.mark.parametrize("vec", [v for v in DECODABLE if v["kind"] in ("subscription", "assignment")],
                         ids=lambda v: v["id"])
def test_every_truncation_raises_decode_error_with_offset(vec):
    data = bytes.fromhex(vec["hex"])
    dec = decode_subscription if vec["kind"] == "subscription" else decode_assignment
    for cut in range(len(data)):
        try:
            dec(data[:cut])
        except DecodeError as e:
            assert e.offset is not None and 0 <= e.offset <= cut
            assert e.path
        else:   # a cut can only succeed at the end of a message: never for these
            pytest.fail(f"{cut} bytes decoded")


def test_absurd_counts_fail_before_allocating():
    data = bytes.fromhex("0000000b0000000b7fffffff")
    with pytest.raises(DecodeError) as e:
        decode_assignment(data)
    assert e.value.path == "activeTasks" and e.value.offset == 8


def test_named_topologies_need_v10():
    a = AssignmentInfo(9, active_tasks=[TaskId(0, 1, "topo")])
    with pytest.raises(EncodeError):
        encode_assignment(a)
    a.version = 10
    assert decode_assignment(encode_assignment(a)).active_tasks == [TaskId(0, 1, "topo")]


def test_round_trip_built_values_every_version():
    sums = {TaskId(0, 0): -2, TaskId(0, 1): 10, TaskId(2, 3): -3}
    for v in range(1, 12):
        s = SubscriptionInfo(v, 11 if v >= 3 else -1, uuid.uuid4(), "h:1", sums, client_tags={"az": "a"})
        back = decode_subscription(encode_subscription(s))
        assert back.prev_tasks == [TaskId(0, 0)]
        assert set(back.standby_tasks) == {TaskId(0, 1), TaskId(2, 3)}
        tps = [TopicPartition("t", 0)]
        a = AssignmentInfo(v, 11, [TaskId(0, 0)], {TaskId(0, 1): [TopicPartition("t", 1)]},
                           {HostInfo("h", 1): tps}, {HostInfo("h", 1): [TopicPartition("t", 1)]}, 0, 5)
        b = decode_assignment(encode_assignment(a))
        assert b.active_tasks == a.active_tasks and b.standby_tasks == a.standby_tasks
        assert b.partitions_by_host == (a.partitions_by_host if v >= 2 else {})
        assert b.standby_partitions_by_host == (a.standby_partitions_by_host if v >= 6 else {})
        assert b.next_rebalance_ms == (5 if v >= 7 else (1 << 63) - 1)


def test_streams_group_in_broker_fixture_decodes_completely():
    path = require(fixtures_dir() / "consumer_offsets" / "records.jsonl")
    seen = 0
    for r in read_jsonl(path):
        value = None if r["value_hex"] is None else bytes.fromhex(r["value_hex"])
        rec = decode_record(bytes.fromhex(r["key_hex"]), value)
        if rec.members is None:
            continue
        streams = rec.value["protocol"] == ks.ASSIGNOR_NAME
        for m in rec.members:
            for kind in ("subscription", "assignment"):
                e = m[kind]
                assert e.error is None
                # Streams metadata on the Streams group, and nowhere else
                assert (ks.STREAMS_KEY in e.value) == streams
                if streams:
                    seen += 1
                    info = e.value[ks.STREAMS_KEY]
                    enc = encode_subscription if kind == "subscription" else encode_assignment
                    assert enc(info) == e.value["userData"]
        if streams:
            rows = ks.decode_member_metadata(rec.value)
            assert all(row["subscription"]["version"] == 11 for row in rows)
            assert to_json(rec)["payload"]["data"]["protocol"] == "stream"
    assert seen > 0


def _group_record(protocol, user_data):
    import struct

    import kcodec
    from kcodec.consumer import Subscription, encode_subscription as enc_consumer
    sub = enc_consumer(Subscription(["t"], user_data))
    gm = kcodec.encode("GroupMetadataValue", {
        "protocolType": "consumer", "generation": 1, "protocol": protocol, "leader": "m",
        "members": [{"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
                     "rebalanceTimeout": 1, "subscription": sub, "assignment": b""}]}, 3)
    key = struct.pack(">h", 2) + kcodec.encode("GroupMetadataKey", {"group": "g"}, 0)
    return decode_record(key, struct.pack(">h", 3) + gm)


def test_streams_decoder_keyed_by_protocol_name():
    from kcodec.offsets import protocol_decoder
    assert protocol_decoder("consumer", "stream") is not protocol_decoder("consumer")
    assert protocol_decoder("consumer", "range") is protocol_decoder("consumer")
    ks.register()                                   # idempotent
    assert protocol_decoder("consumer", "stream").subscription.__wrapped__ is protocol_decoder("consumer").subscription
    ud = encode_subscription(SubscriptionInfo(11, 11, uuid.UUID(int=7), "h:1"))
    # a plain consumer group is never read as Streams, even when its user data would decode
    e = _group_record("range", ud).members[0]["subscription"]
    assert e.error is None and ks.STREAMS_KEY not in e.value
    e = _group_record("stream", ud).members[0]["subscription"]
    assert e.value[ks.STREAMS_KEY].process_id == uuid.UUID(int=7)
    # a Streams member whose user data is not Streams metadata is flagged, not passed over
    e = _group_record("stream", b"\x00\x00\x00\x0b\x00").members[0]["subscription"]
    assert e.value is None and "Streams subscription user data" in e.error
