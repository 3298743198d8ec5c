"""Decode throughput and image replay on a generated ``__cluster_metadata`` log.

    pytest bench/bench_kraft.py --benchmark-only -n 0            # pytest-benchmark suites
    python bench/bench_kraft.py --write bench/results/kraft.md   # the issue's numbers

Size: ``KCODEC_BENCH_KRAFT_PARTITIONS`` (default 100,000 for pytest; the script's
``--partitions`` default is the issue's 1,000,000 with 100,000 topics and as many
PartitionChangeRecords); ``KCODEC_BENCH_KRAFT_DIR`` reuses a generated log.

"decode" = every metadata record of the log into columns (``iter_record_columns``: the
log reader's chunks, the frame heads read by ``slice_heads``, one ``kcodec.arrow.decode``
per record type and version per chunk, reading the values in place through the record
array with ``Slices(..., take=rows)``).  "replay" = ``replay()`` into the columnar image.  The peer in
the same run is the per-record path (``read_record``: one dict per record, as a plain
Python consumer of the log would do it) on the first 20,000 records.  MB/s are per core:
bytes of the log over the process's CPU time.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from kcodec.kraft import iter_record_columns, read_record, replay  # noqa: E402
from kcodec import log  # noqa: E402

PARTITIONS = int(os.environ.get("KCODEC_BENCH_KRAFT_PARTITIONS", "100000"))


def _log_dir(partitions: int, base: str) -> str:
    d = os.environ.get("KCODEC_BENCH_KRAFT_DIR")
    if d:
        return d
    from gen_kraft_log import generate
    out = os.path.join(base, f"kraft-{partitions}")
    if not os.path.exists(os.path.join(out, "__cluster_metadata-0", "00000000000000000000.log")):
        generate(out, topics=max(partitions // 10, 1), partitions=partitions, changes=partitions)
    return out


def _size(d: str) -> int:
    return sum(os.path.getsize(f) for f in log.log_files(d))


def decode_all(d: str) -> int:
    n = 0
    for _name, _ver, cols in iter_record_columns(d):
        n += len(cols["offset"])
    return n


def read_only(d: str) -> int:
    """The log reader alone (kcodec.log.iter_chunks: batches, CRC, record arrays): the floor."""
    return sum(len(c.records) + sum(len(r) for _b, r in c.inflated.values())
               for c in log.iter_chunks(d))


def per_record(d: str, limit: int = 20000) -> tuple:
    """The peer: one dict per record through read_record; (records, bytes)."""
    n = nbytes = 0
    for _batch, rec in log.iter_records(d):
        if rec.value is None or _batch.attributes & 0x20:
            continue
        read_record(rec.value)
        n += 1
        nbytes += len(rec.value)
        if n >= limit:
            break
    return n, nbytes


# ----------------------------------------------------------------------------- pytest

try:
    import pytest
except ImportError:  # pragma: no cover
    pytest = None

if pytest is not None:
    @pytest.fixture(scope="session")
    def kraft_log(tmp_path_factory):
        return _log_dir(PARTITIONS, str(tmp_path_factory.mktemp("kraft")))

    def test_decode(benchmark, kraft_log):
        size = _size(kraft_log)
        n = benchmark(decode_all, kraft_log)
        benchmark.extra_info["MB_per_s"] = size / benchmark.stats.stats.mean / 1e6
        benchmark.extra_info["records"] = n

    def test_replay(benchmark, kraft_log):
        img = benchmark.pedantic(replay, args=(kraft_log,), rounds=3, iterations=1)
        assert img.partition_count() == PARTITIONS and not img.issues

    def test_per_record_peer(benchmark, kraft_log):
        n, nbytes = benchmark(per_record, kraft_log)
        benchmark.extra_info["MB_per_s"] = nbytes / benchmark.stats.stats.mean / 1e6


# ----------------------------------------------------------------------------- script

_CHILD = r"""
import resource, sys, time
sys.path.insert(0, {repo!r})
from kcodec.kraft import replay
c0, t0 = time.process_time(), time.perf_counter()
img = replay({d!r})
cpu, wall = time.process_time() - c0, time.perf_counter() - t0
print(cpu, wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, img.partition_count(),
      len(img.topics), len(img.issues), img.partitions.nbytes())
