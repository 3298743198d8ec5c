# cython: language_level=3
"""Binding of the JSON-lines writer (csrc/kc_jsonl.c): rows of columns to text.

Only plumbing: Python describes the columns (NumPy arrays and buffers) and the
templates; the C side writes every line into one growing ``bytearray``.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcpy, memmove
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.dict cimport PyDict_Next
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from cpython.ref cimport PyObject
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_FromStringAndSize, PyByteArray_Resize
from kcodec._kc_status cimport KC_OK, KC_E_SHORT, status_error

import numpy as np

cdef extern from "kc_jsonl.h" nogil:
    enum:
        KC_J_I64, KC_J_I32, KC_J_I16, KC_J_I8, KC_J_STR, KC_J_RAW, KC_J_ENUM
    ctypedef struct kc_jcol:
        int type
        const void *values
        const int32_t *offsets
        int64_t data_len
        const uint8_t *valid
        int64_t bit_offset
        int64_t length
        const int64_t *take
        int64_t take_length
        const char *const *names
        const int32_t *name_lens
        int32_t n_names
    ctypedef struct kc_jop:
        int32_t col
        const char *lit
        int32_t lit_len
    ctypedef struct kc_jtemplate:
        const kc_jop *ops
        int32_t n_ops
    int kc_jsonl_write(const kc_jtemplate *templates, int32_t n_templates,
                       const kc_jcol *cols, int32_t n_cols,
                       const int64_t *rows, const int32_t *row_tpl, int64_t n_row_tpl,
                       int64_t n_rows, char *out, int64_t cap, int64_t *row_ends,
                       int64_t *rows_done, int64_t *out_len)

    enum:
        KC_JT_OBJ, KC_JT_END_OBJ, KC_JT_ARR, KC_JT_END_ARR, KC_JT_KEY, KC_JT_STR, KC_JT_INT, KC_JT_RAW
    ctypedef struct kc_jtok:
        int32_t kind
        int32_t len
        const char *s
        int64_t i
    int kc_json_write(const kc_jtok *tokens, int64_t n, char *out, int64_t cap, int64_t *out_len)
    int64_t kc_json_room(const kc_jtok *tokens, int64_t n)

_NUMBER = {np.dtype(np.int64): KC_J_I64, np.dtype(np.int32): KC_J_I32,
           np.dtype(np.int16): KC_J_I16, np.dtype(np.int8): KC_J_I8}


cdef const void *_ptr(object a, list keep) except? NULL:
    """The address of a contiguous buffer (kept alive in ``keep``), NULL when empty."""
    cdef const uint8_t[::1] mv
    cdef const uint8_t *p = NULL
    mv = memoryview(a).cast("B")
    keep.append(mv)
    if mv.shape[0]:
        p = &mv[0]
    return p


cdef int64_t _len(object a):
    return memoryview(a).nbytes


cdef inline void ends_v_add(int64_t *e, int64_t n, int64_t base) noexcept nogil:
    """Each call's row ends count from where it started writing."""
    cdef int64_t k
    for k in range(n):
        e[k] += base


def _merged(list tpl):
    """Adjacent literals as one."""
    out = []
    for piece in tpl:
        if isinstance(piece, str) and out and isinstance(out[len(out) - 1], str):
            out[len(out) - 1] += piece
        else:
            out.append(piece)
    return out


