"""Streams leader speed and memory at the sizes of Kafka's StreamsAssignmentScaleTest.

    python3 -m pytest bench/bench_streams.py --benchmark-only -n 0
    python3 bench/bench_streams.py          # prints the table of bench/results/streams.md

HighAvailabilityTaskAssignor sizes (partitions, clients, threads per client, standbys), one
source topic, one stateful task per partition, changelog end offsets 100,000:
(6000, 2, 1, 1), (1000, 1000, 1, 1), (1000, 100, 1, 50), (1000, 10, 1000, 1); the
LegacyStickyTaskAssignor and FallbackPriorTaskAssignor sizes of the same test: (2000, 2, 1, 1),
(1000, 1000, 1, 1), (1000, 100, 1, 20), (1000, 10, 1000, 1).  Kafka's test runs without rack
awareness; the rack-aware cases (KIP-925) add ``rack.aware.assignment.strategy`` at 200
partitions x 20 clients with a standby: clients on 3 racks (client c on rack c % 3), partition p
replicated on racks p % 3 and (p + 1) % 3, its changelog on (p + 2) % 3.
``first``: every member subscribes without state; ``second``: each member's subscription
carries the first assignment (its active tasks as running, standbys with offset sum 0, its
partitions as owned), as the Kafka test does.  Timed: subscription bytes in (decode) to every
member's ConsumerProtocolAssignment bytes out (encode).  Memory: peak RSS of a fresh process
running the round, and its excess over building the inputs (``delta``).
"""
from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
import uuid
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from kcodec.consumer import Subscription, TopicPartition, decode_assignment  # noqa: E402
from kcodec.consumer import encode_subscription as encode_consumer_subscription  # noqa: E402
from kcodec.streams import LATEST_OFFSET, SubscriptionInfo, decode_assignment as decode_info  # noqa: E402
from kcodec.streams import encode_subscription  # noqa: E402
from kcodec.streams.assignors import AssignmentConfigs  # noqa: E402
from kcodec.streams.leader import Topology, assign_group  # noqa: E402

SIZES = [(6000, 2, 1, 1), (1000, 1000, 1, 1), (1000, 100, 1, 50), (1000, 10, 1000, 1)]
STICKY_SIZES = [(2000, 2, 1, 1), (1000, 1000, 1, 1), (1000, 100, 1, 20), (1000, 10, 1000, 1)]
CASES = [("ha", s) for s in SIZES] + [(a, s) for a in ("sticky", "fallback") for s in STICKY_SIZES]
RACK_SIZE = (200, 20, 1, 1)
# (assignor, size, rack.aware.assignment.strategy)
RACK_CASES = [("ha", RACK_SIZE, "min_traffic"), ("ha", RACK_SIZE, "balance_subtopology"),
              ("sticky", RACK_SIZE, "min_traffic")]
ALL_CASES = [(a, s, "none") for a, s in CASES] + RACK_CASES
TOPIC = "source"
RACKS = 3


def scenario(partitions: int, clients: int, threads: int, standbys: int, strategy: str = "none"):
    topo = Topology.single_topic(TOPIC, partitions, end_offset_sum=100_000)
    cfg = AssignmentConfigs(num_standby_replicas=standbys, rack_aware_assignment_strategy=strategy)
    if strategy != "none":
        topo.changelogs = {t: [TopicPartition("app-store-changelog", t.partition)] for t in topo.partitions}
        topo.replica_racks = {
            **{TopicPartition(TOPIC, p): [f"rack{p % RACKS}", f"rack{(p + 1) % RACKS}"] for p in range(partitions)},
            **{TopicPartition("app-store-changelog", p): [f"rack{(p + 2) % RACKS}"] for p in range(partitions)}}
    members: Dict[str, Tuple[uuid.UUID, str, Optional[str]]] = {}
    for c in range(clients):
        pid = uuid.UUID(int=c + 1)
        for i in range(threads):
            members[f"consumer-{c:05d}-{i:05d}"] = (pid, f"host-{c}:8080",
                                                    f"rack{c % RACKS}" if strategy != "none" else None)
    return topo, cfg, members


def first_subscriptions(members) -> Dict[str, bytes]:
    return {m: encode_consumer_subscription(Subscription(
        [TOPIC], encode_subscription(SubscriptionInfo(11, 11, pid, ep)), rack_id=rack))
        for m, (pid, ep, rack) in members.items()}


