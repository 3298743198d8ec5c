"""In-process cost of kcodec.spark's offsets kernel: the one-C-call ``decode_offsets``
against the per-pass peer it replaced (bench/peers/spark_offsets_old.py), interleaved.

    python3 bench/bench_spark_kernels.py [--reps 20] [--rows 10000] [--callgrind]

``decode_offsets(..., spark=True)`` (the body of ``kcodec.spark.from_consumer_offsets``)
on Spark-sized Arrow batches of bench_spark.py's mix (95% OffsetCommit v4, 5%
GroupMetadata v3 with two consumer members), the full default result and the narrow
projection (group, topic, partition, offset, commitTimestamp).  Process CPU time, min and
median of ``--reps`` rounds, each round timing old and new one after the other (load
moves both alike); the load average is printed alongside.  Both results are checked
equal first.  ``--callgrind``: instructions per batch under valgrind (difference of
runs with 20 and 0 batches), which do not move with the load.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import pyarrow as pa  # noqa: E402

import kcodec  # noqa: E402
from bench_spark import _pool  # noqa: E402
from kcodec.spark._kernels import decode_offsets  # noqa: E402
from peers.spark_offsets_old import decode_offsets as old_decode_offsets  # noqa: E402

NARROW = ["group", "topic", "partition", "OffsetCommitValue.offset", "OffsetCommitValue.commitTimestamp"]
IMPLS = {"old": old_decode_offsets, "new": decode_offsets}
SHAPES = {"full": {}, "narrow": {"fields": NARROW}}


def batch(rows: int):
    pool = _pool(rows)
    key = pa.array([bytes(k) for _, k, _ in pool], pa.binary())
    value = pa.array([bytes(v) for _, _, v in pool], pa.binary())
    return key, value


def _callgrind_child(impl: str, shape: str, rows: int, calls: int) -> None:
    key, value = batch(rows)
    fn, kw = IMPLS[impl], SHAPES[shape]
    fn(key, value, spark=True, **kw)        # plans, caches, first-call imports
    for _ in range(calls):
        fn(key, value, spark=True, **kw)


def callgrind(impl: str, shape: str, rows: int, calls: int = 20) -> float:
    """Instructions per batch: (run with `calls` batches - run with 0) / calls."""
    total = []
    for c in (0, calls):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cg.out")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            sys.executable, __file__, "--child", impl, shape, str(rows), str(c)],
                           check=True, capture_output=True)
            with open(out) as f:
                m = re.search(r"^(?:summary|totals):\s*(\d+)", f.read(), re.M)
            total.append(int(m.group(1)))
    return (total[1] - total[0]) / calls


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _callgrind_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per batch under valgrind")
    a = ap.parse_args()
    key, value = batch(a.rows)
    n = len(key)
    print(f"native={kcodec.NATIVE} rows/batch={n} load={os.getloadavg()[0]:.1f}")
    for shape, kw in SHAPES.items():
        old = old_decode_offsets(key, value, spark=True, **kw)
        new = decode_offsets(key, value, spark=True, **kw)
        assert old.type == new.type and old.to_pylist() == new.to_pylist(), f"{shape}: old and new differ"
    times = {(i, s): [] for i in IMPLS for s in SHAPES}
    for _ in range(a.reps):
        for s, kw in SHAPES.items():
            for i, fn in IMPLS.items():
                t = time.process_time()
                fn(key, value, spark=True, **kw)
                times[i, s].append(time.process_time() - t)
    print(f"{'':8s} {'':7s} {'min us/rec':>11s} {'median':>8s}")
    for s in SHAPES:
        for i in IMPLS:
            ts = times[i, s]
            print(f"{s:8s} {i:7s} {min(ts) / n * 1e6:11.3f} {statistics.median(ts) / n * 1e6:8.3f}")
        o, w = min(times["old", s]), min(times["new", s])
        print(f"{s:8s} old/new by min: {o / w:.2f}x")
    print(f"load={os.getloadavg()[0]:.1f}")
    if a.callgrind:
        for s in SHAPES:
            for i in IMPLS:
                ins = callgrind(i, s, a.rows)
                print(f"callgrind {s:7s} {i}: {ins / 1e6:.2f}M instructions per {a.rows}-row batch "
                      f"({ins / a.rows:.0f} per record)")


if __name__ == "__main__":
    main()
