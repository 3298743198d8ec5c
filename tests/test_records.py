"""Record batch reader (csrc/kc_batch.c + kcodec.log): real broker segments, every
compression, headers, control records, and corrupt input (bad CRC, bad lengths, unknown
compression, truncation), which must be reported with file + position, never dropped."""
from __future__ import annotations

import io
import os
import random
import struct
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from kcodec import log as KR

from kcodec.errors import CorruptRecordError

from ._shared import fixtures_dir, read_jsonl, require

FIX = fixtures_dir()
LOGS = [
    ("consumer_offsets", "segment_records.jsonl"),
    ("cluster_metadata", "segment_records.jsonl"),
    ("other_internal", "other_internal_segment_records.jsonl"),
]


# --------------------------------------------------------------------------- CRC-32C

CRC_VECTORS = [
    (b"", 0),
    (b"123456789", 0xE3069283),                       # the CRC-32C check value
    (bytes(32), 0x8A9136AA),                          # RFC 3720 B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize("data,crc", CRC_VECTORS)
def test_crc32c_vectors(data, crc):
    assert KR._impl.records.crc32c(data) == crc
    assert KR._impl.records.crc32c_portable(data) == crc


def test_crc32c_incremental_and_unaligned():
    rnd = random.Random(7)
    data = bytes(rnd.getrandbits(8) for _ in range(5000))
    whole = KR._impl.records.crc32c(data)
    for cut in (0, 1, 3, 7, 8, 9, 100, 4999):
        assert KR._impl.records.crc32c(data[cut:], KR._impl.records.crc32c(data[:cut])) == whole
        # unaligned starts go through the byte-at-a-time prologue
        assert KR._impl.records.crc32c(memoryview(data)[cut:]) == KR._impl.records.crc32c_portable(data[cut:])


def test_crc32c_every_length_around_the_stream_blocks():
    """The hardware path runs three streams over 64- and 256-byte blocks and joins them:
    every length and alignment near those edges agrees with the table implementation."""
    if KR._impl.records is KR._impl._records_py:
        pytest.skip("the twin has one CRC-32C implementation")
    rnd = random.Random(11)
    data = bytes(rnd.getrandbits(8) for _ in range(4200))
    lengths = sorted(set(range(0, 900)) | {n + d for n in (1536, 2304, 3072, 4096) for d in (-1, 0, 1)})
    for n in lengths:
        for off in (0, 3):
            seed = rnd.getrandbits(32)
            chunk = data[off:off + n]
            assert KR._impl.records.crc32c(memoryview(data)[off:off + n], seed) == \
                KR._impl.records.crc32c_portable(chunk, seed), (n, off)


# --------------------------------------------------------------------------- real segments

def _segment_path(sub: str, name: str) -> Path:
    base = FIX / sub / "segments"
    p = base / name
    if p.exists():
        return p
    hits = sorted(base.rglob(Path(name).name))   # oracle paths may carry the broker's dir name
    return hits[0] if hits else p


def _cases():
    out = []
    for sub, jl in LOGS:
        rows = read_jsonl(FIX / sub / jl)
        by_file = defaultdict(list)
        for r in rows:
            by_file[r["file"]].append(r)
        for f, rs in sorted(by_file.items()):
            out.append(pytest.param(sub, f, rs, id=f"{sub}/{f}"))
    return out


CASES = _cases()


@pytest.mark.parametrize("sub,name,rows", CASES)
@pytest.mark.parametrize("chunk", [KR.DEFAULT_CHUNK, 200])
def test_segment_matches_oracle(sub, name, rows, chunk):
    path = require(_segment_path(sub, name))
    got = [(b, r) for b, r in KR.iter_records(path, chunk_size=chunk)]
    assert len(got) == len(rows)
    for (b, r), row in zip(got, rows):
        assert b.error is None
        assert b.position == row["file_position"]
        for k, v in row["batch"].items():
            if k == "compression":
                assert b.compression == v
            else:
                assert getattr(b, k) == v, k
        assert r.offset == row["offset"]
        assert r.timestamp == row["timestamp"]
        assert r.attributes == row["record_attributes"]
        assert (None if r.key is None else r.key.hex()) == row["key_hex"]
        assert (None if r.value is None else r.value.hex()) == row["value_hex"]
        assert [[k, None if v is None else v.hex()] for k, v in r.headers] == row["headers"]


@pytest.mark.parametrize("sub,jl", LOGS, ids=[s for s, _ in LOGS])
def test_columns_match_oracle(sub, jl):
    from collections import Counter
    rows = read_jsonl(require(FIX / sub / jl))
    cols = KR.read_columns(FIX / sub / "segments", chunk_size=4096)
    assert cols["errors"] == []
    # the oracle names files relative to another root: compare base names
    got = Counter(zip([os.path.basename(f) for f in cols["file"]], cols["offset"].tolist(),
                      [None if v is None else v.hex() for v in cols["value"]],
                      [None if k is None else k.hex() for k in cols["key"]],
                      cols["batch_position"].tolist(), cols["batch_producer_id"].tolist()))
    exp = Counter((os.path.basename(r["file"]), r["offset"], r["value_hex"], r["key_hex"],
                   r["file_position"], r["batch"]["producer_id"]) for r in rows)
    assert got == exp


def test_sources_bytes_fileobj_list():
    path = require(_segment_path("consumer_offsets", "__consumer_offsets-0/00000000000000000000.log"))
    data = path.read_bytes()
    a = [(b.position, [r.offset for r in b.records]) for b in KR.iter_batches(data)]
    b = [(x.position, [r.offset for r in x.records]) for x in KR.iter_batches(io.BytesIO(data))]
    c = [(x.position, [r.offset for r in x.records]) for x in KR.iter_batches([str(path)])]
    assert a == b == c and a


# --------------------------------------------------------------------------- written batches

def _sample(n=20):
    recs = [(f"k{i}".encode(), (b"v" * i) if i % 5 else None) for i in range(n)]
    hdrs = [[("h", b"x"), ("trace-id", None)] if i % 3 == 0 else [] for i in range(n)]
    return recs, hdrs


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4], ids=["none", "gzip", "snappy", "lz4", "zstd"])
def test_compressions_headers(codec):
    pytest.importorskip("cramjam")
    recs, hdrs = _sample()
    ts = [1000 + 3 * i for i in range(len(recs))]
    data = KR.encode_batch(recs, base_offset=42, base_timestamp=1000, compression=codec,
                           headers=hdrs, timestamps=ts, producer_id=7, producer_epoch=2,
                           base_sequence=5)
    data += KR.encode_batch([(b"a", b"b")], base_offset=62, compression=codec)
    batches = list(KR.iter_batches(data))
    assert [b.error for b in batches] == [None, None]
    b = batches[0]
    assert b.compression == codec and b.producer_id == 7 and b.producer_epoch == 2
    assert [(r.key, r.value) for r in b.records] == recs
    assert [r.headers for r in b.records] == hdrs
    assert [r.offset for r in b.records] == list(range(42, 62))
    assert [r.timestamp for r in b.records] == ts
    assert batches[1].records[0].offset == 62
    cols = KR.read_columns(data, with_headers=True)
    assert cols["offset"].tolist() == list(range(42, 63))
    assert cols["headers"][:len(hdrs)] == hdrs


