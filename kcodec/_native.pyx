# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Native engine: binds the C interpreter (csrc/kc_engine.c) to Python values.

Same interface and value mapping as the pure-Python reference ``kcodec._codec_py``:
``decode(prog, data, pos) -> (value, end)``, ``encode(prog, value) -> bytes`` and
``decode_bulk(prog, values) -> {field: column}``.

Decoding runs the C decoder into a TAPE (see kc_engine.h) and builds Python objects
from it; encoding flattens the value into a tape + heap here (type and range checks,
defaults, tagged-field selection) and lets C measure and write the bytes.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.buffer cimport PyBUF_SIMPLE, PyBUF_STRIDES, PyBuffer_Release, PyObject_GetBuffer
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem, PyDict_Size, PyDict_Contains
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_FromLongLong, PyLong_FromUnsignedLongLong
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc, calloc
from libc.string cimport memcpy, memset

import gc as _gc
import uuid as _uuid_mod

from ._program import _copy_default, is_default_value as _is_default_value
from ._numbers import is_bool as _is_bool, is_integral as _is_integral, is_real as _is_real
from .errors import DecodeError, EncodeError, UnsupportedVersionError
import operator as _operator
from kcodec._kc_status cimport status_error

cdef extern from "Python.h":
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void *PyUnicode_DATA(object o)
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL
    long long PyLong_AsLongLongAndOverflow(object o, int *overflow) except? -1
    double PyFloat_AsDouble(object o) except? -1.0
    bint PyLong_Check(object o)
    bint PyUnicode_Check(object o)
    bint PyBytes_Check(object o)
    bint PyByteArray_Check(object o)
    char *PyByteArray_AS_STRING(object o)
    Py_ssize_t PyByteArray_GET_SIZE(object o)

__all__ = ["decode", "encode", "decode_bulk", "decode_columns", "slice_heads", "UNKNOWN_TAGS_KEY"]

UNKNOWN_TAGS_KEY = "_unknown_tagged_fields"
cdef str _UNK = UNKNOWN_TAGS_KEY
cdef int MAX_STRING = 0x7FFF

cdef object _UUID = _uuid_mod.UUID
cdef object _UUID_NEW = _uuid_mod.UUID.__new__
cdef object _SAFE_UNKNOWN = _uuid_mod.SafeUUID.unknown
cdef object _OBJ_SETATTR = object.__setattr__
cdef object _MASK64 = (1 << 64) - 1

cdef inline uint64_t _rd64(const uint8_t *p) noexcept nogil:
    cdef uint64_t v = 0
    cdef int i
    for i in range(8):
        v = (v << 8) | p[i]
    return v

cdef inline void _wr64(uint8_t *p, uint64_t v) noexcept nogil:
    cdef int i
    for i in range(8):
        p[7 - i] = <uint8_t>(v & 0xff)
        v >>= 8


cdef inline object _mk_str(const uint8_t *p, size_t n):
    # validated UTF-8 from the C decoder; ASCII (the usual case) is copied directly
    cdef size_t i = 0
    cdef uint64_t w
    cdef uint8_t acc = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        if w & 0x8080808080808080ULL:
            return PyUnicode_DecodeUTF8(<const char *>p, n, NULL)
        i += 8
    while i < n:
        acc |= p[i]
        i += 1
    if acc & 0x80:
        return PyUnicode_DecodeUTF8(<const char *>p, n, NULL)
    s = PyUnicode_New(n, 127)
    memcpy(PyUnicode_DATA(s), p, n)
    return s


cdef extern from *:
    """
    static PyObject *kc_new_plain(PyObject *type, PyObject *args) {
        return ((PyTypeObject *)type)->tp_new((PyTypeObject *)type, args, NULL);
    }
    """
    object kc_new_plain(object type, object args)
    int PyObject_GenericSetAttr(object o, object name, object value) except -1
    object _PyLong_FromByteArray(const unsigned char *bytes, size_t n, int little_endian, int is_signed)

cdef tuple _EMPTY = ()
cdef str _S_INT = "int"
cdef str _S_IS_SAFE = "is_safe"
cdef bint _FAST_UUID = (_UUID.__new__ is object.__new__ and _UUID.__slots__ == ('int', 'is_safe', '__weakref__'))


cdef object _mk_uuid(const uint8_t *p):
    # uuid.UUID without __init__'s argument parsing: what UUID(bytes=...) stores in
    # its two slots (UUID.__setattr__ forbids assignment, so go around it as __init__ does)
    iv = _PyLong_FromByteArray(p, 16, 0, 0)
    if not _FAST_UUID:
        return _UUID(int=iv)
    u = kc_new_plain(_UUID, _EMPTY)
    PyObject_GenericSetAttr(u, _S_INT, iv)
    PyObject_GenericSetAttr(u, _S_IS_SAFE, _SAFE_UNKNOWN)
    return u


# ---------------------------------------------------------------------------------------
# per-program state

cdef class _SPlan:
    cdef const int32_t *s          # the struct block in _Plan.code
    cdef int nf, nt
    cdef bint flexible
    cdef list keys                 # regular field names, wire order
    cdef list tnames               # tagged field names, tagged-table order
    cdef list tdefaults
    cdef list tcopy                # 0 share the default, 1 fresh [], 2 _copy_default()
    cdef list fplans, tplans
    cdef object plan               # the StructPlan
    cdef object keyset


cdef class _Plan:
    cdef int32_t *code
    cdef Py_ssize_t code_len
    cdef list splans
    cdef object prog
    cdef object name
    cdef object version

    def __dealloc__(self):
        free(self.code)


cdef object _last_prog = None
cdef _Plan _last_plan = None

cdef inline _Plan _plan(object prog):
    global _last_prog, _last_plan
    if prog is _last_prog:
        return _last_plan
    P = _plan_slow(prog)
    _last_prog = prog
    _last_plan = P
    return P


cdef dict _PLANS = {}       # for Program objects without a __dict__: id -> (prog, plan)


cdef _Plan _plan_slow(object prog):
    cdef _Plan P
    d = getattr(prog, "__dict__", None)
    if d is not None:
        P = d.get("_kc_native")
        if P is not None:
            return P
    else:
        hit = _PLANS.get(id(prog))
        if hit is not None and hit[0] is prog:
            return hit[1]
    P = _Plan()
    code = prog.code
    n = len(code)
    P.code = <int32_t *>malloc(max(n, 1) * sizeof(int32_t))
    if P.code == NULL:
        raise MemoryError()
    for i in range(n):
        P.code[i] = code[i]
    P.code_len = n
    if kc_program_check(P.code, n) != KC_OK:
        raise ValueError(f"malformed program for {prog.name} v{prog.version}")
    P.prog = prog
    P.name = prog.name
    P.version = prog.version
    P.splans = []
    for sidx, sp in enumerate(prog.structs):
        S = _SPlan()
        S.s = P.code + P.code[2 + sidx]
        S.nf = len(sp.fields)
        S.nt = len(sp.tagged)
        S.flexible = sp.flexible
        S.keys = [_intern(f.name) for f in sp.fields]
        S.tnames = [_intern(f.name) for f in sp.tagged]
        S.tdefaults = [f.default for f in sp.tagged]
        S.tcopy = [1 if isinstance(f.default, list) else 2 if isinstance(f.default, dict) else 0
                   for f in sp.tagged]
        S.fplans = list(sp.fields)
        S.tplans = list(sp.tagged)
        S.plan = sp
        S.keyset = frozenset(sp.keys)
        P.splans.append(S)
    if d is not None:
        d["_kc_native"] = P
    else:
        _PLANS[id(prog)] = (prog, P)
    return P


cdef object _intern(object s):
    import sys
    return sys.intern(str(s))


# ---------------------------------------------------------------------------------------
# errors

cdef str _path_name(_Plan P, const kc_path_elem *e):
    cdef _SPlan S = <_SPlan>P.splans[e.sidx]
    if e.kind == KC_PATH_FIELD:
        return S.keys[e.value]
    return S.tnames[e.value]


