"""``kcodec streams``."""
from __future__ import annotations

import io
import json

from kcodec.cli import build_parser

from ._shared import fixtures_dir, require


def run(argv):
    from kcodec.streams import cli
    buf = io.StringIO()
    args = __import__("argparse").ArgumentParser(prog="kcodec")
    cli.add_subparsers(args.add_subparsers(dest="command"))
    ns = args.parse_args(["streams"] + argv)
    return ns.func(ns, buf), buf.getvalue()


def test_decode_hex_auto():
    rc, out = run(["decode", "--json", "0000000b0000000b" + "00" * 24 + "7fffffffffffffff"])
    assert rc == 0 and json.loads(out)["kind"] == "assignment"


def test_decode_says_a_version_probing_subscription_is_future():
    # a subscription newer than this client (KIP-268): only its two versions are read, the
    # rest of "decoded" are placeholders, and the output says so
    rc, out = run(["decode", "--json", "--kind", "subscription", "0000000c0000000d"])
    doc = json.loads(out)
    assert rc == 0 and doc["future"] is True and doc["decoded"]["version"] == 12
    rc, out = run(["decode", "--json", "0000000b0000000b" + "00" * 24 + "7fffffffffffffff"])
    assert "future" not in json.loads(out)


def test_decode_bad_bytes_is_an_error(capsys):
    rc, _ = run(["decode", "--kind", "assignment", "0000000b00"])
    assert rc == 3 and "byte offset" in capsys.readouterr().err     # kcodec.cli.EXIT_DATA


def test_decode_group_from_offsets():
    seg = require(fixtures_dir() / "consumer_offsets" / "segments")
    rc, out = run(["decode", "--json", "--offsets", str(seg)])
    docs = json.loads(out)
    assert rc == 0 and docs[0]["group"] == "tiny-streams"
    assert all(m["subscription"]["version"] == 11 for m in docs[0]["members"])


def test_simulate_upgrade_text_and_json():
    rc, out = run(["simulate-upgrade", "--from", "2.3", "--to", "3.8", "--instances", "5"])
    assert rc == 0 and "completed: 5 bounces" in out and "[version probing]" in out
    rc, out = run(["simulate-upgrade", "--from", "1.1", "--to", "2.0", "--json"])
    assert rc == 2 and "unable to decode" in json.loads(out)["error"]   # EXIT_REFUSED


def test_simulate_scale_both():
    rc, out = run(["simulate-scale", "--instances", "3", "--add", "2", "--tasks", "20", "--assignor", "both"])
    assert rc == 0 and "== ha" in out and "== learner" in out and "task-seconds unavailable" in out
    rc, out = run(["simulate-scale", "--instances", "3", "--add", "2", "--tasks", "20", "--assignor", "ha", "--json"])
    assert json.loads(out)[0]["balanced"]


def test_registered_in_kcodec_cli():
    args = build_parser().parse_args(["streams", "simulate-upgrade", "--from", "2.3", "--to", "3.8"])
    assert args.instances == 3
