"""kcodec.spark round 2: projection (``fields``), ``from_metadata_record`` over KRaft
metadata, Kafka Streams user data, the SQL names, and the metadata history; each checked
against the single-record APIs (kcodec.offsets, kcodec.kraft, kcodec.streams) on the
broker fixtures."""
from __future__ import annotations

import os
import sys

import pytest

pa = pytest.importorskip("pyarrow")

import kcodec  # noqa: E402
from kcodec import log as klog  # noqa: E402
from kcodec.kraft import read_record  # noqa: E402
from kcodec.offsets import decode_record  # noqa: E402

from ._shared import fixtures_dir, read_jsonl  # noqa: E402
from .test_spark import _norm  # noqa: E402

K = pytest.importorskip("kcodec.spark._kernels")

FIX = fixtures_dir()
OFFSETS = FIX / "consumer_offsets"
METADATA = FIX / "cluster_metadata" / "segments"
needs_fixtures = pytest.mark.skipif(not (OFFSETS.exists() and METADATA.exists()), reason="shared fixtures missing")

NARROW = ["group", "topic", "partition", "OffsetCommitValue.offset", "OffsetCommitValue.commitTimestamp"]


def _offsets_pairs():
    out = []
    for r in read_jsonl(OFFSETS / "segment_records.jsonl"):
        if r.get("is_control"):
            continue
        out.append((bytes.fromhex(r["key_hex"]) if r.get("key_hex") is not None else None,
                    bytes.fromhex(r["value_hex"]) if r.get("value_hex") is not None else None))
    # rows the exact path takes: a bad value, an unknown type, a cut key
    out += [(b"\x00\x01" + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}, 0),
             b"\x00\x04\x01\x02"), (b"\x00\x63abc", b"\x00\x00zz"), (b"\x00", None)]
    return out


def _pick(row, tree):
    """``row`` (a full result row) cut to the paths of ``tree`` (as the projection does)."""
    if row is None:
        return None
    if isinstance(row, list):
        return [_pick(x, tree) for x in row]
    return {k: (row[k] if sub is None else _pick(row[k], sub)) for k, sub in tree.items()}


def _projected(full_rows, fields):
    tree = K._paths_tree(fields)
    tree[K.ERROR] = None
    return [_pick(r, tree) for r in full_rows]


# --------------------------------------------------------------------------- projection (no Spark)

@needs_fixtures
@pytest.mark.parametrize("fields,record_types", [
    (NARROW, ["OffsetCommit"]),
    (NARROW, None),
    (["record_type", "group", "GroupMetadataValue.protocol", "GroupMetadataValue.members.memberId",
      "members.subscription.value.topics", "raw_value"], None),
    (["key.memberId", "ConsumerGroupMemberMetadataValue.rackId", "tombstone"], "all"),
], ids=["narrow-commits", "narrow-default", "members", "kip848"])
def test_projection_equals_the_full_result_cut(fields, record_types):
    pairs = _offsets_pairs()
    keys, values = pa.array([k for k, _ in pairs], pa.binary()), pa.array([v for _, v in pairs], pa.binary())
    full = K.decode_offsets(keys, values, record_types=record_types, spark=True).to_pylist()
    got = K.decode_offsets(keys, values, record_types=record_types, fields=fields, spark=True)
    assert got.type.names == [n for n in K.offsets_type(record_types).names if n in K._paths_tree(fields)] + ["_error"]
    assert got.to_pylist() == _projected(full, fields)
    assert any(r["_error"] for r in got.to_pylist())        # the bad rows still say why


def test_projection_unknown_path_names_it_and_the_valid_ones():
    with pytest.raises(ValueError, match=r"'OffsetCommitValue\.ofset'.*'OffsetCommitValue\.offset'"):
        K.project_type(K.offsets_type(), K.fields_option(["OffsetCommitValue.ofset"]))
    with pytest.raises(ValueError, match=r"'grup'.*'group'"):
        K.project_type(K.offsets_type(), K.fields_option(["grup"]))
    with pytest.raises(ValueError, match=r"'group' is a string"):
        K.project_type(K.offsets_type(), K.fields_option(["group.x"]))