cdef object _decode_error(_Plan P, kc_error *err, Py_ssize_t base):
    cdef int i
    cdef const kc_path_elem *e
    name = ""
    for i in range(err.path_len):           # innermost first
        if err.path[i].kind != KC_PATH_INDEX:
            name = _path_name(P, &err.path[i])
            break
    path = ""
    for i in range(err.path_len - 1, -1, -1):
        e = &err.path[i]
        if e.kind == KC_PATH_INDEX:
            path += f"[{e.value}]"
        else:
            path += ("." if path else "") + _path_name(P, e)
    c = err.code
    a = err.a
    b = err.b
    if c == KC_E_SHORT:
        reason = f"needs {a} bytes, {b} left"
    elif c == KC_E_VARINT_TRUNC:
        reason = "truncated varint"
    elif c == KC_E_VARINT_LONG:
        reason = "varint is too long"
    elif c == KC_E_NULL:
        reason = f"non-nullable field {name} was serialized as null"
    elif c == KC_E_STRLEN:
        reason = f"string field {name} had invalid length {a}"
    elif c == KC_E_UTF8:
        reason = f"string field {name} is not valid UTF-8"
    elif c == KC_E_ARRAY_COUNT:
        reason = f"array field {name} claims {a} elements, {b} bytes left"
    elif c == KC_E_TAG_COUNT:
        reason = f"tagged field count {a} exceeds bytes left"
    elif c == KC_E_TAG_SIZE:
        reason = f"tagged field {name} size {a} exceeds bytes left"
    elif c == KC_E_BAD_TAG:
        reason = f"tag {a} is not valid for version {P.version}"
    elif c == KC_E_TAG_SPAN:
        reason = f"tagged field {name} used {a} of its {b} bytes"
    elif c == KC_E_DEPTH:
        reason = "nesting too deep"
    elif c == KC_E_TOO_BIG:
        reason = "input larger than 4 GiB"
    elif c == KC_E_TRAILING:
        reason = f"trailing bytes after the message"
    else:
        reason = f"internal decoder error {c}"
    return DecodeError(reason, message=P.name, version=P.version, path=path,
                       offset=err.offset + base)


# ---------------------------------------------------------------------------------------
# decoding: tape -> Python objects

cdef struct Walk:
    const int64_t *tape
    size_t i
    const uint8_t *buf


cdef object _b_struct(_Plan P, int sidx, Walk *w):
    cdef _SPlan S = <_SPlan>P.splans[sidx]
    cdef const int32_t *s = S.s
    cdef const int32_t *f
    cdef int i
    cdef int64_t n, j, key, r
    cdef dict d = {}
    cdef list unknown = None
    for i in range(S.nf):
        f = s + 4 + 3 * i
        PyDict_SetItem(d, <object><PyObject *>S.keys[i], _b_value(P, w, f[0], f[1], f[2]))
    if S.flexible:
        n = w.tape[w.i]
        w.i += 1
        for j in range(n):
            key = w.tape[w.i]
            w.i += 1
            if key >= 0:
                f = s + 4 + 3 * S.nf + 4 * key
                PyDict_SetItem(d, S.tnames[key], _b_value(P, w, f[1], f[2], f[3]))
            else:
                r = w.tape[w.i]
                w.i += 1
                if unknown is None:
                    unknown = []
                unknown.append((-1 - key, PyBytes_FromStringAndSize(
                    <const char *>w.buf + KC_REF_OFF(r), KC_REF_LEN(r))))
        for i in range(S.nt):
            name = S.tnames[i]
            if not PyDict_Contains(d, name):
                c = <int>S.tcopy[i]
                dv = S.tdefaults[i]
                if c == 1:
                    dv = []
                elif c == 2:
                    dv = _copy_default(dv)
                PyDict_SetItem(d, name, dv)
        if unknown is not None:
            PyDict_SetItem(d, _UNK, unknown)
    return d


cdef object _b_value(_Plan P, Walk *w, int t, int flags, int arg):
    cdef int64_t v = w.tape[w.i]
    cdef int64_t k
    cdef double dbl
    cdef Py_ssize_t n, i
    cdef list lst
    cdef int et, esidx
    w.i += 1
    if t == KC_T_INT32 or t == KC_T_INT64 or t == KC_T_INT16 or t == KC_T_INT8 \
            or t == KC_T_UINT16 or t == KC_T_UINT32:
        return PyLong_FromLongLong(v)
    if t == KC_T_STRING:
        if v == 0:
            return None
        return _mk_str(w.buf + KC_REF_OFF(v), KC_REF_LEN(v))
    if t == KC_T_BOOL:
        return True if v else False
    if t == KC_T_STRUCT:
        if flags & KC_F_NULLABLE:
            if v == 0:
                return None
        else:
            w.i -= 1
        return _b_struct(P, arg, w)
    if t == KC_T_ARRAY:
        if v < 0:
            return None
        n = <Py_ssize_t>v
        lst = PyList_New(n)
        et = arg & 0xff
        esidx = arg >> 8
        if et <= KC_T_INT64 and et != KC_T_BOOL:
            for i in range(n):
                o = PyLong_FromLongLong(w.tape[w.i + i])
                Py_INCREF(o)
                PyList_SET_ITEM(lst, i, o)
            w.i += n
            return lst
        for i in range(n):
            o = _b_value(P, w, et, flags & KC_F_COMPACT, esidx)
            Py_INCREF(o)
            PyList_SET_ITEM(lst, i, o)
        return lst
    if t == KC_T_BYTES or t == KC_T_RECORDS:
        if v == 0:
            return None
        return PyBytes_FromStringAndSize(<const char *>w.buf + KC_REF_OFF(v), KC_REF_LEN(v))
    if t == KC_T_FLOAT64:
        memcpy(&dbl, &v, 8)
        return dbl
    if t == KC_T_UUID:
        return _mk_uuid(w.buf + KC_REF_OFF(v))
    raise ValueError(f"bad program type {t}")


# one reusable scratch tape for the common case (the GIL serialises calls; a call that
# re-enters while it is in use gets its own)
cdef int64_t *_scratch = NULL
cdef size_t _scratch_cap = 0
cdef bint _scratch_busy = False


def decode(prog, data, Py_ssize_t pos=0):
    """Decode one message of ``prog`` starting at ``pos``; returns ``(value, end)``."""
    global _scratch, _scratch_cap, _scratch_busy
    cdef _Plan P = _plan(prog)
    cdef Py_buffer view
    cdef const uint8_t *buf
    cdef size_t n, need, end = 0, nslots = 0, cap
    cdef int64_t *tape
    cdef bint own = False, have_view = False
    cdef int rc
    cdef Walk w
    cdef kc_error err
    if type(data) is bytes:
        buf = <const uint8_t *>PyBytes_AS_STRING(data)
        n = <size_t>PyBytes_GET_SIZE(data)
    else:
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        have_view = True
        buf = <const uint8_t *>view.buf
        n = <size_t>view.len
    try:
        if pos < 0 or <size_t>pos > n:
            raise DecodeError(f"start position {pos} outside the {n}-byte input",
                              message=P.name, version=P.version, offset=pos)
        need = n - <size_t>pos + 2
        if _scratch_busy:
            own = True
            cap = need if need < 4096 else 4096
            tape = <int64_t *>malloc(cap * sizeof(int64_t))
            if tape == NULL:
                raise MemoryError()
        else:
            if _scratch == NULL:
                _scratch = <int64_t *>malloc(4096 * sizeof(int64_t))
                if _scratch == NULL:
                    raise MemoryError()
                _scratch_cap = 4096
            tape = _scratch
            cap = _scratch_cap
            _scratch_busy = True
        try:
            rc = kc_decode(P.code, buf, n, <size_t>pos, tape, cap, &end, &nslots, &err)
            if rc == KC_E_TAPE_FULL:
                # the bound: one slot per input byte plus two
                tape = <int64_t *>realloc(tape, need * sizeof(int64_t))
                if tape == NULL:
                    if not own:
                        _scratch = NULL
                        _scratch_cap = 0
                    raise MemoryError()
                if not own:
                    _scratch = tape
                    _scratch_cap = need
                rc = kc_decode(P.code, buf, n, <size_t>pos, tape, need, &end, &nslots, &err)
            if rc != KC_OK:
                raise _decode_error(P, &err, 0)
            w.tape = tape
            w.i = 0
            w.buf = buf
            value = _b_struct(P, 0, &w)
        finally:
            if own:
                free(tape)
            else:
                _scratch_busy = False
                if _scratch_cap > 65536:        # don't keep a huge tape around
                    free(_scratch)
                    _scratch = NULL
                    _scratch_cap = 0
    finally:
        if have_view:
            PyBuffer_Release(&view)
    return value, end


