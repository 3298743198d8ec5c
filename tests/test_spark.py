"""kcodec.spark: the column functions' kernels (no Spark), then the Spark functions, SQL,
read_log, the assignor what-ifs and the ``kcodec analyze`` job on one shared session."""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")

import kcodec
from kcodec.consumer import read_assignment_raw, read_subscription_raw
from kcodec.errors import KcodecError
from kcodec.offsets import decode_record, fold_log

from ._shared import fixtures_dir, read_jsonl, vectors_dir

K = pytest.importorskip("kcodec.spark._kernels")
from kcodec.spark._types import for_spark, spark_arrow_type  # noqa: E402

FIX = fixtures_dir()
OFFSETS = FIX / "consumer_offsets"
needs_fixtures = pytest.mark.skipif(not OFFSETS.exists(), reason="shared fixtures missing")


def _norm(v):
    """Rows from Arrow or Spark in one comparable form."""
    if hasattr(v, "asDict"):
        return _norm(v.asDict(recursive=True))
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    return v


def _strip(v):
    """Without empty unknown-tagged-field lists (kcodec's dicts leave them out)."""
    if isinstance(v, dict):
        return {k: _strip(x) for k, x in v.items() if not (k == "_unknown_tagged_fields" and not x)}
    if isinstance(v, list):
        return [_strip(x) for x in v]
    return v


def _fixture_pairs():
    out = []
    for r in read_jsonl(OFFSETS / "segment_records.jsonl"):
        if r.get("is_control"):
            continue
        k = bytes.fromhex(r["key_hex"]) if r.get("key_hex") is not None else None
        v = bytes.fromhex(r["value_hex"]) if r.get("value_hex") is not None else None
        out.append((k, v))
    return out


def _expected_offsets(pairs, record_types=None):
    typ = K.offsets_type(record_types)
    rows = [K._offsets_row(decode_record(k, v, errors="report"), typ) for k, v in pairs]
    return pa.array(rows, typ).to_pylist()


# --------------------------------------------------------------------------- kernels (no Spark)

_SELECTIONS = [None, "all", ["OffsetCommit"], ["ConsumerGroupMemberMetadata", "ShareGroupMemberMetadata",
                                                 "StreamsGroupTopology"]]


@needs_fixtures
@pytest.mark.parametrize("binary", [pa.binary(), pa.large_binary()], ids=["binary", "large_binary"])
@pytest.mark.parametrize("record_types", _SELECTIONS, ids=["default", "all", "commits", "kip848"])
def test_offsets_kernel_equals_single_record_api(binary, record_types):
    pairs = _fixture_pairs()
    assert len(pairs) > 300
    got = K.decode_offsets(pa.array([k for k, _ in pairs], binary), pa.array([v for _, v in pairs], binary),
                           record_types=record_types)
    exp = _expected_offsets(pairs, record_types)
    assert got.to_pylist() == exp
    assert {1, 2, 3, 5} <= {r["record_type"] for r in exp}
    if record_types in (None, "all"):
        # members of classic consumer groups come with decoded subscriptions/assignments
        gm = [r for r in exp if r["GroupMetadataValue"] and r["GroupMetadataValue"]["members"]]
        assert gm and gm[0]["members"][0]["subscription"]["value"]["topics"]


@needs_fixtures
@pytest.mark.parametrize("record_types", _SELECTIONS, ids=["default", "all", "commits", "kip848"])
def test_offsets_kernel_builds_spark_types_directly(record_types):
    # spark=True is the column function's path: Spark's types built as the rows are
    # shaped, not cast afterwards; same rows (bad ones and the exact path's included)
    _, _, bad = _bad_rows()
    pairs = _fixture_pairs() + bad
    keys, vals = pa.array([k for k, _ in pairs], pa.large_binary()), pa.array([v for _, v in pairs], pa.binary())
    got = K.decode_offsets(keys, vals, record_types=record_types, spark=True)
    assert got.type == spark_arrow_type(K.offsets_type(record_types), nullable_top=True)
    assert got.to_pylist() == _expected_offsets(pairs, record_types)
    assert for_spark(K.decode_offsets(keys, vals, record_types=record_types)).equals(got)
    # a batch of one record type, and one slice of a batch
    one = [i for i, (k, _) in enumerate(pairs) if k and k[:2] == b"\x00\x01"]
    sub = pa.array([pairs[i][0] for i in one]), pa.array([pairs[i][1] for i in one])
    assert (K.decode_offsets(*sub, record_types=record_types, spark=True).to_pylist()
            == _expected_offsets([pairs[i] for i in one], record_types))
    assert (K.decode_offsets(keys.slice(7, 40), vals.slice(7, 40), record_types=record_types, spark=True)
            .to_pylist() == _expected_offsets(pairs[7:47], record_types))


@needs_fixtures
def test_offsets_record_types_choose_value_structs_and_keep_every_row():
    pairs = _fixture_pairs()
    keys = pa.array([k for k, _ in pairs], pa.binary())
    vals = pa.array([v for _, v in pairs], pa.binary())
    full = K.decode_offsets(keys, vals, record_types="all").to_pylist()
    assert all(r["raw_value"] is None for r in full if r["_error"] is None and not r["unknown"])
    values = [n for n in K.offsets_type("all").names if n.endswith("Value")]
    assert len(values) == len(kcodec.offsets.record_types())
    default = K.offsets_type()
    assert [n for n in default.names if n.endswith("Value")] == [
        "LegacyOffsetCommitValue", "OffsetCommitValue", "GroupMetadataValue"]
    assert "members" in default.names and "key" not in default.names
    assert K.offsets_type("all").field("key").type.names == ["memberId", "regularExpression"]
    got = K.decode_offsets(keys, vals, record_types=["OffsetCommit"])
    names = got.type.names
    assert "OffsetCommitValue" in names and "GroupMetadataValue" not in names and "members" not in names
    assert len(got) == len(full)            # rows of other types stay, with type, group and raw bytes
    same = [n for n in names if n != "raw_value"]
    for g, f, (_, v) in zip(got.to_pylist(), full, pairs):
        assert {n: g[n] for n in same} == {n: f[n] for n in same}
        other = f["record_type"] != 1 and f["OffsetCommitValue"] is None
        assert g["raw_value"] == (v if other and v is not None else f["raw_value"])
    assert any(g["raw_value"] for g in got.to_pylist())
    assert K.offsets_type("OffsetCommit") == K.offsets_type(["OffsetCommit"])
    with pytest.raises(ValueError, match="unknown record types"):
        K.offsets_type(["OffsetCommits"])


