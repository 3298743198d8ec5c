# cython: language_level=3
"""Cython binding of the C assignors (csrc/kc_assign_*.c).

Inputs are flat integer arrays (see ``kcodec.consumer.assignors`` for how names are
interned); the GIL is released while the C code runs.
"""
import gc

cimport cython
import numpy as np

from kcodec._numbers import is_integral as _is_integral
from cpython.list cimport PyList_GET_ITEM, PyList_New
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport PyObject, PyTypeObject
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_Check
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

from kcodec._native cimport (KC_F_COMPACT, KC_F_NULLABLE, KC_OK, KC_REF, KC_T_ARRAY, KC_T_BYTES,
                             KC_T_INT32, KC_T_STRING, KC_T_STRUCT, kc_encode_size, kc_encode_write,
                             kc_error, kc_program_check)

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object, int *) except? -1

from kcodec.consumer._assign cimport (kc_assign_input, kc_assign_stats, kc_assign_total_partitions,
                             kc_assign_range, kc_assign_roundrobin, kc_assign_sticky,
                             KC_ASSIGN_OK, KC_ASSIGN_ENOMEM, KC_ASSIGN_EINVAL)
from kcodec._kc_status cimport KC_E_NOMEM, KC_E_INVALID, KC_E_INTERNAL, status_error

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


def _per_member(x, Py_ssize_t n_members, name):
    a = _a32(x, name)
    if a.shape[0] != n_members:
        raise ValueError(f"{name} must have n_members entries")
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
        vo = _per_member(visit_order, n_members, "visit_order")
        inp.visit_order = _p32(vo)
    if own_off is not None:
        oo = _a64(own_off, "own_off")
        if oo.shape[0] != n_members + 1 or ot.shape[0] != op.shape[0]:
            raise ValueError("own_off must have n_members + 1 entries; own_topic/own_part equal lengths")
        if oo[0] != 0 or oo[n_members] != ot.shape[0] or (n_members and np.any(np.diff(np.asarray(oo)) < 0)):
            raise ValueError("own_off must rise from 0 to len(own_topic)")
        inp.own_off = _p64(oo)
    if generation is not None:
        gen = _per_member(generation, n_members, "generation")
        inp.generation = _p32(gen)
    if member_rack is not None:
        mr = _per_member(member_rack, n_members, "member_rack")
        inp.member_rack = _p32(mr)
    total = kc_assign_total_partitions(&inp)
    if total < 0:
        raise ValueError("partition counts must be >= 0 and total at most 2**31 - 2 (int32 partition numbers)")
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
    if rc != KC_ASSIGN_OK:
        raise status_error(KC_E_NOMEM if rc == KC_ASSIGN_ENOMEM else
                           KC_E_INVALID if rc == KC_ASSIGN_EINVAL else KC_E_INTERNAL, "assignor")
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


cdef extern from *:
    """
    /* A 2-item instance of a tuple subclass (a NamedTuple) without calling its __new__:
       the items are set directly, as PyTuple_New callers do. Steals nothing. */
    static PyObject *kc_pair(PyTypeObject *tp, PyObject *a, PyObject *b) {
        PyObject *t = tp->tp_alloc(tp, 2);
        if (t == NULL) return NULL;
        Py_INCREF(a); Py_INCREF(b);
        PyTuple_SET_ITEM(t, 0, a);
        PyTuple_SET_ITEM(t, 1, b);
        return t;
    }
    """
    object kc_pair(PyTypeObject *tp, object a, object b)


cdef inline PyObject *_borrow_item(object item, Py_ssize_t i) except NULL:
    # (name, int) pairs are nearly always tuples (TopicPartition); other sequences go slow
    if PyTuple_Check(item) and PyTuple_GET_SIZE(item) == 2:
        return PyTuple_GET_ITEM(item, i)
    raise TypeError


cdef object _NO_NAME = object()     # no name read yet (None is a name to reject, not a start)


