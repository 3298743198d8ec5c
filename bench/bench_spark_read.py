"""``kcodec.spark.read_log`` (fused read + decode) against the pair it replaces, as whole
Spark jobs (issue 23, section 2).

    python3 bench/bench_spark_read.py [DATA_DIR] [--size-mb 128] [--partitions 4] [--repeat 3]
                                      [--variants old,pair,fused,narrow,read] [--out bench/results/spark_read.md]

``DATA_DIR`` holds ``__consumer_offsets-*`` segments (generated there by
``bench/gen_offsets_log.py`` with ``--size-mb``/``--partitions`` when it has none).  In one
process on ``local[2]``, the same segments through

(old)    the ``read_log`` of before commit 691dc54 (``bench/peers/old_read_log.py``: each
         segment a ``binaryFile`` row, shuffled by path, records built from Python lists),
         then ``from_consumer_offsets(key, value)``: the pair as issue 23 was filed;
(pair)   today's ``read_log`` (the Python data source over byte ranges, Arrow from the C
         scanner's arrays), then ``from_consumer_offsets(key, value)``;
(fused)  ``read_log(spark, path, decode="offsets")``: scanned and decoded in one pass;
(narrow) the fused form with ``options={"fields": [group, topic, partition,
         OffsetCommitValue.offset, OffsetCommitValue.commitTimestamp]}``;
(read)   ``read_log`` alone.

Every variant is the whole job ``df.write.format("noop")`` of every column (the log's
columns and the decoded struct, named ``decoded`` in all four decoding variants): Spark
turns every row of every column into its ``UnsafeRow`` (the projection after a Python
map or UDF) and nothing is pruned.  The variants run in interleaved rounds (after a warm-up
round on a small log); CPU time (user + system) is read from /proc for the JVM and its Python workers
(children reaped by the JVM or the worker daemon are counted through their parents'
``cutime``), with the 1-minute load average around each run.  Target: (fused) at <= 0.4x
the CPU of (old).
"""
from __future__ import annotations

import argparse
import glob
import os
import platform
import sys
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from bench_spark import _TreeCpu  # noqa: E402  (the JVM's and its Python workers' CPU)

NARROW = ["group", "topic", "partition", "OffsetCommitValue.offset", "OffsetCommitValue.commitTimestamp"]
LABELS = {
    "old": "pre-691dc54 read_log (binaryFile rows) + from_consumer_offsets",
    "pair": "read_log + from_consumer_offsets",
    "fused": 'read_log(decode="offsets")',
    "narrow": 'read_log(decode="offsets", options={"fields": narrow})',
    "read": "read_log alone",
}


def _data(args: argparse.Namespace) -> str:
    if not glob.glob(os.path.join(args.data, "*", "*.log")):
        from gen_offsets_log import main as gen
        gen([args.data, "--size-mb", str(args.size_mb), "--partitions", str(args.partitions)])
    return args.data


