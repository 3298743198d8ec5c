"""The kcodec command line."""
import json
import subprocess
import sys

import pytest

import kcodec
from kcodec import cli


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out = capsys.readouterr().out
    return rc, [json.loads(line) for line in out.splitlines() if line.startswith("{")], out


def test_decode_embedded_examples(capsys):
    rc, rows, _ = run(capsys, "decode")
    assert rc == 0 and rows
    assert all("data" in r and "error" not in r for r in rows)
    assert {"OffsetCommitValue", "GroupMetadataValue"} <= {r["message"] for r in rows}


def test_decode_hex_prefixed(capsys):
    rc, rows, _ = run(capsys, "decode", "OffsetCommitValue", "--prefixed",
                      "--hex", "0004000000000000000affffffff01000001a202d8c8cf00")
    assert rc == 0
    assert rows == [{"source": "hex", "message": "OffsetCommitValue", "version": 4,
                     "data": {"offset": 10, "leaderEpoch": -1, "metadata": "",
                              "commitTimestamp": 1795344091343}}]


def test_decode_file_and_errors(capsys, tmp_path):
    good = kcodec.encode("JoinGroupRequest", {"groupId": "g", "protocolType": "consumer"}, 9)
    (tmp_path / "good.bin").write_bytes(good)
    (tmp_path / "bad.bin").write_bytes(good[:-3])
    rc, rows, _ = run(capsys, "decode", "JoinGroupRequest", "-v", "9",
                      str(tmp_path / "good.bin"), str(tmp_path / "bad.bin"))
    assert rc == 3          # kcodec.cli.EXIT_DATA: read, and some input did not decode
    assert rows[0]["data"]["groupId"] == "g"
    assert "byte offset" in rows[1]["error"]


def test_decode_newer_version(capsys):
    data = kcodec.encode("OffsetCommitValue", {"offset": 3}, 4).hex()
    # a version argument the message lacks is a usage error, worded with the CLI's option
    assert cli.main(["decode", "OffsetCommitValue", "-v", "7", "--hex", data]) == 1
    err = capsys.readouterr().err
    assert err.startswith("kcodec decode: --version: OffsetCommitValue version 7 is outside its valid versions")
    assert "--newer latest" in err and "newer='latest'" not in err
    # a version read from the data: the input did not decode (3), the hint the CLI's
    rc, rows, _ = run(capsys, "decode", "OffsetCommitValue", "--prefixed", "--hex", "0007" + data)
    assert rc == 3 and "outside its valid versions" in rows[0]["error"]
    assert "(pass --newer latest to decode it with the newest layout)" in rows[0]["error"]
    rc, rows, _ = run(capsys, "decode", "OffsetCommitValue", "-v", "7", "--newer", "latest", "--hex", data)
    assert rc == 0 and rows[0]["newer_than_known"] and rows[0]["data"]["offset"] == 3


def test_decode_names_stdin_lines_not_hex_option(capsys, monkeypatch):
    import io
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello world\n"))
    assert cli.main(["decode", "OffsetCommitValue", "-"]) == 1
    assert capsys.readouterr().err == "kcodec decode: - (stdin line 1): not hex: 'hello world'\n"
    assert cli.main(["decode", "OffsetCommitValue", "--hex", "zz"]) == 1
    assert capsys.readouterr().err == "kcodec decode: --hex: not hex: 'zz'\n"


def test_specs_table(capsys):
    rc, _, out = run(capsys, "specs", "--type", "coordinator-key")
    assert rc == 0 and "OffsetCommitKey" in out and "JoinGroupRequest" not in out


def test_console_entry_point_runs():
    r = subprocess.run([sys.executable, "-m", "kcodec.cli", "decode"], capture_output=True, text=True)
    assert r.returncode == 0 and "OffsetCommitValue" in r.stdout