@cython.boundscheck(False)
@cython.wraparound(False)
def intern_names(list lists, dict index):
    """Flatten per-member name lists into CSR arrays of interned ids, giving names not yet
    in ``index`` the next id (first-seen order). Returns ``(off, ids)``."""
    cdef Py_ssize_t m = len(lists), n = 0, i, k = 0
    cdef object last = _NO_NAME
    cdef int32_t last_id = -1
    for lst in lists:
        n += len(lst)
    off_arr = np.zeros(m + 1, dtype=np.int64)
    ids_arr = np.empty(n + 1, dtype=np.int32)
    cdef int64_t[::1] off = off_arr
    cdef int32_t[::1] ids = ids_arr
    cdef list cur, prev = None
    cdef Py_ssize_t j, ln, prev_at = 0
    for i in range(m):
        cur = lists[i]          # TypeError unless a list
        ln = len(cur)
        # members usually subscribe the same topics: when this list holds the very objects
        # of the previous one, copy its ids instead of hashing every name again
        if prev is not None and len(prev) == ln and k + ln <= n:
            j = 0
            while j < ln and PyList_GET_ITEM(cur, j) == PyList_GET_ITEM(prev, j):
                j += 1
            if j == ln:
                for j in range(ln):
                    ids[k + j] = ids[prev_at + j]
                prev_at = k
                k += ln
                off[i + 1] = k
                continue
        prev, prev_at = cur, k
        for item in cur:
            if k == n:
                raise ValueError("a subscription list changed while it was read")
            if item is not last:
                v = index.get(item)
                if v is None:
                    if not isinstance(item, str):
                        raise TypeError(f"topic names must be str, got {type(item).__name__}")
                    v = index[item] = len(index)
                last, last_id = item, <int32_t>v
            ids[k] = last_id
            k += 1
        off[i + 1] = k
    return off_arr, ids_arr[:k]


@cython.boundscheck(False)
@cython.wraparound(False)
def intern_pairs(list lists, dict index, bint pairs, list owners=None):
    """Flatten per-member lists into CSR arrays of interned ids.

    ``pairs=False``: each list holds names -> ``(off, ids)`` (names must be in ``index``).
    ``pairs=True``: each list holds (name, int) pairs -> ``(off, ids, ints)``; unknown names
    map to -1, and ints outside int32 to -1 (the C side ignores such claims, as Kafka
    ignores claims it cannot match); anything not a (str, int) pair is a TypeError naming
    the member (``owners``: member ids, for that message).
    """
    cdef Py_ssize_t m = len(lists), n = 0, i, k = 0
    cdef long long pv
    cdef object name, last = _NO_NAME
    cdef int32_t last_id = -1
    cdef int overflow = 0
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
            if k == n:
                raise ValueError("a member's list changed while it was read")
            if not pairs:
                ids[k] = <int32_t>index[item]
                k += 1
                continue
            try:
                name = <object>_borrow_item(item, 0)
                pobj = <object>_borrow_item(item, 1)
            except TypeError:
                name, pobj = _pair(item, i, owners)
            if name is not last:
                if not PyUnicode_Check(name):
                    _bad_pair(item, i, owners, "the topic must be a str")
                t = index.get(name)
                last, last_id = name, (-1 if t is None else <int32_t>t)
            ids[k] = last_id
            if PyLong_CheckExact(pobj):
                pv = PyLong_AsLongLongAndOverflow(pobj, &overflow)
                ints[k] = <int32_t>pv if not overflow and -2147483648 <= pv <= 2147483647 else -1
            else:
                if not _is_integral(pobj):
                    _bad_pair(item, i, owners, "the partition must be an int")
                pv_obj = int(pobj)
                ints[k] = <int32_t>pv_obj if -2147483648 <= pv_obj <= 2147483647 else -1
            k += 1
        off[i + 1] = k
    if pairs:
        return off_arr, ids_arr[:k], ints_arr[:k]
    return off_arr, ids_arr[:k]


cdef tuple _pair(object item, Py_ssize_t i, list owners):
    """A (topic, partition) pair given as another sequence than a 2-tuple."""
    if PyUnicode_Check(item) or PyBytes_Check(item):
        _bad_pair(item, i, owners, "expected a (topic, partition) pair")
    try:
        n = len(item)
    except TypeError:
        n = -1
    if n != 2:
        _bad_pair(item, i, owners, "expected a (topic, partition) pair")
    return item[0], item[1]


cdef int _bad_pair(object item, Py_ssize_t i, list owners, str why) except -1:
    who = repr(owners[i]) if owners is not None else f"#{i}"
    raise TypeError(f"member {who}: owned partition {item!r}: {why}")