# ---------------------------------------------------------------------------------------
# encoding: Python value -> tape + heap

cdef int _MAXP = 256

cdef class _Enc:
    cdef int64_t *tape
    cdef size_t n, cap
    cdef uint8_t *heap
    cdef size_t hn, hcap
    cdef uint32_t *aux
    cdef size_t auxcap
    cdef kc_path_elem path[256]
    cdef int plen
    cdef _Plan P

    def __cinit__(self):
        self.cap = 256
        self.tape = <int64_t *>malloc(self.cap * sizeof(int64_t))
        self.hcap = 1024
        self.heap = <uint8_t *>malloc(self.hcap)
        self.auxcap = 0
        self.aux = NULL
        if self.tape == NULL or self.heap == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.tape)
        free(self.heap)
        free(self.aux)

    cdef int shrink(self) except -1:
        if self.cap > 65536:
            self.cap = 256
            self.tape = <int64_t *>realloc(self.tape, self.cap * sizeof(int64_t))
        if self.hcap > 1 << 20:
            self.hcap = 1024
            self.heap = <uint8_t *>realloc(self.heap, self.hcap)
        if self.auxcap > 65536:
            free(self.aux)
            self.aux = NULL
            self.auxcap = 0
        if self.tape == NULL or self.heap == NULL:
            raise MemoryError()
        return 0

    cdef inline int push(self, int64_t v) except -1:
        cdef int64_t *t
        if self.n == self.cap:
            t = <int64_t *>realloc(self.tape, 2 * self.cap * sizeof(int64_t))
            if t == NULL:
                raise MemoryError()
            self.tape = t
            self.cap *= 2
        self.tape[self.n] = v
        self.n += 1
        return 0

    cdef int64_t put(self, const void *p, size_t n) except -1:
        """Copy n bytes into the heap; returns their REF."""
        cdef size_t nc
        cdef uint8_t *h
        cdef size_t off = self.hn
        if self.hcap - self.hn < n:
            nc = self.hcap * 2
            while nc - self.hn < n:
                nc *= 2
            h = <uint8_t *>realloc(self.heap, nc)
            if h == NULL:
                raise MemoryError()
            self.heap = h
            self.hcap = nc
        if n:
            memcpy(self.heap + off, p, n)
        self.hn += n
        if self.hn > 0xfffffffe:
            self.fail("value larger than 4 GiB")
        return KC_REF(off, n)

    cdef inline void enter(self, int kind, int sidx, int64_t value) noexcept:
        if self.plen < _MAXP:
            self.path[self.plen].kind = kind
            self.path[self.plen].sidx = sidx
            self.path[self.plen].value = value
        self.plen += 1

    cdef str render(self, object extra=None):
        cdef int i
        s = ""
        for i in range(min(self.plen, _MAXP)):
            e = &self.path[i]
            if e.kind == KC_PATH_INDEX:
                s += f"[{e.value}]"
            else:
                s += ("." if s else "") + _path_name(self.P, e)
        if extra is not None:
            if isinstance(extra, int):
                s += f"[{extra}]"
            else:
                s += ("." if s else "") + extra
        return s

    cdef int fail(self, str reason, object cls=EncodeError, object extra=None) except -1:
        raise cls(reason, message=self.P.name, version=self.P.version, path=self.render(extra))


cdef str _typename(object v):
    return type(v).__name__


cdef object _as_int(_Enc E, object v):
    """An integer-like value that is not a Python int (NumPy integers) as an int."""
    if not _is_integral(v):
        E.fail(f"expected an integer, got {_typename(v)}")
    return _operator.index(v)


cdef int _e_value(_Enc E, int t, int flags, int arg, object v, bint in_tag, int depth) except -1:
    cdef int ovf = 0
    cdef long long x
    cdef double dbl
    cdef int64_t bits
    cdef Py_ssize_t n, i
    cdef const char *p = NULL
    cdef uint8_t ub[16]
    cdef int et, esidx
    if t == KC_T_INT32 or t == KC_T_INT64 or t == KC_T_INT16 or t == KC_T_INT8 \
            or t == KC_T_UINT16 or t == KC_T_UINT32:
        if type(v) is bool or not PyLong_Check(v):
            v = _as_int(E, v)      # NumPy integers (decode_bulk's columns) are integers too
        x = PyLong_AsLongLongAndOverflow(v, &ovf)
        if t == KC_T_INT32:
            if ovf or x < -2147483648 or x > 2147483647:
                E.fail(f"{v} is out of range [{-(1 << 31)}, {(1 << 31) - 1}]")
        elif t == KC_T_INT64:
            if ovf:
                E.fail(f"{v} is out of range [{-(1 << 63)}, {(1 << 63) - 1}]")
        elif t == KC_T_INT16:
            if ovf or x < -32768 or x > 32767:
                E.fail(f"{v} is out of range [{-(1 << 15)}, {(1 << 15) - 1}]")
        elif t == KC_T_INT8:
            if ovf or x < -128 or x > 127:
                E.fail(f"{v} is out of range [-128, 127]")
        elif t == KC_T_UINT16:
            if ovf or x < 0 or x > 65535:
                E.fail(f"{v} is out of range [0, 65535]")
        else:
            if ovf or x < 0 or x > 4294967295:
                E.fail(f"{v} is out of range [0, 4294967295]")
        return E.push(x)
    if t == KC_T_BOOL:
        if v is True:
            return E.push(1)
        if v is False:
            return E.push(0)
        if _is_bool(v):                      # numpy.bool_
            return E.push(1 if v else 0)
        E.fail(f"expected a bool, got {_typename(v)}")
    if t == KC_T_FLOAT64:
        if not _is_real(v):
            E.fail(f"expected a float, got {_typename(v)}")
        dbl = float(v)
        memcpy(&bits, &dbl, 8)
        return E.push(bits)
    if t == KC_T_UUID:
        if isinstance(v, _UUID):
            iv = v.int
            _wr64(ub, <uint64_t>(iv >> 64))
            _wr64(ub + 8, <uint64_t>(iv & _MASK64))
            return E.push(E.put(ub, 16))
        if PyBytes_Check(v) and PyBytes_GET_SIZE(v) == 16:
            return E.push(E.put(PyBytes_AS_STRING(v), 16))
        if PyByteArray_Check(v) and PyByteArray_GET_SIZE(v) == 16:
            return E.push(E.put(PyByteArray_AS_STRING(v), 16))
        E.fail(f"expected a uuid.UUID, got {_typename(v)}")
    if v is None:
        if not flags & KC_F_NULLABLE:
            E.fail("null is not allowed for this field at this version")
        return E.push(-1 if t == KC_T_ARRAY else 0)
    if t == KC_T_STRING:
        if not PyUnicode_Check(v):
            E.fail(f"expected a str, got {_typename(v)}")
        try:
            p = PyUnicode_AsUTF8AndSize(v, &n)
        except UnicodeEncodeError:
            E.fail("string is not encodable as UTF-8 (lone surrogate)")
        if n > MAX_STRING:
            E.fail(f"string is {n} bytes, more than Kafka's limit {MAX_STRING}")
        return E.push(E.put(p, n))
    if t == KC_T_STRUCT:
        if not isinstance(v, dict):
            E.fail(f"expected a dict, got {_typename(v)}")
        if flags & KC_F_NULLABLE:
            E.push(1)
        return _e_struct(E, arg, <dict>v, depth + 1)
    if t == KC_T_ARRAY:
        if not isinstance(v, (list, tuple)):
            E.fail(f"expected a list, got {_typename(v)}")
        n = len(v)
        E.push(n)
        et = arg & 0xff
        esidx = arg >> 8
        E.enter(KC_PATH_INDEX, 0, 0)
        for i in range(n):
            item = v[i]
            E.path[E.plen - 1].value = i
            if item is None:
                E.fail("array elements cannot be null")
            _e_value(E, et, flags & KC_F_COMPACT, esidx, item, False, depth)
        E.plen -= 1
        return 0
    if t == KC_T_BYTES or t == KC_T_RECORDS:
        if PyBytes_Check(v):
            return E.push(E.put(PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v)))
        if PyByteArray_Check(v):
            return E.push(E.put(PyByteArray_AS_STRING(v), PyByteArray_GET_SIZE(v)))
        if isinstance(v, memoryview):
            raw = bytes(v)
            return E.push(E.put(PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw)))
        E.fail(f"expected bytes, got {_typename(v)}")
    E.fail(f"bad program: type {t}")


