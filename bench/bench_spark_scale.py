"""``kcodec analyze`` (Spark, default settings) against ``kcodec offsets groups`` (one
process) on generated ``__consumer_offsets`` histories: wall time, the process tree's
total CPU (JVM and Python workers included), its peak RSS, and records/s per CPU second.

    python bench/gen_offsets_log.py /data/h512 --size-mb 512 --partitions 4
    python bench/bench_spark_scale.py /data/h32 /data/h512 ... [--out bench/results/spark_scale.md]
    python bench/bench_spark_scale.py --standalone /data/h2048 --rounds 3  # 1 vs 2 workers of 1 core
    python bench/bench_spark_scale.py --breakdown /data/h128 /data/h2048   # peak RSS by process, JVM heap

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
from typing import Any, Dict, List, Optional, Tuple

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


def _status(pid: int) -> Dict[str, int]:
    """VmHWM (the process's own peak RSS), RssAnon, RssFile, RssShmem in bytes."""
    out: Dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmHWM", "RssAnon", "RssFile", "RssShmem"):
                out[k] = int(v.split()[0]) * 1024
    return out


def _label(pid: int, root: int) -> str:
    """Which part of a Spark run a process is (from its command line)."""
    if pid == root:
        return "driver (Python)"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    for key, name in (("CoarseGrainedExecutorBackend", "executors (JVM)"),
                      ("deploy.master.Master", "master"), ("deploy.worker.Worker", "workers (daemons)"),
                      ("SparkSubmit", "driver (JVM)"), ("pyspark.daemon", "Python workers"),
                      ("pyspark.worker", "Python workers")):
        if key in cmd:
            return name
    return "other"


def _busy() -> float:
    """The whole machine's busy CPU seconds so far (every process's, from /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / TICK     # all but idle and iowait


def measure(cmd: List[str], env: Optional[Dict[str, str]] = None,
            also: Tuple[int, ...] = ()) -> Dict[str, Any]:
    """Run ``cmd``; wall seconds, tree CPU seconds, peak tree RSS bytes, CPU seconds by
    part (driver, executors, Python workers, master, workers: ``parts``) and the CPU the
    rest of the machine took meanwhile (``others``).  ``also``: more process trees to
    count (a standalone master and its workers, whose executors do the work), each
    process's CPU from when the run started."""
    base: Dict[int, float] = {}
    for q in (q for r in also for q in _tree(r)):
        try:
            base[q] = _cpu_rss(q)[0]
        except OSError:
            pass
    t0 = time.monotonic()
    busy0 = _busy()
    outf, errf = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")   # no pipe to fill
    p = subprocess.Popen(cmd, env=env, stdout=outf, stderr=errf, text=True)
    seen: Dict[int, float] = {}
    label: Dict[int, str] = {}
    kind: Dict[int, str] = {}
    procs: Dict[int, Dict[str, int]] = {}     # pid -> peak of RSS and of each _status field
    kinds: Dict[str, int] = {}                 # kind -> peak of its processes' summed RSS
    peak = 0
    try:
        while p.poll() is None:
            rss = 0
            now: Dict[str, int] = {}
            for q in _tree(p.pid) + [q for r in also for q in _tree(r)]:
                try:
                    c, r = _cpu_rss(q)
                    st = _status(q)
                except OSError:
                    continue
                if label.get(q, "other") == "other":      # a script may exec the JVM later
                    label[q] = _label(q, p.pid)
                    kind[q] = _rss_kind(q, label[q], label)
                seen[q] = max(seen.get(q, 0.0), c - base.get(q, 0.0))
                rss += r
                now[kind[q]] = now.get(kind[q], 0) + r
                pk = procs.setdefault(q, {})
                for k, v in (("RSS", r), *st.items()):
                    pk[k] = max(pk.get(k, 0), v)
            peak = max(peak, rss)
            for k, v in now.items():
                kinds[k] = max(kinds.get(k, 0), v)
            time.sleep(0.2)
    except BaseException:           # stopped: the command (and its JVM) go too
        for q in _tree(p.pid)[::-1]:
            try:
                os.kill(q, 15)
            except OSError:
                pass
        raise
    p.wait()
    wall = time.monotonic() - t0
    busy = _busy() - busy0
    outf.seek(0)
    errf.seek(0)
    out, err = outf.read(), errf.read()
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err[-3000:]}")
    # each process's own time at its last sample (children's time is not added: they are
    # in the tree themselves; a process living under 0.2 s can be missed)
    cpu = sum(seen.values())
    parts: Dict[str, float] = {}
    for q, c in seen.items():
        parts[label[q]] = parts.get(label[q], 0.0) + c
    return {"wall": wall, "cpu": cpu, "rss": peak, "stdout": out, "parts": parts,
            "others": max(0.0, busy - cpu), "rss_kinds": kinds,
            "rss_procs": {q: dict(v, kind=kind[q], cpu=seen.get(q, 0.0)) for q, v in procs.items()}}