def test_snappy_raw_block_also_read():
    cramjam = pytest.importorskip("cramjam")
    recs, _ = _sample(5)
    plain = KR.encode_batch(recs)
    body = plain[61:]
    raw = bytes(cramjam.snappy.compress_raw(body))
    assert KR.decompress(2, raw) == body            # librdkafka-style raw snappy
    assert KR.decompress(2, KR.compress(2, body)) == body   # Java xerial framing


def test_log_append_time_and_control_records():
    data = KR.encode_batch([(b"k", b"v"), (b"k2", b"v2")], base_timestamp=10, timestamps=[10, 11],
                           log_append_time=True, transactional=True, producer_id=3, producer_epoch=1)
    data += KR.encode_control_batch(True, base_offset=2, producer_id=3, producer_epoch=1,
                                    coordinator_epoch=9, timestamp=20)
    b1, b2 = list(KR.iter_batches(data))
    assert b1.timestamp_type == "LogAppendTime" and b1.is_transactional and not b1.is_control
    assert [r.timestamp for r in b1.records] == [11, 11]   # every record gets maxTimestamp
    assert b2.is_control and b2.is_transactional
    c = KR.parse_control_record(b2.records[0])
    assert (c.type_name, c.coordinator_epoch, c.version) == ("COMMIT", 9, 0)


