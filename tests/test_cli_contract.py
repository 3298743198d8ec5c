"""The exit-code contract of every ``kcodec`` command (see ``kcodec.cli``'s docstring).

One table: every command the argparse parsers define (a new command without a row fails
``test_every_command_has_a_row``) x every kind of input: missing, an empty directory,
unreadable ones (a dangling link, a FIFO, a directory where a file is expected), random
bytes, a truncated and a bit-flipped log, the log compressed with each codec, and the valid
log.  Each cell is the exit code, a message on stderr when it is not 0, and never a
traceback.  Inputs are built here (no shared data needed) and run in-process; a few rows
run through the installed ``kcodec`` console script too.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import kcodec
from kcodec import cli, log
from kcodec.cli import EXIT_DATA, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, main
from kcodec.errors import ArgumentTypeError, InvalidArgumentError, KcodecError

SEGMENT = "00000000000000000000.log"
CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
PATH_CASES = ("missing", "empty_dir", "dir_as_file", "dangling", "fifo", "fifo_in_dir",
              "random", "truncated", "bitflip", *CODECS, "valid")
# ---------------------------------------------------------------------------- inputs


def _offsets_records():
    def rec(group, topic, partition, offset):
        k = struct.pack(">h", 1) + kcodec.encode(
            "OffsetCommitKey", {"group": group, "topic": topic, "partition": partition}, 0)
        v = struct.pack(">h", 3) + kcodec.encode(
            "OffsetCommitValue", {"offset": offset, "leaderEpoch": 0, "metadata": "",
                                  "commitTimestamp": 1_700_000_000_000}, 3)
        return k, v
    return [[rec("billing", "orders", p, 10 + p) for p in range(3)],
            [rec("billing", "orders", 0, 42), rec("audit", "orders", 1, 7)]]


def _kraft_records():
    from kcodec.kraft import encode_record
    return [[(None, encode_record("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": 27}, 0))],
            [(None, encode_record("TopicRecord", {"name": "orders", "topicId": uuid.UUID(int=7)}, 0)),
             (None, encode_record("FeatureLevelRecord", {"name": "group.version", "featureLevel": 1}, 0))]]


def _segment(batches, compression=0):
    out, offset = b"", 0
    for recs in batches:
        out += log.encode_batch(recs, base_offset=offset, compression=compression,
                                base_timestamp=1_700_000_000_000)
        offset += len(recs)
    return out


def _flip_last_record(data: bytes) -> bytes:
    b = bytearray(data)
    b[len(b) - 3] ^= 0x10            # inside the last record of the last batch: its CRC fails
    return bytes(b)


def _random_bytes() -> bytes:
    return random.Random(20).randbytes(4096)


def _log_input(tmp: Path, case: str, records) -> Path:
    """A log-shaped input for ``case`` under ``tmp``."""
    if case == "missing":
        return tmp / "no" / "such" / "path"
    d = tmp / f"in-{case}"
    d.mkdir()
    seg = d / SEGMENT
    if case == "empty_dir":
        return d
    if case == "dir_as_file":                      # a directory named like a segment, nothing in it
        seg.mkdir()
        return seg
    if case == "dangling":
        seg.symlink_to(tmp / "gone.log")
        return d
    if case in ("fifo", "fifo_in_dir"):
        os.mkfifo(seg)
        return seg if case == "fifo" else d
    valid = _segment(records)
    seg.write_bytes({"random": _random_bytes(), "truncated": valid[:-7],
                     "bitflip": _flip_last_record(valid), "valid": valid}.get(case)
                    or _segment(records, CODECS[case]))
    return d


def _message_input(tmp: Path, case: str) -> Path:
    """A raw message file (``kcodec decode``): an OffsetCommitValue with its version."""
    valid = struct.pack(">h", 3) + kcodec.encode(
        "OffsetCommitValue", {"offset": 5, "leaderEpoch": 1, "metadata": "m", "commitTimestamp": 1}, 3)
    return _file_input(tmp, case, valid, {"random": _random_bytes(), "truncated": valid[:-5]})


def _scenario_input(tmp: Path, case: str) -> Path:
    valid = json.dumps({"strategy": "range", "topics": {"orders": 4},
                        "members": [{"id": "c1", "topics": ["orders"]},
                                    {"id": "c2", "topics": ["orders"]}]}).encode()
    return _file_input(tmp, case, valid, {"random": _random_bytes(), "truncated": valid[:-9]})


def _file_input(tmp: Path, case: str, valid: bytes, bad: dict) -> Path:
    f = tmp / "input.bin"
    if case == "missing":
        return tmp / "no-such-file"
    if case in ("empty_dir", "dir_as_file"):
        f.mkdir()
    elif case == "dangling":
        f.symlink_to(tmp / "gone")
    elif case == "fifo":
        os.mkfifo(f)
    else:
        f.write_bytes(bad.get(case, valid))
    return f


def _outdir_input(tmp: Path, case: str) -> Path:
    """``kraft bootstrap DIR``: the directory to write into."""
    d = tmp / "meta"
    if case == "missing":
        return d                                   # created
    if case == "dir_as_file":
        d.write_bytes(b"a file")
    elif case == "dangling":
        d.symlink_to(tmp / "gone")
    elif case == "fifo":
        os.mkfifo(d)
    else:
        d.mkdir()
        if case == "random":                        # an old, damaged checkpoint is replaced
            (d / "bootstrap.checkpoint").write_bytes(_random_bytes())
    return d


# ---------------------------------------------------------------------------- the table

LOG = {"missing": EXIT_USAGE, "empty_dir": EXIT_USAGE, "dir_as_file": EXIT_USAGE,
       "dangling": EXIT_USAGE, "fifo": EXIT_USAGE, "fifo_in_dir": EXIT_USAGE,
       "random": EXIT_USAGE, "truncated": EXIT_DATA, "bitflip": EXIT_DATA,
       **{c: EXIT_OK for c in CODECS}, "valid": EXIT_OK}
FILE = {"missing": EXIT_USAGE, "empty_dir": EXIT_USAGE, "dir_as_file": EXIT_USAGE,
        "dangling": EXIT_USAGE, "fifo": EXIT_USAGE, "valid": EXIT_OK}
# analyze: only what fails before Spark starts (the Spark tests cover the rest)
BEFORE_SPARK = {c: EXIT_USAGE for c in ("missing", "empty_dir", "dir_as_file", "dangling",
                                        "fifo", "fifo_in_dir", "random")}

# command -> (input kind, argv with {} for the path, {case: exit code}, [(bad argv, code)])
TABLE = {
    ("decode",): ("message", ["decode", "OffsetCommitValue", "--prefixed", "{}"],
                  dict(FILE, random=EXIT_DATA, truncated=EXIT_DATA),
                  [(["decode", "NoSuchMessage", "--hex", "00"], EXIT_USAGE),
                   (["decode", "OffsetCommitValue", "--hex", "zz"], EXIT_USAGE)]),
    ("specs",): (None, ["specs"], {}, [(["specs", "--type", "bogus"], EXIT_USAGE)]),
    ("offsets", "dump"): ("offsets", ["offsets", "dump", "{}"], LOG,
                          [(["offsets", "dump", "--type", "Bogus", "{}"], EXIT_USAGE)]),
    ("offsets", "groups"): ("offsets", ["offsets", "groups", "{}"], LOG,
                            [(["offsets", "groups", "--as-of", "soon", "{}"], EXIT_USAGE)]),
    ("offsets", "check-downgrade"): ("offsets", ["offsets", "check-downgrade", "--to", "4.0", "{}"], LOG,
                                     [(["offsets", "check-downgrade", "--to", "9.9", "{}"], EXIT_USAGE)]),
    ("assign",): ("scenario", ["assign", "{}"], dict(FILE, random=EXIT_USAGE, truncated=EXIT_USAGE),
                  [(["assign", "--strategy", "bogus", "{}"], EXIT_USAGE)]),
    ("kraft", "dump"): ("kraft", ["kraft", "dump", "{}"], LOG, [(["kraft", "dump"], EXIT_USAGE)]),
    ("kraft", "image"): ("kraft", ["kraft", "image", "{}"], LOG,
                         [(["kraft", "image", "--path", "/no/such", "{}"], EXIT_USAGE)]),
    ("kraft", "bootstrap"): ("outdir", ["kraft", "bootstrap", "{}", "--release-version", "4.1"],
                             {"missing": EXIT_OK, "empty_dir": EXIT_OK, "random": EXIT_OK,
                              "dir_as_file": EXIT_USAGE, "dangling": EXIT_USAGE, "fifo": EXIT_USAGE},
                             [(["kraft", "bootstrap", "{}", "--release-version", "9.9"], EXIT_USAGE),
                              (["kraft", "bootstrap", "{}", "--release-version", "4.1", "--feature",
                                "group.version=99"], EXIT_USAGE)]),
    ("features", "describe"): ("kraft", ["features", "describe", "{}"], LOG,
                               [(["features", "describe", "--bogus", "{}"], EXIT_USAGE)]),
    ("features", "upgrade"): ("kraft", ["features", "upgrade", "--feature", "share.version=1",
                                        "--dry-run", "{}"], LOG,
                              [(["features", "upgrade", "--feature", "group.version=x", "{}"], EXIT_USAGE),
                               (["features", "upgrade", "--feature", "group.version=2", "{}"], EXIT_REFUSED)]),
    ("features", "downgrade"): ("kraft", ["features", "downgrade", "--metadata", "4.1-IV0",
                                          "--dry-run", "{}"], LOG,
                                [(["features", "downgrade", "--metadata", "9.9", "{}"], EXIT_USAGE),
                                 (["features", "downgrade", "--metadata", "3.9", "--dry-run", "{}"],
                                  EXIT_REFUSED)]),
    ("features", "disable"): ("kraft", ["features", "disable", "--disable-feature", "group.version",
                                        "--unsafe", "--dry-run", "{}"], LOG,
                              [(["features", "disable", "{}"], EXIT_USAGE)]),
    ("features", "rewrite"): ("kraft", ["features", "rewrite", "--to", "4.1-IV0", "{}", "{out}"], LOG,
                              [(["features", "rewrite", "--to", "1.0", "{}", "{out}"], EXIT_USAGE)]),
    ("streams", "decode"): ("offsets", ["streams", "decode", "--offsets", "{}"], LOG,
                            [(["streams", "decode", "--kind", "assignment", "zz"], EXIT_USAGE),
                             (["streams", "decode", "--kind", "assignment", "00000001"], EXIT_DATA)]),
    ("streams", "simulate-upgrade"): (None, ["streams", "simulate-upgrade", "--from", "2.3", "--to", "3.8"],
                                      {}, [(["streams", "simulate-upgrade", "--from", "2.3", "--to", "3.8",
                                             "--instances", "0"], EXIT_USAGE)]),
    ("streams", "simulate-scale"): (None, ["streams", "simulate-scale", "--tasks", "4", "--add", "1"], {},
                                    [(["streams", "simulate-scale", "--tasks", "-5"], EXIT_USAGE),
                                     (["streams", "simulate-scale", "--instances", "0"], EXIT_USAGE)]),
    ("analyze",): ("offsets", ["analyze", "{}", "--no-progress"], BEFORE_SPARK,
                   [(["analyze", "--downgrade-to", "9.9", "{}"], EXIT_USAGE),
                    (["analyze", "--shuffle-partitions", "0", "{}"], EXIT_USAGE)]),
}

def _leaves(parser: argparse.ArgumentParser, prefix=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, prefix + (name,))


def test_every_command_has_a_row():
    assert set(_leaves(cli.build_parser())) == set(TABLE)


def _rows():
    for cmd, (kind, argv, cells, bad) in TABLE.items():
        for case in PATH_CASES if kind else ("valid",):
            if kind and case not in cells:
                continue
            yield pytest.param(cmd, case, argv, cells.get(case, EXIT_OK), id=f"{'-'.join(cmd)}:{case}")
        for i, (bad_argv, code) in enumerate(bad):
            yield pytest.param(cmd, "valid", bad_argv, code, id=f"{'-'.join(cmd)}:bad-argument-{i}")


@pytest.fixture
def no_spark(monkeypatch):
    """Fail the test if a SparkSession would start."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return
    def refuse(*a, **k):
        raise AssertionError("Spark started")
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", refuse)


