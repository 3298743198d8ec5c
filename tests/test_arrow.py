"""kcodec.arrow: typed Arrow batches from bulk decoding, the same on both engines.

Every vector decodes, in a batch, to exactly what a single ``kcodec.decode`` gives (in
Arrow's Python form); bad rows carry the single decode's error text.
"""
from __future__ import annotations

import struct
import uuid

import numpy as np
import pytest

import kcodec

pa = pytest.importorskip("pyarrow")
from kcodec import _codec_py, arrow as KA  # noqa: E402
from kcodec._columns import layout  # noqa: E402

from ._shared import read_jsonl, vectors_dir  # noqa: E402

MESSAGES = read_jsonl(vectors_dir() / "messages.jsonl")
UNKNOWN = read_jsonl(vectors_dir() / "unknown_tags.jsonl")


@pytest.fixture
def use_engine(engine, monkeypatch):
    """kcodec (and so kcodec.arrow) running on the given engine."""
    monkeypatch.setattr(kcodec, "_engine", engine)
    monkeypatch.setattr(kcodec, "NATIVE", engine is not _codec_py)
    return engine


def _expected(rec):
    prog = kcodec.program(rec["schema"], rec["version"])
    value = kcodec.decode(rec["schema"], bytes.fromhex(rec["hex"]), rec["version"])
    return KA.to_arrow_value(layout(prog), 0, value)


def _groups(recs):
    by = {}
    for rec in recs:
        if "hex" in rec:
            by.setdefault((rec["schema"], rec["version"]), []).append(rec)
    return sorted(by.items())


GROUPS = _groups(MESSAGES + UNKNOWN)


@pytest.mark.parametrize("key,recs", GROUPS, ids=[f"{s}-v{v}" for (s, v), _ in GROUPS])
def test_vectors_decode_like_decode(use_engine, key, recs):
    name, version = key
    for rec in recs:
        batch = KA.decode(name, [bytes.fromhex(rec["hex"])], version)
        row = batch.to_pylist()[0]
        assert row.pop("_error") is None
        assert row == _expected(rec), rec["id"]
    # all of them in one batch, with the type arrow_type promises
    batch = KA.decode(name, pa.array([bytes.fromhex(r["hex"]) for r in recs], pa.binary()), version)
    assert pa.struct(list(batch.schema)[:-1]).equals(
        pa.struct([f.with_nullable(True) for f in KA.arrow_type(name, version)]))
    assert batch.column(batch.num_columns - 1).null_count == len(recs)
    rows = batch.to_pylist()
    for rec, row in zip(recs, rows):
        row.pop("_error")
        assert row == _expected(rec), rec["id"]


def test_engines_give_identical_batches(monkeypatch):
    if not kcodec.NATIVE:
        pytest.skip("C extension not built")
    for (name, version), recs in GROUPS:
        rows = [bytes.fromhex(r["hex"]) for r in recs]
        values = rows + [rows[0][:-1], None, rows[-1] + b"\x00", b""]
        native = KA.decode(name, values, version)
        with monkeypatch.context() as m:
            m.setattr(kcodec, "_engine", _codec_py)
            m.setattr(kcodec, "NATIVE", False)
            py = KA.decode(name, values, version)
        py.validate(full=True)
        assert native.schema.equals(py.schema), name
        assert native.equals(py), (name, version)


@pytest.mark.parametrize("no_ext", ["", "1"], ids=["native", "python"])
def test_decode_with_bad_rows_never_imports_pandas(no_ext, monkeypatch):
    # both engines build every column, the bad rows' error texts too, from buffers:
    # pyarrow's conversion of lists would import pandas
    from ._shared import run_without_pandas
    monkeypatch.setenv("KCODEC_NO_EXTENSIONS", no_ext)
    run_without_pandas("import kcodec\n"
                       "from kcodec.arrow import decode\n"
                       "ok = kcodec.encode('OffsetCommitValue', {'offset': 7, 'metadata': 'm'}, 3)\n"
                       "b = decode('OffsetCommitValue', [ok, ok[:-1], None], 3)\n"
                       "b.validate(full=True)\n"
                       "assert b.column('offset').to_pylist() == [7, None, None]\n"
                       "assert b.column('_error').null_count == 2\n")


