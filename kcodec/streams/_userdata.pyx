# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Cython binding of the Streams userData writers (csrc/kc_streams_userdata.c): the parts of
``SubscriptionInfo`` and ``AssignmentInfo`` whose order Kafka takes from ``java.util.HashMap``.
Use through :mod:`kcodec.streams.protocol`.

Each function takes the Python values as :mod:`kcodec.streams.protocol` holds them and returns
the bytes, or None when an input is off its path (a number beyond int32, a named task, a
value of another type, a string ``writeUTF`` refuses, a topic missing from a given
dictionary): the caller's Python encoder then writes it or raises its ``EncodeError``.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_GetItem, PyDict_Next
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_CheckExact
from cpython.object cimport PyObject, PyObject_RichCompareBool, Py_EQ
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport int32_t, int64_t, uint8_t, uintptr_t
from libc.string cimport memchr, memcpy

import numpy as np

from kcodec._java import java_string_key, string_hashes
from kcodec.errors import EncodeError
from kcodec.framing import Writer

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    void *PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)

cdef extern from "kc_streams_userdata.h":
    int KC_UD_OK, KC_UD_ENOMEM, KC_UD_HOSTS, KC_UD_DICTIONARY
    ctypedef struct kc_ud_strings:
        int32_t n
        const uint8_t *data
        const int64_t *off
    ctypedef struct kc_ud_host_map:
        kc_ud_strings host
        const int32_t *port
        const int64_t *start
        const int32_t *topic
        const int32_t *partition
    ctypedef struct kc_ud_host_section:
        int layout
        int32_t n_maps
        kc_ud_host_map map[2]
        kc_ud_strings topic
        int32_t n_dict
        const int32_t *dict_index
        const int32_t *dict_topic
        const int32_t *number
    int kc_ud_topic_dictionary(const kc_ud_host_section *s, int32_t dict_maps, const int32_t *topic_hash,
                               const int64_t *topic_rank, int32_t *dict_index, int32_t *dict_topic,
                               int32_t *number, int32_t *n_dict) nogil
    int kc_ud_host_section_size(const kc_ud_host_section *s, int64_t *size) nogil
    int kc_ud_host_section_write(const kc_ud_host_section *s, uint8_t *out, int64_t cap) nogil
    int kc_ud_task_sets(int32_t n, const int32_t *subtopology, const int32_t *partition,
                        const uint8_t *active, int ordered, uint8_t *out, int64_t cap) nogil

DEF INT32_MIN = -2147483648
DEF INT32_MAX = 2147483647
DEF CACHE = 1024              # topic objects remembered by address (a direct-mapped cache)


cdef inline bint _int32(object o, int32_t *out):
    # an exact int within int32 (bool and other numbers: the Python encoder decides)
    cdef int overflow = 0
    cdef long long v
    if not PyLong_CheckExact(o):
        return False
    v = PyLong_AsLongLongAndOverflow(o, &overflow)
    if overflow or v < INT32_MIN or v > INT32_MAX:
        return False
    out[0] = <int32_t>v
    return True


cdef object _mutf8(object s):
    """``writeUTF``'s bytes of ``s`` without the length, or None (not a str, too long)."""
    cdef Py_ssize_t n
    if not PyUnicode_CheckExact(s):
        return None
    n = PyUnicode_GET_LENGTH(s)
    if PyUnicode_IS_ASCII(s) and n <= 0xFFFF and memchr(PyUnicode_DATA(s), 0, n) == NULL:
        return PyBytes_FromStringAndSize(<char *>PyUnicode_DATA(s), n)
    try:                       # NUL, surrogates, non-ASCII: framing's writer, once per string
        return Writer().java_utf(s).getvalue()[2:]
    except EncodeError:
        return None


cdef tuple _strings(list strs):
    """Concatenated modified UTF-8 of ``strs`` and their offsets, or None."""
    cdef Py_ssize_t i, n = len(strs)
    off = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] o = off
    parts = []
    o[0] = 0
    for i in range(n):
        b = _mutf8(strs[i])
        if b is None:
            return None
        parts.append(b)
        o[i + 1] = o[i] + len(b)
    return b"".join(parts), off


cdef inline void _set_strings(kc_ud_strings *s, tuple t, int32_t n):
    cdef const uint8_t[::1] d = t[0] if len(t[0]) else b"\0"
    cdef int64_t[::1] o = t[1]
    s.n = n
    s.data = &d[0]
    s.off = &o[0]


