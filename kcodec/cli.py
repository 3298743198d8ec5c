"""The ``kcodec`` command.

``kcodec decode`` decodes any message of Kafka's specs (hex, raw files or stdin) and prints
Kafka-style JSON lines; without arguments it decodes its embedded examples (records a Kafka
4.1.1 broker wrote to ``__consumer_offsets``).  Domain modules add their own subcommands
(``offsets``, ``assign``, ``kraft``, ``features``, ``streams``, ``analyze``) through
``add_subparsers``.

Exit status, the same for every command
---------------------------------------
=====  ==================  ==============================================================
code   constant            meaning
=====  ==================  ==============================================================
0      ``EXIT_OK``         everything was read and the command did what was asked
1      ``EXIT_USAGE``      usage or path error, nothing was read: bad arguments (argparse's
                           too), a missing path, a dangling link, a FIFO or a directory
                           where a file is expected, a directory without segment files (or
                           only with partitions of topics the command does not read), a
                           file that is not a log (its first batch has no magic byte Kafka
                           writes), input that is not what the command takes (a scenario
                           that is no scenario), the group or image path asked for is not there
2      ``EXIT_REFUSED``    read whole, and the answer is no: ``offsets check-downgrade``:
                           the older coordinator would fail to load the log; ``features
                           upgrade|downgrade|disable``: the controller would refuse the
                           update; ``streams simulate-upgrade``: the upgrade ends in an error
3      ``EXIT_DATA``       read, with corrupt or unreadable data: corrupt batches (reported
                           on stderr, left out of every result), bytes that do not decode,
                           a version in the data Kafka 4.1.1 does not know (a log finalizing
                           metadata.version 9999: nothing is planned or rewritten from it)
4      ``EXIT_LOSSY``      ``offsets check-downgrade`` only: the older coordinator would skip
                           records or lose fields
70     ``EXIT_INTERNAL``   a bug in kcodec (please report it); ``KCODEC_DEBUG=1`` shows the
                           traceback
=====  ==================  ==============================================================

A usage or path error stops a command before it reads anything.  ``check-downgrade`` ranks
2 over 3 over 4: a load that fails on the records read fails whatever the corrupt batches
held, while "lossy" is no verdict when batches could not be read.  Errors are one line on
stderr naming the command, the path, the field or argument and the byte offset, never a
traceback; :func:`main` is the one place that maps :mod:`kcodec.errors` classes and OS
errors to these codes.  Paths are checked (:func:`input_files`) before any heavy work.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import stat
import sys
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import kcodec
from kcodec.errors import (DecodeError, InputPathError, InvalidArgumentError, KcodecError,
                           UnsupportedVersionError)
from kcodec.framing import INT16_VERSION, read_framed

__all__ = ["main", "build_parser", "input_files", "LogInputs", "STDIN", "plural", "EXIT_OK", "EXIT_USAGE", "EXIT_REFUSED",
           "EXIT_DATA", "EXIT_LOSSY", "EXIT_INTERNAL"]

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_REFUSED = 2
EXIT_DATA = 3
EXIT_LOSSY = 4
EXIT_INTERNAL = 70      # sysexits.h EX_SOFTWARE

# the magic byte (byte 16 of a v2 batch and of a v0/v1 message): a file whose first batch
# has none of these is not a log
_MAGICS = (0, 1, 2)


def _segment_file(path: str) -> None:
    """Raise InputPathError unless ``path`` is a readable regular file that starts like a
    log segment (checked without blocking: a FIFO is refused before it is opened)."""
    try:
        st = os.stat(path)
    except OSError as e:
        if os.path.islink(path):
            raise InputPathError(path, "dangling symbolic link (its target does not exist)") from None
        raise InputPathError(path, e.strerror or str(e)) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputPathError(path, "is a directory, a file is expected here")
    if not stat.S_ISREG(st.st_mode):
        raise InputPathError(path, "not a regular file (a FIFO, socket or device); "
                                   "pipe a segment in with - instead")
    try:
        with open(path, "rb") as f:
            head = f.read(17)
    except OSError as e:
        raise InputPathError(path, f"cannot read: {e.strerror or e}") from None
    if not head:
        return                               # an empty segment (Kafka's active one often is)
    # only the magic byte: a batch with a bad length is a corrupt log (read, exit 3), a file
    # whose first batch has no magic Kafka ever wrote is not a log at all
    magic = head[16] if len(head) == 17 else None
    if magic is not None and magic not in _MAGICS:
        raise InputPathError(path, f"not a Kafka log segment: no record batch at position 0 "
                                   f"(magic byte {magic}; Kafka writes 0, 1 or 2)")


#: The topic each kind of command reads from a broker's log dir (kcodec.log's names, written
#: here so that starting a command does not import kcodec.log and NumPy; a test keeps them equal).
OFFSETS_TOPIC = "__consumer_offsets"
METADATA_TOPIC = "__cluster_metadata"
_LEFT_OUT_SHOWN = 10        # partitions named in the stderr line; the rest are counted

# the command running (set by main), named in input_files' stderr line
_running = "kcodec"


def input_files(paths: Sequence[str], *, stdin: bool = False, check: bool = True,
                topic: Optional[str] = None) -> List[str]:
    """The segment and snapshot files to read for ``paths`` (files or directories, in
    :func:`kcodec.log.log_files` order; ``-`` is standard input when ``stdin``), each
    checked as :func:`_segment_file` does; an :class:`InputPathError` naming the path and
    the reason otherwise.  A directory must hold segment files and be listable whole.

    ``topic``: the topic the command reads (:data:`OFFSETS_TOPIC`, :data:`METADATA_TOPIC`).
    Below a directory only that topic's partition directories are read (a broker's log
    dir holds every topic); the others are named once on stderr, and a directory with
    partitions of other topics only is an input error."""
    out: List[str] = []
    left: List[str] = []
    for p in paths:
        p = os.fspath(p)
        if p == "-" and stdin:
            out.append(p)
            continue
        if not os.path.lexists(p):
            raise InputPathError(p, "no such file or directory")
        if os.path.isdir(p):
            def fail(e: OSError) -> None:
                raise InputPathError(e.filename or p, f"cannot list the directory: {e.strerror or e}")
            for _ in os.walk(p, onerror=fail):   # log_files' walk skips what it cannot list
                pass
            from kcodec.log import list_log_files      # (NumPy: only for directories)
            files, other = list_log_files(p, topic=topic)
            if not files and other:
                raise InputPathError(p, f"no {topic} partitions in this directory, only "
                                        f"{_partitions_text(other)}")
            if not files:
                raise InputPathError(p, "no segment files (*.log, *.checkpoint) in this directory")
            left += other
        else:
            files = [p]
        if check:
            for f in files:
                _segment_file(f)
        out += files
    if out.count("-") > 1:
        raise InvalidArgumentError("-", "standard input can be read once")
    if left:
        print(f"{_running}: reading only {topic} partitions; left out {_partitions_text(left)}",
              file=sys.stderr)
    return out


def _partitions_text(names: List[str]) -> str:
    """``3 of other topics: orders-0, ...`` (the first few named)."""
    shown = ", ".join(names[:_LEFT_OUT_SHOWN])
    more = f", ... and {len(names) - _LEFT_OUT_SHOWN} more" if len(names) > _LEFT_OUT_SHOWN else ""
    return f"{len(names)} of other topics: {shown}{more}"


def plural(n: int, word: str, many: Optional[str] = None) -> str:
    """``1 member``, ``2 members`` (``many``: the plural when it is not ``word + "s"``)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


