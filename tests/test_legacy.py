"""Segments written before Kafka 0.11: legacy message sets (magic 0 and 1), wrapped
compressed messages included, decode into the same record rows as record batches (v2),
so an old ``__consumer_offsets`` log folds with nothing dropped.

The segments are generated with the layouts of Kafka's ``LegacyRecord`` /
``AbstractLegacyRecordBatch``: offset int64, size int32, CRC-32 (IEEE) over magic..end,
magic, attributes (codec in bits 0-2, LogAppendTime bit 3 for magic 1), timestamp (magic
1 only), int32-length key and value; a compressed wrapper's value holds the inner message
set (magic 1: relative inner offsets, the wrapper holding the last one's absolute
offset; magic 0: absolute); magic 0 LZ4 frames carry KAFKA-3160's descriptor checksum.
Every test runs on the C scanner and on its Python twin.
"""
from __future__ import annotations

import io
import json
import os
import random
import struct
import subprocess
import sys
import zlib
from contextlib import redirect_stdout

import pytest

from kcodec import log
from kcodec.errors import CorruptRecordError
from kcodec.log import _impl, _records_py
from kcodec.offsets.state import fold_log

from ._shared import fixtures_dir

SEGMENTS = fixtures_dir() / "consumer_offsets" / "segments"
RECS = [(b"k%d" % i, (b"v" * i) if i % 3 else None) for i in range(7)]


@pytest.fixture(params=["c", "python"], autouse=True)
def engine(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr(_impl, "records", _records_py)
    elif not log.NATIVE:
        pytest.skip("C extension not built")
    return request.param


def _records(data, **kw):
    return [(r.offset, r.timestamp, r.key, r.value) for b in log.iter_batches(data, **kw)
            for r in b.records]


# --------------------------------------------------------------------------- layouts

def test_magic1_entry_layout_is_kafkas():
    data = log.encode_message_set([(b"key", b"value")], magic=1, base_offset=7, timestamps=[1234])
    off, size, crc, magic, attrs, ts = struct.unpack_from(">qiIbbq", data)
    assert (off, size, magic, attrs, ts) == (7, len(data) - 12, 1, 0, 1234)
    assert crc == zlib.crc32(data[16:])
    assert data[26:] == struct.pack(">i", 3) + b"key" + struct.pack(">i", 5) + b"value"
    assert log._impl.records.crc32(data[16:]) == crc


def test_magic0_entry_has_no_timestamp():
    data = log.encode_message_set([(None, b"v")], magic=0)
    assert struct.unpack_from(">qiIbbii", data) == (0, 14 + 1, zlib.crc32(data[16:]), 0, 0, -1, 1)
    assert _records(data) == [(0, -1, None, b"v")]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [0, 1, 2, 3], ids=["none", "gzip", "snappy", "lz4"])
def test_round_trip(magic, codec):
    if codec:
        pytest.importorskip("cramjam")
    ts = [1000 + i for i in range(len(RECS))]
    data = log.encode_message_set(RECS, magic=magic, compression=codec, base_offset=100,
                                  timestamps=ts)
    data += log.encode_batch([(b"x", b"y")], base_offset=107, base_timestamp=5)
    got = _records(data)
    assert got == [(100 + i, ts[i] if magic else -1, k, v) for i, (k, v) in enumerate(RECS)] \
        + [(107, 5, b"x", b"y")]
    batches = list(log.iter_batches(data))
    assert all(b.error is None for b in batches)
    b = batches[0]
    assert (b.magic, b.producer_id, b.producer_epoch, b.is_transactional, b.is_control) == \
        (magic, -1, -1, False, False)
    if codec:
        # Kafka's view of a wrapper: base offset the first inner record's, last its own
        assert len(batches) == 2 and b.base_offset == 100 and b.record_count == len(RECS)
        assert b.last_offset_delta == len(RECS) - 1


@pytest.mark.parametrize("codec", [0, 1, 3])
def test_log_append_time(codec):
    if codec:
        pytest.importorskip("cramjam")
    data = log.encode_message_set(RECS, magic=1, compression=codec, timestamps=[1] * len(RECS),
                                  log_append_time=99)
    assert {r[1] for r in _records(data)} == {99}


