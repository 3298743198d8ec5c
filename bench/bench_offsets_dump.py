"""``kcodec offsets dump`` against Kafka's ``DumpLogSegments --offsets-decoder``, per log,
in ONE interleaved run (extends bench/bench_dumps.py's offsets part, whose helpers it uses).

Each round runs, one after the other, on each log:
* kcodec's dump pass in process: a child imports kcodec, runs :func:`iter_dump` once
  (tables built, pages mapped) and then once more, timed (``time.process_time``), every
  piece written to /dev/null: the CPU per input MB of the dump itself;
* kcodec's whole process: the ``kcodec offsets dump LOG`` console script (user + system
  CPU and peak RSS from wait4's rusage: interpreter start, imports, parsing included), run
  with bytecode caches as an installed package has them (PYTHONDONTWRITEBYTECODE unset);
* Java cold (a fresh JVM running the tool once, as ``kafka-dump-log.sh`` does) and warm
  (one JVM running it ``--warm`` times, bench/java/DumpWarm.java, the runs after the first),
  unless ``--no-java`` (or the log is above ``--java-max-mb``).
The load average is read before each round.  With ``--callgrind``, the instructions of one
dump pass (valgrind's callgrind: a child running two passes minus one running one) per input
MB, on the smallest log: a number the machine's load does not move.  Output: text to stdout,
and ``--write FILE``.

    python bench/bench_offsets_dump.py LOG [LOG ...] [--rounds 2] [--heap -Xmx2g] [--callgrind]
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from typing import Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_dumps import _compile_warm, _med, _run, java_cold_cmd, java_warm_cmd  # noqa: E402

_PASS = r"""
import os, sys, time
from kcodec.offsets.dump import iter_dump
def one():
    with open(os.devnull, "wb") as out:
        for pieces, _, _, _ in iter_dump({path!r}):
            for p in pieces:
                out.write(p)
c0 = time.process_time()
one()
c1 = time.process_time()
one()
print(c1 - c0, time.process_time() - c1, file=sys.stderr)
"""


_PASSES = r"""
import os, sys
from kcodec.offsets.dump import iter_dump
for _ in range({n}):
    with open(os.devnull, "wb") as out:
        for pieces, _, _, _ in iter_dump({path!r}):
            for p in pieces:
                out.write(p)
