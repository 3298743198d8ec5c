# cython: language_level=3
"""Binding of csrc/kc_kraft_extract.c: many record values of one message version ->
the columns the metadata image wants (the spec engine decodes, C walks the tape)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_Check
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

import numpy as np

cdef extern from "kc_kraft.h":
    ctypedef struct kc_kraft_role:
        int32_t ref
        int32_t kind
        int32_t slot
        int64_t def_ "def"
    ctypedef struct kc_kraft_out:
        size_t n_rows
        int64_t *scalars
        uint8_t *uuids
        int32_t *list_len
        int32_t **list_ints
        uint8_t **list_uuids
        size_t *list_used
    int kc_kraft_extract(const int32_t *code, const uint8_t *const *rows, const int64_t *lens,
                         size_t n_rows, const kc_kraft_role *roles, int n_roles,
                         int64_t *tape, size_t tape_cap, kc_kraft_out *out,
                         int32_t *status, int64_t *err_off) nogil


def frame_heads(list values):
    """Per value: (first three bytes as ints, length); -1 length for None, -1 bytes
    where the value is shorter."""
    cdef Py_ssize_t n = len(values), i, ln
    head = np.full((n, 3), -1, np.int64)
    lens = np.empty(n, np.int64)
    cdef int64_t[:, ::1] h = head
    cdef int64_t[::1] l = lens
    cdef const uint8_t *p
    for i in range(n):
        v = values[i]
        if v is None or not PyBytes_Check(v):
            l[i] = -1 if v is None else len(v)
            if v is not None:
                b = bytes(v[:3])
                for k in range(len(b)):
                    h[i, k] = b[k]
            continue
        ln = PyBytes_GET_SIZE(v)
        l[i] = ln
        p = <const uint8_t *>PyBytes_AS_STRING(v)
        if ln > 0:
            h[i, 0] = p[0]
        if ln > 1:
            h[i, 1] = p[1]
        if ln > 2:
            h[i, 2] = p[2]
    return head, lens


def extract(code, list values, rows, Py_ssize_t skip, roles):
    """Rows ``values[rows[i]][skip:]`` (bytes).  ``roles``: [(ref, kind, slot, default)]
    (kind 0 scalar, 1 uuid, 2 int list, 3 uuid list).  Returns (scalars[n_scalar, n]
    int64, uuids[n_uuid, n, 16] uint8, list_len[n_list, n] int32, [list values],
    status int32, err_off int64, bad)."""
    cdef const int32_t[::1] c = code
    cdef const int64_t[::1] rs = rows
    cdef size_t n = rs.shape[0]
    cdef int nr = len(roles)
    n_sc = sum(1 for r in roles if r[1] == 0)
    n_uu = sum(1 for r in roles if r[1] == 1)
    n_li = sum(1 for r in roles if r[1] >= 2)
    scalars = np.zeros((max(n_sc, 1), n), np.int64)
    uuids = np.zeros((max(n_uu, 1), n, 16), np.uint8)
    list_len = np.zeros((max(n_li, 1), n), np.int32)
    status = np.zeros(n, np.int32)
    err_off = np.zeros(n, np.int64)
    lens = np.empty(n, np.int64)
    cdef int64_t[::1] ln = lens
    cdef const uint8_t **ptrs = <const uint8_t **>malloc(sizeof(uint8_t *) * max(n, 1))
    if ptrs == NULL:
        raise MemoryError()
    cdef Py_ssize_t i, total = 0, longest = 0, L
    try:
        for i in range(<Py_ssize_t>n):
            v = values[rs[i]]
            if not PyBytes_Check(v):
                raise TypeError("values must be bytes")
            L = PyBytes_GET_SIZE(v) - skip
            if L < 0:
                L = 0
            ptrs[i] = <const uint8_t *>PyBytes_AS_STRING(v) + (skip if PyBytes_GET_SIZE(v) >= skip else 0)
            ln[i] = L
            total += L
            if L > longest:
                longest = L
    except BaseException:
        free(ptrs)
        raise
    cdef size_t tape_cap = longest + 2
    vals = [None] * n_li
    for r in roles:
        if r[1] == 2:
            vals[r[2]] = np.zeros(total // 4 + 1, np.int32)
        elif r[1] == 3:
            vals[r[2]] = np.zeros((total // 16 + 1, 16), np.uint8)
    cdef kc_kraft_role *cr = <kc_kraft_role *>malloc(sizeof(kc_kraft_role) * max(nr, 1))
    cdef int64_t *tape = <int64_t *>malloc(sizeof(int64_t) * tape_cap)
    cdef int32_t **li = <int32_t **>malloc(sizeof(int32_t *) * max(n_li, 1))
    cdef uint8_t **lu = <uint8_t **>malloc(sizeof(uint8_t *) * max(n_li, 1))
    cdef size_t *used = <size_t *>malloc(sizeof(size_t) * max(n_li, 1))
    cdef kc_kraft_out out
    cdef int64_t[:, ::1] sc = scalars
    cdef uint8_t[:, :, ::1] uu = uuids
    cdef int32_t[:, ::1] ll = list_len
    cdef int32_t[::1] st = status
    cdef int64_t[::1] eo = err_off
    cdef int32_t[::1] iv
    cdef uint8_t[:, ::1] uv
    cdef int bad = 0
    try:
        if cr == NULL or tape == NULL or li == NULL or lu == NULL or used == NULL:
            raise MemoryError()
        for j in range(nr):
            cr[j].ref, cr[j].kind, cr[j].slot, cr[j].def_ = roles[j]
        for j in range(n_li):
            li[j] = NULL
            lu[j] = NULL
            used[j] = 0
        for r in roles:
            if r[1] == 2:
                iv = vals[r[2]]
                li[r[2]] = &iv[0]
            elif r[1] == 3:
                uv = vals[r[2]]
                lu[r[2]] = &uv[0, 0]
        out.n_rows = n
        out.scalars = &sc[0, 0]
        out.uuids = &uu[0, 0, 0]
        out.list_len = &ll[0, 0]
        out.list_ints = li
        out.list_uuids = lu
        out.list_used = used
        if n:
            with nogil:
                bad = kc_kraft_extract(&c[0], ptrs, &ln[0], n, cr, nr, tape, tape_cap, &out,
                                       &st[0], &eo[0])
        values_out = [vals[j][:used[j]] for j in range(n_li)]
    finally:
        free(ptrs)
        free(cr)
        free(tape)
        free(li)
        free(lu)
        free(used)
    return scalars, uuids, list_len, values_out, status, err_off, bad