def write_lines(list templates, list columns, object rows, object row_template,
                Py_ssize_t size_hint=1 << 16, bint ends=False):
    """Rows ``rows`` (indices, int64) in that order as text: row r follows
    ``templates[row_template[r]]`` (int32; negative: not printed), a list of ``str``
    literals and ``int`` column references.  A column is a dict:
    ``{"values": ndarray}`` (int64/int32/int16/int8 numbers),
    ``{"strings": (offsets int32, data, validity or None, bit_offset)}`` (JSON strings),
    ``{"raw": (offsets, data)}`` (text as it is), or ``{"codes": uint8 ndarray,
    "names": [str]}``; any may carry ``"take"`` (int64: row -> entry) and ``"valid"``
    (a validity bitmap, with ``"bit_offset"``) for nulls.  Returns the text as a
    ``memoryview`` (over a buffer of its own, ``size_hint`` bytes or more); with
    ``ends=True`` also the end of each row's text in it (int64, one per ``rows``)."""
    cdef list keep = []
    cdef int32_t nc = len(columns), nt = len(templates)
    cdef kc_jcol *cols = NULL
    cdef kc_jtemplate *tpls = NULL
    cdef kc_jop *ops = NULL
    cdef const char **names
    cdef int32_t *name_lens
    cdef Py_ssize_t n_ops
    cdef int32_t i, k, o = 0
    cdef kc_jcol *c
    cdef int rc
    cdef int64_t done = 0, wrote = 0, used = 0, step = 0, n_rows, cap
    cdef const int64_t *rp
    cdef const int32_t *tp
    cdef int64_t n_tpl
    cdef char *buf
    templates = [_merged(t) for t in templates]
    n_ops = sum(len(t) for t in templates)
    rows_a = np.ascontiguousarray(rows, np.int64)
    tpl_a = np.ascontiguousarray(row_template, np.int32)
    n_rows = len(rows_a)
    n_tpl = len(tpl_a)
    ends_a = np.zeros(len(rows_a) if ends else 0, np.int64)
    cdef int64_t[::1] ends_v = ends_a
    cdef int64_t *ep = &ends_v[0] if ends and len(rows_a) else NULL
    out = PyByteArray_FromStringAndSize(NULL, max(size_hint, 64))   # not zeroed: all written
    try:
        cols = <kc_jcol *>calloc(max(nc, 1), sizeof(kc_jcol))
        tpls = <kc_jtemplate *>calloc(max(nt, 1), sizeof(kc_jtemplate))
        ops = <kc_jop *>calloc(max(n_ops, 1), sizeof(kc_jop))
        if cols == NULL or tpls == NULL or ops == NULL:
            raise MemoryError("write_lines: out of memory")
        for i in range(nc):
            d = columns[i]
            c = &cols[i]
            if "values" in d:
                v = np.ascontiguousarray(d["values"])
                if v.dtype not in _NUMBER:
                    raise TypeError(f"write_lines: column {i}: {v.dtype} is not a signed integer type")
                c.type = _NUMBER[v.dtype]
                c.values = _ptr(v, keep)
                c.length = len(v)
            elif "strings" in d or "raw" in d:
                if "strings" in d:
                    offs, data, valid, bit_offset = d["strings"]
                    c.type = KC_J_STR
                    if valid is not None:
                        c.valid = <const uint8_t *>_ptr(valid, keep)
                        if _len(valid) * 8 < bit_offset + len(offs) - 1:
                            raise ValueError(f"write_lines: column {i}: validity bitmap too short")
                        c.bit_offset = bit_offset
                else:
                    offs, data = d["raw"]
                    c.type = KC_J_RAW
                offs = np.ascontiguousarray(offs, np.int32)
                if len(offs) == 0:
                    raise ValueError(f"write_lines: column {i}: no offsets")
                c.offsets = <const int32_t *>_ptr(offs, keep)
                c.length = len(offs) - 1
                c.values = _ptr(data, keep) if data is not None else NULL
                c.data_len = _len(data) if data is not None else 0
            elif "codes" in d:
                v = np.ascontiguousarray(d["codes"], np.uint8)
                c.type = KC_J_ENUM
                c.values = _ptr(v, keep)
                c.length = len(v)
                enc = [n.encode() for n in d["names"]]
                keep.append(enc)
                names = <const char **>calloc(max(len(enc), 1), sizeof(char *))
                name_lens = <int32_t *>calloc(max(len(enc), 1), sizeof(int32_t))
                if names == NULL or name_lens == NULL:
                    free(names)
                    free(name_lens)
                    raise MemoryError("write_lines: out of memory")
                for k in range(len(enc)):
                    names[k] = <const char *>enc[k]
                    name_lens[k] = len(enc[k])
                c.names = names
                c.name_lens = name_lens
                c.n_names = len(enc)
            else:
                raise ValueError(f"write_lines: column {i}: no values, strings, raw or codes")
            if "take" in d and d["take"] is not None:
                t = np.ascontiguousarray(d["take"], np.int64)
                c.take = <const int64_t *>_ptr(t, keep)
                c.take_length = len(t)
            if "valid" in d and d["valid"] is not None:
                c.valid = <const uint8_t *>_ptr(d["valid"], keep)
                c.bit_offset = d.get("bit_offset", 0)
                if _len(d["valid"]) * 8 < c.bit_offset + c.length:
                    raise ValueError(f"write_lines: column {i}: validity bitmap too short")
        for i in range(nt):
            tpls[i].ops = &ops[o]
            tpls[i].n_ops = len(templates[i])
            for piece in templates[i]:
                if isinstance(piece, str):
                    b = piece.encode() + bytes(16)      # KC_JSONL_PAD
                    keep.append(b)
                    ops[o].col = -1
                    ops[o].lit = <const char *>b
                    ops[o].lit_len = len(b) - 16
                else:
                    if not 0 <= piece < nc:
                        raise ValueError(f"write_lines: template {i}: no column {piece}")
                    ops[o].col = piece
                o += 1
        rp = <const int64_t *>_ptr(rows_a, keep)
        tp = <const int32_t *>_ptr(tpl_a, keep)
        while True:
            cap = len(out)
            buf = PyByteArray_AS_STRING(out)
            with nogil:
                rc = kc_jsonl_write(tpls, nt, cols, nc, rp + done, tp, n_tpl, n_rows - done,
                                    buf + used, cap - used, ep + done if ep else NULL,
                                    &step, &wrote)
            if ep:
                ends_v_add(ep + done, step, used)
            done += step
            used += wrote
            if rc == KC_OK:
                break
            if rc != KC_E_SHORT:
                raise status_error(rc, "write_lines")
            PyByteArray_Resize(out, 2 * cap)
    finally:
        if cols != NULL:
            for i in range(nc):
                free(<void *>cols[i].names)
                free(<void *>cols[i].name_lens)
        free(cols)
        free(tpls)
        free(ops)
    # not shrunk: a realloc to the used size would hand the allocator a block smaller
    # than the next call's, and each call would then map (and fault in) fresh pages
    if ends:
        return memoryview(out)[:used], ends_a
    return memoryview(out)[:used]


