"""``kcodec offsets ...`` subcommands: dump, groups, check-downgrade.

The lead wires :func:`add_subparsers` into the top-level ``kcodec`` command; for a quick
try without it: ``python -m kcodec.offsets.cli dump PATH``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import uuid
from typing import Any, Dict, Iterator, List, Optional, TextIO, Tuple

from kcodec.cli import (EXIT_DATA, EXIT_LOSSY, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, OFFSETS_TOPIC, STDIN,
                        LogInputs)

__all__ = ["add_subparsers", "main", "Progress", "EXIT_CORRUPT"]

# Exit status when the input could not be read whole (corrupt batches, reported; results
# exclude them).  0 means every batch was read; records Kafka itself skips by design
# (unknown record types, aborted transactions) are reported but are not errors.  The
# contract every command follows is kcodec.cli's.
EXIT_CORRUPT = EXIT_DATA


class _Output:
    """stdout that survives a closed pipe (``| head``): once the reader has gone, writes
    are dropped and :attr:`closed` says so; the command decides whether to stop or (with
    ``--strict``) to read on for the exit status."""

    def __init__(self, stream: Optional[TextIO]) -> None:
        self.stream = stream or sys.stdout
        self.closed = False

    def write(self, text: Any) -> None:
        """Write a str, or UTF-8 bytes (straight to the binary stream when there is one)."""
        if self.closed:
            return
        try:
            if not isinstance(text, str):
                raw = getattr(self.stream, "buffer", None)
                if raw is not None:
                    self.stream.flush()
                    raw.write(text)
                    return
                text = bytes(text).decode("utf-8")
            self.stream.write(text)
        except BrokenPipeError:
            self.closed = True
            try:   # keep the interpreter's final flush from failing on the dead pipe too
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self.stream.fileno())
            except (OSError, ValueError, AttributeError):
                pass


def _corrupt_exit(command: str, err: Any) -> int:
    print(f"kcodec offsets {command}: {err}", file=sys.stderr)
    return EXIT_CORRUPT


def _corrupt_summary(command: str, count: int, first: Any) -> int:
    """The stderr line every command ends with when batches could not be read (the
    output says where each one is); the exit status."""
    if not count:
        return EXIT_OK
    print(f"kcodec offsets {command}: {count} corrupt batch(es) not read, left out of the "
          f"output" + (f"; first: {first}" if first is not None else ""), file=sys.stderr)
    return EXIT_CORRUPT


class Progress:
    """A tqdm progress bar on stderr (bytes read of the total), shown when stderr is a
    TTY or when forced.  :meth:`update` takes the absolute position."""

    def __init__(self, total: int, enabled: Optional[bool] = None, stream: Optional[TextIO] = None) -> None:
        stream = stream or sys.stderr   # looked up per call: a default bound at import goes stale
        self.enabled = stream.isatty() if enabled is None else enabled
        self.bar: Any = None
        if self.enabled:                # (tqdm imported only then: a start-up cost otherwise)
            from tqdm import tqdm
            self.bar = tqdm(total=max(total, 1), file=stream, unit="B",
                            unit_scale=True, mininterval=0.1, dynamic_ncols=True,
                            bar_format="{percentage:5.1f}% |{bar}| {n_fmt}/{total_fmt} "
                                       "[{elapsed}<{remaining}, {rate_fmt}]")

    def update(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.update(self.bar.total)
            self.bar.close()


def _jsonable(o: Any) -> Any:
    if isinstance(o, bytes):
        return o.hex()
    if isinstance(o, uuid.UUID):
        return str(o)
    if isinstance(o, (set, frozenset)):
        return sorted(_jsonable(x) for x in o)
    if isinstance(o, tuple):
        return [_jsonable(x) for x in o]
    if isinstance(o, dict):
        return {str(k) if not isinstance(k, tuple) else "-".join(map(str, k)): _jsonable(v)
                for k, v in o.items()}
    if isinstance(o, list):
        return [_jsonable(x) for x in o]
    if hasattr(o, "__dataclass_fields__"):
        return {k: _jsonable(getattr(o, k)) for k in o.__dataclass_fields__}
    return o


def _selection(args: argparse.Namespace) -> Any:
    from .dump import Selection, parse_record_types
    try:
        types = parse_record_types(args.type) if args.type else None
    except ValueError as e:
        raise SystemExit(f"kcodec offsets dump: {e}")
    if (args.from_offset is not None and args.to_offset is not None
            and args.from_offset > args.to_offset):
        raise SystemExit("kcodec offsets dump: --from-offset is after --to-offset")
    return Selection(types, args.from_offset, args.to_offset)


def cmd_dump(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    """One JSON line per record (see kcodec.offsets.dump), or with ``--batches``
    kafka-dump-log's line per batch."""
    sel = _selection(args)
    if args.batches:
        if args.type:
            raise SystemExit("kcodec offsets dump: --type selects records; --batches prints batches")
        return _dump_batches(args, sel, _Output(out))
    from .dump import iter_dump
    o = _Output(out)
    with LogInputs(args.paths, topic=OFFSETS_TOPIC) as files:
        sizes = {f: files.size(f) for f in files}
        bar = Progress(sum(sizes.values()), args.progress)
        bad = 0
        first = None
        base = 0
        try:
            for f in files:
                for pieces, nbad, end, err in iter_dump(files.source(f), sel,
                                                        file=STDIN if f == STDIN else None,
                                                        columnar=not args.record_path,
                                                        strict=args.strict):
                    for p in pieces:
                        o.write(p)
                    bad += nbad
                    first = first if first is not None else err
                    if err is not None and args.strict:
                        return _corrupt_exit("dump", err)
                    if o.closed and not args.strict:
                        return _corrupt_summary("dump", bad, first)  # the reader has gone, as for head
                    bar.update(base + end)
                base += sizes[f]
        finally:
            bar.close()
    return _corrupt_summary("dump", bad, first)


