"""Replaying the fixture cluster's metadata log into an image."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

import kcodec
from kcodec.kraft import encode_record, replay
from kcodec import log

from ._shared import fixtures_dir, read_jsonl

META = fixtures_dir() / "cluster_metadata"
SEGMENTS = META / "segments"
needs_fixture = pytest.mark.skipif(not META.exists(), reason="no cluster_metadata fixture")


@pytest.fixture(scope="module")
def image():
    return replay(SEGMENTS)


@needs_fixture
def test_fixture_features(image):
    assert image.metadata_version == 27
    assert image.finalized_features() == {
        "metadata.version": 27, "eligible.leader.replicas.version": 1,
        "group.version": 1, "transaction.version": 2, "share.version": 1, "streams.version": 1}
    assert image.issues == []
    assert image.open_transaction is None


@needs_fixture
def test_fixture_topics_and_nodes(image):
    assert len(image.topics) == 15 and image.partition_count() == 184
    assert "orders" in image.ls("/topics")
    assert sorted(image.brokers) == [1] and sorted(image.controllers) == [1]
    assert image.supported_features()["brokers"][1]["metadata.version"] == (7, 29)
    assert image.producer_ids["nextProducerId"] == 2000
    assert image.cat("/configs/topic/__consumer_offsets/compression.type") == "producer"


def _naive(rows):
    """A plain per-record replay of partitions, as PartitionRegistration.merge does it."""
    topics, parts = {}, {}
    for row in rows:
        if row["batch"]["is_control"]:
            continue
        raw = bytes.fromhex(row["value_hex"])
        key, ver = raw[1], raw[2]
        name = kcodec.spec_for_api_key(key, "metadata", folder="metadata").name
        v = kcodec.decode(name, raw[3:], ver)
        if name == "TopicRecord":
            topics[v["topicId"]] = v["name"]
        elif name == "PartitionRecord":
            parts[(topics[v["topicId"]], v["partitionId"])] = {
                "leader": v["leader"], "leaderEpoch": v["leaderEpoch"],
                "partitionEpoch": v["partitionEpoch"], "isr": v["isr"], "replicas": v["replicas"],
                "eligibleLeaderReplicas": v.get("eligibleLeaderReplicas") or [],
                "lastKnownElr": v.get("lastKnownElr") or []}
        elif name == "PartitionChangeRecord":
            p = parts[(topics[v["topicId"]], v["partitionId"])]
            if v["leader"] != -2:
                p["leader"] = v["leader"]
                p["leaderEpoch"] += 1
            p["partitionEpoch"] += 1
            for f in ("isr", "replicas", "eligibleLeaderReplicas", "lastKnownElr"):
                if v.get(f) is not None:
                    p[f] = v[f]
        elif name == "ClearElrRecord":
            for (t, _), p in parts.items():
                if (not v["topicName"] or t == v["topicName"]) and (
                        p["eligibleLeaderReplicas"] or p["lastKnownElr"]):
                    p["eligibleLeaderReplicas"], p["lastKnownElr"] = [], []
                    p["partitionEpoch"] += 1
    return parts


@needs_fixture
def test_partitions_match_a_plain_replay(image):
    rows = [r for r in read_jsonl(META / "segment_records.jsonl")
            if "bootstrap" not in r["file"]]
    expected = _naive(rows)
    assert len(expected) == image.partition_count()
    for (t, pid), want in expected.items():
        got = image.partition(t, pid)
        assert {k: got[k] for k in want} == want, (t, pid)


def _frame(name, value, version=0):
    return (None, encode_record(name, value, version))


def _log(*batches):
    out, off = b"", 0
    for recs in batches:
        out += log.encode_batch(recs, base_offset=off)
        off += len(recs)
    return out


TID = uuid.UUID(int=7)


def test_transactions_apply_at_end_and_aborts_drop():
    data = _log(
        [_frame("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 27})],
        [_frame("BeginTransactionRecord", {"name": "t1"}),
         _frame("TopicRecord", {"name": "a", "topicId": TID})],
        [_frame("EndTransactionRecord", {})],
        [_frame("BeginTransactionRecord", {"name": "t2"}),
         _frame("TopicRecord", {"name": "b", "topicId": uuid.UUID(int=8)}),
         _frame("AbortTransactionRecord", {})],
        [_frame("BeginTransactionRecord", {"name": "t3"}),
         _frame("TopicRecord", {"name": "c", "topicId": uuid.UUID(int=9)})],
    )
    img = replay(data)
    assert img.topic_names() == ["a"]
    assert img.aborted_transactions == 1
    assert img.open_transaction == "t3"


def test_a_transaction_spanning_windows_of_a_segment_file(tmp_path, monkeypatch):
    # records held in an open transaction outlive the reader's window (its buffer is
    # refilled with the next one): replayed in small windows they must come out the same
    tids = [uuid.UUID(int=100 + t) for t in range(30)]
    recs = [[_frame("BeginTransactionRecord", {"name": "big"})]]
    for t, tid in enumerate(tids):
        recs.append([_frame("TopicRecord", {"name": f"t{t}", "topicId": tid})]
                    + [_frame("PartitionRecord", {"partitionId": p, "topicId": tid, "replicas": [1, 2],
                                                  "isr": [1, 2], "leader": 1 + (t + p) % 2,
                                                  "leaderEpoch": 0, "partitionEpoch": 0})
                       for p in range(8)]
                    + [_frame("PartitionChangeRecord", {"partitionId": 3, "topicId": tid, "isr": [2],
                                                        "leader": 2}, 0)])
    recs.append([_frame("EndTransactionRecord", {})])
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(_log(*recs))
    whole = replay(seg)
    small = log.iter_chunks
    monkeypatch.setattr(log, "iter_chunks", lambda src, **kw: small(src, chunk_size=2048, **kw))
    windowed = replay(seg)
    assert whole.issues == windowed.issues == [] and windowed.partition_count() == 240
    for t in range(30):
        assert windowed.topic(f"t{t}") == whole.topic(f"t{t}")
    assert windowed.partition("t7", 3)["isr"] == [2] and windowed.partition("t7", 3)["leaderEpoch"] == 1


def test_unknown_types_and_newer_versions_are_reported():
    data = _log([
        _frame("TopicRecord", {"name": "a", "topicId": TID}),
        (None, b"\x01\x63\x00\x00"),                       # unknown record type 99
        (None, b"\x01\x0c\x07\x02x\x00\x01\x00"),          # FeatureLevelRecord v7
        (None, b"\x01\x02\x00\x05"),                       # truncated TopicRecord
    ])
    img = replay(data)
    kinds = [(i.kind, i.api_key) for i in img.issues]
    assert ("unknown_type", 99) in kinds and ("newer_version", 12) in kinds
    assert any(k == "error" for k, _ in kinds)
    assert img.features == {"x": 1}
    assert [i.raw for i in img.issues if i.api_key == 99] == [b"\x01\x63\x00\x00"]


def test_partition_changes_and_topic_removal():
    data = _log([
        _frame("TopicRecord", {"name": "a", "topicId": TID}),
        _frame("PartitionRecord", {"partitionId": 0, "topicId": TID, "replicas": [1, 2],
                                   "isr": [1, 2], "leader": 1, "leaderEpoch": 0,
                                   "partitionEpoch": 0}),
        _frame("PartitionChangeRecord", {"partitionId": 0, "topicId": TID, "isr": [1]}),
        _frame("PartitionChangeRecord", {"partitionId": 0, "topicId": TID, "leader": 2}),
        _frame("ConfigRecord", {"resourceType": 2, "resourceName": "a", "name": "x", "value": "1"}),
    ])
    img = replay(data)
    p = img.partition("a", 0)
    assert (p["leader"], p["leaderEpoch"], p["partitionEpoch"], p["isr"]) == (2, 1, 2, [1])
    img2 = replay([data, _log([_frame("RemoveTopicRecord", {"topicId": TID})])])
    assert img2.topic_names() == [] and img2.configs == {}


@needs_fixture
def test_without_pyarrow_the_image_is_the_same(monkeypatch, image):
    from kcodec.kraft import image as image_mod
    monkeypatch.setattr(image_mod, "_arrow", None)
    plain = replay(SEGMENTS)
    for t in image.topic_names():
        assert plain.topic(t) == image.topic(t)


def test_extract_reports_bad_rows_and_keeps_going():
    good = encode_record("PartitionChangeRecord", {"partitionId": 0, "topicId": TID, "isr": [1]}, 2)
    data = _log([
        _frame("TopicRecord", {"name": "a", "topicId": TID}),
        _frame("PartitionRecord", {"partitionId": 0, "topicId": TID, "replicas": [1], "isr": [1],
                                   "leader": 1, "leaderEpoch": 0, "partitionEpoch": 0}),
        (None, good[:-2]),                       # cut short
        (None, good),
    ])
    img = replay(data)
    assert [i.kind for i in img.issues] == ["error"]
    assert img.issues[0].raw == good[:-2]
    assert img.partition("a", 0)["partitionEpoch"] == 1


def test_random_partition_bytes_never_crash():
    import random
    rnd = random.Random(11)
    good = encode_record("PartitionChangeRecord", {"partitionId": 0, "topicId": TID, "isr": [1, 2],
                                                   "eligibleLeaderReplicas": [3]}, 2)
    recs = [_frame("TopicRecord", {"name": "a", "topicId": TID})]
    for _ in range(3000):
        b = bytearray(good)
        for _ in range(rnd.randint(1, 4)):
            b[rnd.randrange(3, len(b))] = rnd.randrange(256)
        recs.append((None, bytes(b[: rnd.randint(3, len(b))])))
    img = replay(_log(recs))          # every bad row is an issue, nothing raises
    assert all(i.kind in ("error", "invalid") for i in img.issues)


def test_generated_log_matches_a_plain_replay(tmp_path):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from gen_kraft_log import generate
    from kcodec.kraft import iter_log
    generate(str(tmp_path), topics=50, partitions=400, changes=3000, batch=97)
    rows = [{"batch": {"is_control": e.control_type is not None},
             "value_hex": e.value.hex()} for e in iter_log(tmp_path)]
    expected = _naive(rows)
    img = replay(tmp_path)
    assert img.partition_count() == len(expected) == 400 and not img.issues
    for (t, pid), want in expected.items():
        got = img.partition(t, pid)
        assert {k: got[k] for k in want} == want, (t, pid)


def test_compressed_batches_replay_in_log_order():
    # a gzip batch between plain ones: its records are applied where they sit in the log
    pytest.importorskip("cramjam")
    t2 = uuid.UUID(int=8)
    part = {"partitionId": 0, "topicId": TID, "replicas": [1], "isr": [1], "leader": 1,
            "leaderEpoch": 0, "partitionEpoch": 0}
    data = (log.encode_batch([_frame("TopicRecord", {"name": "a", "topicId": TID})], base_offset=0)
            + log.encode_batch([_frame("PartitionRecord", part),
                                _frame("RemoveTopicRecord", {"topicId": TID}),
                                _frame("TopicRecord", {"name": "b", "topicId": t2})],
                               base_offset=1, compression=1)
            + log.encode_batch([_frame("PartitionRecord", dict(part, topicId=t2, leader=2))],
                               base_offset=4))
    img = replay(data)
    assert img.issues == [] and img.topic_names() == ["b"]
    assert img.partition("b", 0)["leader"] == 2 and img.last_offset == 4


@pytest.mark.parametrize("twin", [False, True], ids=["kernel", "python-twin"])
def test_topic_lookup_agrees_with_a_dict_through_adds_and_removals(twin, monkeypatch):
    # the id index is an open-addressing table with deletion by backward shift: churn it
    # (small ids, many sharing a probe run) and compare with a plain dict at every step
    import random
    from kcodec.kraft import _image_py, image as image_mod
    from kcodec.kraft.image import Topics
    if twin:
        monkeypatch.setattr(image_mod, "_kernels", _image_py)
    rnd = random.Random(7)
    pool = [int(rnd.random() < 0.5) * rnd.getrandbits(128) + i for i in range(300)]
    pool = [x.to_bytes(16, "little") for x in pool]
    t, want = Topics(), {}
    for step in range(2000):
        b = rnd.choice(pool)
        if b in want and rnd.random() < 0.6:
            t.remove(want.pop(b))
        elif b not in want:
            want[b] = t.add(f"t{step}", b)
        if step % 50 == 0 or step > 1950:
            probe = pool[:150] + [bytes(16)]
            ids = np.frombuffer(b"".join(probe), np.uint8).reshape(-1, 16)
            assert t.lookup(ids).tolist() == [want.get(x, -1) for x in probe]


@pytest.mark.parametrize("twin", [False, True], ids=["kernel", "python-twin"])
def test_id_index_kernel_checks_its_arguments(twin):
    from kcodec.kraft import _image_py
    _image = _image_py if twin else pytest.importorskip("kcodec.kraft._image")
    keys = np.zeros((2, 16), np.uint8)
    with pytest.raises(ValueError):
        _image.ids_find(keys, np.full(6, -1, np.int32), keys)          # not a power of two
    with pytest.raises(ValueError):
        _image.ids_put(keys, np.full(2, -1, np.int32), np.array([0, 1], np.int32))   # would fill
    with pytest.raises(IndexError):
        _image.ids_put(keys, np.full(8, -1, np.int32), np.array([2], np.int32))


@needs_fixture
def test_decode_and_replay_never_import_pandas():
    from ._shared import run_without_pandas
    run_without_pandas("from kcodec.kraft import replay, iter_record_columns\n"
                       f"replay({str(META)!r})\n"
                       f"sum(b.num_rows for _, _, b in iter_record_columns({str(META)!r}))\n")


def test_partition_index_finds_sparse_and_unknown_partitions():
    # the kernel guesses topic start + partition id; gaps, unknown topics and partitions
    # beyond the guess go through its binary search
    import numpy as np
    from kcodec.kraft.image import Partitions
    p = Partitions()
    keys = np.array([(0 << 32) | 0, (0 << 32) | 5, (0 << 32) | 7, (2 << 32) | 1, (2 << 32) | 2], np.int64)
    p.topic.extend((keys >> 32).astype(np.int32))
    p.partition.extend((keys & 0xFFFFFFFF).astype(np.int32))
    p.alive.extend(np.ones(5, bool))
    p.index_add(keys, np.arange(5, dtype=np.int64))
    topic = np.array([0, 0, 0, 0, 1, 2, 2, 2, 3, -1], np.int32)
    part = np.array([0, 5, 7, 1, 0, 1, 2, 0, 0, 0], np.int32)
    assert p.find(topic, part).tolist() == [0, 1, 2, -1, -1, 3, 4, -1, -1, -1]
    assert p.lookup(np.array([(2 << 32) | 2], np.int64)).tolist() == [4]


def test_columns_in_mappings_grow_and_pickle(monkeypatch):
    # large columns live in private anonymous mappings that grow in place; a view held
    # elsewhere pins the mapping (the column copies instead), and they pickle as arrays
    import pickle
    import numpy as np
    from kcodec.kraft import _columns
    monkeypatch.setattr(_columns, "_MAPPED", 64)
    c = _columns.Column("int32")
    c.extend(np.arange(10, dtype=np.int32))
    c.extend(np.zeros(40, np.int32))
    held = c.data[:5]
    c.extend(np.arange(100, dtype=np.int32))           # grows while `held` pins the mapping
    c.extend(np.full(300, 7, np.int32))                # grows in place
    want = np.concatenate([np.arange(10), np.zeros(40), np.arange(100), np.full(300, 7)])
    assert c.view.tolist() == want.tolist() and held.tolist() == [0, 1, 2, 3, 4]
    assert not c.data[c.n:].any()
    d = pickle.loads(pickle.dumps(c))
    assert d.view.tolist() == want.tolist()
    d.extend(np.ones(1000, np.int32))
    assert d.n == 1450 and int(d.view.sum()) == int(want.sum()) + 1000


def test_python_twin_of_the_kernels_replays_the_same(tmp_path, monkeypatch):
    # installs without the compiled extensions replay through kcodec.kraft._image_py
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from gen_kraft_log import generate
    from kcodec.kraft import _image_py
    from kcodec.kraft import image as image_mod
    generate(str(tmp_path), topics=30, partitions=200, changes=1500, batch=61)
    native = replay(tmp_path)
    monkeypatch.setattr(image_mod, "_kernels", _image_py)
    twin = replay(tmp_path)
    assert native.issues == twin.issues == [] and twin.partition_count() == 200
    for t in native.topic_names():
        assert twin.topic(t) == native.topic(t)
    ids = np.frombuffer(b"".join(u.bytes for u in native.topics.ids), np.uint8).reshape(-1, 16)
    assert twin.topics.lookup(ids).tolist() == native.topics.lookup(ids).tolist() == list(range(30))