def test_magic1_wrapper_offset_zero_keeps_relative_offsets():
    """librdkafka producers leave the wrapper offset 0: Kafka keeps the inner offsets."""
    pytest.importorskip("cramjam")
    data = bytearray(log.encode_message_set(RECS, magic=1, compression=1, base_offset=50))
    struct.pack_into(">q", data, 0, 0)
    assert [r[0] for r in _records(bytes(data))] == list(range(len(RECS)))


def test_magic0_lz4_descriptor_checksum_quirk():
    """KAFKA-3160: magic 0 LZ4 frames checksum the frame magic too; Kafka ignores the byte."""
    cramjam = pytest.importorskip("cramjam")
    data = log.encode_message_set(RECS, magic=0, compression=3)
    value = data[12 + 4 + 2 + 4 + 4:]
    with pytest.raises(Exception):
        cramjam.lz4.decompress(value)           # a strict reader refuses the frame
    assert [r[2:] for r in _records(data)] == RECS


def _rewrap(data, inner):
    """The wrapper entry ``data`` (magic 1, gzip) with ``inner`` as its inner set."""
    import cramjam
    magic, attrs, ts = struct.unpack_from(">bbq", data, 16)
    body = struct.pack(">bbqi", magic, attrs, ts, -1)
    packed = bytes(cramjam.gzip.compress(inner))
    body += struct.pack(">i", len(packed)) + packed
    return struct.pack(">qiI", struct.unpack_from(">q", data)[0], len(body) + 4,
                       zlib.crc32(body)) + body


def _inner(data):
    import cramjam
    return bytes(cramjam.gzip.decompress(data[12 + 4 + 2 + 8 + 4 + 4:]))


@pytest.mark.parametrize("damage", ["inner_crc", "inner_compressed", "empty", "cut",
                                    "wrapper_before_last"])
def test_bad_inner_message_set_is_reported(damage):
    pytest.importorskip("cramjam")
    data = log.encode_message_set(RECS, magic=1, compression=1, base_offset=10)
    inner = bytearray(_inner(data))
    if damage == "inner_crc":
        inner[30] ^= 1
    elif damage == "inner_compressed":
        inner[17] = 1
        struct.pack_into(">I", inner, 12, zlib.crc32(bytes(inner[16:struct.unpack_from(">i", inner, 8)[0] + 12])))
    elif damage == "empty":
        inner = bytearray()
    elif damage == "cut":
        inner = inner[:-3]
    bad = _rewrap(data, bytes(inner))
    if damage == "wrapper_before_last":
        bad = bytearray(bad)
        struct.pack_into(">q", bad, 0, 2)           # below the last relative offset, not 0
        bad = bytes(bad)
    ok = log.encode_batch([(b"x", b"y")], base_offset=20)
    batches = list(log.iter_batches(bad + ok))
    assert batches[0].error is not None and batches[0].error.position == 0
    assert batches[0].error.reason == "bad_records"
    assert batches[1].error is None
    with pytest.raises(CorruptRecordError):
        list(log.iter_batches(bad + ok, errors="raise"))


def test_null_wrapper_value_and_bad_codec_are_reported():
    data = bytearray(log.encode_message_set([(b"k", None)], magic=1))
    data[17] = 1                                   # "gzip" with a null value
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    (b,) = list(log.iter_batches(bytes(data)))
    assert b.error.reason == "bad_records" and "null value" in b.error.message
    data[17] = 4                                   # zstd: never in a legacy message
    struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
    (b,) = list(log.iter_batches(bytes(data)))
    assert b.error.reason == "unknown_compression"


@pytest.mark.parametrize("chunk", [40, 100, 1 << 20])
def test_small_entries_across_windows(chunk, tmp_path):
    """Legacy entries are smaller than a v2 header: windows ending anywhere still read all."""
    recs = [(None, b"%d" % i) for i in range(200)]
    data = log.encode_message_set(recs, magic=0) + log.encode_message_set(recs, magic=1,
                                                                          base_offset=200)
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(data)
    for src in (data, p):
        got = _records(src, chunk_size=chunk)
        assert [r[0] for r in got] == list(range(400))
        assert all(b.error is None for b in log.iter_batches(src, chunk_size=chunk))


