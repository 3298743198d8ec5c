"""kcodec._java: Java's string order, String.hashCode and HashMap iteration order."""
from __future__ import annotations

import random

import pytest

from kcodec._java import java_hashmap_capacity, java_hashmap_order, java_string_hash, java_string_key


def test_string_hash_is_javas():
    # values of "...".hashCode() in Java
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(1 << 31)
    assert java_string_hash("\U0001d11e") == 55348 * 31 + 56606   # a surrogate pair: two units


def test_string_key_orders_utf16_units():
    assert sorted(["\uff5e", "\U0001f600", "a"], key=java_string_key) == ["a", "\U0001f600", "\uff5e"]


def test_hashmap_order_by_bucket_then_insertion():
    assert java_hashmap_capacity(12) == 16 and java_hashmap_capacity(13) == 32
    keys = ["b", "a", "c", "q"]            # "q" (113) shares bucket 1 with "a" (97)... 113 & 15 == 1
    assert java_hashmap_order(keys).tolist() == [1, 3, 0, 2]
    assert java_hashmap_order([]).tolist() == []


def test_hashmap_order_matches_the_compiled_twin():
    _assign = pytest.importorskip("kcodec.consumer._assign")
    rnd = random.Random(7)
    for n in (0, 1, 12, 13, 200, 3000):
        keys = ["".join(rnd.choice("ab-\u00e4\u20ac\U0001d11e") for _ in range(rnd.randrange(12)))
                + str(i) for i in range(n)] + [""]
        assert java_hashmap_order(keys).tolist() == _assign.java_hashmap_order(keys).tolist()