# --------------------------------------------------------------------------- __cluster_metadata (no Spark)

def _metadata_values():
    """Every record value of the fixture's metadata log and snapshot (control records too:
    they are not metadata frames, and come back as kcodec.kraft reads them)."""
    out = []
    for path in sorted(METADATA.rglob("*")):
        if path.suffix in (".log", ".checkpoint"):
            for _batch, rec in klog.iter_records(str(path)):
                out.append(rec.value)
    return out


_BAD_METADATA = [
    b"", b"\x01", b"\x00\x0c\x00", b"\x01\x0c\x00\x05", b"\x01\x7f\x00abc",          # cut, frame v0, bad, unknown
    b"\x01\x81\x01\x00", kcodec.kraft.encode_record("FeatureLevelRecord", {"name": "x", "featureLevel": 1}, 0)
    + b"\x00", None]


@needs_fixtures
@pytest.mark.parametrize("spark_types", [False, True], ids=["kafka-types", "spark-types"])
def test_metadata_kernel_equals_kraft_single_record_decode(spark_types):
    values = _metadata_values()
    assert len(values) > 500
    col = pa.array(values + _BAD_METADATA, pa.binary())
    got = K.decode_metadata(col, spark=spark_types)
    typ = K._metadata_out(K.metadata_selected(None), spark_types, None).full
    exp = pa.array([None if v is None else K._metadata_row(read_record(v), typ) for v in values + _BAD_METADATA],
                   typ).to_pylist()
    exp[-1] = {k: None for k in typ.names}
    assert got.to_pylist() == exp
    kinds = {r["record_type"] for r in exp if r}
    assert {"TopicRecord", "PartitionRecord", "PartitionChangeRecord", "RegisterBrokerRecord",
            "FeatureLevelRecord", "BrokerRegistrationChangeRecord"} <= kinds
    unknown = got.to_pylist()[len(values) + 4]
    assert unknown["unknown"] and unknown["api_key"] == 127 and unknown["_error"] is None
    assert unknown["raw_value"] == b"\x01\x7f\x00abc"


@needs_fixtures
def test_metadata_projection_and_record_types():
    col = pa.array(_metadata_values(), pa.binary())
    fields = ["record_type", "TopicRecord.name", "PartitionChangeRecord.isr"]
    full = K.decode_metadata(col, spark=True).to_pylist()
    got = K.decode_metadata(col, record_types=["TopicRecord", "PartitionChangeRecord"], fields=fields, spark=True)
    assert got.type.names == ["record_type", "TopicRecord", "PartitionChangeRecord", "_error"]
    assert got.to_pylist() == _projected(full, fields)
    names = [r["TopicRecord"]["name"] for r in got.to_pylist() if r["TopicRecord"]]
    assert "orders" in names
    with pytest.raises(ValueError, match=r"unknown metadata record types \['Topic'\]"):
        K.metadata_selected(["Topic"])


# --------------------------------------------------------------------------- Streams user data (no Spark)

def _streams_members():
    """(subscription userData, assignment userData) of the members of the fixture's classic
    ``stream`` group, found through the offsets and consumer-protocol kernels."""
    pairs = _offsets_pairs()
    got = K.decode_offsets(pa.array([k for k, _ in pairs], pa.binary()), pa.array([v for _, v in pairs], pa.binary()),
                           fields=["GroupMetadataValue.protocol", "GroupMetadataValue.members.subscription",
                                   "GroupMetadataValue.members.assignment"]).to_pylist()
    subs, asgs = [], []
    for r in got:
        gm = r["GroupMetadataValue"]
        if gm and gm["protocol"] == "stream":
            for m in gm["members"]:
                subs.append(m["subscription"])
                asgs.append(m["assignment"])
    sub = K.decode_protocol(pa.array(subs, pa.binary()), K._SUB).field("userData").to_pylist()
    asg = K.decode_protocol(pa.array(asgs, pa.binary()), K._ASG).field("userData").to_pylist()
    return sub, asg


