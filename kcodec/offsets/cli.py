"""``kcodec offsets ...`` subcommands: dump, groups, check-downgrade.

The lead wires :func:`add_subparsers` into the top-level ``kcodec`` command; for a quick
try without it: ``python -m kcodec.offsets.cli dump PATH``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from typing import Any, Dict, Iterator, List, Optional, TextIO, Tuple

__all__ = ["add_subparsers", "main", "Progress"]


class Progress:
    """A tqdm progress bar on stderr (bytes read of the total), shown when stderr is a
    TTY or when forced.  :meth:`update` takes the absolute position."""

    def __init__(self, total: int, enabled: Optional[bool] = None, stream: TextIO = sys.stderr) -> None:
        from tqdm import tqdm
        self.enabled = stream.isatty() if enabled is None else enabled
        self.bar = tqdm(total=max(total, 1), file=stream, disable=not self.enabled, unit="B",
                        unit_scale=True, mininterval=0.1, dynamic_ncols=True,
                        bar_format="{percentage:5.1f}% |{bar}| {n_fmt}/{total_fmt} "
                                   "[{elapsed}<{remaining}, {rate_fmt}]")

    def update(self, done: int) -> None:
        if self.enabled:
            self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.enabled:
            self.update(self.bar.total)
        self.bar.close()


def _files(paths: List[str]) -> List[str]:
    from kcodec.log import log_files
    out: List[str] = []
    for p in paths:
        if not os.path.exists(p):
            raise SystemExit(f"kcodec offsets: no such file or directory: {p}")
        out += log_files(p)
    return out


def _decoded(paths: List[str], progress: Optional[bool]) -> Iterator[Tuple[Any, Any, Any]]:
    """iter_decoded over the files, advancing the progress bar per batch."""
    from .records import iter_decoded
    files = _files(paths)
    sizes = {f: os.path.getsize(f) for f in files}
    bar = Progress(sum(sizes.values()), progress)
    base = 0
    try:
        for f in files:
            for batch, rec, dec in iter_decoded(f):
                bar.update(base + batch.position + max(batch.size, 0))
                yield batch, rec, dec
            base += sizes[f]
    finally:
        bar.close()


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


def cmd_dump(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from kcodec.log import parse_control_record
    from .records import to_json
    bad = 0
    for batch, rec, dec in _decoded(args.paths, args.progress):
        base = {"file": batch.file, "position": batch.position}
        if rec is None:
            if batch.error is not None:
                base["error"] = {"reason": batch.error.reason, "message": batch.error.message,
                                 "skipped_to": batch.error.skipped_to}
                bad += 1
                out.write(json.dumps(base) + "\n")
            continue   # an empty batch (left by compaction) has nothing to show
        line: Dict[str, Any] = dict(base)
        line.update({"offset": rec.offset, "timestamp": rec.timestamp,
                     "timestamp_type": batch.timestamp_type,
                     "producer_id": batch.producer_id, "producer_epoch": batch.producer_epoch,
                     "is_transactional": batch.is_transactional, "is_control": batch.is_control,
                     "partition_leader_epoch": batch.partition_leader_epoch})
        if rec.headers:
            line["headers"] = [[k, None if v is None else v.hex()] for k, v in rec.headers]
        if batch.error is not None:
            line["batch_error"] = {"reason": batch.error.reason, "message": batch.error.message}
            bad += 1
        if dec is None:
            try:
                c = parse_control_record(rec)
                line["control"] = {"type": c.type_name, "version": c.version,
                                   "coordinatorEpoch": c.coordinator_epoch}
            except Exception as e:
                line["control"] = {"error": str(e)}
        else:
            line.update(to_json(dec))
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 1 if bad and args.strict else 0


def _fmt_assigned(a: Any) -> str:
    if not a:
        return "-"
    if isinstance(a, dict) and all(isinstance(v, list) for v in a.values()):
        return " ".join(f"{t}:{','.join(map(str, ps))}" for t, ps in a.items())
    return json.dumps(_jsonable(a))


def _columns(paths: List[str], progress: Optional[bool]) -> Iterator[Dict[str, Any]]:
    """iter_offset_columns over the files, advancing the progress bar per chunk."""
    from .columns import iter_offset_columns
    files = _files(paths)
    sizes = {f: os.path.getsize(f) for f in files}
    bar = Progress(sum(sizes.values()), progress)
    base = 0
    try:
        for path in files:
            for cols in iter_offset_columns(path):
                yield cols
                bar.update(base + cols.get("end", 0))
            base += sizes[path]
    finally:
        bar.close()


def _fold_fast(paths: List[str], progress: Optional[bool], as_of: Optional[int]) -> Any:
    """The columnar fold (see kcodec.offsets.state.fold_log), file by file with progress."""
    from .columns import iter_offset_columns
    from .state import Folder
    files = _files(paths)
    sizes = {f: os.path.getsize(f) for f in files}
    bar = Progress(sum(sizes.values()), progress)
    f = Folder(as_of_ms=as_of)
    base = 0
    try:
        for path in files:
            for cols in iter_offset_columns(path):
                f.errors.extend(str(e) for e in cols["errors"])
                f.add_columns(cols, partition=os.path.dirname(path))
                bar.update(base + cols.get("end", 0))
            base += sizes[path]
    finally:
        bar.close()
    return f.state()


def cmd_groups(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    st = _fold_fast(args.paths, args.progress, args.as_of)
    if args.json:
        doc = {"groups": {g: _jsonable(s) for g, s in sorted(st.groups.items())},
               "deleted_groups": sorted(st.deleted_groups),
               "deleted_offsets": _jsonable(st.deleted_offsets),
               "open_transactions": [{"partition": p, "producer_id": pid, "records": n}
                                     for (p, pid), n in st.open_transactions.items()],
               "aborted_records": st.aborted_records,
               "unknown_records": st.unknown_records, "errors": st.errors}
        out.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        return 0
    rows = [("GROUP", "TYPE", "STATE", "EPOCH", "PROTOCOL", "MEMBERS", "OFFSETS")]
    for gid, g in sorted(st.groups.items()):
        rows.append((gid, g.type, g.state, "-" if g.generation is None else str(g.generation),
                     g.protocol or g.protocol_type or "-", str(len(g.members)), str(len(g.offsets))))
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
    if st.deleted_groups:
        out.write(f"\ndeleted groups: {', '.join(sorted(st.deleted_groups))}\n")
    if st.open_transactions:
        out.write(f"open transactions (held back): {len(st.open_transactions)}\n")
    if st.unknown_records:
        out.write("skipped unknown record types: "
                  + ", ".join(f"{t} x{n}" for t, n in sorted(st.unknown_records.items())) + "\n")
    for e in st.errors:
        out.write(f"error: {e}\n")
    return 0


def cmd_check_downgrade(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from .downgrade import check_columns, parse_version
    try:
        parse_version(args.to)
    except ValueError as e:
        raise SystemExit(f"kcodec offsets check-downgrade: {e}")
    rep = check_columns(_columns(args.paths, args.progress), args.to)
    if args.json:
        out.write(json.dumps({"target": rep.target, "records": rep.records, "safe": rep.safe,
                              "findings": [_jsonable(f) for f in rep.summary()]}, indent=1) + "\n")
    else:
        if rep.safe:
            out.write(f"OK: a Kafka {rep.target} coordinator loads all {rep.records} records\n")
        for f in rep.summary():
            name = f.type_name or "unknown"
            vv = "" if f.value_version is None else f" v{f.value_version}"
            out.write(f"{f.outcome.upper():12} type {f.record_type} ({name}{vv}) x{f.count}: "
                      f"{f.reason} [first at {f.first_position}]\n")
    return 2 if rep.fails else (1 if not rep.safe else 0)


def add_subparsers(subparsers: Any) -> None:
    """Register ``offsets dump|groups|check-downgrade`` on an argparse subparsers object."""
    p = subparsers.add_parser("offsets", help="read __consumer_offsets logs",
                              description="Decode __consumer_offsets segments, fold group state, "
                                          "check downgrades (KIP-915).")
    sub = p.add_subparsers(dest="offsets_command", metavar="COMMAND")
    sub.required = True

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("paths", nargs="+", metavar="PATH",
                        help="segment files (.log, .checkpoint) or directories of them")
        sp.add_argument("--progress", action="store_true", default=None,
                        help="show progress on stderr even when it is not a terminal")

    d = sub.add_parser("dump", help="one JSON line per record, fully decoded")
    common(d)
    d.add_argument("--strict", action="store_true", help="exit 1 when a batch is corrupt")
    d.set_defaults(func=cmd_dump)
    g = sub.add_parser("groups", help="the group states a coordinator would load")
    common(g)
    g.add_argument("--json", action="store_true", help="JSON instead of a table")
    g.add_argument("-v", "--verbose", action="store_true", help="members and offsets too")
    g.add_argument("--as-of", type=int, default=None, metavar="MS",
                   help="ignore records stamped after this time (epoch ms)")
    g.set_defaults(func=cmd_groups)
    c = sub.add_parser("check-downgrade", help="what a coordinator of an older Kafka would "
                                               "skip, fail on, or lose",
                       epilog="Exit status: 0 safe, 1 records skipped or fields lost, "
                              "2 the load would fail.  The per-release facts are documented "
                              "in kcodec.offsets.downgrade.")
    common(c)
    c.add_argument("--to", required=True, metavar="VERSION", help="target Kafka version, e.g. 3.9")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check_downgrade)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kcodec")
    add_subparsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["offsets"] + list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. | head
        return 0


if __name__ == "__main__":
    sys.exit(main())
