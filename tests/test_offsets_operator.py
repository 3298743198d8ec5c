"""Operator-grade reading of __consumer_offsets: corrupt data never becomes a result with a
success signal, and groups the coordinator converted are said to be so.

Every batch of every fixture segment is corrupted in turn (one bit flipped in its records,
its CRC left as it was): the batch must contribute nothing to group state, both folds must
agree, the CLI must say so with a non-zero exit, and a downgrade verdict must be "unknown".
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kcodec import log
from kcodec.errors import CorruptRecordError
from kcodec.offsets import check_downgrade, cli as ocli
from kcodec.offsets.state import fold_log

from ._shared import fixtures_dir, require

SEGMENTS = fixtures_dir() / "consumer_offsets" / "segments"


def _segments():
    if not SEGMENTS.exists():
        return []
    return sorted(log.log_files(str(SEGMENTS)))


def _flipped(data: bytes, batch) -> bytes:
    bad = bytearray(data)
    bad[batch.position + 61 + (batch.size - 61) // 2] ^= 0x10     # inside the records
    return bytes(bad)


def _without(data: bytes, batch) -> bytes:
    return data[:batch.position] + data[batch.position + batch.size:]


def _comparable(st):
    return {g: (s.state, s.generation, s.protocol, sorted(s.members), sorted(s.offsets.items()))
            for g, s in st.groups.items()}


@pytest.mark.parametrize("path", _segments(), ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_a_corrupt_batch_contributes_nothing(path):
    data = open(path, "rb").read()
    batches = [b for b in log.iter_batches(data) if b.size > 61 and not b.is_control]
    assert batches
    for b in batches:
        bad = _flipped(data, b)
        fast, slow = fold_log(bad), fold_log(bad, fast=False)
        assert fast.errors and slow.errors and len(fast.errors) == len(slow.errors) == 1
        assert "bad_crc" in fast.errors[0]
        expected = _comparable(fold_log(_without(data, b)))
        assert _comparable(fast) == _comparable(slow) == expected, b.position
        # every other (CRC-valid) batch is still read
        assert [x.position for x in log.iter_batches(bad) if x.error is None] == \
            [x.position for x in log.iter_batches(data) if x.position != b.position]
        with pytest.raises(CorruptRecordError):
            fold_log(bad, errors="raise")
        with pytest.raises(CorruptRecordError):
            fold_log(bad, fast=False, errors="raise")


def _run(argv):
    import io
    from contextlib import redirect_stdout
    buf = io.StringIO()
    with redirect_stdout(buf):
        from kcodec import cli
        rc = cli.main(argv)
    return rc, buf.getvalue()


def _corrupt_copy(tmp_path, cut: bool = False):
    src = require(SEGMENTS)
    biggest = max(_segments(), key=os.path.getsize)
    data = open(biggest, "rb").read()
    b = [x for x in log.iter_batches(data) if x.size > 61][-1]
    bad = data[:b.position + b.size // 2] if cut else _flipped(data, b)
    d = tmp_path / os.path.basename(os.path.dirname(biggest))
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(bad)
    del src
    return d


@pytest.mark.parametrize("cut", [False, True], ids=["bit-flip", "cut-mid-batch"])
def test_cli_never_says_safe_about_a_log_it_could_not_read(tmp_path, cut):
    d = _corrupt_copy(tmp_path, cut)
    rc, out = _run(["offsets", "check-downgrade", "--to", "4.1", str(d)])
    assert rc == ocli.EXIT_CORRUPT and "UNKNOWN" in out and not out.startswith("OK")
    assert check_downgrade(str(d), "4.1").verdict == "unknown"
    assert not check_downgrade(str(d), "4.1").safe
    rc, out = _run(["offsets", "groups", str(d)])
    assert rc == ocli.EXIT_CORRUPT and "not read" in out
    rc, out = _run(["offsets", "groups", "--strict", str(d)])
    assert rc == ocli.EXIT_CORRUPT and out == ""
    rc, _ = _run(["offsets", "check-downgrade", "--strict", "--to", "4.1", str(d)])
    assert rc == ocli.EXIT_CORRUPT


def test_strict_survives_a_closed_pipe(tmp_path):
    d = _corrupt_copy(tmp_path)
    # the corrupt batch is the last one: `head -1` has long gone when it is reached
    cmd = (f"set -o pipefail; {sys.executable} -m kcodec offsets dump --strict {d} | head -1 >/dev/null")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == ocli.EXIT_CORRUPT, r.stderr
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr
    # without --strict a closed pipe just ends the dump
    cmd = f"{sys.executable} -m kcodec offsets dump {d} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr and r.stdout.strip() in ("0", str(ocli.EXIT_CORRUPT))


def _rec(rtype, key_schema, key, value_schema=None, value=None, value_version=0):
    import struct

    import kcodec
    k = struct.pack(">h", rtype) + kcodec.encode(key_schema, key, 0)
    v = None if value_schema is None else struct.pack(">h", value_version) + kcodec.encode(value_schema, value, value_version)
    return k, v


def test_a_group_converted_from_the_consumer_protocol_is_recognised(tmp_path):
    """KIP-848 online downgrade: when the last consumer-protocol member leaves, the
    coordinator tombstones the consumer group's records and writes a classic
    GroupMetadataValue whose assignments its own assignor computed."""
    g = "downgraded"
    member = {"memberId": "m1", "clientId": "c", "clientHost": "/h", "rebalanceTimeout": 1,
              "sessionTimeout": 2, "subscription": b"\x00\x00\x00\x00\x00\x00\x00\x00",
              "assignment": b"\x00\x00\x00\x00\x00\x00\x00\x00"}
    modern = [
        _rec(3, "ConsumerGroupMetadataKey", {"groupId": g}, "ConsumerGroupMetadataValue", {"epoch": 5}),
        _rec(5, "ConsumerGroupMemberMetadataKey", {"groupId": g, "memberId": "m1"},
             "ConsumerGroupMemberMetadataValue", {"clientId": "c", "clientHost": "/h"}),
    ]
    conversion = [
        _rec(5, "ConsumerGroupMemberMetadataKey", {"groupId": g, "memberId": "m1"}),
        _rec(3, "ConsumerGroupMetadataKey", {"groupId": g}),
        _rec(2, "GroupMetadataKey", {"group": g}, "GroupMetadataValue",
             {"protocolType": "consumer", "generation": 5, "protocol": "range", "leader": "m1",
              "members": [member]}, 3),
    ]
    classic = [_rec(2, "GroupMetadataKey", {"group": "plain"}, "GroupMetadataValue",
                    {"protocolType": "consumer", "generation": 1, "protocol": "range", "leader": "m1",
                     "members": [member]}, 3)]
    data = (log.encode_batch(modern, base_offset=0) + log.encode_batch(conversion, base_offset=2)
            + log.encode_batch(classic, base_offset=5))
    for fast in (True, False):
        st = fold_log(data, fast=fast)
        assert st.groups[g].type == "classic" and st.groups[g].converted_from == "consumer"
        assert st.groups["plain"].converted_from is None
    p = tmp_path / "__consumer_offsets-0"
    p.mkdir()
    (p / "00000000000000000000.log").write_bytes(data)
    rc, out = _run(["offsets", "groups", str(p)])
    assert rc == 0 and "classic (from consumer)" in out and "online downgrade" in out


# --------------------------------------------------------------------------- offsets dump

def _dump(source, columnar, **kw):
    from kcodec.offsets.dump import iter_dump
    out = []
    for pieces, _bad, _end, _err in iter_dump(source, columnar=columnar, **kw):
        out += [p if isinstance(p, str) else bytes(p).decode("utf-8") for p in pieces]
    return "".join(out)


def _mixed_log() -> bytes:
    """A log with every kind of row the dump formats: commits at each value version (v4
    with and without a topic id, a metadata string needing JSON escapes), commit
    tombstones, group metadata with consumer-protocol members (and undecodable member
    bytes), a KIP-848 record, an unknown record type, a newer value version, headers,
    transactional batches with their markers, compressed batches, LogAppendTime."""
    import uuid

    import kcodec
    from kcodec.consumer import Assignment, Subscription, encode_assignment, encode_subscription
    from kcodec.log import encode_batch, encode_control_batch
    recs = []
    for v in (0, 1, 2, 3, 4):
        value = {"offset": 10 + v, "metadata": 'q"\\\n\u00e9', "commitTimestamp": 1700000000000 + v,
                 "expireTimestamp": 1700000100000, "leaderEpoch": 7}
        recs.append(_rec(1, "OffsetCommitKey", {"group": "g\u00e9", "topic": "t", "partition": v},
                         "OffsetCommitValue", value, v))
    recs.append(_rec(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 9},
                     "OffsetCommitValue", {"offset": 1, "topicId": uuid.UUID(int=5)}, 4))
    recs.append(_rec(0, "LegacyOffsetCommitKey", {"group": "old", "topic": "t", "partition": 0},
                     "LegacyOffsetCommitValue", {"offset": 3, "metadata": "", "commitTimestamp": 5}, 0))
    recs.append(_rec(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 1}))  # tombstone
    sub = encode_subscription(Subscription(["t", "u"], b"ud", [("t", 0)]))
    asg = encode_assignment(Assignment([("t", 0), ("t", 1)], b""))
    member = {"memberId": "m1", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
              "rebalanceTimeout": 1, "sessionTimeout": 2, "subscription": sub, "assignment": asg}
    broken = dict(member, memberId="m2", subscription=b"\x00", assignment=b"\xff\xff\xff")
    recs.append(_rec(2, "GroupMetadataKey", {"group": "g"}, "GroupMetadataValue",
                     {"protocolType": "consumer", "generation": 3, "protocol": "range",
                      "leader": "m1", "currentStateTimestamp": 9, "members": [member, broken]}, 3))
    recs.append(_rec(2, "GroupMetadataKey", {"group": "g"}))
    recs.append(_rec(3, "ConsumerGroupMetadataKey", {"groupId": "new"}, "ConsumerGroupMetadataValue",
                     {"epoch": 4}, 0))
    recs.append((b"\x7f\x00" + b"unknown", b"\x00\x01\x02"))                        # unknown type
    recs.append((b"\x00\x01" + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 4}, 0),
                 b"\x00\x09" + kcodec.encode("OffsetCommitValue", {"offset": 1}, 4)))  # newer version
    recs.append((b"\x00", b"\x00\x01"))                                            # short key
    data = b""
    off = 0
    for i in range(0, len(recs), 3):
        part = recs[i:i + 3]
        data += encode_batch(part, base_offset=off, base_timestamp=1000 + i,
                             compression=(i // 3) % 3 * 2,
                             log_append_time=i % 2 == 1,
                             headers=[[("h", b"v")]] + [[]] * (len(part) - 1) if i == 3 else None)
        off += len(part)
    data += encode_batch([recs[0], recs[1]], base_offset=off, transactional=True, producer_id=5,
                         producer_epoch=1)
    off += 2
    data += encode_control_batch(True, base_offset=off, producer_id=5, producer_epoch=1)
    off += 1
    data += encode_batch([], base_offset=off)       # emptied by compaction: no line
    return data


def test_columnar_dump_prints_the_record_paths_lines_on_a_mixed_log():
    data = _mixed_log()
    ref = _dump(data, False)
    assert '"control": {"type": "COMMIT"' in ref and '"unknown": true' in ref
    assert '"newer_than_known": true' in ref and '"payload": null' in ref
    assert '"headers": [["h", "76"]]' in ref and '"assignedPartitions"' in ref
    assert ref.count("\n") == len([r for b in log.iter_batches(data) for r in b.records])
    for chunk in (1 << 20, 300, 1):
        assert _dump(data, True, chunk_size=chunk) == ref


def test_columnar_dump_prints_the_record_paths_lines_on_every_fixture_segment():
    require(SEGMENTS)
    for path in _segments():
        ref = _dump(path, False)
        assert _dump(path, True) == ref, path
        # and on a copy with a corrupt batch: its chunk is printed by the record path
        data = open(path, "rb").read()
        b = [x for x in log.iter_batches(data) if x.size > 61][0]
        bad = _flipped(data, b)
        got = _dump(bad, True)
        assert got == _dump(bad, False) and '"bad_crc"' in got


@pytest.mark.parametrize("block", [1 << 16, 7], ids=["block-64k", "block-7"])
def test_columnar_dump_on_a_generated_log(tmp_path, monkeypatch, block):
    import random

    from kcodec.offsets import dump as odump
    monkeypatch.setattr(odump, "_BLOCK", block)    # rows formatted a block at a time

    from kcodec.log import encode_batch
    rnd = random.Random(7)
    data = bytearray()
    off = 0
    for n in range(300):
        part = []
        for _ in range(rnd.randint(1, 20)):
            p = rnd.randint(0, 30)
            if rnd.random() < 0.1:
                part.append(_rec(1, "OffsetCommitKey", {"group": f"g{p % 7}", "topic": "t", "partition": p}))
            else:
                v = rnd.choice((1, 3, 3, 3, 4))
                part.append(_rec(1, "OffsetCommitKey", {"group": f"g{p % 7}", "topic": f"t{p % 3}", "partition": p},
                                 "OffsetCommitValue", {"offset": rnd.randint(0, 1 << 40), "leaderEpoch": rnd.randint(-1, 9),
                                                       "metadata": rnd.choice(["", "x", "\u2603"]),
                                                       "commitTimestamp": rnd.randint(0, 1 << 41),
                                                       "expireTimestamp": -1}, v))
        data += encode_batch(part, base_offset=off, base_timestamp=n, compression=rnd.choice((0, 0, 0, 1, 4)))
        off += len(part)
    data = bytes(data)
    ref = _dump(data, False)
    assert ref.count("\n") == off
    for chunk in (1 << 20, 4096):
        assert _dump(data, True, chunk_size=chunk) == ref
    # a batch whose offsets run backwards among compressed ones: log order still kept
    back = encode_batch([part[0]], base_offset=3, compression=1) + encode_batch([part[0]], base_offset=1)
    assert _dump(data + back, True) == _dump(data + back, False)


def test_dump_filters_and_batch_lines(tmp_path):
    data = _mixed_log()
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(data)
    rc, out = _run(["offsets", "dump", "--type", "GroupMetadata,control", str(f)])
    import json
    rows = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and rows and {r.get("type_name", "control" if "control" in r else None)
                                 for r in rows} == {"GroupMetadata", "control"}
    rc, out = _run(["offsets", "dump", "--type", "32512", str(f)])
    assert [json.loads(x)["key"]["type"] for x in out.splitlines()] == ["32512"]
    rc, out = _run(["offsets", "dump", "--from-offset", "2", "--to-offset", "5", str(f)])
    assert [json.loads(x)["offset"] for x in out.splitlines()] == [2, 3, 4, 5]
    rc, out2 = _run(["offsets", "dump", "--record-path", "--from-offset", "2", "--to-offset", "5", str(f)])
    assert out2 == out
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc, _ = _run(["offsets", "dump", "--type", "Bogus", str(f)])
    assert rc == 1 and "unknown record type 'Bogus'" in err.getvalue()   # kcodec.cli.EXIT_USAGE
    rc, out = _run(["offsets", "dump", "--batches", "--from-offset", "3", str(f)])
    lines = out.splitlines()
    assert lines[0] == f"Dumping {f}" and lines[1] == "Log starting offset: 0"
    assert lines[2].startswith("baseOffset: 3 lastOffset: 5 count: 3 ")
    assert lines[-1].startswith("baseOffset: ") and "isControl: true" in lines[-2]


def _oracle_batches():
    text = (fixtures_dir() / "consumer_offsets" / "kafka-dump-log.txt").read_text()
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("Dumping "):
            cur = line.split()[1]
            out[cur] = []
        elif line.startswith("baseOffset:"):
            out[cur].append(line)
    return out


def test_batch_lines_match_kafka_dump_log():
    require(SEGMENTS)
    oracle = _oracle_batches()
    assert oracle
    for name, want in oracle.items():
        path = SEGMENTS / name
        rc, out = _run(["offsets", "dump", "--batches", str(path)])
        assert rc == 0
        got = [x for x in out.splitlines() if x.startswith("baseOffset:")]
        assert got == want, name


def test_stdin_is_read_by_every_command(tmp_path):
    require(SEGMENTS)
    seg = str(max(_segments(), key=os.path.getsize))
    for argv in (["dump"], ["groups", "--json"], ["check-downgrade", "--to", "3.9", "--json"],
                 ["dump", "--batches"]):
        with open(seg, "rb") as f:
            r = subprocess.run([sys.executable, "-m", "kcodec", "offsets", *argv, "-"], stdin=f,
                               capture_output=True, timeout=120)
        ref = subprocess.run([sys.executable, "-m", "kcodec", "offsets", *argv, seg],
                             capture_output=True, timeout=120)
        assert r.returncode == ref.returncode, r.stderr
        want = ref.stdout.replace(seg.encode(), b"-")
        if argv[0] == "groups":
            assert r.stdout.replace(b'"-"', b'""') == want.replace(os.path.dirname(seg).encode(), b"")
        elif "--batches" in argv:   # stdin has no file name to take the starting offset from
            assert r.stdout.splitlines()[1:] == want.splitlines()[2:]
        else:
            assert r.stdout == want


def test_groups_group_selects(tmp_path):
    require(SEGMENTS)
    rc, out = _run(["offsets", "groups", "--group", "aio-rr", str(SEGMENTS)])
    assert rc == 0 and out.splitlines()[1].split()[0] == "aio-rr" and len(out.splitlines()) == 2
    rc, out = _run(["offsets", "groups", "--group", "no-such-group", str(SEGMENTS)])
    assert rc == 1 and out == ""        # checked before anything is printed
    rc, out = _run(["offsets", "groups", "--json", "--group", "aio-rr", "--group", "nope", str(SEGMENTS)])
    assert rc == 1 and out == ""


def test_check_downgrade_labels_tombstones(tmp_path):
    from kcodec.log import encode_batch
    k, v = _rec(3, "ConsumerGroupMetadataKey", {"groupId": "new"}, "ConsumerGroupMetadataValue",
                {"epoch": 4}, 0)
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(encode_batch([(k, v), (k, None)]))
    rc, out = _run(["offsets", "check-downgrade", "--to", "3.4", str(f)])
    assert rc == 2
    assert "(ConsumerGroupMetadata v0) x1" in out and "(ConsumerGroupMetadata tombstone) x1" in out