def _vectors():
    return [v for v in read_jsonl(vectors_dir() / "messages.jsonl")]


def _expected_message(name, version, data):
    try:
        return {**K._py(kcodec.decode(name, data, version)), "_error": None}
    except KcodecError as e:
        return {"_error": str(e)}


@pytest.mark.skipif(not (vectors_dir() / "messages.jsonl").exists(), reason="shared vectors missing")
def test_message_kernel_agrees_with_decode_on_every_vector():
    vecs = _vectors()
    groups = {}
    for v in vecs:
        groups.setdefault((v["schema"], v["version"]), []).append(bytes.fromhex(v["hex"]))
    n = 0
    for (name, version), datas in groups.items():
        got = K.decode_message(pa.array(datas, pa.binary()), name, version).to_pylist()
        for g, d in zip(got, datas):
            exp = _expected_message(name, version, d)
            assert exp["_error"] is None, (name, version)
            assert _strip(g) == _strip(exp), (name, version)
            n += 1
        # the Spark-side cast takes every type Kafka has
        for_spark(K.decode_message(pa.array(datas, pa.binary()), name, version))
    assert n == len(vecs) > 1000


def test_types_for_spark():
    t = pa.struct([("a", pa.uint16()), ("b", pa.uint32()), ("id", pa.binary(16)),
                   ("l", pa.list_(pa.struct([pa.field("x", pa.uint16(), nullable=False)])))])
    st = spark_arrow_type(t)
    assert [f.type for f in st][:3] == [pa.int32(), pa.int64(), pa.binary()]
    arr = pa.array([{"a": 65535, "b": 4294967295, "id": b"\x01" * 16, "l": [{"x": 7}]}, None], t)
    out = for_spark(arr)
    assert out.to_pylist() == [{"a": 65535, "b": 4294967295, "id": b"\x01" * 16, "l": [{"x": 7}]}, None]


def _bad_rows():
    key = struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 3}, 0)
    val = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", {"offset": 42, "commitTimestamp": 7}, 4)
    flipped = bytearray(val)
    flipped[-1] ^= 0x05        # the tagged-field count: 5 fields that are not there
    unknown = struct.pack(">h", 99) + b"whatever"
    return key, val, [(key, val), (key, val[:9]), (key, bytes(flipped)), (unknown, b"\x00\x00xyz"), (key[:1], val),
                      (key, None)]


def test_permissive_and_failfast_offsets():
    key, val, rows = _bad_rows()
    keys = pa.array([k for k, _ in rows], pa.binary())
    vals = pa.array([v for _, v in rows], pa.binary())
    out = K.decode_offsets(keys, vals).to_pylist()
    assert out[0]["OffsetCommitValue"]["offset"] == 42 and out[0]["_error"] is None
    # truncated: null value, the reason names message, version, field and byte offset
    assert out[1]["OffsetCommitValue"] is None
    assert re.search(r"OffsetCommitValue v4, field \w+, byte offset \d+", out[1]["_error"])
    assert out[2]["OffsetCommitValue"] is None and out[2]["_error"]
    # an unknown record type is data, not an error (KIP-915)
    assert out[3]["unknown"] and out[3]["record_type"] == 99 and out[3]["_error"] is None
    assert out[3]["raw_value"] == b"\x00\x00xyz" and out[1]["raw_value"] == val[:9]
    assert out[4]["_error"].startswith("key:")
    assert out[5]["tombstone"] and out[5]["group"] == "g" and out[5]["_error"] is None
    assert len(out) == len(rows)       # nothing dropped
    for r, (k, v) in zip(out, rows):
        assert r["_error"] == decode_record(k, v, errors="report").error
    with pytest.raises(K.FailFastError, match=r"row 1 of the batch .*OffsetCommitValue v4"):
        K.decode_offsets(keys, vals, mode=K.FAILFAST)


def test_protocol_kernel_matches_consumer_protocol():
    subs = [kcodec.encode("ConsumerProtocolSubscription",
                          {"topics": ["a", "b"], "ownedPartitions": [{"topic": "a", "partitions": [0, 1]}],
                           "generationId": 5, "rackId": "r1"}, v) for v in range(4)]
    datas = [struct.pack(">h", v) + s for v, s in enumerate(subs)]
    datas += [struct.pack(">h", 7) + subs[3] + b"future", datas[3] + b"tail", b"\x00", struct.pack(">h", -1), None]
    got = K.decode_protocol(pa.array(datas, pa.binary()), "ConsumerProtocolSubscription").to_pylist()
    for g, d in zip(got, datas):
        if d is None:
            assert g["_error"] is None and g["version"] is None
            continue
        try:
            raw = read_subscription_raw(d)
        except KcodecError as e:
            assert g["_error"] == str(e)
            continue
        assert g["_error"] is None and g["version"] == raw.version
        exp = _strip(K._py(raw.value))
        assert {k: g[k] for k in exp} == exp
    asg = struct.pack(">h", 1) + kcodec.encode("ConsumerProtocolAssignment",
                                               {"assignedPartitions": [{"topic": "a", "partitions": [2]}]}, 1)
    g = K.decode_protocol(pa.array([asg]), "ConsumerProtocolAssignment").to_pylist()[0]
    assert g["assignedPartitions"] == _strip(K._py(read_assignment_raw(asg).value))["assignedPartitions"]


