# cython: language_level=3
"""Binding of the offsets dump's line writer (csrc/kc_odump.c) and the tape JSON writer
under it (csrc/kc_tjson.c).  Only plumbing: Python compiles the programs and plans
(kcodec.offsets.dump) and keeps them alive here; C writes the lines."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc
from cpython.bytearray cimport PyByteArray_AS_STRING
from kcodec._kc_status cimport KC_OK, KC_E_SHORT, status_error
from kcodec._kc_tjson cimport (KC_TJ_PY, KC_TJ_COMPACT, KC_TJ_NOT_DIRECT, kc_tj_flat, kc_tj_embed,
                               kc_tj_msg, kc_tjson_check, kc_tjson_flat, kc_tjson_direct,
                               kc_tjson_write)

import numpy as np

cdef extern from "kc_engine.h" nogil:
    int kc_program_check(const int32_t *code, size_t code_len)
    int kc_decode(const int32_t *code, const uint8_t *buf, size_t len, size_t pos,
                  int64_t *tape, size_t cap, size_t *end, size_t *n_slots, void *err)

cdef extern from "kc_odump.h" nogil:
    ctypedef struct kc_odump_value:
        kc_tj_msg msg
        kc_tj_msg alt
        int32_t sw_field
        const char *sw_text
        int32_t sw_len
        int32_t ex_field
        const char *ex_text
        int32_t ex_len
        const char *head
        int32_t head_len
    ctypedef struct kc_odump_type:
        kc_tj_msg key
        const char *head
        int32_t head_len
        const kc_odump_value *values
        int32_t n_values
    ctypedef struct kc_odump_sel:
        int64_t first_offset
        int64_t last_offset
        const uint8_t *types
    ctypedef struct kc_odump_state:
        int64_t batch
        int64_t record
    enum:
        KC_OD_DONE, KC_OD_FULL, KC_OD_BATCH, KC_OD_RECORD
    int kc_odump_lines(const kc_odump_type *types, int32_t n_types, const kc_odump_sel *sel,
                       const char *head, int32_t head_len, int64_t base,
                       const uint8_t *data, size_t data_len,
                       const void *batches, int64_t n_batches,
                       const void *recs, int64_t n_recs,
                       kc_odump_state *st, char *out, size_t cap, size_t *out_len)

DONE, FULL, BATCH, RECORD = KC_OD_DONE, KC_OD_FULL, KC_OD_BATCH, KC_OD_RECORD


cdef class TapeJson:
    """One program's JSON writer: ``code`` (the program's int32 words), ``plan`` and
    ``blob`` from :func:`kcodec._tjson.tjson_plan`, and the embedded messages' writers
    (``embeds[i]``: a list, one per int16 version prefix, of TapeJson that embed nothing)."""
    cdef kc_tj_msg m
    cdef kc_tj_embed *emb
    cdef kc_tj_flat *fl
    cdef readonly object code, plan, blob, embeds

    def __cinit__(self):
        self.emb = NULL
        self.fl = NULL

    def __dealloc__(self):
        free(self.fl)
        if self.emb != NULL:
            for i in range(self.m.n_embeds):
                free(<void *>self.emb[i].versions)
            free(self.emb)

    def __init__(self, object code, object plan, bytes blob, list embeds=None):
        cdef TapeJson sub
        cdef kc_tj_msg *vs
        self.code = np.ascontiguousarray(np.frombuffer(code, np.int32) if not isinstance(code, np.ndarray) else code, np.int32)
        self.plan = np.ascontiguousarray(plan, np.int32)
        self.blob = blob
        self.embeds = [list(e) for e in (embeds or [])]
        cdef const int32_t[::1] c = self.code
        cdef const int32_t[::1] p = self.plan
        if len(self.code) < 3 or kc_program_check(&c[0], len(self.code)) != KC_OK:
            raise ValueError("TapeJson: not a valid program")
        if len(self.plan) < 2 or kc_tjson_check(&c[0], &p[0], len(self.plan), len(blob),
                                                len(self.embeds)) != KC_OK:
            raise ValueError("TapeJson: the plan does not fit the program")
        self.m.code = &c[0]
        self.m.plan = &p[0]
        self.m.blob = <const char *>self.blob
        self.m.n_embeds = len(self.embeds)
        self.m.embeds = NULL
        self.m.flat = NULL
        if not self.embeds:       # a flat message's writer (json.dumps' style)
            self.fl = <kc_tj_flat *>malloc(sizeof(kc_tj_flat))
            if self.fl == NULL:
                raise MemoryError("TapeJson: out of memory")
            if kc_tjson_flat(&self.m, KC_TJ_PY, self.fl) == KC_OK:
                self.m.flat = self.fl
            else:
                free(self.fl)
                self.fl = NULL
        if self.embeds:
            self.emb = <kc_tj_embed *>calloc(len(self.embeds), sizeof(kc_tj_embed))
            if self.emb == NULL:
                raise MemoryError("TapeJson: out of memory")
            for i, versions in enumerate(self.embeds):
                if not versions:
                    raise ValueError("TapeJson: an embedded message without versions")
                vs = <kc_tj_msg *>calloc(len(versions), sizeof(kc_tj_msg))
                if vs == NULL:
                    raise MemoryError("TapeJson: out of memory")
                self.emb[i].versions = vs
                self.emb[i].n_versions = len(versions)
                for j, sub in enumerate(versions):
                    if sub.m.n_embeds:
                        raise ValueError("TapeJson: an embedded message embeds another")
                    vs[j] = sub.m
            self.m.embeds = self.emb

    def dumps(self, object data, Py_ssize_t pos=0, bint compact=False):
        """The JSON text (bytes) of the message at ``data[pos:]`` (all of it)."""
        cdef const uint8_t[::1] d = memoryview(data).cast("B")
        cdef size_t n = d.shape[0], stop = 0, used = 0, wrote = 0, cap
        cdef int rc
        if pos < 0 or <size_t>pos > n:
            raise ValueError("TapeJson.dumps: pos outside the data")
        tape = np.empty(2 * (n - pos + 2), np.int64)
        cdef int64_t[::1] t = tape
        cdef const uint8_t *dp = &d[0] if n else <const uint8_t *>b""
        rc = kc_decode(self.m.code, dp, n, pos, &t[0], n - pos + 2, &stop, &used, NULL)
        if rc != KC_OK:
            raise status_error(rc, "TapeJson.dumps")
        if stop != n:
            raise ValueError(f"TapeJson.dumps: {n - stop} bytes after the message")
        cap = 64 + 8 * n
        while True:
            out = bytearray(cap)
            rc = kc_tjson_write(&self.m, KC_TJ_COMPACT if compact else KC_TJ_PY, 0, dp, n, &t[0], used,
                                &t[n - pos + 2], n - pos + 2, PyByteArray_AS_STRING(out), cap, &wrote)
            if rc != KC_E_SHORT:
                break
            cap *= 2
        if rc != KC_OK:
            raise status_error(rc, "TapeJson.dumps")
        return bytes(out[:wrote])

    @property
    def flat(self):
        """Whether the message is written straight from its bytes (json.dumps' style)."""
        return self.m.flat != NULL

    def direct(self, object data, Py_ssize_t pos=0, Py_ssize_t end=-1):
        """The flat writer's text (bytes) of the message at ``data[pos:end]`` (``end`` -1:
        all of it), written straight from the bytes, or None where it leaves the message
        to the tape (:meth:`dumps`)."""
        cdef const uint8_t[::1] d = memoryview(data).cast("B")
        cdef size_t n = d.shape[0], wrote = 0, cap
        cdef int rc
        if end < 0:
            end = n
        if pos < 0 or pos > end or <size_t>end > n:
            raise ValueError("TapeJson.direct: pos or end outside the data")
        cdef const uint8_t *dp = &d[0] if n else <const uint8_t *>b""
        cap = 64 + 8 * n
        while True:
            out = bytearray(cap)
            rc = kc_tjson_direct(&self.m, KC_TJ_PY, dp, n, pos, end, PyByteArray_AS_STRING(out), cap, &wrote)
            if rc != KC_E_SHORT:
                break
            cap *= 2
        if rc == KC_TJ_NOT_DIRECT:
            return None
        if rc != KC_OK:
            raise status_error(rc, "TapeJson.direct")
        return bytes(out[:wrote])


cdef class DumpTypes:
    """The record-type table kc_odump_lines prints from: ``{record type: (key TapeJson or
    None, head, {value version: (TapeJson, alt TapeJson or None, switch field, switch
    text, head)})}`` (see csrc/kc_odump.h); with an alt, records whose top-level field
    ``ex_field`` holds one of ``ex_text``'s strings (each a length byte, then its bytes)
    are handed back."""
    cdef kc_odump_type *t
    cdef readonly int32_t n_types
    cdef list keep

    def __cinit__(self):
        self.t = NULL
        self.n_types = 0

    def __dealloc__(self):
        if self.t != NULL:
            for i in range(self.n_types):
                free(<void *>self.t[i].values)
            free(self.t)

    def __init__(self, dict entries, int32_t ex_field=-1, bytes ex_text=b""):
        cdef TapeJson kj
        cdef kc_odump_type *e
        cdef kc_odump_value *vals
        cdef kc_odump_value *v
        self.keep = [ex_text]
        n = max([k for k in entries] + [-1]) + 1
        if min([k for k in entries] + [0]) < 0 or n > 32768:
            raise ValueError("DumpTypes: record types are 0..32767")
        self.t = <kc_odump_type *>calloc(max(n, 1), sizeof(kc_odump_type))
        if self.t == NULL:
            raise MemoryError("DumpTypes: out of memory")
        self.n_types = n
        for rtype, (key, head, versions) in entries.items():
            e = &self.t[rtype]
            padded = bytes(head) + bytes(16)          # KC_OD_PAD
            self.keep += [key, padded]
            e.head = <const char *>padded
            e.head_len = len(padded) - 16
            nv = max(list(versions) + [-1]) + 1
            vals = <kc_odump_value *>calloc(max(nv, 1), sizeof(kc_odump_value))
            if vals == NULL:
                raise MemoryError("DumpTypes: out of memory")
            e.values = vals
            e.n_values = nv
            for ver, (msg, alt, sw_field, sw_text, vhead) in versions.items():
                if ver < 0:
                    raise ValueError("DumpTypes: negative version")
                v = &vals[ver]
                vpad, sw_text = bytes(vhead) + bytes(16), bytes(sw_text)
                self.keep += [msg, alt, vpad, sw_text]
                kj = msg
                v.msg = kj.m
                if alt is not None:
                    kj = alt
                    v.alt = kj.m
                v.sw_field = sw_field
                v.sw_text = <const char *>sw_text
                v.sw_len = len(sw_text)
                if alt is not None and ex_text:
                    v.ex_field = ex_field
                    v.ex_text = <const char *>ex_text
                    v.ex_len = len(ex_text)
                v.head = <const char *>vpad
                v.head_len = len(vpad) - 16
            if key is not None:       # last: a type with a key is a type C prints
                kj = key
                e.key = kj.m


def dump_lines(DumpTypes types, object sel, bytes head, int64_t base, object data, object batches,
               object records, int64_t[::1] state, bytearray out):
    """Write offsets-dump lines of a log window into ``out`` from where ``state`` (int64:
    batch, record or -1) stands (see csrc/kc_odump.h); returns ``(code, bytes written)``.
    ``sel``: ``(first offset, last offset, type bitmap (8192 bytes) or None)``;
    ``batches``/``records``: the scanner's arrays, ``data`` the buffer they point into."""
    cdef const uint8_t[::1] d = memoryview(data).cast("B")
    cdef const uint8_t[::1] b = memoryview(batches).cast("B")
    cdef const uint8_t[::1] r = memoryview(records).cast("B")
    cdef const uint8_t[::1] bits
    cdef kc_odump_state st
    cdef kc_odump_sel s
    cdef size_t wrote = 0
    cdef int rc
    if state.shape[0] != 2:
        raise ValueError("dump_lines: state takes 2 numbers")
    if batches.dtype.itemsize != 96 or records.dtype.itemsize != 64:
        raise ValueError("dump_lines: not the scanner's arrays")
    s.first_offset, s.last_offset = sel[0], sel[1]
    s.types = NULL
    if sel[2] is not None:
        bits = sel[2]
        if bits.shape[0] != 8192:
            raise ValueError("dump_lines: the type bitmap takes 8192 bytes")
        s.types = &bits[0]
    st.batch, st.record = state[0], state[1]
    cdef const uint8_t *dp = &d[0] if d.shape[0] else <const uint8_t *>b""
    cdef const void *bp = &b[0] if b.shape[0] else NULL
    cdef const void *rp = &r[0] if r.shape[0] else NULL
    cdef int64_t nb = len(batches), nr = len(records)
    cdef char *op = PyByteArray_AS_STRING(out)
    cdef size_t cap = len(out)
    cdef const char *hp = head
    cdef int32_t hl = len(head)
    with nogil:
        rc = kc_odump_lines(types.t, types.n_types, &s, hp, hl, base, dp, d.shape[0],
                            bp, nb, rp, nr, &st, op, cap, &wrote)
    state[0], state[1] = st.batch, st.record
    if rc < 0 or rc > KC_OD_RECORD:
        raise status_error(rc, "dump_lines")
    return rc, wrote