def test_arrow_type_offset_commit_value():
    t = KA.arrow_type("OffsetCommitValue", 4)
    assert [f.name for f in t] == ["offset", "leaderEpoch", "metadata", "commitTimestamp",
                                   "topicId", "_unknown_tagged_fields"]
    assert t.field("offset").type == pa.int64() and not t.field("offset").nullable
    assert t.field("metadata").type == pa.string()
    assert t.field("topicId").type == pa.binary(16)
    unk = t.field("_unknown_tagged_fields")
    assert not unk.nullable
    assert unk.type.value_type == pa.struct([pa.field("tag", pa.int32(), nullable=False),
                                             pa.field("data", pa.binary(), nullable=False)])
    # not flexible: no unknown-tags column; nullability per version
    t3 = KA.arrow_type("OffsetCommitValue", 3)
    assert "_unknown_tagged_fields" not in [f.name for f in t3]
    g = KA.arrow_type("GroupMetadataValue", 4)
    assert g.field("protocol").nullable and g.field("protocol").type == pa.string()
    members = g.field("members").type
    assert isinstance(members, pa.ListType) and members.value_type.field("memberId").type == pa.string()


def _ocv(offset, epoch=-1, meta="m", ts=7):
    return kcodec.encode("OffsetCommitValue", {"offset": offset, "leaderEpoch": epoch,
                                               "metadata": meta, "commitTimestamp": ts}, 3)


def test_error_and_null_rows(use_engine):
    good = _ocv(5)
    values = [good, good[:-1], None, good + b"\x01"]
    batch = KA.decode("OffsetCommitValue", values, 3)
    assert batch.column("offset").to_pylist() == [5, None, None, None]
    errs = batch.column("_error").to_pylist()
    assert errs[0] is None and errs[2] is None
    for i in (1, 3):
        with pytest.raises(kcodec.DecodeError) as e:
            kcodec.decode("OffsetCommitValue", values[i], 3)
        assert errs[i] == str(e.value)
    assert "commitTimestamp" in errs[1] and "byte offset" in errs[1]
    assert batch.schema.field("offset").nullable


def test_sources(use_engine):
    rows = [_ocv(i, meta="x" * i) for i in range(20)]
    want = [r["offset"] for r in KA.decode("OffsetCommitValue", rows, 3).to_pylist()]
    assert want == list(range(20))
    sources = [pa.array(rows, pa.large_binary()),
               pa.chunked_array([pa.array(rows[:7], pa.binary()), pa.array(rows[7:], pa.binary())]),
               pa.array([b"zz"] + rows, pa.binary()).slice(1)]
    for src in sources:
        assert KA.decode("OffsetCommitValue", src, 3).column("offset").to_pylist() == want


def test_slices_with_skip(use_engine):
    rows = [_ocv(i) for i in range(5)]
    buf = bytearray(b"junk")
    pos, lens = [], []
    for i, r in enumerate(rows):
        if i == 2:
            pos.append(0)
            lens.append(-1)
            continue
        pos.append(len(buf))
        framed = struct.pack(">h", 3) + r
        lens.append(len(framed))
        buf += framed
    pos.append(len(buf) - 3)       # a short tail: only 3 bytes of a message
    lens.append(3)
    s = KA.Slices(bytes(buf), np.array(pos, np.int64), np.array(lens, np.int32))
    batch = KA.decode("OffsetCommitValue", s, 3, skip=2)
    assert batch.column("offset").to_pylist() == [0, 1, None, 3, 4, None]
    errs = batch.column("_error").to_pylist()
    assert errs[:5] == [None] * 5 and "OffsetCommitValue v3" in errs[5]


def test_nested_arrays_of_structs_and_tagged_fields(use_engine):
    value = {"protocolType": "consumer", "generation": 3, "protocol": None, "leader": "m1",
             "currentStateTimestamp": 9,
             "members": [{"memberId": "m1", "groupInstanceId": None, "clientId": "c",
                          "clientHost": "h", "rebalanceTimeout": 1, "sessionTimeout": 2,
                          "subscription": b"\x01", "assignment": b""},
                         {"memberId": "m2", "groupInstanceId": "g", "clientId": "c2",
                          "clientHost": "h2", "rebalanceTimeout": 3, "sessionTimeout": 4,
                          "subscription": b"", "assignment": b"\x02\x03"}]}
    data = kcodec.encode("GroupMetadataValue", value, 4)
    batch = KA.decode("GroupMetadataValue", [data, None, data], 4)
    rows = batch.to_pylist()
    assert rows[1]["members"] is None
    got = rows[0]["members"]
    assert [m["memberId"] for m in got] == ["m1", "m2"]
    assert got[1]["assignment"] == b"\x02\x03" and got[0]["groupInstanceId"] is None
    assert all(m["_unknown_tagged_fields"] == [] for m in got)
    assert rows[2] == rows[0]


