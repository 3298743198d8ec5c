"""``kcodec streams``: decode Streams rebalance metadata, simulate upgrades and scaling.

    kcodec streams decode --kind subscription 0000000b0000000b...
    kcodec streams decode --offsets SEGMENT_DIR [--group G]
    kcodec streams simulate-upgrade --from 2.3 --to 3.8 --instances 5
    kcodec streams simulate-scale --instances 3 --add 2 --tasks 20 --assignor ha|learner
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Optional, TextIO

from kcodec.cli import EXIT_DATA, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, OFFSETS_TOPIC, LogInputs, plural
from kcodec.errors import DecodeError, InvalidArgumentError, KcodecError

from .assignors import AssignmentConfigs
from .protocol import assignment_to_json, decode_assignment, decode_subscription, subscription_to_json

__all__ = ["add_subparsers", "main"]


def _unhex(text: str) -> bytes:
    try:
        return bytes.fromhex(text.replace(" ", "").replace(":", ""))
    except ValueError:
        raise InvalidArgumentError("HEX", f"not hex: {text[:40]!r}") from None


def _decode_bytes(kind: str, data: bytes) -> dict:
    if kind == "subscription":
        info = decode_subscription(data)
        doc = {"kind": kind, "decoded": subscription_to_json(info)}
        if info.future:
            # a version newer than this client knows (KIP-268 version probing): only the
            # two versions were read; the rest of "decoded" are Kafka's placeholders
            doc["future"] = True
        return doc
    if kind == "assignment":
        return {"kind": kind, "decoded": assignment_to_json(decode_assignment(data))}
    for k in ("subscription", "assignment"):     # auto: whichever decodes completely
        try:
            out = _decode_bytes(k, data)
        except KcodecError:
            continue
        return out
    raise DecodeError("neither a Streams subscription nor an assignment decodes from these bytes",
                      message="Streams userData")


def _groups(paths: List[str], group: Optional[str], errors: Optional[List[str]] = None) -> List[dict]:
    """The latest Streams groups in the logs; ``errors`` collects the corrupt batches,
    whose records are left out."""
    from kcodec.offsets import iter_decoded
    from .groups import decode_member_metadata
    latest: dict = {}
    with LogInputs(paths, topic=OFFSETS_TOPIC) as files:
        for path in files:
            for batch, _, rec in iter_decoded(files.source(path)):
                if batch.error is not None:
                    if errors is not None and (not errors or errors[-1] is not batch.error):
                        errors.append(batch.error)
                    continue
                if rec is None or rec.type_name != "GroupMetadata" or rec.value is None:
                    continue
                if rec.value.get("protocol") != "stream" or (group and rec.group_id != group):
                    continue
                latest[rec.group_id] = rec.value
    return [{"group": g, "generation": v.get("generation"), "leader": v.get("leader"),
             "members": decode_member_metadata(v)} for g, v in sorted(latest.items())]


def cmd_decode(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout     # looked up per call: a default bound at import goes stale
    try:
        if args.offsets:
            errors: List[Any] = []
            docs = _groups(args.offsets, args.group, errors)
            status = EXIT_OK
            for e in errors:
                print(f"kcodec streams decode: {e}", file=sys.stderr)
            if errors:
                print(f"kcodec streams decode: {len(errors)} corrupt batch(es) not read: the "
                      f"groups shown exclude them", file=sys.stderr)
                status = EXIT_DATA
            if args.json:
                out.write(json.dumps(docs, indent=1) + "\n")
                return status
            for d in docs:
                out.write(f"group {d['group']} generation {d['generation']} leader {d['leader']}\n")
                for m in d["members"]:
                    s, a = m["subscription"] or {}, m["assignment"] or {}
                    act = [f"{t['subtopology']}_{t['partition']}" for t in a.get("active_tasks", [])]
                    stb = [f"{x['task']['subtopology']}_{x['task']['partition']}" for x in a.get("standby_tasks", [])]
                    out.write(f"  {m['member_id']}\n    subscription v{s.get('version')} process "
                              f"{s.get('process_id')} endpoint {s.get('user_end_point')} "
                              f"prev {len(s.get('prev_tasks', []))} standby {len(s.get('standby_tasks', []))}\n"
                              f"    assignment v{a.get('version')} (common v{a.get('commonly_supported_version')}) "
                              f"active [{', '.join(act)}] standby [{', '.join(stb)}] error {a.get('error_code')}\n")
            return status
        for h in args.hex:
            doc = _decode_bytes(args.kind, _unhex(h))
            out.write(json.dumps(doc, ensure_ascii=False, indent=None if args.json else 1) + "\n")
    except (InvalidArgumentError, DecodeError) as e:
        print(f"kcodec streams decode: {e}", file=sys.stderr)
        return EXIT_USAGE if isinstance(e, InvalidArgumentError) else EXIT_DATA
    if not args.hex:
        raise InvalidArgumentError("HEX", "give userData as hex, or --offsets PATH")
    return EXIT_OK


def cmd_simulate_upgrade(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout     # looked up per call: a default bound at import goes stale
    from .simulate import simulate_upgrade
    try:
        rep = simulate_upgrade(args.from_release, args.to, args.instances, upgrade_from=args.upgrade_from,
                               leader_position=args.leader_position)
    except ValueError as e:
        print(f"kcodec streams simulate-upgrade: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps(rep.to_dict(), indent=1) + "\n")
        return EXIT_OK if rep.error is None else EXIT_REFUSED
    for i, r in enumerate(rep.rounds, 1):
        vs = " ".join(f"{m}=v{v}" for m, v in r.subscription_versions.items())
        line = f"{i:3d} {r.cause:<10} leader {r.leader} ({r.leader_release})  subscriptions {vs}"
        if r.error:
            line += f"  ERROR {r.error}"
        else:
            line += f"  -> assignment v{r.assignment_version} common v{r.commonly_supported}"
            if r.version_probing:
                line += " [version probing]"
        out.write(line + "\n")
        for f in r.followups:
            out.write(f"      rejoin: {f}\n")
    state = "completed" if rep.completed else ("FAILED" if rep.error else "not finished")
    out.write(f"{state}: {plural(rep.bounces, 'bounce')}, {plural(rep.rebalances, 'rebalance')} "
              f"({plural(rep.followup_rebalances, 'follow-up')}), final versions "
              f"{' '.join(f'{m}=v{v}' for m, v in rep.final_versions.items())}\n")
    return EXIT_OK if rep.error is None else EXIT_REFUSED


def cmd_simulate_scale(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    out = out or sys.stdout     # looked up per call: a default bound at import goes stale
    from .simulate import simulate_scale
    try:
        cfg = AssignmentConfigs(args.acceptable_recovery_lag, args.max_warmup_replicas, args.standbys, 60_000,
                                rack_aware_assignment_strategy=args.rack_aware_assignment_strategy,
                                rack_aware_assignment_traffic_cost=args.rack_aware_assignment_traffic_cost,
                                rack_aware_assignment_non_overlap_cost=args.rack_aware_assignment_non_overlap_cost,
                                rack_aware_assignment_mode=args.rack_aware_assignment_mode)
        reps = [simulate_scale(args.instances, add=args.add, remove=args.remove, tasks=args.tasks, assignor=a,
                               state_records=args.state_records, restore_per_s=args.restore_per_s,
                               configs=cfg, probing_interval_s=args.probing_interval_s,
                               leader_crash=args.leader_crash, partial=args.partial,
                               racks=args.racks if a == "ha" else 0)
                for a in (["ha", "learner"] if args.assignor == "both" else [args.assignor])]
    except ValueError as e:
        print(f"kcodec streams simulate-scale: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        out.write(json.dumps([r.to_dict() for r in reps], indent=1) + "\n")
        return 0
    for rep in reps:
        out.write(f"== {rep.assignor}\n")
        for i, r in enumerate(rep.rounds, 1):
            out.write(f"{i:3d} t={r.time_s:.0f}s\n")
            for m in r.active:
                extra = []
                if r.warming.get(m):
                    extra.append(("learning " if rep.assignor == "learner" else "warming ") + ",".join(r.warming[m]))
                if r.standby.get(m):
                    extra.append("standby " + ",".join(r.standby[m]))
                if r.revoked.get(m):
                    extra.append("revoked " + ",".join(r.revoked[m]))
                out.write(f"      {m}: active [{','.join(r.active[m])}] {' '.join(extra)}\n")
            if r.unavailable:
                out.write(f"      unavailable: {','.join(r.unavailable)}\n")
            if r.cross_rack is not None:
                solver = f" (rack-aware assignment: {r.rack_aware_mode})" if r.rack_aware_mode else ""
                out.write(f"      actives reading across racks: {r.cross_rack}{solver}\n")
        out.write(f"{rep.assignor}: {plural(rep.rebalances, 'rebalance')}, balanced after {rep.rounds_to_balance}, "
                  f"{rep.unavailable_task_seconds:.1f} task-seconds unavailable\n")
    return 0


def add_subparsers(subparsers: Any) -> None:
    """Register ``streams`` (decode, simulate-upgrade, simulate-scale)."""
    p = subparsers.add_parser("streams", help="Kafka Streams rebalance metadata and simulations",
                              description="Decode Kafka Streams' SubscriptionInfo/AssignmentInfo, simulate "
                                          "rolling upgrades (version probing) and scaling.")
    sub = p.add_subparsers(dest="streams_command", required=True)
    d = sub.add_parser("decode", help="decode userData bytes, or the Streams groups of __consumer_offsets")
    d.add_argument("hex", nargs="*", help="userData as hex")
    d.add_argument("--kind", choices=("auto", "subscription", "assignment"), default="auto",
                   help="what the bytes are (default auto: a subscription, else an assignment)")
    d.add_argument("--offsets", nargs="+", metavar="PATH",
                   help="__consumer_offsets segment files or folders (- for a segment on stdin)")
    d.add_argument("--group", help="only this group")
    d.add_argument("--json", action="store_true", help="JSON output")
    d.set_defaults(func=cmd_decode)
    u = sub.add_parser("simulate-upgrade", help="a rolling bounce between Streams releases")
    u.add_argument("--from", dest="from_release", required=True, help="release running now (e.g. 2.3)")
    u.add_argument("--to", required=True, help="release to run (e.g. 3.8; a number above 11 simulates a later version)")
    u.add_argument("--instances", type=int, default=3, help="instances in the group (default 3)")
    u.add_argument("--upgrade-from", help="upgrade.from during the first bounce (then a second bounce)")
    u.add_argument("--leader-position", type=int, default=0,
                   help="where the leader is in the bounce order (0 first, -1 last)")
    u.add_argument("--json", action="store_true", help="JSON output")
    u.set_defaults(func=cmd_simulate_upgrade)
    s = sub.add_parser("simulate-scale", help="scale out / in through an assignor, round by round")
    s.add_argument("--instances", type=int, default=3, help="instances running before the change (default 3)")
    s.add_argument("--add", type=int, default=0, help="instances joining (scale up)")
    s.add_argument("--remove", type=int, default=0, help="instances leaving (scale down)")
    s.add_argument("--tasks", type=int, default=5, help="stateful tasks (default 5)")
    s.add_argument("--assignor", choices=("ha", "learner", "both"), default="both",
                   help="HighAvailabilityTaskAssignor, the learner (KIP-441 probing) model, or both (default)")
    s.add_argument("--state-records", type=int, default=100_000, help="state per task (records)")
    s.add_argument("--restore-per-s", type=float, default=10_000.0, help="restore speed per task")
    s.add_argument("--acceptable-recovery-lag", type=int, default=10_000,
                   help="acceptable.recovery.lag in records (default 10000)")
    s.add_argument("--max-warmup-replicas", type=int, default=2, help="max.warmup.replicas (default 2)")
    s.add_argument("--standbys", type=int, default=0, help="num.standby.replicas (default 0)")
    s.add_argument("--probing-interval-s", type=float, default=60.0,
                   help="probing.rebalance.interval.ms, in seconds (default 60)")
    s.add_argument("--leader-crash", action="store_true", help="the leader crashes as the change starts")
    s.add_argument("--partial", action="store_true", help="learner.partial.rebalance=true")
    s.add_argument("--racks", type=int, default=0,
                   help="ha: spread members and partition replicas over this many racks")
    s.add_argument("--rack-aware-assignment-strategy", choices=("none", "min_traffic", "balance_subtopology"),
                   default="none", help="rack.aware.assignment.strategy (KIP-925)")
    s.add_argument("--rack-aware-assignment-traffic-cost", type=int, default=None,
                   help="rack.aware.assignment.traffic_cost")
    s.add_argument("--rack-aware-assignment-non-overlap-cost", type=int, default=None,
                   help="rack.aware.assignment.non_overlap_cost")
    s.add_argument("--rack-aware-assignment-mode", choices=("fast", "exact"), default="fast",
                   help="how the rack-aware graphs are solved: fast (Kafka's optimal cost, primal-dual "
                        "min-cost flow) or exact (Kafka's cycle cancelling, Kafka's assignment move for move)")
    s.add_argument("--json", action="store_true", help="JSON output")
    s.set_defaults(func=cmd_simulate_scale)


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m kcodec.streams.cli ARGS``: ``kcodec streams ARGS``."""
    from kcodec.cli import main as kcodec_main
    return kcodec_main(["streams"] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
