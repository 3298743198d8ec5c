# cython: language_level=3
"""``kcodec kraft dump``'s fast path: scanner (csrc/kc_batch.c) and line writer
(csrc/kc_kjson.c, the records' JSON by csrc/kc_tjson.c) on one window of a metadata log, with no NumPy.

The command is often run once on one log: starting it must not cost more than the
dump.  This binding keeps the scanner's arrays in C memory and hands Python only
what the reference path needs when a batch or record is not the writer's (a control
batch, a record with headers, an unknown record type); a window with any batch that
is not clean (compressed, corrupt, cut by the end of the log) is not written here at
all, and :mod:`kcodec.kraft.dump` reads it the general way.
"""
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc, calloc
from cpython.bytearray cimport PyByteArray_AS_STRING
from kcodec._kc_status cimport KC_OK, status_error

cdef extern from "kc_batch.h" nogil:
    ctypedef struct kc_batch:
        int64_t position
        int64_t next_position
        int32_t batch_length
        int32_t records_parsed
        int8_t crc_ok
        int8_t status
    ctypedef struct kc_record:
        pass
    size_t kc_scan(const uint8_t *buf, size_t len, int verify_crc, int final,
                   int64_t max_batch_length,
                   kc_batch *batches, size_t max_batches, size_t *n_batches,
                   kc_record *recs, size_t max_recs, size_t *n_recs)

cdef extern from "kc_engine.h" nogil:
    int kc_program_check(const int32_t *code, size_t code_len)

from kcodec._kc_tjson cimport (kc_tjson_check, kc_kdump_type, kc_kdump_state, KC_KD_DONE, KC_KD_FULL,
                               KC_KD_BATCH, KC_KD_RECORD, kc_kdump_lines)

DONE, FULL, BATCH, RECORD = KC_KD_DONE, KC_KD_FULL, KC_KD_BATCH, KC_KD_RECORD

# the scanner's smallest entries (see kcodec.log._records): room for every batch and
# record a window can hold, so a scan never stops for want of rows
cdef size_t _MIN_ENTRY = 26
cdef size_t _MIN_RECORD = 7


cdef class Types:
    """The (metadata record type, version) table the writer prints from:
    ``{(api key, version): (code, plan, blob, head)}``: the program's and the JSON plan's
    int32 words (native byte order, any buffer), the plan's blob and the text before the
    data (``kcodec.kraft.dump.kjson_plan``); every pair is checked here."""
    cdef kc_kdump_type *t
    cdef readonly int32_t n_keys, n_versions
    cdef list keep

    def __cinit__(self):
        self.t = NULL

    def __dealloc__(self):
        free(self.t)

    def __init__(self, dict entries):
        cdef const int32_t[::1] c
        cdef const int32_t[::1] p
        cdef kc_kdump_type *e
        self.keep = []
        self.n_keys = max([k for k, _ in entries] + [-1]) + 1
        self.n_versions = max([v for _, v in entries] + [-1]) + 1
        self.t = <kc_kdump_type *>calloc(max(self.n_keys * self.n_versions, 1), sizeof(kc_kdump_type))
        if self.t == NULL:
            raise MemoryError("Types: out of memory")
        for (key, ver), (code, plan, blob, head) in entries.items():
            if key < 0 or ver < 0:
                raise ValueError("Types: negative api key or version")
            c = memoryview(code).cast("B").cast("i")
            p = memoryview(plan).cast("B").cast("i")
            blob = bytes(blob)
            head = bytes(head)
            if c.shape[0] < 3 or kc_program_check(&c[0], c.shape[0]) != KC_OK:
                raise ValueError(f"Types: ({key}, {ver}): not a valid program")
            if p.shape[0] < 2 or kc_tjson_check(&c[0], &p[0], p.shape[0], len(blob), 0) != KC_OK:
                raise ValueError(f"Types: ({key}, {ver}): the plan does not fit the program")
            self.keep += [c, p, blob, head]
            e = &self.t[key * self.n_versions + ver]
            e.code = &c[0]
            e.plan = &p[0]
            e.blob = <const char *>blob
            e.head = <const char *>head
            e.head_len = len(head)