STDIN = "-"     # standard input, as a PATH argument and in every message about it


class LogInputs:
    """The files to read for a command's PATH arguments (:func:`input_files`, checked
    before anything is read), ``-`` standing for a segment on standard input.

    Used as a context: on entry standard input is copied to a temporary file (some
    readers take a path, some read twice) and checked as :func:`_segment_file` checks a
    file, so random bytes piped in are refused as the same bytes in a file are (exit 1).
    Every message names it ``-``, never the copy: :meth:`source` opens the copy under
    that name (the log readers name batches by a file object's name), and commands that
    need a path (:meth:`path`) show ``-`` instead and :meth:`rename` its errors."""

    def __init__(self, paths: Sequence[str], *, check: bool = True, topic: Optional[str] = None) -> None:
        self.files = input_files(paths, stdin=True, check=check, topic=topic)
        self._copy: Any = None
        self._opened: List[Any] = []

    def __enter__(self) -> "LogInputs":
        if STDIN in self.files:
            import shutil
            import tempfile
            self._copy = tempfile.NamedTemporaryFile(prefix="kcodec-stdin-", suffix=".log")
            try:
                shutil.copyfileobj(sys.stdin.buffer, self._copy, 1 << 20)
                self._copy.flush()
                _segment_file(self._copy.name)
            except InputPathError as e:
                self.__exit__(None, None, None)
                raise InputPathError(STDIN, e.reason) from None
            except BaseException:
                self.__exit__(None, None, None)
                raise
        return self

    def __exit__(self, *exc: Any) -> None:
        for f in self._opened:
            f.close()
        self._opened.clear()
        if self._copy is not None:
            self._copy.close()          # (deletes it)
            self._copy = None

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def path(self, f: str) -> str:
        """A path to read ``f`` from (for ``-``, the copy's: show :meth:`name`)."""
        return self._copy.name if f == STDIN else f

    def source(self, f: str) -> Any:
        """What a :mod:`kcodec.log` reader reads ``f`` from: the path, or for ``-`` a new
        binary file of the copy named ``-``."""
        if f != STDIN:
            return f
        raw = open(self._copy.name, "rb", buffering=0)
        raw.name = STDIN          # type: ignore[misc]  # what the readers' errors say
        self._opened.append(raw)
        return raw

    def sources(self) -> List[Any]:
        return [self.source(f) for f in self.files]

    def size(self, f: str) -> int:
        return os.path.getsize(self.path(f))

    def rename(self, error: Any) -> Any:
        """A :class:`kcodec.log.BatchError` read from :meth:`path` of ``-``, naming ``-``."""
        if self._copy is not None and getattr(error, "file", None) == self._copy.name:
            return error._replace(file=STDIN)
        return error