def host_section(list maps, bint dictionary, object given=None):
    """The host section of an ``AssignmentInfo``: ``maps`` (``Dict[HostInfo,
    List[TopicPartition]]``, in wire order: ``partitionsByHost`` then, v6+,
    ``standbyPartitionsByHost``), as v2-v4's ``hosts`` block (``dictionary`` False) or v5+'s
    topic dictionary and maps.  ``given``: the ``(index, topic)`` dictionary to write, or
    None for Kafka's (``encodeTopicDictionaryAndGet``).  None when off the fast path."""
    cdef Py_ssize_t nm = len(maps), j, i, pos, total = 0, k, n, cnt
    cdef PyObject *key
    cdef PyObject *val
    cdef PyObject *hit
    cdef object h, seq, x, t
    cdef int32_t v32, tid
    cdef uintptr_t slot
    if nm > 2:
        return None
    # 1. the maps' hosts and partition lists (lists made here, before any address is cached)
    hosts = []
    rows = []
    for j in range(nm):
        m = maps[j]
        if type(m) is not dict:
            return None
        hl = []
        rl = []
        pos = 0
        while PyDict_Next(<dict>m, &pos, &key, &val):
            h = <object>key
            seq = <object>val
            if not PyTuple_Check(h) or PyTuple_GET_SIZE(h) < 2:
                return None
            if type(seq) is not list and type(seq) is not tuple:
                seq = list(seq)
            hl.append(h)
            rl.append(seq)
            total += len(seq)
        hosts.append(hl)
        rows.append(rl)
    if total > INT32_MAX:
        return None
    topic_a = np.empty(max(total, 1), dtype=np.int32)
    part_a = np.empty(max(total, 1), dtype=np.int32)
    cdef int32_t[::1] ta = topic_a, pa = part_a
    # 2. every partition: its topic's id (by the str object's address, else by value) and number
    cdef dict num = {}
    cdef list names = []
    cdef PyObject *cache_key[CACHE]
    cdef int32_t cache_val[CACHE]
    for i in range(CACHE):
        cache_key[i] = NULL
    k = 0
    starts = []
    ports = []
    host_strings = []
    for j in range(nm):
        hl = hosts[j]
        rl = rows[j]
        n = len(hl)
        st = np.empty(n + 1, dtype=np.int64)
        po = np.empty(max(n, 1), dtype=np.int32)
        starts.append(st)
        ports.append(po)
        st[0] = k
        for i in range(n):
            h = hl[i]
            if not _int32(<object>PyTuple_GET_ITEM(h, 1), &v32):
                return None
            po[i] = v32
            seq = rl[i]
            for x in seq:
                if not PyTuple_Check(x) or PyTuple_GET_SIZE(x) < 2:
                    return None
                t = <object>PyTuple_GET_ITEM(x, 0)
                slot = ((<uintptr_t><PyObject *>t) >> 4) & (CACHE - 1)
                if cache_key[slot] == <PyObject *>t:
                    tid = cache_val[slot]
                else:
                    if not PyUnicode_CheckExact(t):
                        return None
                    hit = PyDict_GetItem(num, t)
                    if hit == NULL:
                        tid = <int32_t>len(names)
                        num[t] = tid
                        names.append(t)
                    else:
                        tid = <int32_t><object>hit
                    cache_key[slot] = <PyObject *>t
                    cache_val[slot] = tid
                if not _int32(<object>PyTuple_GET_ITEM(x, 1), &pa[k]):
                    return None
                ta[k] = tid
                k += 1
            st[i + 1] = k
        st -= st[0]
        host_strings.append(_strings([h[0] for h in hl]))
        if host_strings[j] is None:
            return None
    # 3. the dictionary: the caller's, or Kafka's
    cdef Py_ssize_t nd = 0
    dict_index = dict_topic = number = None
    if dictionary:
        if given is not None:
            pairs = list(given)
            nd = len(pairs)
            dict_index = np.empty(max(nd, 1), dtype=np.int32)
            dict_topic = np.empty(max(nd, 1), dtype=np.int32)
            for i in range(nd):
                x = pairs[i]
                if not isinstance(x, tuple) or len(x) != 2 or not PyUnicode_CheckExact(x[1]) \
                        or not _int32(x[0], &v32):
                    return None
                dict_index[i] = v32
                t = x[1]
                if t not in num:
                    num[t] = len(names)
                    names.append(t)
                dict_topic[i] = num[t]
            number = np.full(max(len(names), 1), -1, dtype=np.int32)
            for i in range(nd):          # {topic: index}: the last entry of a topic wins
                number[dict_topic[i]] = dict_index[i]
            if total and (number[topic_a[:total]] < 0).any():
                return None              # a topic missing from the dictionary
        else:
            dict_index = np.empty(max(len(names), 1), dtype=np.int32)
            dict_topic = np.empty(max(len(names), 1), dtype=np.int32)
            number = np.empty(max(len(names), 1), dtype=np.int32)
    topic_strings = _strings(names)
    if topic_strings is None:
        return None
    # 4. the C section
    cdef kc_ud_host_section s
    s.layout = KC_UD_DICTIONARY if dictionary else KC_UD_HOSTS
    s.n_maps = <int32_t>nm
    cdef int32_t[::1] pv
    cdef int64_t[::1] sv
    base = 0
    for j in range(nm):
        _set_strings(&s.map[j].host, host_strings[j], <int32_t>len(hosts[j]))
        pv = ports[j]
        sv = starts[j]
        s.map[j].port = &pv[0]
        s.map[j].start = &sv[0]
        s.map[j].topic = &ta[base]
        s.map[j].partition = &pa[base]
        base += sv[len(hosts[j])]
    _set_strings(&s.topic, topic_strings, <int32_t>len(names))
    s.n_dict = 0
    s.dict_index = s.dict_topic = s.number = NULL
    cdef int32_t[::1] di, dt, nb
    cdef int32_t[::1] th
    cdef int64_t[::1] tr
    cdef const int64_t *trp = NULL
    cdef int32_t n_dict = 0
    cdef int rc
    if dictionary:
        di = dict_index
        dt = dict_topic
        nb = number
        s.dict_index = &di[0]
        s.dict_topic = &dt[0]
        s.number = &nb[0]
        if given is None:
            hashes = string_hashes(names) if names else np.zeros(1, dtype=np.int32)
            th = hashes
            if len(names) > 1 and len(np.unique(hashes)) < len(names):
                # equal String.hashCodes: a treeified bin may compare them (String.compareTo)
                ranks = np.empty(len(names), dtype=np.int64)
                ranks[sorted(range(len(names)), key=lambda q: java_string_key(names[q]))] = np.arange(len(names))
                tr = ranks
                trp = &tr[0]
            rc = kc_ud_topic_dictionary(&s, s.n_maps, &th[0], trp, &di[0], &dt[0], &nb[0], &n_dict)
            if rc == KC_UD_ENOMEM:
                raise MemoryError("topic dictionary")
            if rc != KC_UD_OK:
                raise ValueError(f"topic dictionary: invalid input ({rc})")
            s.n_dict = n_dict
        else:
            s.n_dict = <int32_t>nd
    cdef int64_t size = 0
    rc = kc_ud_host_section_size(&s, &size)
    if rc != KC_UD_OK:
        raise ValueError(f"host section: invalid input ({rc})")
    out = PyBytes_FromStringAndSize(NULL, size)
    rc = kc_ud_host_section_write(&s, <uint8_t *>PyBytes_AS_STRING(out), size)
    if rc != KC_UD_OK:
        raise ValueError(f"host section: invalid input ({rc})")
    return out


