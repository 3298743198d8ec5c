"""__consumer_offsets: decoding against Kafka's own kafka-dump-log output, every record type
and value version (vectors), KIP-915 forward compatibility, the group-state fold against
the fixture's groups.json / records.jsonl, the downgrade check and the CLI."""
from __future__ import annotations

import io
import json
import os
import re
import struct

from pathlib import Path

import pytest

import kcodec
from kcodec import log as KR
from kcodec import offsets
from kcodec.errors import DecodeError
from kcodec.offsets import cli as ocli
from kcodec.offsets import downgrade
from kcodec.offsets.records import (Embedded, decode_record, iter_decoded, protocol_decoder,
                                    record_types, register_protocol_decoder, to_json,
                                    unknown_tagged_fields)
from kcodec.offsets.state import Folder, fold_consumer_records, fold_log

from ._shared import fixtures_dir, read_jsonl, require, vectors_dir

CO = fixtures_dir() / "consumer_offsets"
SEGMENTS = CO / "segments"
MESSAGES = [v for v in read_jsonl(vectors_dir() / "messages.jsonl")
            if v.get("folder") == "group-coordinator"]
UNKNOWN = [v for v in read_jsonl(vectors_dir() / "unknown_tags.jsonl")
           if v.get("folder") == "group-coordinator" and v.get("schema_type") == "coordinator-value"]
CPROTO = read_jsonl(vectors_dir() / "consumer_protocol.jsonl")


# --------------------------------------------------------------------------- oracle parsing

_LINE = re.compile(r"^\| offset: (-?\d+) ")


def parse_dump_log(path: Path):
    """kafka-dump-log.sh --offsets-decoder text -> {(segment name, offset): record dict}."""
    out = {}
    cur = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("Dumping "):
            cur = line.split(None, 1)[1].strip()
            continue
        m = _LINE.match(line)
        if not m:
            continue
        off = int(m.group(1))
        rec = {"raw": line}
        if " endTxnMarker: " in line:
            mm = re.search(r"endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)", line)
            rec["control"] = (mm.group(1), int(mm.group(2)))
        elif " key: " in line:
            ki, pi = line.index(" key: "), line.index(" payload: ")
            rec["key"] = json.loads(line[ki + 6:pi])
            pl = line[pi + 10:].strip()
            rec["payload"] = None if pl == "<DELETE>" else json.loads(pl)
        out[(_seg_name(cur), off)] = rec
    return out


def _seg_name(path: str) -> str:
    p = Path(path)
    return f"{p.parent.name}/{p.name}"


def _segment_files():
    if not SEGMENTS.exists():
        return []
    return [pytest.param(f, id=_seg_name(f)) for f in KR.log_files(SEGMENTS)]


@pytest.fixture(scope="module")
def oracle():
    return parse_dump_log(require(CO / "kafka-dump-log.txt"))


@pytest.mark.parametrize("segment", _segment_files())
def test_segment_records_match_kafka_dump_log(segment, oracle):
    n = 0
    for batch, rec, dec in iter_decoded(segment):
        assert batch.error is None
        exp = oracle[(_seg_name(segment), rec.offset)]
        if dec is None:
            c = KR.parse_control_record(rec)
            assert (c.type_name, c.coordinator_epoch) == exp["control"]
        else:
            assert dec.error is None and not dec.unknown
            got = to_json(dec)
            assert got["key"] == exp["key"]
            assert got["payload"] == exp["payload"]     # embedded subscription/assignment too
        n += 1
    assert n == sum(1 for (s, _) in oracle if s == _seg_name(segment))


def test_oracle_covers_all_records(oracle):
    seen = {(_seg_name(b.file), r.offset) for b, r, _ in iter_decoded(SEGMENTS) if r is not None}
    assert seen == set(oracle)


# --------------------------------------------------------------------------- vectors

def _key_for(api_key: int) -> bytes:
    info = record_types()[api_key]
    return struct.pack(">h", api_key) + kcodec.encode(info.key, {}, 0)


