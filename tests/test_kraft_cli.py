"""kcodec kraft / kcodec features."""
from __future__ import annotations

import pytest

from kcodec.cli import main

from ._shared import fixtures_dir

META = fixtures_dir() / "cluster_metadata"
SEGMENTS = META / "segments"
pytestmark = pytest.mark.skipif(not META.exists(), reason="no cluster_metadata fixture")


def test_dump_directory_is_kafka_dump_log(capsys):
    assert main(["kraft", "dump", str(SEGMENTS)]) == 0
    assert capsys.readouterr().out == (META / "kafka-dump-log.txt").read_text()


def test_describe(capsys):
    assert main(["features", "describe", str(SEGMENTS)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert ("Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.2-IV1\t"
            "FinalizedVersionLevel: 4.1-IV1\tEpoch: 2435") in out
    assert len(out) == 7


def test_downgrade_refused_and_allowed(capsys):
    assert main(["features", "downgrade", "--feature", "metadata.version=3.9-IV0", "--dry-run",
                 str(SEGMENTS)]) == 2      # kcodec.cli.EXIT_REFUSED
    out = capsys.readouterr().out
    assert out.startswith("Could not downgrade metadata.version to 3.9-IV0. The update failed for "
                          "all features since the following feature had an error: Invalid "
                          "metadata.version 21. Refusing to perform")
    assert "would lose PartitionRecord.eligibleLeaderReplicas in 184 record(s)" in out
    assert main(["features", "downgrade", "--metadata", "4.1-IV0", "--dry-run", str(SEGMENTS)]) == 0
    assert capsys.readouterr().out.startswith("metadata.version can be downgraded to 4.1-IV0.")


def test_disable_and_upgrade(capsys):
    assert main(["features", "disable", "--disable-feature", "share.version", "--dry-run",
                 str(SEGMENTS)]) == 0
    assert "share.version can be disabled to 0." in capsys.readouterr().out
    assert main(["features", "upgrade", "--feature", "group.version=2", str(SEGMENTS)]) == 2
    assert "only supports versions 0-1" in capsys.readouterr().out


def test_image_and_rewrite(capsys, tmp_path):
    assert main(["kraft", "image", str(SEGMENTS), "--ls", "--path", "/topics"]) == 0
    assert "orders" in capsys.readouterr().out.split()
    out = tmp_path / "snap.checkpoint"
    assert main(["features", "rewrite", "--to", "3.9-IV0", str(SEGMENTS), str(out)]) == 0
    assert "lossy" in capsys.readouterr().out
    assert main(["kraft", "image", str(out), "--path", "/features/metadata.version"]) == 0
    assert capsys.readouterr().out.strip() == "21"
    assert main(["kraft", "bootstrap", str(tmp_path), "--release-version", "4.1-IV1"]) == 0
    assert (tmp_path / "bootstrap.checkpoint").stat().st_size == 355


def test_rewrite_names_the_snapshot_with_the_last_batchs_epoch(capsys, tmp_path):
    # Kafka names a snapshot <end offset>-<epoch>: the epoch of the log's last batch, read
    # here from the oracle's last batch line
    import re
    dump = (META / "kafka-dump-log.txt").read_text()
    last = [l for l in dump.splitlines() if l.startswith("baseOffset:")][-1]
    end = int(re.search(r"lastOffset: (\d+)", last).group(1)) + 1
    epoch = int(re.search(r"partitionLeaderEpoch: (\d+)", last).group(1))
    assert main(["features", "rewrite", "--to", "4.1-IV1", str(SEGMENTS), str(tmp_path)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == [f"{end:020d}-{epoch:010d}.checkpoint"]
    assert main(["kraft", "dump", str(tmp_path)]) == 0
    assert f"partitionLeaderEpoch: {epoch} " in capsys.readouterr().out
