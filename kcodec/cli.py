"""The ``kcodec`` command.

``kcodec decode`` decodes any message of Kafka's specs (hex, raw files or stdin) and prints
Kafka-style JSON lines; without arguments it decodes its embedded examples (records a Kafka
4.1.1 broker wrote to ``__consumer_offsets``).  Domain modules add their own subcommands
(``offsets``, ``assign``) through ``add_subparsers``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import kcodec
from kcodec.errors import KcodecError
from kcodec.framing import INT16_VERSION, read_framed

from ._examples import EXAMPLES

# Domain modules that contribute subcommands (each exposes add_subparsers(subparsers)), with
# the optional extra each needs: (extra name, the top-level modules it installs), or None.
_DOMAIN_CLIS: Dict[str, Optional[Tuple[str, Tuple[str, ...]]]] = {
    "kcodec.offsets.cli": None,
    "kcodec.consumer.cli": None,
    "kcodec.kraft.cli": None,
    "kcodec.streams.cli": None,
    "kcodec.spark.cli": ("spark", ("pyspark",)),
}


def _inputs(args: argparse.Namespace) -> Iterator[Tuple[str, bytes]]:
    for h in args.hex or []:
        yield "hex", _unhex(h)
    for path in args.inputs:
        if path == "-":
            for i, line in enumerate(sys.stdin, 1):
                line = line.strip()
                if line:
                    yield f"stdin:{i}", _unhex(line)
        else:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise SystemExit(f"kcodec decode: {path}: {e.strerror or e}")
            yield path, data


def _unhex(text: str) -> bytes:
    try:
        return bytes.fromhex(text.replace(" ", "").replace(":", ""))
    except ValueError:
        raise SystemExit(f"kcodec: not hex: {text[:40]!r}")


def _embedded(name: str, value: dict, data: dict) -> None:
    """Decode the member metadata inside group metadata (``subscription``/``assignment`` of
    a classic group's members) in place, as ``offsets dump`` does: the decoder registered
    for the group's protocol type and protocol (the consumer protocol built in, Streams'
    for ``stream`` groups), bytes left as base64 when they do not decode."""
    if name != "GroupMetadataValue":
        return
    from kcodec.offsets import decode_members
    for m, e in zip(data.get("members") or [], decode_members(value) or []):
        for field in ("subscription", "assignment"):
            if e[field].value is not None and e[field].schema is not None:
                m[field] = kcodec.to_kafka_json(e[field].schema, e[field].value, e[field].parsed_version)


def _decode_one(name: str, data: bytes, version: Optional[int], prefixed: bool,
                newer: str, python: bool, embedded: bool = True) -> dict:
    if prefixed:
        f = read_framed(data, INT16_VERSION, name, newer=newer)
        version, value, newer_than_known = f.version, f.value, f.newer_than_known
    else:
        if version is None:
            version = kcodec.spec(name).latest_version
        r = kcodec.read(name, data, version, newer=newer)
        value, newer_than_known = r.value, r.newer_than_known
    out: dict = {"message": kcodec.spec(name).name, "version": version}
    if newer_than_known:
        out["newer_than_known"] = True
    if python:
        out["data"] = _jsonable(value)
    else:
        out["data"] = kcodec.to_kafka_json(name, value, version)
        if embedded:
            _embedded(kcodec.spec(name).name, value, out["data"])
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    if hasattr(v, "hex") and hasattr(v, "int"):     # uuid.UUID
        return str(v)
    return v


def cmd_decode(args: argparse.Namespace) -> int:
    args.message = args.words[0] if args.words else None
    args.inputs = args.words[1:]
    items: List[Tuple[str, str, bytes, Optional[int], bool]] = []
    if args.message is None:
        if args.inputs or args.hex:
            raise SystemExit("kcodec decode: name the message to decode (e.g. OffsetCommitValue)")
        for ex in EXAMPLES:
            items.append((ex["about"], ex["message"], bytes.fromhex(ex["hex"]), ex.get("version"),
                          ex.get("prefixed", False)))
    else:
        for src, data in _inputs(args):
            items.append((src, args.message, data, args.version, args.prefixed))
        if not items:
            raise SystemExit("kcodec decode: no input (give --hex HEX, FILE..., or - for hex lines on stdin)")
    failed = 0
    for src, name, data, version, prefixed in items:
        try:
            out = _decode_one(name, data, version, prefixed, args.newer, args.python,
                              not args.raw_embedded)
        except kcodec.KcodecError as e:
            failed += 1
            out = {"source": src, "message": name, "error": str(e)}
        else:
            out = {"source": src, **out}
        print(json.dumps(out, ensure_ascii=False))
    return 1 if failed else 0


def cmd_specs(args: argparse.Namespace) -> int:
    rows = [(s.name, s.type, "" if s.api_key is None else str(s.api_key), str(s.valid_versions),
             str(s.flexible_versions), s.folder) for s in kcodec.specs()
            if not args.type or s.type == args.type]
    header = ("name", "type", "key", "valid", "flexible", "folder")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``kcodec`` parser, every domain's subcommands included."""
    return _build()[0]


def _build() -> Tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    p = argparse.ArgumentParser(prog="kcodec", description="Exact, fast codecs for Kafka's coordination metadata.")
    p.add_argument("--version", action="version", version=f"kcodec {kcodec.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    d = sub.add_parser("decode", help="decode any Kafka message (hex, files, stdin) to Kafka-style JSON lines",
                       description="Decode message bodies of any Kafka spec. Without arguments, decodes the "
                                   "embedded examples (records from a Kafka 4.1.1 __consumer_offsets log).")
    d.add_argument("words", nargs="*", metavar="MESSAGE [INPUT ...]",
                   help="spec name (e.g. OffsetCommitValue), then files of raw bytes or - for hex lines on stdin")
    d.add_argument("--hex", action="append", help="a message as hex (repeatable)")
    d.add_argument("-v", "--version", dest="version", type=int, help="message version (default: newest)")
    d.add_argument("--prefixed", action="store_true",
                   help="input starts with an int16 version (coordinator values, consumer protocol)")
    d.add_argument("--newer", choices=("error", "latest"), default="error",
                   help="versions above the newest known: reject, or decode with the newest layout")
    d.add_argument("--python", action="store_true", help="print kcodec's Python mapping instead of Kafka's JSON")
    d.add_argument("--raw-embedded", action="store_true",
                   help="keep group members' subscription/assignment as base64 instead of "
                        "decoding them with their protocol (consumer)")
    d.set_defaults(func=cmd_decode)

    s = sub.add_parser("specs", help="list the shipped Kafka message specs")
    s.add_argument("--type", choices=sorted({x.type for x in kcodec.specs()}),
                   help="only specs of this type")
    s.set_defaults(func=cmd_specs)

    missing = []
    for modname, extra in _DOMAIN_CLIS.items():
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            # only a missing optional extra is skipped (and said so in --help); any
            # other import failure is a bug and surfaces
            if extra is None or (e.name or "").split(".")[0] not in extra[1]:
                raise
            missing.append(f"{modname.split('.')[-2] if '.' in modname else modname}"
                           f" (pip install 'kcodec[{extra[0]}]')")
            continue
        mod.add_subparsers(sub)
    if missing:
        p.epilog = "not installed: " + ", ".join(missing)
    return p, d


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser, decode = _build()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["decode"]:
        # inputs may come after options (decode MSG -v 9 a.bin b.bin)
        args = decode.parse_intermixed_args(argv[1:])
    else:
        args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except (KcodecError, OSError) as e:   # bad input or a missing file: one line, no traceback
        print(f"kcodec {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
