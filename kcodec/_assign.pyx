# cython: language_level=3
"""Cython binding of the C assignors (csrc/kc_assign_*.c).

Inputs are flat integer arrays (see ``kcodec.consumer.assignors`` for how names are
interned); the GIL is released while the C code runs.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t

from kcodec._assign cimport (kc_assign_input, kc_assign_stats, kc_assign_total_partitions,
                             kc_assign_range, kc_assign_roundrobin, kc_assign_sticky)

STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")

_EMPTY32 = np.zeros(1, dtype=np.int32)
_EMPTY64 = np.zeros(1, dtype=np.int64)


def _a32(x, name):
    a = np.ascontiguousarray(x if x is not None else _EMPTY32[:0], dtype=np.int32)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    return a


def _a64(x, name):
    a = np.ascontiguousarray(x if x is not None else _EMPTY64[:0], dtype=np.int64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    return a


cdef inline const int32_t *_p32(int32_t[::1] a):
    # empty views have no element 0 to take the address of
    return &a[0] if a.shape[0] else NULL


cdef inline const int64_t *_p64(int64_t[::1] a):
    return &a[0] if a.shape[0] else NULL


def assign(str strategy, int n_members, part_count, sub_off, sub_topic,
           own_off=None, own_topic=None, own_part=None, generation=None,
           member_rack=None, int n_racks=0, prack_off=None, prack=None,
           bint prefer_rack_aware=False, visit_order=None):
    """Run one assignor over interned ids.

    Returns ``(owner, target, stats)``: ``owner[g]`` is the member handed global
    partition ``g`` this round (-1: nobody), ``target`` the sticky goal (equal to owner
    except for cooperative-sticky), ``stats`` a dict.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    if n_members < 0 or n_racks < 0:
        raise ValueError("n_members and n_racks must be >= 0")
    cdef int32_t[::1] pc = _a32(part_count, "part_count")
    cdef int64_t[::1] so = _a64(sub_off, "sub_off")
    cdef int32_t[::1] st = _a32(sub_topic, "sub_topic")
    cdef int64_t[::1] oo
    cdef int32_t[::1] ot = _a32(own_topic, "own_topic")
    cdef int32_t[::1] op = _a32(own_part, "own_part")
    cdef int32_t[::1] gen
    cdef int32_t[::1] mr
    cdef int64_t[::1] po
    cdef int32_t[::1] pr = _a32(prack, "prack")
    cdef int32_t[::1] vo
    cdef kc_assign_input inp
    cdef kc_assign_stats stats
    cdef int rc = 0
    cdef int coop = strategy == "cooperative-sticky"
    cdef int which = STRATEGIES.index(strategy)

    if so.shape[0] != n_members + 1:
        raise ValueError("sub_off must have n_members + 1 entries")
    if so[0] != 0 or so[n_members] != st.shape[0] or (n_members and np.any(np.diff(np.asarray(so)) < 0)):
        raise ValueError("sub_off must rise from 0 to len(sub_topic)")
    inp.n_members = n_members
    inp.n_topics = pc.shape[0]
    inp.n_racks = n_racks
    inp.part_count = _p32(pc)
    inp.sub_off = _p64(so)
    inp.sub_topic = _p32(st)
    inp.own_off = NULL
    inp.own_topic = _p32(ot)
    inp.own_part = _p32(op)
    inp.generation = NULL
    inp.member_rack = NULL
    inp.prack_off = NULL
    inp.prack = _p32(pr)
    inp.prefer_rack_aware = 1 if prefer_rack_aware else 0
    inp.visit_order = NULL
    if visit_order is not None:
        vo = _a32(visit_order, "visit_order")
        if vo.shape[0] != n_members:
            raise ValueError("visit_order must have n_members entries")
        inp.visit_order = _p32(vo)
    if own_off is not None:
        oo = _a64(own_off, "own_off")
        if oo.shape[0] != n_members + 1 or ot.shape[0] != op.shape[0]:
            raise ValueError("own_off must have n_members + 1 entries; own_topic/own_part equal lengths")
        if oo[0] != 0 or oo[n_members] != ot.shape[0] or (n_members and np.any(np.diff(np.asarray(oo)) < 0)):
            raise ValueError("own_off must rise from 0 to len(own_topic)")
        inp.own_off = _p64(oo)
    if generation is not None:
        gen = _a32(generation, "generation")
        if gen.shape[0] != n_members:
            raise ValueError("generation must have n_members entries")
        inp.generation = _p32(gen)
    if member_rack is not None:
        mr = _a32(member_rack, "member_rack")
        if mr.shape[0] != n_members:
            raise ValueError("member_rack must have n_members entries")
        inp.member_rack = _p32(mr)
    total = kc_assign_total_partitions(&inp)
    if total < 0:
        raise ValueError("partition counts must be >= 0 and total below 2**31")
    if prack_off is not None:
        po = _a64(prack_off, "prack_off")
        if po.shape[0] != total + 1 or po[0] != 0 or po[total] != pr.shape[0]:
            raise ValueError("prack_off must have total partitions + 1 entries rising to len(prack)")
        inp.prack_off = _p64(po)

    owner_arr = np.empty(total + 1, dtype=np.int32)
    target_arr = np.empty(total + 1, dtype=np.int32)
    cdef int32_t[::1] owner = owner_arr
    cdef int32_t[::1] target = target_arr
    cdef int32_t *tp = &target[0] if which >= 2 else NULL
    with nogil:
        if which == 0:
            rc = kc_assign_range(&inp, &owner[0])
        elif which == 1:
            rc = kc_assign_roundrobin(&inp, &owner[0])
        else:
            rc = kc_assign_sticky(&inp, coop, &owner[0], tp, &stats)
    if rc == -1:
        raise MemoryError("assignor ran out of memory")
    if rc == -2:
        raise ValueError("inconsistent assignor input (ids out of range or bad offsets)")
    if rc != 0:
        raise RuntimeError(f"assignor internal error {rc} (a bug in kcodec: please report the scenario)")
    owner_arr = owner_arr[:total]
    if which < 2:
        return owner_arr, owner_arr, {}
    return owner_arr, target_arr[:total], {
        "general_path": bool(stats.general_path),
        "rack_aware": bool(stats.rack_aware),
        "max_generation": stats.max_generation,
        "doubly_claimed": stats.doubly_claimed,
        "transferring": stats.transferring,
        "balance_moves": stats.balance_moves,
    }


