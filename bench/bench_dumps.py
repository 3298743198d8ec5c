"""The dumps against Kafka's own tool: ``kcodec kraft dump`` vs ``DumpLogSegments
--cluster-metadata-decoder`` and ``kcodec offsets dump`` vs ``DumpLogSegments
--offsets-decoder``, on the same input, in ONE interleaved run.

Each round runs, one after the other: kcodec in a fresh process (CPU of the whole process
and of the dump alone, measured inside it; for the kraft dump also the installed ``kcodec``
command, as users start it, and that command on an empty segment: its start-up), Java cold (a fresh JVM running the tool once,
as ``kafka-dump-log.sh`` does) and Java warm (one JVM running the tool ``--warm`` times in a
row: bench/java/DumpWarm.java; the runs after the first).  Every process writes its text
to /dev/null.  CPU is user + system of the process (wait4's rusage: for the JVM all its
threads, JIT and GC included); peak RSS from the same rusage.  The load average is read
before each round.  Before timing, the kraft outputs are compared (SHA-256 of kcodec's and
Kafka's text).

    python bench/bench_dumps.py --kraft LOG --offsets LOG [--rounds 3] [--heap -Xmx2g]
        [--write-kraft bench/results/kraft_dump.md] [--write-offsets bench/results/offsets_dump_java.md]

Logs: ``python bench/gen_kraft_log.py DIR --topics 10000 --partitions 1000000 --changes
1000000`` (the segment under DIR/__cluster_metadata-0/) and ``python
bench/gen_offsets_log.py DIR --size-mb 32``.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
JARS = os.environ.get("KAFKA_JARS", "/work/kafka-jars")

_CHILD = r"""
import sys, time
sys.path.insert(0, {repo!r})
from kcodec import cli
c0 = time.process_time()
rc = cli.main({argv!r})
sys.stdout.flush()
print(time.process_time() - c0, file=sys.stderr)
sys.exit(rc)
"""


def _run(cmd: List[str], stdout: object = subprocess.DEVNULL) -> Tuple[float, float, float, str]:
    """Run ``cmd``: (CPU s, wall s, peak RSS MB, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    err = p.stderr.read().decode()          # type: ignore[union-attr]
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[:4]}... exited {p.returncode}: {err[-2000:]}")
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss / 1024, err


def kcodec_cmd(argv: List[str]) -> List[str]:
    return [sys.executable, "-c", _CHILD.format(repo=REPO, argv=argv)]


def kcodec_script(argv: List[str]) -> Optional[List[str]]:
    """The ``kcodec`` console script of this interpreter's environment (None: not installed)."""
    script = os.path.join(os.path.dirname(sys.executable), "kcodec")
    return [script] + argv if os.path.exists(script) else None


def java_cold_cmd(heap: str, args: List[str]) -> List[str]:
    return ["java", heap, "-cp", f"{JARS}/*", "kafka.tools.DumpLogSegments"] + args


def java_warm_cmd(heap: str, classes: str, runs: int, args: List[str]) -> List[str]:
    return ["java", heap, "-cp", f"{classes}:{JARS}/*", "DumpWarm", str(runs)] + args


def _compile_warm() -> str:
    out = os.path.join(tempfile.gettempdir(), "kcodec-dumpwarm")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["javac", "-cp", f"{JARS}/*", "-d", out, os.path.join(HERE, "java", "DumpWarm.java")],
                   check=True)
    return out


def _sha(cmd: List[str]) -> Tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for block in iter(lambda: p.stdout.read(1 << 20), b""):     # type: ignore[union-attr]
        h.update(block)
        n += len(block)
    if p.wait() != 0:
        raise RuntimeError(f"{cmd[:4]} failed")
    return h.hexdigest(), n


def measure(name: str, path: str, kc_argv: List[str], java_args: List[str], rounds: int,
            heap: str, warm: int, classes: str, script: Optional[List[str]] = None,
            startup: Optional[List[str]] = None) -> Dict[str, list]:
    """``script``/``startup``: the installed command on the log and on an empty one."""
    res: Dict[str, list] = {"kcodec": [], "kcodec_dump": [], "java_cold": [], "java_warm": [],
                            "java_warm_proc": [], "load": [], "kcodec_script": [],
                            "kcodec_startup": []}
    for r in range(rounds):
        res["load"].append(os.getloadavg())
        if script:
            res["kcodec_script"].append(_run(script)[:3])
        if startup:
            res["kcodec_startup"].append(_run(startup)[:3])
        cpu, wall, rss, err = _run(kcodec_cmd(kc_argv))
        res["kcodec"].append((cpu, wall, rss))
        res["kcodec_dump"].append(float(err.strip().splitlines()[-1]))
        res["java_cold"].append(_run(java_cold_cmd(heap, java_args))[:3])
        cpu, wall, rss, err = _run(java_warm_cmd(heap, classes, warm, java_args))
        runs = [float(line.split()[3]) for line in err.splitlines() if line.startswith("run ")]
        res["java_warm"].append(runs[1:])
        res["java_warm_proc"].append((cpu, wall, rss))
        print(f"{name} round {r}: load {res['load'][-1][0]:.1f} kcodec {res['kcodec'][-1][0]:.2f} s "
              + (f"(command {res['kcodec_script'][-1][0]:.2f} s) " if script else "")
              + f"(dump {res['kcodec_dump'][-1]:.2f}) java cold {res['java_cold'][-1][0]:.2f} s "
              f"warm {' '.join(f'{x:.2f}' for x in runs)}", file=sys.stderr)
    return res