def test_decode_inputs_after_options(capsys, tmp_path):
    data = kcodec.encode("JoinGroupRequest", {"groupId": "g", "protocolType": "consumer"}, 9)
    (tmp_path / "a.bin").write_bytes(data)
    (tmp_path / "b.bin").write_bytes(data)
    rc, rows, _ = run(capsys, "decode", "JoinGroupRequest", "-v", "9",
                      str(tmp_path / "a.bin"), "--python", str(tmp_path / "b.bin"))
    assert rc == 0 and [r["data"]["groupId"] for r in rows] == ["g", "g"]


def test_a_broken_domain_cli_surfaces(monkeypatch, tmp_path):
    (tmp_path / "kc_broken_cli.py").write_text("import kc_no_such_module\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli._DOMAIN_CLIS, "kc_broken_cli", None)
    try:
        cli.build_parser()
    except ModuleNotFoundError as e:
        assert e.name == "kc_no_such_module"
    else:
        raise AssertionError("the import error was swallowed")


def test_a_missing_extra_is_named(monkeypatch, tmp_path, capsys):
    (tmp_path / "kc_extra_cli.py").write_text("import kc_optional_dep\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(cli._DOMAIN_CLIS, "kc_extra_cli", ("spark", ("kc_optional_dep",)))
    assert "pip install 'kcodec[spark]'" in cli.build_parser().format_help()


def test_python_dash_m_kcodec():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "kcodec", "specs", "--type", "coordinator-key"],
                         capture_output=True, text=True, check=True).stdout
    assert "OffsetCommitKey" in out


def test_adapters_say_which_extra_to_install(monkeypatch):
    import builtins
    import importlib
    import kcodec.consumer
    real = builtins.__import__

    def no_clients(name, *a, **k):
        if name.split(".")[0] in ("kafka", "aiokafka"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *a, **k)

    original = importlib.import_module("kcodec.consumer.adapters")
    monkeypatch.setattr(builtins, "__import__", no_clients)
    monkeypatch.delitem(sys.modules, "kcodec.consumer.adapters")
    # the fresh import replaces the package attribute too: put the real module back after
    monkeypatch.setattr(kcodec.consumer, "adapters", original)
    adapters = importlib.import_module("kcodec.consumer.adapters")
    assert adapters is not original
    with pytest.raises(ImportError, match=r"pip install 'kcodec\[kafka-python\]'"):
        adapters.CooperativeStickyAssignor
    with pytest.raises(ImportError, match=r"kcodec\[aiokafka\]"):
        adapters.AIOKafkaStickyAssignor


@pytest.mark.parametrize("argv,message", [
    (["specs", "--type", "bogus"], "invalid choice: 'bogus' (choose from 'coordinator-key'"),
    (["decode", "OffsetCommitValue", "/nonexistent/file"], "kcodec decode: /nonexistent/file: No such file"),
    (["offsets", "groups", "/nonexistent/dir"], "/nonexistent/dir: no such file or directory"),
    (["offsets", "check-downgrade", "--to", "foo", "/tmp"], "the target must be a release from 0.9 to 4.1"),
    (["offsets", "check-downgrade", "--to", "99", "/tmp"], "the target must be a release from 0.9 to 4.1"),
    (["offsets", "check-downgrade", "--to", "5.0", "/tmp"], "no facts for Kafka 5.0"),
])
def test_bad_command_lines_get_one_line_naming_what_is_valid(argv, message):
    r = subprocess.run([sys.executable, "-m", "kcodec"] + argv, capture_output=True, text=True)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ what the package prints, read back

def _group_value(members=True):
    from kcodec.consumer import Assignment, Subscription, encode_assignment, encode_subscription
    m = {"memberId": "c1", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
         "rebalanceTimeout": 1, "sessionTimeout": 2,
         "subscription": encode_subscription(Subscription(["orders"], None, [], 4)),
         "assignment": encode_assignment(Assignment([("orders", 0), ("orders", 1)], b""))}
    value = {"protocolType": "consumer", "generation": 4, "protocol": "range" if members else None,
             "leader": "c1", "currentStateTimestamp": 9, "members": [m] if members else []}
    return b"\x00\x03" + kcodec.encode("GroupMetadataValue", value, 3)