@pytest.mark.parametrize("vec", MESSAGES, ids=[v["id"] for v in MESSAGES])
def test_every_record_type_and_value_version(vec):
    t = vec["api_key"]
    body = bytes.fromhex(vec["hex"])
    if vec["schema_type"] == "coordinator-key":
        rec = decode_record(struct.pack(">h", t) + body, None)
        assert rec.tombstone and rec.record_type == t
        assert to_json(rec)["key"] == {"type": str(t), "data": vec["json"]}
        return
    rec = decode_record(_key_for(t), struct.pack(">h", vec["version"]) + body)
    assert rec.error is None and not rec.unknown and not rec.newer_than_known
    assert rec.value_version == vec["version"]
    assert kcodec.to_kafka_json(vec["schema"], rec.value, vec["version"]) == vec["json"]


@pytest.mark.parametrize("vec", UNKNOWN, ids=[v["id"] for v in UNKNOWN])
def test_unknown_tagged_fields_kept(vec):
    rec = decode_record(_key_for(vec["api_key"]),
                        struct.pack(">h", vec["version"]) + bytes.fromhex(vec["hex"]))
    got = sorted((t, d.hex()) for _, t, d in unknown_tagged_fields(rec.value))
    exp = sorted((f["tag"], f["data_hex"]) for grp in vec["unknown_tagged_fields"] for f in grp["fields"])
    assert got == exp
    j = to_json(rec)
    assert len(j["unknown_tagged_fields"]) == len(exp)


def test_value_version_newer_than_known_decoded_and_flagged():
    v4 = kcodec.encode("OffsetCommitValue", {"offset": 42, "leaderEpoch": 3, "metadata": "m",
                                             "commitTimestamp": 7}, 4)
    rec = decode_record(_key_for(1), struct.pack(">h", 9) + v4)
    assert rec.newer_than_known and rec.value["offset"] == 42 and rec.value_version == 9
    assert to_json(rec)["newer_than_known"] is True
    gm = kcodec.encode("GroupMetadataValue", {"protocolType": "consumer", "generation": 5}, 4)
    rec = decode_record(_key_for(2), struct.pack(">h", 6) + gm)
    assert rec.newer_than_known and rec.value["generation"] == 5


@pytest.mark.parametrize("rtype", [-1, 9, 18, 24, 255, 32767])
def test_unknown_record_type_is_explicit(rtype):
    if rtype in record_types():
        pytest.skip("known in this schema set")
    key = struct.pack(">h", rtype) + b"\x00\x03abc"
    rec = decode_record(key, b"\x00\x01xyz")
    assert rec.unknown and rec.record_type == rtype and rec.key_bytes == key
    assert rec.value_bytes == b"\x00\x01xyz" and rec.value_version == 1
    j = to_json(rec)
    assert j["unknown"] is True and j["key"]["type"] == str(rtype)
    # the fold skips it and counts it
    f = Folder()
    f.add(rec, offset=0)
    assert f.state().unknown_records == {rtype: 1}


def test_bad_keys_and_values():
    with pytest.raises(DecodeError):
        decode_record(b"\x00", b"")
    with pytest.raises(DecodeError):
        decode_record(_key_for(1), b"\x00\x03\x00")          # truncated value
    rec = decode_record(_key_for(1), b"\x00\x03\x00", errors="report")
    assert rec.error and rec.value is None
    rec = decode_record(b"\x00\x01\x00", None, errors="report")
    assert rec.error


