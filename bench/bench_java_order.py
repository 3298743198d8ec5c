"""Encoding Streams userData in Java's HashMap order: kcodec's compiled HashMap model
(csrc/kc_javahash.c), its pure-Python twin, and main's encoder before Java order (commit
d328435, insertion order: not Kafka's bytes, the speed to keep).

    python3 bench/bench_java_order.py            # prints the table of bench/results/streams_userdata.md

Cases: SubscriptionInfo v6 (prevTasks / standbyTasks HashSets) with 2,000 tasks
(subtopologies 0-19 x partitions 0-99, half active); AssignmentInfo v7 and v11 host sections
(topic dictionary from a HashSet<TopicPartition>, 50 hosts x 300 partitions in each of the
two host maps, topics ``topic-1`` .. ``topic-19``: treeified String bins).  CPU time per call
(process CPU, best of 5 rounds), with the load average.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, ROOT)

import kcodec._java as jv  # noqa: E402
from kcodec.consumer import TopicPartition  # noqa: E402
from kcodec.streams import protocol as P  # noqa: E402

OLD = "d328435"


def old_protocol():
    """main's kcodec/streams/protocol.py at d328435, imported beside today's (None without git)."""
    try:
        src = subprocess.run(["git", "-C", ROOT, "show", f"{OLD}:kcodec/streams/protocol.py"],
                             capture_output=True, check=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    spec = importlib.util.spec_from_loader("kcodec.streams._protocol_d328435", loader=None)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod          # dataclasses look their module up
    exec(compile(src, f"{OLD}:protocol.py", "exec"), mod.__dict__)
    return mod


def subscription(P):
    sums = {P.TaskId(s, p): (P.LATEST_OFFSET if (s + p) % 2 else 1000 + p) for s in range(20) for p in range(100)}
    return P.SubscriptionInfo(6, 6, uuid.UUID(int=7), "host-0:8080", sums)


def assignment(P, version):
    topics = [f"topic-{i}" for i in range(1, 20)]
    tps = [TopicPartition(t, p) for p in range(800) for t in topics][:50 * 300]
    hosts = [P.HostInfo(f"host-{h}", 8080) for h in range(50)]
    by_host = {h: tps[i * 300:(i + 1) * 300] for i, h in enumerate(hosts)}
    standby = {h: tps[((i + 1) % 50) * 300:((i + 1) % 50 + 1) * 300] for i, h in enumerate(hosts)}
    return P.AssignmentInfo(version, version, partitions_by_host=by_host, standby_partitions_by_host=standby)


def cpu_ms(fn, reps):
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(reps):
            fn()
        best = min(best, (time.process_time() - t0) / reps * 1e3)
    return best


def main():
    old = old_protocol()
    cases = [("SubscriptionInfo v6, 2,000 tasks", lambda M: (lambda x=subscription(M): M.encode_subscription(x)), 40)]
    for v in (7, 11):
        cases.append((f"AssignmentInfo v{v} host section, 50 hosts x 300 partitions x 2 maps",
                      lambda M, v=v: (lambda x=assignment(M, v): M.encode_host_section(x)), 8))
    native = jv._jh
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    rows = []
    for name, make, reps in cases:
        fn = make(P)
        c = cpu_ms(fn, reps) if native else float("nan")
        jv._jh = None
        try:
            py = cpu_ms(fn, max(1, reps // 4))
        finally:
            jv._jh = native
        o = cpu_ms(make(old), reps) if old is not None else float("nan")
        rows.append((name, c, py, o))
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print("| encode | compiled model (ms) | Python model (ms) | main before Java order (ms) |")
    print("|---|---:|---:|---:|")
    for name, c, py, o in rows:
        print(f"| {name} | {c:.2f} | {py:.2f} | {o:.2f} |")


if __name__ == "__main__":
    main()
