# cython: language_level=3
"""Binding of csrc/kc_ocols.c: a ``__consumer_offsets`` key/value batch decoded in one C
call into one Arrow struct array (imported through the Arrow C data interface).

The plan (programs, field maps, union trees, the result's layout) is built once in
Python (kcodec.spark._oplan) and checked here once; a batch is then one call."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from kcodec._kc_status cimport status_error

import numpy as _np
import pyarrow as _pa


from kcodec._native cimport (kc_col, kc_columns, kc_columns_free, kc_columns_init_nodes, kc_columns_map_check,
                            kc_program_check, kc_rows)


cdef extern from "kc_ocols.h" nogil:
    struct ArrowArray:
        void (*release)(ArrowArray *)

    ctypedef struct kc_flat:
        pass

    int kc_flat_build(const kc_columns *t, const int32_t *code, const int32_t *map, kc_flat **out)
    void kc_flat_free(kc_flat *f)

    ctypedef struct kc_oc_prog:
        const int32_t *code
        const int32_t *map
        const kc_flat *flat

    ctypedef struct kc_oc_plan:
        int32_t n_types, n_versions
        const kc_oc_prog *keys
        const kc_oc_prog *values
        const int32_t *value_tree
        const uint8_t *raw
        int32_t members_type
        int32_t m_protocol, m_list, m_sub, m_asg
        int32_t n_protocol
        const kc_oc_prog *subscription
        const kc_oc_prog *assignment
        int32_t n_trees
        const kc_columns *trees
        const int32_t *export_prog
        int32_t n_export

    int kc_oc_plan_check(const kc_oc_plan *plan)
    int kc_oc_decode(const kc_oc_plan *plan, const kc_rows *key, const kc_rows *value,
                     size_t n, uint8_t *status, ArrowArray *out)


cdef const int32_t *_i32(object a):
    cdef const int32_t[::1] v = a
    return &v[0] if v.shape[0] else NULL


cdef class OffsetsKernel:
    """One (record types, fields, Spark types) selection's plan, checked, with its union
    trees built once; :meth:`decode` runs a batch."""
    cdef kc_oc_plan plan
    cdef kc_columns *trees
    cdef int32_t n_built
    cdef kc_oc_prog *progs
    cdef Py_ssize_t n_progs
    cdef list keep
    cdef object typ

    def __cinit__(self):
        self.trees = NULL
        self.progs = NULL
        self.n_progs = 0
        self.n_built = 0

    def __dealloc__(self):
        cdef int32_t i
        if self.progs != NULL:
            for i in range(self.n_progs):
                kc_flat_free(<kc_flat *>self.progs[i].flat)
        if self.trees != NULL:
            for i in range(self.n_built):
                kc_columns_free(&self.trees[i])
            free(self.trees)
        free(self.progs)

    def __init__(self, trees, keys, values, int n_versions, value_tree, raw, members, protocol,
                 int n_protocol, export, typ, bint flat=True):
        """``trees``: per tree ``(spec, defaults, skip)`` (kc_columns_init_nodes words, a
        ``(null, int, bytes)`` default per node, the nodes not kept); ``keys``: per record
        type ``None`` or ``(code, map, tree)``; ``values``: per (type, version) the same;
        ``members``: None or (type, protocolType, members, subscription, assignment nodes);
        ``protocol``: per embedded version ``((sub code, map), (asg code, map))`` or None;
        ``export``: the export program's words; ``typ``: the result's Arrow type; ``flat``:
        decode programs of top-level scalars and strings the flat way (kc_flat_build; the
        results are the same either way)."""
        cdef int32_t i, j, rc
        cdef kc_col *c
        cdef Py_ssize_t n_types = len(keys), n_progs
        self.keep = []
        self.typ = typ
        n_progs = n_types + len(values) + 2 * n_protocol
        self.progs = <kc_oc_prog *>calloc(max(n_progs, 1), sizeof(kc_oc_prog))
        self.n_progs = n_progs
        self.trees = <kc_columns *>calloc(max(len(trees), 1), sizeof(kc_columns))
        if self.progs == NULL or self.trees == NULL:
            raise MemoryError()
        for i, (spec, defaults, skip) in enumerate(trees):
            spec = _np.ascontiguousarray(spec, _np.int32)
            rc = kc_columns_init_nodes(&self.trees[i], _i32(spec), len(defaults))
            if rc:
                raise status_error(rc, "offsets kernel: union tree")
            self.n_built = i + 1
            if self.trees[i].n_nodes != len(defaults):
                raise ValueError("offsets kernel: tree and defaults differ")
            for j, (dnull, di, db) in enumerate(defaults):
                c = &self.trees[i].nodes[j]
                c.def_null = dnull
                c.def_i = di
                if db is not None:
                    self.keep.append(db)
                    c.def_bytes = <const uint8_t *><char *>db
                    c.def_len = len(db)
                if j in skip:
                    c.skip = 1
        self.plan.trees = self.trees
        self.plan.n_trees = len(trees)

        def prog(Py_ssize_t at, entry):
            cdef const int32_t *cp
            cdef const int32_t *mp
            cdef kc_flat *fp = NULL
            if entry is None:
                return
            code, mapping, tree = entry
            code = _np.ascontiguousarray(code, _np.int32)
            mapping = _np.ascontiguousarray(mapping, _np.int32)
            self.keep += [code, mapping]
            cp, mp = _i32(code), _i32(mapping)
            if tree < 0 or tree >= self.n_built or kc_program_check(cp, len(code)) \
                    or not kc_columns_map_check(&self.trees[tree], cp, mp, len(mapping)):
                raise ValueError(f"offsets kernel: program {at} does not fit tree {tree}")
            self.progs[at].code = cp
            self.progs[at].map = mp
            # the flat way for programs of top-level scalars and strings (most keys, offset commits)
            if flat and kc_flat_build(&self.trees[tree], cp, mp, &fp):
                raise MemoryError()
            self.progs[at].flat = fp

        for i, e in enumerate(keys):
            prog(i, e)
        for i, e in enumerate(values):
            prog(n_types + i, e)
        for i, e in enumerate(protocol):
            prog(n_types + len(values) + i, None if e is None else e[0])
            prog(n_types + len(values) + n_protocol + i, None if e is None else e[1])
        self.plan.n_types = <int32_t>n_types
        self.plan.n_versions = n_versions
        self.plan.keys = self.progs
        self.plan.values = self.progs + n_types
        self.plan.subscription = self.progs + n_types + len(values)
        self.plan.assignment = self.progs + n_types + len(values) + n_protocol
        self.plan.n_protocol = n_protocol
        vt = _np.ascontiguousarray(value_tree, _np.int32)
        rw = _np.ascontiguousarray(raw, _np.uint8)
        ex = _np.ascontiguousarray(export, _np.int32)
        self.keep += [vt, rw, ex]
        self.plan.value_tree = _i32(vt)
        cdef const uint8_t[::1] rv = rw
        self.plan.raw = &rv[0]
        self.plan.export_prog = _i32(ex)
        self.plan.n_export = <int32_t>(len(ex) // 5)
        if members is None:
            self.plan.members_type = -1
        else:
            (self.plan.members_type, self.plan.m_protocol, self.plan.m_list, self.plan.m_sub,
             self.plan.m_asg) = members
        rc = kc_oc_plan_check(&self.plan)
        if rc:
            raise status_error(rc, "offsets kernel: plan")

    @property
    def n_flat(self):
        """How many of the plan's programs decode the flat way."""
        if self.progs == NULL:
            return 0
        return sum(1 for i in range(self.n_progs) if self.progs[i].flat != NULL)

    def decode(self, key, value):
        """``(result, status)``: the result struct array (the plan's type) and per row
        kc_ocols.h's status (0: the exact path must decode the row, 1 decoded, 2 null)."""
        cdef kc_rows ki, vi
        cdef ArrowArray out
        cdef Py_ssize_t n = len(key)
        cdef int rc
        cdef uint8_t[::1] sv
        kk = _input(key, &ki)
        vk = _input(value, &vi)
        status = _np.empty(max(n, 1), _np.uint8)
        sv = status
        memset(&out, 0, sizeof(out))
        with nogil:
            rc = kc_oc_decode(&self.plan, &ki, &vi, <size_t>n, &sv[0], &out)
        if rc:
            raise status_error(rc, "__consumer_offsets batch")
        try:
            arr = _pa.Array._import_from_c(<uintptr_t>&out, self.typ)
        finally:
            if out.release != NULL:
                out.release(&out)
        return arr, status[:n]


cdef list _input(arr, kc_rows *inp):
    """Fill inp from a (Large)Binary array's buffers; what keeps them alive."""
    cdef uintptr_t at
    memset(inp, 0, sizeof(kc_rows))
    t = arr.type
    if t == _pa.large_binary() or t == _pa.large_string():
        inp.offsets_64 = 1
    elif t != _pa.binary() and t != _pa.string():
        raise TypeError(f"__consumer_offsets columns are binary, not {t}")
    bufs = arr.buffers()
    if len(arr):        # offsets from the array's first row (kc_rows has no row offset)
        at = <uintptr_t>bufs[1].address + <uintptr_t>arr.offset * (8 if inp.offsets_64 else 4)
        inp.offsets = <const void *>at
    else:
        inp.offsets = NULL
    if bufs[2] is not None and bufs[2].size:
        inp.data = <const uint8_t *><uintptr_t>bufs[2].address
        inp.data_len = <size_t>bufs[2].size
    if arr.null_count and bufs[0] is not None:
        inp.valid = <const uint8_t *><uintptr_t>bufs[0].address
        inp.valid_off = <size_t>arr.offset
    return bufs
