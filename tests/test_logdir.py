"""A broker's log dir (``/var/kafka-logs``) holds every topic: each command reads only its
own topic's partitions there (``__consumer_offsets`` for offsets/streams,
``__cluster_metadata`` for kraft/features), says which it left out, and ``kraft dump``'s
exit status counts records that do not decode."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kcodec import cli, log

from ._shared import fixtures_dir, require

FIX = fixtures_dir()
OFFSETS = FIX / "consumer_offsets" / "segments"
METADATA = FIX / "cluster_metadata" / "segments"
OTHER = FIX / "other_internal" / "segments"
OTHERS = ["__share_group_state-0", "__transaction_state-27"]


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    """A combined-mode broker's log dir: the fixture's partitions of every internal topic,
    KRaft's bootstrap snapshot, and a user topic written by kcodec.log."""
    require(OFFSETS)
    d = tmp_path_factory.mktemp("kafka-logs")
    for p in OFFSETS.iterdir():
        shutil.copytree(p, d / p.name)
    for name in OTHERS:
        shutil.copytree(OTHER / name, d / name)
    shutil.copytree(METADATA / "__cluster_metadata-0", d / "__cluster_metadata-0")
    shutil.copy(METADATA / "bootstrap.checkpoint", d / "bootstrap.checkpoint")
    (d / "orders-0").mkdir()
    (d / "orders-0" / "00000000000000000000.log").write_bytes(
        log.encode_batch([(b"order-%d" % i, b"{}") for i in range(10)]))
    return d


def _run(capsys, *argv):
    rc = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


LEFT_OUT_OFFSETS = ["__cluster_metadata-0", "__share_group_state-0", "__transaction_state-27",
                    "bootstrap.checkpoint", "orders-0"]


def test_log_files_reads_only_the_topic_asked_for(logdir):
    every = log.log_files(logdir)                       # topic=None: as it always was
    assert any("orders-0" in f for f in every) and any("__cluster_metadata-0" in f for f in every)
    got = log.list_log_files(logdir, topic="__consumer_offsets")
    assert got.files == log.log_files(logdir, topic="__consumer_offsets")
    assert [Path(f).parent.name for f in got.files] == [
        Path(f).parent.name for f in log.log_files(OFFSETS)]
    assert got.left_out == LEFT_OUT_OFFSETS
    meta = log.list_log_files(logdir, topic="__cluster_metadata")
    assert [Path(f).name for f in meta.files] == ["bootstrap.checkpoint", "00000000000000000000.log"]
    assert len(meta.left_out) == len(list(OFFSETS.iterdir())) + len(OTHERS) + 1
    # the path itself and folders not named like a partition are read whole
    assert log.log_files(logdir / "orders-0", topic="__consumer_offsets") == [
        str(logdir / "orders-0" / "00000000000000000000.log")]
    assert log.log_files(OFFSETS, topic="__consumer_offsets") == log.log_files(OFFSETS)


def test_replica_copies_are_left_out(tmp_path):
    require(OFFSETS)
    for name in ("__consumer_offsets-0", "__consumer_offsets-0.9f3c2a6e1b7d4c5e8a0b1c2d3e4f5a6b-future",
                 "orders-1.0123456789abcdef0123456789abcdef-delete"):
        shutil.copytree(OFFSETS / "__consumer_offsets-0", tmp_path / name)
    got = log.list_log_files(tmp_path, topic="__consumer_offsets")
    assert [Path(f).parent.name for f in got.files] == ["__consumer_offsets-0"]
    assert sorted(got.left_out) == sorted(p.name for p in tmp_path.iterdir() if "." in p.name)


@pytest.mark.parametrize("command", [["offsets", "groups"], ["offsets", "check-downgrade", "--to", "3.9"],
                                     ["offsets", "dump"], ["offsets", "dump", "--batches"]])
def test_offsets_commands_on_a_log_dir_equal_the_offsets_partitions_alone(logdir, capsys, command):
    rc, out, err = _run(capsys, *command, logdir)
    rc0, out0, err0 = _run(capsys, *command, OFFSETS)
    # check-downgrade: the verdict of the offsets partitions alone (4: newer record types)
    assert rc == rc0 == (cli.EXIT_LOSSY if command[1] == "check-downgrade" else cli.EXIT_OK)
    assert err0 == ""
    if command[1] != "groups":      # the lines name the files
        out, out0 = out.replace(str(logdir), "D"), out0.replace(str(OFFSETS), "D")
    assert out == out0
    assert err.splitlines() == [f"kcodec {' '.join(command[:2])}: reading only __consumer_offsets "
                                f"partitions; left out 5 of other topics: {', '.join(LEFT_OUT_OFFSETS)}"]


def test_streams_decode_offsets_reads_only_consumer_offsets(logdir, capsys):
    rc, out, err = _run(capsys, "streams", "decode", "--offsets", logdir)
    rc0, out0, _ = _run(capsys, "streams", "decode", "--offsets", OFFSETS)
    assert rc == rc0 == cli.EXIT_OK and out == out0 and "left out 5 of other topics" in err