"""


def _replay_fresh(d: str) -> tuple:
    """replay() in a fresh interpreter: CPU s, wall s, peak RSS MB, partitions, topics,
    issues, bytes of the partition columns."""
    out = subprocess.run([sys.executable, "-c", _CHILD.format(repo=os.path.join(HERE, ".."), d=d)],
                         check=True, capture_output=True, text=True).stdout.split()
    cpu, wall, rss, parts, topics, issues, nb = out
    return float(cpu), float(wall), int(rss) / 1024, int(parts), int(topics), int(issues), int(nb) / 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp", help="where the generated log goes")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--replays", type=int, default=0,
                    help="fresh-process replays (default: --runs); each one is listed")
    ap.add_argument("--write", help="write the markdown report here")
    a = ap.parse_args(argv)
    d = _log_dir(a.partitions, a.dir)
    size = _size(d)
    dec = []
    for _ in range(a.runs):
        c0, t0 = time.process_time(), time.perf_counter()
        n = decode_all(d)
        dec.append((time.process_time() - c0, time.perf_counter() - t0))
    reader = []
    for _ in range(a.runs):
        c0 = time.process_time()
        read_only(d)
        reader.append(time.process_time() - c0)
    rcpu = sorted(reader)[len(reader) // 2]
    peer = []
    for _ in range(a.runs):
        c0 = time.process_time()
        pn, pbytes = per_record(d)
        peer.append(time.process_time() - c0)
    load0 = os.getloadavg()[0]
    rep = [_replay_fresh(d) for _ in range(a.replays or a.runs)]
    dcpu = sorted(x[0] for x in dec)[len(dec) // 2]
    dwall = sorted(x[1] for x in dec)[len(dec) // 2]
    pcpu = sorted(peer)[len(peer) // 2]
    r = sorted(rep)[len(rep) // 2]      # the median run (by CPU)
    load = os.getloadavg()[0]
    lines = [
        "# KRaft metadata: decode and replay",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on the project's 2-core Linux VM (Python "
        f"{sys.version.split()[0]}), `python bench/bench_kraft.py --partitions {a.partitions}"
        + (f" --replays {a.replays}" if a.replays else "") + "`, "
        f"load average {load:.1f} while running (the VM is shared: CPU time is the fair figure, wall "
        "time is inflated by other sessions). Medians of "
        f"{a.runs} runs (replay: of {len(rep)} fresh processes).",
        "",
        f"Log: `bench/gen_kraft_log.py` with {r[4]:,} topics, {r[3]:,} partitions (PartitionRecord v2, "
        f"3 replicas, directories) and {a.partitions:,} PartitionChangeRecords v2 (ISR shrink/expand, "
        f"leader moves, ELR), NoOps, configs: {size / 1e6:.1f} MB, {n:,} records.",
        "",
        "| what | CPU s | wall s | MB/s per core (CPU) | target |",
        "|---|---:|---:|---:|---|",
        f"| decode every record into columns (`iter_record_columns`) | {dcpu:.2f} | {dwall:.2f} | "
        f"{size / dcpu / 1e6:.0f} | >= 200 MB/s |",
        f"| of which the log reader alone (`iter_chunks`: batches, CRC, record arrays) | {rcpu:.2f} | | {size / rcpu / 1e6:.0f} | |",
        f"| peer: one dict per record (`read_record`), first {pn:,} records | {pcpu:.2f} | | "
        f"{pbytes / pcpu / 1e6:.1f} | |",
        f"| replay into the image (`replay`, fresh process) | {r[0]:.2f} | {r[1]:.2f} | "
        f"{size / r[0] / 1e6:.0f} | < 3 s |",
        "",
        f"Replay peak RSS (fresh process, interpreter and NumPy included): **{r[2]:.0f} MB** "
        f"(target < 1 GB); the partition columns take {r[6]:.0f} MB. Issues: {r[5]}.",
        "",
        f"Replay, each fresh process (CPU s, in order; load average {load0:.1f} before the "
        f"first, {os.getloadavg()[0]:.1f} after the last): "
        + " ".join(f"{x[0]:.2f}" for x in rep) + f"; median {r[0]:.2f}, max {max(x[0] for x in rep):.2f}; "
        f"peak RSS {min(x[2] for x in rep):.0f}-{max(x[2] for x in rep):.0f} MB.",
        f"Decode is {size / dcpu / (pbytes / pcpu):.0f}x the per-record dict path.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