def task_sets(dict sums, bint ordered):
    """``SubscriptionInfo`` v1-v6's ``prevTasks`` then ``standbyTasks`` from ``sums``
    (``{TaskId: offset sum}``; ``LATEST_OFFSET`` (-2): an active task), in the order of the
    ``HashSet<TaskId>``s Kafka's constructor fills (``ordered``) or in ``sums``' order.
    None when a task is named or a number is not an int32."""
    cdef Py_ssize_t n = len(sums), pos = 0, i = 0
    cdef PyObject *key
    cdef PyObject *val
    cdef object t, s
    cdef int overflow
    sub = np.empty(max(n, 1), dtype=np.int32)
    part = np.empty(max(n, 1), dtype=np.int32)
    act = np.empty(max(n, 1), dtype=np.uint8)
    cdef int32_t[::1] sv = sub, pv = part
    cdef uint8_t[::1] av = act
    while PyDict_Next(sums, &pos, &key, &val):
        if i >= n:                # an offset sum's __eq__ changed the dict
            return None
        t = <object>key
        if not PyTuple_Check(t) or PyTuple_GET_SIZE(t) != 3 or <object>PyTuple_GET_ITEM(t, 2) is not None:
            return None
        if not _int32(<object>PyTuple_GET_ITEM(t, 0), &sv[i]) or not _int32(<object>PyTuple_GET_ITEM(t, 1), &pv[i]):
            return None
        s = <object>val
        if PyLong_CheckExact(s):
            overflow = 0
            av[i] = PyLong_AsLongLongAndOverflow(s, &overflow) == -2 and not overflow
        else:
            av[i] = PyObject_RichCompareBool(s, -2, Py_EQ)
        i += 1
    if i != n:
        return None
    out = PyBytes_FromStringAndSize(NULL, 8 + 8 * n)
    cdef uint8_t *op = <uint8_t *>PyBytes_AS_STRING(out)
    cdef int rc
    with nogil:
        rc = kc_ud_task_sets(<int32_t>n, &sv[0], &pv[0], &av[0], ordered, op, 8 + 8 * n)
    if rc == KC_UD_ENOMEM:
        raise MemoryError("task sets")
    if rc != KC_UD_OK:
        raise ValueError(f"task sets: invalid input ({rc})")
    return out
