"""Soak the cooperative-sticky assignor: random groups with racks, random events, and the
rounds each event takes to settle.

    python3 bench/soak_cooperative.py [--seeds N] [--first K] [--large]

Each seed builds a random group (topics, members with equal or random subscriptions and
racks, replica racks per partition, sometimes Kafka's preferRackAwareLogic), rebalances it
until nothing is held back, then applies one to four events (a member joins, leaves,
resubscribes; a topic grows) and counts the rounds each takes. Every round is checked:
every partition assigned once to a subscriber, nothing handed to a new owner while another
still holds it (the leader's KIP-429 check), and the settled assignment balanced. The
promise is at most two rounds per event; the summary lists any seed that took more, to
replay with ``--first SEED --seeds 1``. ``--large`` draws up to 30 members, 8 topics of up
to 40 partitions and 5 racks (default: 9 members, 5 topics of up to 12, 3 racks).

The unit tests run a fixed sample of this; the rare cases it exists for (about one event
in tens of thousands before the leader's look-ahead) need hundreds of thousands of events.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from kcodec.consumer.assignors import Member, assign, validate_cooperative_assignment  # noqa: E402


def settle(members: List[Member], topics: Dict[str, int], racks: Dict[str, List[List[str]]], prefer: bool,
           generation: int, max_rounds: int = 6) -> Tuple[int, List[Member], int]:
    """Rebalance until a round holds nothing back; returns (rounds, members, generation)."""
    for rnd in range(1, max_rounds + 1):
        r = assign("cooperative-sticky", members, topics, partition_racks=racks, prefer_rack_aware=prefer)
        now, target = r.assignment(), r.target_assignment()
        seen = Counter(tp for parts in target.values() for tp in parts)
        subs = {m.member_id: set(m.topics) for m in members}
        expected = sum(n for t, n in topics.items() if any(t in s for s in subs.values()))
        assert len(seen) == expected and all(c == 1 for c in seen.values()), "partition assigned twice or not at all"
        assert all(tp.topic in subs[m] for m, parts in target.items() for tp in parts), "unsubscribed topic"
        validate_cooperative_assignment({m.member_id: m.owned_partitions for m in members}, now)
        generation += 1
        members = [Member(m.member_id, m.topics, now[m.member_id], generation, m.rack) for m in members]
        if not r.pending():
            sizes = {m: len(p) for m, p in target.items()}
            for a in target:
                for b in target:
                    if sizes[a] + 1 < sizes[b]:
                        assert not any(tp.topic in subs[a] for tp in target[b]), "not balanced"
            return rnd, members, generation
    return max_rounds + 1, members, generation


def soak_seed(seed: int, large: bool) -> List[Tuple[str, int]]:
    rng = random.Random(seed)
    n_topics, max_parts, n_members, rack_names = (8, 40, 30, "abcde") if large else (5, 12, 9, "abc")
    racks: List[Optional[str]] = list(rack_names) + [None]
    nt = rng.randint(1, n_topics)
    topics = {f"t{i}": rng.randint(0, max_parts) for i in range(nt)}
    names = sorted(rng.sample([f"m{i:02d}" for i in range(n_members + 10)], rng.randint(1, n_members)))
    all_topics = sorted(topics)
    equal = rng.random() < 0.5

    def replica_racks() -> List[str]:
        return rng.sample(list(rack_names), rng.randint(0, min(3, len(rack_names))))

    members = [Member(n, all_topics if equal else sorted(rng.sample(all_topics, rng.randint(1, nt))),
                      rack=rng.choice(racks)) for n in names]
    prack = {t: [replica_racks() for _ in range(n)] for t, n in topics.items()}
    prefer = rng.random() < 0.3
    out = []
    rounds, members, gen = settle(members, topics, prack, prefer, 0)
    out.append(("fresh", rounds))
    for _ in range(rng.randint(1, 4)):
        kind = rng.choice(["join", "leave", "grow", "resubscribe"])
        if kind == "join":
            name = f"new{rng.randint(0, 99)}"
            if all(m.member_id != name for m in members):
                members = members + [Member(name, all_topics[: rng.randint(1, nt)], rack=rng.choice(racks))]
        elif kind == "leave" and len(members) > 1:
            members.pop(rng.randrange(len(members)))
        elif kind == "grow":
            t = rng.choice(all_topics)
            extra = rng.randint(1, 3)
            topics = {**topics, t: topics[t] + extra}
            prack = {**prack, t: prack[t] + [replica_racks() for _ in range(extra)]}
        else:
            i = rng.randrange(len(members))
            m = members[i]
            members[i] = Member(m.member_id, sorted(rng.sample(all_topics, rng.randint(1, nt))),
                                m.owned_partitions, m.generation, m.rack)
        rounds, members, gen = settle(members, topics, prack, prefer, gen)
        out.append((kind, rounds))
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args(argv)
    rounds: Counter = Counter()
    slow: List[Tuple[int, str, int]] = []
    t0 = time.perf_counter()
    last = 0.0
    for i, seed in enumerate(range(args.first, args.first + args.seeds)):
        for kind, n in soak_seed(seed, args.large):
            if kind == "fresh":
                if n > 1:
                    slow.append((seed, kind, n))
                continue
            rounds[n] += 1
            if n > 2:
                slow.append((seed, kind, n))
        now = time.perf_counter()
        if sys.stderr.isatty() and (now - last > 0.5 or i + 1 == args.seeds):
            last = now
            done = (i + 1) / args.seeds
            bar = "#" * int(30 * done)
            sys.stderr.write(f"\r[{bar:30}] {i + 1}/{args.seeds} seeds, {sum(rounds.values())} events, "
                             f"{len(slow)} slow")
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    events = sum(rounds.values())
    print(f"{args.seeds} seeds ({'large' if args.large else 'small'} groups), {events} events in "
          f"{time.perf_counter() - t0:.0f} s")
    print("| rounds | events |\n|---:|---:|")
    for n in sorted(rounds):
        print(f"| {n} | {rounds[n]} |")
    for seed, kind, n in slow[:20]:
        print(f"seed {seed}: {kind} took {n} rounds")
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
