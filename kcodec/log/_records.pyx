# cython: language_level=3
"""Binding of the C record-batch scanner (csrc/kc_batch.c) and CRC-32C (csrc/kc_crc32c.c).

Only plumbing lives here: the C side fills flat arrays of plain structs, which become
NumPy structured arrays; :mod:`kcodec.log` builds Python objects at the edge.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy
from cpython.ref cimport Py_REFCNT

import numpy as np

cdef extern from "kc_crc32c.h":
    uint32_t kc_crc32c(uint32_t crc, const uint8_t *buf, size_t len) nogil
    uint32_t kc_crc32c_portable(uint32_t crc, const uint8_t *buf, size_t len) nogil
    int kc_crc32c_hw()

cdef extern from "kc_batch.h":
    ctypedef struct kc_batch:
        int64_t position
        int64_t base_offset
        int32_t record_count
        int64_t next_position
    ctypedef struct kc_record:
        int64_t offset
    ctypedef struct kc_header:
        int64_t key_pos
        int64_t value_pos
        int32_t key_len
        int32_t value_len
    size_t kc_scan(const uint8_t *buf, size_t len, int verify_crc, int final,
                   int64_t max_batch_length,
                   kc_batch *batches, size_t max_batches, size_t *n_batches,
                   kc_record *recs, size_t max_recs, size_t *n_recs) nogil
    int64_t kc_records_parse(const uint8_t *buf, size_t start, size_t end, int32_t count,
                             int64_t base_offset, int64_t base_timestamp, int32_t batch_index,
                             kc_record *recs, size_t max_recs, int *status, int *field,
                             size_t *err_pos) nogil
    int kc_headers_parse(const uint8_t *buf, size_t len, size_t pos, int32_t count,
                         kc_header *out) nogil
    size_t kc_resync(const uint8_t *buf, size_t len, size_t start, int final,
                     int64_t max_batch_length) nogil
    uint32_t kc_crc32(uint32_t crc, const uint8_t *buf, size_t len) nogil
    int64_t kc_legacy_parse(const uint8_t *buf, size_t len, int wrapper_magic,
                            int64_t wrapper_offset, int64_t wrapper_timestamp,
                            int log_append_time, int verify_crc, int32_t batch_index,
                            kc_record *recs, size_t max_recs, int *status, int *field,
                            size_t *err_pos) nogil

from kcodec.log._dtypes import BATCH_DTYPE, RECORD_DTYPE

# The C structs are little-endian hosts' native layout; refuse to run on anything else
# rather than misread the arrays.
import sys as _sys
if _sys.byteorder != "little":  # pragma: no cover
    raise ImportError("kcodec.log._records needs a little-endian host")
assert BATCH_DTYPE.itemsize == sizeof(kc_batch), (BATCH_DTYPE.itemsize, sizeof(kc_batch))
assert RECORD_DTYPE.itemsize == sizeof(kc_record), (RECORD_DTYPE.itemsize, sizeof(kc_record))

MIN_RECORD_SIZE = 7   # length, attributes, timestamp, offset, key, value, header count
MIN_LEGACY_ENTRY = 26  # offset, size and the smallest (v0) message


ctypedef uint32_t (*crc_fn)(uint32_t crc, const uint8_t *buf, size_t len) nogil


cdef uint32_t _crc(crc_fn fn, data, uint32_t crc):
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    cdef uint32_t r
    with nogil:
        r = fn(crc, &v[0] if v.shape[0] else NULL, <size_t>v.shape[0])
    return r


def crc32c(data, unsigned int crc=0):
    """CRC-32C (Castagnoli) of ``data`` (any buffer), continuing from ``crc``."""
    return _crc(kc_crc32c, data, crc)


def crc32(data, unsigned int crc=0):
    """CRC-32 (IEEE, zlib's) of ``data``, continuing from ``crc``: legacy messages' checksum."""
    return _crc(kc_crc32, data, crc)


def crc32c_portable(data, unsigned int crc=0):
    """CRC-32C through the portable table implementation (for tests)."""
    return _crc(kc_crc32c_portable, data, crc)


def crc32c_hardware():
    """True when CRC-32C runs on the SSE4.2 instruction."""
    return bool(kc_crc32c_hw())


cdef object _pooled(list pool, object dtype, size_t cap):
    """A free array of ``dtype`` holding >= ``cap`` rows from ``pool`` (one nothing outside
    the pool references: every view handed out of it is gone), else a new one, kept in
    the pool while it has fewer than _POOL_PER_DTYPE of that dtype."""
    cdef Py_ssize_t i, same = 0
    cdef object a
    for i in range(len(pool)):
        a = pool[i]
        if a.dtype != dtype:
            continue
        same += 1
        # references: the pool's and `a`; a chunk still held keeps a view (its base)
        if Py_REFCNT(a) == 2 and <size_t>a.shape[0] >= cap:
            return a
    a = np.empty(cap, dtype)
    if same < _POOL_PER_DTYPE:
        pool.append(a)
    return a


# Chunks are yielded to callers that keep the previous one while the next is scanned
# (a for loop's variable): two buffers per dtype let a plain loop reuse them all the way.
_POOL_PER_DTYPE = 2


def scan(data, bint verify_crc=True, bint final=True, long long max_batch_length=1 << 30,
         Py_ssize_t max_batches=0, list pool=None):
    """Scan record batches in ``data`` (any contiguous buffer).

    Returns ``(consumed, batches, records)``: the bytes consumed, a BATCH_DTYPE array
    and a RECORD_DTYPE array (positions relative to ``data``).  Bytes after
    ``consumed`` hold a batch that ends beyond ``data`` (not ``final``) or did not fit
    the output arrays: call again on the rest.

    ``pool`` (a list owned by the caller, e.g. one per reading pass) lets the arrays
    be views of buffers kept there and reused by later calls once nothing references
    them any more: no fresh pages per window.  Without it the arrays are new.
    """
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    cdef size_t n = <size_t>v.shape[0]
    if n == 0:
        return 0, np.empty(0, BATCH_DTYPE), np.empty(0, RECORD_DTYPE)
    # a legacy entry can be as small as 26 bytes (np.empty leaves untouched pages unmapped)
    cdef size_t cap_b = max_batches if max_batches > 0 else n // MIN_LEGACY_ENTRY + 8
    # Sized for typical records (>= 24 bytes each); when records are smaller the scan
    # stops early and the caller scans the rest, so memory stays proportional to n.
    cdef size_t cap_r = n // 24 + 64
    cdef size_t nb = 0, nr = 0, consumed
    cdef kc_batch *bp
    cdef kc_record *rp
    while True:
        batches = records = None     # a retry's arrays are not reused by itself
        if pool is None:
            batches = np.empty(cap_b, BATCH_DTYPE)
            records = np.empty(cap_r, RECORD_DTYPE)
        else:
            batches = _pooled(pool, BATCH_DTYPE, cap_b)
            records = _pooled(pool, RECORD_DTYPE, cap_r)
            cap_b = <size_t>batches.shape[0]
            cap_r = <size_t>records.shape[0]
        bp = <kc_batch *><size_t>batches.ctypes.data
        rp = <kc_record *><size_t>records.ctypes.data
        nb = 0
        nr = 0
        with nogil:
            consumed = kc_scan(&v[0], n, verify_crc, final, max_batch_length,
                               bp, cap_b, &nb, rp, cap_r, &nr)
        if nb == 1 and batches[0]["status"] == 9 and cap_r < n // MIN_RECORD_SIZE + 8:
            cap_r = n // MIN_RECORD_SIZE + 8   # one batch of tiny records: room for all
            continue
        break
    if pool is not None:
        return consumed, batches[:nb], records[:nr]
    # Shrunk in place (realloc), not copied: the pages past the rows were never touched.
    batches.resize(nb, refcheck=False)
    records.resize(nr, refcheck=False)
    return consumed, batches, records


def parse_records(data, int count, long long base_offset, long long base_timestamp,
                  int batch_index=0, log_append_time=None):
    """Parse ``count`` records filling all of ``data`` (a decompressed records section).

    Returns ``(records, status, field, error_position)``.
    """
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    cdef size_t n = <size_t>v.shape[0]
    cdef size_t cap = n // MIN_RECORD_SIZE + 1
    if count >= 0 and <size_t>count < cap:
        cap = <size_t>count + 1
    records = np.empty(cap, RECORD_DTYPE)
    if n == 0:
        return records[:0].copy(), (0 if count == 0 else 8), 0, 0
    cdef kc_record *rp = <kc_record *><size_t>records.ctypes.data
    cdef int st = 0, field = 0
    cdef size_t err_pos = 0
    cdef int64_t got
    with nogil:
        got = kc_records_parse(&v[0], 0, n, count, base_offset, base_timestamp, batch_index,
                               rp, cap, &st, &field, &err_pos)
    out = records[:got].copy()
    if log_append_time is not None:
        out["timestamp"] = log_append_time
    return out, st, field, err_pos


def parse_legacy(data, int magic, long long offset, long long timestamp, bint log_append_time,
                 int batch_index=0, bint verify_crc=True):
    """Parse the inner message set of a compressed legacy wrapper (its inflated value):
    ``magic``, ``offset`` and ``timestamp`` are the wrapper's.

    Returns ``(records, status, field, error_position)`` as :func:`parse_records`.
    """
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    cdef size_t n = <size_t>v.shape[0]
    cdef size_t cap = n // 26 + 1        # MIN_LEGACY_ENTRY
    records = np.empty(cap, RECORD_DTYPE)
    cdef kc_record *rp = <kc_record *><size_t>records.ctypes.data
    cdef int st = 0, field = 0
    cdef size_t err_pos = 0
    cdef int64_t got
    with nogil:
        got = kc_legacy_parse(&v[0] if n else NULL, n, magic, offset, timestamp, log_append_time,
                              verify_crc, batch_index, rp, cap, &st, &field,
                              &err_pos)
    return records[:got].copy(), st, field, err_pos


def parse_headers(data, long long pos, int count):
    """The headers of one record: a list of ``(key: str, value: bytes | None)``."""
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    if count <= 0:
        return []
    if <size_t>count > <size_t>v.shape[0]:
        raise ValueError("header count exceeds the buffer")
    arr = np.empty(count, dtype=[("key_pos", "<i8"), ("value_pos", "<i8"),
                                 ("key_len", "<i4"), ("value_len", "<i4")])
    cdef kc_header *hp = <kc_header *><size_t>arr.ctypes.data
    if kc_headers_parse(&v[0], <size_t>v.shape[0], <size_t>pos, count, hp) != 0:
        raise ValueError("record headers do not parse")
    mv = memoryview(data).cast("B")
    out = []
    cdef int i
    for i in range(count):
        k = bytes(mv[hp[i].key_pos:hp[i].key_pos + hp[i].key_len]).decode("utf-8", "surrogateescape")
        if hp[i].value_len < 0:
            val = None
        else:
            val = bytes(mv[hp[i].value_pos:hp[i].value_pos + hp[i].value_len])
        out.append((k, val))
    return out


def slices(data, const int64_t[:] pos, const int32_t[:] length):
    """``[data[p:p+n] or None if n < 0]`` as bytes objects, built in one loop."""
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    cdef Py_ssize_t i, m = pos.shape[0]
    cdef const char *base = <const char *>&v[0] if v.shape[0] else NULL
    out = [None] * m
    for i in range(m):
        if length[i] >= 0:
            if pos[i] < 0 or pos[i] + length[i] > v.shape[0]:
                raise ValueError("slice outside the buffer")
            out[i] = base[pos[i]:pos[i] + length[i]] if length[i] else b""
    return out


def resync(data, Py_ssize_t start, bint final=True, long long max_batch_length=1 << 30):
    """The next position >= start where a plausible v2 batch begins (len(data) if none)."""
    cdef const uint8_t[::1] v = memoryview(data).cast("B")
    if start >= v.shape[0]:
        return v.shape[0]
    return kc_resync(&v[0], <size_t>v.shape[0], <size_t>start, final, max_batch_length)