@cython.boundscheck(False)
@cython.wraparound(False)
def intern_racks(list per_topic, counts, dict index, list names=None):
    """Replica racks as CSR arrays over the global partition index (topic i's partitions
    follow topic i - 1's). ``per_topic[i]``: topic i's per-partition rack sequences, or None;
    partitions past its end have none. Each partition's racks are deduplicated and sorted
    by id; None and "" mean no rack; names not yet in ``index`` get the next id. ``names``
    (topic names, for error messages) is optional. Returns ``(off, ids)``."""
    cdef int32_t[::1] cnt = _a32(counts, "counts")
    cdef Py_ssize_t T = len(per_topic), t, p, n_parts = 0, n = 0, k = 0, g = 0, start, j
    cdef int32_t v
    cdef object last = None
    cdef int32_t last_id = -1
    if cnt.shape[0] != T:
        raise ValueError("counts must have one entry per topic")
    for t in range(T):
        n_parts += cnt[t]
        per = per_topic[t]
        if per is not None:
            for p in range(min(<Py_ssize_t>cnt[t], len(per))):
                racks_p = per[p]
                if PyUnicode_Check(racks_p) or PyBytes_Check(racks_p):
                    where = repr(names[t]) if names is not None else f"topic #{t}"
                    raise TypeError(f"partition_racks[{where}][{p}]: expected a list of racks, "
                                    f"got one {type(racks_p).__name__}")
                n += len(racks_p)
    off_arr = np.zeros(n_parts + 1, dtype=np.int64)
    ids_arr = np.empty(n + 1, dtype=np.int32)
    cdef int64_t[::1] off = off_arr
    cdef int32_t[::1] ids = ids_arr
    for t in range(T):
        per = per_topic[t]
        for p in range(cnt[t]):
            start = k
            if per is not None and p < len(per):
                for r in per[p]:
                    if r is None or r == "":
                        continue
                    if r is not last:
                        o = index.get(r)
                        if o is None:
                            if not isinstance(r, str):
                                where = repr(names[t]) if names is not None else f"topic #{t}"
                                raise TypeError(f"partition_racks[{where}][{p}]: racks must be str or None, "
                                                f"got {type(r).__name__}")
                            o = index[r] = len(index)
                        last, last_id = r, <int32_t>o
                    if k == n:
                        raise ValueError("a partition's rack list changed while it was read")
                    # insert in order, skipping a rack the partition already has
                    j = k
                    while j > start and ids[j - 1] > last_id:
                        j -= 1
                    if j > start and ids[j - 1] == last_id:
                        continue
                    v = last_id
                    while j <= k:
                        v, ids[j] = ids[j], v
                        j += 1
                    k += 1
            g += 1
            off[g] = k
    return off_arr, ids_arr[:k]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef _member_counts(int32_t[::1] own, int64_t[::1] bs, Py_ssize_t T, Py_ssize_t n_members):
    """Check an owner array against its topic bases; returns ``(counts, most)``: counts[m + 1]
    partitions of member m (int64, n_members + 1 entries) and the longest partition count of
    a topic."""
    cdef Py_ssize_t N = own.shape[0], g, t, maxp = 0
    cdef int32_t mi
    if bs.shape[0] != T + 1 or bs[0] != 0 or bs[T] != N:
        raise ValueError("base must have len(topics) + 1 entries rising from 0 to len(owner)")
    for t in range(T):
        if bs[t + 1] < bs[t]:
            raise ValueError("base must not fall")
        maxp = max(maxp, bs[t + 1] - bs[t])
    counts_arr = np.zeros(n_members + 1, dtype=np.int64)
    cdef int64_t[::1] counts = counts_arr
    for g in range(N):
        mi = own[g]
        if mi >= n_members or mi < -1:
            raise ValueError(f"owner[{g}] = {mi} is not a member index")
        if mi >= 0:
            counts[mi + 1] += 1
    return counts_arr, maxp