def test_bad_crc_entry_is_reported_not_folded():
    data = log.encode_message_set(RECS, magic=1)
    first = struct.unpack_from(">i", data, 8)[0] + 12
    bad = bytearray(data)
    bad[first - 1] ^= 0x20                         # last byte of the first entry's value
    batches = list(log.iter_batches(bytes(bad)))
    assert [b.error.reason if b.error else None for b in batches] == \
        ["bad_crc"] + [None] * (len(RECS) - 1)
    assert "CRC-32 mismatch" in batches[0].error.message and batches[0].error.position == 0
    with pytest.raises(CorruptRecordError) as ei:
        list(log.iter_batches(bytes(bad), errors="raise"))
    assert ei.value.offset == 0


# --------------------------------------------------------------------------- resync

def _three():
    return [log.encode_batch([(b"k%d" % i, b"v" * 20)] * 3, base_offset=3 * i) for i in range(3)]


def _legacy_imitation(rnd):
    """Bytes that look like a legacy entry header (magic 0/1, a sane size, codec <= 3) or,
    one time in four, a v2 batch header (magic 2), with a CRC that (almost surely) fails,
    then random bytes."""
    n = rnd.randrange(17, 120)
    g = bytearray(rnd.getrandbits(8) for _ in range(n))
    g[16] = rnd.choice((0, 1, 0, 1, 0, 1, 2, 2))
    if n > 17:
        g[17] = rnd.randrange(0, 16)
    if n > 22 and g[16] == 2:
        g[21:23] = bytes((0, rnd.randrange(0, 5)))
    struct.pack_into(">i", g, 8, rnd.choice((rnd.randrange(14, 300), rnd.randrange(14, 1 << 20))))
    return bytes(g)


def test_random_prefixes_imitating_headers_lose_nothing():
    """Garbage before a valid batch, shaped like a legacy entry or a batch header with a
    bogus length, must not swallow the batch: every CRC-valid batch around it is still
    read."""
    rnd = random.Random(20261123)
    a, b, c = _three()
    n = 3000 if _impl.records is not _records_py else 300
    for _ in range(n):
        g = _legacy_imitation(rnd) if rnd.random() < 0.8 else \
            bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 80)))
        where = rnd.randrange(3)
        parts = [a, b, c]
        parts.insert(where, g)
        data = b"".join(parts)
        ok = [x.base_offset for x in log.iter_batches(data) if x.error is None and x.magic == 2]
        assert ok == [0, 3, 6], (g.hex(), where)


def test_valid_legacy_entries_around_garbage_are_read():
    rnd = random.Random(7)
    legacy = log.encode_message_set(RECS, magic=1, base_offset=100)
    for _ in range(200 if _impl.records is not _records_py else 40):
        g = _legacy_imitation(rnd)
        data = legacy + g + legacy
        got = [r[0] for r in _records(data) if r]
        assert got[:len(RECS)] == list(range(100, 107)) and got[-len(RECS):] == list(range(100, 107))


# --------------------------------------------------------------------------- folds

def _twin_dirs(tmp_path, magic):
    """For each fixture partition: a v2 log and a legacy log (magic 0/1, codecs cycling)
    holding the same records at the same offsets."""
    pytest.importorskip("cramjam")
    if not SEGMENTS.exists():
        pytest.skip(f"fixtures missing: {SEGMENTS}")
    v2, old = tmp_path / "v2", tmp_path / f"magic{magic}"
    n = 0
    for part in sorted(os.listdir(SEGMENTS)):
        groups = []
        for b in log.iter_batches(str(SEGMENTS / part)):
            if b.error is None and not b.is_control and b.records:
                groups.append([(r.key, r.value, r.timestamp if magic else -1) for r in b.records])
        if not groups:
            continue
        out2, outl = [], []
        off = 0
        for i, g in enumerate(groups):
            kv = [(k, v) for k, v, _ in g]
            ts = [t for _, _, t in g]
            out2.append(log.encode_batch(kv, base_offset=off, base_timestamp=ts[0],
                                         timestamps=ts))
            outl.append(log.encode_message_set(kv, magic=magic, compression=i % 4,
                                               base_offset=off, timestamps=ts))
            off += len(g)
            n += len(g)
        for root, blobs in ((v2, out2), (old, outl)):
            (root / part).mkdir(parents=True)
            (root / part / "00000000000000000000.log").write_bytes(b"".join(blobs))
    assert n > 10
    return v2, old