def _med(xs: List[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2]


def report(title: str, path: str, size: int, res: Dict[str, list], heap: str, warm: int,
           same: str, note: str) -> str:
    mb = size / 1e6
    kc = [x[0] for x in res["kcodec"]]
    kd = res["kcodec_dump"]
    jc = [x[0] for x in res["java_cold"]]
    jw = [x for runs in res["java_warm"] for x in runs]
    loads = [l[0] for l in res["load"]]
    rows = []
    if res.get("kcodec_script"):
        rows.append(("kcodec, the installed `kcodec` command, whole process (interpreter start "
                     "and imports included)", [x[0] for x in res["kcodec_script"]],
                     [x[2] for x in res["kcodec_script"]]))
    rows += [
        ("kcodec, whole process (`python -c`, interpreter start and imports included)", kc,
         [x[2] for x in res["kcodec"]]),
        ("kcodec, the dump alone (CPU inside the process)", kd, None),
        (f"Kafka DumpLogSegments, cold (fresh JVM, `{heap}`)", jc, [x[2] for x in res["java_cold"]]),
        (f"Kafka DumpLogSegments, warm (runs 2-{warm} in one JVM, `{heap}`)", jw,
         [x[2] for x in res["java_warm_proc"]]),
    ]
    lines = [f"# {title}", "",
             f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on the project's shared 2-core VM "
             f"(other helpers' jobs running: load average {min(loads):.1f}-{max(loads):.1f} at the rounds' "
             f"starts), `python bench/bench_dumps.py` ({len(kc)} interleaved rounds: kcodec, Java cold, "
             f"Java warm, in turn). Input: `{path}`, {mb:.1f} MB. {note}", "",
             "CPU = user + system of the process (wait4 rusage; the JVM's all threads, JIT and GC "
             "included), text written to /dev/null. Medians (min-max) over the rounds.", "",
             "| run | CPU s | input MB per CPU s | peak RSS MB |", "|---|---:|---:|---:|"]
    for label, xs, rss in rows:
        m = _med(xs)
        rs = f"{_med(rss):.0f} ({min(rss):.0f}-{max(rss):.0f})" if rss else ""
        lines.append(f"| {label} | {m:.2f} ({min(xs):.2f}-{max(xs):.2f}) | {mb / m:.1f} | {rs} |")
    if res.get("kcodec_startup"):
        st = [x[0] for x in res["kcodec_startup"]]
        rs = [x[2] for x in res["kcodec_startup"]]
        lines.append(f"| kcodec, start-up alone (the command on an empty segment) | "
                     f"{_med(st):.3f} ({min(st):.3f}-{max(st):.3f}) |  | {_med(rs):.0f} |")
    whole = [x[0] for x in res["kcodec_script"]] if res.get("kcodec_script") else kc
    lines += ["", f"Same run, medians: kcodec (whole process) uses {_med(jc) / _med(whole):.1f}x less CPU than "
              f"Java cold and {_med(jw) / _med(whole):.1f}x less than Java warm; the dump alone "
              f"{_med(jw) / _med(kd):.1f}x less than Java warm.", "", same, ""]
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:   # type: ignore[assignment]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kraft", help="a __cluster_metadata segment")
    ap.add_argument("--offsets", help="a __consumer_offsets segment")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warm", type=int, default=4, help="runs in the warm JVM (the first is not counted)")
    ap.add_argument("--heap", default="-Xmx2g", help="the JVM heap flag (kafka-run-class.sh's default is -Xmx256M)")
    ap.add_argument("--write-kraft")
    ap.add_argument("--write-offsets")
    a = ap.parse_args(argv)
    classes = _compile_warm()
    if a.kraft:
        ka = ["--cluster-metadata-decoder", "--files", a.kraft]
        mine, n1 = _sha(kcodec_cmd(["kraft", "dump", a.kraft]))
        theirs, n2 = _sha(java_cold_cmd(a.heap, ka))
        same = (f"Output: kcodec {n1:,} bytes, Kafka {n2:,} bytes, SHA-256 "
                + ("equal" if mine == theirs else f"DIFFERENT ({mine} vs {theirs})") + f" ({mine[:16]}...).")
        empty = os.path.join(tempfile.mkdtemp(), "00000000000000000000.log")
        open(empty, "wb").close()
        res = measure("kraft", a.kraft, ["kraft", "dump", a.kraft], ka, a.rounds, a.heap, a.warm, classes,
                      script=kcodec_script(["kraft", "dump", a.kraft]),
                      startup=kcodec_script(["kraft", "dump", empty]))
        text = report("`kcodec kraft dump` vs Kafka's DumpLogSegments --cluster-metadata-decoder", a.kraft,
                      os.path.getsize(a.kraft), res, a.heap, a.warm, same,
                      "Log: `bench/gen_kraft_log.py` (10,000 topics x 100 partitions, 1M partition changes).")
        print(text)
        if a.write_kraft:
            with open(a.write_kraft, "w") as f:
                f.write(text)
    if a.offsets:
        oa = ["--offsets-decoder", "--files", a.offsets]
        mine, n1 = _sha(kcodec_cmd(["offsets", "dump", a.offsets]))
        _, n2 = _sha(java_cold_cmd(a.heap, oa))
        same = (f"Output: kcodec's JSON lines {n1:,} bytes (SHA-256 {mine[:16]}...); Kafka's "
                f"--offsets-decoder text {n2:,} bytes (a different format: the tools are peers, not twins).")
        res = measure("offsets", a.offsets, ["offsets", "dump", a.offsets], oa, a.rounds, a.heap, a.warm, classes)
        text = report("`kcodec offsets dump` vs Kafka's DumpLogSegments --offsets-decoder", a.offsets,
                      os.path.getsize(a.offsets), res, a.heap, a.warm, same,
                      "Log: `bench/gen_offsets_log.py --size-mb 32`.")
        print(text)
        if a.write_offsets:
            with open(a.write_offsets, "w") as f:
                f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
