"""Segment read throughput and group-state fold rate on a generated ``__consumer_offsets`` log.

    KCODEC_BENCH_OFFSETS_MB=1024 pytest bench/bench_offsets.py --benchmark-only -n 0

Size: ``KCODEC_BENCH_OFFSETS_MB`` (default 32 MB; the log is generated once per session by
``bench/gen_offsets_log.py``, ``KCODEC_BENCH_OFFSETS_DIR`` reuses an existing one).
Each benchmark records ``MB_per_s`` and ``records_per_s`` in its extra_info.  "cold" drops
the file's pages from the page cache before each round (``posix_fadvise DONTNEED``).
The pure-Python baselines (a hand-written ``struct`` batch parser with the reference
engine, and a ``struct``-based fold as an exporter would write it) run on the first
``KCODEC_BENCH_BASELINE_MB`` (default 4) MB only and report their rates the same way.
"""
from __future__ import annotations

import os
import struct
import sys
import tracemalloc

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from kcodec import log as KR  # noqa: E402
from kcodec.offsets.columns import iter_offset_columns  # noqa: E402
from kcodec.offsets.state import fold_log  # noqa: E402

SIZE_MB = float(os.environ.get("KCODEC_BENCH_OFFSETS_MB", "32"))
BASELINE_MB = float(os.environ.get("KCODEC_BENCH_BASELINE_MB", "4"))


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory):
    d = os.environ.get("KCODEC_BENCH_OFFSETS_DIR")
    if d:
        return d
    from gen_offsets_log import generate
    d = str(tmp_path_factory.mktemp("offsets"))
    generate(d, int(SIZE_MB * (1 << 20)))
    return d


@pytest.fixture(scope="session")
def log_info(log_dir):
    files = KR.log_files(log_dir)
    size = sum(os.path.getsize(f) for f in files)
    n = sum(len(c["offset"]) for c in KR.iter_columns(log_dir))
    return files, size, n


@pytest.fixture(scope="session")
def baseline_file(log_dir, tmp_path_factory):
    """The first BASELINE_MB of the log, cut at a batch boundary."""
    src = KR.log_files(log_dir)[0]
    limit = int(BASELINE_MB * (1 << 20))
    end = 0
    for b in KR.iter_batches(src):
        if b.position + b.size > limit:
            break
        end = b.position + b.size
    p = tmp_path_factory.mktemp("baseline") / "00000000000000000000.log"
    with open(src, "rb") as f:
        p.write_bytes(f.read(end))
    return str(p)


def _drop_cache(files):
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _rates(benchmark, size, n):
    t = benchmark.stats.stats.mean
    benchmark.extra_info["MB"] = round(size / 1e6, 1)
    benchmark.extra_info["records"] = n
    benchmark.extra_info["MB_per_s"] = round(size / t / 1e6, 1)
    benchmark.extra_info["records_per_s"] = round(n / t)


def _scan(path):
    n = 0
    for c in KR.iter_columns(path):
        n += len(c["offset"])
    return n


def _decode(path):
    n = 0
    for c in iter_offset_columns(path):
        n += len(c["offset"])
    return n


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_segment_read(benchmark, log_dir, log_info, cache):
    """Batches split, CRC-checked, records split into columns (keys/values as bytes)."""
    files, size, n = log_info
    setup = (lambda: _drop_cache(files)) if cache == "cold" else None
    benchmark.pedantic(_scan, args=(log_dir,), setup=setup, rounds=3, iterations=1)
    _rates(benchmark, size, n)


@pytest.mark.parametrize("cache", ["warm", "cold"])
def test_segment_read_and_offsets_decode(benchmark, log_dir, log_info, cache):
    """Segment parse + __consumer_offsets decode (offset commits in C, the rest generic)."""
    files, size, n = log_info
    setup = (lambda: _drop_cache(files)) if cache == "cold" else None
    benchmark.pedantic(_decode, args=(log_dir,), setup=setup, rounds=3, iterations=1)
    _rates(benchmark, size, n)


def test_group_state_fold(benchmark, log_dir, log_info):
    files, size, n = log_info
    st = benchmark.pedantic(fold_log, args=(log_dir,), rounds=2, iterations=1)
    assert st.groups
    _rates(benchmark, size, n)


def test_memory_flat(benchmark, log_dir, log_info):
    """Peak traced allocation while decoding the whole log: bounded by the read chunk,
    not by the log size."""
    files, size, n = log_info

    def run():
        tracemalloc.start()
        _decode(log_dir)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak
    peak = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["log_MB"] = round(size / 1e6, 1)
    benchmark.extra_info["peak_traced_MB"] = round(peak / 1e6, 1)


# --------------------------------------------------------------------------- pure-Python baselines

def _uvarint(b, pos):
    shift = v = 0
    while True:
        x = b[pos]
        pos += 1
        v |= (x & 0x7F) << shift
        if not x & 0x80:
            return v, pos
        shift += 7


def _varint(b, pos):
    v, pos = _uvarint(b, pos)
    return (v >> 1) ^ -(v & 1), pos


