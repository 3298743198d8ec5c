"""``kcodec assign``: what an assignor would do to a group (see :mod:`kcodec.consumer.whatif`)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Optional, TextIO

from .assignors import STRATEGIES
from .whatif import load_scenario, what_if

__all__ = ["add_subparsers", "cmd_assign", "main"]


def _fmt(parts: List[str], limit: int = 12) -> str:
    if len(parts) <= limit:
        return ", ".join(parts)
    return ", ".join(parts[:limit]) + f", ... (+{len(parts) - limit})"


def cmd_assign(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout     # looked up per call: a default bound at import outlives redirections
    try:
        try:
            if args.scenario == "-":
                obj = json.load(sys.stdin)
            else:
                with open(args.scenario, encoding="utf-8") as f:
                    obj = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{args.scenario}: not JSON ({e})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{args.scenario}: a scenario is a JSON object, got {type(obj).__name__}")
        sc = load_scenario(obj, args.strategy)
        rep = what_if(sc).to_dict()
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"kcodec assign: {e}", file=sys.stderr)
        return 2
    if args.json:
        out.write(json.dumps(rep, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"strategy {rep['strategy']} ({rep['path']}): {rep['members']} members, "
              f"{rep['partitions']} partitions\n")
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
            out.write("cooperative plan: one round (no partition changes owner)\n")
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
    p.add_argument("scenario", metavar="SCENARIO.json", help="scenario file (- for stdin)")
    p.add_argument("--strategy", choices=STRATEGIES, default=None,
                   help="assignor (default: the scenario's, or the group's protocol)")
    p.add_argument("--json", action="store_true", help="JSON output")
    p.add_argument("--limit", type=int, default=12, help="partitions listed per line (default 12)")
    p.set_defaults(func=cmd_assign)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="kcodec")
    add_subparsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["assign"] + list(sys.argv[1:] if argv is None else argv))
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
