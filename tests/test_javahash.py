"""The compiled java.util.HashMap model (csrc/kc_javahash.c, kcodec._javahash) against its
pure-Python twin (kcodec._java.JavaHashMap) on random hash codes with heavy collisions
(treeified bins, splits that untreeify or re-treeify, resizes, initial capacities,
computeIfAbsent), String.hashCode, warning-free C99, and a short fuzz run under ASan + UBSan
(csrc/fuzz/fuzz_javahash.c; KCODEC_FUZZ_SECONDS sets the duration).  Both engines against
Kafka's own vectors: tests/test_java_parity.py."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import kcodec._java as jv

from .test_native_fuzz import CC, CSRC, SANITIZE, SECONDS, _compile, _run_fuzzer, _sanitizer_works

native = pytest.mark.skipif(jv._jh is None, reason="kcodec._javahash not built")


@st.composite
def fills(draw):
    """Distinct keys with a few hash codes (equal hashes: compareTo ties) or hash codes that
    share their low bits (one bin at every table size, then split on resize)."""
    n = draw(st.integers(0, 300))
    kind = draw(st.sampled_from(["few", "low_bits", "wide"]))
    if kind == "few":
        pool = draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=6))
        hashes = [draw(st.sampled_from(pool)) for _ in range(n)] if n else []
    elif kind == "low_bits":
        base = draw(st.integers(0, 2**16 - 1))
        hashes = [jv.int32((draw(st.integers(0, 2**15 - 1)) << 16) | base) for _ in range(n)]
    else:
        hashes = draw(st.lists(st.integers(-2**31, 2**31 - 1), min_size=n, max_size=n))
    cmp = draw(st.sampled_from(["none", "ints", "ties", "mixed"]))
    if cmp == "none":
        keys = None
    elif cmp == "ints":
        keys = list(range(n))
        draw(st.randoms(use_true_random=False)).shuffle(keys)
    elif cmp == "ties":
        keys = [draw(st.integers(0, 3)) for _ in range(n)]
    else:                       # some keys not Comparable
        keys = [draw(st.one_of(st.none(), st.integers(0, 5))) for _ in range(n)]
    init = draw(st.one_of(st.none(), st.integers(0, 300)))
    return hashes, keys, init, draw(st.booleans())


@native
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(fills())
def test_compiled_model_is_the_python_model(fill):
    hashes, keys, init, cia = fill
    want = jv.hash_order_py(hashes, keys, initial_capacity=init, compute_if_absent=cia)
    assert jv.hash_order(hashes, keys, initial_capacity=init, compute_if_absent=cia) == want
    if keys is not None and None not in keys:          # ranks given as a NumPy array
        assert jv.hash_order(hashes, np.array(keys), initial_capacity=init, compute_if_absent=cia) == want


@native
@pytest.mark.parametrize("n", [7, 8, 9, 13, 49, 65, 200])
@pytest.mark.parametrize("cia", [False, True])
def test_treeify_thresholds_and_resizes(n, cia):
    # one hash code (a single bin: treeified at 8 once the table has 64 slots), and hash codes
    # 2**k apart in one bin that resizes split across untreeify (6) and treeify sizes
    for hashes in ([12345] * n, [(i % 13) << 16 for i in range(n)], [i << 20 for i in range(n)]):
        keys = list(range(n))[::-1]
        for init in (None, 0, 16, 1000):
            assert (jv.hash_order(hashes, keys, initial_capacity=init, compute_if_absent=cia)
                    == jv.hash_order_py(hashes, keys, initial_capacity=init, compute_if_absent=cia))


def _utf16_hash(s: str) -> int:
    b = s.encode("utf-16-be", "surrogatepass")
    h = 0
    for j in range(0, len(b), 2):
        h = (31 * h + int.from_bytes(b[j:j + 2], "big")) % (1 << 32)
    return jv.int32(h)


@given(st.lists(st.text(), max_size=30))
def test_string_hashes(strings):
    want = [_utf16_hash(s) for s in strings]
    assert jv.string_hashes(strings).tolist() == want
    assert [jv.java_string_hash(s) for s in strings] == want


def test_known_string_hashes():
    assert jv.java_string_hash("polygenelubricants") == -(1 << 31)
    assert jv.java_string_hash("\U0001d11e") == 55348 * 31 + 56606      # a surrogate pair
    assert jv.string_hashes(["hello", ""]).tolist() == [99162322, 0]


@native
def test_bad_arguments():
    with pytest.raises(ValueError):
        jv._jh.hash_order(np.zeros(2, np.int32), np.zeros(3, np.int32))
    with pytest.raises(ValueError):
        jv._jh.hash_order(np.zeros(2, np.int32), None, (1 << 30) + 1)
    # above MAXIMUM_CAPACITY the Python twin serves
    assert jv.hash_order([1, 2], initial_capacity=1 << 31) == [0, 1]


pytestmark_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytestmark_cc
@pytest.mark.parametrize("src", ["kc_javahash.c", "fuzz/fuzz_javahash.c"])
def test_c99_warning_free(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


@pytestmark_cc
def test_fuzz_javahash_asan(tmp_path):
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / "fuzz_javahash"
    _compile(SANITIZE + [str(CSRC / "kc_javahash.c"), str(CSRC / "fuzz" / "fuzz_javahash.c"), "-o", str(exe)],
             tmp_path)
    _run_fuzzer(exe, [SECONDS, "8191"], tmp_path)


@native
@settings(max_examples=50, deadline=None)
@given(st.sets(st.tuples(st.integers(-3, 40), st.integers(-2**31, 2**31 - 1) | st.integers(0, 200)), max_size=300))
def test_task_set_order_is_the_python_model(tasks):
    # TaskId hashes collide a lot (31 * subtopology + partition): treeified bins ordered by compareTo
    from kcodec.streams.protocol import TaskId, task_sort_key
    ts = [TaskId(s, p) for s, p in tasks]
    want = [ts[i] for i in jv.hash_order_py([jv.task_id_hash(*t) for t in ts], [task_sort_key(t) for t in ts])]
    assert jv.task_set_order(ts) == want
