"""``kcodec assign``: what an assignor would do to a group (see :mod:`kcodec.consumer.whatif`)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Optional, TextIO

from kcodec.cli import EXIT_OK, EXIT_USAGE, plural
from kcodec.errors import InputPathError

from .assignors import STRATEGIES
from .whatif import load_scenario, what_if

__all__ = ["add_subparsers", "cmd_assign", "main", "scenario_from_text"]

_WANTED = ("a scenario ({\"members\": [...]} or {\"group\": ...}), a GroupMetadataValue as "
           "`kcodec decode GroupMetadataValue --prefixed` prints it (or its \"data\"), or "
           "GroupMetadata lines of `kcodec offsets dump`")


def _as_scenario(obj: Any) -> Optional[dict]:
    """The scenario in one JSON value the package prints, or None if it is none of them."""
    sc = _scenario_of(obj)
    g = sc.get("group") if sc is not None else None
    g = g.get("data", g) if isinstance(g, dict) else g
    if isinstance(g, dict) and not g.get("members") and not g.get("protocol") and "changes" not in sc:
        name = _group_of(obj) if isinstance(obj, dict) else None
        raise ValueError(f"group{'' if name is None else ' ' + repr(name)} is empty in this "
                         "record (no members, no protocol): nothing to assign")
    return sc


def _scenario_of(obj: Any) -> Optional[dict]:
    if not isinstance(obj, dict):
        return None
    if ("members" in obj and "protocolType" not in obj) or "group" in obj:
        return obj                                   # a scenario
    if "protocolType" in obj and "members" in obj:   # a GroupMetadataValue's data
        return {"group": obj}
    if obj.get("message") == "GroupMetadataValue" and isinstance(obj.get("data"), dict):
        return {"group": obj["data"]}                # a line of `kcodec decode`
    if obj.get("type_name") == "GroupMetadata" and "payload" in obj:   # a line of offsets dump
        gid = ((obj.get("key") or {}).get("data") or {}).get("group")
        if obj["payload"] is None:
            raise ValueError(f"group {gid!r}: the record is a tombstone (the group was deleted)")
        data = obj["payload"].get("data")
        if not isinstance(data, dict):
            raise ValueError(f"group {gid!r}: the record's value did not decode")
        return {"group": data}
    return None


def _group_of(obj: Any) -> Optional[str]:
    return ((obj.get("key") or {}).get("data") or {}).get("group") if isinstance(obj, dict) else None


def scenario_from_text(text: str, source: str = "<input>", group: Optional[str] = None) -> dict:
    """The scenario in ``text``: a scenario object, a ``GroupMetadataValue`` (its Kafka JSON,
    or a ``kcodec decode`` line of it), or ``kcodec offsets dump`` lines (the last
    GroupMetadata record, of ``group`` if given: the group as the coordinator would load it).
    Anything else is a :class:`ValueError` saying what is wanted."""
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError as e:
        lines = [x for x in text.splitlines() if x.strip()]
        try:
            docs = [json.loads(x) for x in lines]
        except json.JSONDecodeError:
            raise ValueError(f"{source}: not JSON ({e}); expected {_WANTED}") from None
    if len(docs) > 1 or any(isinstance(d, dict) and "type_name" in d for d in docs):
        found = [d for d in docs if isinstance(d, dict) and d.get("type_name") == "GroupMetadata"
                 and (group is None or _group_of(d) == group)]
        if not found:
            which = f" of group {group!r}" if group else ""
            raise ValueError(f"{source}: no GroupMetadata record{which} among {len(docs)} "
                             f"line(s); expected {_WANTED}")
        groups = {_group_of(d) for d in found}
        if len(groups) > 1:
            raise ValueError(f"{source}: records of {len(groups)} groups "
                             f"({', '.join(sorted(map(str, groups)))}): pick one with --group")
        docs = [found[-1]]     # the last record is the state the coordinator loads
    obj = docs[0]
    sc = _as_scenario(obj)
    if sc is None:
        if not isinstance(obj, dict):
            raise ValueError(f"{source}: a scenario is a JSON object, got {type(obj).__name__}; "
                             f"expected {_WANTED}")
        raise ValueError(f"{source}: expected {_WANTED}; got an object with keys {sorted(obj)[:8]}")
    return sc


def _fmt(parts: List[str], limit: int = 12) -> str:
    if len(parts) <= limit:
        return ", ".join(parts)
    return ", ".join(parts[:limit]) + f", ... (+{len(parts) - limit})"


def _read_text(path: str) -> str:
    """The scenario file's text; an InputPathError for what is no readable file (a FIFO is
    refused before it is opened: it would block)."""
    import os
    import stat
    try:
        if not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
            raise InputPathError(path, "not a regular file (a FIFO, socket or device); pipe "
                                       "the scenario in with - instead")
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        reason = e.strerror or str(e)
        if isinstance(e, FileNotFoundError) and os.path.islink(path):
            reason = "dangling symbolic link (its target does not exist)"
        raise InputPathError(path, reason) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputPathError(path, f"not UTF-8 text (byte offset {e.start}): expected "
                                   f"{_WANTED}") from None


def cmd_assign(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout     # looked up per call: a default bound at import outlives redirections
    try:
        if args.scenario == "-":
            text = sys.stdin.read()
        else:
            text = _read_text(args.scenario)
        obj = scenario_from_text(text, args.scenario, getattr(args, "group", None))
        sc = load_scenario(obj, args.strategy)
        rep = what_if(sc).to_dict()
    except (InputPathError, ValueError, TypeError) as e:   # kcodec's argument errors are both
        print(f"kcodec assign: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(rep, ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    out.write(f"strategy {rep['strategy']} ({rep['path']}): {plural(rep['members'], 'member')}, "
              f"{plural(rep['partitions'], 'partition')}\n")
    for n in rep["notes"]:
        out.write(f"note: {n}\n")
    out.write("new assignment:\n")
    for m, parts in rep["assignment"].items():
        out.write(f"  {m} ({len(parts)}): {_fmt(parts, args.limit)}\n")
    out.write(f"partitions moved: {rep['partitions_moved']}\n")
    for mv in rep["moves"][: args.limit]:
        out.write(f"  {mv['partition']}: {mv['from']} -> {mv['to']}\n")
    if len(rep["moves"]) > args.limit:
        out.write(f"  ... (+{len(rep['moves']) - args.limit})\n")
    out.write(f"balance (max-min): {rep['balance']}\n")
    if rep["unassigned"]:
        out.write(f"unassigned (no subscriber): {rep['unassigned']}\n")
    plan = rep.get("plan")
    if plan:
        if plan["rounds"] == 1:
            # KIP-429: only a partition revoked from a member that stays needs a second
            # round; those of a member that left are handed out at once
            why = ("no partition changes owner" if not rep["moves"]
                   else "no partition is revoked from a remaining member")
            out.write(f"cooperative plan: one round ({why})\n")
        else:
            out.write("cooperative plan (two phases):\n  round 1 - revoke now:\n")
            for m, parts in plan["round1"]["revoke"].items():
                out.write(f"    {m}: {_fmt(parts, args.limit)}\n")
            out.write("  round 2 - assign at the next rebalance:\n")
            by: dict = {}
            for p, m in plan["round2"]["assign"].items():
                by.setdefault(m, []).append(p)
            for m, parts in by.items():
                out.write(f"    {m}: {_fmt(parts, args.limit)}\n")
    return 0


def add_subparsers(subparsers: Any) -> None:
    """Register ``assign`` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "assign", help="what an assignor would do to a consumer group",
        description="Run a classic consumer assignor over a scenario (members, topics, owned partitions, "
                    "generations, racks; or a group from __consumer_offsets) and print the new assignment, "
                    "the partitions moved, the balance and, for cooperative-sticky, the two-phase plan.")
    p.add_argument("scenario", metavar="SCENARIO.json",
                   help="scenario file (- for stdin): a scenario, a GroupMetadataValue as kcodec "
                        "decode prints it, or kcodec offsets dump lines")
    p.add_argument("--strategy", choices=STRATEGIES, default=None,
                   help="assignor (default: the scenario's, or the group's protocol)")
    p.add_argument("--group", metavar="GROUP",
                   help="with offsets dump lines of several groups: the group to take")
    p.add_argument("--json", action="store_true", help="JSON output")
    p.add_argument("--limit", type=int, default=12, help="partitions listed per line (default 12)")
    p.set_defaults(func=cmd_assign)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m kcodec.consumer.cli ARGS``: ``kcodec assign ARGS``."""
    from kcodec.cli import main as kcodec_main
    return kcodec_main(["assign"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
