"""``kcodec kraft dump|image|bootstrap`` and ``kcodec features
describe|upgrade|downgrade|disable|rewrite``: Kafka's kafka-dump-log,
kafka-metadata-shell, kafka-storage and kafka-features, offline, on a metadata log."""
from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from typing import TYPE_CHECKING, Any, Dict, List, Optional, TextIO, Tuple


from . import features as F
from kcodec.cli import (EXIT_DATA, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, METADATA_TOPIC, STDIN, LogInputs,
                        input_files)
from kcodec.errors import InvalidArgumentError

if TYPE_CHECKING:
    from kcodec import log
    from .image import MetadataImage

# Each command imports what it runs (the image and the planner need NumPy; ``kraft dump``
# of a clean log needs neither): starting the command costs what it uses.

__all__ = ["add_subparsers"]

_PATHS_HELP = "metadata log segments, .checkpoint snapshots or directories (- for a segment on stdin)"


def _json_default(o: Any) -> Any:
    if isinstance(o, uuid.UUID):
        import base64
        return base64.urlsafe_b64encode(o.bytes).rstrip(b"=").decode()
    if isinstance(o, bytes):
        return o.hex()
    if isinstance(o, tuple):
        return list(o)
    return str(o)


def cmd_dump(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    from .dump import write_dump
    out = out or sys.stdout
    # every path checked before output; below a directory, __cluster_metadata partitions
    # only (what else is there said once)
    input_files(args.paths, stdin=True, topic=METADATA_TOPIC)
    files = [(p, [p] if p == STDIN else _listed(p)) for p in args.paths]
    errors: List[log.BatchError] = []
    undecoded = 0
    first: Optional[str] = None
    with LogInputs([p for p in args.paths if p == STDIN]) as stdin:
        for p, fs in files:
            for f in fs:
                shown = os.path.relpath(f, p) if os.path.isdir(p) else p
                offsets: List[int] = []
                write_dump(stdin.path(f), out, display_name=shown, errors=errors, salvage=args.salvage,
                           undecoded=offsets)
                undecoded += len(offsets)
                if offsets and first is None:
                    first = f"{f}@offset {offsets[0]}"
        errors = [stdin.rename(e) for e in errors]
    for e in errors:         # their line says isvalid: false; their records only with --salvage
        print(f"kcodec kraft dump: corrupt batch: {e}", file=sys.stderr)
    if undecoded:            # printed as Kafka's tool prints them ("Error at N, skipping.")
        print(f"kcodec kraft dump: {undecoded} record(s) did not decode as metadata records; "
              f"first: {first}", file=sys.stderr)
    return EXIT_DATA if errors or undecoded else EXIT_OK


def _listed(path: str) -> List[str]:
    """The files ``kraft dump`` reads for one checked path."""
    if not os.path.isdir(path):
        return [path]
    from kcodec.log import log_files
    return log_files(path, topic=METADATA_TOPIC)


def _load(paths: List[str]) -> MetadataImage:
    from .image import replay
    # below a directory (a broker's log dir), only __cluster_metadata's files
    with LogInputs(paths, topic=METADATA_TOPIC) as files:
        img = replay(files.sources())
    F.check_image_level(img.metadata_version)
    return img


def _unusable(cmd: str, img: MetadataImage, paths: List[str]) -> Optional[int]:
    """Why ``img`` cannot stand for the cluster's metadata, said on stderr, as the exit
    status (None: it can): the log was damaged (3; what replay could not read is missing
    from it), or nothing at all was read (1: not a metadata log)."""
    if img.damaged:
        dmg = img.damage()
        print(f"kcodec {cmd}: the log is damaged: {len(dmg)} unreadable part(s); what they "
              "held is missing, so the state read is not the cluster's:", file=sys.stderr)
        for line in dmg[:10]:
            print(f"  {line}", file=sys.stderr)
        if len(dmg) > 10:
            print(f"  ... and {len(dmg) - 10} more", file=sys.stderr)
        return EXIT_DATA
    if (not img.record_counts and img.last_offset < 0 and img.kraft_version == 0
            and img.voters is None and img.leader is None):
        print(f"kcodec {cmd}: no metadata records in {', '.join(paths)}: not a metadata log",
              file=sys.stderr)
        return EXIT_USAGE
    return None


def cmd_image(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    img = _load(args.paths)
    try:
        value = img.ls(args.path) if args.ls else img.cat(args.path)
    except KeyError as e:
        print(f"kcodec kraft image: {e.args[0] if e.args else e}", file=sys.stderr)
        return EXIT_USAGE
    if args.ls and not args.json:
        for x in value:
            out.write(f"{x}\n")
    else:
        out.write(json.dumps(value, default=_json_default, indent=None if args.compact else 2) + "\n")
    for i in img.issues[: args.issues]:
        print(f"kcodec kraft image: issue at offset {i.offset}: {i.kind}: {i.message}", file=sys.stderr)
    if len(img.issues) > args.issues:
        print(f"kcodec kraft image: ... and {len(img.issues) - args.issues} more issue(s) "
              f"(--issues N shows N)", file=sys.stderr)
    return EXIT_DATA if img.damaged else EXIT_OK


def cmd_bootstrap(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    from .rewrite import write_bootstrap
    out = out or sys.stdout
    mv = _metadata_version("--release-version", args.release_version)
    feats = dict(_parse_feature(x) for x in (args.feature or []))
    # write_bootstrap validates the levels, creates the directory and replaces the file
    # atomically: a rejected command leaves an existing bootstrap.checkpoint as it was
    path = write_bootstrap(args.directory, mv, features=feats or None)
    out.write(f"Wrote {path} (metadata.version {mv.version})\n")
    return EXIT_OK


def _metadata_version(argument: str, text: str) -> F.MetadataVersion:
    try:
        return F.metadata_version(text)
    except ValueError as e:
        raise InvalidArgumentError(argument, str(e)) from None


def _level_text(name: str, level: int) -> str:
    if name == "metadata.version":
        try:
            return F.metadata_version(level).version
        except ValueError:
            return str(level)
    return str(level)


def cmd_describe(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    img = _load(args.paths)
    bad = _unusable("features describe", img, args.paths)
    if bad is not None:
        return bad
    sup = img.supported_features()
    nodes = sup["brokers"] or sup["controllers"]
    ranges: Dict[str, Tuple[int, int]] = nodes[min(nodes)] if nodes else F.supported_ranges()
    fin = img.finalized_features()
    names = sorted(set(ranges) | set(fin))
    if args.json:
        out.write(json.dumps({"epoch": img.last_offset, "features": {
            n: {"supported": ranges.get(n), "finalized": fin.get(n, 0)} for n in names},
            "nodes": sup}, default=_json_default, indent=2) + "\n")
        return EXIT_OK
    for n in names:
        lo, hi = ranges.get(n, (0, 0))
        out.write(f"Feature: {n}\tSupportedMinVersion: {_level_text(n, lo)}\t"
                  f"SupportedMaxVersion: {_level_text(n, hi)}\t"
                  f"FinalizedVersionLevel: {_level_text(n, fin.get(n, 0))}\tEpoch: {img.last_offset}\n")
    return 0


def _parse_feature(text: str) -> Tuple[str, int]:
    """``NAME=LEVEL`` of a feature Kafka 4.1.1 knows (metadata.version also by name);
    whether the level is one the controller supports is the planner's question."""
    name, _, value = text.partition("=")
    if not name or not value:
        raise InvalidArgumentError("--feature", f"takes NAME=LEVEL, got {text!r}")
    if name == "metadata.version":
        return name, _metadata_version("--feature", value).level
    if name not in F.FEATURES:
        raise InvalidArgumentError("--feature", f"unknown feature {name!r} (known: "
                                   f"metadata.version, {', '.join(sorted(F.FEATURES))})")
    try:
        return name, int(value)
    except ValueError:
        raise InvalidArgumentError("--feature", f"{name}: the level must be an integer, "
                                   f"got {value!r}") from None


def _cmd_update(op: str, args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    from .planner import FeatureUpdate, plan
    out = out or sys.stdout
    try:
        ups: List[Tuple[str, int]] = [_parse_feature(x) for x in (args.feature or [])]
        if getattr(args, "metadata", None):
            ups.append(("metadata.version", F.metadata_version(args.metadata).level))
        if getattr(args, "release_version", None):
            mv = F.metadata_version(args.release_version)
            ups.append(("metadata.version", mv.level))
            ups += [(n, l) for n, l in F.default_levels(mv).items() if n != "kraft.version"]
        if op == "disable":
            ups = [(n, 0) for n in (args.disable_feature or [])] + ups
    except ValueError as e:
        print(f"kcodec features {op}: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not ups:
        print(f"kcodec features {op}: nothing to do (give --feature)", file=sys.stderr)
        return EXIT_USAGE
    kind = "UPGRADE" if op == "upgrade" else ("UNSAFE_DOWNGRADE" if args.unsafe else "SAFE_DOWNGRADE")
    img = _load(args.paths)
    bad = _unusable(f"features {op}", img, args.paths)
    if bad is not None:
        return bad
    res = plan(img, [FeatureUpdate(n, l, kind) for n, l in ups], validate_only=args.dry_run)
    if args.json:
        out.write(json.dumps(res._asdict(), default=_json_default, indent=2) + "\n")
        return EXIT_OK if res.ok else EXIT_REFUSED
    past = {"upgrade": "upgraded", "downgrade": "downgraded", "disable": "disabled"}[op]
    for n, l in ups:
        lv = _level_text(n, l)
        if res.ok:
            out.write(f"{n} {'can be' if args.dry_run else 'was'} {past} to {lv}.\n")
        else:
            out.write(f"Could not {op} {n} to {lv}. {res.message}\n")
    if res.ok and not args.dry_run:
        out.write("records the controller would write:\n")
        for name, value, ver in res.records:
            out.write(f"  {name} v{ver} {json.dumps(value, default=_json_default)}\n")
    dg = res.downgrade
    if dg is not None:
        out.write(f"downgrade is {'lossy' if dg.lossy else 'lossless'}"
                  + (f" (metadata changed at {', '.join(dg.changed_at)})" if dg.changed_at else "") + "\n")
        for rec, field, count in dg.losses:
            out.write(f"  would lose {rec}.{field} in {count} record(s)\n" if field != "*"
                      else f"  would drop {count} {rec}(s)\n")
    return EXIT_OK if res.ok else EXIT_REFUSED


def cmd_rewrite(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    from .rewrite import write_snapshot
    out = out or sys.stdout
    img = _load(args.paths)
    bad = _unusable("features rewrite", img, args.paths)
    if bad is not None:
        print("kcodec features rewrite: no snapshot written", file=sys.stderr)
        return bad
    try:
        rep = write_snapshot(img, args.out, to=args.to, epoch=args.epoch)
    except ValueError as e:
        print(f"kcodec features rewrite: {e}", file=sys.stderr)
        return EXIT_USAGE
    out.write(f"Wrote a snapshot at metadata.version {_level_text('metadata.version', rep.to_level)} "
              f"({rep.records} records) from {_level_text('metadata.version', rep.from_level or 0)}: "
              f"{'lossy' if rep.lossy else 'lossless'}\n")
    for l in rep.losses:
        out.write(f"  lost: {l.record}.{l.field} in {l.count} record(s): {l.reason}\n")
    for n in rep.notes:
        out.write(f"  note: {n}\n")
    return 0


def add_subparsers(subparsers: Any) -> None:
    """Register ``kraft`` and ``features`` on an argparse subparsers object."""
    k = subparsers.add_parser("kraft", help="KRaft __cluster_metadata logs and snapshots")
    ks = k.add_subparsers(dest="kraft_command", metavar="COMMAND", required=True)
    d = ks.add_parser("dump", help="print records like kafka-dump-log --cluster-metadata-decoder")
    d.add_argument("paths", nargs="+", metavar="PATH", help=_PATHS_HELP)
    d.add_argument("--salvage", action="store_true",
                   help="also print the records that could be read from a corrupt batch (its line says "
                        "isvalid: false), exactly as kafka-dump-log does; the exit status is still 3")
    d.set_defaults(func=cmd_dump)
    i = ks.add_parser("image", help="replay into a metadata image and print a path of it")
    i.add_argument("paths", nargs="+", metavar="PATH", help=_PATHS_HELP)
    i.add_argument("--path", default="/", help="image path (/topics/NAME/0, /features, /brokers/1, ...)")
    i.add_argument("--ls", action="store_true", help="list the children of --path")
    i.add_argument("--json", action="store_true", help="JSON output for --ls")
    i.add_argument("--compact", action="store_true", help="one-line JSON")
    i.add_argument("--issues", type=int, default=20, metavar="N",
                   help="show at most N replay issues on stderr (default 20)")
    i.set_defaults(func=cmd_image)
    b = ks.add_parser("bootstrap", help="write bootstrap.checkpoint like kafka-storage format")
    b.add_argument("directory", help="metadata log directory to write bootstrap.checkpoint into "
                                     "(created if missing)")
    b.add_argument("--release-version", required=True, help="e.g. 4.1-IV1 or 3.9")
    b.add_argument("--feature", action="append", help="NAME=LEVEL override")
    b.set_defaults(func=cmd_bootstrap)

    f = subparsers.add_parser("features", help="finalized features and UpdateFeatures planning (KIP-778)")
    fs = f.add_subparsers(dest="features_command", metavar="COMMAND", required=True)
    ds = fs.add_parser("describe", help="finalized and supported feature levels")
    ds.add_argument("paths", nargs="+", metavar="PATH", help=_PATHS_HELP)
    ds.add_argument("--json", action="store_true", help="JSON output")
    ds.set_defaults(func=cmd_describe)
    for op in ("upgrade", "downgrade", "disable"):
        u = fs.add_parser(op, help=f"plan a feature {op} as the controller would")
        u.add_argument("paths", nargs="+", metavar="PATH", help=_PATHS_HELP)
        u.add_argument("--feature", action="append", help="NAME=LEVEL (metadata.version=3.9-IV0)")
        if op == "upgrade":
            u.add_argument("--metadata", help="metadata.version to upgrade to")
            u.add_argument("--release-version", help="metadata.version and the release's default levels")
        if op == "downgrade":
            u.add_argument("--metadata", help="metadata.version to downgrade to")
        if op == "disable":
            u.add_argument("--disable-feature", action="append", help="feature to set to 0")
        u.add_argument("--unsafe", action="store_true", help="UNSAFE_DOWNGRADE")
        u.add_argument("--dry-run", action="store_true", help="validate only")
        u.add_argument("--json", action="store_true", help="JSON output (the plan and the records)")
        u.set_defaults(func=lambda a, _op=op: _cmd_update(_op, a))
    r = fs.add_parser("rewrite", help="write a snapshot of the image at a lower metadata.version")
    r.add_argument("--to", required=True, help="metadata.version (level or 3.9-IV0)")
    r.add_argument("--epoch", type=int, default=None,
                   help="leader epoch in the snapshot's file name and batches (default: the "
                        "epoch of the log's last batch)")
    r.add_argument("paths", nargs="+", metavar="PATH", help="the log/snapshot, then OUT")
    r.set_defaults(func=_rewrite_entry)


def _rewrite_entry(args: argparse.Namespace) -> int:
    if len(args.paths) < 2:
        print("kcodec features rewrite: give PATH... OUT", file=sys.stderr)
        return EXIT_USAGE
    args.out = args.paths[-1]
    args.paths = args.paths[:-1]
    return cmd_rewrite(args)