# --------------------------------------------------------------------------- Spark

pyspark = pytest.importorskip("pyspark")


@pytest.fixture(scope="session")
def spark():
    from kcodec.spark._session import session
    # the workers run this interpreter (the one with this kcodec), as kcodec analyze's do
    s = session("kcodec-tests", "local[2]", {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"})
    yield s
    s.stop()


@pytest.fixture(scope="session")
def offsets_df(spark):
    from kcodec.spark import read_log
    return read_log(spark, str(OFFSETS / "segments")).cache()


def _dump_counts(path: Path):
    """Records per segment file as kafka-dump-log counts them (sum of batch counts)."""
    counts, cur = {}, None
    for line in path.read_text().splitlines():
        if line.startswith("Dumping "):
            cur = line.split(" ", 1)[1].strip()
            counts[cur] = 0
        elif line.startswith("baseOffset:"):
            counts[cur] += int(re.search(r" count: (\d+)", line).group(1))
    return counts


@needs_fixtures
@pytest.mark.parametrize("tree,dump", [
    ("consumer_offsets/segments", "consumer_offsets/kafka-dump-log.txt"),
    ("cluster_metadata/segments", "cluster_metadata/kafka-dump-log.txt"),
    ("other_internal/segments", None),
])
def test_read_log_counts_match_kafka_dump_log(spark, tree, dump):
    from pyspark.sql import functions as F
    from kcodec.spark import read_log
    df = read_log(spark, str(FIX / tree))
    got = {r["f"]: r["n"] for r in df.where(F.col("error").isNull())
           .groupBy(F.regexp_extract("file", r"((?:[^/]+-\d+/)?[^/]+)$", 1).alias("f"))
           .agg(F.count("*").alias("n")).collect()}
    if dump is None:
        exp = {}
        for d in FIX.glob(tree.split("/")[0] + "/*.kafka-dump-log.txt"):
            exp.update(_dump_counts(d))
    else:
        exp = _dump_counts(FIX / dump)
    exp = {k: v for k, v in exp.items() if v}
    assert got == exp
    assert df.where(F.col("error").isNotNull()).count() == 0
    if tree.startswith("consumer_offsets"):
        row = df.where("partition = 0 and offset = 3").first()
        assert row.topic == "__consumer_offsets" and row.key[:2] == b"\x00\x01" and not row.is_control
        assert df.where("is_control").select("control_type").distinct().count() >= 1


@needs_fixtures
def test_read_log_corrupted_copy_loses_no_readable_record(spark, tmp_path):
    from pyspark.sql import functions as F
    from kcodec.spark import read_log
    src = OFFSETS / "segments"
    dst, _ = _corrupt_copy(tmp_path)
    good = read_log(spark, str(src)).where(F.col("error").isNull()).select("partition", "offset")
    bad = read_log(spark, str(dst))
    errors = bad.where(F.col("error").isNotNull()).collect()
    assert errors and all(e.partition == 27 for e in errors)
    assert "bad_crc" in errors[0].error or "crc" in errors[0].error.lower()
    kept = bad.where(F.col("error").isNull()).select("partition", "offset")
    # every record outside the damaged partition survives, and the damaged one keeps its readable records
    assert good.where("partition != 27").subtract(kept).count() == 0
    assert kept.where("partition = 27").count() > 0


@needs_fixtures
def test_read_log_fused_decode_of_a_corrupted_copy_is_the_column_functions_on_its_data_rows(tmp_path):
    # the task side alone (no Spark): control records and the corrupt batch's row get a null
    # struct, every other row what the column function's kernel gives for it
    import numpy as np
    import pyarrow as pa
    from kcodec.spark._kernels import decode_offsets
    from kcodec.spark._scan import Split, decode_batch, split_batches
    _, seg = _corrupt_copy(tmp_path)
    batches = [decode_batch(b, "offsets", {}) for b in split_batches(Split(str(seg), 0, None))]
    t = pa.Table.from_batches(batches)
    data = ~t["is_control"].fill_null(True).to_numpy() & t["error"].is_null().to_numpy()
    assert (~t["error"].is_null().to_numpy()).any() and data.any()
    got = t["decoded"].combine_chunks()
    assert got.is_null().to_numpy(zero_copy_only=False)[~data].all()
    rows = pa.array(np.flatnonzero(data))
    exp = decode_offsets(t["key"].combine_chunks().take(rows), t["value"].combine_chunks().take(rows), spark=True)
    assert got.take(rows).equals(exp)


@needs_fixtures
def test_from_consumer_offsets_equals_single_record_api(spark, offsets_df):
    from kcodec.spark import from_consumer_offsets
    sels = {"default": None, "all": "all", "kip848": _SELECTIONS[3]}
    rows = (offsets_df.where("not is_control")
            .select("partition", "offset", "key", "value",
                    *[from_consumer_offsets("key", "value", None if rts is None else {"record_types": rts}).alias(n)
                      for n, rts in sels.items()])
            .orderBy("partition", "offset").collect())
    assert len(rows) > 300
    pairs = [(bytes(r.key), None if r.value is None else bytes(r.value)) for r in rows]
    for name, rts in sels.items():
        exp = for_spark(pa.array(_expected_offsets(pairs, rts), K.offsets_type(rts))).to_pylist()
        for r, e in zip(rows, exp):
            assert _norm(r[name]) == _norm(e), (name, r.partition, r.offset)
    narrow = (offsets_df.where("not is_control")
              .select(from_consumer_offsets("key", "value", {"record_types": ["OffsetCommit"]}).alias("r"))
              .select("r.record_type", "r.group", "r.OffsetCommitValue.offset").collect())
    assert sorted(map(tuple, narrow), key=repr) == sorted(
        ((r["all"].record_type, r["all"].group, (r["all"].OffsetCommitValue or {"offset": None})["offset"])
         for r in rows), key=repr)


@needs_fixtures
def test_subscription_and_assignment_columns(spark, offsets_df):
    from pyspark.sql import functions as F
    from kcodec.spark import from_consumer_assignment, from_consumer_offsets, from_consumer_subscription
    m = (offsets_df.where("not is_control").select(from_consumer_offsets("key", "value").alias("r"))
         .where("r.GroupMetadataValue.protocolType = 'consumer'")
         .select(F.explode("r.GroupMetadataValue.members").alias("m"))
         .select("m.subscription", "m.assignment",
                 from_consumer_subscription("m.subscription").alias("s"),
                 from_consumer_assignment("m.assignment").alias("a")).collect())
    assert len(m) > 5
    for row in m:
        raw = read_subscription_raw(bytes(row.subscription))
        assert row.s.version == raw.version and row.s._error is None
        assert list(row.s.topics) == raw.value["topics"]
        asg = read_assignment_raw(bytes(row.assignment))
        assert _strip(_norm(row.a.assignedPartitions)) == _strip(K._py(asg.value)["assignedPartitions"])


@pytest.mark.skipif(not (vectors_dir() / "messages.jsonl").exists(), reason="shared vectors missing")
def test_from_kafka_message_and_back_on_vectors(spark):
    from pyspark.sql import functions as F
    from kcodec.spark import from_kafka_message, to_kafka_message
    names = ("OffsetCommitValue", "ConsumerGroupMemberMetadataValue", "ConsumerProtocolSubscription")
    vecs = [v for v in _vectors() if v["schema"] in names]
    df = spark.createDataFrame([(v["schema"], v["version"], bytearray.fromhex(v["hex"])) for v in vecs],
                               "schema string, version int, data binary").cache()
    pairs = sorted({(v["schema"], v["version"]) for v in vecs})
    assert len(pairs) >= 10
    for name, version in pairs:
        sub = df.where((F.col("schema") == name) & (F.col("version") == version))
        m = from_kafka_message("data", name, version)
        rows = sub.select("data", m.alias("m"), to_kafka_message(m, name, version).alias("b")).collect()
        for r in rows:
            exp = _expected_message(name, version, bytes(r.data))
            assert _strip(_norm(r.m)) == _strip(_norm(exp)), (name, version)
            assert bytes(r.b) == bytes(r.data), (name, version)


@pytest.mark.skipif(not (vectors_dir() / "messages.jsonl").exists(), reason="shared vectors missing")
def test_from_kafka_message_agrees_with_decode_on_every_vector_in_spark(spark):
    """Every vector through a real DataFrame: one job per chunk of (message, version)
    pairs, one column function per pair, each fed only its own rows (null otherwise)."""
    from pyspark.sql import functions as F
    from kcodec.spark import from_kafka_message
    vecs = _vectors()
    pairs = sorted({(v["schema"], v["version"]) for v in vecs})
    pid = {p: j for j, p in enumerate(pairs)}
    df = spark.createDataFrame([(i, pid[v["schema"], v["version"]], bytearray.fromhex(v["hex"]))
                                for i, v in enumerate(vecs)], "i int, p int, data binary").coalesce(1).cache()
    chunk = 60      # columns per job: far more makes Spark's planning slower than the jobs it saves
    seen = 0
    for c in range(0, len(pairs), chunk):
        cols = [from_kafka_message(F.when(F.col("p") == j, F.col("data")), *pairs[j]).alias(f"m{j}")
                for j in range(c, min(c + chunk, len(pairs)))]
        for r in df.where(F.col("p").between(c, c + chunk - 1)).select("i", "p", "data", *cols).collect():
            name, version = pairs[r.p]
            exp = _expected_message(name, version, bytes(r.data))
            assert exp["_error"] is None and _strip(_norm(r[f"m{r.p}"])) == _strip(_norm(exp)), (name, version)
            seen += 1
    assert seen == len(vecs) > 1000


def test_modes_in_spark(spark):
    from pyspark.sql.utils import PythonException
    from kcodec.spark import from_consumer_offsets, from_kafka_message
    key, val, rows = _bad_rows()
    df = spark.createDataFrame([(k, v) for k, v in rows], "key binary, value binary")
    out = df.select(from_consumer_offsets("key", "value").alias("r")).collect()
    assert len(out) == len(rows)
    assert out[1].r.OffsetCommitValue is None and "OffsetCommitValue v4" in out[1].r._error
    assert out[3].r.unknown and out[3].r._error is None
    with pytest.raises(PythonException, match="FailFastError|row 1 of the batch"):
        df.select(from_consumer_offsets("key", "value", {"mode": "FAILFAST"}).alias("r")).collect()
    v = df.selectExpr("substring(value, 3) AS body")
    m = v.select(from_kafka_message("body", "OffsetCommitValue", 4).alias("m")).collect()
    assert m[0].m.offset == 42 and m[1].m.offset is None and "byte offset" in m[1].m._error
    with pytest.raises(ValueError):
        from_kafka_message("body", "OffsetCommitValue", 4, {"mode": "LENIENT"})


@needs_fixtures
def test_sql_registration(spark, offsets_df):
    from kcodec.spark import register
    register(spark, [("OffsetCommitValue", 4)])
    offsets_df.createOrReplaceTempView("offsets")
    rows = spark.sql("SELECT r.group AS g, count(*) AS n FROM (SELECT kcodec_consumer_offsets(key, value) AS r "
                     "FROM offsets WHERE NOT is_control) WHERE r.record_type = 1 GROUP BY r.group").collect()
    assert {r.g for r in rows} >= {"aio-rr", "kp-range"}
    one = spark.sql("SELECT kcodec_OffsetCommitValue_v4(substring(value, 3)).offset AS o FROM offsets "
                    "WHERE partition = 0 AND offset = 3").first()
    assert one.o == 10


@needs_fixtures
def test_assignor_whatif_per_group(spark, offsets_df):
    from kcodec.consumer.whatif import load_scenario, what_if
    from kcodec.spark import assignor_whatif
    rows = assignor_whatif(offsets_df.where("not is_control"), ["range", "cooperative-sticky"],
                           active=True).collect()
    assert rows and all(r.error is None for r in rows)
    assert {r.strategy for r in rows} == {"range", "cooperative-sticky"}
    r = next(r for r in rows if r.group == "aio-rr" and r.strategy == "cooperative-sticky")
    # the same question asked of kcodec.consumer directly, on the group's last GroupMetadataValue with members
    last = None
    for rec in (decode_record(k, v, errors="report") for k, v in _fixture_pairs()):
        if rec.group_id == "aio-rr" and rec.type_name == "GroupMetadata" and (rec.value or {}).get("members"):
            last = rec
    d = what_if(load_scenario({"group": last.value}, "cooperative-sticky"), "cooperative-sticky").to_dict()
    assert (r.members, r.partitions, r.partitions_moved) == (d["members"], d["partitions"], d["partitions_moved"])


class _Imgs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.tables = [], 0

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs))
        elif tag == "table":
            self.tables += 1


