"""Kafka 4.1.1's own serializer output: decode equals Kafka's JSON, encode equals Kafka's bytes.

Parametrized over whatever records the vector files hold, for every engine.
"""
from __future__ import annotations

import pytest

import kcodec
from kcodec._kjson import from_kafka_json, to_kafka_json
from kcodec._program import program

from ._shared import read_jsonl, vectors_dir

MESSAGES = read_jsonl(vectors_dir() / "messages.jsonl")
UNKNOWN = read_jsonl(vectors_dir() / "unknown_tags.jsonl")
FRAMES = [r for r in read_jsonl(vectors_dir() / "metadata_frames.jsonl") if r.get("kind") == "frame"]


def _ids(rows):
    return [r["id"] for r in rows]


@pytest.mark.parametrize("vec", MESSAGES, ids=_ids(MESSAGES))
def test_message_vector(engine, vec):
    prog = program(vec["schema"], vec["version"])
    data = bytes.fromhex(vec["hex"])
    value, end = engine.decode(prog, data, 0)
    assert end == len(data)
    assert to_kafka_json(prog, value) == vec["json"]
    assert engine.encode(prog, value) == data
    assert engine.encode(prog, from_kafka_json(prog, vec["json"])) == data


@pytest.mark.parametrize("vec", UNKNOWN, ids=_ids(UNKNOWN))
def test_unknown_tags_vector(engine, vec):
    prog = program(vec["schema"], vec["version"])
    data = bytes.fromhex(vec["hex"])
    value, end = engine.decode(prog, data, 0)
    assert end == len(data)
    assert to_kafka_json(prog, value) == vec["json"]
    for group in vec["unknown_tagged_fields"]:
        node = value
        for step in group["path"]:
            node = node[step]
        got = [(tag, payload.hex()) for tag, payload in node.get(kcodec.UNKNOWN_TAGS_KEY, [])]
        assert got == [(f["tag"], f["data_hex"]) for f in group["fields"]]
    # unknown tags round-trip byte-exact; Kafka's JSON (which drops them) gives the bytes without
    assert engine.encode(prog, value) == data
    assert engine.encode(prog, from_kafka_json(prog, vec["json"])).hex() == vec["hex_without_unknown"]


@pytest.mark.parametrize("vec", FRAMES, ids=_ids(FRAMES))
def test_metadata_record_body(engine, vec):
    prog = program(vec["schema"], vec["version"])
    data = bytes.fromhex(vec["body_hex"])
    value, end = engine.decode(prog, data, 0)
    assert end == len(data)
    assert to_kafka_json(prog, value) == vec["json"]
    assert engine.encode(prog, value) == data


def test_every_valid_version_has_a_program():
    """Every valid version of every shipped spec compiles."""
    n = 0
    for s in kcodec.specs():
        vv = s.valid_versions
        if vv.empty:
            continue
        for v in range(vv.lowest, vv.highest + 1):
            program(s.name, v)
            n += 1
    assert n >= 700