cdef bint _is_default(object d, object v) except -1:
    if type(v) is type(d):          # the common case, without a call
        return bool(v == d)
    return _is_default_value(d, v)


cdef bint _is_absent_default(object fs, object v, object version) except -1:
    d = fs.default_value(version)
    if isinstance(d, bool) or isinstance(v, bool):
        return type(d) is type(v) and d == v
    return bool(v == d)


cdef int _check_keys(_Enc E, _SPlan S, dict value) except -1:
    """Reject keys that are not fields of this version (as the reference does first)."""
    known = S.keyset
    for key in value:
        if key not in known and key != _UNK:
            absent = None
            for f in S.plan.absent:
                if f.json_name == key:
                    absent = f
                    break
            if absent is None:
                E.fail(f"{S.plan.name} has no field {key!r}", EncodeError, key)
            if not absent.ignorable and not _is_absent_default(absent, value[key], E.P.version):
                E.fail(f"attempted to write a non-default {absent.name} at version {E.P.version}",
                       UnsupportedVersionError, key)
    return 0


cdef int _e_struct(_Enc E, int sidx, dict value, int depth) except -1:
    cdef _SPlan S
    cdef const int32_t *s
    cdef const int32_t *f
    cdef int i, k, plen0 = E.plen
    cdef Py_ssize_t found = 0, cnt = 0
    cdef PyObject *item
    cdef size_t count_at, sec_start, seg
    if depth > KC_MAX_DEPTH:
        E.fail("nesting too deep")
    S = <_SPlan>E.P.splans[sidx]
    s = S.s
    try:
        for i in range(S.nf):
            f = s + 4 + 3 * i
            E.enter(KC_PATH_FIELD, sidx, i)
            item = PyDict_GetItem(value, S.keys[i])
            if item == NULL:
                _e_value(E, f[0], f[1], f[2], S.fplans[i].default, False, depth)
            else:
                found += 1
                _e_value(E, f[0], f[1], f[2], <object>item, False, depth)
            E.plen -= 1
        for i in range(S.nt):
            if PyDict_Contains(value, S.tnames[i]):
                found += 1
    except BaseException:
        E.plen = plen0
        _check_keys(E, S, value)
        raise
    has_unk = PyDict_Contains(value, _UNK)
    if found + has_unk != PyDict_Size(value):
        _check_keys(E, S, value)
    raw = value.get(_UNK) or [] if has_unk else []
    if not S.flexible:
        if raw:
            E.fail(f"tagged fields were set, but version {E.P.version} of {S.plan.name} does not support them",
                   UnsupportedVersionError)
        return 0
    count_at = E.n
    E.push(0)
    sec_start = E.n
    segs = None
    for k in range(S.nt):
        item = PyDict_GetItem(value, S.tnames[k])
        if item == NULL:
            continue
        if _is_default(S.tdefaults[k], <object>item):
            continue
        f = s + 4 + 3 * S.nf + 4 * k
        seg = E.n
        E.push(k)
        E.enter(KC_PATH_TAGGED, sidx, k)
        _e_value(E, f[1], f[2], f[3], <object>item, True, depth)
        E.plen -= 1
        if raw:
            if segs is None:
                segs = []
            segs.append((f[0], seg, E.n))
        cnt += 1
    if raw:
        entries = []
        last = -1
        for it in raw:
            try:
                tag, payload = it
            except (TypeError, ValueError):
                E.fail("unknown tagged fields must be (tag, bytes) pairs", EncodeError, _UNK)
            if not isinstance(tag, int) or isinstance(tag, bool) or not 0 <= tag <= 0xFFFFFFFF \
                    or not isinstance(payload, (bytes, bytearray, memoryview)):
                E.fail("unknown tagged fields must be (tag, bytes) pairs with 0 <= tag < 2**32",
                       EncodeError, _UNK)
            if tag <= last:
                E.fail(f"unknown tagged fields must be in ascending tag order ({tag} after {last})",
                       EncodeError, _UNK)
            reserved = S.plan.reserved_tag(tag)
            if reserved:
                E.fail(reserved, EncodeError, _UNK)
            last = tag
            entries.append((tag, bytes(payload)))
        _merge_raw(E, sec_start, segs, entries)
        cnt += len(entries)
    E.tape[count_at] = cnt
    return 0


cdef int _merge_raw(_Enc E, size_t sec_start, list segs, list entries) except -1:
    """Rewrite the tagged section so that raw entries sit in ascending tag order, after a
    known field with the same tag (Kafka's writer)."""
    cdef size_t nknown = E.n - sec_start
    cdef int64_t *tmp = NULL
    cdef size_t a, b
    cdef Py_ssize_t si = 0, nsegs = 0
    if segs is not None:
        nsegs = len(segs)
    if nknown:
        tmp = <int64_t *>malloc(nknown * sizeof(int64_t))
        if tmp == NULL:
            raise MemoryError()
        memcpy(tmp, E.tape + sec_start, nknown * sizeof(int64_t))
    E.n = sec_start
    try:
        for tag, payload in entries:
            while si < nsegs and segs[si][0] <= tag:
                a = segs[si][1] - sec_start
                b = segs[si][2] - sec_start
                for j in range(a, b):
                    E.push(tmp[j])
                si += 1
            E.push(-1 - <int64_t>tag)
            E.push(E.put(PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload)))
        while si < nsegs:
            a = segs[si][1] - sec_start
            b = segs[si][2] - sec_start
            for j in range(a, b):
                E.push(tmp[j])
            si += 1
    finally:
        free(tmp)
    return 0


cdef _Enc _enc_scratch = None
cdef bint _enc_busy = False


def encode(prog, value):
    """Encode ``value`` (a dict, as ``decode`` returns) as ``prog``'s message and version."""
    global _enc_scratch, _enc_busy
    cdef _Plan P = _plan(prog)
    cdef _Enc E
    cdef bint own
    cdef size_t size = 0
    cdef uint32_t *aux
    cdef int rc
    cdef kc_error err
    if _enc_busy or _enc_scratch is None:
        own = _enc_busy
        E = _Enc()
        if not own:
            _enc_scratch = E
    else:
        own = False
        E = _enc_scratch
    if not own:
        _enc_busy = True
    try:
        E.P = P
        E.n = 0
        E.hn = 0
        E.plen = 0
        if not isinstance(value, dict):
            E.fail(f"expected a dict, got {_typename(value)}")
        _e_struct(E, 0, <dict>value, 0)
        if E.auxcap < E.n:
            aux = <uint32_t *>realloc(E.aux, (E.n + 1) * sizeof(uint32_t))
            if aux == NULL:
                raise MemoryError()
            E.aux = aux
            E.auxcap = E.n + 1
        rc = kc_encode_size(P.code, E.tape, E.n, E.heap, E.hn, E.aux, &size, &err)
        if rc != KC_OK:
            raise EncodeError(f"internal encoder error {rc} at tape slot {err.offset}",
                              message=P.name, version=P.version)
        out = PyBytes_FromStringAndSize(NULL, size)
        kc_encode_write(P.code, E.tape, E.n, E.heap, E.hn, E.aux,
                        <uint8_t *>PyBytes_AS_STRING(out), &err)
        return out
    finally:
        E.P = None
        if not own:
            _enc_busy = False
            E.shrink()