# --------------------------------------------------------------------------- corrupt input

def _three():
    return [KR.encode_batch([(b"k%d" % j, b"v" * j) for j in range(3)], base_offset=3 * i)
            for i in range(3)]


def test_bad_crc_reported_and_records_withheld():
    a, b, c = _three()
    bad = bytearray(b)
    bad[-2] ^= 0xFF          # a value byte of the last record: only the CRC notices
    batches = list(KR.iter_batches(a + bytes(bad) + c))
    assert [x.error is None for x in batches] == [True, False, True]
    e = batches[1].error
    assert e.reason == "bad_crc" and e.position == len(a) and e.skipped_to == len(a) + len(b)
    assert batches[1].records == []          # damaged bytes: never handed out
    salvaged = list(KR.iter_batches(a + bytes(bad) + c, salvage=True))[1]
    assert salvaged.error == e and len(salvaged.records) == 3       # a forensic opt-in
    with pytest.raises(CorruptRecordError) as ei:
        list(KR.iter_batches(a + bytes(bad) + c, errors="raise"))
    assert ei.value.offset == len(a)
    assert all(x.error is None for x in KR.iter_batches(a + bytes(bad) + c, verify_crc=False))


@pytest.mark.parametrize("new_len", [0, 10, 48, 0x7FFFFFFF, -5, 10**6])
def test_bad_length_resyncs(new_len, tmp_path):
    a, b, c = _three()
    bad = bytearray(b)
    struct.pack_into(">i", bad, 8, new_len)
    data = a + bytes(bad) + c
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(data)
    for src in (data, p):
        batches = list(KR.iter_batches(src, chunk_size=64))
        ok = [x for x in batches if x.error is None]
        bad_ = [x for x in batches if x.error is not None]
        assert [x.base_offset for x in ok] == [0, 6]
        assert len(bad_) == 1
        e = bad_[0].error
        assert e.position == len(a) and e.skipped_to == len(a) + len(b)
        assert e.reason == "bad_length"
        if isinstance(src, Path):
            assert e.file == str(p)


def test_truncated_tail(tmp_path):
    a, b, c = _three()
    for cut in (1, 11, 30, 61, len(c) - 1):
        data = a + b + c[:cut]
        batches = list(KR.iter_batches(data))
        assert [x.error is None for x in batches] == [True, True, False]
        assert batches[-1].error.reason == "truncated"
        assert batches[-1].error.position == len(a) + len(b)
        p = tmp_path / f"{cut}.log"
        p.write_bytes(data)
        assert [x.error is None for x in KR.iter_batches(p, chunk_size=100)] == [True, True, False]


def test_unknown_compression_skipped():
    a, b, c = _three()
    bad = bytearray(b)
    struct.pack_into(">h", bad, 21, 6)
    struct.pack_into(">I", bad, 17, KR._impl.records.crc32c(bytes(bad[21:])))
    batches = list(KR.iter_batches(a + bytes(bad) + c))
    assert [x.error.reason if x.error else None for x in batches] == [None, "unknown_compression", None]


def test_corrupt_compressed_payload_reported():
    pytest.importorskip("cramjam")
    good = KR.encode_batch([(b"k", b"v" * 100)], compression=4)
    bad = bytearray(good)
    bad[70:80] = bytes(10)
    struct.pack_into(">I", bad, 17, KR._impl.records.crc32c(bytes(bad[21:])))
    (b,) = list(KR.iter_batches(bytes(bad)))
    assert b.error is not None and b.error.reason in ("decompression_failed", "bad_records",
                                                      "record_count_mismatch")