# --------------------------------------------------------------------------- json.dumps' text

cdef extern from "Python.h":
    bint PyUnicode_CheckExact(object o)
    bint PyLong_CheckExact(object o)
    bint PyDict_CheckExact(object o)
    bint PyList_CheckExact(object o)
    bint PyTuple_CheckExact(object o)

# deeper than this: json.dumps says what is wrong (circular references and the like)
cdef int _MAX_DEPTH = 200


cdef class _Tokens:
    """A growing array of kc_jtok; the objects whose text they point into stay in ``keep``."""
    cdef kc_jtok *t
    cdef Py_ssize_t n, cap
    cdef list keep

    def __cinit__(self):
        self.t = NULL
        self.n = self.cap = 0
        self.keep = []

    def __dealloc__(self):
        free(self.t)

    cdef kc_jtok *add(self, int32_t kind) except NULL:
        cdef kc_jtok *grown
        if self.n == self.cap:
            self.cap = max(64, 2 * self.cap)
            grown = <kc_jtok *>realloc(self.t, self.cap * sizeof(kc_jtok))
            if grown == NULL:
                raise MemoryError("json_texts: out of memory")
            self.t = grown
        self.t[self.n].kind = kind
        self.t[self.n].len = 0
        self.t[self.n].s = NULL
        self.t[self.n].i = 0
        self.n += 1
        return &self.t[self.n - 1]

    cdef int text(self, int32_t kind, object s) except -1:
        """A str's UTF-8 (0: it has none, e.g. a lone surrogate)."""
        cdef Py_ssize_t size
        cdef const char *u
        try:
            u = PyUnicode_AsUTF8AndSize(s, &size)
        except UnicodeError:
            return 0
        if size > 0x7FFFFFFF:
            return 0
        cdef kc_jtok *tok = self.add(kind)
        tok.s = u
        tok.len = <int32_t>size
        return 1

    cdef int raw(self, bytes b) except -1:
        self.keep.append(b)
        cdef kc_jtok *tok = self.add(KC_JT_RAW)
        tok.s = <const char *>b
        tok.len = <int32_t>len(b)
        return 1

    cdef int value(self, object o, int depth) except -1:
        """Tokens of ``o`` as json.dumps writes it; 0 when ``o`` holds anything but exact
        dicts with str keys, lists, tuples, str, int, bool and None (json.dumps decides)."""
        cdef int overflow = 0
        cdef long long v
        cdef Py_ssize_t pos = 0
        cdef PyObject *k
        cdef PyObject *item
        if depth > _MAX_DEPTH:
            return 0
        if o is None:
            return self.raw(b"null")
        if o is True:
            return self.raw(b"true")
        if o is False:
            return self.raw(b"false")
        if PyUnicode_CheckExact(o):
            return self.text(KC_JT_STR, o)
        if PyLong_CheckExact(o):
            v = PyLong_AsLongLongAndOverflow(o, &overflow)
            if overflow:
                return self.raw(repr(o).encode())
            self.add(KC_JT_INT).i = v
            return 1
        if PyDict_CheckExact(o):
            self.add(KC_JT_OBJ)
            while PyDict_Next(o, &pos, &k, &item):
                if not PyUnicode_CheckExact(<object>k):
                    return 0
                if not self.text(KC_JT_KEY, <object>k) or not self.value(<object>item, depth + 1):
                    return 0
            self.add(KC_JT_END_OBJ)
            return 1
        if PyList_CheckExact(o) or PyTuple_CheckExact(o):
            self.add(KC_JT_ARR)
            for x in o:
                if not self.value(x, depth + 1):
                    return 0
            self.add(KC_JT_END_ARR)
            return 1
        return 0