def _rss_kind(pid: int, lab: str, labels: Dict[int, str]) -> str:
    """The part of the tree a process's memory belongs to: ``_label``'s, Spark's launcher
    apart from the driver JVM, the Python workers split into the daemon (a child of a JVM)
    and the workers it forks."""
    if lab == "driver (JVM)":
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"launcher.Main" in f.read():
                    return "launcher (JVM)"     # builds spark-submit's command, ends before the driver
        except OSError:
            pass
    if lab != "Python workers":
        return lab
    try:
        with open(f"/proc/{pid}/stat") as f:
            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return lab
    return "Python workers" if labels.get(ppid) == "Python workers" else "Python daemon"


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


def _alive_workers(ui: int) -> int:
    import json
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return -1


def with_event_log(env: Dict[str, str], conf: Optional[Dict[str, str]] = None) -> Tuple[Dict[str, str], str]:
    """``env`` for a Spark command that writes Spark's event log (and takes ``conf``)
    through a ``spark-defaults.conf`` in a ``SPARK_CONF_DIR`` of its own; the
    directory, whose ``events/`` holds the log."""
    d = tempfile.mkdtemp(prefix="kcodec-eventlog-")
    os.makedirs(os.path.join(d, "events"))
    conf = dict(conf or {})
    conf.update({"spark.eventLog.enabled": "true", "spark.eventLog.compress": "false",
                 "spark.eventLog.dir": "file://" + os.path.join(d, "events")})
    with open(os.path.join(d, "spark-defaults.conf"), "w") as f:
        f.writelines(f"{k} {v}\n" for k, v in conf.items())
    env = dict(env)
    env["SPARK_CONF_DIR"] = d
    return env, d


