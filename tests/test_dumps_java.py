"""The dumps against Kafka's own output, and the C writers against the reference path.

* ``kcodec kraft dump`` on tests/data/dumps/kraft (a metadata segment whose values Kafka's
  classes wrote, in batches of every shape: see gen/make_kraft_log.py) equals the text
  Kafka 4.1.1's ``DumpLogSegments --cluster-metadata-decoder`` printed for it, byte for
  byte, and so does the reference path (kcodec.kraft.dump_lines);
* the tape writer (csrc/kc_tjson.c, compact style) prints every vector Kafka's JsonConverter wrote as
  Kafka did, for every message and version of the shared corpus;
* the fixture log's dump equals kafka-dump-log.txt through the columnar writer too,
  with buffers small enough that every line takes the resume path.
"""
from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kcodec
from kcodec.kraft import dump_lines
from kcodec.kraft.dump import dump_file, kjson_plan
from kcodec.kraft.records import _jackson

from ._shared import fixtures_dir, read_jsonl, vectors_dir

DATA = Path(__file__).parent / "data" / "dumps"
KRAFT_LOG = DATA / "kraft" / "00000000000000000000.log"
META = fixtures_dir() / "cluster_metadata"
_jsonl = pytest.importorskip("kcodec.log._jsonl")


def _kafka_text() -> bytes:
    return gzip.decompress((DATA / "kraft" / "kafka-dump-log.txt.gz").read_bytes())


def test_kraft_dump_equals_kafka_dump_log():
    want = _kafka_text()
    got = b"".join(dump_file(KRAFT_LOG, display_name=str(KRAFT_LOG.name)))
    # Kafka prints the path it was given: the generator ran it on the bare file name
    assert got == want


def test_kraft_dump_reference_path_equals_kafka_dump_log():
    want = _kafka_text().decode()
    got = "".join(line + "\n" for line in dump_lines(KRAFT_LOG, display_name=KRAFT_LOG.name))
    assert got == want


@pytest.mark.parametrize("block", [64, 700, 1 << 22])
def test_kraft_dump_resumes_across_small_buffers(block):
    want = _kafka_text()
    assert b"".join(dump_file(KRAFT_LOG, display_name=KRAFT_LOG.name, block=block)) == want


def test_kraft_dump_cli_writes_kafka_text(tmp_path):
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(KRAFT_LOG.read_bytes())
    r = subprocess.run([sys.executable, "-m", "kcodec", "kraft", "dump", str(seg)],
                       capture_output=True)
    # the log ends in a torn batch: printed as Kafka prints it, and the run says so (exit 3)
    assert r.returncode == 3 and b"corrupt batch" in r.stderr
    assert r.stdout == _kafka_text().replace(b"Dumping 00000000000000000000.log",
                                             b"Dumping " + str(seg).encode(), 1)


@pytest.mark.skipif(not META.exists(), reason="no cluster_metadata fixture")
def test_fixture_dump_columnar_equals_kafka_dump_log():
    want = (META / "kafka-dump-log.txt").read_bytes()
    seg = META / "segments"
    got = b"".join(dump_file(seg / "bootstrap.checkpoint", display_name="bootstrap.checkpoint", block=300))
    got += b"".join(dump_file(seg / "__cluster_metadata-0" / "00000000000000000000.log",
                              display_name="__cluster_metadata-0/00000000000000000000.log", block=300))
    assert got == want


def _vectors():
    return [v for v in read_jsonl(vectors_dir() / "messages.jsonl")]


def test_tape_writer_prints_kafka_json_for_every_vector():
    vecs = _vectors()
    if not vecs:
        pytest.skip("no shared vectors")
    checked = skipped = 0
    writers = {}
    for v in vecs:
        key = (v["schema"], v["version"])
        if key not in writers:
            prog = kcodec.program(v["schema"], v["version"])
            try:
                plan, blob = kjson_plan(prog)
                writers[key] = _jsonl.KafkaJson(np.frombuffer(prog.code, np.int32), plan, blob)
            except ValueError:
                writers[key] = None      # float64 fields, defaults the writer does not compare
        w = writers[key]
        if w is None:
            skipped += 1
            continue
        # Kafka's converter text, as Jackson escapes control characters (\u001F)
        want = _jackson(json.dumps(v["json"], separators=(",", ":"), ensure_ascii=False)).encode()
        assert w.dumps(bytes.fromhex(v["hex"])) == want, v["id"]
        checked += 1
    assert checked > 0.9 * len(vecs), (checked, skipped)


def test_tape_writer_refuses_a_plan_of_another_program():
    a = kcodec.program("PartitionRecord", 0)
    b = kcodec.program("TopicRecord", 0)
    plan, blob = kjson_plan(a)
    with pytest.raises(ValueError):
        _jsonl.KafkaJson(np.frombuffer(b.code, np.int32), plan, blob)


def test_kraft_dump_prints_a_bad_crc_batch_as_kafka_does(tmp_path):
    """Kafka's tool prints a batch whose CRC fails (isvalid: false) with its records: so do
    we with salvage (the oracle: the committed log with byte 200 flipped, dumped by
    DumpLogSegments); by default the batch line stands alone."""
    data = bytearray(KRAFT_LOG.read_bytes())
    data[200] ^= 0x01
    seg = tmp_path / KRAFT_LOG.name
    seg.write_bytes(bytes(data))
    want = gzip.decompress((DATA / "kraft" / "kafka-dump-log-badcrc.txt.gz").read_bytes())
    assert b"isvalid: false" in want
    assert b"".join(dump_file(seg, display_name=KRAFT_LOG.name, salvage=True)) == want
    assert "".join(line + "\n" for line in dump_lines(seg, display_name=KRAFT_LOG.name,
                                                       salvage=True)).encode() == want
    errors = []
    plain = b"".join(dump_file(seg, display_name=KRAFT_LOG.name, errors=errors))
    assert errors[0].reason == "bad_crc" and b"isvalid: false" in plain and len(plain) < len(want)