def test_tagged_default_and_unknown_tags(use_engine):
    tid = uuid.UUID(int=0x1234)
    v = {"offset": 1, "leaderEpoch": 2, "metadata": "", "commitTimestamp": 3}
    absent = kcodec.encode("OffsetCommitValue", v, 4)
    present = kcodec.encode("OffsetCommitValue", dict(v, topicId=tid), 4)
    unknown = kcodec.encode("OffsetCommitValue", dict(v, _unknown_tagged_fields=[(90, b"zz")]), 4)
    rows = KA.decode("OffsetCommitValue", [absent, present, unknown], 4).to_pylist()
    assert rows[0]["topicId"] == bytes(16) and rows[1]["topicId"] == tid.bytes
    assert rows[0]["_unknown_tagged_fields"] == []
    assert rows[2]["_unknown_tagged_fields"] == [{"tag": 90, "data": b"zz"}]


def test_decode_bulk_arrow_flag():
    data = _ocv(11)
    b = kcodec.decode_bulk("OffsetCommitValue", [data], 3, arrow=True)
    assert isinstance(b, pa.RecordBatch) and b.column("offset").to_pylist() == [11]
    d = kcodec.decode_bulk("OffsetCommitValue", [data], 3)
    assert list(d["offset"]) == [11] and list(d["_ok"]) == [True]


def test_numpy_round_trip_through_buffers():
    import pyarrow as pa
    for a in (np.arange(-5, 5, dtype=np.int64), np.arange(7, dtype=np.int16),
              np.array([1.5, -2.0]), np.array([], np.int32), np.arange(10, dtype=">i4")):
        arr = KA.from_numpy(a)
        assert arr.to_pylist() == a.tolist() and arr.null_count == 0
        assert KA.to_numpy(arr).tolist() == a.tolist()
    bits = np.array([True, False, True, True, False, False, True, False, True, True, False])
    assert KA.from_numpy(bits).to_pylist() == bits.tolist()
    sliced = pa.array(bits.tolist()).slice(3, 6)            # a bit offset inside a byte
    assert KA.to_numpy(sliced).tolist() == bits[3:9].tolist()
    assert KA.to_numpy(pa.array([1, 2, 3, 4], pa.int32()).slice(1, 2)).tolist() == [2, 3]
    with pytest.raises(ValueError, match="null"):
        KA.to_numpy(pa.array([1, None]))
    with pytest.raises(TypeError):
        KA.to_numpy(pa.array(["x"]))
    with pytest.raises(TypeError):
        KA.from_numpy(np.zeros((2, 2)))


# ------------------------------------------------------------------ several versions at once

def _by_message(recs):
    by = {}
    for rec in recs:
        if "hex" in rec:
            by.setdefault(rec["schema"], []).append(rec)
    return sorted((name, rs) for name, rs in by.items() if len({r["version"] for r in rs}) > 1)


MULTI = _by_message(MESSAGES + UNKNOWN)


@pytest.mark.parametrize("name,recs", MULTI, ids=[n for n, _ in MULTI])
def test_versions_in_one_pass_decode_like_decode(use_engine, name, recs):
    """Every group of versions that fit one set of columns, decoded in one batch (rows
    of all versions interleaved, with null rows between): each row is what a single
    decode at its own version gives; a field its version lacks has its default."""
    versions = sorted({r["version"] for r in recs})
    progs = {v: kcodec.program(name, v) for v in versions}
    trees = [v for v in versions if all(KA.fits(progs[u], progs[v]) for u in versions if u <= v)]
    for top in trees:
        group = [v for v in versions if v <= top and KA.fits(progs[v], progs[top])]
        rows = [r for r in recs if r["version"] in group]
        if len(group) < 2:
            continue
        which, values = [], []
        for r in rows:
            which += [group.index(r["version"]), -1]
            values += [bytes.fromhex(r["hex"]), b"\xff"]
        batch = KA.decode_programs([progs[v] for v in group], values, which)
        assert batch.schema.equals(KA.decode(name, [], top).schema)
        got = batch.to_pylist()
        for r, row, null in zip(rows, got[::2], got[1::2]):
            assert row.pop("_error") is None
            value = kcodec.decode(name, bytes.fromhex(r["hex"]), r["version"])
            assert row == KA.to_arrow_value(layout(progs[top]), 0, value), r["id"]
            assert set(null.values()) == {None}