def test_a_dir_without_the_topic_is_an_input_error(logdir, tmp_path, capsys):
    for name in ("orders-0", "__transaction_state-27"):
        shutil.copytree(logdir / name, tmp_path / name)
    rc, out, err = _run(capsys, "offsets", "groups", tmp_path)
    assert rc == cli.EXIT_USAGE and out == ""
    assert err.strip() == (f"kcodec offsets groups: {tmp_path}: no __consumer_offsets partitions in this "
                           "directory, only 2 of other topics: __transaction_state-27, orders-0")
    rc, _, err = _run(capsys, "kraft", "dump", tmp_path)
    assert rc == cli.EXIT_USAGE and "no __cluster_metadata partitions" in err


def test_kraft_commands_on_a_log_dir_read_only_cluster_metadata(logdir, tmp_path, capsys):
    alone = tmp_path / "meta"
    shutil.copytree(logdir / "__cluster_metadata-0", alone / "__cluster_metadata-0")
    shutil.copy(logdir / "bootstrap.checkpoint", alone / "bootstrap.checkpoint")
    for command in (["kraft", "dump"], ["features", "describe"], ["kraft", "image", "--path", "/topics"]):
        rc, out, err = _run(capsys, *command, logdir)
        rc0, out0, err0 = _run(capsys, *command, alone)
        assert (rc, rc0, err0) == (cli.EXIT_OK, cli.EXIT_OK, ""), (command, err, err0)
        assert out == out0
        n = len(list(OFFSETS.iterdir())) + len(OTHERS) + 1
        assert err.startswith(f"kcodec {' '.join(command[:2])}: reading only __cluster_metadata partitions; "
                              f"left out {n} of other topics: __consumer_offsets-0, ") and err.count("\n") == 1


def _error_lines(text: str):
    return [line for line in text.splitlines() if " payload: Error at " in line]


def test_kraft_dump_exits_3_on_records_that_do_not_decode(capsys):
    require(OFFSETS)
    seg = OFFSETS / "__consumer_offsets-27"
    rc, out, err = _run(capsys, "kraft", "dump", seg)
    bad = _error_lines(out)
    assert rc == cli.EXIT_DATA and bad
    first = int(bad[0].split("| offset: ")[1].split()[0])
    assert err.splitlines() == [f"kcodec kraft dump: {len(bad)} record(s) did not decode as metadata records; "
                                f"first: {seg / '00000000000000000000.log'}@offset {first}"]
    # the clean metadata log: nothing on stderr, exit 0
    rc, out, err = _run(capsys, "kraft", "dump", METADATA)
    assert rc == cli.EXIT_OK and err == "" and not _error_lines(out)


def test_kraft_dump_reference_path_counts_the_same(tmp_path):
    """Both ways to the text (the C writer and records.dump_lines) report the same records."""
    require(OFFSETS)
    from kcodec.kraft.dump import dump_file
    from kcodec.kraft.records import dump_lines
    seg = OFFSETS / "__consumer_offsets-27" / "00000000000000000000.log"
    fast, ref = [], []
    text = b"".join(dump_file(seg, undecoded=fast)).decode()
    lines = list(dump_lines(seg, undecoded=ref))
    assert text == "".join(x + "\n" for x in lines)
    assert fast == ref == [int(x.split("| offset: ")[1].split()[0]) for x in _error_lines(text)]


def test_kraft_dump_of_several_log_dirs_says_once_what_it_left_out(logdir, capsys):
    rc, out, err = _run(capsys, "kraft", "dump", logdir, logdir)
    assert rc == cli.EXIT_OK and out.count("Dumping __cluster_metadata-0/00000000000000000000.log") == 2
    n = 2 * (len(list(OFFSETS.iterdir())) + len(OTHERS) + 1)
    assert err.count("\n") == 1 and f"left out {n} of other topics" in err


def test_analyze_refuses_a_dir_of_other_topics_before_spark_starts(logdir, tmp_path, capsys):
    pytest.importorskip("pyspark")
    for name in ("orders-0", "__transaction_state-27"):
        shutil.copytree(logdir / name, tmp_path / name)
    rc, out, err = _run(capsys, "analyze", tmp_path)
    assert rc == cli.EXIT_USAGE and out == ""
    assert err.strip() == (f"kcodec analyze: {tmp_path}: no __consumer_offsets or __cluster_metadata "
                           "partitions in this directory, only 2 of other topics: __transaction_state-27, orders-0")


def test_the_cli_names_the_topics_as_kcodec_log_does():
    # kcodec.cli keeps its own copy (a command starts without importing kcodec.log)
    assert (cli.OFFSETS_TOPIC, cli.METADATA_TOPIC) == (log.OFFSETS_TOPIC, log.METADATA_TOPIC)