def test_legacy_type0_key_with_newer_values():
    key = struct.pack(">h", 0) + kcodec.encode("LegacyOffsetCommitKey", {"group": "g", "topic": "t",
                                                                        "partition": 2}, 0)
    v0 = struct.pack(">h", 0) + kcodec.encode("LegacyOffsetCommitValue",
                                              {"offset": 5, "metadata": "", "commitTimestamp": 1}, 0)
    v1 = struct.pack(">h", 1) + kcodec.encode("OffsetCommitValue", {"offset": 6, "commitTimestamp": 2,
                                                                   "expireTimestamp": 3}, 1)
    r0, r1 = decode_record(key, v0), decode_record(key, v1)
    assert r0.value["offset"] == 5 and r1.value["expireTimestamp"] == 3 and not r1.newer_than_known
    key1 = struct.pack(">h", 1) + key[2:]
    f = Folder()
    f.add(r0, offset=0)
    f.add(decode_record(key1, v1), offset=1)      # type 0 and 1 keys are the same key
    (g,) = f.state().groups.values()
    assert {k: o.offset for k, o in g.offsets.items()} == {("t", 2): 6}


# --------------------------------------------------------------------------- embedded protocols

@pytest.mark.parametrize("vec", CPROTO, ids=[v["id"] for v in CPROTO])
def test_consumer_protocol_embedded(vec):
    dec = protocol_decoder("consumer")
    fn = dec.assignment if vec["kind"].startswith("assignment") else dec.subscription
    e = fn(bytes.fromhex(vec["hex"]))
    d = vec["decoded"]
    if "java_exception" in d or "java_exception" in vec:
        assert e.error is not None and e.value is None
        return
    assert e.error is None
    assert e.version == d["version_prefix"] and e.parsed_version == d["parsed_as_version"]
    assert kcodec.to_kafka_json(e.schema, e.value, e.parsed_version) == d["raw_message_json"]
    assert len(e.trailing) == d.get("trailing_bytes_ignored", 0)


def test_protocol_decoder_hook():
    sub = b"\x00\x01hello"
    gm = kcodec.encode("GroupMetadataValue", {
        "protocolType": "kctest", "generation": 1, "protocol": "p", "leader": "m",
        "members": [{"memberId": "m", "clientId": "c", "clientHost": "h", "sessionTimeout": 1,
                     "rebalanceTimeout": 1, "subscription": sub, "assignment": b""}]}, 3)
    rec = decode_record(_key_for(2), struct.pack(">h", 3) + gm)
    assert rec.members is None
    assert to_json(rec)["payload"]["data"]["members"][0]["subscription"] == "AAFoZWxsbw=="
    register_protocol_decoder(
        "kctest",
        lambda b: Embedded(None, 1, 1, {"text": b[2:].decode()}, b"", None),
        lambda b: Embedded(None, None, None, None, b"", "empty"))
    try:
        rec = decode_record(_key_for(2), struct.pack(">h", 3) + gm)
        assert rec.members[0]["subscription"].value == {"text": "hello"}
        assert rec.members[0]["assignment"].error == "empty"
    finally:
        from kcodec.offsets import records as orec
        orec._PROTOCOLS.pop(("kctest", None), None)


# --------------------------------------------------------------------------- group state

def _read_committed_offsets(rows):
    """Independent oracle: the consumer's view (visible_read_committed), folded naively."""
    exp = {}
    for r in rows:
        if not r.get("visible_read_committed", True):
            continue
        key = bytes.fromhex(r["key_hex"])
        if struct.unpack_from(">h", key)[0] not in (0, 1):
            continue
        rec = decode_record(key, None if r["value_hex"] is None else bytes.fromhex(r["value_hex"]))
        k = (rec.key["group"], rec.key["topic"], rec.key["partition"])
        if rec.tombstone:
            exp.pop(k, None)
        else:
            exp[k] = (rec.value["offset"], rec.value["metadata"], rec.value["commitTimestamp"])
    return exp


@pytest.fixture(scope="module")
def folded():
    return fold_log(require(SEGMENTS))