@needs_fixtures
def test_analyze_groups_equal_offsets_groups_and_report_renders(spark, tmp_path):
    from kcodec.spark.analyze import analyze, print_summary, sample_path, write_report
    a = analyze(spark, None, str(tmp_path / "out"), downgrade_to="3.9")
    st = fold_log(sample_path())
    assert st.groups == fold_log(str(OFFSETS / "segments")).groups       # the sample is the fixture
    got = {g["group_id"]: (g["type"], g["state"], g["generation"], g["protocol_type"], g["protocol"],
                           g["members"], g["offsets"]) for g in a.groups}
    exp = {gid: (g.type, g.state, g.generation, g.protocol_type, g.protocol, len(g.members), len(g.offsets))
           for gid, g in st.groups.items()}
    assert got == exp
    assert a.deleted_groups == sorted(st.deleted_groups)
    assert a.aborted_records == st.aborted_records
    assert a.records > 300 and a.rebalances and a.commits and a.downgrade is not None
    for t in ("records", "committed_offsets", "groups", "members", "flagged", "partitions"):
        assert list((tmp_path / "out" / t).glob("*.parquet")), t
    # `records`, written by the tasks with pyarrow, holds what read_log's fused decode gives
    # Spark for every data record (the rows Spark's own writer wrote before)
    from pyspark.sql import functions as F
    from kcodec.spark import read_log
    from kcodec.spark.analyze import _type_names
    rows = read_log(spark, sample_path(), decode="offsets", options={"record_types": "all"})
    exp = (rows.where(F.col("error").isNull() & ~F.col("is_control"))
           .select(F.col("topic").alias("log_topic"), F.col("partition").alias("log_partition"),
                   F.col("offset").alias("log_offset"), "timestamp", "producer_id", "is_transactional",
                   "decoded.*")
           .withColumn("type_name", _type_names()[F.col("record_type")]))
    recs = spark.read.parquet(str(tmp_path / "out" / "records"))
    assert recs.columns == exp.columns
    # the same types (nested fields Kafka requires come back nullable from pyarrow's files)
    assert [f.dataType.simpleString() for f in recs.schema] == [f.dataType.simpleString() for f in exp.schema]

    def by_offset(df):
        return sorted((r.asDict(recursive=True) for r in df.collect()),
                      key=lambda r: (r["log_partition"], r["log_offset"]))
    got_rows = by_offset(recs)
    assert len(got_rows) == a.records and got_rows == by_offset(exp)
    offs = spark.read.parquet(str(tmp_path / "out" / "committed_offsets")).collect()
    assert {(o.group_id, o.topic, o.partition): o.offset for o in offs} == {
        (gid, t, p): c.offset for gid, g in st.groups.items() for (t, p), c in g.offsets.items()}
    from rich.console import Console
    con = Console(record=True, width=120)
    print_summary(a, con)
    text = con.export_text()
    assert "Groups by state and protocol" in text and "kp-range" in text
    report = tmp_path / "r.html"
    write_report(a, str(report))          # kcodec.spark.report (tests/test_report.py renders it in Chromium)
    text = report.read_text()
    p = _Imgs()
    p.feed(text)
    assert p.imgs == [] and p.tables >= 3
    assert "Rebalances and commits per" in text and "Assignors in use" in text and "Deleted groups" in text
    assert "Downgrade blockers" in text


