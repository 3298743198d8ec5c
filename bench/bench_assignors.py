"""Assignor speed and memory: kcodec (C) against kafka-python 3.0.12's StickyPartitionAssignor.

    python3 -m pytest bench/bench_assignors.py --benchmark-only -n 0 [-k 2000x500x2000]

Scenarios (members x topics x partitions per topic, as in the issue and Kafka's own large
sticky tests): 10x10x10, 100x50x20, 500x100x100, 1000x200x100, 2000x500x100,
2000x500x2000 (1,000,000 partitions); each fresh, after one member leaves and after one
joins (the others own the previous assignment at generation 1); with equal subscriptions
and with unequal ones (the last member subscribes only to the first topic, Kafka's
``testLargeAssignmentAndGroupWithNonEqualSubscription``).

Implementations:
  * ``core``  - kcodec's C assignor on interned arrays (``assign_arrays``), cooperative-sticky;
  * ``api``   - kcodec's Python API end to end as a group leader runs it: ``assign`` on
                Member objects, then each member's ConsumerProtocolAssignment bytes for
                SyncGroup (``AssignmentResult.encoded``), cooperative-sticky;
  * ``api-objects`` - the same, but ending in ``{member: [TopicPartition, ...]}``
                (``AssignmentResult.assignment``): a million Python tuples at the top size;
  * ``kafka-python`` - its StickyPartitionAssignor, only on sizes it finishes within a
    minute (up to ``KCODEC_BENCH_KP_MAX_PARTITIONS`` partitions, default 10,000).

Each benchmark records in ``extra_info``: partitions, members, and (unless
``KCODEC_BENCH_MEMORY=0``) ``peak_rss_mb`` / ``delta_rss_mb``: the peak resident memory of a
fresh process that builds the inputs and runs the assignment once, and its excess over a
process that only builds the inputs. ``python3 bench/bench_assignors.py`` prints a table of
all scenarios without pytest.
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import numpy as np  # noqa: E402

SIZES = [(10, 10, 10), (100, 50, 20), (500, 100, 100), (1000, 200, 100), (2000, 500, 100), (2000, 500, 2000)]
EVENTS = ["fresh", "leave", "join"]
SUBS = ["equal", "unequal"]
RACK_SIZES = [s for s in SIZES if s[0] >= 500]
KP_MAX_PARTITIONS = int(os.environ.get("KCODEC_BENCH_KP_MAX_PARTITIONS", "10000"))
MEMORY = os.environ.get("KCODEC_BENCH_MEMORY", "1") != "0"


# ------------------------------------------------------------------ scenarios as arrays

def _subs_arrays(M: int, T: int, subs: str) -> Tuple[np.ndarray, np.ndarray]:
    lens = np.full(M, T, dtype=np.int64)
    if subs == "unequal":
        lens[-1] = 1
    off = np.zeros(M + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    topics = np.concatenate([np.arange(n, dtype=np.int32) for n in lens]) if M else np.zeros(0, np.int32)
    return off, topics


def _owned_from(owner: np.ndarray, M: int, T: int, P: int, keep_map: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Owned-partition CSR for the new member numbering: keep_map[old] = new index or -1."""
    new_owner = np.where(owner >= 0, keep_map[np.maximum(owner, 0)], -1)
    g = np.nonzero(new_owner >= 0)[0]
    o = new_owner[g]
    order = np.argsort(o, kind="stable")
    g, o = g[order], o[order]
    off = np.zeros(M + 1, dtype=np.int64)
    np.cumsum(np.bincount(o, minlength=M), out=off[1:])
    return off, (g // P).astype(np.int32), (g % P).astype(np.int32)


RACKS = ("use1-az1", "use1-az2", "use1-az3")


def _rack_arrays(n_members: int, first: int, N: int) -> Dict[str, Any]:
    """KIP-881 inputs: members round-robin over three racks (member k of the original
    numbering on rack k % 3, so a member keeps its rack when another leaves), and partition
    g's replicas on racks g % 3 and (g + 1) % 3 (replication factor 2 over 3 racks, so
    where a partition goes matters)."""
    g = np.arange(N)
    return dict(member_rack=((np.arange(n_members) + first) % 3).astype(np.int32), n_racks=3,
                prack_off=np.arange(0, 2 * N + 1, 2, dtype=np.int64),
                prack=np.stack([g % 3, (g + 1) % 3], 1).astype(np.int32).ravel())


def build_arrays(M: int, T: int, P: int, subs: str, event: str, racks: bool = False) -> Dict[str, Any]:
    """Inputs of ``assign_arrays`` for one scenario (previous rounds computed by kcodec,
    rack aware too when ``racks``)."""
    from kcodec.consumer.assignors import assign_arrays
    pc = np.full(T, P, dtype=np.int32)

    def rk(n: int, first: int = 0) -> Dict[str, Any]:
        return _rack_arrays(n, first, T * P) if racks else {}

    if event == "fresh":
        so, st = _subs_arrays(M, T, subs)
        return dict(n_members=M, part_count=pc, sub_off=so, sub_topic=st, **rk(M))
    if event == "leave":
        # everyone was there; member 0 leaves (ids stay sorted, so indexes shift by one)
        so, st = _subs_arrays(M, T, subs)
        owner, _, _ = assign_arrays("cooperative-sticky", M, pc, so, st, **rk(M))
        keep = np.arange(-1, M - 1, dtype=np.int64)
        so2, st2 = _subs_arrays(M - 1, T, subs)
        oo, ot, op = _owned_from(owner, M - 1, T, P, keep)
        return dict(n_members=M - 1, part_count=pc, sub_off=so2, sub_topic=st2, own_off=oo, own_topic=ot,
                    own_part=op, generation=np.ones(M - 1, dtype=np.int32), **rk(M - 1, 1))
    # join: M-1 members had an assignment; a new member (sorted last) arrives
    so1, st1 = _subs_arrays(M - 1, T, "equal")
    owner, _, _ = assign_arrays("cooperative-sticky", M - 1, pc, so1, st1, **rk(M - 1))
    keep = np.arange(M - 1, dtype=np.int64)
    so, st = _subs_arrays(M, T, subs)
    oo, ot, op = _owned_from(owner, M, T, P, keep)
    gen = np.ones(M, dtype=np.int32)
    gen[-1] = -1
    return dict(n_members=M, part_count=pc, sub_off=so, sub_topic=st, own_off=oo, own_topic=ot, own_part=op,
                generation=gen, **rk(M))


def member_name(i: int) -> str:
    return f"consumer{i:05d}"


def topic_name(t: int) -> str:
    return f"topic{t:04d}"


def build_members(arr: Dict[str, Any], event: str) -> List[Any]:
    """The same scenario as kcodec Member objects (names sort like the indexes)."""
    from kcodec.consumer.assignors import Member
    M = arr["n_members"]
    names = [member_name(i + (1 if event == "leave" else 0)) for i in range(M)]
    tnames = [topic_name(t) for t in range(len(arr["part_count"]))]
    so, st = arr["sub_off"], arr["sub_topic"].tolist()
    out = []
    oo = arr.get("own_off")
    ot = arr["own_topic"].tolist() if oo is not None else None
    op = arr["own_part"].tolist() if oo is not None else None
    gen = arr.get("generation")
    mr = arr.get("member_rack")
    for i in range(M):
        owned = [] if oo is None else [(tnames[ot[k]], op[k]) for k in range(oo[i], oo[i + 1])]
        out.append(Member(names[i], [tnames[t] for t in st[so[i]:so[i + 1]]], owned,
                          None if gen is None or gen[i] < 0 else int(gen[i]),
                          None if mr is None else RACKS[mr[i]]))
    return out


def build_partition_racks(arr: Dict[str, Any]) -> Optional[Dict[str, List[List[str]]]]:
    """The API's form of the replica racks: {topic: [[rack, ...] per partition]}."""
    if "prack" not in arr:
        return None
    pc, off, pr = arr["part_count"], arr["prack_off"], arr["prack"].tolist()
    out, g = {}, 0
    for t, n in enumerate(pc.tolist()):
        out[topic_name(t)] = [[RACKS[r] for r in pr[off[g + p]:off[g + p + 1]]] for p in range(n)]
        g += n
    return out


# ------------------------------------------------------------------ runners

def run_core(arr: Dict[str, Any]) -> Any:
    from kcodec.consumer.assignors import assign_arrays
    return assign_arrays("cooperative-sticky", arr["n_members"], arr["part_count"], arr["sub_off"], arr["sub_topic"],
                         arr.get("own_off"), arr.get("own_topic"), arr.get("own_part"), arr.get("generation"),
                         arr.get("member_rack"), arr.get("n_racks", 0), arr.get("prack_off"), arr.get("prack"))


def run_api(members: List[Any], partitions: Dict[str, int], partition_racks: Any = None) -> Any:
    from kcodec.consumer.assignors import assign
    return assign("cooperative-sticky", members, partitions, partition_racks=partition_racks).encoded()


def run_api_objects(members: List[Any], partitions: Dict[str, int], partition_racks: Any = None) -> Any:
    from kcodec.consumer.assignors import assign
    return assign("cooperative-sticky", members, partitions, partition_racks=partition_racks).assignment()


def kp_inputs(members: List[Any], partitions: Dict[str, int]) -> Tuple[Any, List[Any]]:
    """kafka-python's own objects: a real ClusterMetadata and decoded JoinGroup members whose
    user data is kafka-python's StickyAssignorUserData (the previous assignment)."""
    from kafka.cluster import ClusterMetadata
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
    from kafka.protocol.consumer.group import JoinGroupResponse
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
    from kafka.protocol.metadata import MetadataResponse as MR
    T_ = MR.MetadataResponseTopic
    P_ = T_.MetadataResponsePartition
    cluster = ClusterMetadata()
    cluster.update_metadata(MR(version=1, brokers=[MR.MetadataResponseBroker(version=1, node_id=0, host="h", port=9092, rack=None)],
                               controller_id=0,
                               topics=[T_(version=1, error_code=0, name=t, is_internal=False,
                                          partitions=[P_(version=1, error_code=0, partition_index=p, leader_id=0,
                                                         replica_nodes=[0], isr_nodes=[0]) for p in range(n)])
                                       for t, n in partitions.items()]))
    out = []
    for m in members:
        ud = b""
        if m.owned_partitions:
            by: Dict[str, List[int]] = {}
            for t, p in m.owned_partitions:
                by.setdefault(t, []).append(p)
            ud = StickyAssignorUserData(list(by.items()), m.generation if m.generation is not None else -1)
        md = ConsumerProtocolSubscription(version=0, topics=list(m.topics), user_data=ud)
        out.append(JoinGroupResponse.JoinGroupResponseMember(version=5, member_id=m.member_id,
                                                             group_instance_id=None, metadata=md))
    return cluster, out


def run_kafka_python(cluster: Any, members: List[Any]) -> Any:
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    return StickyPartitionAssignor().assign(cluster, members)


def measure_rss(impl: str, M: int, T: int, P: int, subs: str, event: str, racks: bool = False) -> Dict[str, float]:
    """Peak RSS (MB) of a fresh process running the scenario once, and its excess over one
    that only builds the inputs."""
    def child(run: bool) -> float:
        code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_assignors as B; "
                f"B._child({impl!r}, {M}, {T}, {P}, {subs!r}, {event!r}, {run}, {racks})")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-2000:])
        return float(r.stdout.strip().splitlines()[-1])
    base, peak = child(False), child(True)
    return {"peak_rss_mb": round(peak, 1), "delta_rss_mb": round(peak - base, 1)}