"""


def callgrind_pass(path: str) -> float:
    """Instructions of one dump pass of ``path`` (valgrind --tool=callgrind), in millions."""
    def ir(n: int) -> int:
        err = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                              sys.executable, "-c", _PASSES.format(n=n, path=path)],
                             capture_output=True, text=True, check=True).stderr
        return int(re.search(r"Collected : (\d+)", err).group(1))
    return (ir(2) - ir(1)) / 1e6


def _console() -> List[str]:
    exe = shutil.which("kcodec", path=os.path.dirname(sys.executable)) or shutil.which("kcodec")
    if exe is None:
        raise SystemExit("the kcodec console script is not installed next to this Python")
    return [exe]


def measure(logs: List[str], rounds: int, heap: str, warm: int, java_max: float,
            java: bool) -> Dict[str, Dict[str, list]]:
    classes = _compile_warm() if java else ""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(_console() + ["offsets", "dump", "--help"], env=env, stdout=subprocess.DEVNULL,
                   check=True)     # bytecode caches written once, as pip writes them
    res: Dict[str, Dict[str, list]] = {p: {"pass": [], "first": [], "proc": [], "java_cold": [],
                                           "java_warm": [], "java_warm_proc": [], "load": []}
                                       for p in logs}
    for r in range(rounds):
        for path in logs:
            d = res[path]
            d["load"].append(os.getloadavg()[0])
            _, _, _, err = _run([sys.executable, "-c", _PASS.format(path=path)])
            first, second = map(float, err.split()[-2:])
            d["first"].append(first)
            d["pass"].append(second)
            t0 = time.perf_counter()
            p = subprocess.Popen(_console() + ["offsets", "dump", path], stdout=subprocess.DEVNULL, env=env)
            _, status, ru = os.wait4(p.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise RuntimeError("kcodec offsets dump failed")
            d["proc"].append((ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, ru.ru_maxrss / 1024))
            line = (f"{os.path.basename(os.path.dirname(path))} round {r}: load {d['load'][-1]:.1f} "
                    f"pass {second:.3f} s (first {first:.3f}) process {d['proc'][-1][0]:.2f} s")
            if java and os.path.getsize(path) / 1e6 <= java_max:
                args = ["--offsets-decoder", "--files", path]
                d["java_cold"].append(_run(java_cold_cmd(heap, args))[:3])
                cpu, wall, rss, err = _run(java_warm_cmd(heap, classes, warm, args))
                runs = [float(x.split()[3]) for x in err.splitlines() if x.startswith("run ")]
                d["java_warm"].append(runs[1:])
                d["java_warm_proc"].append((cpu, wall, rss))
                line += f" java cold {d['java_cold'][-1][0]:.2f} s warm {' '.join(f'{x:.2f}' for x in runs)}"
            print(line, file=sys.stderr)
    return res


def _cell(xs: List[float], mb: float) -> str:
    m = _med(xs)
    return f"{m:.3f} ({min(xs):.3f}-{max(xs):.3f}) | {mb / m:.0f} ({mb / max(xs):.0f}-{mb / min(xs):.0f})"


def report(res: Dict[str, Dict[str, list]], heap: str, warm: int) -> str:
    loads = [x for d in res.values() for x in d["load"]]
    rounds = len(next(iter(res.values()))["load"])
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, `python "
             f"bench/bench_offsets_dump.py` ({rounds} interleaved rounds; load average "
             f"{min(loads):.1f}-{max(loads):.1f} at the rounds' starts on the shared 2-core VM).  "
             "CPU = user + system (wait4 rusage; the JVM's all threads, JIT and GC included); "
             "the pass in process is `time.process_time` around a second `iter_dump` pass.  "
             "Medians (min-max).", "",
             "| log | run | CPU s | input MB per CPU s | peak RSS MB |", "|---|---|---:|---:|---:|"]
    for path, d in res.items():
        mb = os.path.getsize(path) / 1e6
        name = f"{mb:.1f} MB"
        rss = [x[2] for x in d["proc"]]
        lines.append(f"| {name} | kcodec, dump pass in process | {_cell(d['pass'], mb)} | |")
        lines.append(f"| {name} | kcodec, first pass in process (tables built) | {_cell(d['first'], mb)} | |")
        lines.append(f"| {name} | kcodec, whole process (`kcodec offsets dump`) | "
                     f"{_cell([x[0] for x in d['proc']], mb)} | {_med(rss):.0f} ({min(rss):.0f}-{max(rss):.0f}) |")
        if d["java_cold"]:
            jc = [x[0] for x in d["java_cold"]]
            jw = [x for runs in d["java_warm"] for x in runs]
            rc = [x[2] for x in d["java_cold"]]
            rw = [x[2] for x in d["java_warm_proc"]]
            lines.append(f"| {name} | Kafka DumpLogSegments --offsets-decoder, cold (`{heap}`) | "
                         f"{_cell(jc, mb)} | {_med(rc):.0f} ({min(rc):.0f}-{max(rc):.0f}) |")
            lines.append(f"| {name} | Kafka DumpLogSegments --offsets-decoder, warm (runs 2-{warm}, `{heap}`) | "
                         f"{_cell(jw, mb)} | {_med(rw):.0f} ({min(rw):.0f}-{max(rw):.0f}) |")
    return "\n".join(lines) + "\n"


def main(argv: List[str] = None) -> int:   # type: ignore[assignment]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="+", metavar="LOG", help="__consumer_offsets segments")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warm", type=int, default=3, help="runs in the warm JVM (the first is not counted)")
    ap.add_argument("--heap", default="-Xmx2g")
    ap.add_argument("--java-max-mb", type=float, default=64.0, help="no Java runs on larger logs")
    ap.add_argument("--no-java", action="store_true")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count one pass's instructions on the smallest log (valgrind)")
    ap.add_argument("--write")
    a = ap.parse_args(argv)
    res = measure(a.logs, a.rounds, a.heap, a.warm, a.java_max_mb, not a.no_java)
    text = report(res, a.heap, a.warm)
    if a.callgrind:
        small = min(a.logs, key=os.path.getsize)
        mi = callgrind_pass(small)
        mb = os.path.getsize(small) / 1e6
        text += (f"\nOne dump pass under callgrind ({mb:.1f} MB log): {mi:.0f} M instructions, "
                 f"{mi / mb:.1f} M per input MB.\n")
    print(text)
    if a.write:
        with open(a.write, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