def _dump_batches(args: argparse.Namespace, sel: Any, o: "_Output") -> int:
    """kafka-dump-log's lines without --print-data-log: one per batch."""
    with LogInputs(args.paths, topic=OFFSETS_TOPIC) as files:
        return _batch_lines(args, sel, o, files)


def _batch_lines(args: argparse.Namespace, sel: Any, o: "_Output", files: LogInputs) -> int:
    from kcodec import log as _log
    from kcodec.log.dump import batch_line
    bad = 0
    first = None
    for f in files:
        o.write(f"Dumping {f}\n")
        name = os.path.basename(f)
        if name.endswith(".log") and name.split(".")[0].isdigit():
            o.write(f"Log starting offset: {int(name.split('.')[0])}\n")
        for batch in _log.iter_batches(files.source(f)):
            if batch.error is not None:
                bad += 1
                first = first if first is not None else batch.error
                if args.strict:
                    return _corrupt_exit("dump", batch.error)
                if batch.error.reason != "bad_crc":   # no header to show: say what is there
                    o.write(f"error: {batch.error}\n")
                    continue
            if ((sel.first_offset is not None and batch.last_offset < sel.first_offset)
                    or (sel.last_offset is not None and batch.base_offset > sel.last_offset)):
                continue
            o.write(batch_line(batch) + "\n")
            if o.closed and not args.strict:
                break
    return _corrupt_summary("dump", bad, first)


def _fmt_assigned(a: Any) -> str:
    if not a:
        return "-"
    if isinstance(a, dict) and all(isinstance(v, list) for v in a.values()):
        return " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in a.items())
    return json.dumps(_jsonable(a))


class _CorruptInput(Exception):
    """--strict: the first corrupt batch ends the command."""


