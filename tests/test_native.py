"""The native (C) engine specifically: varint kernels, tape edge cases, malformed input,
bulk decoding, and agreement with the pure-Python reference on damaged input.

Data-driven tests run over whatever records the shared vector files hold.
"""
from __future__ import annotations

import copy
import random
import types
import uuid
from array import array

import pytest

from kcodec import _codec_py
from kcodec._program import (F_NULLABLE, MAGIC, T_STRUCT, FieldPlan, Program, StructPlan,
                             program)
from kcodec.errors import DecodeError, EncodeError

from ._shared import read_jsonl, vectors_dir

_native = pytest.importorskip("kcodec._native")

MESSAGES = read_jsonl(vectors_dir() / "messages.jsonl")
UNKNOWN = read_jsonl(vectors_dir() / "unknown_tags.jsonl")
ALL = MESSAGES + UNKNOWN


def _outcome(engine, prog, data):
    try:
        value, end = engine.decode(prog, data, 0)
        return ("ok", value, end)
    except DecodeError as e:
        return ("error", type(e).__name__, str(e), e.path, e.offset)


def _enc_outcome(engine, prog, value):
    try:
        return ("ok", engine.encode(prog, value))
    except Exception as e:      # EncodeError mostly; both engines must raise alike
        return ("error", type(e).__name__, str(e))


# ------------------------------------------------------------------------------------
# varints (facts A.7, Kafka's ByteUtilsTest)

UVARINTS = [(0, "00"), (63, "3f"), (64, "40"), (8191, "ff3f"), (8192, "8040"),
            (1048575, "ffff3f"), (1048576, "808040"), (2**31 - 1, "ffffffff07"),
            (2**31, "8080808008"), (2**32 - 1, "ffffffff0f")]