cdef class JsonTexts:
    """Objects' ``json.dumps(obj, ensure_ascii=False)`` texts (the same bytes, UTF-8), each
    less its first ``skip`` bytes and followed by ``end``, one after another in one
    buffer, as write_lines' ``"raw"`` columns take them.  Exact dicts (str keys), lists,
    tuples, str, int, bool and None are written by csrc/kc_jsonl.c; any other object by
    json.dumps itself.  Objects are written as they are added, so none need stay alive."""
    cdef Py_ssize_t skip
    cdef bytes end
    cdef object out
    cdef int64_t used
    cdef list ends

    def __init__(self, Py_ssize_t skip=0, str end=""):
        self.skip = skip
        self.end = end.encode()
        self.out = PyByteArray_FromStringAndSize(NULL, 1024)
        self.used = 0
        self.ends = []

    def __len__(self):
        return len(self.ends)

    def add(self, object obj):
        """Write ``obj``'s text; returns its index."""
        cdef int64_t wrote = 0, room, cap
        cdef int rc
        cdef Py_ssize_t m, ne = len(self.end)
        cdef char *buf
        cdef _Tokens toks = _Tokens()
        text = None
        if toks.value(obj, 0):
            room = kc_json_room(toks.t, toks.n)
            if room < 0:
                raise ValueError("JsonTexts: bad token")
        else:
            import json
            text = json.dumps(obj, ensure_ascii=False).encode()
            room = len(text)
        cap = len(self.out)
        if self.used + room + ne > cap:
            PyByteArray_Resize(self.out, max(2 * cap, self.used + room + ne))
        buf = PyByteArray_AS_STRING(self.out) + self.used
        if text is None:
            with nogil:
                rc = kc_json_write(toks.t, toks.n, buf, room, &wrote)
            if rc != KC_OK:
                raise status_error(rc, "JsonTexts")
        else:
            wrote = len(text)
            memcpy(buf, <const char *>text, wrote)
        m = min(self.skip, wrote)
        if m:
            memmove(buf, buf + m, wrote - m)
        if ne:
            memcpy(buf + wrote - m, <const char *>self.end, ne)
        self.used += wrote - m + ne
        self.ends.append(self.used)
        return len(self.ends) - 1

    def column(self):
        """``(offsets, data)``: ``offsets`` (int32, one more than the texts) delimit each
        text in ``data``; None past int32 offsets."""
        if self.used > 0x7FFFFFFF:
            return None
        offs = np.zeros(len(self.ends) + 1, np.int32)
        offs[1:] = self.ends
        return offs, memoryview(self.out)[:self.used]