def py_records(data):
    """A plain struct-based batch/record parser (no compression), as people hand-write it."""
    pos, n = 0, len(data)
    while pos + 61 <= n:
        base_offset, blen = struct.unpack_from(">qi", data, pos)
        attrs, = struct.unpack_from(">h", data, pos + 21)
        pid, = struct.unpack_from(">q", data, pos + 43)
        count, = struct.unpack_from(">i", data, pos + 57)
        end = pos + 12 + blen
        p = pos + 61
        for _ in range(count):
            _, p = _varint(data, p)
            p += 1
            _, p = _varint(data, p)
            od, p = _varint(data, p)
            kl, p = _varint(data, p)
            key = data[p:p + kl] if kl >= 0 else None
            p += max(kl, 0)
            vl, p = _varint(data, p)
            val = data[p:p + vl] if vl >= 0 else None
            p += max(vl, 0)
            hc, p = _varint(data, p)
            for _ in range(hc):
                hl, p = _varint(data, p)
                p += hl
                hl, p = _varint(data, p)
                p += max(hl, 0)
            yield attrs, pid, base_offset + od, key, val
        pos = end


def py_decode(path):
    """Baseline: struct batch parser + the pure-Python reference engine per record."""
    from kcodec import _codec_py
    from kcodec import program
    from kcodec.offsets.records import record_types
    types = record_types()
    progs = {}
    with open(path, "rb") as f:
        data = f.read()
    n = 0
    for attrs, pid, off, key, val in py_records(data):
        n += 1
        if attrs & 0x20 or key is None:
            continue
        t = struct.unpack_from(">h", key)[0]
        info = types.get(t)
        if info is None:
            continue
        kp = progs.get((info.key, 0)) or progs.setdefault((info.key, 0), program(info.key, 0))
        _codec_py.decode(kp, key[2:], 0)
        if val is not None:
            v = struct.unpack_from(">h", val)[0]
            vp = progs.get((info.value, v)) or progs.setdefault((info.value, v),
                                                                program(info.value, v, newer="latest"))
            _codec_py.decode(vp, val[2:], 0)
    return n


def py_fold(path):
    """Baseline fold as exporters write it: struct-parse offset commits, last value wins."""
    with open(path, "rb") as f:
        data = f.read()
    live = {}
    n = 0
    for attrs, pid, off, key, val in py_records(data):
        n += 1
        if attrs & 0x20 or key is None or struct.unpack_from(">h", key)[0] not in (0, 1):
            continue
        gl, = struct.unpack_from(">h", key, 2)
        g = key[4:4 + gl].decode()
        tl, = struct.unpack_from(">h", key, 4 + gl)
        t = key[6 + gl:6 + gl + tl].decode()
        p, = struct.unpack_from(">i", key, 6 + gl + tl)
        if val is None:
            live.pop((g, t, p), None)
        else:
            live[(g, t, p)] = struct.unpack_from(">q", val, 2)[0]
    return n


def test_baseline_python_read_and_decode(benchmark, baseline_file):
    size = os.path.getsize(baseline_file)
    n = benchmark.pedantic(py_decode, args=(baseline_file,), rounds=1, iterations=1)
    _rates(benchmark, size, n)


def test_baseline_python_fold(benchmark, baseline_file):
    size = os.path.getsize(baseline_file)
    n = benchmark.pedantic(py_fold, args=(baseline_file,), rounds=2, iterations=1)
    _rates(benchmark, size, n)


def test_same_file_kcodec_read_and_decode(benchmark, baseline_file):
    """kcodec on the baseline's slice, for a like-for-like ratio."""
    size = os.path.getsize(baseline_file)
    n = benchmark.pedantic(_decode, args=(baseline_file,), rounds=3, iterations=1)
    _rates(benchmark, size, n)


# --------------------------------------------------------------------------- offsets dump

def _dump(path, columnar=True):
    """``kcodec offsets dump`` without the argument parsing: every line written to
    /dev/null (the bytes a pipe would take)."""
    from kcodec.offsets.dump import iter_dump
    n = 0
    with open(os.devnull, "wb") as out:
        for f in KR.log_files(path):
            for pieces, _bad, _end, _err in iter_dump(f, columnar=columnar):
                for p in pieces:
                    out.write(p.encode() if isinstance(p, str) else p)
                    n += len(p)
    return n


def test_offsets_dump(benchmark, log_dir, log_info):
    """The JSON lines of ``offsets dump`` from the columnar path (target: 100 MB/s of
    segment input per core)."""
    files, size, n = log_info
    out = benchmark.pedantic(_dump, args=(log_dir,), rounds=3, iterations=1)
    _rates(benchmark, size, n)
    benchmark.extra_info["output_MB"] = round(out / 1e6, 1)


def test_baseline_offsets_dump_record_path(benchmark, baseline_file):
    """The same lines built record by record (objects, ``to_json``, ``json.dumps``): what
    ``offsets dump`` did before; on the baseline slice, for the ratio."""
    size = os.path.getsize(baseline_file)
    benchmark.pedantic(_dump, args=(baseline_file, False), rounds=1, iterations=1)
    n = sum(len(c["offset"]) for c in KR.iter_columns(baseline_file))
    _rates(benchmark, size, n)


def test_same_file_offsets_dump(benchmark, baseline_file):
    """The columnar dump on the baseline's slice, for a like-for-like ratio."""
    size = os.path.getsize(baseline_file)
    benchmark.pedantic(_dump, args=(baseline_file,), rounds=3, iterations=1)
    n = sum(len(c["offset"]) for c in KR.iter_columns(baseline_file))
    _rates(benchmark, size, n)