def _file_columns(paths: List[str], progress: Optional[bool],
                  strict: bool = False) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(file, iter_offset_columns chunk) over the files, advancing the progress bar per chunk."""
    from .columns import iter_offset_columns
    with LogInputs(paths, topic=OFFSETS_TOPIC) as files:
        sizes = {f: files.size(f) for f in files}
        bar = Progress(sum(sizes.values()), progress)
        base = 0
        try:
            for path in files:
                for cols in iter_offset_columns(files.source(path)):
                    if cols["errors"] and strict:
                        raise _CorruptInput(cols["errors"][0])
                    yield path, cols
                    bar.update(base + cols.get("end", 0))
                base += sizes[path]
        finally:
            bar.close()


def _columns(paths: List[str], progress: Optional[bool], strict: bool = False) -> Iterator[Dict[str, Any]]:
    return (cols for _, cols in _file_columns(paths, progress, strict))


def _fold_fast(paths: List[str], progress: Optional[bool], as_of: Optional[int],
               strict: bool = False) -> Any:
    """The columnar fold (see kcodec.offsets.state.fold_log), file by file with progress."""
    from .state import Folder
    f = Folder(as_of_ms=as_of)
    for path, cols in _file_columns(paths, progress, strict):
        f.errors.extend(str(e) for e in cols["errors"])
        f.add_columns(cols, partition=os.path.dirname(path))
    return f.state()


def cmd_groups(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = _Output(out)
    try:
        st = _fold_fast(args.paths, args.progress, args.as_of, args.strict)
    except _CorruptInput as e:
        return _corrupt_exit("groups", e.args[0])
    status = EXIT_CORRUPT if st.errors else 0
    if args.group:
        wanted = set(args.group)
        missing = sorted(wanted - set(st.groups) - st.deleted_groups)
        if missing:     # said before anything is printed: no table for what is not there
            hid = (f"; {len(st.errors)} corrupt batch(es) were not read (first: {st.errors[0]})"
                   if st.errors else "")
            print(f"kcodec offsets groups: {', '.join(f'group {g!r}' for g in missing)} "
                  f"{'is' if len(missing) == 1 else 'are'} not in the log{hid}", file=sys.stderr)
            return EXIT_CORRUPT if st.errors else EXIT_USAGE
        st = dataclasses.replace(
            st, groups={g: v for g, v in st.groups.items() if g in wanted},
            deleted_groups={g for g in st.deleted_groups if g in wanted},
            deleted_offsets={g: v for g, v in st.deleted_offsets.items() if g in wanted})
    if args.json:
        doc = {"groups": {g: _jsonable(s) for g, s in sorted(st.groups.items())},
               "deleted_groups": sorted(st.deleted_groups),
               "deleted_offsets": _jsonable(st.deleted_offsets),
               "open_transactions": [{"partition": p, "producer_id": pid, "records": n}
                                     for (p, pid), n in st.open_transactions.items()],
               "aborted_records": st.aborted_records,
               "unknown_records": st.unknown_records, "errors": st.errors}
        out.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        if st.errors:
            _corrupt_summary("groups", len(st.errors), st.errors[0])
        return status
    # the protocol type (classic groups: "consumer", "connect", ...) and the assignor the
    # group chose (Kafka's ASSIGNMENT-STRATEGY; none while Empty) in columns of their own
    rows = [("GROUP", "TYPE", "STATE", "EPOCH", "PROTOCOL-TYPE", "ASSIGNMENT-STRATEGY", "MEMBERS", "OFFSETS")]
    for gid, g in sorted(st.groups.items()):
        rows.append((gid, g.type + (f" (from {g.converted_from})" if g.converted_from else ""), g.state,
                     "-" if g.generation is None else str(g.generation), g.protocol_type or "-",
                     g.protocol or "-", str(len(g.members)), str(len(g.offsets))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    if args.verbose:
        for gid, g in sorted(st.groups.items()):
            out.write(f"\n{gid}\n")
            for m in g.members.values():
                out.write(f"  member {m.member_id} client={m.client_id} instance={m.instance_id} "
                          f"assigned={_fmt_assigned(m.assigned)}\n")
            for (t, p), o in sorted(g.offsets.items()):
                out.write(f"  offset {t}-{p} = {o.offset} epoch={o.leader_epoch} "
                          f"metadata={o.metadata!r}\n")
    converted = sorted(gid for gid, g in st.groups.items() if g.converted_from)
    if converted:
        out.write(f"\nconverted from consumer-protocol groups (KIP-848 online downgrade; their "
                  f"assignments came from the server-side assignor): {', '.join(converted)}\n")
    if st.deleted_groups:
        out.write(f"\ndeleted groups: {', '.join(sorted(st.deleted_groups))}\n")
    if st.open_transactions:
        out.write(f"open transactions (held back): {len(st.open_transactions)}\n")
    if st.unknown_records:
        out.write("skipped unknown record types: "
                  + ", ".join(f"{t} x{n}" for t, n in sorted(st.unknown_records.items())) + "\n")
    for e in st.errors:
        out.write(f"error: {e}\n")
    if st.errors:
        out.write(f"{len(st.errors)} corrupt batch(es) not read: the states above exclude them\n")
        _corrupt_summary("groups", len(st.errors), st.errors[0])
    return status


def cmd_check_downgrade(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    from .downgrade import check_columns, parse_target
    out = _Output(out)
    try:
        parse_target(args.to)
    except ValueError as e:
        raise SystemExit(f"kcodec offsets check-downgrade: {e}")
    try:
        rep = check_columns(_columns(args.paths, args.progress, args.strict), args.to)
    except _CorruptInput as e:
        return _corrupt_exit("check-downgrade", e.args[0])
    if args.json:
        out.write(json.dumps({"target": rep.target, "records": rep.records, "safe": rep.safe,
                              "verdict": rep.verdict, "errors": rep.errors,
                              "findings": [_jsonable(f) for f in rep.summary()]}, indent=1) + "\n")
    else:
        if rep.safe:
            out.write(f"OK: a Kafka {rep.target} coordinator loads all {rep.records} records\n")
        for f in rep.summary():
            name = f.type_name or "unknown"
            vv = " tombstone" if f.tombstone else "" if f.value_version is None else f" v{f.value_version}"
            out.write(f"{f.outcome.upper():12} type {f.record_type} ({name}{vv}) x{f.count}: "
                      f"{f.reason} [first at {f.first_position}]\n")
        if not rep.complete:
            for e in rep.errors:
                out.write(f"error: {e}\n")
            if not rep.findings:
                out.write(f"UNKNOWN: {len(rep.errors)} corrupt batch(es) could not be read; "
                          f"no verdict on the {rep.records} records read is a safe one\n")
    if not rep.complete:
        _corrupt_summary("check-downgrade", len(rep.errors), rep.errors[0] if rep.errors else None)
    if rep.fails:
        return EXIT_REFUSED     # fails on records that were read, whatever the corrupt ones held
    if not rep.complete:
        return EXIT_DATA        # the unread batches could hold a record the load fails on
    return EXIT_LOSSY if rep.findings else EXIT_OK


def add_subparsers(subparsers: Any) -> None:
    """Register ``offsets dump|groups|check-downgrade`` on an argparse subparsers object."""
    p = subparsers.add_parser("offsets", help="read __consumer_offsets logs",
                              description="Decode __consumer_offsets segments, fold group state, "
                                          "check downgrades (KIP-915).")
    sub = p.add_subparsers(dest="offsets_command", metavar="COMMAND")
    sub.required = True

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("paths", nargs="+", metavar="PATH",
                        help="segment files (.log, .checkpoint), directories of them, or - "
                             "for a segment on stdin")
        sp.add_argument("--progress", action="store_true", default=None,
                        help="show progress on stderr even when it is not a terminal")
        sp.add_argument("--strict", action="store_true",
                        help=f"stop at the first corrupt batch (exit {EXIT_CORRUPT}) instead of "
                             "reporting it and reading on")

    d = sub.add_parser("dump", help="one JSON line per record, fully decoded")
    common(d)
    d.add_argument("--type", action="append", metavar="TYPE",
                   help="only records of this type (OffsetCommit, GroupMetadata, ..., a numeric "
                        "type id, or control; repeatable or comma-separated)")
    d.add_argument("--from-offset", type=int, metavar="N", help="only records at offset N or later")
    d.add_argument("--to-offset", type=int, metavar="N", help="only records at offset N or earlier")
    d.add_argument("--batches", action="store_true",
                   help="kafka-dump-log's line per batch (baseOffset ... crc ... isvalid) "
                        "instead of records")
    d.add_argument("--record-path", action="store_true",
                   help="decode record by record (the slow reference the columnar output is "
                        "tested against)")
    d.set_defaults(func=cmd_dump)
    g = sub.add_parser("groups", help="the group states a coordinator would load")
    common(g)
    g.add_argument("--json", action="store_true", help="JSON instead of a table")
    g.add_argument("-v", "--verbose", action="store_true", help="members and offsets too")
    g.add_argument("--group", action="append", metavar="GROUP",
                   help="only this group (repeatable)")
    g.add_argument("--as-of", type=int, default=None, metavar="MS",
                   help="ignore records stamped after this time (epoch ms)")
    g.set_defaults(func=cmd_groups)
    c = sub.add_parser("check-downgrade", help="what a coordinator of an older Kafka would "
                                               "skip, fail on, or lose",
                       epilog="Exit status: 0 safe, 2 the load would fail, 3 unknown: "
                              "corrupt batches could not be read, 4 records would be skipped "
                              "or fields lost (1: usage or path error).  The per-release facts "
                              "are documented in kcodec.offsets.downgrade.")
    common(c)
    c.add_argument("--to", required=True, metavar="VERSION", help="target Kafka version, e.g. 3.9")
    c.add_argument("--json", action="store_true", help="JSON output (the verdict, the counts and the findings)")
    c.set_defaults(func=cmd_check_downgrade)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m kcodec.offsets.cli ARGS``: ``kcodec offsets ARGS``."""
    from kcodec.cli import main as kcodec_main
    return kcodec_main(["offsets"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
