"""Build tests/data/dumps/kraft/00000000000000000000.log: a small but varied
``__cluster_metadata`` segment whose record values are bytes Kafka 4.1.1's own classes
wrote (the shared conformance vectors: every metadata record type at every version, the
``messages.jsonl`` bodies framed as MetadataRecordSerde frames them, and the
``metadata_frames.jsonl`` frames as Kafka wrote them), in batches of every shape the dump
prints differently: plain, transactional with sequences, LogAppendTime, gzip-compressed,
records with headers, a KRaft control batch, records the decoder refuses (unknown type,
frame version 0, bad body), and a torn batch at the end.

Then Kafka's own tool prints the oracle (needs the 4.1.1 jars; run by hand, not in CI):

    python tests/data/dumps/gen/make_kraft_log.py /work/shared/vectors/kafka-4.1.1 tests/data/dumps/kraft
    java -cp "/work/kafka-jars/*" kafka.tools.DumpLogSegments --cluster-metadata-decoder \\
        --files tests/data/dumps/kraft/00000000000000000000.log > kafka-dump-log.txt
    gzip -9n kafka-dump-log.txt   (-> tests/data/dumps/kraft/kafka-dump-log.txt.gz)

kafka-dump-log-badcrc.txt.gz is the same for a copy of the log with byte 200 flipped (a
batch whose CRC fails; tests/test_dumps_java.py makes the copy), dumped under the same name.
"""
from __future__ import annotations

import json
import os
import sys
from typing import List, Optional, Tuple

from kcodec import encode, log


def _uvarint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _frame(api_key: int, version: int, body: bytes) -> bytes:
    return b"\x01" + _uvarint(api_key) + _uvarint(version) + body


def values(vectors: str) -> List[bytes]:
    out = []
    with open(os.path.join(vectors, "messages.jsonl"), encoding="utf-8") as f:
        for line in f:
            v = json.loads(line)
            if v["schema_type"] == "metadata" and v.get("api_key") is not None:
                out.append(_frame(v["api_key"], v["version"], bytes.fromhex(v["hex"])))
    with open(os.path.join(vectors, "metadata_frames.jsonl"), encoding="utf-8") as f:
        for line in f:
            out.append(bytes.fromhex(json.loads(line)["hex"]))
    return out


def main(vectors: str, out_dir: str) -> str:
    vals = values(vectors)
    ts = 1_795_000_000_000
    offset = 0
    segs: List[bytes] = []

    def add(recs: List[Tuple[Optional[bytes], Optional[bytes]]], **kw) -> None:
        nonlocal offset
        segs.append(log.encode_batch(recs, base_offset=offset, base_timestamp=ts + offset,
                                     partition_leader_epoch=3, **kw))
        offset += len(recs)

    # a control batch first, as the log starts after an election (LeaderChange)
    lc = encode("LeaderChangeMessage", {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}],
                                        "grantingVoters": [{"voterId": 1}]}, 0)
    add([(b"\x00\x00\x00\x02", lc)], control=True)
    for i in range(0, len(vals), 7):
        chunk = [(None, v) for v in vals[i:i + 7]]
        k = (i // 7) % 6
        if k == 1:
            add(chunk, transactional=True, producer_id=4242, producer_epoch=7, base_sequence=2147483645)
        elif k == 2:
            add(chunk, log_append_time=True)
        elif k == 3:
            add(chunk, compression=1)            # gzip
        elif k == 4:
            add(chunk, headers=[[("h1", b"x"), ("h2", None)]] + [[]] * (len(chunk) - 1))
        else:
            add(chunk)
    # records the decoder refuses: unknown type, frame version 0, a body cut short,
    # a null value, and a version newer than 4.1.1 knows
    add([(None, _frame(250, 0, b"\x00")), (None, b"\x00\x03\x00\x00"),
         (None, _frame(2, 0, b"\x00\x05ab")), (None, None),
         (None, _frame(12, 99, bytes.fromhex("0000")))])
    # a torn batch: the end of a crashed write
    torn = log.encode_batch([(None, vals[0])], base_offset=offset, base_timestamp=ts)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "00000000000000000000.log")
    with open(path, "wb") as f:
        f.write(b"".join(segs) + torn[:len(torn) // 2])
    return path


if __name__ == "__main__":
    print(main(sys.argv[1], sys.argv[2]))