def test_bad_record_inside_batch():
    data = bytearray(KR.encode_batch([(b"key", b"value")]))
    data[61] = 0x7F            # record length varint: far beyond the batch
    struct.pack_into(">I", data, 17, KR._impl.records.crc32c(bytes(data[21:])))
    (b,) = list(KR.iter_batches(bytes(data)))
    assert b.error.reason == "bad_records" and "record size" in b.error.message


def test_record_count_mismatch():
    data = bytearray(KR.encode_batch([(b"key", b"value"), (b"k", None)]))
    struct.pack_into(">i", data, 57, 5)
    struct.pack_into(">I", data, 17, KR._impl.records.crc32c(bytes(data[21:])))
    (b,) = list(KR.iter_batches(bytes(data)))
    assert b.error.reason == "record_count_mismatch" and b.records == []
    (b,) = list(KR.iter_batches(bytes(data), salvage=True))
    assert b.error.reason == "record_count_mismatch" and len(b.records) == 2


def test_legacy_message_read_or_reported():
    # a magic v1 message: offset, size, crc, magic 1, attributes, timestamp, key, value
    body = struct.pack(">bbqi", 1, 0, 0, -1) + struct.pack(">i", 1) + b"x"
    legacy = struct.pack(">qi", 0, len(body) + 4) + struct.pack(">I", zlib.crc32(body)) + body
    a, b, c = _three()
    batches = list(KR.iter_batches(legacy + a))
    assert batches[0].error is None and batches[0].magic == 1
    assert [(r.offset, r.key, r.value) for r in batches[0].records] == [(0, None, b"x")]
    assert batches[1].error is None
    # its CRC-32 wrong: reported, never read, and the batch after it still is
    bad = legacy[:12] + struct.pack(">I", 0) + legacy[16:]
    batches = list(KR.iter_batches(bad + a))
    assert batches[0].error.reason == "bad_crc" and "CRC-32 " in batches[0].error.message
    assert batches[1].error is None and batches[1].position == len(bad)


def test_fuzz_never_crashes():
    rnd = random.Random(1234)
    base = b"".join(_three())
    for _ in range(400):
        data = bytearray(base)
        for _ in range(rnd.randint(1, 6)):
            data[rnd.randrange(len(data))] = rnd.getrandbits(8)
        if rnd.random() < 0.3:
            data = data[:rnd.randrange(len(data))]
        n = 0
        for b in KR.iter_batches(bytes(data), chunk_size=rnd.choice([64, 128, 1 << 20])):
            n += len(b.records)
            assert b.error is None or b.error.position >= 0
        assert n <= 9 * 2


def test_big_batch_grows_window(tmp_path):
    recs = [(b"k", bytes(1000))] * 50
    data = KR.encode_batch(recs) + KR.encode_batch([(b"x", b"y")], base_offset=50)
    p = tmp_path / "big.log"
    p.write_bytes(data)
    batches = list(KR.iter_batches(p, chunk_size=256))
    assert [len(b.records) for b in batches] == [50, 1] and all(b.ok for b in batches)


def test_log_files_order(tmp_path):
    for d in ("t-10", "t-2"):
        (tmp_path / d).mkdir()
        for n in ("00000000000000000100.log", "00000000000000000000.log", "x.index",
                  "00000000000000000000-0000000001.checkpoint"):
            (tmp_path / d / n).write_bytes(b"")
    names = [os.path.relpath(p, tmp_path) for p in KR.log_files(tmp_path)]
    assert names == [os.path.join("t-2", "00000000000000000000-0000000001.checkpoint"),
                     os.path.join("t-2", "00000000000000000000.log"),
                     os.path.join("t-2", "00000000000000000100.log"),
                     os.path.join("t-10", "00000000000000000000-0000000001.checkpoint"),
                     os.path.join("t-10", "00000000000000000000.log"),
                     os.path.join("t-10", "00000000000000000100.log")]


@pytest.mark.parametrize("chunk", [64, 100, 1000])
def test_bytes_source_in_windows(chunk):
    a, b, c = _three()
    bad = bytearray(b)
    struct.pack_into(">i", bad, 8, 10**6)
    data = a + bytes(bad) + c + a
    got = [(x.position, x.error.reason if x.error else None, len(x.records))
           for x in KR.iter_batches(data, chunk_size=chunk)]
    assert got == [(0, None, 3), (len(a), "bad_length", 0), (len(a) + len(b), None, 3),
                   (len(a) + len(b) + len(c), None, 3)]