def test_final_committed_offsets(folded):
    rows = read_jsonl(require(CO / "records.jsonl"))
    got = {(g.group_id, t, p): (o.offset, o.metadata, o.commit_timestamp)
           for g in folded.groups.values() for (t, p), o in g.offsets.items()}
    assert got == _read_committed_offsets(rows)
    # the consumer-records path agrees with the segment path
    vis = [(bytes.fromhex(r["key_hex"]), None if r["value_hex"] is None else bytes.fromhex(r["value_hex"]))
           for r in rows if r.get("visible_read_committed", True)]
    st2 = fold_consumer_records(vis)
    got2 = {(g.group_id, t, p): o.offset for g in st2.groups.values() for (t, p), o in g.offsets.items()}
    assert got2 == {k: v[0] for k, v in got.items()}


def test_aborted_transaction_commits_absent(folded):
    rows = read_jsonl(require(CO / "records.jsonl"))
    aborted = [r for r in rows if not r.get("visible_read_committed", True)]
    assert folded.aborted_records == len(aborted)
    assert not folded.open_transactions
    for r in aborted:
        rec = decode_record(bytes.fromhex(r["key_hex"]),
                            None if r["value_hex"] is None else bytes.fromhex(r["value_hex"]))
        if rec.record_type in (0, 1) and not rec.tombstone:
            g = folded.groups.get(rec.key["group"])
            o = g.offsets.get((rec.key["topic"], rec.key["partition"])) if g else None
            assert o is None or o.log_offset != r["offset"]


def _scenarios():
    p = CO / "groups.json"
    if not p.exists():
        return []
    return json.loads(p.read_text())["scenarios"]


def test_deleted_groups_and_offsets(folded):
    deleted = {s["group"] for s in _scenarios() if s.get("action") == "DeleteGroups"
               and s.get("result") == "deleted"}
    for g in deleted:
        assert g in folded.deleted_groups and g not in folded.groups
    assert not (set(folded.groups) & folded.deleted_groups)


def _topic_names():
    """topic id -> name from the cluster metadata fixture (TopicRecord, apiKey 2)."""
    names = {}
    cm = fixtures_dir() / "cluster_metadata" / "segments"
    if not cm.exists():
        return names
    for b, r in KR.iter_records(cm):
        if b.is_control or r.value is None or len(r.value) < 3 or r.value[0] != 1 or r.value[1] != 2:
            continue
        try:
            d = kcodec.read("TopicRecord", r.value[3:], r.value[2], trailing="allow").value
            names[d["topicId"]] = d["name"]
        except kcodec.KcodecError:
            pass
    return names


def _membership_history(group):
    """Every non-empty membership the log shows for a group: [(timestamp, {client: set(tp)})]."""
    hist = []
    f = Folder()
    names = None
    for batch, rec, dec in iter_decoded(SEGMENTS):
        if rec is None or dec is None or dec.group_id != group:
            if rec is not None and batch.is_control:
                pass
            continue
        f.add(dec, partition=os.path.dirname(batch.file), offset=rec.offset,
              timestamp=rec.timestamp, transactional=batch.is_transactional,
              producer_id=batch.producer_id)
        g = f.state().groups.get(group)
        if not g or not g.members:
            continue
        snap = {}
        for m in g.members.values():
            tps = set()
            for t, ps in (m.assigned or {}).items():
                if not isinstance(t, str):       # consumer protocol: topic ids
                    names = names if names is not None else _topic_names()
                    t = names.get(t, str(t))
                tps |= {f"{t}-{p}" for p in ps}
            snap[m.client_id] = tps
        hist.append((rec.timestamp, snap))
    return hist


@pytest.mark.parametrize("sc", [s for s in _scenarios() if s.get("assignments")],
                         ids=lambda s: s["group"])
def test_reported_assignments_seen(sc):
    """The assignments the clients reported appear as a membership state in the log
    at or before the report time (members leave afterwards, when the clients close)."""
    exp = {c: set(tps) for c, tps in sc["assignments"].items()}
    hist = [snap for ts, snap in _membership_history(sc["group"]) if ts <= sc["at_ms"]]
    assert hist, "no membership before the report"
    assert any(snap == exp for snap in hist), hist[-1]