@cython.boundscheck(False)
@cython.wraparound(False)
def member_partitions(owner, base, list topics, Py_ssize_t n_members, tp_type=None, bint by_topic=False):
    """Per-member partition lists from an owner array, built in one pass.

    ``owner[g]``: member index of global partition ``g`` (-1: none); ``base``: first global
    index of each topic (``len(topics) + 1`` entries). Returns a list of ``n_members`` lists,
    each in global-index order (topic order, then partition): ``tp_type(topic, partition)``
    items (a 2-field tuple subclass such as ``TopicPartition``; plain tuples when None), or
    with ``by_topic`` ``(topic, [partition, ...])`` tuples, the form of the consumer
    protocol's Assignment.
    """
    cdef int32_t[::1] own = np.ascontiguousarray(owner, dtype=np.int32)
    cdef int64_t[::1] bs = np.ascontiguousarray(base, dtype=np.int64)
    cdef Py_ssize_t N = own.shape[0], T = len(topics), g, t = 0, i, maxp
    cdef int32_t mi
    if tp_type is not None and not issubclass(tp_type, tuple):
        raise TypeError("tp_type must be a tuple subclass")
    cdef PyTypeObject *tp = <PyTypeObject *>(tuple if tp_type is None else tp_type)
    counts_arr, maxp = _member_counts(own, bs, T, n_members)
    cdef int64_t[::1] counts = counts_arr
    # partition numbers as Python ints, made once and shared
    cdef list ints = list(range(maxp))
    cdef list out = []
    cdef list lst
    cdef list cur
    cdef int32_t[::1] last_topic
    cdef int64_t[::1] pos
    for i in range(n_members):
        out.append(PyList_New(0) if by_topic else [None] * counts[i + 1])
    was = gc.isenabled()
    gc.disable()       # a million fresh tuples of str/int hold no cycles
    try:
        t = 0
        if by_topic:
            last_arr = np.full(n_members, -1, dtype=np.int32)
            last_topic = last_arr
            curs = [None] * n_members
            for g in range(N):
                mi = own[g]
                if mi < 0:
                    continue
                while g >= bs[t + 1]:
                    t += 1
                if last_topic[mi] != t:
                    last_topic[mi] = <int32_t>t
                    cur = []
                    curs[mi] = cur
                    (<list>out[mi]).append((topics[t], cur))
                else:
                    cur = <list>curs[mi]
                cur.append(ints[g - bs[t]])
        else:
            pos_arr = np.zeros(n_members, dtype=np.int64)
            pos = pos_arr
            for g in range(N):
                mi = own[g]
                if mi < 0:
                    continue
                while g >= bs[t + 1]:
                    t += 1
                lst = <list>out[mi]
                item = kc_pair(tp, topics[t], ints[g - bs[t]])
                lst[pos[mi]] = item
                pos[mi] += 1
    finally:
        if was:
            gc.enable()
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def java_hashmap_order(list keys):
    """Indexes of ``keys`` (str) in the order a ``java.util.HashMap`` built by inserting them
    in the given order (default capacity and load factor) iterates them: by bucket, then
    insertion order. Needs Java's ``String.hashCode``, computed here over UTF-16 units."""
    cdef Py_ssize_t n = len(keys), i, j
    cdef uint32_t h
    cdef int64_t cap = 16
    cdef bytes b
    cdef const unsigned char *p
    while n > cap * 3 // 4:
        cap *= 2
    buckets = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] bk = buckets
    for i in range(n):
        b = (<str>keys[i]).encode("utf-16-be", "surrogatepass")
        p = b
        h = 0
        for j in range(0, len(b), 2):
            h = 31 * h + ((<uint32_t>p[j] << 8) | p[j + 1])
        bk[i] = (h ^ (h >> 16)) & (cap - 1)
    return np.argsort(buckets, kind="stable").astype(np.int32)


# ------------------------------------------------------------------ assignments as bytes

