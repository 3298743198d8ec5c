"""Encoding Streams userData in Java's HashMap order: kcodec (compiled writers,
csrc/kc_streams_userdata.c), kcodec's Python encoders (the fallback, HashMap model still
compiled), and Kafka 4.1.1's own classes (bench/java/StreamsUserDataBench.java), rounds
interleaved in one run.

    python3 bench/bench_java_order.py [--rounds 7] [--jars /work/kafka-jars]

Cases: SubscriptionInfo v6 with 2,000 tasks (subtopologies 0-19 x partitions 0-99, half
active: Kafka's constructor fills two HashSet<TaskId>s with many equal hash codes, i.e.
treeified bins) timed with its constructor; AssignmentInfo v7 and v11 host sections (topic
dictionary from a HashSet<TopicPartition>, 50 hosts x 300 partitions in each of the two host
maps, topics ``topic-1`` .. ``topic-19``).  kcodec: process CPU per call, best of the rounds;
Kafka: the encoding thread's CPU per call after JIT warm-up (best of the rounds), and the
first call in a fresh JVM (cold).  Every kcodec output is checked against Kafka's bytes
(the harness's ``hex`` sha256) before timing.  Prints markdown with the load average.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, ROOT)

from kcodec.consumer import TopicPartition  # noqa: E402
from kcodec.streams import protocol as P  # noqa: E402

JAVA_FLAGS = ["-Xms512m", "-Xmx512m", "-XX:+UseSerialGC"]
CASES = [("sub_v6", "SubscriptionInfo v6, 2,000 tasks", 400),
         ("asg_v7", "AssignmentInfo v7 host section", 40),
         ("asg_v11", "AssignmentInfo v11 host section", 40)]


def subscription():
    sums = {P.TaskId(s, p): (P.LATEST_OFFSET if (s + p) % 2 else 1000 + p) for s in range(20) for p in range(100)}
    return P.SubscriptionInfo(6, 6, uuid.UUID(int=7), "host-0:8080", sums)


def assignment(version):
    topics = [f"topic-{i}" for i in range(1, 20)]
    tps = [TopicPartition(t, p) for p in range(800) for t in topics][:50 * 300]
    hosts = [P.HostInfo(f"host-{h}", 8080) for h in range(50)]
    by_host = {h: tps[i * 300:(i + 1) * 300] for i, h in enumerate(hosts)}
    standby = {h: tps[((i + 1) % 50) * 300:((i + 1) % 50 + 1) * 300] for i, h in enumerate(hosts)}
    return P.AssignmentInfo(version, version, partitions_by_host=by_host, standby_partitions_by_host=standby)


def kcodec_calls():
    # what the Java side times: the subscription from its task map (the constructor's sets
    # included), the assignments' host maps (Kafka's encode() with no tasks)
    sub = subscription()
    a7, a11 = assignment(7), assignment(11)
    return {"sub_v6": lambda: P.encode_subscription(sub),
            "asg_v7": lambda: P.encode_assignment(a7),
            "asg_v11": lambda: P.encode_assignment(a11)}


def cpu_ms(fn, reps):
    t0 = time.process_time()
    for _ in range(reps):
        fn()
    return (time.process_time() - t0) / reps * 1e3


class Kafka:
    """The Java harness as a child process, one round per request."""

    def __init__(self, jars):
        self.tmp = tempfile.mkdtemp(prefix="udbench")
        cp = f"{jars}/*"
        subprocess.run(["javac", "-cp", cp, "-d", self.tmp, os.path.join(HERE, "java", "StreamsUserDataBench.java")],
                       check=True)
        self.p = subprocess.Popen(["java", *JAVA_FLAGS, "-cp", f"{self.tmp}:{cp}", "StreamsUserDataBench"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.cold, self.sha256 = {}, {}
        for line in self.p.stdout:
            if line.strip() == "ready":
                break
            what, case, value = line.split()
            if what == "cold":
                self.cold[case] = float(value)
            else:
                self.sha256[case] = value
        self.java_version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]

    def round(self):
        self.p.stdin.write("round\n")
        self.p.stdin.flush()
        out = {}
        for line in self.p.stdout:
            if line.strip() == "end":
                return out
            _, case, ms = line.split()
            out[case] = float(ms)
        raise RuntimeError("the Java harness stopped")

    def close(self):
        self.p.stdin.close()
        self.p.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--jars", default="/work/kafka-jars")
    args = ap.parse_args()
    if P._ud is None:
        sys.exit("kcodec.streams._userdata is not built")
    load0 = os.getloadavg()
    kafka = Kafka(args.jars) if os.path.isdir(args.jars) and shutil.which("java") else None
    calls = kcodec_calls()
    native = P._ud
    if kafka is not None:
        for case, fn in calls.items():
            if hashlib.sha256(fn()).hexdigest() != kafka.sha256[case]:
                sys.exit(f"{case}: kcodec's bytes differ from Kafka's")
    best = {}
    for _ in range(args.rounds):
        for case, _, reps in CASES:
            fast = cpu_ms(calls[case], reps)
            P._ud = None
            try:
                slow = cpu_ms(calls[case], max(1, reps // 8))
            finally:
                P._ud = native
            b = best.setdefault(case, {})
            b["c"] = min(b.get("c", 1e9), fast)
            b["py"] = min(b.get("py", 1e9), slow)
        if kafka is not None:
            for case, ms in kafka.round().items():
                best[case]["java"] = min(best[case].get("java", 1e9), ms)
    load1 = os.getloadavg()
    if kafka is not None:
        kafka.close()
    print(f"load average {load0[0]:.1f} -> {load1[0]:.1f} (1 min); {args.rounds} interleaved rounds; "
          f"{kafka.java_version if kafka else 'no Java'} {' '.join(JAVA_FLAGS)}\n")
    print("| encode (CPU ms per call) | kcodec (C writers) | kcodec Python encoders | Kafka warm | "
          "Kafka cold (1st call) | Kafka warm / kcodec |")
    print("|---|---:|---:|---:|---:|---:|")
    for case, name, _ in CASES:
        b = best[case]
        java = b.get("java", float("nan"))
        cold = kafka.cold.get(case, float("nan")) if kafka else float("nan")
        print(f"| {name} | {b['c']:.3f} | {b['py']:.2f} | {java:.3f} | {cold:.1f} | {java / b['c']:.1f}x |")


if __name__ == "__main__":
    main()
