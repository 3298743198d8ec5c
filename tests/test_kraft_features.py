"""Feature levels, the UpdateFeatures planner (FeatureControlManager's rules and messages),
downgrade rewrites and bootstrap.checkpoint."""
from __future__ import annotations

import uuid

import pytest

from kcodec.kraft import (FeatureUpdate, encode_bootstrap, encode_record, features as F, plan,
                          replay, rewrite, write_snapshot)
from kcodec import log
from kcodec._java import java_hashmap_order

from ._shared import fixtures_dir, shared_path, require

META = fixtures_dir() / "cluster_metadata"
SEGMENTS = META / "segments"
needs_fixture = pytest.mark.skipif(not META.exists(), reason="no cluster_metadata fixture")


def test_metadata_version_table_matches_features_json():
    import json
    ref = json.loads(require(shared_path("reference", "kafka-4.1.1", "features.json")).read_text())
    vals = ref["metadata_version"]["values"]
    assert [(m.level, m.version, m.metadata_changed, m.production) for m in F.METADATA_VERSIONS] == [
        (v["featureLevel"], v["version"], v["didMetadataChange"], v["isProduction"]) for v in vals]
    for f in ref["features"]["values"]:
        if not f["inPRODUCTION_FEATURES"]:
            continue
        for mv, level in f["defaultLevel_by_metadata_version"].items():
            assert F.feature(f["featureName"]).default_level(mv) == level, (f["featureName"], mv)


def test_level_properties_match_features_json():
    import json
    ref = json.loads(require(shared_path("reference", "kafka-4.1.1", "features.json")).read_text())
    for m, v in zip(F.METADATA_VERSIONS, ref["metadata_version"]["values"]):
        assert (m.name, m.release) == (v["name"], v["shortVersion"])
        for prop, value in m.properties.items():
            want = v["properties"][prop]
            assert value == (None if str(want).startswith("exception") else want), (m.name, prop)


def test_version_strings():
    assert F.metadata_version("4.1-IV1").level == 27
    assert F.metadata_version("3.7").version == "3.7-IV4"      # latest production IV of the release
    assert F.metadata_version("3.9.1").level == 21
    assert F.metadata_version("IBP_4_0_IV3").level == 25
    with pytest.raises(ValueError, match="Version 4.2 is not a valid version"):
        F.metadata_version("4.2")                               # no production IV in 4.2
    assert F.metadata_changed(27, 23) is False and F.metadata_changed(27, 22) is True
    assert F.metadata_changed(23, 22) is True and F.metadata_changed(5 + 17, 21) is False


def test_java_hashmap_order():
    # what java.util.HashMap's keySet() printed on a JVM for these keys inserted in this order
    names = ("metadata.version eligible.leader.replicas.version group.version transaction.version "
             "share.version streams.version kraft.version foo.bar").split()
    assert [names[i] for i in java_hashmap_order(names)] == (
        "group.version,foo.bar,kraft.version,metadata.version,share.version,streams.version,"
        "transaction.version,eligible.leader.replicas.version").split(",")


@pytest.fixture(scope="module")
def image():
    return replay(SEGMENTS)


def _msg(image, *ups, **kw):
    # the failing feature's reason, after the prefix QuorumController puts ahead of it
    from kcodec.kraft.planner import ERROR_PREFIX
    r = plan(image, [FeatureUpdate(*u) for u in ups], **kw)
    if r.message is not None:
        assert r.message.startswith(ERROR_PREFIX)
        return r.error_code, r.message[len(ERROR_PREFIX):]
    return r.error_code, r.message