def event_log(d: str) -> Dict[str, Any]:
    """From the event log under ``d`` (:func:`with_event_log`): the application's span,
    when each executor registered, and per stage its name, span (submission to
    completion) and tasks' run time, by executor."""
    import json
    import re
    # one file, or (rolling logs, Spark 4's default) a directory of events_<n>_... files
    files = sorted((os.path.join(r, f) for r, _, fs in os.walk(os.path.join(d, "events")) for f in fs
                    if f.startswith("events") or f.startswith("app-") or f.startswith("local-")),
                   key=lambda f: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", os.path.basename(f))])
    app: Dict[str, Any] = {"executors": {}, "stages": {}}
    for fn in files:
        with open(fn) as f:
            for line in f:
                e = json.loads(line)
                kind = e.get("Event")
                if kind == "SparkListenerApplicationStart":
                    app["start"] = e["Timestamp"]
                elif kind == "SparkListenerApplicationEnd":
                    app["end"] = e["Timestamp"]
                elif kind == "SparkListenerExecutorAdded":
                    app["executors"][e["Executor ID"]] = e["Timestamp"]
                elif kind == "SparkListenerStageCompleted":
                    si = e["Stage Info"]
                    st = app["stages"].setdefault(si["Stage ID"], {"run": {}, "tasks": {}})
                    st.update(name=si["Stage Name"], start=si.get("Submission Time"), end=si.get("Completion Time"))
                elif kind == "SparkListenerTaskEnd":
                    ti, tm = e["Task Info"], e.get("Task Metrics") or {}
                    st = app["stages"].setdefault(e["Stage ID"], {"run": {}, "tasks": {}})
                    x = ti["Executor ID"]
                    st["tasks"][x] = st["tasks"].get(x, 0) + 1
                    st["run"][x] = st["run"].get(x, 0) + tm.get("Executor Run Time", 0) / 1e3
    return app


def main_stage(app: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The stage whose tasks ran longest (the fold, in ``kcodec analyze``)."""
    st = [s for s in app.get("stages", {}).values() if s.get("start") and s.get("end")]
    return max(st, key=lambda s: sum(s["run"].values()), default=None)


def standalone(path: str, workers: int, sessions: bool = True) -> Dict[str, Any]:
    """``kcodec analyze PATH --master spark://...`` (as a user submits to a cluster)
    against a standalone master and ``workers`` workers of 1 core and 1 GiB each, all on
    127.0.0.1 and started here as docs/spark-cluster.md starts them; CPU and RSS count
    the driver's tree and the master's and workers' (the executors are the workers'
    children).  The job asks for every worker's core (``spark.cores.max``) and its
    tasks wait until all executors have registered
    (``spark.scheduler.minRegisteredResourcesRatio`` 1), so the fold stage, timed from
    Spark's event log, runs on the whole cluster; the wall time includes that wait.

    ``sessions``: the master and each worker (with its executors) start in a session of
    their own, as daemons on separate machines are.  Linux's autogroup scheduling
    (``/proc/sys/kernel/sched_autogroup_enabled``) shares the CPU equally between
    sessions, not processes: in the bench's own session a second worker's executor only
    splits the session's share with the first, so on a shared machine it cannot add
    throughput whatever Spark does."""
    import pyspark
    home = os.path.dirname(pyspark.__file__)
    cls = os.path.join(home, "bin", "spark-class")
    env = _env_without_venv()
    env["SPARK_HOME"] = home
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    port, ui = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    work = tempfile.mkdtemp(prefix="kcodec-standalone-")
    log = open(os.path.join(work, "daemons.log"), "w")
    procs = [subprocess.Popen([cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=sessions)]
    job_env, evd = with_event_log(env, {"spark.cores.max": str(workers),
                                        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
                                        "spark.scheduler.maxRegisteredResourcesWaitingTime": "300s"})
    try:
        for _ in range(workers):
            procs.append(subprocess.Popen([cls, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                           "--cores", "1", "--memory", "1g", "--webui-port", "0",
                                           "--work-dir", work], env=env,
                                          stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=sessions))
        deadline = time.monotonic() + 180
        while _alive_workers(ui) < workers:
            if time.monotonic() > deadline or any(q.poll() is not None for q in procs):
                log.flush()
                with open(log.name) as f:
                    raise SystemExit(f"standalone cluster did not come up:\n{f.read()[-3000:]}")
            time.sleep(1)
        r = measure([_bin("kcodec"), "analyze", path, "--master", url, "--no-progress"], env=job_env,
                    also=tuple(q.pid for q in procs))
        r["events"] = event_log(evd)
    finally:
        for q in procs[::-1]:
            q.terminate()
        for q in procs:
            try:
                q.wait(30)
            except subprocess.TimeoutExpired:
                q.kill()
                q.wait()
        log.close()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(evd, ignore_errors=True)
    return r


# --------------------------------------------------------------------------- inputs

SIZES = (32, 128, 512, 2048)         # MiB, 4 partitions each
SEGMENT_INPUT = "seg1g"              # one partition, one ~1 GiB segment (+ .index)


def ensure_inputs(data: str, sizes: Tuple[int, ...] = SIZES, segment: bool = True) -> Dict[str, str]:
    """The generated inputs under ``data`` (made once, reused): ``h<MiB>`` of 4
    partitions, and ``seg1g``."""
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_offsets_log.py")
    want = {f"h{n}": ["--size-mb", str(n), "--partitions", "4"] for n in sizes}
    if segment:
        want[SEGMENT_INPUT] = ["--size-mb", "1000", "--segment-mb", "1024", "--seed", "7"]
    out = {}
    for name, args in want.items():
        d = os.path.join(data, name)
        if not os.path.isdir(d):
            print(f"generating {d} ...", file=sys.stderr, flush=True)
            shutil.rmtree(d + ".tmp", ignore_errors=True)
            subprocess.run([sys.executable, gen, d + ".tmp"] + args, check=True, stdout=subprocess.DEVNULL)
            os.rename(d + ".tmp", d)
        out[name] = d
    return out


# --------------------------------------------------------------------------- the questions

def _mib(path: str) -> str:
    return f"{_size(path) / (1 << 20):,.0f} MiB"


def growing(paths: List[str], lines: List[str]) -> None:
    """1: analyze against offsets groups on growing inputs, with Spark's fixed start-up
    (analyze on the bundled sample) measured in the same run."""
    env = _env_without_venv()
    load = _load()
    s = measure([_bin("kcodec"), "analyze", "--no-progress"], env=env)
    lines += ["| input | command | wall s | tree CPU s | peak tree RSS MB | records/s per CPU s "
              "| records/s per core (wall, 2 cores) | fold tasks: records/s per task second "
              "| load avg before (1/5/15) |",
              "|---|---|---|---|---|---|---|---|---|",
              f"| bundled sample, 336 records (Spark's fixed start-up) | `kcodec analyze` | {s['wall']:.1f} "
              f"| {s['cpu']:.1f} | {s['rss'] / 1e6:,.0f} | - | - | - | {load} |"]
    print(lines[-1], flush=True)
    ratios = []
    for path in paths:
        n = records_in(path)
        res = {}
        for name, cmd in (("kcodec offsets groups", [_bin("kcodec"), "offsets", "groups", path]),
                          ("kcodec analyze", [_bin("kcodec"), "analyze", path, "--no-progress"])):
            load = _load()
            fold = "-"
            if name == "kcodec analyze":     # the fold stage's own rate: records per second of its tasks
                aenv, evd = with_event_log(env)
                try:
                    r = res[name] = measure(cmd, env=aenv)
                    st = main_stage(event_log(evd))
                finally:
                    shutil.rmtree(evd, ignore_errors=True)
                if st is not None:
                    fold = f"{n / max(sum(st['run'].values()), 1e-9):,.0f}"
            else:
                r = res[name] = measure(cmd, env=env)
            lines.append(f"| {_mib(path)}, {n / 1e6:.2f}M records | `{name}` | {r['wall']:.1f} | {r['cpu']:.1f} "
                         f"| {r['rss'] / 1e6:,.0f} | {n / max(r['cpu'], 1e-9):,.0f} "
                         f"| {n / r['wall'] / 2:,.0f} | {fold} | {load} |")
            print(lines[-1], flush=True)
        a, g = res["kcodec analyze"], res["kcodec offsets groups"]
        above = a["cpu"] - s["cpu"]
        ratios.append(f"| {_mib(path)} | {above:.1f} s | {g['cpu']:.1f} s | {above / max(g['cpu'], 1e-9):.2f}x "
                      f"| {'yes' if a['cpu'] <= 2 * g['cpu'] + s['cpu'] else 'NO'} | {a['rss'] / 1e6:,.0f} MB |")
    lines += ["", "Against the target (analyze's CPU <= 2x `offsets groups`' + the start-up above; peak "
              "tree RSS <= 3 GB):", "",
              "| input | analyze CPU above start-up | `offsets groups` CPU | ratio | within 2x + start-up "
              "| analyze peak tree RSS |", "|---|---|---|---|---|---|"] + ratios


def _offsets_groups_tables(stdout: str) -> Tuple[Dict[Any, Any], Dict[Any, Any]]:
    import json
    d = json.loads(stdout)["groups"]
    groups = {gid: (g["type"], g["state"], g["generation"], len(g["members"]), len(g["offsets"]))
              for gid, g in d.items()}
    offs = {(gid, o["topic"], o["partition"]): (o["offset"], o["log_offset"], o["commit_timestamp"])
            for gid, g in d.items() for o in g["offsets"].values()}
    return groups, offs


def _analyze_tables(out: str) -> Tuple[Dict[Any, Any], Dict[Any, Any]]:
    import pyarrow.parquet as pq
    g = pq.read_table(os.path.join(out, "groups")).to_pylist()
    o = pq.read_table(os.path.join(out, "committed_offsets")).to_pylist()
    groups = {r["group_id"]: (r["type"], r["state"], r["generation"], r["members"], r["offsets"]) for r in g}
    offs = {(r["group_id"], r["topic"], r["partition"]): (r["offset"], r["log_offset"], r["commit_timestamp"])
            for r in o}
    return groups, offs


def _diff(a: Dict[Any, Any], b: Dict[Any, Any]) -> str:
    if a == b:
        return "equal"
    keys = set(a) ^ set(b)
    vals = [k for k in set(a) & set(b) if a[k] != b[k]]
    return f"DIFFER: {len(keys)} keys in one only, {len(vals)} values differ (e.g. {sorted(keys | set(vals))[:3]})"


def single_segment(path: str, lines: List[str], plain: bool = True) -> bool:
    """2: a 1 GiB single-segment partition: analyze with default settings (measured; not
    when ``plain`` is false), and its groups/committed_offsets tables (``--out``, with
    Spark's stages from its event log) against ``offsets groups --json -v``."""
    env = _env_without_venv()
    n = records_in(path)
    files = sorted(f for f in os.listdir(os.path.join(path, "__consumer_offsets-0")))
    lines += [f"Input: one partition, {', '.join(files)} ({_mib(path)}, {n / 1e6:.2f}M records).", "",
              "| command | wall s | tree CPU s | peak tree RSS MB | records/s per CPU s | load avg before |",
              "|---|---|---|---|---|---|"]
    load = _load()
    g = measure([_bin("kcodec"), "offsets", "groups", "--json", "-v", path], env=env)
    lines.append(f"| `kcodec offsets groups --json -v` | {g['wall']:.1f} | {g['cpu']:.1f} | {g['rss'] / 1e6:,.0f} "
                 f"| {n / max(g['cpu'], 1e-9):,.0f} | {load} |")
    print(lines[-1], flush=True)
    if plain:
        load = _load()
        a = measure([_bin("kcodec"), "analyze", path, "--no-progress"], env=env)
        lines.append(f"| `kcodec analyze` | {a['wall']:.1f} | {a['cpu']:.1f} | {a['rss'] / 1e6:,.0f} "
                     f"| {n / max(a['cpu'], 1e-9):,.0f} | {load} |")
        print(lines[-1], flush=True)
    out = tempfile.mkdtemp(prefix="kcodec-seg1g-")
    wenv, evd = with_event_log(env)
    try:
        load = _load()
        w = measure([_bin("kcodec"), "analyze", path, "--no-progress", "--out", out], env=wenv)
        lines.append(f"| `kcodec analyze --out DIR` (every table, `records` too) | {w['wall']:.1f} | {w['cpu']:.1f} "
                     f"| {w['rss'] / 1e6:,.0f} | {n / max(w['cpu'], 1e-9):,.0f} | {load} |")
        print(lines[-1], flush=True)
        ga, oa = _analyze_tables(out)
        tables = {t: _size(os.path.join(out, t)) for t in sorted(os.listdir(out))
                  if os.path.isdir(os.path.join(out, t))}
        app = event_log(evd)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(evd, ignore_errors=True)
    lines += ["", f"`--out` run, CPU s by part: {', '.join(f'{k} {v:.1f}' for k, v in sorted(w['parts'].items()))}; "
              f"the rest of the machine took {w['others']:.1f} CPU s meanwhile.  Tables written: "
              + ", ".join(f"{t} {b / 1e6:,.1f} MB" for t, b in tables.items()) + ".", "",
              "| Spark stage (event log) | tasks | span s | tasks' run time s |", "|---|---|---|---|"]
    for sid, st in sorted(app.get("stages", {}).items()):
        if st.get("start") and st.get("end"):
            lines.append(f"| {sid}: {st['name'].split(' at ')[0]} | {sum(st['tasks'].values())} "
                         f"| {(st['end'] - st['start']) / 1e3:.1f} | {sum(st['run'].values()):.1f} |")
    print("\n".join(lines[-len(app.get('stages', {})) - 5:]), flush=True)
    gg, og = _offsets_groups_tables(g["stdout"])   # type: ignore[arg-type]
    dg, do = _diff(ga, gg), _diff(oa, og)
    lines += ["", f"analyze's `groups` table against `offsets groups` ({len(gg)} groups: type, state, "
              f"generation, members, offsets): **{dg}**; its `committed_offsets` ({len(og):,} offsets: offset, "
              f"log offset, commit timestamp): **{do}**."]
    print(lines[-1], flush=True)
    return dg == do == "equal"


_KINDS = ("driver (JVM)", "driver (Python)", "Python daemon", "Python workers", "other")


def _gc_log(d: str, pid: int) -> Dict[str, float]:
    """From the JVM's ``-Xlog:gc`` file (``gc-<pid>.log`` under ``d``): the collections,
    and the peak heap used before one, after one (live data and what survived) and
    committed, in MB."""
    import re
    out = {"gcs": 0, "before": 0.0, "after": 0.0, "committed": 0.0}
    unit = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}
    try:
        with open(os.path.join(d, f"gc-{pid}.log")) as f:
            for line in f:
                m = re.search(r"Pause .* (\d+)([KMG])->(\d+)([KMG])\((\d+)([KMG])\)", line)
                if m:
                    out["gcs"] += 1
                    b, a, c = (int(m.group(i)) * unit[m.group(i + 1)] for i in (1, 3, 5))
                    out["before"] = max(out["before"], b)
                    out["after"] = max(out["after"], a)
                    out["committed"] = max(out["committed"], c)
    except OSError:
        pass
    return out


def breakdown(paths: List[str], lines: List[str], rounds: int = 1) -> None:
    """Peak RSS of ``kcodec analyze`` (default settings) by part of its process tree, and
    the driver JVM's heap from its GC log (``-Xlog:gc`` through ``JAVA_TOOL_OPTIONS``,
    which leaves the command and its settings as users have them)."""
    env = _env_without_venv()
    lines += ["| input | round | wall s | tree CPU s | peak tree RSS MB | peak RSS MB by part: "
              + " / ".join(_KINDS) + " | per process: kind peak RSS (anon/file) MB, CPU s "
              "| driver JVM heap MB: GCs, peak used before GC / after GC / committed "
              "| load avg before (1/5/15) |", "|---|---|---|---|---|---|---|---|---|"]
    for i in range(1, rounds + 1):
        for path in paths:
            d = tempfile.mkdtemp(prefix="kcodec-gclog-")
            jenv = dict(env)
            jenv["JAVA_TOOL_OPTIONS"] = (env.get("JAVA_TOOL_OPTIONS", "") + f" -Xlog:gc:file={d}/gc-%p.log").strip()
            load = _load()
            try:
                r = measure([_bin("kcodec"), "analyze", path, "--no-progress"], env=jenv)
                jvm = [q for q, v in r["rss_procs"].items() if v["kind"] == "driver (JVM)"]
                gc = _gc_log(d, jvm[0]) if jvm else _gc_log(d, -1)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            k = r["rss_kinds"]
            per = "; ".join(f"{v['kind']} {v['RSS'] / 1e6:,.0f} ({v.get('RssAnon', 0) / 1e6:,.0f}/"
                            f"{v.get('RssFile', 0) / 1e6:,.0f}), {v['cpu']:.1f}"
                            for q, v in sorted(r["rss_procs"].items(), key=lambda kv: -kv[1]["RSS"])
                            if v["RSS"] > 20e6)
            lines.append(f"| {_mib(path)} | {i} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['rss'] / 1e6:,.0f} "
                         f"| {' / '.join(f'{k.get(x, 0) / 1e6:,.0f}' for x in _KINDS)} | {per} "
                         f"| {gc['gcs']}, {gc['before']:,.0f} / {gc['after']:,.0f} / {gc['committed']:,.0f} "
                         f"| {load} |")
            print(lines[-1], flush=True)


def _autogroup() -> str:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return "on" if f.read().strip() == "1" else "off"
    except OSError:
        return "absent"


_PARTS = ("driver (JVM)", "driver (Python)", "master", "workers (daemons)", "executors (JVM)",
          "Python workers", "other")


def _parts(r: Dict[str, Any]) -> str:
    p = r["parts"]
    return " / ".join(f"{p.get(k, 0.0):.1f}" for k in _PARTS)


def workers_rounds(path: str, rounds: int, lines: List[str], sessions: bool = True) -> None:
    """3: standalone master + 1 vs 2 workers of 1 core, alternately, ``rounds`` times:
    the whole job's wall time and records/s, and the fold stage's own (its span in
    Spark's event log, from the first task's submission to the last task's end, every
    executor registered before it starts)."""
    n = records_in(path)
    nparts = len([d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d))])
    lines += [f"Input: {_mib(path)}, {n / 1e6:.2f}M records, {nparts} partitions ({nparts} fold tasks); master "
              f"and workers {'each in a session of its own' if sessions else 'in the bench session'} "
              f"(autogroup scheduling {_autogroup()}).", "",
              "| round | workers | job wall s | job records/s | fold stage s | fold stage records/s "
              "| fold tasks per executor (run s) | executors registered (s after app start) "
              "| tree CPU s | CPU s by part: driver JVM / driver Python / master / workers / executors JVM "
              "/ Python workers / other | rest of the machine's CPU s meanwhile | peak RSS MB "
              "| load avg before (1/5/15) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    res: Dict[int, List[Tuple[float, float]]] = {1: [], 2: []}
    for i in range(1, rounds + 1):
        for w in ((1, 2) if i % 2 else (2, 1)):
            load = _load()
            r = standalone(path, w, sessions)
            app = r["events"]
            st = main_stage(app)
            t0 = app.get("start", 0)
            regs = ", ".join(f"{(t - t0) / 1e3:.1f}" for _, t in sorted(app.get("executors", {}).items()))
            if st is not None:
                span = (st["end"] - st["start"]) / 1e3
                per = ", ".join(f"{x}: {st['tasks'][x]} ({st['run'][x]:.1f})" for x in sorted(st["tasks"]))
                res[w].append((r["wall"], span))
                stage = f"{span:.1f} | {n / span:,.0f} | {per}"
            else:
                stage = "- | - | -"
            lines.append(f"| {i} | {w} | {r['wall']:.1f} | {n / r['wall']:,.0f} | {stage} | {regs} "
                         f"| {r['cpu']:.1f} | {_parts(r)} | {r['others']:.1f} | {r['rss'] / 1e6:,.0f} | {load} |")
            print(lines[-1], flush=True)
    if res[1] and res[2]:
        import statistics
        w1, s1 = (statistics.median(x[k] for x in res[1]) for k in (0, 1))
        w2, s2 = (statistics.median(x[k] for x in res[2]) for k in (0, 1))
        lines += ["", f"Medians: 2 workers against 1: fold stage {s1 / s2:.2f}x the records/s "
                      f"({s1:.1f} s -> {s2:.1f} s), whole job {w1 / w2:.2f}x ({w1:.1f} s -> {w2:.1f} s)."]
        print(lines[-1], flush=True)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", help="inputs for --growing / --standalone")
    ap.add_argument("--all", metavar="DATA", help="everything in one command: generate missing inputs under DATA "
                                                  "and run the three questions")
    ap.add_argument("--growing", action="store_true", help="question 1 on PATHS")
    ap.add_argument("--breakdown", action="store_true", help="analyze's peak RSS by process and the driver "
                                                                 "JVM's heap, on PATHS (--rounds times)")
    ap.add_argument("--segment", metavar="PATH", help="question 2 on this single-segment input")
    ap.add_argument("--out-only", action="store_true", help="with --segment: skip analyze without --out")
    ap.add_argument("--standalone", action="store_true", help="question 3: 1 vs 2 workers of 1 core on PATHS[0]")
    ap.add_argument("--one-session", action="store_true", help="standalone: master and workers in the bench's "
                                                                 "session (one autogroup) instead of one each")
    ap.add_argument("--rounds", type=int, help="standalone rounds (1w/2w alternately; default 3), "
                                               "breakdown rounds (default 1)")
    ap.add_argument("--out", help="append the Markdown to this file")
    a = ap.parse_args(argv)
    import signal
    # a SIGTERM (timeout, the lead's ^C in another terminal) still stops the daemons started here
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    lines: List[str] = []
    t0 = time.monotonic()
    ok = True
    if a.all:
        inp = ensure_inputs(a.all)
        a.growing, a.segment, a.standalone = True, inp[SEGMENT_INPUT], True
        grow = [inp[f"h{n}"] for n in SIZES]
        stand = inp["h2048"]         # the fold tasks, not Spark's start-up, dominate
    else:
        grow = a.paths
        stand = a.paths[0] if a.paths else None
    if a.growing:
        lines += ["### 1. Growing inputs (4 partitions)", ""]
        growing(grow, lines)
        lines.append("")
    if a.breakdown:
        lines += ["### Peak RSS by process (`kcodec analyze`, default settings)", ""]
        breakdown(grow, lines, a.rounds or 1)
        lines.append("")
    if a.segment:
        lines += ["### 2. A 1 GiB single-segment partition", ""]
        ok = single_segment(a.segment, lines, plain=not a.out_only)
        lines.append("")
    if a.standalone:
        if stand is None:
            ap.error("--standalone needs a PATH")
        lines += ["### 3. Standalone master + 1 vs 2 workers (1 core, 1 GiB each), alternately", ""]
        workers_rounds(stand, a.rounds or 3, lines, sessions=not a.one_session)
        lines.append("")
    lines.append(f"(this command: {time.monotonic() - t0:,.0f} s wall)")
    if a.out:
        with open(a.out, "a") as f:
            f.write("\n".join(lines) + "\n\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
