"""kcodec.spark's column kernels (the C bulk decoder through kcodec.arrow, no Spark needed)
on hostile ``__consumer_offsets`` rows: every row of the result equals the single-record
API's answer (:func:`kcodec.offsets.decode_record`, errors reported as the row's error),
for keys and values with bytes flipped, cut, grown, version and type prefixes swapped
(values read with another type's or version's schema), lengths made absurd."""
from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")


def _seeds():
    from kcodec import log

    from .test_offsets_operator import _mixed_log, _segments
    pairs = []
    for path in _segments()[:6]:
        for b in log.iter_batches(open(path, "rb").read()[:1 << 17]):
            pairs += [(r.key, r.value) for r in b.records if not b.attributes & 0x20]
    for b in log.iter_batches(_mixed_log()):
        pairs += [(r.key, r.value) for r in b.records if not b.attributes & 0x20]
    # one of each (key type, value version prefix) first, then the rest
    seen, first, rest = set(), [], []
    for k, v in pairs:
        tag = (bytes(k[:2]) if k else None, bytes(v[:2]) if v else None)
        (rest if tag in seen else first).append((k, v))
        seen.add(tag)
    return first + rest[:400]


def _mutate(b: bytes, rnd: random.Random, others) -> bytes:
    b = bytearray(b)
    op = rnd.randrange(7)
    if op == 0 and b:
        b[rnd.randrange(len(b))] = rnd.randrange(256)
    elif op == 1 and b:
        del b[rnd.randrange(len(b)):]
    elif op == 2:
        at = rnd.randrange(len(b) + 1)
        b[at:at] = bytes(rnd.choice([[0xED, 0xA0, 0x80], [0xFF], [0x7F, 0xFF, 0xFF, 0xFF], [0x01, 0x00], [0x80] * 5]))
    elif op == 3 and len(b) >= 2:                 # another prefix: read with another schema
        o = rnd.choice(others)
        b[:2] = o[:2] if o and len(o) >= 2 else bytes([0x7F, 0xFF])
    elif op == 4 and len(b) >= 4:                 # a length or count made absurd
        at = rnd.randrange(2, len(b) - 1)
        b[at:at + 2] = rnd.choice([b"\x7f\xff", b"\xff\xff", b"\x80\x00", b"\x00\x00"])
    else:
        for _ in range(rnd.randint(1, 4)):
            if b:
                b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
    return bytes(b)


def _rows(n=2000):
    seeds = _seeds()
    if not seeds:
        pytest.skip("no seed records")
    rnd = random.Random(848)
    keys_all = [k for k, _ in seeds if k]
    vals_all = [v for _, v in seeds if v]
    keys, values = [], []
    for _ in range(n):
        k, v = rnd.choice(seeds)
        which = rnd.random()
        if which < 0.6 and v is not None:
            v = _mutate(v, rnd, vals_all)
        elif which < 0.9 and k is not None:
            k = _mutate(k, rnd, keys_all)
        else:
            v = None if rnd.random() < 0.5 else v
        keys.append(k)
        values.append(v)
    return keys, values


def _compare(keys, values):
    from kcodec.offsets import decode_record
    from kcodec.spark import _kernels as K
    got = K.decode_offsets(pa.array(keys, pa.binary()), pa.array(values, pa.binary()))
    full = K._offsets_out(K._selected(None), False).full
    want = pa.array([K._offsets_row(decode_record(k, v, errors="report"), full)
                     for k, v in zip(keys, values)], type=got.type)
    g, w = got.to_pylist(), want.to_pylist()
    bad = [i for i in range(len(g)) if g[i] != w[i]]
    assert not bad, (len(bad), keys[bad[0]], values[bad[0]], g[bad[0]], w[bad[0]])
    return w


def test_mutated_rows_equal_the_single_record_api(monkeypatch):
    """With the consumer protocol's decoder only (the registry as kcodec.offsets starts)."""
    from kcodec.offsets import records
    from kcodec.spark import _kernels as K
    monkeypatch.setattr(records, "_PROTOCOLS", {("consumer", None): records._PROTOCOLS[("consumer", None)]})
    w = _compare(*_rows())
    errors = sum(1 for r in w if r[K.ERROR])
    assert 200 < errors < len(w) - 200          # both kinds of row, plenty of each


def test_registered_protocol_decoders_do_not_change_the_columns(monkeypatch):
    """``members`` are decoded with Kafka's consumer protocol in every worker, whatever
    decoders the driver registered (kcodec.streams registers one for protocol "stream"
    that also checks Streams userData; from_streams_subscription decodes that in Spark):
    registering one leaves every row as it was."""
    import pyarrow as pa

    from kcodec.offsets import records
    from kcodec.spark import _kernels as K
    from kcodec.streams import groups
    monkeypatch.setattr(records, "_PROTOCOLS", {("consumer", None): records._PROTOCOLS[("consumer", None)]})
    keys, values = _rows()
    k, v = pa.array(keys, pa.binary()), pa.array(values, pa.binary())
    before = K.decode_offsets(k, v)
    protocols = before.field("GroupMetadataValue").field("protocol").to_pylist()
    assert protocols.count("stream") >= 3         # Streams groups' rows are among them
    groups.register()
    assert records.protocol_decoder("consumer", "stream") is not records.protocol_decoder("consumer")
    assert K.decode_offsets(k, v).equals(before)
