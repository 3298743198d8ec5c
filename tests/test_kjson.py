"""Kafka's JSON form: the compiled converters give exactly what the plain definition gives
(each field converted in schema order; compared as ``json.dumps`` text, so key order
counts), for every vector and for values of unexpected types."""
from __future__ import annotations

import base64
import enum
import json
import math
import uuid

import pytest

import kcodec
from kcodec._kjson import to_kafka_json, uuid_to_kafka
from kcodec._program import T_ARRAY, T_BYTES, T_FLOAT64, T_RECORDS, T_STRUCT, T_UUID, is_default_value, program

from ._shared import read_jsonl, vectors_dir

VECTORS = [(f, v) for f in ("messages", "unknown_tags") for v in read_jsonl(vectors_dir() / f"{f}.jsonl")]
VECTORS += [("frame", dict(v, hex=v["body_hex"])) for v in read_jsonl(vectors_dir() / "metadata_frames.jsonl")
            if v.get("kind") == "frame"]


def _ref(prog, t, arg, v):
    """The definition, field by field (what the compiled converters must equal)."""
    if v is None:
        return None
    if t == T_UUID:
        return uuid_to_kafka(v)
    if t in (T_BYTES, T_RECORDS):
        return base64.b64encode(bytes(v)).decode("ascii")
    if t == T_STRUCT:
        return _ref_struct(prog, arg, v)
    if t == T_ARRAY:
        return [_ref(prog, arg & 0xFF, arg >> 8, x) for x in v]
    return v


def _ref_struct(prog, sidx, value):
    out = {}
    for f in prog.structs[sidx].ordered:
        if f.tagged:
            v = value.get(f.name, f.default)
            if is_default_value(f.default, v):
                continue
        else:
            v = value[f.name] if f.name in value else f.default
        out[f.name] = _ref(prog, f.type, f.arg, v)
    return out


def _check(prog, value):
    ref = _ref_struct(prog, 0, value)
    got = to_kafka_json(prog, value)
    text = json.dumps(ref, ensure_ascii=False)
    assert json.dumps(got, ensure_ascii=False) == text     # same values, same key order
    return got


@pytest.mark.parametrize("vec", [v for _, v in VECTORS], ids=[f"{f}:{v.get('id')}" for f, v in VECTORS])
def test_every_vector(engine, vec):
    prog = program(vec["schema"], vec["version"])
    data = bytes.fromhex(vec["hex"])
    value, _ = engine.decode(prog, data, 0)
    assert _check(prog, value) == vec["json"]


def _member(**kw):
    m = {"memberId": "m-1", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
         "rebalanceTimeout": 1, "sessionTimeout": 2, "subscription": b"\x00\x01", "assignment": b""}
    m.update(kw)
    return m


class _Level(enum.IntEnum):
    HIGH = 3


class _Name(str):
    pass


@pytest.mark.parametrize("member", [
    _member(),
    _member(sessionTimeout=True),                       # a bool where an int goes
    _member(sessionTimeout=_Level.HIGH),                # an int subclass
    _member(clientId=_Name("sub-class"), clientHost="é \" \n \u2028 \x01"),
    _member(subscription=bytearray(b"\x01\x02"), assignment=memoryview(b"xyz")),
    _member(groupInstanceId=None, subscription=None),
    {"memberId": "only"},                              # missing fields take their defaults
    dict(_member(), extra="kept out"),
])
def test_odd_values_take_the_general_route(member):
    prog = kcodec.program("GroupMetadataValue", 3)
    _check(prog, {"protocolType": "consumer", "generation": 1, "protocol": None, "leader": "m-1",
                  "currentStateTimestamp": -1, "members": [member, member]})


@pytest.mark.parametrize("topics", [["a", "b"], ("a", "b"), ["a", None], [], ["ü", "\x00"]])
@pytest.mark.parametrize("partitions", [[0, -1, 2**31 - 1], (1, 2), [1, True], [1, None], [], [[1]]])
def test_arrays_of_strings_and_ints(topics, partitions):
    prog = kcodec.program("ConsumerProtocolSubscription", 3)
    _check(prog, {"topics": topics, "userData": None,
                  "ownedPartitions": [{"topic": "t", "partitions": partitions}, None],
                  "generationId": -1, "rackId": "r"})


def _first_program(has):
    for spec in kcodec.specs():
        vv = spec.valid_versions
        if not vv.empty:
            prog = kcodec.program(spec.name, vv.highest)
            if any(has(f) for sp in prog.structs for f in sp.ordered):
                return prog
    pytest.skip("no such field in the specs")


def test_tagged_fields_uuids_and_floats():
    # tagged fields at their default are left out, the others written in schema order
    prog = _first_program(lambda f: f.tagged and f.type in (T_BYTES, T_UUID) and not f.nullable)
    value = kcodec.decode(prog.name, kcodec.encode(prog.name, {}, prog.version), prog.version)
    _check(prog, value)
    for f in prog.top.ordered:
        if f.tagged and f.type in (T_BYTES, T_UUID):
            _check(prog, dict(value, **{f.name: uuid.UUID(int=9) if f.type == T_UUID else b"\x07"}))
    _check(kcodec.program("TopicRecord", 0), {"name": "t", "topicId": uuid.UUID(int=7)})
    prog = _first_program(lambda f: f.type == T_FLOAT64)
    value = kcodec.decode(prog.name, kcodec.encode(prog.name, {}, prog.version), prog.version)
    for f in prog.top.ordered:
        if f.type == T_FLOAT64:
            for x in (0.5, math.nan, -math.inf, 1e300, 3):
                _check(prog, dict(value, **{f.name: x}))


def test_unserialisable_values_fail_as_json_dumps_does():
    prog = kcodec.program("ConsumerProtocolSubscription", 3)
    bad = {"topics": [], "userData": None, "ownedPartitions": [], "generationId": object(), "rackId": None}
    with pytest.raises(TypeError):
        json.dumps(to_kafka_json(prog, bad))