cdef class Dumper:
    """One window at a time: :meth:`scan` it, then :meth:`lines` until DONE."""
    cdef Types types
    cdef kc_batch *b
    cdef kc_record *r
    cdef size_t cap_b, cap_r, n_b, n_r
    cdef kc_kdump_state st
    cdef readonly bint verify_crc
    cdef readonly int64_t max_batch_length

    def __cinit__(self):
        self.b = NULL
        self.r = NULL

    def __dealloc__(self):
        free(self.b)
        free(self.r)

    def __init__(self, Types types, bint verify_crc=True, int64_t max_batch_length=1 << 30):
        self.types = types
        self.verify_crc = verify_crc
        self.max_batch_length = max_batch_length
        self.cap_b = self.cap_r = self.n_b = self.n_r = 0

    def scan(self, object window, bint final):
        """Scan ``window`` (the log from position ``base``, see :meth:`start`); returns
        the bytes consumed (whole batches), or -1 when a batch in it is not clean
        (status other than OK, or a CRC mismatch): that window is not this path's."""
        cdef const uint8_t[::1] v = memoryview(window).cast("B")
        cdef size_t n = <size_t>v.shape[0], consumed, k
        cdef size_t want_b = n // _MIN_ENTRY + 8, want_r = n // _MIN_RECORD + 8
        self.n_b = self.n_r = 0
        if n == 0:
            return 0
        if want_b > self.cap_b:          # (malloc: pages never touched are never mapped)
            free(self.b)
            self.b = <kc_batch *>malloc(want_b * sizeof(kc_batch))
            self.cap_b = want_b if self.b != NULL else 0
        if want_r > self.cap_r:
            free(self.r)
            self.r = <kc_record *>malloc(want_r * sizeof(kc_record))
            self.cap_r = want_r if self.r != NULL else 0
        if self.b == NULL or self.r == NULL:
            raise MemoryError("Dumper.scan: out of memory")
        with nogil:
            consumed = kc_scan(&v[0], n, self.verify_crc, final, self.max_batch_length,
                               self.b, self.cap_b, &self.n_b, self.r, self.cap_r, &self.n_r)
        for k in range(self.n_b):
            if self.b[k].status != KC_OK or not self.b[k].crc_ok:
                self.n_b = self.n_r = 0
                return -1
        return consumed

    def start(self, int64_t position):
        """Write the scanned window's lines from its first batch, which Kafka's tool shows
        at ``position`` (the bytes of the batches before it)."""
        self.st.batch = 0
        self.st.record = -1
        self.st.position = position

    def lines(self, object window, bytearray out):
        """Write lines into ``out``; returns ``(code, bytes written)``: DONE (the window is
        written), FULL (write ``out`` out and call again), BATCH or RECORD (see
        :meth:`pending`; then :meth:`skip`)."""
        cdef const uint8_t[::1] v = memoryview(window).cast("B")
        cdef size_t wrote = 0
        cdef int rc
        cdef char *op = PyByteArray_AS_STRING(out)
        cdef size_t cap = len(out)
        cdef const uint8_t *dp = &v[0] if v.shape[0] else <const uint8_t *>b""
        with nogil:
            rc = kc_kdump_lines(self.types.t, self.types.n_keys, self.types.n_versions,
                                dp, v.shape[0], self.b, self.n_b, self.r, self.n_r,
                                &self.st, op, cap, &wrote)
        if rc < 0 or rc > KC_KD_RECORD:
            raise status_error(rc, "Dumper.lines")
        return rc, wrote

    def pending(self):
        """What the writer handed back: ``(window position of the batch, its size,
        record index or -1 for the whole batch, the position Kafka's tool shows)``."""
        cdef kc_batch *b = &self.b[self.st.batch]
        return b.position, <int64_t>b.batch_length + 12, self.st.record, self.st.position

    def skip(self):
        """Go past what :meth:`pending` named (written by the caller)."""
        if self.st.record >= 0:
            self.st.record += 1
            return
        self.st.position += <int64_t>self.b[self.st.batch].batch_length + 12
        self.st.batch += 1
        self.st.record = -1


def dump_lines(Types types, object data, object batches, object records, int64_t[::1] state,
               bytearray out):
    """The general path's writer (kcodec.kraft.dump on kcodec.log's chunks): lines of a
    window into ``out`` from where ``state`` (int64: batch, record or -1, position)
    stands; returns ``(code, bytes written)`` as :meth:`Dumper.lines`.  ``batches`` /
    ``records``: the scanner's arrays (BATCH_DTYPE, RECORD_DTYPE) over ``data``."""
    cdef const uint8_t[::1] d = memoryview(data).cast("B")
    cdef const uint8_t[::1] b = memoryview(batches).cast("B")
    cdef const uint8_t[::1] r = memoryview(records).cast("B")
    cdef kc_kdump_state st
    cdef size_t wrote = 0
    cdef int rc
    if state.shape[0] != 3:
        raise ValueError("dump_lines: state takes 3 numbers")
    if <size_t>b.shape[0] != len(batches) * sizeof(kc_batch) or <size_t>r.shape[0] != len(records) * sizeof(kc_record):
        raise ValueError("dump_lines: not the scanner's arrays")
    st.batch, st.record, st.position = state[0], state[1], state[2]
    cdef const uint8_t *dp = &d[0] if d.shape[0] else <const uint8_t *>b""
    cdef const void *bp = &b[0] if b.shape[0] else NULL
    cdef const void *rp = &r[0] if r.shape[0] else NULL
    cdef int64_t nb = len(batches), nr = len(records)
    cdef char *op = PyByteArray_AS_STRING(out)
    cdef size_t cap = len(out)
    with nogil:
        rc = kc_kdump_lines(types.t, types.n_keys, types.n_versions, dp, d.shape[0],
                            bp, nb, rp, nr, &st, op, cap, &wrote)
    state[0], state[1], state[2] = st.batch, st.record, st.position
    if rc < 0 or rc > KC_KD_RECORD:
        raise status_error(rc, "dump_lines")
    return rc, wrote