# Domain modules that contribute subcommands (each exposes add_subparsers(subparsers)), with
# the optional extra each needs: (extra name, the top-level modules it installs), or None.
_DOMAIN_CLIS: Dict[str, Optional[Tuple[str, Tuple[str, ...]]]] = {
    "kcodec.offsets.cli": None,
    "kcodec.consumer.cli": None,
    "kcodec.kraft.cli": None,
    "kcodec.streams.cli": None,
    "kcodec.spark.cli": ("spark", ("pyspark",)),
}

# The first word of each domain's commands: ``kcodec kraft dump`` builds the parser of
# ``kraft`` alone (importing every domain's CLI costs more than a small dump).  A word not
# here, or none, builds them all (``kcodec --help`` lists every command).
_COMMAND_DOMAIN: Dict[str, str] = {
    "offsets": "kcodec.offsets.cli",
    "assign": "kcodec.consumer.cli",
    "kraft": "kcodec.kraft.cli",
    "features": "kcodec.kraft.cli",
    "streams": "kcodec.streams.cli",
    "analyze": "kcodec.spark.cli",
}


def _inputs(args: argparse.Namespace) -> Iterator[Tuple[str, bytes]]:
    for h in args.hex or []:
        yield "hex", _unhex(h)
    for path in args.inputs:
        if path == "-":
            for i, line in enumerate(sys.stdin, 1):
                line = line.strip()
                if line:
                    yield f"stdin:{i}", _unhex(line, f"- (stdin line {i})")
        else:
            if os.path.lexists(path) and not os.path.isdir(path) and os.path.exists(path) \
                    and not stat.S_ISREG(os.stat(path).st_mode):
                raise InputPathError(path, "not a regular file (a FIFO, socket or device); "
                                           "pipe it in with - instead")
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                raise InputPathError(path, e.strerror or str(e)) from None
            yield path, data


def _unhex(text: str, source: str = "--hex") -> bytes:
    try:
        return bytes.fromhex(text.replace(" ", "").replace(":", ""))
    except ValueError:
        raise InvalidArgumentError(source, f"not hex: {text[:40]!r}") from None


def _cli_text(e: BaseException) -> str:
    """An API error's text in the command line's words (options, not keyword arguments)."""
    return str(e).replace(kcodec._NEWER_HINT, " (pass --newer latest to decode it with the newest layout)")


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
        from ._examples import EXAMPLES
        if args.inputs or args.hex:
            raise SystemExit("kcodec decode: name the message to decode (e.g. OffsetCommitValue)")
        for ex in EXAMPLES:
            items.append((ex["about"], ex["message"], bytes.fromhex(ex["hex"]), ex.get("version"),
                          ex.get("prefixed", False)))
    else:
        kcodec.spec(args.message)            # an unknown name is a usage error, not bad data
        if args.version is not None and not args.prefixed:
            try:                             # a version the message lacks: an argument error
                kcodec.program(args.message, args.version, newer=args.newer)
            except UnsupportedVersionError as e:
                raise InvalidArgumentError("--version", _cli_text(e)) from None
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
            out = {"source": src, "message": name, "error": _cli_text(e)}
        else:
            out = {"source": src, **out}
        print(json.dumps(out, ensure_ascii=False))
    if failed:
        print(f"kcodec decode: {failed} of {len(items)} input(s) did not decode (their "
              f"\"error\" lines above say where)", file=sys.stderr)
    return EXIT_DATA if failed else EXIT_OK


