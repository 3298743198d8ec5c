"""Generate a synthetic ``__cluster_metadata`` log for benchmarks.

Shaped like a big KRaft cluster's metadata log at 4.1-IV1: the bootstrap transaction
(FeatureLevelRecords), broker and controller registrations, then ``--topics`` topics with
``--partitions`` partitions in total (TopicRecord + PartitionRecord v2, 3 replicas with
directories), topic configs, then ``--changes`` PartitionChangeRecords (ISR shrinks and
expands, leader moves, ELR updates) interleaved with NoOpRecords, as a rolling restart
would write them.

    python bench/gen_kraft_log.py OUT_DIR --topics 100000 --partitions 1000000 --changes 1000000
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import uuid
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from kcodec.kraft import encode_record  # noqa: E402
from kcodec import log  # noqa: E402


def generate(out_dir: str, topics: int = 100_000, partitions: int = 1_000_000,
             changes: int = 1_000_000, brokers: int = 12, batch: int = 1000, seed: int = 1) -> str:
    rnd = random.Random(seed)
    part_dir = os.path.join(out_dir, "__cluster_metadata-0")
    os.makedirs(part_dir, exist_ok=True)
    path = os.path.join(part_dir, "00000000000000000000.log")
    dirs = [uuid.UUID(int=rnd.getrandbits(128)) for _ in range(brokers)]
    per_topic = [partitions // topics + (1 if i < partitions % topics else 0) for i in range(topics)]
    state: List[Tuple[uuid.UUID, int, List[int]]] = []
    offset = 0
    ts = 1_795_000_000_000
    pending: List[Tuple[None, bytes]] = []

    with open(path, "wb") as f:
        def flush() -> None:
            nonlocal offset, pending
            if pending:
                f.write(log.encode_batch(pending, base_offset=offset, base_timestamp=ts,
                                         partition_leader_epoch=1))
                offset += len(pending)
                pending = []

        def add(name: str, value: dict, version: int = 0) -> None:
            pending.append((None, encode_record(name, value, version)))
            if len(pending) >= batch:
                flush()

        add("BeginTransactionRecord", {"name": "Bootstrap records"})
        for name, level in (("metadata.version", 27), ("eligible.leader.replicas.version", 1),
                            ("group.version", 1), ("transaction.version", 2)):
            add("FeatureLevelRecord", {"name": name, "featureLevel": level})
        add("EndTransactionRecord", {})
        feats = [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": 27},
                 {"name": "group.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}]
        for b in range(brokers):
            add("RegisterBrokerRecord", {
                "brokerId": b, "incarnationId": uuid.UUID(int=b + 1), "brokerEpoch": 10 + b,
                "endPoints": [{"name": "PLAINTEXT", "host": f"broker-{b}", "port": 9092,
                               "securityProtocol": 0}],
                "features": feats, "rack": f"rack-{b % 3}", "fenced": False,
                "logDirs": [dirs[b]]}, 3)
        flush()
        for t in range(topics):
            tid = uuid.UUID(int=rnd.getrandbits(128))
            add("TopicRecord", {"name": f"topic-{t:06d}", "topicId": tid})
            for p in range(per_topic[t]):
                reps = rnd.sample(range(brokers), 3)
                add("PartitionRecord", {
                    "partitionId": p, "topicId": tid, "replicas": reps, "isr": reps,
                    "leader": reps[0], "leaderEpoch": 0, "partitionEpoch": 0,
                    "directories": [dirs[r] for r in reps]}, 2)
                state.append((tid, p, reps))
            if t % 50 == 0:
                add("ConfigRecord", {"resourceType": 2, "resourceName": f"topic-{t:06d}",
                                     "name": "retention.ms", "value": "604800000"})
        flush()
        for i in range(changes):
            tid, p, reps = state[rnd.randrange(len(state))]
            k = rnd.random()
            if k < 0.45:
                v = {"partitionId": p, "topicId": tid, "isr": reps[: rnd.randint(1, 2)]}
            elif k < 0.8:
                v = {"partitionId": p, "topicId": tid, "isr": reps}
            elif k < 0.95:
                v = {"partitionId": p, "topicId": tid, "leader": rnd.choice(reps), "isr": reps}
            else:
                v = {"partitionId": p, "topicId": tid, "isr": [], "leader": -1,
                     "eligibleLeaderReplicas": reps, "lastKnownElr": [reps[0]]}
            add("PartitionChangeRecord", v, 2)
            if i % 5000 == 0:
                ts += 500
                add("NoOpRecord", {})
        flush()
    return out_dir


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--topics", type=int, default=100_000)
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--changes", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    generate(a.out_dir, a.topics, a.partitions, a.changes, seed=a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
