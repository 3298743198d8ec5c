"""Public API: registry, version rules, trailing bytes, errors with field path and offset."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

import kcodec
from kcodec import DecodeError, EncodeError, UnknownMessageError, UnsupportedVersionError
from kcodec._program import program


def test_registry_lookups():
    assert kcodec.spec("OffsetCommitValue").type == "coordinator-value"
    assert kcodec.spec_for_api_key(11, "request").name == "JoinGroupRequest"
    assert kcodec.spec_for_api_key(11, "response").name == "JoinGroupResponse"
    # metadata API keys 0-3 exist for KRaft records and tiered storage's remote log metadata
    with pytest.raises(UnknownMessageError, match="ambiguous"):
        kcodec.spec_for_api_key(2, "metadata")
    assert kcodec.spec_for_api_key(2, "metadata", folder="metadata").name == "TopicRecord"
    assert kcodec.spec_for_api_key(2, "metadata", folder="storage").name == "RemotePartitionDeleteMetadataRecord"
    assert kcodec.spec_for_record_type(1, "value", folder="group-coordinator").name == "OffsetCommitValue"
    assert kcodec.spec_for_record_type(2, "key").name == "GroupMetadataKey"
    assert kcodec.spec_for_record_type(0, "key", folder="share-coordinator").name == "ShareSnapshotKey"
    assert kcodec.spec("ZkMigrationStateRecord").name == "ZkMigrationStateRecord"
    assert len(list(kcodec.specs())) == 280
    with pytest.raises(UnknownMessageError):
        kcodec.spec("NoSuchMessage")


def test_version_rules(engine):
    data = kcodec.encode("OffsetCommitValue", {"offset": 5, "metadata": "m", "commitTimestamp": 9}, 4)
    with pytest.raises(UnsupportedVersionError):
        kcodec.decode("OffsetCommitValue", data, 5)
    r = kcodec.read("OffsetCommitValue", data, 5, newer="latest")
    assert r.newer_than_known and r.value["offset"] == 5 and r.size == len(data)
    assert kcodec.decode("OffsetCommitValue", data, 4)["leaderEpoch"] == -1
    with pytest.raises(UnsupportedVersionError):
        kcodec.encode("OffsetCommitValue", {}, -1)


def test_trailing_bytes():
    data = kcodec.encode("OffsetCommitValue", {"offset": 1}, 3) + b"\x00\x01"
    with pytest.raises(DecodeError) as ei:
        kcodec.decode("OffsetCommitValue", data, 3)
    assert ei.value.offset == len(data) - 2 and "trailing" in str(ei.value)
    r = kcodec.read("OffsetCommitValue", data, 3, trailing="allow")
    assert r.trailing == b"\x00\x01" and r.value["offset"] == 1


def test_value_mapping():
    tid = uuid.uuid4()
    v = kcodec.decode("OffsetCommitValue",
                      kcodec.encode("OffsetCommitValue", {"offset": 7, "topicId": tid}, 4), 4)
    assert v == {"offset": 7, "leaderEpoch": -1, "metadata": "", "commitTimestamp": 0, "topicId": tid}
    j = kcodec.to_kafka_json("OffsetCommitValue", v, 4)
    assert j["topicId"] == kcodec.uuid_to_kafka(tid) and len(j["topicId"]) == 22
    assert kcodec.from_kafka_json("OffsetCommitValue", j, 4) == v


@pytest.mark.parametrize("cut", range(0, 20))
def test_truncation_names_field_and_offset(engine, cut):
    prog = program("OffsetCommitValue", 3)
    data = kcodec.encode("OffsetCommitValue", {"offset": 1, "metadata": "abc", "commitTimestamp": 2}, 3)
    if cut >= len(data):
        return
    with pytest.raises(DecodeError) as ei:
        engine.decode(prog, data[:cut], 0)
    e = ei.value
    assert e.message == "OffsetCommitValue" and e.version == 3
    assert e.path in ("offset", "leaderEpoch", "metadata", "commitTimestamp")
    assert 0 <= e.offset <= cut


def test_nested_path_in_error(engine):
    prog = program("ConsumerProtocolSubscription", 1)
    value = {"topics": ["a", "b"], "userData": None,
             "ownedPartitions": [{"topic": "a", "partitions": [1, 2, 3]}]}
    data = engine.encode(prog, value)
    with pytest.raises(DecodeError) as ei:
        engine.decode(prog, data[:-3], 0)
    assert ei.value.path.startswith("ownedPartitions[0].partitions")


def test_absurd_lengths(engine):
    prog = program("ConsumerProtocolSubscription", 0)
    with pytest.raises(DecodeError, match="elements"):
        engine.decode(prog, b"\x7f\xff\xff\xff", 0)             # 2 billion topics, 0 bytes
    with pytest.raises(DecodeError):
        engine.decode(prog, b"\x00\x00\x00\x01\x7f\xff", 0)      # string longer than Kafka allows
    with pytest.raises(DecodeError, match="null"):
        engine.decode(prog, b"\x00\x00\x00\x01\xff\xff", 0)      # null in a non-nullable string
    prog = program("OffsetCommitValue", 4)
    with pytest.raises(DecodeError, match="varint"):
        engine.decode(prog, bytes(12) + b"\xff\xff\xff\xff\xff\x01", 0)


def test_invalid_utf8(engine):
    prog = program("ConsumerProtocolSubscription", 0)
    with pytest.raises(DecodeError, match="UTF-8") as ei:
        engine.decode(prog, b"\x00\x00\x00\x01\x00\x02\xc3\x28\xff\xff\xff\xff", 0)
    assert ei.value.path == "topics[0]"


def test_known_tag_in_wrong_version(engine):
    # ConsumerGroupHeartbeatRequest has no tags; find a struct with a tag that is regular
    # in this version: build one by hand from a program's bad_tags list.
    for s in kcodec.specs():
        vv = s.valid_versions
        if vv.empty:
            continue
        for v in range(vv.lowest, vv.highest + 1):
            p = program(s.name, v)
            top = p.top
            if top.flexible and top.bad_tags and not top.fields and not top.tagged:
                bad = top.bad_tags[0]
                with pytest.raises(DecodeError, match="not valid"):
                    engine.decode(p, bytes([1, bad, 0]), 0)
                return


def test_tagged_size_mismatch(engine):
    prog = program("OffsetCommitValue", 4)
    good = kcodec.encode("OffsetCommitValue", {"topicId": uuid.UUID(int=1)}, 4)
    bad = bytearray(good)
    bad[-17] = 17          # topicId's size says 17, the uuid is 16
    with pytest.raises(DecodeError):
        engine.decode(prog, bytes(bad) + b"\x00", 0)


def test_encode_errors(engine):
    prog = program("JoinGroupRequest", 7)
    with pytest.raises(EncodeError, match="out of range") as ei:
        engine.encode(prog, {"sessionTimeoutMs": 2**31})
    assert ei.value.path == "sessionTimeoutMs"
    with pytest.raises(EncodeError, match="no field"):
        engine.encode(prog, {"noSuchField": 1})
    with pytest.raises(EncodeError, match="str"):
        engine.encode(prog, {"groupId": 5})
    with pytest.raises(EncodeError):
        engine.encode(prog, {"protocols": [{"name": "x", "metadata": "not bytes"}]})
    # Reason is 8+ and ignorable: silently dropped at v7
    assert engine.encode(prog, {"reason": "x"}) == engine.encode(prog, {})
    # GroupInstanceId is 5+ and not ignorable
    with pytest.raises(UnsupportedVersionError):
        engine.encode(program("JoinGroupRequest", 4), {"groupInstanceId": "static-1"})
    assert engine.encode(program("JoinGroupRequest", 4), {"groupInstanceId": None}) == \
        engine.encode(program("JoinGroupRequest", 4), {})
    with pytest.raises(EncodeError, match="ascending"):
        engine.encode(prog := program("OffsetCommitValue", 4),
                      {"_unknown_tagged_fields": [(9, b""), (5, b"")]})


def test_unknown_tags_roundtrip(engine):
    prog = program("OffsetCommitValue", 4)
    value = {"offset": 1, "_unknown_tagged_fields": [(1, b"x"), (300, b""), (2**32 - 1, b"yz")]}
    data = engine.encode(prog, value)
    back, _ = engine.decode(prog, data, 0)
    assert back["_unknown_tagged_fields"] == value["_unknown_tagged_fields"]
    assert engine.encode(prog, back) == data


def test_nullable_tagged_struct_default_is_empty_struct(engine):
    prog = program("ConsumerGroupMemberMetadataValue", 0)
    empty = engine.decode(prog, engine.encode(prog, {}), 0)[0]
    assert empty["classicMemberMetadata"] == {"sessionTimeoutMs": 0, "supportedProtocols": []}
    data = engine.encode(prog, {"classicMemberMetadata": None})
    assert data.endswith(b"\x01\x00\x01\x00")     # one tag: tag 0, size 1, payload uvarint 0
    assert engine.decode(prog, data, 0)[0]["classicMemberMetadata"] is None


def test_versions_are_int16_and_newer_versions_share_one_program(engine):
    data = kcodec.encode("OffsetCommitValue", {"offset": 1}, 4)
    for bad in (32768, 65535, 2**40, -1):
        with pytest.raises(UnsupportedVersionError):
            kcodec.decode("OffsetCommitValue", data, bad, newer="latest")
    # every version above the newest known reads with the same (newest) layout and program
    assert kcodec.program("OffsetCommitValue", 9, newer="latest") is \
        kcodec.program("OffsetCommitValue", 32767, newer="latest")
    with pytest.raises(DecodeError) as e:
        kcodec.decode("OffsetCommitValue", data[:-3], 9, newer="latest")
    assert e.value.version == 9        # the error names the version on the wire


def test_argument_types_are_checked():
    data = kcodec.encode("OffsetCommitValue", {"offset": 1}, 4)
    for bad in ("4", None, True, 4.0):
        with pytest.raises(TypeError):
            kcodec.decode("OffsetCommitValue", data, bad)
        with pytest.raises(TypeError):
            kcodec.encode("OffsetCommitValue", {}, bad)
    assert kcodec.decode("OffsetCommitValue", data, np.int16(4)) == kcodec.decode("OffsetCommitValue", data, 4)
    with pytest.raises(ValueError, match="trailing"):
        kcodec.decode("OffsetCommitValue", data, 4, trailing="ignore")
    with pytest.raises(ValueError, match="trailing"):
        kcodec.read("OffsetCommitValue", data, 4, trailing=None)


def test_numpy_values_encode_like_python_values(engine):
    prog = program("OffsetCommitValue", 3)
    cols = kcodec.decode_bulk("OffsetCommitValue",
                              [kcodec.encode("OffsetCommitValue", {"offset": 7, "leaderEpoch": 2}, 3)], 3)
    v = {"offset": cols["offset"][0], "leaderEpoch": np.int32(2), "commitTimestamp": np.uint8(5)}
    assert engine.encode(prog, v) == engine.encode(prog, {"offset": 7, "leaderEpoch": 2, "commitTimestamp": 5})
    with pytest.raises(EncodeError, match="integer"):
        engine.encode(prog, {"offset": np.bool_(True)})
    with pytest.raises(EncodeError, match="out of range"):
        engine.encode(prog, {"leaderEpoch": np.int64(2**40)})
    quota = program("ClientQuotaRecord", 0)
    assert engine.encode(quota, {"key": "k", "value": np.float32(1.5), "remove": np.bool_(True)}) == \
        engine.encode(quota, {"key": "k", "value": 1.5, "remove": True})


@pytest.mark.parametrize("bad", ["0001", None, 5, 3.5, [0, 1], {"a": 1}, -1, 2**70])
def test_wrong_data_types_are_kcodec_type_errors(engine, monkeypatch, bad):
    """Where bytes belong, anything not bytes-like is an ArgumentTypeError (a KcodecError
    and a TypeError) naming the argument and the type given; an int is never N zero bytes
    and a list of ints never their bytes."""
    from kcodec import consumer, kraft, offsets, streams
    from kcodec.errors import ArgumentTypeError
    monkeypatch.setattr(kcodec, "_engine", engine)
    got = "None" if bad is None else type(bad).__name__
    key = kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}, 0)
    calls = {"data": [lambda x: kcodec.decode("OffsetCommitValue", x, 4),
                      lambda x: kcodec.read("OffsetCommitValue", x, 4),
                      consumer.decode_subscription, consumer.decode_assignment,
                      streams.decode_subscription, streams.decode_assignment, kraft.read_record],
             "key": [lambda x: offsets.decode_record(x, None)],
             "value": [lambda x: offsets.decode_record(b"\x00\x01" + key, x)]}
    if bad is None:
        del calls["key"], calls["value"]    # a null key is a record that does not decode, a null value a tombstone
    for arg, fns in calls.items():
        for f in fns:
            with pytest.raises(ArgumentTypeError) as e:
                f(bad)
            assert isinstance(e.value, TypeError) and isinstance(e.value, kcodec.KcodecError)
            assert str(e.value).startswith(f"{arg}: expected a bytes-like object") and f"got {got}" in str(e.value)
            assert "memoryview:" not in str(e.value)


def test_bytes_like_data_is_accepted_and_other_arguments_are_checked(engine, monkeypatch):
    import array
    from kcodec import kraft, offsets
    from kcodec.errors import ArgumentTypeError
    monkeypatch.setattr(kcodec, "_engine", engine)
    data = kcodec.encode("OffsetCommitValue", {"offset": 1}, 4)
    for like in (bytearray(data), memoryview(data), array.array("B", data), np.frombuffer(data, np.uint8)):
        assert kcodec.decode("OffsetCommitValue", like, 4)["offset"] == 1
    rec = kraft.encode_record("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 27}, 0)
    assert kraft.read_record(bytearray(rec)).value["featureLevel"] == 27
    k = b"\x00\x01" + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}, 0)
    assert offsets.decode_record(memoryview(k), bytearray(b"\x00\x04" + data)).key["group"] == "g"
    for bad in ([1], None, b"OffsetCommitValue"):
        with pytest.raises(ArgumentTypeError, match="^name: expected a message name"):
            kcodec.decode(bad, data, 4)
    with pytest.raises(ArgumentTypeError, match="^version: expected an int, got str"):
        kcodec.decode("OffsetCommitValue", data, "4")
    # decode_bulk: one bytes-like object is not a list of rows (iterating it gives ints)
    for one in (bytearray(data), data, memoryview(data)):
        with pytest.raises(ArgumentTypeError, match=r"^values: .* got one \w+: pass \[data\]"):
            kcodec.decode_bulk("OffsetCommitValue", one, 4)
    with pytest.raises(ArgumentTypeError, match=r"^values\[1\]: expected a bytes-like object .* got int"):
        kcodec.decode_bulk("OffsetCommitValue", [data, 5], 4)
    with pytest.raises(ArgumentTypeError, match=r"^values: .* got str"):
        kcodec.decode_bulk("OffsetCommitValue", "00", 4)
    with pytest.raises(ArgumentTypeError, match=r"^source: cannot read records from int"):
        offsets.fold_log(5)