@needs_fixtures
def test_analyze_kafka_source_dump(spark, offsets_df, tmp_path):
    """A dump of the log's rows folds as the segments do: with the batch columns (control
    records, transactions) every group, committed offset and aborted record equals
    ``offsets groups``' fold of the segments; a Kafka-source shaped dump (key/value only, no
    control records) still gives every group."""
    from kcodec.spark.analyze import analyze
    st = fold_log(str(OFFSETS / "segments"))
    full = str(tmp_path / "full.parquet")
    offsets_df.write.parquet(full)
    a = analyze(spark, full)
    assert {g["group_id"]: (g["type"], g["state"], g["generation"], g["protocol_type"], g["protocol"],
                            g["members"], g["offsets"]) for g in a.groups} == {
        gid: (g.type, g.state, g.generation, g.protocol_type, g.protocol, len(g.members), len(g.offsets))
        for gid, g in st.groups.items()}
    assert a.deleted_groups == sorted(st.deleted_groups) and a.aborted_records == st.aborted_records
    seg = analyze(spark, str(OFFSETS / "segments"))
    assert a.records == seg.records
    # the report's timeline leaves the tasks compressed on this path too, and equals the segments'
    assert type(a.group_events) is type(seg.group_events) and len(a.group_events) > 0
    assert list(a.group_events) == list(seg.group_events) and list(a.commit_counts) == list(seg.commit_counts)
    dump = str(tmp_path / "dump.parquet")
    (offsets_df.where("not is_control")
     .select("topic", "partition", "offset", "timestamp", "timestampType", "key", "value")
     .write.parquet(dump))
    assert {g["group_id"] for g in analyze(spark, dump).groups} == set(st.groups)


