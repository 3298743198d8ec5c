"""Generate a synthetic ``__consumer_offsets`` partition log for benchmarks.

Shaped like a busy cluster's offsets topic: consumer groups committing offsets of many
partitions in batches (OffsetCommitValue v3 and flexible v4), classic rebalances
(GroupMetadataValue v3 with consumer-protocol subscriptions/assignments), KIP-848 records,
tombstones, transactional offset commits with COMMIT/ABORT markers, and optionally
compressed batches.  Records are built from pre-encoded templates so gigabytes come out
in reasonable time.

    python bench/gen_offsets_log.py OUT_DIR --size-mb 1024 [--compression zstd]

The log is split into 1 GiB segments like a broker's (``--segment-mb``).
"""
from __future__ import annotations

import argparse
import os
import random
import struct
import sys
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import kcodec  # noqa: E402
from kcodec.log import encode_batch, encode_control_batch  # noqa: E402
from kcodec.log._records import crc32c  # noqa: E402  (the C one; kcodec.log does not re-export it)

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


def _key(t: int, name: str, value: dict) -> bytes:
    return struct.pack(">h", t) + kcodec.encode(name, value, 0)


def _sub(topics: List[str]) -> bytes:
    return struct.pack(">h", 3) + kcodec.encode("ConsumerProtocolSubscription",
                                                {"topics": topics, "userData": b"",
                                                 "generationId": 1}, 3)


def _asg(tps: List[Tuple[str, List[int]]]) -> bytes:
    return struct.pack(">h", 3) + kcodec.encode("ConsumerProtocolAssignment", {
        "assignedPartitions": [{"topic": t, "partitions": ps} for t, ps in tps], "userData": b""}, 3)


class Gen:
    def __init__(self, seed: int = 1, groups: int = 200, topics: int = 20, partitions: int = 12,
                 compression: int = 0, group_prefix: str = "") -> None:
        self.rnd = random.Random(seed)
        self.compression = compression
        # group_prefix: a namespace per __consumer_offsets partition (a broker keeps each
        # group in one partition only)
        self.groups = [f"{group_prefix}group-{i:05d}" for i in range(groups)]
        self.topics = [f"topic-{i:03d}" for i in range(topics)]
        self.partitions = partitions
        self.offset = 0
        self.ts = 1_700_000_000_000
        self.committed = {}
        # pre-encoded keys: (group, topic, partition) -> bytes
        self.keys = {}
        for g in self.groups:
            for t in self.rnd.sample(self.topics, 3):
                for p in range(partitions):
                    self.keys[(g, t, p)] = _key(1, "OffsetCommitKey", {"group": g, "topic": t, "partition": p})
        self.by_group = {}
        for (g, t, p) in self.keys:
            self.by_group.setdefault(g, []).append((t, p))
        self.gm_keys = {g: _key(2, "GroupMetadataKey", {"group": g}) for g in self.groups}
        self.generation = {g: 0 for g in self.groups}

    def _oc_value(self, off: int, v4: bool) -> bytes:
        if v4:   # flexible: compact string metadata, empty tagged section
            return struct.pack(">hqi", 4, off, 5) + b"\x01" + struct.pack(">q", self.ts) + b"\x00"
        return struct.pack(">hqi", 3, off, 5) + b"\x00\x00" + struct.pack(">q", self.ts)

    def commit_batch(self, g: str, txn_pid: Optional[int] = None) -> bytes:
        tps = self.by_group[g]
        recs = []
        v4 = self.rnd.random() < 0.5
        for tp in tps:
            off = self.committed.get((g,) + tp, 0) + self.rnd.randint(1, 500)
            self.committed[(g,) + tp] = off
            recs.append((self.keys[(g,) + tp], self._oc_value(off, v4)))
        kw = {}
        if txn_pid is not None:
            kw = dict(transactional=True, producer_id=txn_pid, producer_epoch=0)
        b = encode_batch(recs, base_offset=self.offset, base_timestamp=self.ts,
                         compression=self.compression, **kw)
        self.offset += len(recs)
        return b

    def rebalance(self, g: str) -> bytes:
        self.generation[g] += 1
        tps = self.by_group[g]
        topics = sorted({t for t, _ in tps})
        members = []
        n = self.rnd.randint(1, 4)
        for i in range(n):
            mine = {}
            for j, (t, p) in enumerate(tps):
                if j % n == i:
                    mine.setdefault(t, []).append(p)
            mid = f"{g}-c{i}-{self.rnd.getrandbits(64):016x}"
            members.append({"memberId": mid, "groupInstanceId": None, "clientId": f"{g}-c{i}",
                            "clientHost": "/10.0.0.1", "rebalanceTimeout": 300000,
                            "sessionTimeout": 45000, "subscription": _sub(topics),
                            "assignment": _asg(sorted(mine.items()))})
        v = struct.pack(">h", 3) + kcodec.encode("GroupMetadataValue", {
            "protocolType": "consumer", "generation": self.generation[g], "protocol": "range",
            "leader": members[0]["memberId"], "currentStateTimestamp": self.ts,
            "members": members}, 3)
        b = encode_batch([(self.gm_keys[g], v)], base_offset=self.offset, base_timestamp=self.ts,
                         compression=self.compression)
        self.offset += 1
        return b

    def next_chunk(self) -> bytes:
        self.ts += self.rnd.randint(1, 50)
        g = self.rnd.choice(self.groups)
        r = self.rnd.random()
        if r < 0.03:
            return self.rebalance(g)
        if r < 0.04:
            pid = self.rnd.randint(1000, 2000)
            out = self.commit_batch(g, txn_pid=pid)
            out += encode_control_batch(self.rnd.random() < 0.7, base_offset=self.offset,
                                        producer_id=pid, producer_epoch=0, timestamp=self.ts)
            self.offset += 1
            return out
        if r < 0.045:
            t, p = self.rnd.choice(self.by_group[g])
            b = encode_batch([(self.keys[(g, t, p)], None)], base_offset=self.offset,
                             base_timestamp=self.ts, compression=self.compression)
            self.offset += 1
            return b
        return self.commit_batch(g)