VARINTS = [(0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"),
           (-65, "8101"), (2**31 - 1, "feffffff0f"), (-2**31, "ffffffff0f")]
VARLONGS = [(0, "00"), (-1, "01"), (2**63 - 1, "feffffffffffffffff01"),
            (-2**63, "ffffffffffffffffff01")]


@pytest.mark.parametrize("value,hexs", UVARINTS)
def test_uvarint_vectors(value, hexs):
    assert _native._write_uvarint(value).hex() == hexs
    assert _native._read_uvarint(bytes.fromhex(hexs)) == (value, len(hexs) // 2)


@pytest.mark.parametrize("value,hexs", VARINTS)
def test_varint_vectors(value, hexs):
    assert _native._write_varint(value).hex() == hexs
    assert _native._read_varint(bytes.fromhex(hexs)) == (value, len(hexs) // 2)


@pytest.mark.parametrize("value,hexs", VARLONGS)
def test_varlong_vectors(value, hexs):
    assert _native._write_varlong(value).hex() == hexs
    assert _native._read_varlong(bytes.fromhex(hexs)) == (value, len(hexs) // 2)


def test_varint_errors():
    with pytest.raises(ValueError, match="too long"):
        _native._read_uvarint(bytes.fromhex("ffffffffff01"))       # testInvalidVarint
    with pytest.raises(ValueError, match="too long"):
        _native._read_varlong(bytes.fromhex("ff" * 10 + "01"))     # testInvalidVarlong
    with pytest.raises(ValueError, match="truncated"):
        _native._read_uvarint(b"")
    with pytest.raises(ValueError, match="truncated"):
        _native._read_uvarint(b"\x80\x80")
    # the 5th byte's bits above 2^32 are dropped, as Kafka does
    assert _native._read_uvarint(bytes.fromhex("ffffffff7f")) == (2**32 - 1, 5)


# ------------------------------------------------------------------------------------
# vectors: both ways, and every truncation is a DecodeError identical to the reference

@pytest.mark.parametrize("rec", ALL, ids=[r["id"] for r in ALL])
def test_vector_roundtrip_and_truncation(rec):
    prog = program(rec["schema"], rec["version"])
    data = bytes.fromhex(rec["hex"])
    value, end = _native.decode(prog, data, 0)
    assert end == len(data)
    assert value == _codec_py.decode(prog, data, 0)[0]
    assert _native.encode(prog, value) == data
    # also from other buffer types and at an offset
    assert _native.decode(prog, bytearray(b"xx" + data), 2) == (value, end + 2)
    assert _native.decode(prog, memoryview(data), 0)[0] == value
    step = 1 if len(data) <= 600 else 7
    for cut in range(0, len(data), step):
        got = _outcome(_native, prog, data[:cut])
        assert got == _outcome(_codec_py, prog, data[:cut]), cut


def test_random_damage_matches_reference():
    rng = random.Random(7)
    for rec in ALL:
        prog = program(rec["schema"], rec["version"])
        data = bytes.fromhex(rec["hex"])
        for _ in range(3):
            d = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if d:
                    d[rng.randrange(len(d))] = rng.choice([0, 0x7F, 0x80, 0xFF, rng.randrange(256)])
            assert _outcome(_native, prog, bytes(d)) == _outcome(_codec_py, prog, bytes(d)), rec["id"]


_BAD_VALUES = [None, True, 1.5, "x", b"\x00" * 16, -1, 2**31, 2**63, 70000, [], {}, (),
               uuid.UUID(int=5), bytearray(b"ab"), "\ud800", [None], {"zzz": 1},
               [(3, b"x"), (1, b"y")], [(5, b"")], [(1,)], 0]


def _paths(v, path=()):
    if isinstance(v, dict):
        for k, x in v.items():
            yield path + (k,)
            yield from _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield path + (i,)
            yield from _paths(x, path + (i,))


def test_encode_errors_match_reference():
    rng = random.Random(11)
    for rec in ALL:
        prog = program(rec["schema"], rec["version"])
        value = _codec_py.decode(prog, bytes.fromhex(rec["hex"]), 0)[0]
        paths = list(_paths(value))
        for _ in range(3):
            v = copy.deepcopy(value)
            if paths and rng.random() < 0.8:
                p = rng.choice(paths)
                tgt = v
                for q in p[:-1]:
                    tgt = tgt[q]
                tgt[p[-1]] = rng.choice(_BAD_VALUES)
            else:
                v[rng.choice(["bogus", "_unknown_tagged_fields"])] = rng.choice(_BAD_VALUES)
            assert _enc_outcome(_native, prog, v) == _enc_outcome(_codec_py, prog, v), rec["id"]


# ------------------------------------------------------------------------------------
# malformed input

def _prog_with(pred):
    for rec in MESSAGES:
        p = program(rec["schema"], rec["version"])
        if pred(p, rec):
            return p, bytes.fromhex(rec["hex"])
    pytest.skip("no vector of that shape")


def test_absurd_lengths():
    prog = program("ConsumerProtocolSubscription", 1)
    cases = [b"\x7f\xff\xff\xff",                       # 2 billion topics
             b"\x00\x00\x00\x01\x7f\xff",               # string longer than Kafka allows
             b"\x00\x00\x00\x01\xff\xff",               # null non-nullable string
             b"\x00\x00\x00\x00\x7f\xff\xff\xff",       # 2 GiB of user data, 0 bytes
             b"\x00\x00\x00\x00\xff\xff\xff\xff\x80\x00\x00\x00"]
    for data in cases:
        with pytest.raises(DecodeError) as e:
            _native.decode(prog, data, 0)
        assert _outcome(_native, prog, data) == _outcome(_codec_py, prog, data)
        assert e.value.offset is not None


def test_flexible_absurd_counts():
    prog = program("ConsumerGroupMemberMetadataValue", 0)
    for data in [b"\xff\xff\xff\xff\x0f",                     # compact string len 2^32-2
                 b"\x00" * 3 + b"\xff\xff\xff\xff\x0f",
                 b"\x01\x01\x01\x01\x01\x01\x01\x01\xff\xff\xff\xff\x0f",
                 b"\x80\x80\x80\x80\x80\x01"]:                # varint too long
        assert _outcome(_native, prog, data)[0] == "error"
        assert _outcome(_native, prog, data) == _outcome(_codec_py, prog, data)


def test_tagged_count_and_size_beyond_input():
    prog = program("OffsetCommitValue", 4)
    base = _native.encode(prog, {"offset": 1, "metadata": "m", "commitTimestamp": 2})
    body = base[:-1]
    for tail in [b"\xff\xff\xff\xff\x0f", b"\x01\x00\x7f", b"\x01\x05\x7f\x00",
                 b"\x01\x00\x10" + bytes(15), b"\x01\x00\x11" + bytes(17), b"\x02\x05\x00"]:
        data = body + tail
        assert _outcome(_native, prog, data)[0] == "error"
        assert _outcome(_native, prog, data) == _outcome(_codec_py, prog, data)


def test_invalid_utf8_variants():
    prog = program("ConsumerProtocolSubscription", 0)
    for bad in [b"\xc3\x28", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82",
                b"ok\xff", b"\xf0\x9f\x98\x80ok\x80", b"abcdefgh\xe0\x80\x80"]:
        data = b"\x00\x00\x00\x01" + len(bad).to_bytes(2, "big") + bad + b"\xff\xff\xff\xff"
        got = _outcome(_native, prog, data)
        assert got[0] == "error" and "UTF-8" in got[2]
        assert got == _outcome(_codec_py, prog, data)
    good = "héllo wörld ☃ 😀".encode()
    data = b"\x00\x00\x00\x01" + len(good).to_bytes(2, "big") + good + b"\xff\xff\xff\xff"
    assert _native.decode(prog, data, 0)[0]["topics"] == ["héllo wörld ☃ 😀"]


def test_bad_start_position():
    prog = program("OffsetCommitValue", 3)
    with pytest.raises(DecodeError):
        _native.decode(prog, b"\x00", 5)
    with pytest.raises(DecodeError):
        _native.decode(prog, b"\x00", -1)


def _recursive_program(flexible: bool) -> Program:
    """A synthetic message whose struct nests itself (no Kafka spec does): the depth limit."""
    fp = FieldPlan(name="child", type=T_STRUCT, flags=F_NULLABLE, arg=0, struct=0, default=None)
    sp = StructPlan(name="Node", flexible=flexible, fields=[fp], tagged=[], bad_tags=[],
                    keys=("child",))
    code = array("i", [MAGIC, 1, 3, 1 if flexible else 0, 1, 0, 0, T_STRUCT, F_NULLABLE, 0])
    return Program(types.SimpleNamespace(name="Node"), 0, False, code, [sp])


@pytest.mark.parametrize("flexible", [False, True])
def test_depth_limit(flexible):
    prog = _recursive_program(flexible)
    tail = b"\x00" if flexible else b""

    def nested(depth):
        return b"\x01" * depth + b"\xff" + tail * (depth + 1)

    ok = nested(64)
    value, end = _native.decode(prog, ok, 0)
    assert end == len(ok) and value == _codec_py.decode(prog, ok, 0)[0]
    assert _native.encode(prog, value) == ok
    deep = nested(100000)                   # would blow a naive recursive decoder
    got = _outcome(_native, prog, deep)
    assert got[0] == "error" and "too deep" in got[2]
    assert got == _outcome(_codec_py, prog, deep)
    v = None
    for _ in range(70):
        v = {"child": v}
    with pytest.raises(EncodeError, match="too deep"):
        _native.encode(prog, v)


# ------------------------------------------------------------------------------------
# tagged fields on the tape

def test_unknown_tags_order_and_known_tag_collision():
    prog = program("OffsetCommitValue", 4)
    u = uuid.UUID(int=12345)
    v = {"offset": 1, "metadata": "", "commitTimestamp": 2, "topicId": u,
         "_unknown_tagged_fields": [(0, b"\x01"), (3, b""), (300, b"x" * 200)]}
    # A raw tag equal to a tag the version defines would override or break the known
    # field on reading: Kafka's writer refuses it ("Attempted to use tag 0 as an undefined tag")
    for eng in (_native, _codec_py):
        with pytest.raises(EncodeError, match="undefined tag") as e:
            eng.encode(prog, v)
        assert e.value.path == "_unknown_tagged_fields"
    # so does a tag the struct defines only in other versions (undecodable at this one)
    hb = program("BrokerHeartbeatRequest", 0)       # tag 0 (offlineLogDirs) is 1+
    for eng in (_native, _codec_py):
        with pytest.raises(EncodeError, match="not valid for this version"):
            eng.encode(hb, {"_unknown_tagged_fields": [(0, b"\x01")]})
    v["_unknown_tagged_fields"] = [(5, b""), (2, b"")]
    with pytest.raises(EncodeError, match="ascending"):
        _native.encode(prog, v)
    v["_unknown_tagged_fields"] = [(2, b"ab"), (7, b"")]
    data = _native.encode(prog, v)
    back = _native.decode(prog, data, 0)[0]
    assert back == dict(v, leaderEpoch=-1)
    assert back["_unknown_tagged_fields"] == [(2, b"ab"), (7, b"")]


def test_repeated_known_tag_last_wins():
    prog = program("OffsetCommitValue", 4)
    body = _native.encode(prog, {"offset": 1, "metadata": "", "commitTimestamp": 2})[:-1]
    a, b = bytes(range(16)), bytes(range(16, 32))
    data = body + b"\x02\x00\x10" + a + b"\x00\x10" + b
    assert _native.decode(prog, data, 0)[0]["topicId"] == uuid.UUID(bytes=b)
    assert _outcome(_native, prog, data) == _outcome(_codec_py, prog, data)


def test_tagged_defaults_are_fresh_copies():
    for rec in MESSAGES:
        prog = program(rec["schema"], rec["version"])
        if any(isinstance(f.default, (list, dict)) for sp in prog.structs for f in sp.tagged):
            data = bytes.fromhex(rec["hex"])
            v1 = _native.decode(prog, data, 0)[0]
            v2 = _native.decode(prog, data, 0)[0]
            for f in prog.top.tagged:
                if isinstance(f.default, (list, dict)):
                    assert v1[f.name] is not v2[f.name] or v1[f.name] is None
            return
    pytest.skip("no message with a list/struct tagged default")


# ------------------------------------------------------------------------------------
# bulk

def _cell(x):
    if isinstance(x, uuid.UUID):
        return x.bytes
    if hasattr(x, "item"):
        return x.item()
    return x


def _column_list(col):
    if hasattr(col, "to_pylist"):
        return col.to_pylist()
    return [_cell(x) for x in list(col)]


def _groups():
    by = {}
    for rec in ALL:
        by.setdefault((rec["schema"], rec["version"]), []).append(bytes.fromhex(rec["hex"]))
    return sorted(by.items())


GROUPS = _groups()


@pytest.mark.parametrize("key,rows", GROUPS, ids=[f"{s}-v{v}" for (s, v), _ in GROUPS])
def test_bulk_matches_reference(key, rows):
    import kcodec
    prog = program(*key)
    values = rows + [rows[0][:-1], None, rows[-1] + b"\x00", b""]
    ref = kcodec._decode_bulk_py(prog, values)
    inputs = [values]
    try:
        import pyarrow as pa
        inputs += [pa.array(values, pa.binary()), pa.array(values, pa.large_binary()),
                   pa.array([b"zz"] + values, pa.binary()).slice(1)]
    except ImportError:
        pass
    for src in inputs:
        got = _native.decode_bulk(prog, src)
        assert list(got) == list(ref)
        assert list(got["_ok"]) == ref["_ok"]
        assert got["_error"] == ref["_error"]
        for k in prog.top.keys:
            g = _column_list(got[k])
            r = [_cell(x) for x in ref[k]]
            for i, ok in enumerate(ref["_ok"]):
                if ok:
                    assert g[i] == r[i], (k, i)


def test_bulk_empty():
    prog = program("OffsetCommitValue", 4)
    got = _native.decode_bulk(prog, [])
    assert len(got["_ok"]) == 0 and got["_error"] == []
    assert len(got["offset"]) == 0