def _commit_counts():
    """Offset commits (non-tombstone, any version) per group in the fixture."""
    counts = {}
    for k, v in _fixture_pairs():
        r = decode_record(k, v, errors="report")
        if r.type_name in ("OffsetCommit", "LegacyOffsetCommit") and not r.tombstone and not r.error:
            counts[r.group_id] = counts.get(r.group_id, 0) + 1
    return counts


def _assert_summary(stdout, st):
    for gid, g in st.groups.items():
        assert re.search(rf"{re.escape(gid)}\s*│\s*{g.type}\s*│\s*{g.state}", stdout), gid


def _env_without(vbin):
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON",
                                                            "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and os.path.realpath(p) != os.path.realpath(vbin))
    return env


@needs_fixtures
def test_installed_console_script_and_job_without_the_venv_on_path(tmp_path):
    """A venv that is not activated (its bin not on PATH, no PYSPARK_PYTHON): the console
    script and ``python job.py`` run their workers on their own interpreter."""
    vbin = os.path.dirname(sys.executable)
    script = os.path.join(vbin, "kcodec")
    if not os.path.exists(script):
        pytest.skip("kcodec's console script is not installed beside this interpreter")
    env = _env_without(vbin)
    st = fold_log(str(OFFSETS / "segments"))
    r = subprocess.run([script, "analyze", "--no-progress"], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    _assert_summary(r.stdout, st)
    # Spark's log lines kept off the console (the JVM's own "WARNING: Using incubator modules" stays)
    assert not re.search(r" (WARN|INFO) |Setting default log level|log4j", r.stderr), r.stderr[-2000:]
    import kcodec.spark.job as job
    r = subprocess.run([sys.executable, job.__file__, "--master", "local[1]", "--no-progress",
                        "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    _assert_summary(r.stdout, st)
    assert list((tmp_path / "out" / "records").glob("*.parquet"))


def _doc_blocks(path):
    return re.findall(r"```bash\n(.*?)```", path.read_text(), re.S)


@needs_fixtures
def test_cluster_recipe_multi_process(tmp_path):
    """docs/spark-cluster.md, run as written: a packed environment through --archives, a
    standalone master and worker on 127.0.0.1 (separate JVMs and Python workers), the
    analyze job and a column-function script through spark-submit."""
    doc = Path(__file__).resolve().parent.parent / "docs" / "spark-cluster.md"
    if not doc.exists():
        pytest.skip("docs/spark-cluster.md is not beside the tests (installed package)")
    if shutil.which("java") is None:
        pytest.skip("no java")
    import pyspark
    dist = tmp_path / "dist"
    dist.mkdir()
    wheels = os.environ.get("KCODEC_WHEEL_DIR")
    if wheels and list(Path(wheels).glob("kcodec-*.whl")):
        for w in Path(wheels).glob("kcodec-*.whl"):
            shutil.copy(w, dist)
    else:
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "-w", str(dist), str(doc.parent.parent)], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-3000:]
    env = _env_without(os.path.dirname(sys.executable))
    env["SPARK_HOME"] = os.path.dirname(pyspark.__file__)
    blocks = _doc_blocks(doc)
    assert len(blocks) == 5
    stop = blocks[-1]
    try:
        r = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(blocks[:-1])], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=1200)
        assert r.returncode == 0, (r.stdout[-2000:], r.stderr[-4000:])
    finally:
        subprocess.run(["bash", "-c", stop], cwd=tmp_path, env=env, capture_output=True, timeout=60)
    st = fold_log(str(OFFSETS / "segments"))
    _assert_summary(r.stdout, st)
    assert list((tmp_path / "analysis" / "committed_offsets").glob("*.parquet"))
    assert (tmp_path / "analysis.html").stat().st_size > 10000
    got = dict(line.split("\t") for line in r.stdout.splitlines() if "\t" in line)
    assert {g: int(n) for g, n in got.items()} == _commit_counts()
    # executors of the worker ran Python from the archive, unpacked in their directories
    assert list((tmp_path / "spark-work").glob("app-*/*/env/bin/python")), list((tmp_path / "spark-work").rglob("*"))[:20]


def _log_rows_reference(tree):
    """Every record of the log's intact batches, from kcodec.log's per-record API."""
    from kcodec.log import iter_batches, parse_control_record
    out = {}
    for b in iter_batches(str(tree)):
        if b.error is not None:
            continue
        for r in b.records:
            part = int(os.path.basename(os.path.dirname(b.file)).rsplit("-", 1)[1])
            ctl = parse_control_record(r).type_name if b.is_control else None
            out[(part, r.offset)] = (r.timestamp, r.key, r.value, [tuple(h) for h in r.headers], b.base_offset,
                                     b.producer_id, b.producer_epoch, b.partition_leader_epoch,
                                     b.is_transactional, b.is_control, ctl, b.position)
    return out


def _log_rows(df):
    out = {}
    for r in df.where("error is null").collect():
        out[(r.partition, r.offset)] = (int(r.timestamp.timestamp() * 1000 + 0.5), r.key, r.value,
                                        [(h.key, h.value) for h in r.headers], r.batch_base_offset,
                                        r.producer_id, r.producer_epoch, r.partition_leader_epoch,
                                        r.is_transactional, r.is_control, r.control_type, r.batch_position)
    return out


@needs_fixtures
def test_read_log_rows_equal_the_log_readers_records_and_byte_ranges_change_nothing(spark):
    from kcodec.spark import read_log
    exp = _log_rows_reference(OFFSETS / "segments")
    assert len(exp) > 300
    assert _norm(_log_rows(read_log(spark, str(OFFSETS / "segments")))) == _norm(exp)
    # cut into byte ranges of a few batches each (a walk over the batch headers finds the cuts)
    small = read_log(spark, str(OFFSETS / "segments"), split_bytes=600)
    assert small.rdd.getNumPartitions() > 10
    assert _norm(_log_rows(small)) == _norm(exp)