def test_group_types(folded):
    want = {"classic": "classic", "consumer": "consumer", "share": "share", "streams": "streams"}
    for s in _scenarios():
        proto = ((s.get("protocol") or "").split() or [""])[0]
        g = folded.groups.get(s["group"])
        if g is None or proto not in want or s.get("action"):
            continue
        assert g.type == want[proto], s["group"]


def test_read_committed_fold_synthetic():
    def oc(group, p, off):
        k = _key_for(1)[:2] + kcodec.encode("OffsetCommitKey", {"group": group, "topic": "t",
                                                                "partition": p}, 0)
        v = struct.pack(">h", 3) + kcodec.encode("OffsetCommitValue", {"offset": off,
                                                                       "commitTimestamp": 1}, 3)
        return k, v
    log = b""
    o = 0
    def add(recs, **kw):
        nonlocal log, o
        log += KR.encode_batch(recs, base_offset=o, **kw)
        o += len(recs)
    add([oc("g", 0, 1)])                                            # plain
    add([oc("g", 0, 5), oc("g", 1, 5)], transactional=True, producer_id=10, producer_epoch=0)
    add([oc("g", 1, 7)])                                            # later plain commit wins
    log += KR.encode_control_batch(True, base_offset=o, producer_id=10, producer_epoch=0); o += 1
    add([oc("g", 2, 9)], transactional=True, producer_id=11, producer_epoch=0)
    log += KR.encode_control_batch(False, base_offset=o, producer_id=11, producer_epoch=0); o += 1
    add([oc("g", 3, 4)], transactional=True, producer_id=12, producer_epoch=0)   # left open
    add([(oc("g", 0, 0)[0], None)])                                 # tombstone p0 ...
    add([oc("g", 0, 8)])                                            # ... then re-commit
    st = fold_log(log)
    offs = {p: x.offset for (t, p), x in st.groups["g"].offsets.items()}
    assert offs == {0: 8, 1: 7}
    assert st.aborted_records == 1 and sum(st.open_transactions.values()) == 1
    assert st.deleted_offsets.get("g", set()) == set()


# --------------------------------------------------------------------------- downgrade

def _rec(t, value_version=0, value=None, name=None):
    info = record_types()[t]
    v = kcodec.encode(name or info.value, value or {}, value_version)
    return decode_record(_key_for(t), struct.pack(">h", value_version) + v)


def test_downgrade_classification():
    P = downgrade.parse_version
    oc4 = _rec(1, 4, {"offset": 1})
    assert downgrade.classify(oc4, P("3.4"))[0][0] == "fail"
    assert downgrade.classify(oc4, P("3.5")) == []
    oc3 = _rec(1, 3, {"offset": 1})
    assert downgrade.classify(oc3, P("2.0"))[0][0] == "fail"
    assert downgrade.classify(oc3, P("2.1")) == []
    unknown = decode_record(b"\x00\x63\x00\x01g", b"\x00\x00")
    assert downgrade.classify(unknown, P("3.4"))[0][0] == "fail"
    assert downgrade.classify(unknown, P("3.9"))[0][0] == "skip"
    assert downgrade.classify(unknown, P("4.1"))[0][0] == "skip"
    streams = _rec(17, 0, {"epoch": 1})
    assert downgrade.classify(streams, P("4.0"))[0][0] == "skip"
    cg = _rec(3, 0, {"epoch": 1, "metadataHash": 99})
    assert [o for o, _ in downgrade.classify(cg, P("4.0"))] == ["lose_fields"]
    assert downgrade.classify(cg, P("4.1")) == []
    newer = decode_record(_key_for(1), struct.pack(">h", 7) + kcodec.encode("OffsetCommitValue", {}, 4))
    assert downgrade.classify(newer, P("3.9"))[0][0] == "fail"
    assert downgrade.classify(newer, P("4.1"))[0][0] == "lose_fields"