def _expect(bint ok, str what):
    if not ok:
        raise NotImplementedError(f"ConsumerProtocolAssignment program has an unexpected layout ({what})")


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_member_assignments(owner, base, list topics, Py_ssize_t n_members, code, int version,
                              user_data=None):
    """Each member's ``ConsumerProtocolAssignment`` (int16 version prefix, then the body the
    spec engine encodes from ``code``, the compiled program of that version), straight
    from the owner array: partitions grouped per topic in topic order, no Python object per
    partition. The tape handed to the engine follows the layout ``code`` declares, which
    is checked first (NotImplementedError if a schema ever changes it)."""
    cdef int32_t[::1] prog = np.ascontiguousarray(code, dtype=np.int32)
    cdef int32_t[::1] own = np.ascontiguousarray(owner, dtype=np.int32)
    cdef int64_t[::1] bs = np.ascontiguousarray(base, dtype=np.int64)
    cdef Py_ssize_t N = own.shape[0], T = len(topics), g, t, i, k, m
    cdef kc_error err
    _expect(prog.shape[0] > 4 and kc_program_check(&prog[0], prog.shape[0]) == KC_OK, "check")
    # struct 0: [ARRAY of struct s (not compact), BYTES]; s: [STRING, ARRAY of INT32]
    cdef int32_t o0 = prog[2]
    _expect(prog[o0] == 0 and prog[o0 + 1] == 2 and prog[o0 + 2] == 0, "message fields")
    _expect(prog[o0 + 4] == KC_T_ARRAY and (prog[o0 + 6] & 0xff) == KC_T_STRUCT
            and not (prog[o0 + 5] & KC_F_COMPACT), "assignedPartitions")
    _expect(prog[o0 + 7] == KC_T_BYTES and not (prog[o0 + 8] & KC_F_COMPACT), "userData")
    cdef int32_t s = prog[o0 + 6] >> 8
    _expect(0 < s < prog[1], "struct index")
    cdef int32_t o1 = prog[2 + s]
    _expect(prog[o1] == 0 and prog[o1 + 1] == 2 and prog[o1 + 2] == 0, "TopicPartition fields")
    _expect(prog[o1 + 4] == KC_T_STRING and not (prog[o1 + 5] & (KC_F_COMPACT | KC_F_NULLABLE)), "topic")
    _expect(prog[o1 + 7] == KC_T_ARRAY and (prog[o1 + 9] & 0xff) == KC_T_INT32
            and not (prog[o1 + 8] & KC_F_COMPACT), "partitions")
    if not (-32768 <= version <= 32767):
        raise ValueError("version must fit an int16")
    start_arr, _ = _member_counts(own, bs, T, n_members)
    cdef int64_t[::1] start = start_arr
    # the heap: topic names (UTF-8), then the user data
    cdef bytearray heap_b = bytearray()
    refs_arr = np.zeros(T + 1, dtype=np.int64)
    cdef int64_t[::1] refs = refs_arr
    for t in range(T):
        nb = (<str>topics[t]).encode("utf-8")
        refs[t] = KC_REF(len(heap_b), len(nb))
        heap_b += nb
    cdef int64_t ud_ref = 0
    if user_data is not None:
        ub = bytes(user_data)
        ud_ref = KC_REF(len(heap_b), len(ub))
        heap_b += ub
    elif not (prog[o0 + 8] & KC_F_NULLABLE):
        ud_ref = KC_REF(len(heap_b), 0)
    heap_b += b"\0"    # never empty: its first byte's address is taken
    cdef const uint8_t[::1] heap = heap_b
    # counting sort of the global partitions by member (each member's stay in g order)
    for m in range(n_members):
        start[m + 1] += start[m]
    order_arr = np.empty(start[n_members] + 1, dtype=np.int64)
    cdef int64_t[::1] order = order_arr
    fill_arr = start_arr[:n_members].copy()
    cdef int64_t[::1] fill = fill_arr
    for g in range(N):
        m = own[g]
        if m >= 0:
            order[fill[m]] = g
            fill[m] += 1
    cdef Py_ssize_t most = 0
    for m in range(n_members):
        most = max(most, start[m + 1] - start[m])
    # one tape (and aux) sized for the largest member, reused
    tape_arr = np.empty(3 * most + 2, dtype=np.int64)
    aux_arr = np.empty(3 * most + 2, dtype=np.uint32)
    cdef int64_t[::1] tape = tape_arr
    cdef uint32_t[::1] aux = aux_arr
    cdef Py_ssize_t n, cnt_at
    cdef size_t size = 0
    cdef int rc
    cdef uint8_t *w
    cdef list out = []
    for m in range(n_members):
        n = 1
        k = 0              # topic entries
        t = -1
        cnt_at = -1
        for i in range(start[m], start[m + 1]):
            g = order[i]
            if t < 0 or g >= bs[t + 1]:
                # next topic holding g (g rises, so t only moves forward)
                if t < 0:
                    t = 0
                while g >= bs[t + 1]:
                    t += 1
                tape[n] = refs[t]
                tape[n + 1] = 0
                cnt_at = n + 1
                n += 2
                k += 1
            tape[n] = g - bs[t]
            tape[cnt_at] += 1
            n += 1
        tape[0] = k
        tape[n] = ud_ref
        n += 1
        rc = kc_encode_size(&prog[0], &tape[0], n, &heap[0], heap.shape[0], &aux[0], &size, &err)
        if rc == KC_OK:
            b = PyBytes_FromStringAndSize(NULL, size + 2)
            w = <uint8_t *>PyBytes_AS_STRING(b)
            w[0] = (version >> 8) & 0xff
            w[1] = version & 0xff
            rc = kc_encode_write(&prog[0], &tape[0], n, &heap[0], heap.shape[0], &aux[0], w + 2, &err)
        if rc != KC_OK:
            from kcodec.errors import EncodeError
            raise EncodeError(f"cannot encode the assignment of member #{m} (engine code {rc})",
                              message="ConsumerProtocolAssignment", version=version)
        out.append(b)
    return out
