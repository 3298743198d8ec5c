"""Release boundaries of the downgrade check, one test per boundary read from Kafka's source
(the tag and file of each fact are cited next to it in kcodec/offsets/downgrade.py)."""
from __future__ import annotations

import struct
import uuid

import pytest

import kcodec
from kcodec.offsets import downgrade
from kcodec.offsets.records import decode_record, record_types

P = downgrade.parse_version


def _key(t: int) -> bytes:
    return struct.pack(">h", t) + kcodec.encode(record_types()[t].key, {}, 0)


def _rec(t: int, value=None, vv: int = 0):
    body = kcodec.encode(record_types()[t].value, value or {}, vv)
    return decode_record(_key(t), struct.pack(">h", vv) + body)


def _outcomes(rec, target: str):
    return [o for o, _ in downgrade.classify(rec, P(target))]


@pytest.mark.parametrize("t", range(3, 9))
def test_consumer_group_records(t):
    rec = _rec(t)
    # 3.4: GroupMetadataManager.readMessageKey throws on an unknown key version
    assert _outcomes(rec, "3.4") == ["fail"]
    # 3.5/3.6: the schemas exist but the default loader makes the key UnknownKey
    assert _outcomes(rec, "3.6") == ["skip"]
    # 3.7: the early-access layouts differ from 3.8's
    assert _outcomes(rec, "3.7") == ["fail"]
    # 3.8/3.9: same layout as 4.1, but only the non-default new coordinator reads them
    for target in ("3.8", "3.9"):
        (outcome, reason), = downgrade.classify(rec, P(target))
        assert outcome == "skip" and "group.coordinator.rebalance.protocols" in reason
    assert _outcomes(rec, "4.0") == []


def test_classic_member_metadata_is_a_3_8_tag():
    assert downgrade.TAGGED_SINCE[(5, 0)] == (3, 8, 0)
    member = _rec(5, {"classicMemberMetadata": {"sessionTimeoutMs": 45000, "supportedProtocols": []}})
    assert _outcomes(member, "4.0") == []


def test_offset_commit_topic_id_is_a_4_1_tag():
    rec = _rec(1, {"offset": 1, "topicId": uuid.UUID(int=1)}, vv=4)
    (outcome, reason), = downgrade.classify(rec, P("4.0"))
    assert outcome == "lose_fields" and "tagged field 0 added in 4.1.0" in reason
    assert _outcomes(rec, "4.1") == []


@pytest.mark.parametrize("t", [10, 12, 13, 14])
def test_share_group_records_with_4_0_layout(t):
    assert _outcomes(_rec(t), "3.9") == ["skip"]
    assert _outcomes(_rec(t), "4.0") == []


@pytest.mark.parametrize("t", [11, 15])
def test_share_group_records_changed_in_4_1(t):
    assert _outcomes(_rec(t), "3.9") == ["skip"]
    assert _outcomes(_rec(t), "4.0") == ["fail"]
    assert _outcomes(_rec(t), "4.1") == []


def test_share_group_partition_metadata_only_in_4_0():
    # type 9 has no schema in 4.1.1: decode it as an unknown type
    rec = decode_record(struct.pack(">h", 9) + b"\x00\x01g", b"\x00\x00\x00")
    assert _outcomes(rec, "3.9") == ["skip"]
    assert _outcomes(rec, "4.0") == []
    (outcome, reason), = downgrade.classify(rec, P("4.1"))
    assert outcome == "skip" and "dropped in 4.1.0" in reason


def test_value_version_boundaries():
    for (t, vv), since in downgrade.VALUE_VERSIONS_SINCE.items():
        if t == 0:
            continue      # key type 0 takes the same values as type 1
        rec = _rec(t, {}, vv)
        assert _outcomes(rec, ".".join(map(str, since))) == [], (t, vv)
    oc = _rec(1, {}, 2)
    assert _outcomes(oc, "2.0") == ["fail"]
    gm = _rec(2, {}, 1)
    assert _outcomes(gm, "0.9") == ["fail"] and _outcomes(gm, "0.10.1") == []
    gm3 = _rec(2, {}, 3)
    assert _outcomes(gm3, "2.1") == ["fail"] and _outcomes(gm3, "2.3") == []
