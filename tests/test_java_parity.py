"""Byte for byte what Kafka 4.1.1 writes, checked on vectors made by Kafka's own classes
(bench/java: the harnesses and the case generators; no Java needed here).

* streams_userdata: SubscriptionInfo / AssignmentInfo built from the same constructor inputs
  (v1-v11, many tasks and topics, colliding hashes, resized tables, treeified bins), and
  java.util.HashMap fills (put and computeIfAbsent) against kcodec._java's model.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import uuid
from pathlib import Path

import pytest

from kcodec._java import JavaHashMap, java_string_hash, java_string_key
from kcodec.consumer import TopicPartition
from kcodec.streams.protocol import (AssignmentInfo, HostInfo, SubscriptionInfo, TaskId,
                                     decode_assignment, decode_subscription, encode_assignment,
                                     encode_subscription)

DATA = Path(__file__).parent / "data" / "java"


def _cases(name):
    with gzip.open(DATA / name, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


STREAMS = _cases("streams_userdata.jsonl.gz")


@pytest.fixture(params=["c", "python"])
def engine(request, monkeypatch):
    """Both HashMap models: the compiled one (csrc/kc_javahash.c) and its pure-Python twin."""
    import kcodec._java as jv
    if request.param == "c":
        if jv._jh is None:
            pytest.skip("kcodec._javahash not built")
    else:
        monkeypatch.setattr(jv, "_jh", None)
    return request.param


def _same(got: bytes, expected: dict) -> bool:
    if "hex" in expected:
        return got.hex() == expected["hex"]
    return len(got) == expected["len"] and hashlib.sha256(got).hexdigest() == expected["sha256"]


def _task(t):
    return TaskId(t[0], t[1], t[2])


def _subscription(c) -> SubscriptionInfo:
    return SubscriptionInfo(version=c["version"], latest_supported_version=c["latest"],
                            process_id=uuid.UUID(c["process_id"]), user_end_point=c["endpoint"],
                            task_offset_sums={_task(t): t[3] for t in c["tasks"]},
                            unique_field=c["unique"], error_code=c["error"], client_tags=dict(c["tags"]))


def _hosts(a):
    return {HostInfo(h, p): [TopicPartition(t, n) for t, n in tps] for h, p, tps in a}


def _assignment(c) -> AssignmentInfo:
    return AssignmentInfo(c["version"], c["common"], active_tasks=[_task(t) for t in c["active"]],
                          standby_tasks={_task(t): [TopicPartition(x, n) for x, n in tps] for t, tps in c["standby"]},
                          partitions_by_host=_hosts(c["hosts"]), standby_partitions_by_host=_hosts(c["standby_hosts"]),
                          error_code=c["error"], next_rebalance_ms=c["next"])


@pytest.mark.parametrize("kind", ["sub", "asg"])
def test_streams_userdata_is_kafkas_bytes_for_every_version(kind, engine):
    cases = [c for c in STREAMS if c["kind"] == kind]
    assert {c["version"] for c in cases} == set(range(1, 12))
    bad = []
    for c in cases:
        if c.get("tp_ties"):
            continue          # test_topic_dictionary_with_identity_hash_ties
        if kind == "sub":
            got = encode_subscription(_subscription(c))
            back = encode_subscription(decode_subscription(got))
        else:
            got = encode_assignment(_assignment(c))
            back = encode_assignment(decode_assignment(got))
        if not _same(got, c["expected"]):
            bad.append(c["id"])
        assert back == got, c["id"]          # decode + re-encode keeps the bytes
    assert not bad, f"{len(bad)}/{len(cases)} differ from Kafka's bytes: {bad[:10]}"


def test_topic_dictionary_with_identity_hash_ties(engine):
    # Kafka numbers topics in its HashSet<TopicPartition>'s order; with a treeified bin of
    # equal hashes Java orders those (non-Comparable) keys by identity hash codes, which
    # vary from run to run.  Given the numbering Kafka chose, the dictionary's order (a
    # HashMap<String, Integer>, here with treeified String bins) and every other byte are Kafka's.
    from dataclasses import replace
    from kcodec._java import hash_order
    cases = [c for c in STREAMS if c.get("tp_ties")]
    assert cases
    for c in cases:
        want = bytes.fromhex(c["expected"]["hex"])
        java_dict = decode_assignment(want).topic_dictionary
        topics = [t for _, t in sorted(java_dict)]
        order = hash_order([java_string_hash(t) for t in topics], [java_string_key(t) for t in topics])
        assert [(i, topics[i]) for i in order] == java_dict, c["id"]
        assert encode_assignment(replace(_assignment(c), topic_dictionary=java_dict)) == want, c["id"]


def test_hashmap_model_iterates_as_java(engine):
    from kcodec._java import hash_order
    cases = [c for c in STREAMS if c["kind"] == "map"]
    assert cases
    for c in cases:
        keys = list(dict.fromkeys(c["keys"]))          # hash_order: distinct keys
        hashes = [java_string_hash(k) for k in keys] if c["strings"] else keys
        cmp = [java_string_key(k) for k in keys] if c["strings"] else keys
        order = hash_order(hashes, cmp, compute_if_absent=c["op"] == "cia")
        assert [keys[i] for i in order] == c["expected"]["order"], c["id"]
    for c in cases:                                    # the map itself, repeated keys too
        m = JavaHashMap()
        add = m.compute_if_absent if c["op"] == "cia" else m.put
        for k in c["keys"]:
            if c["strings"]:
                add(k, java_string_hash(k), java_string_key(k))
            else:
                add(k, k, k)
        assert m.keys() == c["expected"]["order"], c["id"]


# --------------------------------------------------------------------------- KIP-778 planner

KRAFT = _cases("kraft_updates.jsonl.gz")


def _cluster(c):
    from kcodec.kraft.image import MetadataImage
    img = MetadataImage()
    img.metadata_version = c["mv"]
    img.features = {k: v for k, v in c["features"].items() if v > 0}
    img.kraft_version = c["kraft"]

    def reg(key, nid, ranges):
        return {key: nid, "features": [{"name": f, "minSupportedVersion": lo, "maxSupportedVersion": hi}
                                       for f, (lo, hi) in ranges.items()]}
    img.brokers = {int(b): reg("brokerId", int(b), r) for b, r in c["brokers"].items()}
    img.controllers = {int(n): reg("controllerId", int(n), r) for n, r in c["controllers"].items()}
    img.leader = {"leaderId": c["node_id"], "voters": [{"voterId": q} for q in c["quorum"]]}
    for name, key, value in c["configs"]:
        img.configs.setdefault((4, name), {})[key] = value
    return img


def test_kraft_cases_cover_the_states_and_requests():
    assert len(KRAFT) >= 76 and len({c["state"] for c in KRAFT}) >= 7


@pytest.mark.parametrize("case", KRAFT, ids=[c["id"] for c in KRAFT])
def test_planner_is_the_controllers_decision_message_and_records(case):
    from kcodec.kraft.planner import plan
    names = {v: k for k, v in {"UNKNOWN": 0, "UPGRADE": 1, "SAFE_DOWNGRADE": 2, "UNSAFE_DOWNGRADE": 3}.items()}
    res = plan(_cluster(case), [(f, lvl, names[t]) for f, lvl, t in case["updates"]],
               validate_only=case["validate_only"], controller_id=case["node_id"],
               local_supported=case["local"] and {k: tuple(v) for k, v in case["local"].items()},
               unstable=case["unstable"],
               static_min_insync_replicas=int(case["static_min_isr"] or 1))
    want = case["expected"]
    assert (res.error_code, res.message) == (want["error_code"], want["message"])
    assert [(n, v, ver) for n, v, ver in res.records] == [(n, v, ver) for n, ver, v in want["records"]]


# --------------------------------------------------------------------------- MetadataImage.write

def _config_key(hex_record: str):
    """(resource type, resource name) of a serialized ConfigRecord, else None."""
    from kcodec.kraft.records import read_record
    r = read_record(bytes.fromhex(hex_record))
    if r.type != "ConfigRecord":
        return None
    return (r.value["resourceType"], r.value["resourceName"])


def _same_as_kafkas_write(mine, java):
    """Kafka's records in Kafka's order, but for the order of config resources: Kafka keeps
    them in a HashMap keyed by ConfigResource, whose hashCode includes an enum's identity
    hash (it differs from JVM to JVM); each resource's records must still come together in
    Kafka's order."""
    assert len(mine) == len(java)
    keys_j = [_config_key(h) for h in java]
    keys_m = [_config_key(h) for h in mine]
    assert [h for h, k in zip(mine, keys_m) if k is None] == [h for h, k in zip(java, keys_j) if k is None]

    def groups(hexes, keys):
        out = {}
        for h, k in zip(hexes, keys):
            if k is not None:
                out.setdefault(k, []).append(h)
        return out
    assert groups(mine, keys_m) == groups(java, keys_j)