@needs_fixtures
def test_streams_kernels_equal_kcodec_streams():
    from kcodec.streams import decode_assignment, decode_subscription
    subs, asgs = _streams_members()
    assert subs and all(subs) and all(asgs)
    for kind, data, dec in (("subscription", subs, decode_subscription), ("assignment", asgs, decode_assignment)):
        got = K.decode_streams(pa.array(data + [None, b"\x00\x00\x00\x63"], pa.binary()), kind).to_pylist()
        exp = [dict(K.streams_row(dec(b)), _error=None) for b in data]
        assert got[:len(data)] == pa.array(exp, K.streams_type(kind)).to_pylist()
        assert got[len(data)] is None
        assert "Streams %s user data" % kind in got[-1]["_error"]
    first = K.decode_streams(pa.array(subs[:1], pa.binary()), "subscription").to_pylist()[0]
    assert first["version"] == 11 and first["process_id"]


# --------------------------------------------------------------------------- Spark

@pytest.fixture(scope="session")
def spark():
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    # the Python workers run PYSPARK_PYTHON (or python3 on PATH), not spark.pyspark.python
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    s = (SparkSession.builder.master("local[2]").appName("kcodec-tests")
         .config("spark.pyspark.python", sys.executable)
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@needs_fixtures
def test_spark_projection_schema_values_and_sql(spark):
    from kcodec.spark import from_consumer_offsets, offsets_schema, register
    pairs = _offsets_pairs()
    df = spark.createDataFrame([(i, k, v) for i, (k, v) in enumerate(pairs)], "id int, key binary, value binary")
    opts = {"record_types": ["OffsetCommit"], "fields": NARROW}
    got = df.select("id", from_consumer_offsets("key", "value", opts).alias("r")).orderBy("id")
    schema = got.schema["r"].dataType
    assert schema == offsets_schema(**opts)
    assert schema.simpleString() == ("struct<group:string,topic:string,partition:int,OffsetCommitValue:"
                                     "struct<offset:bigint,commitTimestamp:bigint>,_error:string>")
    full = K.decode_offsets(pa.array([k for k, _ in pairs], pa.binary()), pa.array([v for _, v in pairs], pa.binary()),
                            record_types=["OffsetCommit"], spark=True).to_pylist()
    assert [_norm(r.r) for r in got.collect()] == _projected(full, NARROW)
    with pytest.raises(ValueError, match="unknown field path 'offset'"):
        from_consumer_offsets("key", "value", {"fields": ["offset"]})
    register(spark, options={"record_types": ["OffsetCommit"], "fields": NARROW})
    df.createOrReplaceTempView("offsets_raw")
    sql = spark.sql("SELECT id, kcodec_consumer_offsets(key, value) AS r FROM offsets_raw ORDER BY id")
    assert [_norm(r.r) for r in sql.collect()] == _projected(full, NARROW)


@needs_fixtures
def test_spark_metadata_records_equal_kraft(spark):
    from kcodec.spark import from_metadata_record, read_log, register
    df = read_log(spark, str(METADATA))
    got = df.select("file", "offset", from_metadata_record("value").alias("r")).collect()
    exp_by = {}
    typ = K._metadata_out(K.metadata_selected(None), True, None).full
    for path in sorted(METADATA.rglob("*")):
        if path.suffix in (".log", ".checkpoint"):
            for _b, rec in klog.iter_records(str(path)):
                exp_by[(path.name, rec.offset)] = K._metadata_row(read_record(rec.value), typ)
    assert len(got) == len(exp_by)
    exp = pa.array(list(exp_by.values()), typ).to_pylist()
    exp_by = dict(zip(exp_by, exp))
    for r in got:
        assert _norm(r.r) == exp_by[(r.file.rsplit("/", 1)[-1], r.offset)], (r.file, r.offset)
    register(spark)
    df.createOrReplaceTempView("metadata_raw")
    n = spark.sql("SELECT count(*) AS n FROM metadata_raw WHERE NOT is_control AND "
                  "kcodec_metadata_record(value).record_type = 'TopicRecord'").collect()[0].n
    assert n == sum(1 for v in exp if v["record_type"] == "TopicRecord")


def test_spark_failfast_names_the_row(spark):
    from kcodec.spark import FailFastError, from_metadata_record
    df = spark.createDataFrame([(b"\x01\x0c\x00",), (b"\x01\x02",)], "value binary").coalesce(1)
    with pytest.raises(Exception, match=r"__cluster_metadata record: row 0 of the batch \(2 bad rows\): "
                                        r".*\[value=010c00\]"):
        df.select(from_metadata_record("value", {"mode": "FAILFAST"}).alias("r")).collect()
    assert FailFastError


@needs_fixtures
def test_spark_streams_group_user_data(spark):
    from pyspark.sql import functions as F
    from kcodec.spark import (from_consumer_assignment, from_consumer_offsets, from_consumer_subscription,
                              from_streams_assignment, from_streams_subscription, read_log, register)
    from kcodec.streams import decode_assignment, decode_subscription
    df = read_log(spark, str(OFFSETS / "segments"))
    members = (df.where(~F.col("is_control"))
               .select(from_consumer_offsets("key", "value", {"fields": [
                   "GroupMetadataValue.protocol", "GroupMetadataValue.members.subscription",
                   "GroupMetadataValue.members.assignment"]}).alias("r"))
               .where("r.GroupMetadataValue.protocol = 'stream'")
               .select(F.explode("r.GroupMetadataValue.members").alias("m"))
               .select(from_consumer_subscription("m.subscription").userData.alias("sub"),
                       from_consumer_assignment("m.assignment").userData.alias("asg")))
    got = members.select("sub", "asg", from_streams_subscription("sub").alias("s"),
                         from_streams_assignment("asg").alias("a")).collect()
    assert got
    for r in got:
        es = pa.array([dict(K.streams_row(decode_subscription(bytes(r.sub))), _error=None)],
                      K.streams_type("subscription")).to_pylist()[0]
        ea = pa.array([dict(K.streams_row(decode_assignment(bytes(r.asg))), _error=None)],
                      K.streams_type("assignment")).to_pylist()[0]
        assert _norm(r.s) == es and _norm(r.a) == ea
        assert r.a.active_tasks is not None
    register(spark)
    members.createOrReplaceTempView("stream_members")
    v = spark.sql("SELECT kcodec_streams_subscription(sub).version AS v FROM stream_members").collect()
    assert {x.v for x in v} == {11}


@needs_fixtures
def test_metadata_history_on_the_fixture(spark):
    import io
    from rich.console import Console
    from kcodec.spark import metadata_history, print_metadata_history
    tables = metadata_history(spark, str(METADATA))
    # the oracle: the dump's records of the log (the bootstrap snapshot only repeats its start)
    dump = (FIX / "cluster_metadata" / "kafka-dump-log.txt").read_text().split("Dumping __cluster_metadata-0", 1)[1]
    feats = [x for x in tables["features"]]
    assert [f["feature"] for f in feats][:1] == ["metadata.version"] and feats[0]["level"] == 27
    assert len(feats) == dump.count('"type":"FEATURE_LEVEL_RECORD"')
    assert all(f["source"].endswith(".log") for f in feats)
    assert len([t for t in tables["topics"] if t["event"] == "created"]) == dump.count('"type":"TOPIC_RECORD"')
    assert "orders" in {t["topic"] for t in tables["topics"]}
    parts = tables["partitions"]
    assert len(parts) == dump.count('"type":"PARTITION_RECORD"') + dump.count('"type":"PARTITION_CHANGE_RECORD"')
    assert all(p["topic"] and p["timestamp"] is not None for p in parts)
    brokers = tables["brokers"]
    assert brokers[0]["event"].startswith("registered") and brokers[0]["broker"] == 1
    assert any(b["event"] == "unfenced" for b in brokers)
    assert any(e["event"] == "became leader" and e["broker"] == 1 for e in tables["isr_by_broker"])
    offsets = [p["offset"] for p in parts]
    assert offsets == sorted(offsets)
    out = io.StringIO()
    print_metadata_history(tables, Console(file=out, width=200))
    assert "Feature levels" in out.getvalue() and "metadata.version" in out.getvalue()


def test_metadata_history_replays_snapshots_only_where_the_log_does_not_reach():
    from kcodec.spark.metadata import _ordered, replay

    def feat(file, offset, level):
        return {"file": file, "offset": offset, "timestamp": None,
                "r": {"record_type": "FeatureLevelRecord",
                      "FeatureLevelRecord": {"name": "metadata.version", "featureLevel": level}}}
    snap = "/m/__cluster_metadata-0/00000000000000000100-0000000003.checkpoint"
    log = "/m/__cluster_metadata-0/00000000000000000100.log"
    boot = "/m/bootstrap.checkpoint"
    rows = [feat(boot, 1, 20), feat(log, 150, 27), feat(snap, 5, 25)]
    got = replay(_ordered(rows))["features"]
    # the log starts where the snapshot ends: the snapshot's state first, the bootstrap not at all
    assert [(f["source"], f["level_before"], f["level"]) for f in got] == [
        ("00000000000000000100-0000000003.checkpoint", None, 25), ("00000000000000000100.log", 25, 27)]
    # a log reaching back past the snapshot: the snapshot repeats it and is left out
    early = [feat(log.replace("0100.log", "0000.log"), 0, 20)] + rows
    assert [f["level"] for f in replay(_ordered(early))["features"]] == [20, 27]
    assert [f["level"] for f in replay(_ordered([feat(boot, 1, 20)]))["features"]] == [20]


def test_streams_subscription_bulk_path_every_version():
    # v1-v11 through the C bulk decoder and NumPy, against kcodec.streams row by row
    import uuid
    from kcodec.streams import (LATEST_OFFSET, UNKNOWN_OFFSET_SUM, SubscriptionInfo, TaskId, decode_subscription,
                                encode_subscription)
    vals = []
    for v in range(1, 12):
        for j in range(3):
            sums = {}
            if j:
                sums[TaskId(0, j)] = LATEST_OFFSET
                sums[TaskId(1, 0, "tp" if v >= 10 and j == 2 else None)] = 77 if v >= 7 else UNKNOWN_OFFSET_SUM
                sums[TaskId(2, 3)] = UNKNOWN_OFFSET_SUM if v < 7 else 5
            vals.append(encode_subscription(SubscriptionInfo(
                v, 11, uuid.UUID(int=v * 1000 + j), f"host{j}:90{j}" if j else None, sums, unique_field=j,
                error_code=j, client_tags={"az": "a", "r": str(j)} if j else {})))
    vals += [None, b"\x00\x00\x00\x0c\x00\x00\x00\x0d", b"\x00\x00\x00\x03",
             encode_subscription(SubscriptionInfo(11)) + b"x"]        # newer member, cut, trailing bytes
    col = pa.array(vals, pa.binary())
    _, took = K._subscriptions_bulk(col)
    assert took.sum() == 33
    exp = []
    for b in vals:
        try:
            exp.append(None if b is None else dict(K.streams_row(decode_subscription(b)), _error=None))
        except kcodec.errors.KcodecError as e:
            exp.append({"_error": f"Streams subscription user data: {e}"})
    assert K.decode_streams(col, "subscription").to_pylist() == pa.array(exp, K.streams_type("subscription")).to_pylist()