def intern_pairs(list lists, dict index, bint pairs):
    """Flatten per-member lists into CSR arrays of interned ids.

    ``pairs=False``: each list holds names -> ``(off, ids)`` (names must be in ``index``).
    ``pairs=True``: each list holds (name, int) pairs -> ``(off, ids, ints)``; unknown names
    map to -1, and ints outside int32 to -1 (the C side ignores such claims).
    """
    cdef Py_ssize_t m = len(lists), n = 0, i, k = 0
    cdef long long pv
    for lst in lists:
        n += len(lst)
    off_arr = np.zeros(m + 1, dtype=np.int64)
    ids_arr = np.empty(n + 1, dtype=np.int32)
    ints_arr = np.empty(n + 1, dtype=np.int32)
    cdef int64_t[::1] off = off_arr
    cdef int32_t[::1] ids = ids_arr
    cdef int32_t[::1] ints = ints_arr
    for i in range(m):
        for item in lists[i]:
            if pairs:
                t = index.get(item[0])
                ids[k] = -1 if t is None else <int32_t>t
                try:
                    pv = item[1]
                    ints[k] = <int32_t>pv if -2147483648 <= pv <= 2147483647 else -1
                except (OverflowError, TypeError):
                    ints[k] = -1
            else:
                ids[k] = <int32_t>index[item]
            k += 1
        off[i + 1] = k
    if pairs:
        return off_arr, ids_arr[:k], ints_arr[:k]
    return off_arr, ids_arr[:k]
