# cython: language_level=3
"""Cython binding of the metadata image kernels (csrc/kc_kraft_image.c): the id index
(topic and directory UUIDs to their table rows) and PartitionChangeRecords applied to
the partition columns in log order.  Arrays are NumPy, owned by kcodec.kraft.image."""
import numpy as np
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t

cdef extern from "kc_kraft_image.h":
    int KC_KRAFT_LISTS
    void kc_kraft_ids_find(const uint8_t *keys, const int32_t *slots, int64_t cap,
                           const uint8_t *ids, int64_t n, int32_t *out) nogil
    void kc_kraft_ids_put(const uint8_t *keys, int32_t *slots, int64_t cap,
                          const int32_t *rows, int64_t n) nogil
    int kc_kraft_ids_drop(const uint8_t *keys, int32_t *slots, int64_t cap, int32_t row) nogil
    void kc_kraft_parts_find(const int64_t *keys, const int64_t *rows, int64_t nkeys,
                             const int64_t *topic_start, int64_t ntopics, const int32_t *topic,
                             const int32_t *partition, int64_t n, int64_t *out) nogil
    ctypedef struct kc_kraft_list_col:
        int64_t *start
        int32_t *length
        uint8_t *null
        int32_t *values
        int64_t values_n
    ctypedef struct kc_kraft_list_in:
        const int32_t *offsets
        const uint8_t *validity
        int64_t validity_offset
        const int32_t *values
    void kc_kraft_apply_changes(int64_t n, const int64_t *rows, const int32_t *leader,
                                const int8_t *lrs, const kc_kraft_list_in *lists,
                                int32_t *leader_col, int32_t *leader_epoch_col,
                                int32_t *partition_epoch_col, int8_t *lrs_col,
                                kc_kraft_list_col *cols) nogil


cdef _check_slots(const int32_t[::1] slots):
    cdef int64_t cap = slots.shape[0]
    if cap < 1 or cap & (cap - 1):
        raise ValueError("the id index needs a power-of-two number of slots")


def ids_find(const uint8_t[:, ::1] keys, const int32_t[::1] slots, const uint8_t[:, ::1] ids):
    """Row of ``keys`` holding each 16-byte id (rows of ``ids``), -1 when not indexed."""
    cdef int64_t n = ids.shape[0]
    if keys.shape[1] != 16 or ids.shape[1] != 16:
        raise ValueError("ids are 16 bytes")
    _check_slots(slots)
    if not n or not keys.shape[0] or not slots.shape[0]:
        return np.full(n, -1, np.int32)
    out = np.empty(n, np.int32)
    cdef int32_t[::1] o = out
    with nogil:
        kc_kraft_ids_find(&keys[0, 0], &slots[0], slots.shape[0], &ids[0, 0], n, &o[0])
    return out


def ids_put(const uint8_t[:, ::1] keys, int32_t[::1] slots, const int32_t[::1] rows):
    """Index rows of ``keys`` (an id already indexed points to its new row).  The caller
    keeps ``len(slots)`` a power of two at least twice the indexed ids."""
    cdef int64_t n = rows.shape[0], i, m = keys.shape[0], used = 0
    if keys.shape[1] != 16:
        raise ValueError("ids are 16 bytes")
    _check_slots(slots)
    for i in range(n):
        if rows[i] < 0 or rows[i] >= m:
            raise IndexError(f"row {rows[i]} outside the key table")
    for i in range(slots.shape[0]):
        if slots[i] >= 0:
            used += 1
    if used + n >= slots.shape[0]:      # a full table would probe forever
        raise ValueError("id index too small")
    if n:
        with nogil:
            kc_kraft_ids_put(&keys[0, 0], &slots[0], slots.shape[0], &rows[0], n)


def ids_drop(const uint8_t[:, ::1] keys, int32_t[::1] slots, int32_t row):
    """Stop indexing row ``row`` of ``keys``; False when it was not indexed."""
    _check_slots(slots)
    if keys.shape[1] != 16:
        raise ValueError("ids are 16 bytes")
    if row < 0 or row >= keys.shape[0]:
        raise IndexError(f"row {row} outside the key table")
    return bool(kc_kraft_ids_drop(&keys[0, 0], &slots[0], slots.shape[0], row))