# ---------------------------------------------------------------------------------------
# bulk decoding

# NumPy and pyarrow are imported by the first bulk call (_arrays), not with the module:
# `import kcodec` (and every command that decodes one message at a time) does without them.
_np = None
_pa = None
cdef bint _arrays_loaded = False


cdef int _arrays() except -1:
    global _np, _pa, _arrays_loaded
    if _arrays_loaded:
        return 0
    try:
        import numpy
        _np = numpy
    except ImportError:         # numpy is a dependency; keep the module importable anyway
        _np = None
    try:
        import pyarrow
        _pa = pyarrow
    except ImportError:
        _pa = None
    _arrays_loaded = True
    return 0

cdef dict _NP_DTYPES = {
    KC_T_BOOL: "bool", KC_T_INT8: "int8", KC_T_INT16: "int16", KC_T_UINT16: "uint16",
    KC_T_INT32: "int32", KC_T_UINT32: "uint32", KC_T_INT64: "int64", KC_T_FLOAT64: "float64",
}


cdef inline uintptr_t _addr(object arr) except? 0:
    """The address of a NumPy array's first element (strided views too), through the
    buffer protocol: ``__array_interface__`` builds a dict and formats the dtype's text
    on every call, a quarter of a small bulk call's instructions."""
    cdef Py_buffer view
    cdef uintptr_t p
    PyObject_GetBuffer(arr, &view, PyBUF_STRIDES)
    p = <uintptr_t>view.buf
    PyBuffer_Release(&view)
    return p


cdef class _CBuf:
    """A buffer malloc()ed by the C column decoder, handed to NumPy/pyarrow without a copy
    and freed when the last view goes."""
    cdef void *p
    cdef Py_ssize_t n
    cdef Py_ssize_t shape[1]

    def __getbuffer__(self, Py_buffer *b, int flags):
        b.buf = self.p
        b.len = self.n
        b.readonly = 0
        b.itemsize = 1
        b.format = "B"
        b.ndim = 1
        self.shape[0] = self.n
        b.shape = self.shape
        b.strides = NULL
        b.suboffsets = NULL
        b.internal = NULL
        b.obj = self

    def __releasebuffer__(self, Py_buffer *b):
        pass

    def __dealloc__(self):
        free(self.p)


cdef bytes _EMPTY8 = b"\0" * 8


cdef object _take(uint8_t **pp, size_t n):
    """Ownership of *pp (n bytes) moves to a Python object; NULL becomes an empty buffer."""
    cdef _CBuf b
    if pp[0] == NULL:
        return _EMPTY8
    b = _CBuf()
    b.p = pp[0]
    b.n = <Py_ssize_t>n
    pp[0] = NULL
    return b


cdef class _Rows:
    """Where the rows of one bulk call are (kc_rows) and what keeps them alive."""
    cdef kc_rows r
    cdef Py_ssize_t n
    cdef list keep
    cdef object items            # the input list of a list source (row bytes for errors)
    cdef object mv               # the data as a memoryview

    cdef bint span(self, Py_ssize_t i, Py_ssize_t *a, Py_ssize_t *b):
        """Row i's byte range in the data, False for a null row (or one outside it)."""
        cdef size_t n = 0
        cdef const uint8_t *p = kc_rows_at(&self.r, <size_t>i, &n)
        if p == NULL:
            return False
        a[0] = p - self.r.data
        b[0] = a[0] + <Py_ssize_t>n
        return True

    def row(self, Py_ssize_t i):
        """Row i's bytes (None for a null row)."""
        cdef Py_ssize_t a = 0, b = 0
        if self.items is not None:
            return self.items[i]
        if not self.span(i, &a, &b):
            return None
        return self.mv[a:b]


cdef _Rows _rows_arrow(values):
    cdef _Rows R = _Rows()
    t = values.type
    if _pa.types.is_large_binary(t) or _pa.types.is_large_string(t):
        R.r.offsets_64 = 1
        odt = _np.int64
    elif _pa.types.is_binary(t) or _pa.types.is_string(t):
        odt = _np.int32
    else:
        raise TypeError(f"bulk decoding needs a binary array, not {t}")
    R.n = len(values)
    bufs = values.buffers()
    if R.n:
        oarr = _np.frombuffer(bufs[1], dtype=odt)[values.offset:values.offset + R.n + 1]
    else:
        oarr = _np.zeros(1, dtype=odt)
    db = bufs[2]
    darr = _np.frombuffer(db, dtype=_np.uint8) if db is not None and db.size else _np.zeros(1, _np.uint8)
    R.keep = [bufs, oarr, darr]
    R.r.offsets = <const void *>_addr(oarr)
    R.r.data = <const uint8_t *>_addr(darr)
    R.r.data_len = darr.shape[0]
    if values.null_count and bufs[0] is not None:
        varr = _np.frombuffer(bufs[0], dtype=_np.uint8)
        R.keep.append(varr)
        R.r.valid = <const uint8_t *>_addr(varr)
        R.r.valid_off = values.offset
    R.mv = memoryview(darr)
    return R