def _child(impl: str, M: int, T: int, P: int, subs: str, event: str, run: bool, racks: bool = False) -> None:
    arr = build_arrays(M, T, P, subs, event, racks)
    parts = {topic_name(t): P for t in range(T)}
    if impl == "core":
        if run:
            run_core(arr)
    else:
        members = build_members(arr, event)
        prack = build_partition_racks(arr)
        del arr
        if impl in ("api", "api-objects"):
            if run:
                (run_api if impl == "api" else run_api_objects)(members, parts, prack)
        else:
            cluster, kpm = kp_inputs(members, parts)
            if run:
                run_kafka_python(cluster, kpm)
    print(_peak_rss_mb())


def _peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM belongs to the process image, while
    ru_maxrss carries over the parent's peak through fork+exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ------------------------------------------------------------------ pytest-benchmark

def _ids(x: Any) -> str:
    return "x".join(map(str, x)) if isinstance(x, tuple) else str(x)


try:
    import pytest
except ImportError:  # table mode only
    pytest = None

if pytest is not None:
    pytest.importorskip("kcodec.consumer._assign", reason="C assignors not built")

    _CACHE: Dict[Any, Any] = {}

    def _arrays(size, subs, event):
        key = ("arr",) + size + (subs, event)
        if key not in _CACHE:
            _CACHE.clear()   # the 1M scenarios are large: keep one at a time
            _CACHE[key] = build_arrays(*size, subs, event)
        return _CACHE[key]

    def _info(benchmark, impl, size, subs, event, arr):
        M, T, P = size
        benchmark.extra_info.update({"impl": impl, "members": arr["n_members"], "topics": T,
                                     "partitions": T * P, "subscriptions": subs, "event": event})
        if MEMORY:
            benchmark.extra_info.update(measure_rss(impl, M, T, P, subs, event))

    @pytest.mark.parametrize("event", EVENTS)
    @pytest.mark.parametrize("subs", SUBS)
    @pytest.mark.parametrize("size", SIZES, ids=_ids)
    def test_core(benchmark, size, subs, event):
        arr = _arrays(size, subs, event)
        owner, target, stats = benchmark(run_core, arr)
        assert (target >= 0).all()
        _info(benchmark, "core", size, subs, event, arr)

    @pytest.mark.parametrize("event", EVENTS)
    @pytest.mark.parametrize("subs", SUBS)
    @pytest.mark.parametrize("size", SIZES, ids=_ids)
    @pytest.mark.parametrize("impl", ["api", "api-objects"])
    def test_api(benchmark, impl, size, subs, event):
        arr = _arrays(size, subs, event)
        members = build_members(arr, event)
        parts = {topic_name(t): size[2] for t in range(size[1])}
        rounds = 3 if size[1] * size[2] >= 100_000 else 5
        run = run_api if impl == "api" else run_api_objects
        out = benchmark.pedantic(run, args=(members, parts), rounds=rounds, iterations=1)
        assert len(out) == len(members)
        _info(benchmark, impl, size, subs, event, arr)

    @pytest.mark.parametrize("event", EVENTS)
    @pytest.mark.parametrize("size", RACK_SIZES, ids=_ids)
    @pytest.mark.parametrize("impl", ["core", "api"])
    def test_racks(benchmark, impl, size, event):
        """KIP-881: members on three racks, replicas on two of them (equal subscriptions)."""
        arr = build_arrays(*size, "equal", event, racks=True)
        benchmark.extra_info.update({"impl": impl, "members": arr["n_members"], "partitions": size[1] * size[2],
                                     "event": event, "racks": 3})
        if impl == "core":
            owner, target, stats = benchmark(run_core, arr)
            assert stats["rack_aware"]
        else:
            members, prack = build_members(arr, event), build_partition_racks(arr)
            parts = {topic_name(t): size[2] for t in range(size[1])}
            benchmark.pedantic(run_api, args=(members, parts, prack), rounds=3, iterations=1)
        if MEMORY:
            benchmark.extra_info.update(measure_rss(impl, *size, "equal", event, racks=True))

    @pytest.mark.parametrize("event", EVENTS)
    @pytest.mark.parametrize("subs", SUBS)
    @pytest.mark.parametrize("size", [s for s in SIZES if s[1] * s[2] <= KP_MAX_PARTITIONS], ids=_ids)
    def test_kafka_python(benchmark, size, subs, event):
        pytest.importorskip("kafka.coordinator.assignors.sticky.sticky_assignor")
        arr = _arrays(size, subs, event)
        members = build_members(arr, event)
        parts = {topic_name(t): size[2] for t in range(size[1])}
        cluster, kpm = kp_inputs(members, parts)
        rounds = 1 if size[1] * size[2] >= 5_000 else 3
        benchmark.pedantic(run_kafka_python, args=(cluster, kpm), rounds=rounds, iterations=1)
        _info(benchmark, "kafka-python", size, subs, event, arr)