def parts_find(const int64_t[::1] keys, const int64_t[::1] rows, const int64_t[::1] topic_start,
               const int32_t[::1] topic, const int32_t[::1] partition):
    """Row of each (topic[i], partition[i]) in the partition index (``keys`` ascending,
    ``topic << 32 | (partition & 0xFFFFFFFF)``; ``rows`` their rows; ``topic_start[t]`` where topic t's
    keys begin), -1 when not indexed."""
    cdef int64_t n = topic.shape[0], nkeys = keys.shape[0], i
    if partition.shape[0] != n or rows.shape[0] != nkeys:
        raise ValueError("arrays of unequal length")
    for i in range(topic_start.shape[0]):
        if topic_start[i] < 0 or topic_start[i] > nkeys:
            raise ValueError("topic_start outside the keys")
    out = np.empty(n, np.int64)
    cdef int64_t[::1] o = out
    if n:
        with nogil:
            kc_kraft_parts_find(&keys[0] if nkeys else NULL, &rows[0] if nkeys else NULL, nkeys,
                                &topic_start[0] if topic_start.shape[0] else NULL,
                                topic_start.shape[0], &topic[0], &partition[0], n, &o[0])
    return out


def apply_changes(const int64_t[::1] rows, const int32_t[::1] leader, const int8_t[::1] lrs,
                  list lists, int32_t[::1] leader_col, int32_t[::1] leader_epoch_col,
                  int32_t[::1] partition_epoch_col, int8_t[::1] lrs_col, list cols):
    """Apply PartitionChangeRecords ``i`` to partition row ``rows[i]`` (< 0: skipped), in
    order.  ``lists``: per list field (replicas, isr, removingReplicas, addingReplicas,
    eligibleLeaderReplicas, lastKnownElr, directories) ``None`` (absent) or ``(offsets,
    validity or None, validity bit offset, values)``; ``cols``: per field ``(start, length,
    null, values, values used)`` of the image's list column, ``values`` with room for every
    list appended.  Returns the values used per column afterwards."""
    cdef int64_t n = rows.shape[0], k, i
    cdef kc_kraft_list_in ins[7]
    cdef kc_kraft_list_col outs[7]
    cdef const int32_t[::1] off
    cdef const uint8_t[::1] val
    cdef const int32_t[::1] vals
    cdef int64_t[::1] st
    cdef int32_t[::1] ln
    cdef uint8_t[::1] nl
    cdef int32_t[::1] cv
    cdef int64_t used, room
    if len(lists) != KC_KRAFT_LISTS or len(cols) != KC_KRAFT_LISTS:
        raise ValueError("one entry per list field")
    if leader.shape[0] < n or lrs.shape[0] < n:
        raise ValueError("leader and leaderRecoveryState need a value per change")
    cdef int64_t nrows = partition_epoch_col.shape[0]
    if (leader_col.shape[0] < nrows or leader_epoch_col.shape[0] < nrows
            or lrs_col.shape[0] < nrows):
        raise ValueError("partition columns of unequal length")
    for i in range(n):
        if rows[i] >= nrows:
            raise IndexError(f"partition row {rows[i]} outside the columns")
    keep = []
    for k in range(KC_KRAFT_LISTS):
        st_, ln_, nl_, cv_, used = cols[k]
        st, ln, nl, cv = st_, ln_, nl_, cv_
        if st.shape[0] < nrows or ln.shape[0] < nrows or nl.shape[0] < nrows:
            raise ValueError("list column shorter than the partition columns")
        if used < 0 or used > cv.shape[0]:
            raise ValueError("list values used outside the values")
        outs[k].start, outs[k].length, outs[k].null = &st[0], &ln[0], &nl[0]
        outs[k].values = &cv[0] if cv.shape[0] else NULL
        outs[k].values_n = used
        ins[k].offsets, ins[k].validity, ins[k].validity_offset, ins[k].values = NULL, NULL, 0, NULL
        if lists[k] is None:
            continue
        off_, val_, voff, vals_ = lists[k]
        off, vals = off_, vals_
        keep.append((off, vals))
        if off.shape[0] < n + 1:
            raise ValueError("list offsets need n + 1 entries")
        if n and (off[0] < 0 or off[n] > vals.shape[0] or off[n] < off[0]):
            raise ValueError("list offsets outside the values")
        for i in range(n):
            if off[i + 1] < off[i]:
                raise ValueError("list offsets decrease")
        room = cv.shape[0] - used
        if n and off[n] - off[0] > room:
            raise ValueError("no room for the appended list values")
        ins[k].offsets = &off[0]
        ins[k].values = &vals[0] if vals.shape[0] else NULL
        if val_ is not None:
            val = val_
            keep.append(val)
            if voff < 0 or (voff + n + 7) // 8 > val.shape[0]:
                raise ValueError("validity bitmap too short")
            ins[k].validity = &val[0]
            ins[k].validity_offset = voff
    if n:
        with nogil:
            kc_kraft_apply_changes(n, &rows[0], &leader[0], &lrs[0], ins, &leader_col[0],
                                   &leader_epoch_col[0], &partition_epoch_col[0], &lrs_col[0],
                                   outs)
    return [outs[k].values_n for k in range(KC_KRAFT_LISTS)]