def main(argv: "List[str] | None" = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default="/tmp/kcodec-bench-read")
    ap.add_argument("--size-mb", type=float, default=128)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds (best by CPU is kept)")
    ap.add_argument("--variants", default="old,pair,fused,narrow,read")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "spark_read.md"))
    args = ap.parse_args(argv)
    path = _data(args)
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(path, "*", "*.log")))

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession, functions as F
    from kcodec.spark import from_consumer_offsets, read_log
    from kcodec.spark._session import use_this_python
    from peers.old_read_log import read_log as old_read_log

    from pyspark import cloudpickle
    import peers.old_read_log
    cloudpickle.register_pickle_by_value(peers.old_read_log)     # the workers do not see bench/
    use_this_python()
    spark = (SparkSession.builder.master("local[2]").appName("kcodec-bench-read")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "2g")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    def decoded(df, options=None):
        return df.select("*", from_consumer_offsets("key", "value", options).alias("decoded"))

    def frames_of(p):
        return {
            "old": lambda: decoded(old_read_log(spark, p)),
            "pair": lambda: decoded(read_log(spark, p)),
            "fused": lambda: read_log(spark, p, decode="offsets"),
            "narrow": lambda: read_log(spark, p, decode="offsets", options={"fields": NARROW}),
            "read": lambda: read_log(spark, p),
        }
    frames = frames_of(path)
    order = args.variants.split(",")
    from kcodec.log import iter_chunks
    rows = sum(len(ch.records) + sum(len(r) for _, r in ch.inflated.values())
               for f in sorted(glob.glob(os.path.join(path, "*", "*.log"))) for ch in iter_chunks(f))
    # the decoding variants give the same rows: checked in full on a small log of the same shape
    small = os.path.join(args.data + "-check")
    if not glob.glob(os.path.join(small, "*", "*.log")):
        from gen_offsets_log import main as gen
        gen([small, "--size-mb", "2", "--partitions", "2", "--seed", "7"])

    def rows_of(df):
        # (the column function decodes control records too; the fused form leaves them null)
        df = df.withColumn("decoded", F.when(~F.col("is_control"), F.col("decoded")))
        return sorted((r.asDict(recursive=True) for r in df.collect()),
                      key=lambda d: (d["file"], d["batch_position"], d["offset"] if d["offset"] is not None else -1))
    want = rows_of(decoded(read_log(spark, small)))
    assert want and rows_of(read_log(spark, small, decode="offsets")) == want, "fused and pair differ"
    if "old" in order:
        assert rows_of(decoded(old_read_log(spark, small))) == want, "old and pair differ"
    print(f"{rows:,} rows in {size / 2**20:.0f} MiB; the variants agree on all {len(want):,} rows of a "
          "2 MiB log", flush=True)

    best: Dict[str, Dict[str, float]] = {}
    loads: Dict[str, List[float]] = {}

    def run(name: str) -> None:
        df = frames[name]()
        l0 = os.getloadavg()[0]
        with _TreeCpu() as meter:
            t0 = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            wall = time.perf_counter() - t0
        used = meter.used
        cpu = used["jvm"] + used["python"]
        loads.setdefault(name, []).extend([l0, os.getloadavg()[0]])
        print(f"  ({name}) {wall:.1f} s wall, {cpu:.1f} CPU s (JVM {used['jvm']:.1f}, "
              f"Python {used['python']:.1f})", flush=True)
        if name not in best or cpu < best[name]["cpu"]:
            best[name] = {"cpu": cpu, "wall": wall, **used}

    for name in order:          # warm-up round on the small log (JIT, workers, imports)
        frames_of(small)[name]().write.format("noop").mode("overwrite").save()
    for i in range(args.repeat):
        print(f"round {i + 1}", flush=True)
        for name in (order if i % 2 == 0 else order[::-1]):
            run(name)

    cmd = (f"python3 bench/bench_spark_read.py DATA --size-mb {args.size_mb:g} --partitions {args.partitions} "
           f"--repeat {args.repeat} --variants {args.variants}")
    lines = [
        "# Spark: fused read_log(decode=\"offsets\") against read_log + from_consumer_offsets",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on the project's 2-core Linux VM "
        f"(shared with other work), Python {platform.python_version()}, PySpark "
        f"{__import__('pyspark').__version__}, `local[2]`, `{cmd}`.",
        f"Input: `bench/gen_offsets_log.py` segments, {size / 2**20:.0f} MiB in {args.partitions} "
        f"`__consumer_offsets` partitions, {rows:,} rows (records and control records). "
        "Each variant writes every column (log columns and, where decoded, the `decoded` struct) to "
        "Spark's `noop` format, so every value is turned into Spark's rows and nothing is pruned. "
        f"Best of {args.repeat} interleaved rounds by CPU time (JVM + Python workers, from /proc), after a "
        "warm-up round on a 2 MiB log; the 1-minute load average around the runs is in the last column.",
        "",
        "| variant | CPU s | JVM / Python CPU s | CPU us per record | records per CPU s (per core) "
        "| wall s | vs (old) | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base = best.get("old", {}).get("cpu")
    for name in order:
        b = best[name]
        vs = f"{b['cpu'] / base:.2f}x" if base else ""
        lines.append(f"| ({name}) {LABELS[name]} | {b['cpu']:.1f} | {b['jvm']:.1f} / {b['python']:.1f} | "
                     f"{b['cpu'] / rows * 1e6:.2f} | {rows / b['cpu']:,.0f} | {b['wall']:.1f} | {vs} | "
                     f"{min(loads[name]):.1f}-{max(loads[name]):.1f} |")
    lines.append("")
    if base and "fused" in best:
        r = best["fused"]["cpu"] / base
        lines.append(f"- (fused) / (old): {r:.2f}x by CPU time (target: <= 0.4x): {'met' if r <= 0.4 else 'NOT met'}.")
    if "pair" in best and "fused" in best:
        lines.append(f"- (fused) / (pair): {best['fused']['cpu'] / best['pair']['cpu']:.2f}x by CPU time.")
    if "narrow" in best and "fused" in best:
        lines.append(f"- (narrow) / (fused): {best['narrow']['cpu'] / best['fused']['cpu']:.2f}x by CPU time.")
    lines.append("")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    earlier = ""
    if os.path.exists(args.out):        # the newest run first, the earlier ones kept below it
        with open(args.out) as f:
            prev = f.read()
        head, _, rest = prev.partition("\n# Earlier runs\n")
        earlier = "\n## " + head.split("\n", 1)[-1].strip() + "\n" + rest
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n\n# Earlier runs\n" + earlier)
    print("\n".join(lines))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
