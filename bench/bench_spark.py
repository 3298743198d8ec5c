"""kcodec's Spark column functions against Spark's own floor and a row-at-a-time UDF.

    python3 bench/bench_spark.py [--rows 4000000] [--variants c,d,a,n,nf] [--out bench/results/spark.md]

In one process on ``local[2]``: a generated DataFrame of ``__consumer_offsets`` key/value
pairs (offset commits as Kafka 4.1.1 writes them, plus a share of group metadata records,
cached in memory first) through

(a) ``kcodec.spark.from_consumer_offsets`` (Arrow UDF, C bulk decoder) with its default
    ``record_types`` (offset commits and classic group metadata, the types the data has)
    and, as (a2), with ``options={"record_types": "all"}`` (a value struct for every type),
    as (a3), with ``["OffsetCommit"]`` (group metadata rows as raw bytes);
(b) a plain row-at-a-time Python UDF (``pyspark.sql.functions.udf``) returning the same
    result as (a), same Spark schema and same values (checked on a sample first): what a
    user without kcodec.spark writes, ``kcodec.decode`` on key, value and the members'
    subscriptions/assignments, a dict per row;
(c) an Arrow pass-through UDF that decodes nothing: it takes key and value, as (a) does,
    and hands the value back (Spark's own floor for moving the bytes to Python and back);
(d) an Arrow UDF that takes key and value and hands back (a)'s result for rows of the same
    mix, decoded once before the run: what Spark alone costs to take (a)'s result, the floor
    of any decoder that returns it;
(n) the narrow projection, ``options={"fields": [group, topic, partition,
    OffsetCommitValue.offset, OffsetCommitValue.commitTimestamp]}`` (issue 23);
(nf) its floor: an Arrow UDF that takes key and value and hands back (n)'s result decoded
    before the run (a pass-through of the same narrow width).

Each variant's output is forced with an aggregate over one of its fields.  (b) runs on the
first ``--udf-rows`` rows only (it is slow) and is compared by rate.  Peak memory comes
from Spark's executor metrics (JVM heap and the Python workers' RSS), read from the
status REST API after each variant's first run (peaks are cumulative in the order the
variants run, ``--variants``).
CPU time is split between the JVM and the Python workers; the load average is read
around every timed run.
Targets (issue 23): (n) within 1.3x of (c); (a) within 1.15x of (d).  (Issue 10's: (a)
at least 10x faster than (b); its (a) within 1.5x of (c) ended blocked, (d)/(c) alone is
above it.)  (a2), (a3) are reported against (c) and (a).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import struct
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import pyarrow as pa  # noqa: E402

import kcodec  # noqa: E402


def _pool(n: int = 20000, every: int = 20):
    """Distinct key/value pairs: 95% offset commits (v4, Kafka's current), 5% classic
    group metadata (v3) with two members."""
    from kcodec.consumer import Assignment, Subscription, TopicPartition, encode_assignment, encode_subscription
    out = []
    for i in range(n):
        g = f"group-{i % 997}"
        if not every or i % every:
            k = struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": g, "topic": f"topic-{i % 61}",
                                                                         "partition": i % 24}, 0)
            v = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", {
                "offset": i * 7, "metadata": "" if i % 3 else "m", "commitTimestamp": 1795344091343 + i}, 4)
        else:
            sub = encode_subscription(Subscription(["orders", "payments"]))
            asg = encode_assignment(Assignment([TopicPartition("orders", 0), TopicPartition("payments", 1)]))
            members = [{"memberId": f"{g}-c{j}", "groupInstanceId": None, "clientId": f"c{j}",
                        "clientHost": "/10.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
                        "subscription": sub, "assignment": asg} for j in range(2)]
            k = struct.pack(">h", 2) + kcodec.encode("GroupMetadataKey", {"group": g}, 0)
            v = struct.pack(">h", 3) + kcodec.encode("GroupMetadataValue", {
                "protocolType": "consumer", "generation": i, "protocol": "range", "leader": f"{g}-c0",
                "currentStateTimestamp": 1795344091343, "members": members}, 3)
        out.append((i, bytearray(k), bytearray(v)))
    return out


def _row_decoder(names):
    """(b): what a user without kcodec.spark writes to get (a)'s result from a plain
    row-at-a-time UDF: kcodec.decode on the key and on the value (and on a classic
    consumer group's member subscriptions/assignments), a dict per row in (a)'s schema
    (``names``: its fields)."""
    import uuid
    from kcodec.errors import KcodecError
    from kcodec.offsets import record_types
    types = record_types()
    names = set(names)

    def plain(v):       # as kcodec.spark does it internally, written out: (b) uses no kcodec.spark
        if isinstance(v, dict):
            d = {k: plain(x) for k, x in v.items() if k != "_unknown_tagged_fields"}
            d["_unknown_tagged_fields"] = [{"tag": t, "data": bytes(b)} for t, b in v.get("_unknown_tagged_fields", ())]
            return d
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, uuid.UUID):
            return v.bytes
        return v

    def embedded(b, name):
        if b is None:
            return None
        ver = struct.unpack_from(">h", b)[0]
        try:
            return {"version": ver, "parsed_version": min(ver, 3), "trailing": b"",
                    "value": plain(kcodec.decode(name, b[2:], min(ver, 3)))}
        except KcodecError as e:
            return {"version": ver, "error": str(e)}

    def decode(key, value):
        k = bytes(key)
        rt = struct.unpack_from(">h", k)[0]
        v = None if value is None else bytes(value)
        vv = None if v is None else struct.unpack_from(">h", v)[0]
        out = {"record_type": rt, "tombstone": v is None, "unknown": False, "newer_than_known": False,
               "value_version": vv}
        info = types.get(rt)
        if info is None:
            return {**out, "unknown": True, "raw_value": v}
        try:
            kd = kcodec.decode(info.key, k[2:], 0)
        except KcodecError as e:
            return {**out, "value_version": None, "raw_value": v, "_error": f"key: {e}"}
        out.update(group=kd.get("group", kd.get("groupId")), topic=kd.get("topic"), partition=kd.get("partition"))
        if v is None:
            return out
        try:
            vd = kcodec.decode(info.value, v[2:], vv)
        except KcodecError as e:
            return {**out, "raw_value": v, "_error": f"value: {e}"}
        if info.value not in names:
            return {**out, "raw_value": v}
        out[info.value] = plain(vd)
        if info.value == "GroupMetadataValue" and vd.get("protocolType") == "consumer":
            out["members"] = [{"subscription": embedded(m["subscription"], "ConsumerProtocolSubscription"),
                               "assignment": embedded(m["assignment"], "ConsumerProtocolAssignment")}
                              for m in vd["members"]]
        return out
    return decode


def _descendants() -> dict:
    """pid -> (own user + system CPU seconds, program name) of this process's descendants
    (the JVM and the Python workers it starts), from /proc (Linux)."""
    from bench_spark_scale import _cpu_rss, _tree
    out = {}
    for pid in _tree(os.getpid())[1:]:
        try:
            with open(f"/proc/{pid}/comm") as f:
                out[pid] = (_cpu_rss(pid)[0], f.read().strip())
        except OSError:         # gone since the listing
            continue
    return out


class _TreeCpu:
    """CPU seconds (user + system) this process's descendants use inside a ``with``: the
    JVM's ("jvm") and the Python processes' ("python"), each process's own time sampled
    every 0.1 s.  Sampled, not read before and after: Spark ends idle Python workers, and
    a worker gone by the end took its time with it (read through the reaper's ``cutime``
    it went missing in some runs, which best-of-N then picked); a process's time after
    its last sample (at most 0.1 s) is the only part not counted."""

    def __enter__(self) -> "_TreeCpu":
        import threading
        self.first = {pid: cpu for pid, (cpu, _) in _descendants().items()}
        self.last: dict = {}
        self.kind: dict = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        for pid, (cpu, comm) in _descendants().items():
            self.last[pid] = cpu
            self.kind[pid] = "jvm" if comm == "java" else "python"

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.used = {"jvm": 0.0, "python": 0.0}
        for pid, cpu in self.last.items():
            self.used[self.kind[pid]] += cpu - self.first.get(pid, 0.0)


def _peaks(spark):
    """Peak executor metrics so far (MB), from the status REST API."""
    url = spark.sparkContext.uiWebUrl
    if not url:
        return {}
    app = spark.sparkContext.applicationId
    try:
        with urllib.request.urlopen(f"{url}/api/v1/applications/{app}/executors", timeout=10) as r:
            ex = json.load(r)
    except OSError:
        return {}
    peak = {}
    for e in ex:
        for k, v in (e.get("peakMemoryMetrics") or {}).items():
            peak[k] = max(peak.get(k, 0), v)
    return {"jvm_heap_mb": peak.get("JVMHeapMemory", 0) / 2**20,
            "python_rss_mb": peak.get("ProcessTreePythonRSSMemory", 0) / 2**20}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--udf-rows", type=int, default=400_000)
    ap.add_argument("--group-metadata-every", type=int, default=20,
                    help="one GroupMetadata record per N (0: offset commits only)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per variant after the first (best is kept)")
    ap.add_argument("--max-records-per-batch", type=int, default=10000,
                    help="spark.sql.execution.arrow.maxRecordsPerBatch (Spark's default: 10000)")
    ap.add_argument("--each", action="store_true", help="print every timed run's CPU (JVM / Python) and wall time")
    ap.add_argument("--variants", default="c,d,a,n,nf",
                    help="which to run, in this order (of c, d, a, a2, a3, n, nf, b)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "spark.md"))
    args = ap.parse_args(argv)

    # the Python workers run PYSPARK_PYTHON (or python3 on PATH), not spark.pyspark.python
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession, functions as F, types as T
    from kcodec.spark import from_consumer_offsets, offsets_schema
    from kcodec.spark._session import use_this_python

    use_this_python()       # the workers run this interpreter (the config below does not reach them)
    spark = (SparkSession.builder.master("local[2]").appName("kcodec-bench")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g")
             .config("spark.executor.processTreeMetrics.enabled", "true")
             .config("spark.executor.metrics.pollingInterval", "500ms")
             .config("spark.executor.heartbeatInterval", "1s")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(args.max_records_per_batch))
             .config("spark.pyspark.python", sys.executable)
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    pool = _pool(every=args.group_metadata_every)
    pdf = spark.createDataFrame(pool, "k long, key binary, value binary")
    df = (spark.range(args.rows, numPartitions=8).withColumn("k", F.col("id") % len(pool))
          .join(F.broadcast(pdf), "k").select("id", "key", "value").cache())
    t = time.perf_counter()
    n = df.count()
    print(f"generated {n:,} rows in {time.perf_counter() - t:.1f} s", flush=True)

    @F.arrow_udf(T.BinaryType())
    def passthrough(k: pa.Array, v: pa.Array) -> pa.Array:
        return v

    # (d): (a)'s result for the first batch-size rows of the pool (the same mix of record
    # types), decoded here, handed back per batch: Spark's cost of taking (a)'s result
    from kcodec.spark._kernels import decode_offsets
    head = pool[:args.max_records_per_batch]
    decoded = decode_offsets(pa.array([bytes(k) for _, k, _ in head], pa.binary()),
                             pa.array([bytes(v) for _, _, v in head], pa.binary()), spark=True)

    @F.arrow_udf(offsets_schema())
    def decoded_before(k: pa.Array, v: pa.Array) -> pa.Array:
        if len(k) <= len(decoded):
            return decoded.slice(0, len(k))
        return pa.concat_arrays([decoded] * -(-len(k) // len(decoded))).slice(0, len(k))

    narrow = {"fields": ["group", "topic", "partition", "OffsetCommitValue.offset",
                         "OffsetCommitValue.commitTimestamp"]}
    decoded_narrow = decode_offsets(pa.array([bytes(k) for _, k, _ in head], pa.binary()),
                                    pa.array([bytes(v) for _, _, v in head], pa.binary()),
                                    fields=narrow["fields"], spark=True)

    @F.arrow_udf(offsets_schema(**narrow))
    def narrow_before(k: pa.Array, v: pa.Array) -> pa.Array:
        if len(k) <= len(decoded_narrow):
            return decoded_narrow.slice(0, len(k))
        return pa.concat_arrays([decoded_narrow] * -(-len(k) // len(decoded_narrow))).slice(0, len(k))

    row_udf = F.udf(_row_decoder(offsets_schema().names), offsets_schema())
    force = [F.sum("r.OffsetCommitValue.offset"), F.count("r.group")]
    variants = {
        "c": ("Arrow pass-through (decodes nothing)", df,
              lambda d: d.select(passthrough("key", "value").alias("x")).agg(F.count("x"))),
        "a": ("kcodec.spark.from_consumer_offsets (default record_types)", df,
              lambda d: d.select(from_consumer_offsets("key", "value").alias("r")).agg(*force)),
        "a2": ('kcodec.spark.from_consumer_offsets, record_types="all"', df,
               lambda d: d.select(from_consumer_offsets("key", "value", {"record_types": "all"}).alias("r"))
               .agg(*force)),
        "a3": ('kcodec.spark.from_consumer_offsets, record_types=["OffsetCommit"]', df,
               lambda d: d.select(from_consumer_offsets("key", "value", {"record_types": ["OffsetCommit"]})
                                  .alias("r")).agg(*force)),
        "d": ("Arrow UDF handing back (a)'s result decoded before the run (Spark's cost of taking it)", df,
              lambda d: d.select(decoded_before("key", "value").alias("r")).agg(*force)),
        "n": ("from_consumer_offsets, narrow fields (group, topic, partition, offset, commitTimestamp)", df,
              lambda d: d.select(from_consumer_offsets("key", "value", narrow).alias("r")).agg(*force)),
        "nf": ("Arrow UDF handing back (n)'s result decoded before the run (the narrow floor)", df,
               lambda d: d.select(narrow_before("key", "value").alias("r")).agg(*force)),
        "b": ("row-at-a-time Python UDF, kcodec.decode, same result as (a)", df.limit(args.udf_rows).cache(),
              lambda d: d.select(row_udf("key", "value").alias("r")).agg(*force)),
    }
    order = tuple(args.variants.split(","))
    sample = df.limit(2000)
    if "b" in order:
        # (b) is like-for-like: the same rows as (a) (checked here on a sample)
        got_a = sample.select("id", from_consumer_offsets("key", "value").alias("r")).orderBy("id").collect()
        got_b = sample.select("id", row_udf("key", "value").alias("r")).orderBy("id").collect()
        assert [r.r for r in got_a] == [r.r for r in got_b], "(b) does not return what (a) returns"
        print(f"(a) and (b) agree on {len(got_a):,} sample rows", flush=True)
    if "n" in order:
        # (n) returns (a)'s fields, cut to the narrow ones
        got_a = sample.select("id", from_consumer_offsets("key", "value").alias("r")).orderBy("id").collect()
        got_n = sample.select("id", from_consumer_offsets("key", "value", narrow).alias("r")).orderBy("id").collect()
        cut = [(r.r.group, r.r.topic, r.r.partition, r.r.OffsetCommitValue and
                (r.r.OffsetCommitValue.offset, r.r.OffsetCommitValue.commitTimestamp)) for r in got_a]
        assert cut == [(r.r.group, r.r.topic, r.r.partition, r.r.OffsetCommitValue and
                        tuple(r.r.OffsetCommitValue)) for r in got_n], "(n) is not (a) cut to its fields"
        print(f"(a) and (n) agree on {len(got_a):,} sample rows", flush=True)
    best: dict = {}
    rounds: list = []       # each round's CPU per variant, for ratios of runs taken back to back

    def timed(name):
        _, data, q = variants[name]
        load0 = os.getloadavg()[0]
        with _TreeCpu() as cpu:
            t = time.perf_counter()
            q(data).collect()
            wall = time.perf_counter() - t
        used = cpu.used
        if args.each:
            print(name, {k: round(v, 2) for k, v in used.items()}, round(wall, 2), flush=True)
        r = best.setdefault(name, {"seconds": float("inf"), "cpu": float("inf"), "split": {}, "load": []})
        rounds[-1][name] = sum(used.values())
        r["load"] += [load0, os.getloadavg()[0]]
        r["seconds"] = min(r["seconds"], wall)
        if sum(used.values()) < r["cpu"]:
            r["cpu"], r["split"] = sum(used.values()), used

    peaks, first = {}, {}
    for name in order:
        # first round, not timed: a whole run of each variant, so that the workers timed
        # later have imported and built what it needs (a run cut short, as by limit(),
        # ends its worker) and the JVM has compiled its path; its CPU is reported as the
        # first run's (the per-worker start-up included)
        label, data, q = variants[name]
        with _TreeCpu() as cpu:
            q(data).collect()
        first[name] = sum(cpu.used.values())
        time.sleep(2.5)                        # let a heartbeat carry the metrics
        peaks[name] = _peaks(spark)
    for _ in range(args.repeat):                # timed rounds alternate the variants, so that a
        rounds.append({})                       # change in the VM's load hits them all alike
        for name in order:
            timed(name)
    results = {}
    for name in order:
        label, data, _ = variants[name]
        rows, r = data.count(), best[name]
        split = r["split"]
        results[name] = {"label": label, "rows": rows, "seconds": r["seconds"], "rate": rows / r["seconds"],
                         "per_core": rows / r["seconds"] / 2, "cpu": r["cpu"], "per_cpu_s": rows / r["cpu"],
                         "jvm_us": split.get("jvm", 0.0) / rows * 1e6,
                         "python_us": split.get("python", 0.0) / rows * 1e6,
                         "load": (min(r["load"]), max(r["load"])), "first_cpu": first[name], **peaks[name]}
        print(f"({name}) {label}: {rows:,} rows in {r['seconds']:.2f} s = {rows / r['seconds']:,.0f} rows/s; "
              f"{r['cpu']:.2f} CPU s = {rows / r['cpu']:,.0f} rows per CPU s "
              f"(JVM {split.get('jvm', 0.0):.2f}, Python workers {split.get('python', 0.0):.2f})", flush=True)
    c = results.get("c")
    lines = [
        "# Spark: kcodec column functions vs Spark's floor",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on the project's 2-core Linux VM "
        f"(shared with other work), Python {platform.python_version()}, "
        f"PySpark {__import__('pyspark').__version__}, `local[2]`, "
        f"`python3 bench/bench_spark.py --rows {args.rows} --variants {args.variants} --repeat {args.repeat} "
        f"--max-records-per-batch {args.max_records_per_batch}`.",
        "Input: generated `__consumer_offsets` key/value pairs (95% OffsetCommit v4, 5% GroupMetadata v3 with "
        f"two consumer members), cached in memory. A first, untimed run of every variant (its CPU in the "
        f"'first run' column: the workers' imports and set-up, the JVM's compilation), then best of "
        f"{args.repeat} runs by CPU time, the variants alternated (each round runs every variant once, back "
        "to back; a ratio is also given as its median over the rounds); the 1-minute load average around "
        "each variant's runs is in the last column.",
        "",
        "CPU time (user + system) of the JVM and its Python workers during the run, each process's own "
        "time sampled from /proc every 0.1 s (so a worker Spark ends during the run is counted up to its "
        "last sample); on a shared VM it moves far less than wall time with what else runs.",
        "",
        "| variant | rows | s | records per CPU s | CPU s | JVM / Python CPU us per record "
        "| first run CPU s | peak JVM heap MB | peak Python RSS MB | load avg |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in order:
        r = results[name]
        lines.append(f"| ({name}) {r['label']} | {r['rows']:,} | {r['seconds']:.2f} | {r['per_cpu_s']:,.0f} | "
                     f"{r['cpu']:.2f} | {r['jvm_us']:.2f} / {r['python_us']:.2f} | {r['first_cpu']:.2f} | "
                     f"{r.get('jvm_heap_mb', 0):,.0f} | {r.get('python_rss_mb', 0):,.0f} | "
                     f"{r['load'][0]:.1f}-{r['load'][1]:.1f} |")
    lines.append("")

    def ratio(x, y, target=None, what=""):
        if x not in results or y not in results:
            return
        rx, ry = results[x], results[y]
        by_cpu = ry["per_cpu_s"] / rx["per_cpu_s"]
        by_wall = ry["rate"] / rx["rate"]
        # the VM's speed drifts between runs: the ratio of two runs taken back to back in
        # one round, its median over the rounds, moves less than the ratio of each
        # variant's best run
        each = sorted(r[x] / r[y] for r in rounds if x in r and y in r)
        paired = (f"; per round {statistics.median(each):.2f}x median, {each[0]:.2f}-{each[-1]:.2f}x"
                  + ("" if target is None else f", over {target}x in {sum(v > target for v in each)} of {len(each)}")
                  if each else "")
        t = "" if target is None else (f" (target: within {target}x): {'met' if by_cpu <= target else 'NOT met'}")
        lines.append(f"- ({x}) / ({y}){what}: {by_cpu:.2f}x by CPU time{t}{paired}; {by_wall:.2f}x by wall time.")
    ratio("n", "c", 1.3, ", narrow projection against the Arrow pass-through")
    ratio("n", "nf", None, ", narrow projection against its floor")
    ratio("nf", "c", None, ", the narrow floor against the pass-through")
    ratio("a", "d", 1.15, ", full default result against its floor")
    ratio("a", "c", None, " (issue 10 asked for 1.5x; it ended blocked: (d)/(c) below, Spark taking the "
                          "result alone, is above that)")
    ratio("d", "c", None, "")
    for name in ("a2", "a3"):
        ratio(name, "c")
        ratio(name, "a")
    if "b" in results and "a" in results:
        lines.append(f"- (b) / (a): {results['a']['per_cpu_s'] / results['b']['per_cpu_s']:.1f}x by CPU time "
                     "(target: at least 10x).")
    lines.append("")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    # the newest run first, the earlier ones kept below it
    earlier = ""
    if os.path.exists(args.out):
        with open(args.out) as f:
            earlier = f.read().split("\n", 1)[1] if f.readable() else ""
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n\n# Earlier runs\n" + earlier)
    print("\n".join(lines))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