@needs_fixture
def test_adjacent_and_distant_levels(image):
    # 27 -> 26: 4.1-IV1 did not change metadata: a lossless safe downgrade
    r = plan(image, [FeatureUpdate("metadata.version", 26, "SAFE_DOWNGRADE")])
    assert r.ok and r.records == [("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 26}, 0)]
    assert r.downgrade.lossy is False
    # 27 -> 21 crosses 4.0-IV1 (ELR): refused, safe or unsafe
    assert _msg(image, ("metadata.version", 21, "SAFE_DOWNGRADE")) == (
        95, "Invalid metadata.version 21. Refusing to perform the "
            "requested downgrade because it might delete metadata information.")
    assert _msg(image, ("metadata.version", 21, "UNSAFE_DOWNGRADE")) == (
        95, "Invalid metadata.version 21. Unsafe metadata downgrade is "
            "not supported in this version.")
    dg = plan(image, [FeatureUpdate("metadata.version", 7, "SAFE_DOWNGRADE")]).downgrade
    assert dg.lossy and "4.0-IV1" in dg.changed_at and "3.7-IV0" in dg.changed_at
    assert ("RegisterControllerRecord", "*", 1) in dg.losses
    # upgrades within the controller's range (7-29 registered: unstable levels enabled)
    assert plan(image, [("metadata.version", 29, "UPGRADE")], validate_only=True).ok
    assert plan(image, [("metadata.version", 29, "UPGRADE")], validate_only=True).records == []


@needs_fixture
def test_direction_and_type_errors(image):
    assert _msg(image, ("metadata.version", 21, "UPGRADE")) == (
        95, "Invalid update version 21 for feature metadata.version. Can't downgrade the version "
            "of this feature without setting the upgrade type to either safe or unsafe downgrade.")
    assert _msg(image, ("metadata.version", 28, "SAFE_DOWNGRADE")) == (
        95, "Invalid update version 28 for feature metadata.version. Can't downgrade to a newer version.")
    assert _msg(image, ("group.version", 1, "UNKNOWN")) == (
        95, "Invalid update version 1 for feature group.version. The controller does not support "
            "the given upgrade type.")
    assert _msg(image, ("transaction.version", -1, "UPGRADE")) == (
        95, "Invalid update version -1 for feature transaction.version. A feature version cannot "
            "be less than 0.")


@needs_fixture
def test_unknown_features_and_node_ranges(image):
    assert _msg(image, ("foo.bar", 1, "UPGRADE")) == (
        95, "Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature.")
    assert _msg(image, ("foo.bar", 0, "SAFE_DOWNGRADE")) == (
        95, "Invalid update version 0 for feature foo.bar. Feature foo.bar not found.")
    assert _msg(image, ("metadata.version", 30, "UPGRADE")) == (
        95, "Invalid update version 30 for feature metadata.version. Local controller 1 only "
            "supports versions 7-29")
    # a controller with only production levels: the local range excludes 28
    assert _msg(image, ("metadata.version", 28, "UPGRADE"), controller_id=9,
                local_supported=F.supported_ranges()) == (
        95, "Invalid update version 28 for feature metadata.version. Local controller 9 only "
            "supports versions 7-27")
    # a broker whose range excludes the target
    image.brokers[1]["features"] = [dict(f, maxSupportedVersion=27) if f["name"] == "metadata.version"
                                    else f for f in image.brokers[1]["features"]]
    try:
        assert _msg(image, ("metadata.version", 28, "UPGRADE")) == (
            95, "Invalid update version 28 for feature metadata.version. Broker 1 only supports "
                "versions 7-27")
    finally:
        image.brokers[1]["features"] = [dict(f, maxSupportedVersion=29) if f["name"] == "metadata.version"
                                        else f for f in image.brokers[1]["features"]]


def _frame(name, value, version=0):
    return (None, encode_record(name, value, version))


def _node_features(mv_max=29):
    return [{"name": "metadata.version", "minSupportedVersion": 7, "maxSupportedVersion": mv_max},
            {"name": "eligible.leader.replicas.version", "minSupportedVersion": 0, "maxSupportedVersion": 1},
            {"name": "group.version", "minSupportedVersion": 0, "maxSupportedVersion": 1}]


def _cluster(mv):
    recs = [_frame("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": mv}),
            _frame("RegisterControllerRecord", {"controllerId": 1, "incarnationId": uuid.UUID(int=1),
                                                "endPoints": [], "features": _node_features()}),
            _frame("RegisterControllerRecord", {"controllerId": 2, "incarnationId": uuid.UUID(int=2),
                                                "endPoints": [], "features": _node_features(27)})]
    return replay(log.encode_batch(recs))


def test_dependency_violations():
    img = _cluster(21)
    assert _msg(img, ("eligible.leader.replicas.version", 1, "UPGRADE"), controller_id=1) == (
        95, "Invalid update version 1 for feature eligible.leader.replicas.version. "
            "eligible.leader.replicas.version could not be set to 1 because it depends on "
            "metadata.version level 23")
    # upgrading metadata.version in the same request satisfies the dependency
    r = plan(img, [("eligible.leader.replicas.version", 1, "UPGRADE"), ("metadata.version", 23, "UPGRADE")],
             controller_id=1)
    # ...and enabling ELR first writes the cluster-level min.insync.replicas the cluster lacks
    assert r.ok and [n for n, _, _ in r.records] == ["ConfigRecord", "FeatureLevelRecord", "FeatureLevelRecord"]


def test_other_controllers_ranges_are_checked():
    img = _cluster(21)
    assert _msg(img, ("metadata.version", 28, "UPGRADE"), controller_id=1) == (
        95, "Invalid update version 28 for feature metadata.version. Controller 2 only supports "
            "versions 7-27")


@needs_fixture
def test_bootstrap_checkpoint_is_byte_exact():
    fixture = (SEGMENTS / "bootstrap.checkpoint").read_bytes()
    ours = encode_bootstrap("4.1-IV1", timestamps=(1795343979892, 1795343979943, 1795343979944))
    assert ours == fixture


@needs_fixture
def test_lossy_downgrade_rereads_cleanly(image, tmp_path):
    report = write_snapshot(image, tmp_path, to="3.9-IV0", epoch=3)
    assert report.lossy and report.to_level == 21
    assert {(l.record, l.field) for l in report.losses} == {
        ("PartitionRecord", "eligibleLeaderReplicas"), ("PartitionRecord", "lastKnownElr")}
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.endswith("-0000000003.checkpoint")
    again = replay(files[0])
    assert again.issues == [] and again.metadata_version == 21
    assert again.partition_count() == image.partition_count()
    assert again.topic_names() == image.topic_names()
    assert again.partition("orders", 0)["eligibleLeaderReplicas"] == []
    assert again.versions_seen["PartitionRecord"] == 1
    # the unseen snapshot decodes as kafka-dump-log shows a snapshot
    from kcodec.kraft import dump_lines
    lines = list(dump_lines(files[0]))
    assert lines[1].startswith("Snapshot end offset: ") and lines[1].endswith(", epoch: 3")
    assert "SnapshotHeader" in lines[3] and "SnapshotFooter" in lines[-1]


@needs_fixture
def test_snapshot_at_own_level_roundtrips(image, tmp_path):
    recs, report = rewrite(image, 27)
    assert not report.lossy
    write_snapshot(image, tmp_path / "s.checkpoint")
    again = replay(tmp_path / "s.checkpoint")
    assert again.finalized_features() == image.finalized_features()
    for t in image.topic_names():
        assert again.topic(t) == image.topic(t)
    assert again.brokers == image.brokers and again.configs == image.configs