def test_downgrade_unknown_tags_lost():
    vec = next((v for v in UNKNOWN if v["api_key"] == 1), None) or (UNKNOWN[0] if UNKNOWN else None)
    if vec is None:
        pytest.skip("no unknown-tag vector")
    rec = decode_record(_key_for(vec["api_key"]), struct.pack(">h", vec["version"]) + bytes.fromhex(vec["hex"]))
    out = downgrade.classify(rec, downgrade.parse_version("4.1"))
    assert any(o == "lose_fields" and "unknown tagged field" in r for o, r in out)


def test_downgrade_on_fixture():
    rep = offsets.check_downgrade(require(SEGMENTS), "4.1")
    assert rep.safe and rep.records > 0
    rep = offsets.check_downgrade(SEGMENTS, "3.4")
    assert rep.fails


# --------------------------------------------------------------------------- CLI

def _run(argv):
    import argparse
    parser = argparse.ArgumentParser(prog="kcodec")
    ocli.add_subparsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out = io.StringIO()
    rc = args.func(args, out=out)
    return rc, out.getvalue()


def test_cli_dump(oracle):
    rc, out = _run(["offsets", "dump", str(require(SEGMENTS))])
    lines = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and len(lines) == len(oracle)
    for j in lines:
        exp = oracle[(_seg_name(j["file"]), j["offset"])]
        if "control" in exp:
            assert j["control"]["type"] == exp["control"][0]
        else:
            assert j["key"] == exp["key"] and j["payload"] == exp["payload"]


def test_cli_groups_and_downgrade(tmp_path):
    rc, out = _run(["offsets", "groups", str(require(SEGMENTS))])
    assert rc == 0 and out.startswith("GROUP")
    # the protocol type and the assignor (Kafka's ASSIGNMENT-STRATEGY) in columns of their own
    head, *rows = [l.split() for l in out.splitlines() if l.strip()][:1 + len(fold_log(SEGMENTS).groups)]
    assert head[4:6] == ["PROTOCOL-TYPE", "ASSIGNMENT-STRATEGY"]
    st = fold_log(SEGMENTS)
    for r in rows:          # (read from the right: TYPE may say "(from ...)")
        g = st.groups[r[0]]
        assert r[-4:-2] == [g.protocol_type or "-", g.protocol or "-"], r
    rc, out = _run(["offsets", "groups", "--json", str(SEGMENTS)])
    doc = json.loads(out)
    assert set(doc["groups"]) == set(fold_log(SEGMENTS).groups)
    rc, out = _run(["offsets", "check-downgrade", "--to", "4.1", str(SEGMENTS)])
    assert rc == 0 and out.startswith("OK")
    rc, out = _run(["offsets", "check-downgrade", "--to", "3.4", str(SEGMENTS)])
    assert rc == 2 and "FAIL" in out
    # a corrupt batch is reported in the dump, reading goes on
    a = KR.encode_batch([_key_val()], base_offset=0)
    bad = bytearray(a)
    struct.pack_into(">i", bad, 8, 3)
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(bytes(bad) + a)
    rc, out = _run(["offsets", "dump", str(p)])
    lines = [json.loads(x) for x in out.splitlines()]
    assert rc == ocli.EXIT_CORRUPT and lines[0]["error"]["reason"] == "bad_length" and lines[1]["offset"] == 0
    # --strict stops at the first corrupt batch
    rc, out = _run(["offsets", "dump", "--strict", str(p)])
    assert rc == ocli.EXIT_CORRUPT and out == ""


def _key_val():
    return (_key_for(2)[:2] + kcodec.encode("GroupMetadataKey", {"group": "g"}, 0),
            struct.pack(">h", 3) + kcodec.encode("GroupMetadataValue", {"protocolType": "consumer"}, 3))