def test_many_tiny_records_in_one_batch():
    recs = [(None, None)] * 5000          # 7-byte records: more than the default record room
    data = KR.encode_batch(recs) + KR.encode_batch([(b"k", b"v")], base_offset=5000)
    batches = list(KR.iter_batches(data))
    assert [len(b.records) for b in batches] == [5000, 1] and all(b.ok for b in batches)
    assert sum(len(c["offset"]) for c in KR.iter_columns(data, chunk_size=1 << 12)) == 5001


def test_zero_filled_tail_is_one_report(tmp_path):
    a, b, c = _three()
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(a + b + bytes(5 << 20))             # a preallocated segment's tail
    batches = list(KR.iter_batches(p, chunk_size=1 << 20))
    assert [x.error is None for x in batches] == [True, True, False]
    e = batches[-1].error
    assert e.reason == "zero_padding" and e.position == len(a) + len(b)
    assert e.skipped_to == len(a) + len(b) + (5 << 20) and "zero bytes" in e.message


def _windowed_log():
    """Twenty batches of varied records, so windows of a few hundred bytes each hold a
    different number of batches and records."""
    return b"".join(KR.encode_batch([(b"k%d-%d" % (i, j), b"v" * (i + j)) for j in range(i % 4 + 1)],
                                    base_offset=10 * i, base_timestamp=i) for i in range(20))


@pytest.mark.parametrize("source", ["bytes", "file"])
def test_kept_chunks_are_not_overwritten(source, tmp_path):
    """The reader reuses its array buffers from window to window, but never one a caller
    still holds: chunks kept (or only their records) read the same as chunks copied as
    they came."""
    data = _windowed_log()
    src = data
    if source == "file":
        src = tmp_path / "00000000000000000000.log"
        src.write_bytes(data)
    copied = [(c.base, c.batches.copy(), c.records.copy())
              for c in KR.iter_chunks(src, chunk_size=300)]
    assert len(copied) > 4
    kept = list(KR.iter_chunks(src, chunk_size=300))
    only_records = [c.records for c in KR.iter_chunks(src, chunk_size=300)]
    assert [c.base for c in kept] == [b for b, _, _ in copied]
    for c, r, (_, b0, r0) in zip(kept, only_records, copied):
        assert c.batches.tobytes() == b0.tobytes()
        assert c.records.tobytes() == r0.tobytes() == r.tobytes()


def test_scan_pool_reuses_only_free_buffers():
    data = _windowed_log()
    fresh = KR._impl.records.scan(data)
    pool = []
    first = KR._impl.records.scan(data, pool=pool)
    for a, b in zip(fresh, first):
        assert (a == b) if isinstance(a, int) else a.tobytes() == b.tobytes()
    second = KR._impl.records.scan(data, pool=pool)   # `first` is still held
    assert second[2].tobytes() == first[2].tobytes()
    if KR._impl.records is not KR._impl._records_py:   # the twin builds new arrays each call
        assert len(pool) == 4                  # two buffers per dtype: `first`'s and `second`'s
        assert not np.shares_memory(first[2], second[2])
        del first
        third = KR._impl.records.scan(data, pool=pool)
        assert len(pool) == 4 and not np.shares_memory(third[2], second[2])
        fourth = KR._impl.records.scan(data, pool=pool)   # all pooled buffers busy: a new one
        assert len(pool) == 4
        assert not any(np.shares_memory(fourth[k], x[k]) for x in (second, third) for k in (1, 2))


def test_plain_loop_reuses_two_buffers():
    """A for loop holds one chunk while the next is scanned: two record buffers serve it."""
    if KR._impl.records is KR._impl._records_py:
        pytest.skip("the twin builds new arrays each call")
    bases = {c.records.base.ctypes.data for c in KR.iter_chunks(_windowed_log(), chunk_size=300)}
    assert len(bases) <= 2