def cmd_specs(args: argparse.Namespace) -> int:
    rows = [(s.name, s.type, "" if s.api_key is None else str(s.api_key), str(s.valid_versions),
             str(s.flexible_versions), s.folder) for s in kcodec.specs()
            if not args.type or s.type == args.type]
    header = ("name", "type", "key", "valid", "flexible", "folder")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    return 0


class _SpecTypes:
    """The spec types, for ``specs --type``'s choices: read from the specs only when
    argparse checks or shows them (loading every spec costs more than most commands)."""

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({x.type for x in kcodec.specs()}))

    def __contains__(self, value: object) -> bool:
        return value in list(self)

    def __str__(self) -> str:
        return ", ".join(self)


_SPEC_TYPES = _SpecTypes()


def build_parser() -> argparse.ArgumentParser:
    """The ``kcodec`` parser, every domain's subcommands included."""
    return _build()[0]


def _build(only: Optional[str] = None) -> Tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The parser and its ``decode`` subparser; ``only``: the one domain CLI module whose
    subcommands are added (else every one's)."""
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
    s.add_argument("--type", choices=_SPEC_TYPES, metavar="TYPE",
                   help="only specs of this type: %(choices)s")
    s.set_defaults(func=cmd_specs)

    missing = []
    for modname, extra in _DOMAIN_CLIS.items():
        if only is not None and modname != only:
            continue
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


def _command(args: Optional[argparse.Namespace]) -> str:
    """``kcodec offsets groups``: the command as typed, for error lines."""
    words = ["kcodec"]
    for attr in ("command", "offsets_command", "kraft_command", "features_command", "streams_command"):
        w = getattr(args, attr, None) if args is not None else None
        if w:
            words.append(w)
    return " ".join(words)


def _exit_code(e: BaseException) -> Tuple[int, str]:
    """The exit code and the one-line message for an error a command raised."""
    if isinstance(e, (InvalidArgumentError, InputPathError)):
        return EXIT_USAGE, str(e)
    if isinstance(e, (DecodeError, UnsupportedVersionError)):
        return EXIT_DATA, str(e)             # bytes read that do not decode, versions from the data
    if isinstance(e, KcodecError):
        return EXIT_USAGE, str(e)            # unknown message names, values that cannot be written
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        return EXIT_USAGE, f"{where}{e.strerror or e}"
    if isinstance(e, ValueError):            # an argument the API rejects
        return EXIT_USAGE, str(e)
    return EXIT_INTERNAL, (f"internal error, please report it: {type(e).__name__}: {e} "
                           f"(KCODEC_DEBUG=1 shows the traceback)")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``kcodec`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code
    (see the module docstring); errors are one line on stderr, never a traceback
    (``KCODEC_DEBUG=1`` re-raises them)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, decode = _build(_COMMAND_DOMAIN.get(argv[0]) if argv else None)
    args = None
    try:
        try:
            if argv[:1] == ["decode"]:
                # inputs may come after options (decode MSG -v 9 a.bin b.bin)
                args = decode.parse_intermixed_args(argv[1:])
                args.command = "decode"
            else:
                args = parser.parse_args(argv)
        except SystemExit as e:              # argparse: --help / --version (0), errors (2)
            return EXIT_OK if not e.code else EXIT_USAGE
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        global _running
        _running = _command(args)
        return int(args.func(args) or 0)
    except BrokenPipeError:                  # | head: the reader has gone
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except SystemExit as e:                  # a command's own usage message
        if e.code is None or isinstance(e.code, int):
            return int(e.code or 0)
        print(e.code, file=sys.stderr)
        return EXIT_USAGE
    except Exception as e:
        if os.environ.get("KCODEC_DEBUG"):
            raise
        code, text = _exit_code(e)
        print(f"{_command(args)}: {text}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