def _input(tmp: Path, cmd, case: str) -> Path:
    kind = TABLE[cmd][0]
    if kind == "offsets":
        return _log_input(tmp, case, _offsets_records())
    if kind == "kraft":
        return _log_input(tmp, case, _kraft_records())
    if kind == "message":
        return _message_input(tmp, case)
    if kind == "scenario":
        return _scenario_input(tmp, case)
    return _outdir_input(tmp, case)


class _Hang(Exception):
    pass


@pytest.mark.parametrize("cmd,case,argv,code", list(_rows()))
def test_exit_code_contract(tmp_path, capsys, no_spark, cmd, case, argv, code):
    path = _input(tmp_path, cmd, case) if TABLE[cmd][0] else None
    argv = [a.replace("{}", str(path)).replace("{out}", str(tmp_path / "out.checkpoint")) for a in argv]

    def hang(*_):
        raise _Hang(f"{argv} did not return (a FIFO read?)")
    old = signal.signal(signal.SIGALRM, hang)
    signal.alarm(60)
    try:
        rc = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert rc == code, (argv, out[-2000:], err[-2000:])
    if code == EXIT_REFUSED:            # the answer "no" is the command's output
        assert out.strip() or err.strip()
    elif code != EXIT_OK:
        assert err.strip(), f"{argv}: exit {rc} says nothing on stderr"
        if cmd != ("specs",) and "{}" in " ".join(TABLE[cmd][1]) and case != "valid" \
                and code == EXIT_USAGE and path is not None:
            assert str(path) in err or path.name in err, err      # the message names the path
    if cmd == ("kraft", "bootstrap") and code == EXIT_OK:
        from kcodec.kraft import replay
        assert replay(str(path / "bootstrap.checkpoint")).metadata_version == 27