def _state(st):
    return json.dumps({g: (s.state, s.generation, s.protocol_type, s.protocol, s.leader,
                           sorted(s.members), sorted((k, repr(v)) for k, v in s.offsets.items()))
                       for g, s in st.groups.items()}, sort_keys=True, default=repr)


def _cli(argv):
    from kcodec import cli
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = cli.main(argv)
    return rc, buf.getvalue()


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_log_folds_like_its_v2_twin(tmp_path, magic):
    v2, old = _twin_dirs(tmp_path, magic)
    want = fold_log(str(v2))
    assert want.groups and not want.errors
    for fast in (True, False):
        got = fold_log(str(old), fast=fast)
        assert not got.errors
        assert _state(got) == _state(want)
    rc2, out2 = _cli(["offsets", "groups", "--json", "-v", str(v2)])
    rcl, outl = _cli(["offsets", "groups", "--json", "-v", str(old)])
    assert rc2 == rcl == 0
    assert outl.replace(str(old), "<dir>") == out2.replace(str(v2), "<dir>")


def test_offsets_dump_shows_legacy_records(tmp_path):
    v2, old = _twin_dirs(tmp_path, 1)
    rc2, out2 = _cli(["offsets", "dump", str(v2)])
    rcl, outl = _cli(["offsets", "dump", str(old)])
    assert rc2 == rcl == 0
    keep = ("offset", "timestamp", "type_name", "key", "value", "payload")
    a = [{k: v for k, v in json.loads(x).items() if k in keep} for x in out2.splitlines()]
    b = [{k: v for k, v in json.loads(x).items() if k in keep} for x in outl.splitlines()]
    assert len(a) == len(b) > 10 and a == b


def test_engines_agree_without_extensions(tmp_path, engine):
    """The CLI under KCODEC_NO_EXTENSIONS=1 (the twin) prints what the C scanner does."""
    if engine != "c":
        pytest.skip("compares the two engines once")
    v2, old = _twin_dirs(tmp_path, 1)
    outs = []
    for no_ext in ("0", "1"):
        env = dict(os.environ, KCODEC_NO_EXTENSIONS=no_ext)
        if no_ext == "0":
            env.pop("KCODEC_NO_EXTENSIONS")
        r = subprocess.run([sys.executable, "-m", "kcodec", "offsets", "groups", "--json", "-v",
                            str(old)], capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]


def _segments():
    if not SEGMENTS.exists():
        return []
    return sorted(log.log_files(str(SEGMENTS)))


