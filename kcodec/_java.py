"""What kcodec emulates of Java: string order, ``String.hashCode`` and ``HashMap``
iteration order.  Kafka's assignors (consumer, and Kafka Streams') iterate Java
collections, so every domain that must reproduce their choices byte for byte takes these
from here::

    >>> from kcodec._java import java_string_key, java_hashmap_order
    >>> sorted(["\\uff5e", "\\U0001f600"], key=java_string_key)   # UTF-16 order, not code points
    ['😀', '～']
    >>> java_hashmap_order(["b", "a", "c"]).tolist()
    [1, 0, 2]
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["java_string_key", "java_string_hash", "java_hashmap_capacity", "java_hashmap_order"]


def java_string_key(s: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed int32."""
    b = java_string_key(s)
    h = 0
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >> 31 else h


def java_hashmap_capacity(n: int) -> int:
    """The table size of a ``java.util.HashMap`` (default capacity 16, load factor 0.75)
    after ``n`` insertions."""
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    return cap


def java_hashmap_order(keys: Sequence[str]) -> np.ndarray:
    """Indexes of ``keys`` in the order a ``java.util.HashMap`` built by inserting them (in
    the given order, default capacity and load factor) iterates them: by bucket
    (``(h ^ h >>> 16) & (capacity - 1)``), then insertion order."""
    n = len(keys)
    enc = [java_string_key(k) for k in keys]
    units = np.frombuffer(b"".join(enc), dtype=">u2").astype(np.uint32)
    lens = np.fromiter((len(b) >> 1 for b in enc), np.int64, n)
    ends = np.cumsum(lens)
    # hashCode = sum of unit[i] * 31**(L-1-i), mod 2**32 (uint32 arithmetic wraps)
    powers = np.ones(int(lens.max()) if n else 1, np.uint32)
    for i in range(1, len(powers)):
        powers[i] = np.uint32((int(powers[i - 1]) * 31) & 0xFFFFFFFF)
    terms = units * powers[np.repeat(ends, lens) - 1 - np.arange(len(units))]
    h = np.zeros(n, np.uint32)
    nonempty = lens > 0
    if len(units):
        h[nonempty] = np.add.reduceat(terms, (ends - lens)[nonempty], dtype=np.uint32)
    buckets = (h ^ (h >> np.uint32(16))) & np.uint32(java_hashmap_capacity(n) - 1)
    return np.argsort(buckets, kind="stable").astype(np.int32)
