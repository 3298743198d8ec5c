"""Random round trips over every spec and every valid version, for every engine,
and agreement between the C engine and the Python reference on random and mutated input."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import kcodec
from kcodec import _codec_py
from kcodec._program import program

from .values import random_value

PAIRS = [(s.name, v) for s in kcodec.specs() if not s.valid_versions.empty
         for v in range(s.valid_versions.lowest, s.valid_versions.highest + 1)]


@pytest.mark.parametrize("name,version", PAIRS, ids=[f"{n}-v{v}" for n, v in PAIRS])
def test_random_roundtrip_every_version(engine, name, version):
    prog = program(name, version)
    rnd = random.Random(f"{name}/{version}")
    for _ in range(4):
        value = random_value(prog, rnd)
        data = engine.encode(prog, value)
        assert data == _codec_py.encode(prog, value)
        back, end = engine.decode(prog, data, 0)
        assert end == len(data)
        assert back == value
        assert engine.encode(prog, back) == data


def _outcome(eng, prog, data):
    try:
        return ("ok",) + eng.decode(prog, data, 0)
    except kcodec.DecodeError as e:
        return ("error", e.offset)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_engines_agree_on_mutated_input(pair, seed, data):
    """Random values, then random byte flips/truncations: both engines give the same
    value or both raise DecodeError at the same byte offset."""
    prog = program(*pair)
    rnd = random.Random(seed)
    raw = bytearray(_codec_py.encode(prog, random_value(prog, rnd)))
    for _ in range(data.draw(st.integers(0, 4))):
        if raw:
            raw[rnd.randrange(len(raw))] = rnd.getrandbits(8)
    cut = data.draw(st.integers(0, len(raw)))
    blob = bytes(raw[:cut] if rnd.random() < 0.3 else raw)
    engines = [_codec_py] + ([kcodec._engine] if kcodec.NATIVE else [])
    outcomes = [_outcome(e, prog, blob) for e in engines]
    assert all(repr(o) == repr(outcomes[0]) for o in outcomes), outcomes


@settings(max_examples=200, deadline=None)
@given(pair=st.sampled_from(PAIRS), blob=st.binary(max_size=300))
def test_random_bytes_never_crash(pair, blob):
    prog = program(*pair)
    engines = [_codec_py] + ([kcodec._engine] if kcodec.NATIVE else [])
    outcomes = [_outcome(e, prog, blob) for e in engines]
    assert all(repr(o) == repr(outcomes[0]) for o in outcomes), outcomes


@settings(max_examples=300, deadline=None)
@given(pair=st.sampled_from(PAIRS), seed=st.integers(0, 2**64 - 1))
def test_hypothesis_roundtrip(pair, seed):
    """decode(encode(v)) == v and both engines write the same bytes, for random values
    (unknown tagged fields included) of random (message, version) pairs."""
    prog = program(*pair)
    value = random_value(prog, random.Random(seed))
    engines = [_codec_py] + ([kcodec._engine] if kcodec.NATIVE else [])
    blobs = [e.encode(prog, value) for e in engines]
    assert all(b == blobs[0] for b in blobs)
    for e in engines:
        back, end = e.decode(prog, blobs[0], 0)
        assert end == len(blobs[0]) and back == value
