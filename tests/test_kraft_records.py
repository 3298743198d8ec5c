"""__cluster_metadata records: the fixture log and snapshot against kafka-dump-log's output,
and Kafka's MetadataRecordSerde vectors byte for byte."""
from __future__ import annotations

import base64

import pytest

import kcodec
from kcodec.kraft import dump_lines, encode_record, iter_log, read_record, to_json
from kcodec.kraft.records import record_type_name

from ._shared import fixtures_dir, read_jsonl, vectors_dir

META = fixtures_dir() / "cluster_metadata"
SEGMENTS = META / "segments"
FRAMES = [v for v in read_jsonl(vectors_dir() / "metadata_frames.jsonl")]

needs_fixture = pytest.mark.skipif(not META.exists(), reason="no cluster_metadata fixture")


@needs_fixture
def test_dump_matches_kafka_dump_log():
    expected = (META / "kafka-dump-log.txt").read_text().splitlines()
    got = list(dump_lines(SEGMENTS / "bootstrap.checkpoint", display_name="bootstrap.checkpoint"))
    got += list(dump_lines(SEGMENTS / "__cluster_metadata-0" / "00000000000000000000.log",
                           display_name="__cluster_metadata-0/00000000000000000000.log"))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g == e


@needs_fixture
def test_every_fixture_record_decodes_and_reencodes():
    rows = read_jsonl(META / "segment_records.jsonl")
    n = 0
    for row in rows:
        if row["batch"]["is_control"]:
            continue
        raw = bytes.fromhex(row["value_hex"])
        mr = read_record(raw)
        assert mr.status == "ok", (row["offset"], mr.error)
        assert encode_record(mr.type, mr.value, mr.version) == raw
        n += 1
    assert n > 2000


@needs_fixture
def test_iter_log_reads_control_records():
    entries = list(iter_log(SEGMENTS / "bootstrap.checkpoint"))
    assert entries[0].control_type == 3 and entries[0].control == {
        "version": 0, "lastContainedLogTimestamp": 0}
    assert entries[-1].control_type == 4
    assert [e.record.value["name"] for e in entries[1:-1]] == [
        "metadata.version", "eligible.leader.replicas.version", "group.version",
        "transaction.version"]


@pytest.mark.parametrize("vec", [v for v in FRAMES if v["kind"] == "frame"], ids=lambda v: v["id"])
def test_metadata_frame_vectors(vec):
    raw = bytes.fromhex(vec["hex"])
    mr = read_record(raw)
    assert mr.status == "ok"
    assert (mr.api_key, mr.version, mr.type) == (vec["api_key"], vec["version"], vec["schema"])
    assert kcodec.to_kafka_json(mr.type, mr.value, mr.version) == vec["json"]
    assert encode_record(mr.type, mr.value, mr.version) == raw
    assert encode_record(vec["api_key"], mr.value, mr.version) == raw


@pytest.mark.parametrize("vec", [v for v in FRAMES if v["kind"] != "frame"], ids=lambda v: v["id"])
def test_metadata_frame_probes(vec):
    mr = read_record(bytes.fromhex(vec["hex"]))
    if vec["java_result"] == "decoded":
        assert mr.ok and mr.api_key == vec["decoded_api_key"]
        assert mr.version == vec["decoded_version"]
        assert mr.status == "newer_version"     # reported, decoded with the newest layout
    else:
        assert not mr.ok
        if "Unknown metadata id" in vec["java_exception"]:
            assert mr.status == "unknown_type" and mr.error == "Unknown metadata id 127"
        if "frame version 0" in vec["java_exception"]:
            assert "Could not deserialize metadata record with frame version 0" in mr.error


def test_unknown_and_malformed_records_are_reported_not_fatal():
    assert read_record(b"\x01\x63\x00abc").status == "unknown_type"
    bad = read_record(b"\x01\x02\x00\x05")
    assert bad.status == "error" and bad.raw == b"\x01\x02\x00\x05"
    assert read_record(b"\x02\x02\x00").status == "error"
    assert record_type_name(12) == "FEATURE_LEVEL_RECORD"
    assert record_type_name(21) == "ZK_MIGRATION_STATE_RECORD"


def test_to_json_is_jacksons_compact_form():
    assert to_json("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 27}, 0) == \
        '{"name":"metadata.version","featureLevel":27}'


@needs_fixture
def test_iter_record_columns_covers_every_record():
    from kcodec.kraft import iter_record_columns
    counts = {}
    for name, _ver, cols in iter_record_columns(SEGMENTS / "__cluster_metadata-0"):
        assert cols["_error"].null_count == len(cols)
        counts[name] = counts.get(name, 0) + len(cols["offset"])
    assert counts["PartitionChangeRecord"] == 902 and counts["PartitionRecord"] == 184
    dump = (META / "kafka-dump-log.txt").read_text().split("Dumping __cluster_metadata-0")[1]
    assert counts["NoOpRecord"] == 1285
    assert sum(counts.values()) == dump.count(" payload: ")