def test_decode_decodes_embedded_consumer_protocol(capsys):
    hexv = _group_value().hex()
    rc, rows, _ = run(capsys, "decode", "GroupMetadataValue", "--prefixed", "--hex", hexv)
    m = rows[0]["data"]["members"][0]
    assert rc == 0 and m["subscription"]["topics"] == ["orders"]
    assert m["assignment"]["assignedPartitions"] == [{"topic": "orders", "partitions": [0, 1]}]
    rc, rows, _ = run(capsys, "decode", "GroupMetadataValue", "--prefixed", "--raw-embedded", "--hex", hexv)
    assert isinstance(rows[0]["data"]["members"][0]["subscription"], str)     # base64, as before


def _assign(capsys, tmp_path, text, *argv):
    p = tmp_path / "in.json"
    p.write_text(text)
    rc = cli.main(["assign", *argv, str(p)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_assign_reads_what_decode_and_offsets_dump_print(capsys, tmp_path):
    from kcodec.log import encode_batch
    hexv = _group_value().hex()
    run(capsys, "decode", "GroupMetadataValue", "--prefixed", "--hex", hexv)
    capsys.readouterr()
    cli.main(["decode", "GroupMetadataValue", "--prefixed", "--hex", hexv])
    line = capsys.readouterr().out
    for text in (line, json.dumps(json.loads(line)["data"])):
        rc, out, err = _assign(capsys, tmp_path, text)
        assert rc == 0, err
        assert out.startswith("strategy range") and "c1 (2): orders-0, orders-1" in out
    # offsets dump lines: the last GroupMetadata record of the group is the one taken
    key = b"\x00\x02" + kcodec.encode("GroupMetadataKey", {"group": "g"}, 0)
    other = b"\x00\x02" + kcodec.encode("GroupMetadataKey", {"group": "h"}, 0)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(encode_batch([(key, _group_value(False)), (key, _group_value()),
                                  (other, _group_value())]))
    cli.main(["offsets", "dump", str(seg)])
    dump = capsys.readouterr().out
    rc, out, err = _assign(capsys, tmp_path, dump)
    assert rc == 1 and "pick one with --group" in err and "\n" not in err.rstrip("\n")
    rc, out, err = _assign(capsys, tmp_path, dump, "--group", "g")
    assert rc == 0 and "c1 (2)" in out, err
    rc, out, err = _assign(capsys, tmp_path, dump.splitlines()[0] + "\n")
    assert rc == 1 and "is empty in this record" in err
    rc, out, err = _assign(capsys, tmp_path, dump, "--group", "nope")
    assert rc == 1 and "no GroupMetadata record of group 'nope'" in err


@pytest.mark.parametrize("text", ['{"x": 1}', '{"offset": 3}\n{"offset": 4}\n'])
def test_assign_says_what_it_wants(capsys, tmp_path, text):
    rc, out, err = _assign(capsys, tmp_path, text)
    assert rc == 1 and out == ""
    assert "expected a scenario" in err and "kcodec offsets dump" in err and err.count("\n") == 1


def test_every_option_and_argument_has_help():
    """``kcodec COMMAND --help`` (and the generated docs/cli.md reference) explain every
    option and positional argument."""
    import argparse
    missing = []

    def walk(p, words):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, words + [name])
            elif not isinstance(a, argparse._HelpAction) and not a.help:
                missing.append(" ".join(words + [a.option_strings[0] if a.option_strings else a.dest]))
    walk(cli.build_parser(), ["kcodec"])
    assert missing == []
    issues = next(a for a in cli.build_parser()._subparsers._group_actions[0].choices["kraft"]
                  ._subparsers._group_actions[0].choices["image"]._actions if "--issues" in a.option_strings)
    assert issues.metavar == "N" and "at most N" in issues.help


def test_counts_of_one_are_singular(capsys, tmp_path):
    assert cli.plural(1, "member") == "1 member" and cli.plural(2, "member") == "2 members"
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"topics": {"t": 1}, "members": [{"id": "c1", "topics": ["t"]}]}))
    assert cli.main(["assign", "--strategy", "range", str(path)]) == 0
    assert "strategy range (deterministic): 1 member, 1 partition\n" in capsys.readouterr().out
