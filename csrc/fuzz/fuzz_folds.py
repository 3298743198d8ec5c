"""Corrupted copies of log segments through both ``__consumer_offsets`` folds, for a time
budget: run by ``csrc/fuzz/run_sanitized.sh`` against a package built with
``KCODEC_SANITIZE=1`` (ASan + UBSan), so a memory error anywhere under the folds aborts.

Sources: the shared fixture segments and legacy twins of them (the same records as magic 0
and 1 message sets, every codec).  Each round corrupts one copy (a bit flip inside one
batch, garbage - random or shaped like a legacy entry - at a batch boundary, a cut, a
zeroed stretch, or a few random edits) and checks, on the C scanner and now and then on
its Python twin:

- the columnar fold and the record-by-record fold give the same state and the same
  number of errors; ``errors="raise"`` raises CorruptRecordError exactly when errors exist;
- a flipped batch or inserted garbage costs no other CRC-valid batch, and the fold equals
  the fold of the log without the damaged batch.

    python csrc/fuzz/fuzz_folds.py --seconds 60 [--seed N]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import struct
import sys
import time


def _state(st):
    return json.dumps({g: (s.state, s.generation, s.protocol_type, s.protocol, s.leader,
                           sorted(s.members), sorted((k, repr(v)) for k, v in s.offsets.items()))
                       for g, s in st.groups.items()}, sort_keys=True, default=repr)


def _sources(log, segments):
    out = []
    for path in log.log_files(segments):
        data = open(path, "rb").read()
        out.append((os.path.basename(os.path.dirname(path)), data))
        groups = [[(r.key, r.value, r.timestamp) for r in b.records]
                  for b in log.iter_batches(data) if b.error is None and not b.is_control
                  and b.records]
        try:
            import cramjam  # noqa: F401
            codecs = 4
        except ImportError:
            codecs = 1
        for magic in (0, 1):
            blobs, off = [], 0
            for i, g in enumerate(groups):
                blobs.append(log.encode_message_set([(k, v) for k, v, _ in g], magic=magic,
                                                    compression=i % codecs, base_offset=off,
                                                    timestamps=[t for _, _, t in g]))
                off += len(g)
            if blobs:
                out.append((f"{os.path.basename(os.path.dirname(path))}-magic{magic}",
                            b"".join(blobs)))
    return out


def _garbage(rnd):
    n = rnd.randrange(1, 120)
    g = bytearray(rnd.getrandbits(8) for _ in range(n))
    if n > 17 and rnd.random() < 0.7:              # looks like a legacy entry header
        g[16] = rnd.choice((0, 1, 2))
        struct.pack_into(">i", g, 8, rnd.choice((rnd.randrange(14, 400), rnd.randrange(1 << 20))))
    return bytes(g)


def _corrupt(rnd, data, batches):
    """(corrupted bytes, index of the only batch it may cost or None, kind)."""
    kind = rnd.choice(("flip", "garbage", "cut", "zeros", "edits"))
    if kind == "flip" and batches:
        i = rnd.randrange(len(batches))
        b = batches[i]
        hdr = 61 if b.magic == 2 else 16
        if b.size <= hdr:
            return data, None, "none"
        bad = bytearray(data)
        bad[b.position + rnd.randrange(hdr, b.size)] ^= 1 << rnd.randrange(8)
        return bytes(bad), i, kind
    if kind == "garbage":
        at = rnd.choice([b.position for b in batches] + [len(data)])
        return data[:at] + _garbage(rnd) + data[at:], -1, kind
    bad = bytearray(data)
    if kind == "cut":
        return bytes(bad[:rnd.randrange(len(bad) + 1)]), None, kind
    if kind == "zeros":
        at = rnd.randrange(len(bad) + 1)
        n = rnd.randrange(1, 4096)
        bad[at:at + n] = bytes(len(bad[at:at + n]))
        return bytes(bad), None, kind
    for _ in range(rnd.randrange(1, 6)):
        if bad:
            bad[rnd.randrange(len(bad))] = rnd.getrandbits(8)
    return bytes(bad), None, "edits"


def _save(data: bytes, what: str) -> None:
    import tempfile
    fd, path = tempfile.mkstemp(prefix="fuzz_folds_", suffix=".log")
    os.write(fd, data)
    os.close(fd)
    print(f"failing input ({what}) saved to {path}", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--segments", default=None,
                    help="segments directory (default: the shared consumer_offsets fixtures)")
    args = ap.parse_args(argv)
    import kcodec
    from kcodec import log
    from kcodec.errors import CorruptRecordError
    from kcodec.log import _impl, _records_py
    from kcodec.offsets.state import fold_log
    native = _impl.records
    segments = args.segments
    if segments is None:
        shared = os.environ.get("KCODEC_SHARED", os.path.join(os.path.dirname(kcodec.__file__),
                                                              "..", "..", "shared"))
        segments = os.path.join(shared, "fixtures", "kafka-4.1.1", "consumer_offsets", "segments")
    if not os.path.isdir(segments):
        print(f"no segments at {segments} (set KCODEC_SHARED or --segments)", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    sources = _sources(log, segments)
    clean = {}
    for name, data in sources:
        bs = list(log.iter_batches(data))
        clean[name] = (bs, _state(fold_log(data)))
    print(f"kcodec from {os.path.dirname(kcodec.__file__)} (native scanner: {log.NATIVE}); "
          f"{len(sources)} sources; seed {seed}", flush=True)
    t0 = time.monotonic()
    rounds = errors = twin = 0
    while time.monotonic() - t0 < args.seconds:
        name, data = rnd.choice(sources)
        batches, _ = clean[name]
        bad, lost, kind = _corrupt(rnd, data, batches)
        use_twin = rnd.random() < 0.05
        _impl.records = _records_py if use_twin else native
        twin += use_twin
        try:
            fast, slow = fold_log(bad), fold_log(bad, fast=False)
        except Exception:
            _save(bad, f"seed {seed} round {rounds} {name} {kind}")
            raise
        try:
            where = f"seed {seed} round {rounds} {name} {kind}"
            assert _state(fast) == _state(slow), f"folds disagree: {where}"
            assert len(fast.errors) == len(slow.errors), f"error counts differ: {where}"
            if fast.errors:
                errors += 1
                for fast_ in (True, False):
                    try:
                        fold_log(bad, fast=fast_, errors="raise")
                    except CorruptRecordError:
                        pass
                    else:
                        raise AssertionError(f"errors='raise' did not raise: {where}")
            if lost is not None and kind != "none":
                got = [(b.base_offset, len(b.records)) for b in log.iter_batches(bad)
                       if b.error is None]
                want = [(b.base_offset, len(b.records)) for j, b in enumerate(batches)
                        if j != lost]
                assert got == want, f"a CRC-valid batch was lost: {where}"
                if lost >= 0:
                    b = batches[lost]
                    without = data[:b.position] + data[b.position + b.size:]
                    assert _state(fast) == _state(fold_log(without)), f"corrupt batch folded: {where}"
        except AssertionError:
            _save(bad, f"{name} {kind} (twin: {use_twin})")
            raise
        finally:
            _impl.records = native
        rounds += 1
    print(f"fuzz_folds: {rounds} corrupted logs ({errors} with errors reported, {twin} on the "
          f"Python twin) in {args.seconds:g} s, folds agree, no batch lost, no crash")
    return 0


if __name__ == "__main__":
    sys.exit(main())
