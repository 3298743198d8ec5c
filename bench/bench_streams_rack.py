"""Rack-aware Streams task assignment (KIP-925) side by side: kcodec's exact and fast modes and
Kafka 4.1.1's own ``RackAwareTaskAssignor.optimizeActiveTasks`` (bench/java/RackAssign.java) on
identical inputs, in one interleaved run.

Inputs: 3 racks (client c on ``rack{c % 3}``), one stateful task per partition (``0_p``, source
partition ``in-0/p`` with replicas on racks p % 3 and (p + 1) % 3), tasks spread evenly over the
clients in a seeded shuffle (as a rack-unaware assignor leaves them), traffic cost 10,
non-overlap cost 1, ``min_traffic``.  Every measurement runs in its own process: CPU is the
process's user + system time (``os.wait4``), the solve alone is timed inside it (kcodec:
``getrusage`` around the call; Java: the thread's CPU time), peak RSS from ``wait4``.  Java runs
cold (the first call of a fresh JVM) and warm (calls 2-4 of one JVM), ``-Xms512m -Xmx4g``; a run
past the time limit is stopped and reported as such.

    python3 bench/bench_streams_rack.py [--limit SECONDS] [--sizes 100x10,1000x10,...] [--out FILE]
    python3 bench/bench_streams_rack.py --vectors tests/data/streams_rack/kafka_vectors.json.gz

Needs Kafka 4.1.1's jars (``KAFKA_JARS``, default /work/kafka-jars) and ``javac``.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
JARS = os.environ.get("KAFKA_JARS", "/work/kafka-jars")
HEAP = ["-Xms512m", "-Xmx4g"]
WARM_IF_COLD_UNDER = 10.0   # CPU seconds
SIZES = [(100, 10), (1000, 10), (1000, 100), (3000, 100), (10000, 1000)]


# ---- inputs ----

def bench_input(tasks: int, clients: int, seed: int = 1) -> dict:
    rnd = random.Random(seed)
    order = list(range(tasks))
    rnd.shuffle(order)
    owner = [0] * tasks
    for i, t in enumerate(order):
        owner[t] = i % clients
    return {"strategy": "min_traffic", "traffic": 10, "non_overlap": 1, "racks": 3,
            "clients": [[c + 1, f"rack{c % 3}"] for c in range(clients)],
            "tasks": [[0, p, owner[p], [f"rack{p % 3}", f"rack{(p + 1) % 3}"]] for p in range(tasks)]}


def write_input(problem: dict, path: str) -> None:
    with open(path, "w") as f:
        f.write(f"problem {problem['strategy']} {problem['traffic']} {problem['non_overlap']} {problem['racks']}\n")
        for pid, rack in problem["clients"]:
            f.write(f"client {pid} {rack}\n")
        for s, p, o, racks in problem["tasks"]:
            f.write(f"task {s} {p} {o} {' '.join(racks)}\n")


def to_kcodec(problem: dict):
    from kcodec.streams import TaskId, TopicPartition
    from kcodec.streams.assignors import StreamsClient
    from kcodec.streams.racks import TaskPartitions

    pids = [uuid.UUID(int=pid) for pid, _ in problem["clients"]]
    clients = [StreamsClient(p, rack_id=r) for p, (_, r) in zip(pids, problem["clients"])]
    active: Dict[uuid.UUID, list] = {p: [] for p in pids}
    source, racks = {}, {}
    for s, p, o, rr in problem["tasks"]:
        t, tp = TaskId(s, p), TopicPartition(f"in-{s}", p)
        active[pids[o]].append(t)
        source[t] = [tp]
        racks[tp] = list(rr)
    return clients, active, TaskPartitions(source, replica_racks=racks), pids


def kcodec_solve(problem: dict, mode: str) -> Tuple[float, int, List[str]]:
    """(CPU seconds of the solve, cost, "task client-index" lines in TaskId order)."""
    from kcodec.streams.racks import optimize_active_tasks

    clients, active, parts, pids = to_kcodec(problem)
    index = {p: i for i, p in enumerate(pids)}
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    out, cost = optimize_active_tasks(clients, active, parts, strategy=problem["strategy"],
                                      traffic_cost=problem["traffic"], non_overlap_cost=problem["non_overlap"],
                                      mode=mode)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    lines = sorted(((t.subtopology, t.partition), f"{t} {index[p]}") for p, ts in out.items() for t in ts)
    return cpu, cost, [x for _, x in lines]


# ---- processes ----

def run_child(cmd: List[str], limit: float) -> dict:
    """Run cmd; stop it after `limit` seconds of its own CPU time.  Returns stdout, CPU, peak
    RSS and whether it was stopped."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    stopped = False
    out_chunks: List[str] = []
    import threading
    reader = threading.Thread(target=lambda: out_chunks.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            cpu = 0.0
        if cpu > limit:
            stopped = True
            os.killpg(proc.pid, signal.SIGKILL)
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    reader.join()
    return {"out": "".join(out_chunks), "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024,
            "stopped": stopped, "wall": time.monotonic() - t0, "rc": proc.returncode}


def java_classes() -> str:
    dest = os.path.join(tempfile.gettempdir(), "kcodec-rack-java")
    src = os.path.join(HERE, "java", "RackAssign.java")
    marker = os.path.join(dest, "org/apache/kafka/streams/processor/internals/assignment/RackAssign.class")
    if not os.path.exists(marker) or os.path.getmtime(marker) < os.path.getmtime(src):
        subprocess.run(["javac", "-cp", f"{JARS}/*", "-d", dest, src], check=True)
    return dest


def java_cmd(classes: str, path: str, runs: int, assignment: bool = False) -> List[str]:
    return (["java", *HEAP, "-cp", f"{classes}:{JARS}/*",
             "org.apache.kafka.streams.processor.internals.assignment.RackAssign", path, str(runs)]
            + (["--assignment"] if assignment else []))


def parse_java(out: str) -> Tuple[List[Tuple[float, int]], List[str]]:
    runs, assign = [], []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "run":
            runs.append((float(f[3]), int(f[5])))
        elif f and f[0] == "assign":
            assign.append(f"{f[1]} {f[2]}")
    # Java prints client by client: TaskId order, as kcodec_solve lists them
    assign.sort(key=lambda x: tuple(int(n) for n in x.split()[0].split("_")))
    return runs, assign


def digest(lines: List[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


# ---- the bench ----

def bench(sizes, limit: float, out_path: Optional[str]) -> None:
    classes = java_classes()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for tasks, clients in sizes:
            problem = bench_input(tasks, clients)
            path = os.path.join(tmp, f"in-{tasks}x{clients}.txt")
            write_input(problem, path)
            jpath = path + ".json"
            with open(jpath, "w") as f:
                json.dump(problem, f)
            res: Dict[str, dict] = {}
            # interleaved: fast, java cold, exact, java warm
            for name in ("fast", "java-cold", "exact", "java-warm"):
                load = os.getloadavg()[0]
                if name in ("fast", "exact"):
                    r = run_child([sys.executable, __file__, "--solve", name, jpath], limit)
                    if not r["stopped"] and r["rc"] == 0:
                        d = json.loads(r["out"].splitlines()[-1])
                        r.update(solve=d["cpu"], cost=d["cost"], digest=d["digest"])
                elif name == "java-warm" and not res["java-cold"].get("solve", limit) < WARM_IF_COLD_UNDER:
                    # a warm JVM needs a few calls; past this the cold call alone says enough
                    r = {"skipped": True, "cpu": 0.0, "rss_mb": 0.0, "stopped": False}
                else:
                    warm = name == "java-warm"
                    r = run_child(java_cmd(classes, path, 4 if warm else 1, assignment=not warm), limit)
                    runs, assign = parse_java(r["out"])
                    if runs:
                        use = runs[1:] if warm else runs[:1]
                        if use:
                            r.update(solve=sorted(c for c, _ in use)[len(use) // 2], cost=use[0][1],
                                     calls=len(use))
                    if assign:
                        r["digest"] = digest(assign)
                r["load"] = load
                res[name] = r
                state = ("skipped" if r.get("skipped") else "stopped" if r["stopped"]
                         else f"{r['solve']:.3f}s" if "solve" in r else "failed")
                if r.get("digest"):
                    state += f" digest {r['digest']}"
                print(f"{tasks}x{clients} {name}: solve {state} process {r['cpu']:.2f}s CPU "
                      f"rss {r['rss_mb']:.0f} MB cost {r.get('cost')} load {load:.1f}", flush=True)
            rows.append(((tasks, clients), res))
            if out_path:   # after every size: a stopped bench still leaves its table
                write_md(rows, out_path, limit)


def write_md(rows, path: str, limit: float) -> None:
    def cell(r: dict) -> str:
        if r.get("skipped"):
            return f"not run (cold > {WARM_IF_COLD_UNDER:.0f} s)"
        if r.get("stopped"):
            return f"> {limit:.0f} s (stopped)"
        if "solve" not in r:
            return "failed"
        return f"{r['solve']:.3f} s"

    lines = [
        "# Rack-aware Streams task assignment (KIP-925): kcodec vs Kafka 4.1.1",
        "",
        "`python3 bench/bench_streams_rack.py --out bench/results/streams_rack.md` (one interleaved run; "
        "machine: 2 cores shared with other jobs, the 1-minute load average is given per size).",
        "",
        "Inputs: 3 racks (client c on `rack{c % 3}`), one stateful task per partition, its source "
        "partition's 2 replicas on racks p % 3 and (p + 1) % 3, tasks spread evenly over the clients "
        "in a seeded shuffle, traffic cost 10, non-overlap cost 1, `min_traffic`; "
        "`optimizeActiveTasks` over every task. Java: `RackAwareTaskAssignor.optimizeActiveTasks` "
        f"driven by `bench/java/RackAssign.java`, `java {' '.join(HEAP)}`, cold = the first call of a "
        "fresh JVM, warm = the median of calls 2-4 of one JVM (run only where the cold call took under "
        f"{WARM_IF_COLD_UNDER:.0f} s). Solve = CPU of the call alone "
        "(Java: its thread's CPU time; kcodec: getrusage around the call); process = the whole "
        f"process's CPU (JVM start, Python start and input building included). Runs past {limit:.0f} s "
        "of CPU are stopped.",
        "",
        "| tasks x clients | load | kcodec fast solve | kcodec exact solve | Java cold solve | Java warm solve "
        "| process CPU fast / exact / Java cold | peak RSS fast / exact / Java cold | cost fast / exact / Java "
        "| exact = Kafka's assignment |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (t, c), res in rows:
        f, e, jc, jw = res["fast"], res["exact"], res["java-cold"], res["java-warm"]
        same = ("yes" if e.get("digest") == jc.get("digest") else "NO") if e.get("digest") and jc.get("digest") \
            else "n/a (not both finished)"
        load = max(r.get("load", 0.0) for r in res.values())
        lines.append(
            f"| {t:,} x {c:,} | {load:.1f} | {cell(f)} | {cell(e)} | {cell(jc)} | {cell(jw)} "
            f"| {f['cpu']:.2f} / {e['cpu']:.2f} / {jc['cpu']:.2f} s "
            f"| {f['rss_mb']:.0f} / {e['rss_mb']:.0f} / {jc['rss_mb']:.0f} MB "
            f"| {f.get('cost', '-')} / {e.get('cost', '-')} / {jc.get('cost', jw.get('cost', '-'))} | {same} |")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


# ---- test vectors ----

def vector_inputs(seed: int = 7) -> List[dict]:
    """Small and medium inputs with ties: both strategies, 1-4 racks, 1-3 replicas, several
    subtopologies, costs that tie ((1, 0), (0, 1)) and that do not."""
    rnd = random.Random(seed)
    out = []
    for n in range(40):
        racks = rnd.randint(1, 4)
        clients = rnd.randint(2, 8) if n < 30 else rnd.randint(10, 30)
        tasks = rnd.randint(1, 25) if n < 30 else rnd.randint(60, 200)
        subs = rnd.randint(1, 3)
        traffic, non_overlap = rnd.choice([(10, 1), (1, 0), (0, 1), (1, 10), (5, 2), (3, 3)])
        strategy = rnd.choice(["min_traffic", "balance_subtopology"])
        cl = [[rnd.randint(1, 1 << 40), f"r{rnd.randrange(racks)}"] for _ in range(clients)]
        ts, seen = [], set()
        for _ in range(tasks):
            s, p = rnd.randrange(subs), rnd.randrange(tasks * 2)
            if (s, p) in seen:
                continue
            seen.add((s, p))
            reps = sorted(rnd.sample([f"r{i}" for i in range(racks)], rnd.randint(1, racks)))
            ts.append([s, p, rnd.randrange(clients), reps])
        ts.sort(key=lambda x: (x[0], x[1]))
        out.append({"strategy": strategy, "traffic": traffic, "non_overlap": non_overlap, "racks": racks,
                    "clients": cl, "tasks": ts})
    return out


def make_vectors(path: str) -> None:
    classes = java_classes()
    vectors = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, problem in enumerate(vector_inputs()):
            p = os.path.join(tmp, f"v{i}.txt")
            write_input(problem, p)
            r = run_child(java_cmd(classes, p, 1, assignment=True), 600)
            runs, assign = parse_java(r["out"])
            if not runs:
                raise SystemExit(f"Java failed on vector {i}")
            vectors.append({"input": problem, "kafka": {"cost": runs[0][1], "assignment": assign}})
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with gzip.open(path, "wt") as f:
        json.dump({"source": "Kafka 4.1.1 RackAwareTaskAssignor.optimizeActiveTasks via bench/java/RackAssign.java",
                   "vectors": vectors}, f)
    print(f"wrote {len(vectors)} vectors to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=float, default=120.0, help="stop a run after this many CPU seconds")
    ap.add_argument("--sizes", default=",".join(f"{t}x{c}" for t, c in SIZES))
    ap.add_argument("--out", help="write the markdown table here")
    ap.add_argument("--vectors", help="write Kafka's assignments of the test inputs here (.json.gz)")
    ap.add_argument("--solve", nargs=2, metavar=("MODE", "INPUT_JSON"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.solve:
        with open(a.solve[1]) as f:
            problem = json.load(f)
        cpu, cost, lines = kcodec_solve(problem, a.solve[0])
        print(json.dumps({"cpu": cpu, "cost": cost, "digest": digest(lines)}))
        return
    if a.vectors:
        make_vectors(a.vectors)
        return
    sizes = [tuple(int(x) for x in s.split("x")) for s in a.sizes.split(",")]
    bench(sizes, a.limit, a.out)


if __name__ == "__main__":
    main()