# --------------------------------------------------------------------------- Kafka's JSON (tapes)

cdef extern from "kc_engine.h" nogil:
    int kc_program_check(const int32_t *code, size_t code_len)
    int kc_decode(const int32_t *code, const uint8_t *buf, size_t len, size_t pos,
                  int64_t *tape, size_t cap, size_t *end, size_t *n_slots, void *err)

from kcodec._kc_tjson cimport KC_TJ_COMPACT, kc_tj_msg, kc_tjson_check, kc_tjson_write



cdef class KafkaJson:
    """One program's Kafka JSON writer (csrc/kc_tjson.c in Jackson's compact style):
    ``code`` (the program's int32 words), ``plan`` (int32 words) and ``blob`` (bytes) from
    :func:`kcodec.kraft.dump.kjson_plan`."""
    cdef readonly object code, plan, blob

    def __init__(self, object code, object plan, bytes blob):
        self.code = np.ascontiguousarray(np.frombuffer(code, np.int32) if not isinstance(code, np.ndarray) else code, np.int32)
        self.plan = np.ascontiguousarray(plan, np.int32)
        self.blob = blob
        cdef const int32_t[::1] c = self.code
        cdef const int32_t[::1] p = self.plan
        if len(self.code) < 3 or kc_program_check(&c[0], len(self.code)) != KC_OK:
            raise ValueError("KafkaJson: not a valid program")
        if len(self.plan) < 2 or kc_tjson_check(&c[0], &p[0], len(self.plan), len(blob), 0) != KC_OK:
            raise ValueError("KafkaJson: the plan does not fit the program")

    def dumps(self, object data, Py_ssize_t pos=0):
        """Kafka's compact JSON text (bytes) of the message at ``data[pos:]`` (all of it)."""
        cdef const uint8_t[::1] d = memoryview(data).cast("B")
        cdef const int32_t[::1] c = self.code
        cdef const int32_t[::1] p = self.plan
        cdef kc_tj_msg m
        cdef size_t n = d.shape[0], stop = 0, used = 0, wrote = 0, cap
        cdef int rc
        if pos < 0 or <size_t>pos > n:
            raise ValueError("KafkaJson.dumps: pos outside the data")
        tape = np.empty(n - pos + 2, np.int64)
        cdef int64_t[::1] t = tape
        cdef const uint8_t *dp = &d[0] if n else <const uint8_t *>b""
        rc = kc_decode(&c[0], dp, n, pos, &t[0], n - pos + 2, &stop, &used, NULL)
        if rc != KC_OK:
            raise status_error(rc, "KafkaJson.dumps")
        if stop != n:
            raise ValueError(f"KafkaJson.dumps: {n - stop} bytes after the message")
        m.code, m.plan, m.blob = &c[0], &p[0], <const char *>self.blob
        m.embeds, m.n_embeds, m.flat = NULL, 0, NULL
        cap = 64 + 8 * n
        while True:
            out = PyByteArray_FromStringAndSize(NULL, cap)
            rc = kc_tjson_write(&m, KC_TJ_COMPACT, 0, dp, n, &t[0], used, NULL, 0,
                                PyByteArray_AS_STRING(out), cap, &wrote)
            if rc != KC_E_SHORT:
                break
            cap *= 2
        if rc != KC_OK:
            raise status_error(rc, "KafkaJson.dumps")
        return bytes(out[:wrote])