def _shift(chunk: bytes, d_off: int, d_ts: int) -> bytes:
    """``chunk`` (whole v2 batches) with every batch's base offset moved by ``d_off`` and
    its base/max timestamps by ``d_ts``; the CRC (over attributes onward) recomputed."""
    out = bytearray(chunk)
    p = 0
    while p < len(out):
        base, blen = struct.unpack_from(">qi", out, p)
        struct.pack_into(">q", out, p, base + d_off)
        t0, t1 = struct.unpack_from(">qq", out, p + 27)
        struct.pack_into(">qq", out, p + 27, t0 + d_ts, t1 + d_ts)
        struct.pack_into(">I", out, p + 17, crc32c(bytes(out[p + 21:p + 12 + blen])))
        p += 12 + blen
    return bytes(out)


def generate(out_dir: str, size_bytes: int, *, compression: int = 0, segment_bytes: int = 1 << 30,
             seed: int = 1, partition: int = 0, group_prefix: str = "",
             fresh_bytes: int = 64 << 20, index_interval: int = 4096) -> List[str]:
    """Write about ``size_bytes`` of log into ``out_dir/__consumer_offsets-<partition>``
    (segments of ``segment_bytes``, each with its sparse ``.index`` as a broker writes
    it: an entry every ``index_interval`` bytes); returns the ``.log`` files.

    The first ``fresh_bytes`` are generated record by record; after that the same
    batches are written again with their offsets and timestamps moved on (the history
    repeats, as far as commits go: a bench input, generated in seconds per GiB)."""
    part = os.path.join(out_dir, f"__consumer_offsets-{partition}")
    os.makedirs(part, exist_ok=True)
    gen = Gen(seed=seed, compression=compression, group_prefix=group_prefix)
    files: List[str] = []
    f = idx = None
    written = seg_written = since_index = 0
    seg_base = 0
    block: List[Tuple[bytes, int]] = []        # (chunk, its first offset) of the fresh part
    block_bytes = 0
    rep = 0
    ts0 = gen.ts
    span_off = span_ts = 0
    i = -1                                      # -1: the fresh part is still being written
    while written < size_bytes:
        if block_bytes < fresh_bytes or not block:
            first = gen.offset
            data = gen.next_chunk()
            block.append((data, first))
            block_bytes += len(data)
            first_off, last_off = first, gen.offset - 1
        else:
            if i in (-1, len(block)):
                if rep == 0:
                    span_off, span_ts = gen.offset, gen.ts - ts0 + 1000
                rep += 1
                i = 0
            chunk, first = block[i]
            i += 1
            data = _shift(chunk, rep * span_off, rep * span_ts)
            first_off = first + rep * span_off
            nxt = block[i][1] if i < len(block) else span_off
            last_off = nxt - 1 + rep * span_off
        if f is None or seg_written >= segment_bytes:
            if f is not None:
                f.close()
                idx.close()
            seg_base = first_off
            path = os.path.join(part, f"{seg_base:020d}.log")
            files.append(path)
            f = open(path, "wb")
            idx = open(path[:-4] + ".index", "wb")
            seg_written = since_index = 0
        if since_index > index_interval:       # Kafka: after index.interval.bytes, the next append
            idx.write(struct.pack(">ii", last_off - seg_base, seg_written))
            since_index = 0
        f.write(data)
        written += len(data)
        seg_written += len(data)
        since_index += len(data)
    if f is not None:
        f.close()
        idx.close()
    return files


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--size-mb", type=float, default=64)
    ap.add_argument("--segment-mb", type=float, default=1024)
    ap.add_argument("--compression", choices=sorted(CODECS), default="none")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fresh-mb", type=float, default=64,
                    help="MiB per partition generated record by record; the rest repeats them with "
                         "offsets and timestamps moved on")
    ap.add_argument("--partitions", type=int, default=1,
                    help="__consumer_offsets partitions to write (--size-mb is split over them); "
                         "partition i has seed SEED+i and its own groups (p<i>-group-*), as a broker "
                         "keeps each group in one partition")
    a = ap.parse_args(argv)
    files: List[str] = []
    for i in range(a.partitions):
        files += generate(a.out_dir, int(a.size_mb * (1 << 20)) // a.partitions, compression=CODECS[a.compression],
                          segment_bytes=int(a.segment_mb * (1 << 20)), seed=a.seed + i, partition=i,
                          group_prefix=f"p{i}-" if a.partitions > 1 else "",
                          fresh_bytes=int(a.fresh_mb * (1 << 20)))
    print("\n".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