def test_versions_in_one_pass_defaults_errors_and_nulls(use_engine):
    p3, p4 = kcodec.program("OffsetCommitValue", 3), kcodec.program("OffsetCommitValue", 4)
    assert KA.fits(p3, p4) and not KA.fits(p4, p3)
    assert not KA.fits(kcodec.program("OffsetCommitValue", 1), p4)    # expireTimestamp
    v3 = _ocv(5, epoch=2)
    v4 = kcodec.encode("OffsetCommitValue", {"offset": 6, "leaderEpoch": -1, "metadata": "xyz",
                                             "commitTimestamp": 10}, 4)
    values = [v3, v4, v4 + b"\x00", v3[:3], v4, v3]
    batch = KA.decode_programs([p3, p4, None], values, [0, 1, 1, 0, 2, -1])
    rows = batch.to_pylist()
    # v3 has no topic id nor tagged fields: the v4 default, no unknown tags
    assert rows[0] == {"offset": 5, "leaderEpoch": 2, "metadata": "m", "commitTimestamp": 7,
                       "topicId": bytes(16), "_unknown_tagged_fields": [], "_error": None}
    assert rows[1]["offset"] == 6 and rows[1]["metadata"] == "xyz"
    for i, version in ((2, 4), (3, 3)):     # each bad row: its own version's error
        with pytest.raises(kcodec.DecodeError) as e:
            kcodec.decode("OffsetCommitValue", values[i], version)
        assert rows[i]["_error"] == str(e.value) and rows[i]["offset"] is None
    for i in (4, 5):                        # a None program, which -1: null rows
        assert set(rows[i].values()) == {None}
    with pytest.raises(ValueError, match="columns differ"):
        KA.decode_programs([p4, kcodec.program("OffsetCommitValue", 1)], [v4], [0])
    with pytest.raises(ValueError, match="which"):
        KA.decode_programs([p3, p4], [v3], [2])


# ------------------------------------------------------------------ decode_framed

from kcodec.framing import INT16_VERSION, KRAFT_RECORD, VersionPrefix  # noqa: E402


@pytest.mark.parametrize("name,recs", MULTI, ids=[n for n, _ in MULTI])
def test_framed_rows_decode_like_decode_programs(use_engine, name, recs):
    """Rows behind their int16 version, each group of versions that fit one set of
    columns in one pass: the batch decode_programs gives with ``which`` from the
    prefixes; rows of other versions, null rows and short rows are not decoded."""
    versions = sorted({r["version"] for r in recs})
    progs = {v: kcodec.program(name, v) for v in versions}
    for top in versions:
        group = [v for v in versions if v <= top and KA.fits(progs[v], progs[top])]
        values, which, want_v, want_have = [], [], [], []
        for r in recs:
            values.append(struct.pack(">h", r["version"]) + bytes.fromhex(r["hex"]))
            which.append(group.index(r["version"]) if r["version"] in group else -1)
            want_v.append(r["version"])
            want_have.append(2)
        values += [None, b"\x00", b"\xff\xff" + b"\x00" * 4]
        which += [-1, -1, -1]
        want_v += [-1, -1, -1]
        want_have += [-1, 1, 2]
        got = KA.decode_framed({v: progs[v] for v in group}, values, INT16_VERSION)
        want = KA.decode_programs([progs[v] for v in group], values, np.array(which), skip=2)
        assert got.batch.equals(want), (name, top)
        assert got.versions.dtype == np.int16 and got.versions.tolist() == want_v
        assert got.have.tolist() == want_have
        errs = want.column("_error").to_pylist()
        assert got.decoded.tolist() == [w >= 0 and e is None for w, e in zip(which, errs)]