@needs_fixtures
def test_read_log_file_columns_agree_for_a_local_path_a_file_uri_and_the_hadoop_path(spark, tmp_path,
                                                                                    monkeypatch):
    """``topic``/``partition``/``file`` are looked up on the JVM from each row's file number:
    the same rows for a local path, a ``file://`` URI and Spark's ``binaryFile`` path (taken
    for filesystems only Hadoop reads), over several topics and a directory naming none."""
    from kcodec.spark import _source, read_log
    tree = tmp_path / "t"
    shutil.copytree(FIX / "other_internal" / "segments", tree)
    (tree / "plain").mkdir()
    shutil.copy(OFFSETS / "segments" / "__consumer_offsets-0" / "00000000000000000000.log", tree / "plain")

    def rows(path):
        df = read_log(spark, path, decode="offsets")
        assert [f.name for f in df.schema][:3] == ["topic", "partition", "offset"]
        return {(r.file, r.batch_position, r.offset): _norm(r.asDict(recursive=True)) for r in df.collect()}
    local = rows(str(tree))
    assert rows(tree.as_uri()) == local
    monkeypatch.setattr(_source, "readable_by_arrow", lambda p: False)
    assert rows(str(tree)) == local
    seen = {(v["topic"], v["partition"], os.path.basename(os.path.dirname(k[0]))) for k, v in local.items()}
    assert (None, None, "plain") in seen
    assert len({t for t, _, _ in seen}) >= 3
    assert all(d == f"{t}-{q}" for t, q, d in seen if d != "plain")


@needs_fixtures
def test_read_log_fused_offsets_equals_read_log_and_from_consumer_offsets(spark):
    from kcodec.spark import from_consumer_offsets, read_log
    for opts in (None, {"record_types": "all"}, {"fields": ["group", "OffsetCommitValue.offset"]}):
        fused = read_log(spark, str(OFFSETS / "segments"), decode="offsets", options=opts)
        assert fused.where("is_control and decoded is not null").count() == 0
        got = {(r.partition, r.offset): r.decoded for r in fused.where("not is_control").collect()}
        pair = (read_log(spark, str(OFFSETS / "segments")).where("not is_control")
                .select("partition", "offset", from_consumer_offsets("key", "value", opts).alias("d")))
        exp = {(r.partition, r.offset): r.d for r in pair.collect()}
        assert len(got) > 300 and _norm(got) == _norm(exp)
    with pytest.raises(ValueError):
        read_log(spark, str(OFFSETS / "segments"), decode="nope")


def _corrupt_copy(tmp_path):
    dst = tmp_path / "segments"
    shutil.copytree(OFFSETS / "segments", dst)
    for p in dst.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    seg = dst / "__consumer_offsets-27" / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[460] ^= 0x55                  # inside the second batch's records: its CRC no longer matches
    seg.write_bytes(bytes(data))
    return dst, seg


@needs_fixtures
def test_analyze_corrupted_copy_keeps_nothing_of_the_failed_batch(spark, tmp_path):
    from kcodec.log import iter_batches
    from kcodec.spark.analyze import analyze
    dst, seg = _corrupt_copy(tmp_path)
    bad = [b for b in iter_batches(str(seg)) if b.error is not None]
    assert len(bad) == 1
    lost = (bad[0].base_offset, bad[0].base_offset + bad[0].last_offset_delta)
    a = analyze(spark, str(dst), str(tmp_path / "out"))
    assert a.corrupt_batches == 1 and a.flagged_total >= 1
    assert any(r["position"] == bad[0].position and "crc" in r["reason"].lower() for r in a.flagged_rows)
    st = fold_log(str(dst))           # the fold skips the failed batch too
    assert {g["group_id"]: (g["generation"], g["members"], g["offsets"]) for g in a.groups} == {
        gid: (g.generation, len(g.members), len(g.offsets)) for gid, g in st.groups.items()}
    recs = spark.read.parquet(str(tmp_path / "out" / "records"))
    assert recs.where(f"log_partition = 27 and log_offset between {lost[0]} and {lost[1]}").count() == 0
    assert recs.where("log_partition = 27").count() > 0
    flagged = spark.read.parquet(str(tmp_path / "out" / "flagged")).where("error is not null").collect()
    assert any(f.position == bad[0].position and f.log_partition == 27 for f in flagged)
    # the fold's corrupt batches (no second scan) are the rows read_log gives them
    from kcodec.spark import read_log
    raw = read_log(spark, str(dst)).where("error is not null").collect()
    assert sorted((f.log_topic, f.log_partition, f.file, f.position, f.error) for f in flagged
                  if f.file is not None) == sorted(
        (r.topic, r.partition, r.file, r.batch_position, r.error) for r in raw)


@needs_fixtures
def test_analyze_equals_offsets_groups_on_a_generated_multi_partition_log(spark, tmp_path):
    import importlib.util
    gen_py = Path(__file__).resolve().parent.parent / "bench" / "gen_offsets_log.py"
    if not gen_py.exists():
        pytest.skip("bench/ is not beside the tests")
    spec = importlib.util.spec_from_file_location("gen_offsets_log", gen_py)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for i in range(3):      # several segments per partition, each partition its own groups
        gen.generate(str(tmp_path / "log"), 300_000, segment_bytes=100_000, seed=7 + i, partition=i,
                     group_prefix=f"p{i}-")
    from kcodec.spark.analyze import analyze
    a = analyze(spark, str(tmp_path / "log"), str(tmp_path / "out"))
    st = fold_log(str(tmp_path / "log"))
    assert len(st.groups) > 100
    assert {g["group_id"]: (g["type"], g["state"], g["generation"], g["members"], g["offsets"]) for g in a.groups} == {
        gid: (g.type, g.state, g.generation, len(g.members), len(g.offsets)) for gid, g in st.groups.items()}
    offs = spark.read.parquet(str(tmp_path / "out" / "committed_offsets")).collect()
    assert {(o.group_id, o.topic, o.partition): (o.offset, o.log_offset) for o in offs} == {
        (gid, t, p): (c.offset, c.log_offset) for gid, g in st.groups.items() for (t, p), c in g.offsets.items()}
    assert a.aborted_records == st.aborted_records and a.commits and a.rebalances