cdef _Rows _rows_list(values):
    """A list of bytes-like objects (None = null): one contiguous copy, int64 offsets."""
    cdef _Rows R = _Rows()
    cdef list items = values if type(values) is list else list(values)
    cdef Py_ssize_t i, n = len(items)
    cdef int64_t *po
    cdef char *dst
    oarr = _np.empty(n + 1, dtype=_np.int64)
    varr = _np.full(n // 8 + 1, 255, dtype=_np.uint8)
    cdef uint8_t *vp = <uint8_t *>_addr(varr)
    po = <int64_t *>_addr(oarr)
    po[0] = 0
    nulls = False
    for i in range(n):
        it = items[i]
        if type(it) is bytes:
            po[i + 1] = po[i] + PyBytes_GET_SIZE(it)
        elif it is None:
            nulls = True
            vp[i >> 3] &= <uint8_t>~(1 << (i & 7))
            po[i + 1] = po[i]
        else:
            po[i + 1] = po[i] + memoryview(it).nbytes
    joined = PyBytes_FromStringAndSize(NULL, po[n])
    dst = <char *>PyBytes_AS_STRING(joined)
    for i in range(n):
        it = items[i]
        if type(it) is bytes:
            memcpy(dst + po[i], PyBytes_AS_STRING(it), po[i + 1] - po[i])
        elif it is not None:
            raw = bytes(memoryview(it).cast("B"))
            if len(raw) != po[i + 1] - po[i]:
                raise ValueError("decode_bulk: a value changed size while being read")
            memcpy(dst + po[i], PyBytes_AS_STRING(raw), po[i + 1] - po[i])
    R.n = n
    R.keep = [oarr, joined, varr]
    R.items = items
    R.r.offsets_64 = 1
    R.r.offsets = <const void *>_addr(oarr)
    R.r.data = <const uint8_t *>PyBytes_AS_STRING(joined)
    R.r.data_len = <size_t>po[n]
    if nulls:
        R.r.valid = <const uint8_t *>_addr(varr)
    R.mv = memoryview(joined)
    return R


# slices of no rows: never read
cdef int64_t _EMPTY_POS_[1]
cdef int32_t _EMPTY_LEN_[1]
cdef const int64_t *_EMPTY_POS = _EMPTY_POS_
cdef const int32_t *_EMPTY_LEN = _EMPTY_LEN_


cdef object _field(arr, dt):
    """A 1-D array of dtype dt as it is, strided included (e.g. a field of the log
    reader's record array), or a converted copy."""
    a = _np.asarray(arr)
    if a.ndim != 1 or a.dtype != dt or a.strides[0] <= 0:
        a = _np.ascontiguousarray(a, dtype=dt).reshape(-1)
    return a


cdef _Rows _rows_slices(data, positions, lengths, take):
    """Record slices of one buffer: positions int64[], lengths int32[] (-1 = null), read
    in place with their strides; ``take``: row r is slice take[r]."""
    cdef _Rows R = _Rows()
    pos = _field(positions, _np.int64)
    lens = _field(lengths, _np.int32)
    if pos.shape[0] != lens.shape[0]:
        raise ValueError("positions and lengths differ in length")
    darr = _np.frombuffer(data, dtype=_np.uint8) if len(memoryview(data).cast("B")) else _np.zeros(1, _np.uint8)
    R.n = pos.shape[0]
    R.keep = [pos, lens, darr, data]
    if take is not None:
        tk = _np.ascontiguousarray(take, dtype=_np.int64).reshape(-1)
        R.keep.append(tk)
        R.r.n_entries = <size_t>R.n
        R.n = tk.shape[0]
        R.r.take = <const int64_t *>_addr(tk) if R.n else NULL
    R.r.pos = <const int64_t *>_addr(pos) if pos.shape[0] else _EMPTY_POS
    R.r.lens = <const int32_t *>_addr(lens) if pos.shape[0] else _EMPTY_LEN
    R.r.pos_stride = <size_t>pos.strides[0] if pos.strides[0] != 8 else 0
    R.r.lens_stride = <size_t>lens.strides[0] if lens.strides[0] != 4 else 0
    R.r.data = <const uint8_t *>_addr(darr)
    R.r.data_len = <size_t>len(memoryview(data).cast("B"))
    R.mv = memoryview(darr)
    return R


cdef _Rows _rows(values, data, positions, lengths, take=None, select=None, which=None):
    cdef _Rows R
    if positions is not None:
        R = _rows_slices(data, positions, lengths, take)
    elif take is not None:
        raise ValueError("take needs record slices (positions, lengths)")
    else:
        if _pa is not None and isinstance(values, _pa.ChunkedArray):
            values = values.combine_chunks()
        if _pa is not None and isinstance(values, _pa.Array):
            R = _rows_arrow(values)
        else:
            R = _rows_list(values)
    if select is not None:
        sel = _np.ascontiguousarray(select).reshape(-1)
        if sel.dtype.itemsize != 1 or sel.dtype.kind not in "bui":
            sel = (sel != 0).view(_np.uint8)
        if sel.shape[0] != R.n:
            raise ValueError(f"select has {sel.shape[0]} entries for {R.n} rows")
        R.keep.append(sel)
        R.r.select = <const uint8_t *>_addr(sel) if R.n else NULL
    if which is not None:
        wh = _np.ascontiguousarray(which, dtype=_np.int8).reshape(-1)
        if wh.shape[0] != R.n:
            raise ValueError(f"which has {wh.shape[0]} entries for {R.n} rows")
        R.keep.append(wh)
        R.r.which = <const int8_t *>_addr(wh) if R.n else NULL
    return R


def slice_heads(data, positions, lengths, Py_ssize_t k, *, take=None):
    """The first ``k`` (<= 8) bytes of each record slice (version prefixes, frame heads),
    read in place: ``(heads, have)``, heads a (rows, k) uint8 array zero-padded, have
    int32 (the bytes a row has, at most k; -1 null row; -2 slice outside the data)."""
    _arrays()
    cdef _Rows R = _rows_slices(data, positions, lengths, take)
    cdef int rc
    if k < 0 or k > 8:
        raise ValueError("k must be 0..8")
    heads = _np.zeros((R.n, max(k, 1)), _np.uint8)[:, :k]
    have = _np.empty(R.n, _np.int32)
    if R.n and k:
        rc = kc_rows_heads(&R.r, <size_t>R.n, <size_t>k, <uint8_t *>_addr(heads), <int32_t *>_addr(have))
        if rc != KC_OK:
            raise status_error(rc, "slice heads")
    elif R.n:
        have[:] = 0
    return heads, have


cdef tuple _run_columns(_Plan P, _Rows R, Py_ssize_t skip, list layout, object keep_top,
                        list plans=None, int prefix=0, bint tagged=False):
    """Run the C column decoder over R's rows.  Returns (nodes, status, versions, have,
    tagged): per node in pre-order (kind, len, validity (None: no nulls), values,
    offsets, data), NumPy int32 statuses; with a prefix the rows' versions (int16 or
    int32) and prefix bytes present (int8), else None; with `tagged` the top-level
    tagged fields per row (int32), else None.
    keep_top: indices of the top-level fields to keep (None = all).
    plans: row r decodes with plans[R.which[r]] into P's tree (each checked to fit),
    or with a prefix plans[its version]."""
    cdef kc_columns t
    cdef kc_row_info out
    cdef const int32_t **codes = NULL
    cdef _Plan Q
    cdef kc_col *c
    cdef int rc
    cdef Py_ssize_t i, nn, rows = max(R.n, 1)
    cdef list defs = []
    status = _np.empty(rows, dtype=_np.int32)
    versions = have = tags = None
    memset(&out, 0, sizeof(out))
    out.status = <int32_t *>_addr(status)
    if prefix:
        versions = _np.empty(rows, dtype=_np.int16 if prefix == 2 else _np.int32)
        have = _np.empty(rows, dtype=_np.int8)
        out.versions = <void *>_addr(versions)
        out.have = <int8_t *>_addr(have)
    if tagged:
        tags = _np.empty(rows, dtype=_np.int32)
        out.tagged = <int32_t *>_addr(tags)
    if skip < 0:
        raise ValueError("skip must be >= 0")
    R.r.skip = <size_t>skip
    R.r.prefix = prefix
    rc = kc_columns_init(&t, P.code)
    if rc != KC_OK:
        raise status_error(rc, f"{P.name} v{P.version} columns")
    try:
        if plans is not None:
            codes = <const int32_t **>malloc(max(len(plans), 1) * sizeof(int32_t *))
            if codes == NULL:
                raise MemoryError()
            for i in range(len(plans)):
                if plans[i] is None:
                    codes[i] = NULL
                    continue
                Q = <_Plan>plans[i]
                if not kc_columns_accepts(&t, Q.code):
                    raise ValueError(f"{Q.name} v{Q.version} does not fit the columns of "
                                     f"{P.name} v{P.version}")
                codes[i] = Q.code
            t.codes = codes
            t.n_codes = <size_t>len(plans)
        nn = t.n_nodes
        if nn != len(layout):
            raise RuntimeError("column tree and layout disagree")
        for i in range(nn):
            c = &t.nodes[i]
            dnull, di, db = layout[i].default
            c.def_null = dnull
            c.def_i = di
            if db is not None:
                defs.append(db)
                c.def_bytes = <const uint8_t *>PyBytes_AS_STRING(db)
                c.def_len = PyBytes_GET_SIZE(db)
        if keep_top is not None:
            for k, i in enumerate(layout[0].kids):
                if k not in keep_top:
                    kc_columns_skip(&t, i)
        with nogil:
            rc = kc_columns_decode_rows(&t, &R.r, <size_t>R.n, &out)
        if rc != KC_OK:
            raise status_error(rc, f"bulk decode of {P.name} v{P.version}")
        nodes = []
        for i in range(nn):
            c = &t.nodes[i]
            nodes.append((c.kind, c.len, None if c.validity == NULL else _take(&c.validity, (c.len + 7) // 8),
                          _take(&c.values, (c.len + 7) // 8 if c.kind == KC_N_BOOL else c.len * c.width),
                          _take(<uint8_t **>&c.offsets, (c.len + 1) * 4),
                          _take(&c.data, c.data_len)))
    finally:
        kc_columns_free(&t)
        free(codes)
    n = R.n
    return (nodes, status[:n], None if versions is None else versions[:n],
            None if have is None else have[:n], None if tags is None else tags[:n])


cdef object _row_error(_Plan P, object prog, object row, Py_ssize_t skip):
    """The text of a failed row's error, exactly as a single decode of it reports it."""
    if row is None:
        return str(DecodeError("null value", message=P.name, version=P.version))
    n = len(row)
    if n < skip:
        return str(DecodeError(f"needs {skip} bytes of prefix, {n} left", message=P.name,
                               version=P.version, offset=0))
    if skip:
        row = row[skip:]
        n -= skip
    try:
        v, end = decode(prog, row, 0)
    except DecodeError as e:
        return str(e)
    return str(DecodeError(f"{n - end} trailing bytes after the message",
                           message=P.name, version=P.version, offset=end))


cdef dict _error_texts(_Plan P, object prog, _Rows R, object status, Py_ssize_t skip, bint null_is_error,
                       list progs=None, object which=None):
    """{row: error text} of the rows that failed (and of null rows when null_is_error);
    with progs, row r was decoded with progs[which[r]]."""
    cdef dict errs = {}
    cdef Py_ssize_t i, n = status.shape[0]
    cdef const int32_t *st0
    if n:
        # most batches have no failed row: one C pass instead of NumPy's several
        st0 = <const int32_t *>_addr(status)
        for i in range(n):
            if st0[i] != KC_OK and (null_is_error or st0[i] != KC_E_NULL_ROW):
                break
        else:
            return errs
    failed = status != KC_OK
    if not null_is_error:   # null rows (often most of them) cost no Python work
        failed &= status != KC_E_NULL_ROW
    for r in _np.flatnonzero(failed).tolist():
        st = status[r]
        if st == KC_E_NULL_ROW:
            if null_is_error:
                errs[r] = _row_error(P, prog, None, skip)
        elif st == KC_E_TOO_BIG and R.r.pos != NULL:
            errs[r] = str(DecodeError("record slice outside the buffer", message=P.name,
                                      version=P.version))
        elif st == KC_E_TOO_BIG:
            # a column past its int32 offsets (2 GiB) or a row past the data: not the row's fault
            raise status_error(st, f"bulk decode of {P.name} v{P.version} (split the input)")
        elif progs is not None:
            q = progs[which[r]]
            errs[r] = _row_error(_plan(q), q, R.row(r), skip)
        else:
            errs[r] = _row_error(P, prog, R.row(r), skip)
    return errs


def decode_columns(prog, values=None, *, data=None, positions=None, lengths=None,
                   Py_ssize_t skip=0, list layout=None, take=None, select=None,
                   programs=None, which=None, int prefix=0, keep=None, bint info=False):
    """Bulk-decode rows of ``prog`` into Arrow-layout column buffers (kcodec.arrow's engine).

    Rows: ``values`` (a pyarrow (Large)BinaryArray or ChunkedArray, or a list of
    bytes/None), or record slices ``data``/``positions``/``lengths``; ``skip`` prefix
    bytes of each row are not part of the message; ``take``: row r is slice take[r];
    ``select``: rows where it is 0/False are null rows.  ``programs``/``which``: row r
    decodes with ``programs[which[r]]`` (versions whose columns fit ``prog``'s tree, see
    kc_columns_accepts; which < 0 or a None program: a null row).  ``prefix`` (2 or 4,
    without ``which``): each row starts with a big-endian int16/int32 version and
    decodes with ``programs[version]`` (none: a null row).  ``keep``: indices of the
    top-level fields whose columns are kept (the others are checked, their nodes
    empty).  Returns ``(nodes, errors)``: per node of ``layout``
    (kcodec._columns.layout) ``(kind, len, validity, values, offsets, data)`` buffers,
    and ``{row: error text}`` of the failed rows (null rows are not errors); with
    ``info`` also a dict: ``decoded`` (bool per row), ``tagged`` (int32: the tagged
    fields in each row's top-level tag section), and with a prefix ``versions`` (-1:
    fewer bytes than the prefix) and ``have`` (int8: prefix bytes present, -1 a null
    row, -2 outside the data), for every row, selected or not.
    """
    _arrays()
    cdef _Plan P = _plan(prog)
    cdef _Rows R
    if prefix not in (0, 2, 4):
        raise ValueError("prefix must be 0, 2 or 4")
    if prefix and (which is not None or programs is None):
        raise ValueError("a prefix takes programs (by version) and no which")
    if not prefix and (programs is None) != (which is None):
        raise ValueError("programs and which go together")
    R = _rows(values, data, positions, lengths, take, select, which)
    plans = None if programs is None else [None if q is None else _plan(q) for q in programs]
    nodes, status, versions, have, tagged = _run_columns(
        P, R, skip, layout, None if keep is None else set(keep), plans, prefix, info)
    if prefix:
        errs = _error_texts(P, prog, R, status, skip, False, list(programs), versions)
    elif programs is None:
        errs = _error_texts(P, prog, R, status, skip, False)
    else:
        errs = _error_texts(P, prog, R, status, skip, False, list(programs),
                            _np.asarray(which, _np.int8).reshape(-1))
    if not info:
        return nodes, errs
    more = {"decoded": status == KC_OK, "tagged": tagged}
    if prefix:
        more["versions"] = versions
        more["have"] = have
    return nodes, errs, more


def decode_bulk(prog, values):
    """Decode many values of ``prog`` into columns.

    ``values``: a list of bytes-like objects (``None`` = a null row) or a pyarrow
    ``BinaryArray``/``LargeBinaryArray`` (read in place, no copy).  Returns, for each
    top-level field in schema order: a NumPy array for numbers and bools (0 on error
    rows), a pyarrow array for strings, bytes and uuids (``string()``, ``binary()``,
    ``binary(16)``; null on error rows; NumPy object arrays when pyarrow is missing),
    a list of Python values for nested fields (arrays, structs; ``None`` on error
    rows); plus ``"_ok"`` (NumPy bool) and ``"_error"`` (list: ``None`` or the error
    text a single decode of that row would raise).  A bad row never raises.
    """
    cdef _Plan P = _plan(prog)
    cdef _Rows R
    _arrays()
    if _np is None:
        raise ImportError("decode_bulk needs numpy")
    from ._columns import layout as _layout
    R = _rows(values, None, None, None)
    lay = _layout(prog)
    # the message's fields (its unknown tagged fields are not a column here: skipped)
    cdef _SPlan S0 = <_SPlan>P.splans[0]
    top = [lay[i] for i in lay[0].kids[:S0.nf + S0.nt]]
    keys = [n.name for n in top]
    flat = {k for k, n in enumerate(top) if n.kind != KC_N_STRUCT and n.kind != KC_N_LIST}
    nodes, status = _run_columns(P, R, 0, lay, flat)[:2]
    ok = status == KC_OK
    result = {}
    for k, n in enumerate(top):
        if k in flat:
            result[n.name] = _flat_column(nodes[lay[0].kids[k]], n.type, R.n)
    nested = [k for k in range(len(top)) if k not in flat]
    if nested:
        for k, col in zip(nested, _nested_python(P, R, ok, nested)):
            result[keys[k]] = col
    result = {k: result[k] for k in prog.top.keys}
    result["_ok"] = ok
    errs = _error_texts(P, prog, R, status, 0, True)
    result["_error"] = [errs.get(r) for r in range(R.n)] if errs else [None] * R.n
    return result


cdef object _flat_column(tuple node, int typ, Py_ssize_t n):
    """decode_bulk's form of a scalar column: NumPy numbers and bools, pyarrow strings,
    bytes and uuids (NumPy object arrays without pyarrow)."""
    cdef Py_ssize_t r         # typed: pointer arithmetic on the uuid bytes below
    kind, ln, validity, values, offsets, data = node
    if validity is None and _pa is None:
        validity = _np.full((n + 7) // 8 + 1, 255, _np.uint8)
    if typ in _NP_DTYPES:
        if typ == KC_T_BOOL:
            return _np.unpackbits(_np.frombuffer(values, _np.uint8), bitorder="little")[:n].view(_np.bool_)
        return _np.frombuffer(values, dtype=_NP_DTYPES[typ])[:n]
    if _pa is not None:
        vbuf = None if validity is None else _pa.py_buffer(validity)
        if typ == KC_T_UUID:
            return _pa.Array.from_buffers(_pa.binary(16), n, [vbuf, _pa.py_buffer(values)])
        t = _pa.string() if typ == KC_T_STRING else _pa.binary()
        return _pa.Array.from_buffers(t, n, [vbuf, _pa.py_buffer(offsets), _pa.py_buffer(data)])
    out = _np.empty(n, dtype=object)
    bits = _np.unpackbits(_np.frombuffer(validity, _np.uint8), bitorder="little")[:n]
    if typ == KC_T_UUID:
        raw = bytes(values)
        for r in range(n):
            if bits[r]:
                out[r] = _mk_uuid(<const uint8_t *>PyBytes_AS_STRING(raw) + 16 * r)
        return out
    o = _np.frombuffer(offsets, _np.int32)
    raw = bytes(data)
    for r in range(n):
        if bits[r]:
            b = raw[o[r]:o[r + 1]]
            out[r] = b.decode("utf-8") if typ == KC_T_STRING else b
    return out


cdef list _nested_python(_Plan P, _Rows R, object ok, list fields):
    """Python values of the nested top-level fields (positions among the top-level
    fields) of every ok row, as decode builds them."""
    cdef _SPlan S0 = <_SPlan>P.splans[0]
    okc = _np.ascontiguousarray(ok, dtype=_np.uint8)
    fids = [f if f < S0.nf else -1 - (f - S0.nf) for f in fields]
    # many long-lived, acyclic containers: keep the cyclic GC from rescanning them
    gc_was = _gc.isenabled()
    _gc.disable()
    try:
        return _nested_columns(P, R, <const uint8_t *>_addr(okc) if R.n else NULL, fids)
    finally:
        if gc_was:
            _gc.enable()


cdef struct _Tape:
    int64_t *slots
    size_t cap, n


cdef int _tape_decode(_Plan P, _Tape *t, const uint8_t *p, size_t n) except -2:
    """Decode one row into the tape, growing it when the row needs more slots; the
    decoder's status."""
    cdef size_t end = 0
    cdef int64_t *grown
    cdef kc_error err
    cdef int rc = kc_decode(P.code, p, n, 0, t.slots, t.cap, &end, &t.n, &err)
    if rc == KC_E_TAPE_FULL:
        grown = <int64_t *>realloc(t.slots, (n + 2) * sizeof(int64_t))
        if grown == NULL:
            raise MemoryError()
        t.slots = grown
        t.cap = n + 2
        rc = kc_decode(P.code, p, n, 0, t.slots, t.cap, &end, &t.n, &err)
    return rc


cdef int _skip_value(_Plan P, _Tape *t, Walk *w, const int32_t *f, int tagged) except -1:
    """Step the walk over a value that is not kept (f: type, flags, arg): a regular
    scalar is one slot, anything else asks the tape."""
    cdef int64_t sk
    if not tagged and f[0] != KC_T_STRUCT and f[0] != KC_T_ARRAY:
        w.i += 1
        return 0
    sk = kc_tape_skip(P.code, t.slots, t.n, w.i, f[0], f[1], f[2], tagged)
    if sk < 0:
        raise ValueError("internal error: malformed tape")
    w.i += <size_t>sk
    return 0


cdef int _regular_fields(_Plan P, _SPlan S0, _Tape *t, Walk *w, const int *reg_map, list cols,
                         Py_ssize_t r) except -1:
    """The kept regular fields of row r into their columns; the walk moves past them all."""
    cdef const int32_t *f
    cdef Py_ssize_t i, c
    for i in range(S0.nf):
        f = S0.s + 4 + 3 * i
        c = reg_map[i]
        if c >= 0:
            (<list>cols[c])[r] = _b_value(P, w, f[0], f[1], f[2])
        else:
            _skip_value(P, t, w, f, 0)
    return 0


cdef int _tagged_fields(_Plan P, _SPlan S0, _Tape *t, Walk *w, const int *tag_map, char *seen,
                        list cols, Py_ssize_t r) except -1:
    """The kept tagged fields of row r into their columns, absent ones as their default."""
    cdef const int32_t *f
    cdef Py_ssize_t i, j, c
    cdef int64_t cnt, key
    memset(seen, 0, S0.nt + 1)
    cnt = t.slots[w.i]
    w.i += 1
    for j in range(cnt):
        key = t.slots[w.i]
        w.i += 1
        if key < 0:             # an unknown tag: its raw bytes, one slot
            w.i += 1
            continue
        f = S0.s + 4 + 3 * S0.nf + 4 * key
        c = tag_map[key]
        if c >= 0:
            (<list>cols[c])[r] = _b_value(P, w, f[1], f[2], f[3])
            seen[key] = 1
        else:
            _skip_value(P, t, w, f + 1, 1)
    for i in range(S0.nt):
        c = tag_map[i]
        if c >= 0 and not seen[i]:
            dv = S0.tdefaults[i]
            if <int>S0.tcopy[i] == 1:
                dv = []
            elif <int>S0.tcopy[i] == 2:
                dv = _copy_default(dv)
            (<list>cols[c])[r] = dv
    return 0


cdef list _nested_columns(_Plan P, _Rows R, const uint8_t *okp, list fields):
    """Python values of the nested (array/struct) top-level fields of every ok row: each
    row is decoded to a tape and only those fields are built from it."""
    cdef _SPlan S0 = <_SPlan>P.splans[0]
    cdef Py_ssize_t r, i, c, ncol = len(fields)
    cdef int nf = S0.nf, nt = S0.nt
    cdef int *reg_map = <int *>malloc((nf + nt + 1) * sizeof(int))
    cdef int *tag_map = reg_map + nf
    cdef char *seen = <char *>malloc(nt + 1)
    cdef Py_ssize_t n = R.n, a = 0, b = 0
    cdef _Tape t
    cdef Walk w
    cdef list cols = [[None] * n for _ in range(ncol)]
    t.cap = 256
    t.n = 0
    t.slots = <int64_t *>malloc(t.cap * sizeof(int64_t))
    try:
        if reg_map == NULL or seen == NULL or t.slots == NULL:
            raise MemoryError()
        for i in range(nf + nt):
            reg_map[i] = -1
        for c in range(ncol):
            fid = fields[c]
            if fid >= 0:
                reg_map[fid] = c
            else:
                tag_map[-1 - fid] = c
        for r in range(n):
            if not okp[r] or not R.span(r, &a, &b):
                continue
            if _tape_decode(P, &t, R.r.data + a, <size_t>(b - a)) != KC_OK:
                continue
            w.tape = t.slots
            w.i = 0
            w.buf = R.r.data + a
            _regular_fields(P, S0, &t, &w, reg_map, cols, r)
            if S0.flexible:
                _tagged_fields(P, S0, &t, &w, tag_map, seen, cols, r)
    finally:
        free(reg_map)
        free(seen)
        free(t.slots)
    return cols


# ---------------------------------------------------------------------------------------
# test hooks for the varint kernels (csrc/kc_varint.h)

cdef object _varint_read(object value, int consumed):
    if consumed < 0:
        raise ValueError("truncated varint" if consumed == -1 else "varint is too long")
    return value, consumed


def _read_uvarint(const uint8_t[:] data not None):
    """(value, bytes consumed) or raises ValueError (truncated / too long)."""
    cdef uint32_t v = 0
    cdef int r = kc_read_uvarint(&data[0] if data.shape[0] else NULL, data.shape[0], &v)
    return _varint_read(v, r)


def _write_uvarint(uint32_t v):
    cdef uint8_t b[5]
    cdef int n = kc_write_uvarint(b, v)
    assert n == kc_sizeof_uvarint(v)
    return PyBytes_FromStringAndSize(<char *>b, n)


def _read_varint(const uint8_t[:] data not None):
    cdef int32_t v = 0
    cdef int r = kc_read_varint(&data[0] if data.shape[0] else NULL, data.shape[0], &v)
    return _varint_read(v, r)


def _write_varint(int32_t v):
    cdef uint8_t b[5]
    cdef int n = kc_write_varint(b, v)
    assert n == kc_sizeof_varint(v)
    return PyBytes_FromStringAndSize(<char *>b, n)


def _read_varlong(const uint8_t[:] data not None):
    cdef int64_t v = 0
    cdef int r = kc_read_varlong(&data[0] if data.shape[0] else NULL, data.shape[0], &v)
    return _varint_read(v, r)


def _write_varlong(int64_t v):
    cdef uint8_t b[10]
    cdef int n = kc_write_varlong(b, v)
    assert n == kc_sizeof_varlong(v)
    return PyBytes_FromStringAndSize(<char *>b, n)