def test_progress_bar_only_when_asked():
    buf = io.StringIO()
    bar = ocli.Progress(100, None, stream=buf)     # StringIO is not a TTY
    bar.update(50)
    bar.close()
    assert buf.getvalue() == ""
    bar = ocli.Progress(100, True, stream=buf)
    bar.update(100)
    bar.close()
    assert "100.0%" in buf.getvalue()


# --------------------------------------------------------------------------- columnar fast path

def _state_view(st):
    return ({g: (s.type, s.state, s.generation, sorted(s.members),
                 {k: (o.offset, o.metadata, o.commit_timestamp, o.leader_epoch, o.expire_timestamp,
                      o.log_offset, o.transactional) for k, o in s.offsets.items()})
             for g, s in st.groups.items()},
            st.deleted_groups, st.deleted_offsets, st.open_transactions, st.aborted_records,
            st.unknown_records, st.records_read)


def _synthetic_log(compression=0, n=400):
    import random
    rnd = random.Random(5)
    out, o = b"", 0
    keys = [(f"g{g}", f"t{t}", p) for g in range(3) for t in range(2) for p in range(4)]
    for i in range(n):
        batch = []
        for (g, t, p) in rnd.sample(keys, 5):
            k = struct.pack(">h", rnd.choice([0, 1])) + kcodec.encode("OffsetCommitKey", {
                "group": g, "topic": t, "partition": p}, 0)
            r = rnd.random()
            if r < 0.1:
                v = None
            elif r < 0.2:   # tagged topicId: goes the generic way
                v = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", {
                    "offset": i, "metadata": "é", "commitTimestamp": i,
                    "topicId": __import__("uuid").UUID(int=i + 1)}, 4)
            else:
                ver = rnd.choice([0, 1, 2, 3, 4]) if k[1] == 1 else 0
                val = {"offset": i, "metadata": "m" * (i % 3), "commitTimestamp": i,
                       "leaderEpoch": i % 7, "expireTimestamp": i + 5}
                name = "LegacyOffsetCommitValue" if k[1] == 0 else "OffsetCommitValue"
                have = kcodec.program(name, ver).top.keys
                v = struct.pack(">h", ver) + kcodec.encode(name, {a: b for a, b in val.items()
                                                                  if a in have}, ver)
            batch.append((k, v))
        txn = rnd.random() < 0.15
        pid = 100 + i % 3
        out += KR.encode_batch(batch, base_offset=o, compression=compression, base_timestamp=i,
                               transactional=txn, producer_id=pid if txn else -1,
                               producer_epoch=0 if txn else -1)
        o += len(batch)
        if txn and rnd.random() < 0.8:
            out += KR.encode_control_batch(rnd.random() < 0.6, base_offset=o, producer_id=pid,
                                           producer_epoch=0, timestamp=i)
            o += 1
    return out


@pytest.mark.parametrize("compression", [0, 4])
def test_columnar_fold_equals_record_fold(compression):
    if compression:
        pytest.importorskip("cramjam")
    log = _synthetic_log(compression)
    for as_of in (None, 200):
        fast = fold_log(log, fast=True, as_of_ms=as_of)
        slow = fold_log(log, fast=False, as_of_ms=as_of)
        assert _state_view(fast) == _state_view(slow)


def test_columnar_fold_on_fixture():
    assert _state_view(fold_log(require(SEGMENTS), fast=True)) == \
        _state_view(fold_log(SEGMENTS, fast=False))