# ------------------------------------------------------------------ the issue's targets

# Published numbers for the same scenarios on this kind of machine (issue 4): Kafka 4.1.1's
# Java CooperativeStickyAssignor on a warm JVM, and franz-go's balancer.
PEERS = {(500, 100, 100, "fresh"): {"java": 0.056, "franz-go": 0.0087},
         (2000, 500, 2000, "fresh"): {"java": 0.209, "franz-go": 0.32},
         (2000, 500, 2000, "leave"): {"java": 5.1, "franz-go": 2.97}}
LIMITS = {(2000, 500, 2000, "fresh"): 0.2, (2000, 500, 2000, "leave"): 0.5}
RSS_LIMIT_MB = 400.0
KP_RATIO = 1000.0


def _median_time(fn: Any, args: Tuple[Any, ...], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def check_targets(with_kafka_python: bool = True, memory: bool = MEMORY) -> List[Dict[str, Any]]:
    """Run the issue's target scenarios in this process and return one row each: the
    kcodec leader path (``api``, median of 5), the bound or the peer ratio it must meet,
    and whether it does."""
    rows: List[Dict[str, Any]] = []
    for subs in SUBS:
        for (M, T, P, event), limit in LIMITS.items():
            arr = build_arrays(M, T, P, subs, event)
            members = build_members(arr, event)
            del arr
            parts = {topic_name(t): P for t in range(T)}
            t = _median_time(run_api, (members, parts), 5)
            row = {"scenario": f"{M}x{T}x{P} {subs} {event}", "api_s": t, "limit_s": limit,
                   "ok": t < limit}
            if memory:
                rss = measure_rss("api", M, T, P, subs, event)["peak_rss_mb"]
                row.update(peak_rss_mb=rss, ok=row["ok"] and rss < RSS_LIMIT_MB)
            row.update({k + "_s": v for k, v in PEERS.get((M, T, P, event), {}).items()})
            rows.append(row)
            del members
        if with_kafka_python:
            M, T, P = 500, 100, 100
            for event in EVENTS:
                arr = build_arrays(M, T, P, subs, event)
                members = build_members(arr, event)
                parts = {topic_name(t): P for t in range(T)}
                t = _median_time(run_api, (members, parts), 5)
                cluster, kpm = kp_inputs(members, parts)
                t0 = time.perf_counter()
                run_kafka_python(cluster, kpm)
                kp = time.perf_counter() - t0
                row = {"scenario": f"{M}x{T}x{P} {subs} {event}", "api_s": t, "kafka_python_s": kp,
                       "ratio": kp / t, "ok": kp / t >= KP_RATIO}
                row.update({k + "_s": v for k, v in PEERS.get((M, T, P, event), {}).items()})
                rows.append(row)
    return rows


def format_targets(rows: List[Dict[str, Any]]) -> str:
    head = ("| scenario | kcodec api s | bound | kafka-python s | ratio | Java s | franz-go s | peak RSS MB | met |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|:---:|")
    out = [head]
    def f(v: Any, fmt: str) -> str:
        return "" if v is None else format(v, fmt)
    for r in rows:
        bound = f"< {r['limit_s']} s" if "limit_s" in r else f">= {KP_RATIO:.0f}x"
        out.append(f"| {r['scenario']} | {r['api_s']:.4f} | {bound} | {f(r.get('kafka_python_s'), '.2f')} | "
                   f"{f(r.get('ratio'), '.0f')} | {f(r.get('java_s'), '.3f')} | {f(r.get('franz-go_s'), '.4f')} | "
                   f"{f(r.get('peak_rss_mb'), '.0f')} | {'yes' if r['ok'] else 'NO'} |")
    return "\n".join(out)


if pytest is not None:

    def test_targets(benchmark):
        """The issue's speed and memory targets, measured in one run (slow: kafka-python
        needs seconds per 500x100x100 scenario)."""
        pytest.importorskip("kafka.coordinator.assignors.sticky.sticky_assignor")
        rows = benchmark.pedantic(check_targets, rounds=1, iterations=1)
        table = format_targets(rows)
        print("\n" + table)
        benchmark.extra_info["targets"] = rows
        assert all(r["ok"] for r in rows), table


# ------------------------------------------------------------------ table mode

def main() -> None:
    """``python3 bench/bench_assignors.py [--kafka-python] [--racks] [--targets]``: a table of
    every scenario (kafka-python only with ``--kafka-python``), with ``--racks`` the
    rack-aware ones, then with ``--targets`` the issue's target rows."""
    kp = "--kafka-python" in sys.argv
    print(f"| {'scenario':28} | {'core s':>9} | {'api s':>9} | {'api-objects s':>13} | {'kafka-python s':>14} | "
          f"{'api RSS MB':>10} |")
    print("|---|---:|---:|---:|---:|---:|")
    for size in SIZES:
        for subs in SUBS:
            for event in EVENTS:
                arr = build_arrays(*size, subs, event)
                core = _median_time(run_core, (arr,), 3)
                members = build_members(arr, event)
                parts = {topic_name(t): size[2] for t in range(size[1])}
                api = _median_time(run_api, (members, parts), 3)
                objs = _median_time(run_api_objects, (members, parts), 3)
                kps = ""
                if kp and size[1] * size[2] <= KP_MAX_PARTITIONS:
                    cluster, kpm = kp_inputs(members, parts)
                    t0 = time.perf_counter()
                    run_kafka_python(cluster, kpm)
                    kps = f"{time.perf_counter() - t0:.3f}"
                rss = measure_rss("api", *size, subs, event)["peak_rss_mb"] if MEMORY else ""
                print(f"| {_ids(size) + ' ' + subs + ' ' + event:28} | {core:9.4f} | {api:9.4f} | {objs:13.4f} | "
                      f"{kps:>14} | {rss:>10} |", flush=True)
    if "--racks" in sys.argv:
        print()
        format_racks(RACK_SIZES, progress=True)
    if "--targets" in sys.argv:
        print()
        print(format_targets(check_targets(with_kafka_python=kp)))


def format_racks(sizes: List[Tuple[int, int, int]], progress: bool = False) -> str:
    """Rack-aware scenarios (KIP-881; equal subscriptions): core, leader path and peak RSS.
    With ``progress`` each line is printed as it is measured."""
    out = [f"| {'scenario (3 racks, rf 2)':28} | {'core s':>9} | {'api s':>9} | {'api RSS MB':>10} |",
           "|---|---:|---:|---:|"]
    if progress:
        print("\n".join(out), flush=True)
    for size in sizes:
        for event in EVENTS:
            arr = build_arrays(*size, "equal", event, racks=True)
            core = _median_time(run_core, (arr,), 3)
            members, prack = build_members(arr, event), build_partition_racks(arr)
            parts = {topic_name(t): size[2] for t in range(size[1])}
            api = _median_time(run_api, (members, parts, prack), 3)
            rss = measure_rss("api", *size, "equal", event, racks=True)["peak_rss_mb"] if MEMORY else ""
            out.append(f"| {_ids(size) + ' ' + event:28} | {core:9.4f} | {api:9.4f} | {rss:>10} |")
            if progress:
                print(out[-1], flush=True)
    return "\n".join(out)


if __name__ == "__main__":
    main()
