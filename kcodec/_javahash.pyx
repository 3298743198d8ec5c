# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled twin of :mod:`kcodec._java`'s HashMap model (csrc/kc_javahash.c) and of
``String.hashCode`` for many strings at once.  Use through :mod:`kcodec._java`."""
from libc.stdint cimport int32_t, int64_t, uint32_t

import numpy as np

cdef extern from "Python.h":
    int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_UCS4 PyUnicode_READ(int kind, void *data, Py_ssize_t index)

cdef extern from "kc_javahash.h":
    int64_t KC_JH_NO_RANK
    int KC_JH_PUT, KC_JH_COMPUTE_IF_ABSENT, KC_JH_ENOMEM
    int kc_javahash_order(int32_t n, const int32_t *hash_codes, const int64_t *ranks,
                          int64_t initial_capacity, int mode, int32_t *order, int64_t *capacity) nogil
    int32_t kc_javahash_distinct(int32_t n, const int64_t *keys, int32_t *first) nogil

NO_RANK = KC_JH_NO_RANK


def hash_order(const int32_t[::1] hash_codes, const int64_t[::1] ranks=None, int64_t initial_capacity=-1,
               bint compute_if_absent=False):
    """Indexes of distinct keys (``hashCode``s in insertion order) in the iteration order
    of the ``java.util.HashMap`` they were added to (see kc_javahash.h), as int32."""
    cdef int32_t n = <int32_t>hash_codes.shape[0]
    if ranks is not None and ranks.shape[0] != n:
        raise ValueError("ranks and hash_codes differ in length")
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = out
    cdef int64_t cap = 0
    cdef const int64_t *rk = NULL
    cdef const int32_t *hc = NULL
    cdef int32_t *op = NULL
    if n:
        hc = &hash_codes[0]
        op = &o[0]
        if ranks is not None:
            rk = &ranks[0]
    cdef int mode = KC_JH_COMPUTE_IF_ABSENT if compute_if_absent else KC_JH_PUT
    cdef int rc
    with nogil:
        rc = kc_javahash_order(n, hc, rk, initial_capacity, mode, op, &cap)
    if rc == KC_JH_ENOMEM:
        raise MemoryError("HashMap model")
    if rc != 0:
        raise ValueError(f"HashMap model: invalid input (initial capacity {initial_capacity})")
    return out


def distinct(const int64_t[::1] keys):
    """Indexes of the first occurrence of each distinct value of ``keys``, ascending (int32)."""
    cdef int32_t n = <int32_t>keys.shape[0], k
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = out
    if n == 0:
        return out
    with nogil:
        k = kc_javahash_distinct(n, &keys[0], &o[0])
    if k < 0:
        raise MemoryError("distinct")
    return out[:k]


cdef inline int32_t _hash(str s):
    # String.hashCode over UTF-16 code units: a code point above U+FFFF is its surrogate pair
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(s)
    cdef uint32_t h = 0, c
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c >= 0x10000:
            c -= 0x10000
            h = 31u * h + (0xD800u + (c >> 10))
            c = 0xDC00u + (c & 0x3FFu)
        h = 31u * h + c
    return <int32_t>h


def string_hash(str s):
    """``String.hashCode`` of ``s``."""
    return _hash(s)


def string_hashes(strings):
    """``String.hashCode`` of each string, as an int32 array."""
    cdef list ss = list(strings)
    cdef Py_ssize_t i, n = len(ss)
    out = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = out
    for i in range(n):
        o[i] = _hash(<str>ss[i])
    return out


def topic_partition_columns(groups):
    """The ``(topic, partition)`` pairs of ``groups`` (iterables of pairs) as columns:
    distinct topics in first-seen order, and each pair's topic index and partition (int64)."""
    cdef dict num = {}
    cdef list names = []
    cdef list rows = [g if isinstance(g, list) else list(g) for g in groups]
    cdef Py_ssize_t total = 0, k = 0, i, n
    cdef list g
    for g in rows:
        total += len(g)
    tidx = np.empty(total, dtype=np.int64)
    part = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] ti = tidx, pa = part
    cdef object idx, x
    cdef tuple tp
    for g in rows:
        n = len(g)
        for i in range(n):
            x = g[i]
            tp = <tuple>x if isinstance(x, tuple) else tuple(x)
            idx = num.get(tp[0])
            if idx is None:
                idx = num[tp[0]] = len(names)
                names.append(tp[0])
            ti[k] = <int64_t>idx
            pa[k] = <int64_t>tp[1]
            k += 1
    return names, tidx, part


def task_set_order(list tasks):
    """``tasks`` (unnamed ``TaskId``s: (subtopology, partition, None), distinct) in the order
    of a ``HashSet<TaskId>`` they were added to; None when a task is named or a number is not
    an int32 (the caller's general path serves)."""
    cdef Py_ssize_t i, n = len(tasks)
    h = np.empty(n, dtype=np.int32)
    k = np.empty(n, dtype=np.int64)
    cdef int32_t[::1] hv = h
    cdef int64_t[::1] kv = k
    cdef tuple t
    cdef object x
    cdef long long s, p
    for i in range(n):
        x = tasks[i]
        if not isinstance(x, tuple):
            return None
        t = <tuple>x
        if len(t) < 3 or t[2] is not None or type(t[0]) is not int or type(t[1]) is not int:
            return None
        s = t[0]
        p = t[1]
        if s < -2147483648 or s > 2147483647 or p < -2147483648 or p > 2147483647 \
                or s == p == -2147483648:          # that key would read as NO_RANK
            return None
        # TaskId.hashCode = Objects.hash(subtopology, partition, null); compareTo: subtopology, partition
        hv[i] = <int32_t><uint32_t>(31u * (31u * (31u + <uint32_t>s) + <uint32_t>p))
        kv[i] = s * 4294967296 + (p + 2147483648)
    order = hash_order(h, k)
    cdef int32_t[::1] ov = order
    return [tasks[ov[i]] for i in range(n)]