def test_offset_columns_match_generic_decoder():
    from kcodec.offsets.columns import iter_offset_columns
    log = _synthetic_log(0, 150)
    objs = [(r, d) for b, r, d in iter_decoded(log)]
    rows = []
    for cols in iter_offset_columns(log):
        other = dict(cols["other"])
        g, t, m = cols["group"].to_pylist(), cols["topic"].to_pylist(), cols["metadata"].to_pylist()
        for i, k in enumerate(cols["kind"].tolist()):
            rows.append((k, other.get(i), g[i], t[i], m[i], int(cols["partition"][i]),
                         int(cols["commit_offset"][i]), int(cols["leader_epoch"][i]),
                         int(cols["commit_timestamp"][i]), int(cols["expire_timestamp"][i])))
    assert len(rows) == len(objs)
    for (k, o, g, t, m, p, off, le, cts, ets), (rec, dec) in zip(rows, objs):
        if k == 3:
            assert dec is None
            continue
        if k == 2:
            assert o.key == dec.key and o.value == dec.value
            continue
        assert (g, t, p) == (dec.key["group"], dec.key["topic"], dec.key["partition"])
        if k == 1:
            assert dec.tombstone
            continue
        v = dec.value
        assert (off, m, cts) == (v["offset"], v["metadata"], v["commitTimestamp"])
        assert le == v.get("leaderEpoch", -1) and ets == v.get("expireTimestamp", -1)


@pytest.mark.parametrize("to", ["2.0", "3.4", "3.9", "4.0", "4.1"])
def test_downgrade_columns_equals_records(to):
    from kcodec.offsets.columns import iter_offset_columns
    log = _synthetic_log(0, 120) + KR.encode_batch(
        [(b"\x00\x63\x00\x01g", b"\x00\x00"), _key_val()], base_offset=10**6)
    for src in (log, require(SEGMENTS)):
        a = downgrade.check(iter_decoded(src), to)
        b = downgrade.check_columns(iter_offset_columns(src), to)
        view = lambda r: (r.records, sorted((repr(k), f.count) for k, f in r.findings.items()))  # noqa: E731
        assert view(a) == view(b)


def test_folds_never_import_pandas():
    from ._shared import run_without_pandas
    require(SEGMENTS)
    run_without_pandas("from kcodec.offsets import fold_log\n"
                       f"assert fold_log({str(SEGMENTS)!r}).groups\n")


def test_offset_columns_tagged_newer_and_short_values():
    """Commit values the columns leave to the generic path (unknown tagged fields, a
    topic id, a newer version, too short, damaged) and those they keep (a topic id tag
    that holds the zero uuid, as Kafka reads it: no topic id)."""
    from kcodec.offsets.columns import KIND_COMMIT, KIND_OTHER, iter_offset_columns
    k = struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": "gg", "topic": "tt",
                                                                 "partition": 3}, 0)
    base = {"offset": 1, "metadata": "meta", "commitTimestamp": 2, "leaderEpoch": 4}
    v4 = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", base, 4)
    vals = [v4[:-1] + b"\x01\x00\x10" + bytes(16),                      # zero topic id tag
            struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue",
                                                 dict(base, _unknown_tagged_fields=[(9, b"x")]), 4),
            v4[:-1] + b"\x01\x00\x10" + bytes(15) + b"\x01",            # a topic id
            struct.pack(">h", 9) + v4[2:], b"\x00", b"\x00\x03\x00",
            struct.pack(">h", 3) + kcodec.encode("OffsetCommitValue", base, 3)]
    log = KR.encode_batch([(k, v) for v in vals], base_offset=0)
    (cols,) = list(iter_offset_columns(log))
    kind = cols["kind"].tolist()
    assert kind == [KIND_COMMIT] + [KIND_OTHER] * 5 + [KIND_COMMIT]
    assert cols["group"].to_pylist() == ["gg"] + [""] * 5 + ["gg"]
    assert cols["metadata"].to_pylist() == ["meta"] + [""] * 5 + ["meta"]
    assert cols["value_version"].tolist() == [4] + [-1] * 5 + [3]
    assert cols["leader_epoch"].tolist() == [4] + [-1] * 5 + [4]
    assert cols["commit_offset"].tolist() == [1] + [0] * 5 + [1]
    other = dict(cols["other"])
    assert other[1].value["_unknown_tagged_fields"] == [(9, b"x")]
    assert other[2].value["topicId"].int == 1 and other[3].newer_than_known
