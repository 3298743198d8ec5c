"""In-process cost of kcodec.spark's offsets kernel and of kcodec.arrow.decode's fixed part.

    python3 bench/bench_spark_kernels.py [--reps 30] [--rows 10000]

``decode_offsets`` (the body of ``kcodec.spark.from_consumer_offsets``) on Spark-sized
Arrow batches of bench_spark.py's mix (95% OffsetCommit v4, 5% GroupMetadata v3 with two
consumer members), full result and the narrow projection; and one ``kcodec.arrow.decode``
call on 1 and on ``--rows`` rows.  Process CPU time (load-independent up to cache effects),
min and median of ``--reps`` repetitions; the load average is printed alongside.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import pyarrow as pa  # noqa: E402

import kcodec  # noqa: E402
import kcodec.arrow as ka  # noqa: E402
from bench_spark import _pool  # noqa: E402
from kcodec.spark._kernels import decode_offsets  # noqa: E402

NARROW = ["group", "topic", "partition", "OffsetCommitValue.offset", "OffsetCommitValue.commitTimestamp"]


def cpu(fn, reps: int, inner: int = 1):
    out = []
    for _ in range(reps):
        t = time.process_time()
        for _ in range(inner):
            fn()
        out.append((time.process_time() - t) / inner)
    return min(out), statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=30)
    a = ap.parse_args()
    pool = _pool(a.rows)
    key = pa.array([bytes(k) for _, k, _ in pool], pa.binary())
    value = pa.array([bytes(v) for _, _, v in pool], pa.binary())
    n = len(key)
    print(f"native={kcodec.NATIVE} rows/batch={n} load={os.getloadavg()[0]:.1f}")
    for label, kw in (("full", {}), ("narrow", {"fields": NARROW})):
        decode_offsets(key, value, spark=True, **kw)
        lo, med = cpu(lambda: decode_offsets(key, value, spark=True, **kw), a.reps)
        print(f"decode_offsets {label:7s}: min {lo / n * 1e6:.3f} median {med / n * 1e6:.3f} us/record")
    vals = pa.array([bytes(v) for _, _, v in pool[1:2]], pa.binary())
    for rows, arr in ((1, vals), (n, value)):
        sel = None
        if rows > 1:
            sel = pa.compute.equal(pa.compute.binary_slice(arr, 0, 2), b"\x00\x04")
            sel = sel.to_numpy(zero_copy_only=False)
        f = lambda: ka.decode("OffsetCommitValue", arr, 4, skip=2, select=sel)  # noqa: E731
        f()
        lo, med = cpu(f, a.reps, 200 if rows == 1 else 1)
        print(f"arrow.decode OffsetCommitValue v4, {rows:6d} rows: min {lo * 1e6:.1f} median {med * 1e6:.1f} us/call")
        f = lambda: ka.decode("OffsetCommitValue", arr, 4, skip=2, select=sel, fields=["offset"])  # noqa: E731
        lo, med = cpu(f, a.reps, 200 if rows == 1 else 1)
        print(f"arrow.decode ... fields=[offset], {rows:6d} rows: min {lo * 1e6:.1f} median {med * 1e6:.1f} us/call")
    print(f"load={os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