def test_rewrite_is_kafkas_image_write_for_the_fixture():
    from ._shared import fixtures_dir
    from kcodec.kraft import replay
    from kcodec.kraft.records import encode_record
    from kcodec.kraft.rewrite import rewrite
    segs = fixtures_dir() / "cluster_metadata" / "segments"
    if not segs.exists():
        pytest.skip("no cluster_metadata fixture")
    image = replay(segs)
    for want in _cases("image_write_fixture.jsonl.gz"):
        recs, _ = rewrite(image, want["level"])
        _same_as_kafkas_write([encode_record(n, v, ver).hex() for n, v, ver in recs], want["hex"])


def test_rewrite_is_kafkas_image_write_for_a_large_generated_image(tmp_path):
    # bench/gen_kraft_log.py --topics 1500 --partitions 12000 --changes 12000 (seed 1): 13.5k
    # records; Kafka's bytes as digests (records apart from configs, and each config resource)
    import hashlib
    import sys
    sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
    from gen_kraft_log import generate
    from kcodec.kraft import replay
    from kcodec.kraft.records import encode_record
    from kcodec.kraft.rewrite import rewrite
    image = replay(Path(generate(str(tmp_path), topics=1500, partitions=12000, changes=12000))
                   / "__cluster_metadata-0")
    for want in _cases("image_write_generated.jsonl.gz"):
        recs, _ = rewrite(image, want["level"])
        assert len(recs) == want["count"]
        plain = hashlib.sha256()
        groups = {}
        for n, v, ver in recs:
            b = encode_record(n, v, ver)
            if n == "ConfigRecord":
                groups.setdefault(f"{v['resourceType']}:{v['resourceName']}", hashlib.sha256()).update(b)
            else:
                plain.update(b)
        assert plain.hexdigest() == want["records_sha256"], want["level"]
        assert {k: g.hexdigest() for k, g in groups.items()} == want["configs_sha256"], want["level"]


def test_image_paths_reach_the_cluster_default_broker_config(capsys):
    # ConfigResource(BROKER, ""): the cluster-wide default, as enabling ELR writes it
    from ._shared import fixtures_dir
    from kcodec.cli import main
    segs = fixtures_dir() / "cluster_metadata" / "segments"
    if not segs.exists():
        pytest.skip("no cluster_metadata fixture")
    assert main(["kraft", "image", str(segs), "--path", "/configs/broker//min.insync.replicas"]) == 0
    assert capsys.readouterr().out.strip() == '"1"'
    assert main(["kraft", "image", str(segs), "--ls", "--path", "/configs/broker/"]) == 0
    assert capsys.readouterr().out.split() == ["min.insync.replicas"]


def test_finalized_features_leave_out_kraft_version_0():
    # KRaftMetadataCache.features(): kraft.version is added only when its level is above 0
    from kcodec.kraft.image import MetadataImage
    img = MetadataImage()
    img.metadata_version, img.features = 27, {"group.version": 1}
    assert img.finalized_features() == {"group.version": 1, "metadata.version": 27}
    img.kraft_version = 1
    assert img.finalized_features()["kraft.version"] == 1