def second_subscriptions(members, assignments) -> Dict[str, bytes]:
    out = {}
    for m, data in assignments:      # one at a time: a round's assignments need not all be held
        pid, ep, rack = members[m]
        a = decode_assignment(data)
        info = decode_info(a.user_data)
        sums = {t: 0 for t in info.standby_tasks}
        sums.update({t: LATEST_OFFSET for t in info.active_tasks})
        ud = encode_subscription(SubscriptionInfo(11, 11, pid, ep, sums))
        out[m] = encode_consumer_subscription(Subscription([TOPIC], ud, list(a.partitions), rack_id=rack))
    return out


def drain_round(subs: Dict[str, bytes], topo, cfg, assignor: str = "ha") -> int:
    """The round as a leader sends it: assignments encoded one at a time and handed on."""
    res = assign_group(subs, topo, cfg, assignor=assignor)
    return sum(len(b) for _, b in res.encoded())


def prepare(size, which: str, assignor: str = "ha", strategy: str = "none"):
    topo, cfg, members = scenario(*size, strategy=strategy)
    subs = first_subscriptions(members)
    if which == "second":
        subs = second_subscriptions(members, assign_group(subs, topo, cfg, assignor=assignor).encoded())
    return topo, cfg, subs


def _child(size, which: str, assignor: str, strategy: str) -> None:
    topo, cfg, subs = prepare(size, which, assignor, strategy)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0, c0 = time.perf_counter(), time.process_time()
    nbytes = drain_round(subs, topo, cfg, assignor)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{dt:.6f} {cpu:.6f} {peak / 1024:.1f} {(peak - base) / 1024:.1f} {nbytes} "
          f"{sum(len(b) for b in subs.values())}")


def measure(size, which: str, assignor: str = "ha", strategy: str = "none") -> Dict[str, float]:
    """Time and memory of one round in a fresh process."""
    r = subprocess.run([sys.executable, __file__, "--child", which, assignor, strategy] + [str(x) for x in size],
                       capture_output=True, text=True, check=True)
    dt, cpu, peak, delta, out_b, in_b = r.stdout.split()
    return {"seconds": float(dt), "cpu_seconds": float(cpu), "peak_rss_mb": float(peak), "delta_rss_mb": float(delta),
            "assignment_bytes": int(out_b), "subscription_bytes": int(in_b)}


try:
    import pytest

    @pytest.mark.parametrize("which", ["first", "second"])
    @pytest.mark.parametrize("case", ALL_CASES,
                             ids=lambda c: c[0] + "-" + "x".join(map(str, c[1])) + ("" if c[2] == "none" else "-" + c[2]))
    def test_leader(benchmark, case, which):
        assignor, size, strategy = case
        topo, cfg, subs = prepare(size, which, assignor, strategy)
        benchmark.extra_info.update(dict(zip(("partitions", "clients", "threads", "standbys"), size)))
        benchmark.extra_info["assignor"] = assignor
        benchmark.extra_info["rack_aware_assignment_strategy"] = strategy
        if os.environ.get("KCODEC_BENCH_MEMORY", "1") != "0":
            benchmark.extra_info.update(measure(size, which, assignor, strategy))
        benchmark.pedantic(drain_round, args=(subs, topo, cfg, assignor), rounds=3, iterations=1)
except ImportError:  # pragma: no cover
    pass


def main(cases=None) -> None:
    # CPU time next to wall time: on a shared machine the wall clock also counts waiting
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| assignor | partitions x clients x threads, standbys | round | time (s) | CPU (s) | peak RSS (MB) "
          "| delta RSS (MB) | subscription bytes in | assignment bytes out |")
    print("|---|---|---|---|---|---|---|---|---|")
    for assignor, size, strategy in cases or ALL_CASES:
        name = assignor if strategy == "none" else f"{assignor} {strategy}"
        for which in ("first", "second"):
            m = measure(size, which, assignor, strategy)
            print(f"| {name} | {size[0]} x {size[1]} x {size[2]}, {size[3]} | {which} | {m['seconds']:.3f} "
                  f"| {m['cpu_seconds']:.3f} "
                  f"| {m['peak_rss_mb']:.0f} | {m['delta_rss_mb']:.0f} | {m['subscription_bytes']:,} "
                  f"| {m['assignment_bytes']:,} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(tuple(int(x) for x in sys.argv[5:9]), sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1:] == ["--racks"]:      # only the rack-aware cases
        main(RACK_CASES)
    else:
        main()