def test_help_and_version_exit_0(capsys):
    assert main(["--help"]) == EXIT_OK and main(["offsets", "groups", "--help"]) == EXIT_OK
    assert main(["--version"]) == EXIT_OK
    assert main([]) == EXIT_USAGE and "usage" in capsys.readouterr().err
    assert main(["kraft"]) == EXIT_USAGE and "required" in capsys.readouterr().err


def test_internal_errors_are_one_line_unless_debugging(monkeypatch, capsys, tmp_path):
    from kcodec.offsets import cli as ocli
    monkeypatch.setattr(ocli, "cmd_groups", lambda args: {}["boom"])
    p = _log_input(tmp_path, "valid", _offsets_records())
    build = cli._build          # the parser binds the function at build time: patch it there
    monkeypatch.setattr(cli, "_build", lambda *a: _patched_build(build, ocli, *a))
    assert main(["offsets", "groups", str(p)]) == cli.EXIT_INTERNAL
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "KeyError" in err
    monkeypatch.setenv("KCODEC_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["offsets", "groups", str(p)])


def _patched_build(build, ocli, *args):
    p = build(*args)[0]
    d = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    o = next(a for a in d.choices["offsets"]._actions if isinstance(a, argparse._SubParsersAction))
    o.choices["groups"].set_defaults(func=ocli.cmd_groups)
    return p, d.choices["decode"]


# ---------------------------------------------------------------------------- the console script

def _console() -> str:
    exe = Path(sys.executable).with_name("kcodec")
    return str(exe) if exe.exists() else (shutil.which("kcodec") or pytest.skip("no kcodec script"))


@pytest.mark.parametrize("case,argv,code", [
    ("missing", ["offsets", "groups", "{}"], EXIT_USAGE),
    ("fifo", ["kraft", "dump", "{}"], EXIT_USAGE),
    ("bitflip", ["offsets", "dump", "{}"], EXIT_DATA),
    ("valid", ["offsets", "groups", "--bogus", "{}"], EXIT_USAGE),
])
def test_console_script(tmp_path, case, argv, code):
    p = _log_input(tmp_path, case, _offsets_records())
    r = subprocess.run([_console()] + [a.replace("{}", str(p)) for a in argv], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == code, r.stderr
    assert r.stderr.strip() and "Traceback" not in r.stderr + r.stdout


# ---------------------------------------------------------------------------- issue 20's reproducers

def _kraft_log(tmp: Path, level: int) -> Path:
    from kcodec.kraft import encode_record
    d = tmp / "meta"
    d.mkdir()
    (d / SEGMENT).write_bytes(_segment([[(None, encode_record(
        "FeatureLevelRecord", {"name": "metadata.version", "featureLevel": level}, 0))]]))
    return d


@pytest.mark.parametrize("argv", [
    ["features", "downgrade", "--metadata", "3.9", "{}"],
    ["features", "upgrade", "--feature", "group.version=1", "{}"],
    ["features", "upgrade", "--release-version", "4.1", "--dry-run", "{}"],
    ["features", "rewrite", "--to", "3.9", "{}", "{out}"],
])
def test_an_unknown_metadata_version_is_refused_not_planned(tmp_path, capsys, argv):
    d = _kraft_log(tmp_path, 9999)
    out_file = tmp_path / "snapshot.checkpoint"
    rc = main([a.replace("{}", str(d)).replace("{out}", str(out_file)) for a in argv])
    out, err = capsys.readouterr()
    assert rc == EXIT_DATA and "metadata.version 9999" in err and err.count("\n") == 1
    assert "lossless" not in out and "Traceback" not in out + err and not out_file.exists()


def test_the_planner_and_rewrite_refuse_an_unknown_level_as_kcodec_errors(tmp_path):
    from kcodec.kraft import replay
    from kcodec.kraft.planner import FeatureUpdate, plan
    from kcodec.kraft.rewrite import rewrite
    img = replay(str(_kraft_log(tmp_path, 9999)))
    with pytest.raises(KcodecError, match="metadata.version 9999"):
        plan(img, [FeatureUpdate("metadata.version", 21, "SAFE_DOWNGRADE")])
    with pytest.raises(KcodecError, match="metadata.version 9999"):
        rewrite(img, 21)


def test_plan_names_a_level_of_the_wrong_type(tmp_path):
    from kcodec.kraft import replay
    from kcodec.kraft.planner import plan
    img = replay(str(_kraft_log(tmp_path, 27)))
    with pytest.raises(ArgumentTypeError, match=r"updates\[0\]\.level: expected an integer level, got a string"):
        plan(img, [("group.version", "1", "UPGRADE")])
    with pytest.raises(TypeError, match=r"updates\[0\]"):       # still a TypeError for callers
        plan(img, ["group.version=1"])


@pytest.mark.parametrize("extra", [["--release-version", "9.9"],
                                   ["--release-version", "4.1", "--feature", "group.version=99"],
                                   ["--release-version", "4.1", "--feature", "bogus.version=1"],
                                   ["--release-version", "4.1", "--feature", "group.version"]])
def test_bootstrap_validates_before_touching_the_checkpoint(tmp_path, capsys, extra):
    d = tmp_path / "meta"
    assert main(["kraft", "bootstrap", str(d), "--release-version", "4.1"]) == EXIT_OK
    before = (d / "bootstrap.checkpoint").read_bytes()
    capsys.readouterr()
    assert main(["kraft", "bootstrap", str(d)] + extra) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("9.9" in err or "--feature" in err or "feature" in err)
    assert (d / "bootstrap.checkpoint").read_bytes() == before
    assert sorted(os.listdir(d)) == ["bootstrap.checkpoint"]          # no temporary file left


def test_bootstrap_api_rejects_unknown_levels(tmp_path):
    from kcodec.kraft.rewrite import write_bootstrap
    with pytest.raises(InvalidArgumentError, match=r"features\['group.version'\].*99"):
        write_bootstrap(tmp_path, "4.1", features={"group.version": 99})
    with pytest.raises(ArgumentTypeError, match=r"features\['group.version'\]"):
        write_bootstrap(tmp_path, "4.1", features={"group.version": "1"})
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("scenario,path", [
    ({"strategy": "range", "topics": [["orders", 3]], "members": []}, "topics"),
    ({"strategy": "range", "topics": {"orders": 3},
      "members": [{"id": "c1", "topics": ["orders"], "owned": {"orders": 3}}]}, "members[0].owned['orders']"),
    ({"strategy": "range", "topics": {"orders": 3}, "members": [["c1"]]}, "members[0]"),
    ({"strategy": "range", "topics": {"orders": 3}, "members": 5}, "members"),
    ({"strategy": "range", "topics": {"orders": 3}, "members": [{"id": "c1", "topics": [3]}]},
     "members[0].topics[0]"),
    ({"strategy": "range", "topics": {"orders": -1}, "members": []}, "topics['orders']"),
    ({"strategy": "range", "topics": {"orders": 3}, "changes": []}, "changes"),
    ({"group": {"protocolType": "consumer", "protocol": "range", "generation": 1,
                "members": [{"memberId": "m", "subscription": {"topics": "orders"}}]}},
     "group.members[0].subscription.topics"),
])
def test_assign_names_the_field_of_a_bad_scenario(tmp_path, capsys, scenario, path):
    from kcodec.consumer.whatif import load_scenario
    with pytest.raises(InvalidArgumentError) as e:
        load_scenario(scenario)
    assert e.value.argument == path
    f = tmp_path / "s.json"
    f.write_text(json.dumps(scenario))
    assert main(["assign", str(f)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert path in err and err.count("\n") == 1


def test_assign_api_names_the_argument_of_the_wrong_type():
    from kcodec.consumer import Subscription, assign
    subs = {"c1": Subscription(["orders"])}
    with pytest.raises(ArgumentTypeError, match="partitions_per_topic"):
        assign("range", subs, [("orders", 3)])
    with pytest.raises(ArgumentTypeError, match="members"):
        assign("range", 5, {"orders": 3})
    with pytest.raises(InvalidArgumentError, match="strategy"):
        assign("bogus", subs, {"orders": 3})


@pytest.mark.parametrize("kwargs,name", [({"tasks": -5}, "tasks"), ({"instances": 0}, "instances"),
                                         ({"remove": 9}, "remove"), ({"restore_per_s": 0.0}, "restore_per_s"),
                                         ({"tasks": "5"}, "tasks")])
def test_simulate_scale_rejects_what_it_cannot_simulate(kwargs, name):
    from kcodec.streams.simulate import simulate_scale
    with pytest.raises(InvalidArgumentError) as e:
        simulate_scale(**{"instances": 3, **kwargs})
    assert e.value.argument == name


def test_kraft_dump_of_a_segment_with_another_name(tmp_path, capsys):
    d = _kraft_log(tmp_path, 27)
    meta = tmp_path / "meta.log"
    shutil.copy(d / SEGMENT, meta)
    assert main(["kraft", "dump", str(meta)]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.startswith(f"Dumping {meta}\n") and "Log starting offset" not in out
    assert "metadata.version" in out


def test_kraft_dump_checks_every_path_before_printing(tmp_path, capsys):
    d = _kraft_log(tmp_path, 27)
    assert main(["kraft", "dump", str(d), str(tmp_path / "MISSING")]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == "" and "MISSING: no such file or directory" in err


def test_check_downgrade_of_an_unlistable_directory_is_no_verdict(tmp_path, capsys, monkeypatch):
    """Root reads through permission bits, so the listing error is simulated."""
    d = tmp_path / "offsets"
    d.mkdir()
    (d / SEGMENT).write_bytes(_segment(_offsets_records()))
    real = os.scandir

    def scandir(p="."):
        if os.fspath(p) == str(d):
            raise PermissionError(13, "Permission denied", str(d))
        return real(p)
    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["offsets", "check-downgrade", "--to", "3.9", str(d)]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert "OK" not in out and "Permission denied" in err and str(d) in err


def test_analyze_checks_the_path_before_spark(capsys, no_spark):
    pytest.importorskip("pyspark")
    assert main(["analyze", "/no/such/path"]) == EXIT_USAGE
    assert capsys.readouterr().err.strip() == "kcodec analyze: /no/such/path: no such file or directory"


def test_cramjam_is_a_dependency():
    """Real logs are compressed: every install reads them (the source tree's pyproject when
    the tests run from it, else the installed metadata)."""
    import re
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.exists():
        deps = re.search(r"^dependencies = \[(.*?)\]", pyproject.read_text(), re.M | re.S).group(1)
        assert re.search(r'"cramjam\b', deps)
    else:
        from importlib.metadata import requires
        assert any(re.match(r"cramjam\b", r) and "extra ==" not in r for r in requires("kcodec") or [])
    import cramjam  # noqa: F401


# every command that reads a log takes - for a segment on stdin, with the file's exit code
STDIN_COMMANDS = [cmd for cmd, (kind, argv, _, _) in TABLE.items()
                  if kind in ("offsets", "kraft") and cmd != ("analyze",)]
STDIN_CASES = {"valid": EXIT_OK, "random": EXIT_USAGE, "truncated": EXIT_DATA, "bitflip": EXIT_DATA,
               "zstd": EXIT_OK}


@pytest.mark.parametrize("case", list(STDIN_CASES))
@pytest.mark.parametrize("cmd", STDIN_COMMANDS, ids="-".join)
def test_stdin_is_read_like_a_file(tmp_path, capsys, monkeypatch, cmd, case):
    """``-`` reads a segment piped in: the same exit code as the same bytes in a file
    (random bytes are no log: exit 1), messages naming ``-``, never the spooled copy."""
    import io
    import tempfile
    kind, argv, _, _ = TABLE[cmd]
    seg = _input(tmp_path, cmd, case) / SEGMENT
    data = seg.read_bytes()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "spool"))
    (tmp_path / "spool").mkdir()
    runs = {}
    for src in (str(seg), "-"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        args = [a.replace("{}", src).replace("{out}", str(tmp_path / f"out{len(runs)}.checkpoint")) for a in argv]
        rc = main(args)
        runs[src] = (rc, *capsys.readouterr())
    rc, out, err = runs["-"]
    assert rc == runs[str(seg)][0] == STDIN_CASES[case], (cmd, err)
    assert "spool" not in out + err and "kcodec-stdin" not in out + err
    assert os.listdir(tmp_path / "spool") == []           # the copy is gone
    if rc == EXIT_USAGE:
        assert "-: not a Kafka log segment" in err and "\n" not in err.strip()
    elif rc == EXIT_DATA:
        assert "-@" in err
    else:
        # the same output, the file's name aside (a stdin segment has no base offset in its name)
        norm = lambda t: [x for x in t.replace(str(seg), "-").replace(str(seg.parent), "").splitlines()
                          if not x.startswith("Log starting offset")]
        assert norm(out) == norm(runs[str(seg)][1])