def _oracle_records() -> int:
    """The __consumer_offsets records a fold reads: the fixture's records minus the
    transaction markers (control batches)."""
    return sum(1 for r in read_jsonl(OFFSETS / "segment_records.jsonl") if not r["batch"]["is_control"])


def _group_view(groups):
    return {g["group_id"]: (g["type"], g["state"], g["generation"], g["members"], g["offsets"]) for g in groups}


@needs_fixtures
def test_analyze_a_broker_log_dir_reads_only_consumer_offsets(spark, tmp_path):
    """A broker's log dir holds every topic: the fold reads __consumer_offsets partitions
    only, __cluster_metadata gives the history, other topics are named as left out."""
    from kcodec import log
    from kcodec.spark.analyze import analyze
    d = tmp_path / "kafka-logs"
    for p in (OFFSETS / "segments").iterdir():
        shutil.copytree(p, d / p.name)
    other = FIX / "other_internal" / "segments"
    for name in ("__share_group_state-0", "__transaction_state-27"):
        shutil.copytree(other / name, d / name)
    shutil.copytree(FIX / "cluster_metadata" / "segments" / "__cluster_metadata-0", d / "__cluster_metadata-0")
    (d / "orders-0").mkdir()
    (d / "orders-0" / "00000000000000000000.log").write_bytes(
        log.encode_batch([(b"order-%d" % i, b"{}") for i in range(10)]))
    a = analyze(spark, str(d))
    st = fold_log(str(OFFSETS / "segments"))
    assert (a.records, a.flagged, a.corrupt_batches, a.errors, a.unknown_records) == (_oracle_records(), 0, 0, [], {})
    assert _group_view(a.groups) == {gid: (g.type, g.state, g.generation, len(g.members), len(g.offsets))
                                     for gid, g in st.groups.items()}
    assert a.left_out == ["__share_group_state-0", "__transaction_state-27", "orders-0"]
    assert a.metadata_source == str(d / "__cluster_metadata-0") and a.metadata["topics"]


@needs_fixtures
def test_analyze_the_whole_fixture_root(spark):
    """The fixture's root holds __share_group_state and __transaction_state partitions
    next to __consumer_offsets and __cluster_metadata: none of their records is folded
    or flagged as a group-coordinator record."""
    from kcodec.spark.analyze import analyze
    a = analyze(spark, str(FIX))
    assert (a.records, a.flagged, a.corrupt_batches, a.errors) == (_oracle_records(), 0, 0, [])
    other = sorted(f"other_internal/segments/{p.name}" for p in (FIX / "other_internal" / "segments").iterdir())
    assert sorted(a.left_out) == sorted(other + ["cluster_metadata/segments/bootstrap.checkpoint"])
    assert a.metadata_source == str(FIX / "cluster_metadata" / "segments" / "__cluster_metadata-0")


def _flipped_metadata(tmp_path: Path, position: int) -> Path:
    """The fixture's __cluster_metadata-0 with one byte flipped at ``position``."""
    seg = FIX / "cluster_metadata" / "segments" / "__cluster_metadata-0" / "00000000000000000000.log"
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir(parents=True)
    b = bytearray(seg.read_bytes())
    b[position] ^= 0xFF
    (d / seg.name).write_bytes(bytes(b))
    return d


@needs_fixtures
def test_analyze_reports_a_corrupt_metadata_batch(spark, tmp_path, capsys):
    """A CRC-corrupt __cluster_metadata batch is reported as a corrupt __consumer_offsets
    batch is: counted, a flagged line naming file@position, exit 3; with --metadata and
    when the tree is found under the path."""
    from kcodec import cli, log
    from kcodec.spark.analyze import analyze
    meta = _flipped_metadata(tmp_path / "m", 10659 + 700)
    seg = meta / "00000000000000000000.log"
    # the oracle: kcodec.log's reader names the batch the flip is in
    bad = [b.error for b in log.iter_batches(str(seg)) if b.error is not None]
    assert [(e.position, e.reason) for e in bad] == [(10659, "bad_crc")]
    combo = tmp_path / "combo"
    shutil.copytree(OFFSETS / "segments" / "__consumer_offsets-0", combo / "__consumer_offsets-0")
    shutil.copytree(meta, combo / meta.name)
    out = tmp_path / "out"
    for a in (analyze(spark, str(OFFSETS / "segments"), str(out), metadata=str(meta)),
              analyze(spark, str(combo))):
        assert a.corrupt_batches == 1 and a.flagged_total == a.flagged + 1
        assert len(a.errors) == 1 and a.errors[0].endswith(f"@10659: {bad[0].reason}: {bad[0].message} "
                                                            f"(skipped to {bad[0].skipped_to})")
        assert "00000000000000000000.log" in a.errors[0]
        assert [(r["position"], r["offset"]) for r in a.flagged_rows if r["offset"] is None][-1] == (10659, None)
    # the Parquet flagged table has it too
    got = [r.asDict() for r in spark.read.parquet(str(out / "flagged")).where("position is not null").collect()]
    assert [(r["log_topic"], r["log_partition"], r["position"]) for r in got] == [("__cluster_metadata", 0, 10659)]
    capsys.readouterr()
    rc = cli.main(["analyze", "--keep-session", "--master", "local[2]", "--no-progress",
                   "--metadata", str(meta), str(OFFSETS / "segments")])
    out = capsys.readouterr().out
    assert rc == cli.EXIT_DATA
    assert "1 corrupt batch" in out and "flagged:" in out and "@10659: bad_crc" in out