def test_framed_select_fields_errors_and_tagged(use_engine):
    p3, p4 = kcodec.program("OffsetCommitValue", 3), kcodec.program("OffsetCommitValue", 4)
    v3 = struct.pack(">h", 3) + _ocv(5, epoch=2)
    plain4 = {"offset": 6, "leaderEpoch": -1, "metadata": "xyz", "commitTimestamp": 10}
    v4 = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", plain4, 4)
    tid = uuid.UUID(int=99)
    tagged4 = struct.pack(">h", 4) + kcodec.encode(
        "OffsetCommitValue", dict(plain4, topicId=tid, _unknown_tagged_fields=[(7, b"ab")]), 4)
    values = [v3, v4, tagged4, v4 + b"\x00", v3, struct.pack(">h", 1) + b"\x00" * 8]
    select = np.array([1, 1, 1, 1, 0, 1], bool)
    for progs in ({3: p3, 4: p4}, [None, None, None, p3, p4]):
        got = KA.decode_framed(progs, values, INT16_VERSION, select=select)
        rows = got.batch.to_pylist()
        assert [r["offset"] for r in rows] == [5, 6, 6, None, None, None]
        assert rows[2]["topicId"] == tid.bytes
        assert rows[2]["_unknown_tagged_fields"] == [{"tag": 7, "data": b"ab"}]
        with pytest.raises(kcodec.DecodeError) as e:
            kcodec.decode("OffsetCommitValue", values[3][2:], 4)
        assert rows[3]["_error"] == str(e.value)
        assert [r["_error"] for r in rows[4:]] == [None, None]     # selected out, no program
        assert got.versions.tolist() == [3, 4, 4, 4, 3, 1]         # read on every row
        assert got.decoded.tolist() == [True, True, True, False, False, False]
        assert got.tagged.tolist() == [0, 0, 2, 0, 0, 0]
    some = KA.decode_framed({3: p3, 4: p4}, values, INT16_VERSION, fields=["metadata", "offset"])
    assert some.batch.schema.names == ["offset", "metadata", "_error"]
    assert some.batch.column("metadata").to_pylist()[:3] == ["m", "xyz", "xyz"]
    assert some.tagged.tolist() == got.tagged.tolist()
    with pytest.raises(ValueError, match="no field"):
        KA.decode_framed({4: p4}, values, INT16_VERSION, fields=["nope"])
    with pytest.raises(ValueError, match="columns differ"):
        KA.decode_framed({1: kcodec.program("OffsetCommitValue", 1), 4: p4}, values)
    with pytest.raises(ValueError, match="version prefixes"):
        KA.decode_framed({4: p4}, values, KRAFT_RECORD)
    with pytest.raises(ValueError, match="version prefixes"):
        KA.decode_framed({4: p4}, values, VersionPrefix("x", 2, latest_supported_from=1))
    with pytest.raises(ValueError, match="at least one"):
        KA.decode_framed({4: None}, values)
    with pytest.raises(ValueError, match="versions must be"):
        KA.decode_framed({-1: p4}, values)


def test_framed_slices_int32_and_in_body_frames(use_engine):
    """Record slices (strided, a null one, one outside the buffer), an int32 prefix,
    and a version that is also the message's first field (nothing skipped)."""
    p3 = kcodec.program("OffsetCommitValue", 3)
    body = _ocv(8)
    buf = struct.pack(">i", 3) + body + struct.pack(">h", 3) + body
    recs = np.zeros(4, [("pos", "<i8"), ("len", "<i4"), ("pad", "<i4")])
    recs["pos"] = [0, 0, len(buf) - 1, 4 + len(body)]
    recs["len"] = [4 + len(body), -1, 5, 2 + len(body)]
    s = KA.Slices(buf, recs["pos"], recs["len"])
    got = KA.decode_framed([None, None, None, p3], s, VersionPrefix("v32", 4))
    assert got.versions.dtype == np.int32 and got.versions.tolist() == [3, -1, -1, 3 << 16 | 0]
    assert got.have.tolist() == [4, -1, -2, 4]
    assert got.batch.column("offset").to_pylist() == [8, None, None, None]
    # the version is the first field: read, not skipped (the body is decoded from byte 0)
    inb = KA.decode_framed({0: kcodec.program("OffsetCommitValue", 1)},
                           [b"\x00" * 8 + struct.pack(">h", 0) + b"\x00" * 16],
                           VersionPrefix("in-body", 2, in_body=True))
    assert inb.versions.tolist() == [0] and inb.decoded.tolist() == [True]


def test_framed_engines_identical(monkeypatch):
    if not kcodec.NATIVE:
        pytest.skip("C extension not built")
    for name, recs in MULTI:
        versions = sorted({r["version"] for r in recs})
        progs = {v: kcodec.program(name, v) for v in versions}
        top = versions[-1]
        table = {v: p for v, p in progs.items() if KA.fits(p, progs[top])}
        values = [struct.pack(">h", r["version"]) + bytes.fromhex(r["hex"]) for r in recs]
        values += [v[:-1] for v in values] + [None, b"", b"\x7f\xff"]
        sel = np.arange(len(values)) % 5 != 3
        native = KA.decode_framed(table, values, INT16_VERSION, select=sel)
        with monkeypatch.context() as m:
            m.setattr(kcodec, "_engine", _codec_py)
            m.setattr(kcodec, "NATIVE", False)
            py = KA.decode_framed(table, values, INT16_VERSION, select=sel)
        assert native.batch.equals(py.batch), name
        for a, b in zip(native[1:], py[1:]):
            assert a.dtype == b.dtype and a.tolist() == b.tolist(), name