@pytest.mark.parametrize("path", _segments(), ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_fixture_segments_with_legacy_looking_garbage_lose_no_batch(path):
    """Garbage imitating a legacy entry before any batch of a real segment: every
    CRC-valid batch is still read, and both folds give the clean log's state."""
    data = open(path, "rb").read()
    clean = [(b.base_offset, len(b.records)) for b in log.iter_batches(data)]
    want = _state(fold_log(data))
    rnd = random.Random(os.path.basename(path) + os.path.dirname(path))
    positions = [b.position for b in log.iter_batches(data)] + [len(data)]
    if _impl.records is _records_py:
        positions = rnd.sample(positions, min(3, len(positions)))
    for pos in positions:
        g = _legacy_imitation(rnd)
        bad = data[:pos] + g + data[pos:]
        got = [(b.base_offset, len(b.records)) for b in log.iter_batches(bad) if b.error is None]
        assert got == clean, (pos, g.hex())
        fast, slow = fold_log(bad), fold_log(bad, fast=False)
        assert _state(fast) == _state(slow) == want
        assert len(fast.errors) == len(slow.errors) == 1


@pytest.mark.parametrize("magic", [0, 1])
def test_damaged_wrapper_with_verbatim_inner_entries_yields_none_of_them(magic):
    """A gzip stream of stored blocks holds the inner entries verbatim, CRCs and all: a
    bit flip in the wrapper must not let them pass for records of the log."""
    import gzip
    from kcodec.log.writer import _legacy_entry
    inner = log.encode_message_set(RECS, magic=magic, base_offset=0 if magic else 40)
    wrapper = _legacy_entry(46, magic, 1, 5, None, gzip.compress(inner, compresslevel=0))
    assert inner in wrapper
    assert [r[0] for r in _records(wrapper)] == list(range(40, 47))
    ok = log.encode_batch([(b"x", b"y")], base_offset=47)
    for at in (20, 30, len(wrapper) - 9, len(wrapper) - 1):
        bad = bytearray(wrapper)
        bad[at] ^= 0x04
        for tail in (b"", ok):
            batches = list(log.iter_batches(bytes(bad) + tail))
            assert batches[0].error is not None and batches[0].position == 0
            assert [b.error for b in batches[1:]] == [None] * len(batches[1:])
            assert [b.base_offset for b in batches[1:]] == ([47] if tail else [])


def test_twin_rows_match_the_c_scanner(engine):
    """The same batch and record rows, byte for byte, from both scanners, on legacy sets
    with garbage and damage, in final and non-final windows."""
    if engine != "c":
        pytest.skip("compares the two engines once")
    from kcodec.log import _records as C
    rnd = random.Random(3)
    parts = [log.encode_message_set(RECS, magic=m, compression=c, base_offset=10 * i)
             for i, (m, c) in enumerate([(0, 0), (1, 0), (1, 1), (0, 3)])] + _three()
    for _ in range(60):
        ps = list(parts)
        rnd.shuffle(ps)
        ps.insert(rnd.randrange(len(ps) + 1), _legacy_imitation(rnd))
        data = bytearray(b"".join(ps))
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
        data = bytes(data)
        for final in (True, False):
            cut = data if final else data[:rnd.randrange(len(data))]
            c, p = C.scan(cut, True, final), _records_py.scan(cut, True, final)
            assert c[0] == p[0]
            assert c[1].tobytes() == p[1].tobytes()
            assert c[2].tobytes() == p[2].tobytes()


def test_dump_batches_prints_kafkas_legacy_line(tmp_path):
    """``offsets dump --batches`` on magic 0/1 message sets prints the line Kafka's
    DumpLogSegments.printBatchLevel prints for magic < 2: ``offset: <lastOffset>``, the
    position, the timestamp type and max timestamp (``NoTimestampType: -1`` for magic 0),
    then size, magic, codec, crc and validity; no v2 header fields."""
    from kcodec import cli
    from kcodec.log.dump import batch_line
    seg = tmp_path / "__consumer_offsets-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    kv = (b"k", b"v")
    data = (log.encode_message_set([kv], magic=0)
            + log.encode_message_set([kv, kv], magic=1, compression=1, base_offset=1, timestamps=[1000, 2000])
            + log.encode_message_set([kv], magic=1, base_offset=3, log_append_time=5000))
    seg.write_bytes(data)
    lines = [batch_line(b) for b in log.iter_batches(str(seg))]
    s0 = 12 + struct.unpack_from(">i", data, 8)[0]
    s1 = 12 + struct.unpack_from(">i", data, s0 + 8)[0]
    crc = [b.crc for b in log.iter_batches(str(seg))]
    assert lines == [
        f"offset: 0 position: 0 NoTimestampType: -1 size: {s0} magic: 0 compresscodec: none crc: {crc[0]} isvalid: true",
        f"offset: 2 position: {s0} CreateTime: 2000 size: {s1} magic: 1 compresscodec: gzip crc: {crc[1]} isvalid: true",
        f"offset: 3 position: {s0 + s1} LogAppendTime: 5000 size: {len(data) - s0 - s1} magic: 1 "
        f"compresscodec: none crc: {crc[2]} isvalid: true"]
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert cli.main(["offsets", "dump", "--batches", str(seg)]) == 0
    assert buf.getvalue().splitlines()[2:] == lines
