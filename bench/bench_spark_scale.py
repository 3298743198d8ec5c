"""``kcodec analyze`` (Spark, default settings) against ``kcodec offsets groups`` (one
process) on generated ``__consumer_offsets`` histories: wall time, the process tree's
total CPU (JVM and Python workers included), its peak RSS, and records/s per CPU second.

    python bench/gen_offsets_log.py /data/h512 --size-mb 512 --partitions 4
    python bench/bench_spark_scale.py /data/h32 /data/h512 ... [--out bench/results/spark_scale.md]
    python bench/bench_spark_scale.py --standalone /data/h512   # 1 vs 2 workers of 1 core

Both commands are run as users run them (the venv's console script, its bin not on
PATH).  CPU is taken from /proc for every process of the tree, sampled every 0.2 s
(a process's own and its waited-for children's time), so it is CPU time, not wall time,
that compares on a shared machine; the load average is printed beside every row.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Tuple

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> Dict[int, List[int]]:
    kids: Dict[int, List[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
                ppid = int(st.rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except OSError:
                continue
    return kids


def _tree(pid: int) -> List[int]:
    kids = _children()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def _cpu_rss(pid: int) -> Tuple[float, int]:
    """CPU seconds (its own: user + system) and RSS bytes of one process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = sum(int(x) for x in fields[11:13]) / TICK
    return cpu, int(fields[21]) * PAGE


def measure(cmd: List[str], env: Optional[Dict[str, str]] = None) -> Dict[str, float]:
    """Run ``cmd``; wall seconds, tree CPU seconds, peak tree RSS bytes."""
    t0 = time.monotonic()
    outf, errf = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")   # no pipe to fill
    p = subprocess.Popen(cmd, env=env, stdout=outf, stderr=errf, text=True)
    seen: Dict[int, float] = {}
    peak = 0
    while p.poll() is None:
        rss = 0
        for q in _tree(p.pid):
            try:
                c, r = _cpu_rss(q)
            except OSError:
                continue
            seen[q] = max(seen.get(q, 0.0), c)
            rss += r
        peak = max(peak, rss)
        time.sleep(0.2)
    p.wait()
    wall = time.monotonic() - t0
    outf.seek(0)
    errf.seek(0)
    out, err = outf.read(), errf.read()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err[-3000:]}")
    # each process's own time at its last sample (children's time is not added: they are
    # in the tree themselves; a process living under 0.2 s can be missed)
    cpu = sum(seen.values())
    return {"wall": wall, "cpu": cpu, "rss": peak, "stdout": out}  # type: ignore[dict-item]


def records_in(path: str) -> int:
    from kcodec.log import iter_chunks, log_files
    n = 0
    for ch in iter_chunks(log_files(path)):
        n += len(ch.records) + sum(len(r) for _, r in ch.inflated.values())
    return n


def _bin(name: str) -> str:
    return os.path.join(os.path.dirname(sys.executable), name)


def _env_without_venv() -> Dict[str, str]:
    env = dict(os.environ)
    vbin = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != vbin)
    env.pop("PYSPARK_PYTHON", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def standalone(path: str, workers: int) -> Dict[str, float]:
    """``kcodec analyze`` against a standalone master with ``workers`` workers of 1 core."""
    import pyspark
    home = os.path.dirname(pyspark.__file__)
    cls = os.path.join(home, "bin", "spark-class")
    env = _env_without_venv()
    env["SPARK_HOME"] = home
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs = [subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    work = tempfile.mkdtemp()
    try:
        time.sleep(5)
        for i in range(workers):
            procs.append(subprocess.Popen([cls, "org.apache.spark.deploy.worker.Worker", url, "--cores", "1",
                                           "--memory", "1g", "--webui-port", str(_free_port()),
                                           "--work-dir", work], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(8)
        r = measure([_bin("kcodec"), "analyze", path, "--master", url, "--no-progress"], env=env)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
        shutil.rmtree(work, ignore_errors=True)
    return r


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--standalone", action="store_true", help="1 vs 2 workers of 1 core on a standalone master")
    ap.add_argument("--out", help="append the Markdown rows to this file")
    a = ap.parse_args(argv)
    lines: List[str] = []
    env = _env_without_venv()
    if a.standalone:
        lines.append("| input | workers | wall s | tree CPU s | records/s (wall) | load avg before |")
        lines.append("|---|---|---|---|---|---|")
        for path in a.paths:
            n = records_in(path)
            for w in (1, 2):
                load = _load()
                r = standalone(path, w)
                lines.append(f"| {_size(path) / (1 << 20):.0f} MiB, {n / 1e6:.2f}M records | {w} | {r['wall']:.1f} "
                             f"| {r['cpu']:.1f} | {n / r['wall']:,.0f} | {load} |")
                print(lines[-1], flush=True)
    else:
        lines.append("| input | command | wall s | tree CPU s | peak tree RSS MB | records/s per CPU s "
                     "| load avg before |")
        lines.append("|---|---|---|---|---|---|---|")
        for path in a.paths:
            n = records_in(path)
            for name, cmd in (("kcodec offsets groups", [_bin("kcodec"), "offsets", "groups", path]),
                              ("kcodec analyze", [_bin("kcodec"), "analyze", path, "--no-progress"])):
                load = _load()
                r = measure(cmd, env=env)
                lines.append(f"| {_size(path) / (1 << 20):.0f} MiB, {n / 1e6:.2f}M records | `{name}` "
                             f"| {r['wall']:.1f} | {r['cpu']:.1f} | {r['rss'] / 1e6:,.0f} | "
                             f"{n / max(r['cpu'], 1e-9):,.0f} | {load} |")
                print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
