# cython: language_level=3
"""Cython binding of the Streams task assignment kernels (csrc/kc_streams_*.c).

Inputs are NumPy arrays in Kafka's orders (clients by ProcessId, tasks by TaskId; see
``kcodec.streams.assignors``); the GIL is released while the C code runs.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

cdef extern from "kc_streams_tasks.h":
    ctypedef struct kc_ha_input:
        int32_t n_clients
        int32_t n_tasks
        const uint8_t *stateful
        const int32_t *capacity
        const int64_t *lag
        int32_t num_standby_replicas
        int32_t max_warmup_replicas
        int64_t acceptable_recovery_lag
        int32_t n_tag_keys
        const int32_t *client_tag
        const int32_t *n_tag_values
        const uint8_t *move_allowed
        const int32_t *pending_order
        int32_t n_pending_order
    ctypedef struct kc_ha_output:
        uint8_t *role
        int32_t active_movements
        int32_t standby_movements
    int kc_streams_ha_assign(const kc_ha_input *inp, kc_ha_output *out) nogil
    int kc_streams_standby_assign(const kc_ha_input *inp, uint8_t *role) nogil
    ctypedef struct kc_sticky_input:
        int32_t n_clients
        int32_t n_tasks
        const int32_t *capacity
        const uint32_t *client_hash
        const int32_t *prev_active
        const int32_t *prev_active_order
        int32_t n_prev_active_order
        const int32_t *standby_offsets
        const int32_t *standby_clients
        const int32_t *unassigned_order
        const int32_t *stateful_order
        int32_t n_stateful_order
        int32_t num_standby_replicas
        int32_t must_preserve_active
        int32_t jdk19
    int kc_streams_sticky_assign(const kc_sticky_input *inp, uint8_t *role) nogil
    int KC_STREAMS_ENOMEM

ROLE_NONE, ROLE_ACTIVE, ROLE_STANDBY, ROLE_WARMUP = 0, 1, 2, 3


cdef class _HaInput:
    """The arrays behind one kc_ha_input (kept alive while the kernel runs)."""
    cdef kc_ha_input inp
    cdef object keep
    cdef uint8_t d8
    cdef int64_t d64
    cdef int32_t d32

    def __init__(self, stateful, capacity, lag, int num_standby_replicas, int max_warmup_replicas,
                 int64_t acceptable_recovery_lag, client_tag, n_tag_values, move_allowed, pending_order):
        cdef const uint8_t[::1] st = np.ascontiguousarray(stateful, dtype=np.uint8)
        cdef const int32_t[::1] cap = np.ascontiguousarray(capacity, dtype=np.int32)
        lag_a = np.ascontiguousarray(lag, dtype=np.int64)
        if lag_a.ndim != 2 or lag_a.shape[0] != cap.shape[0] or lag_a.shape[1] != st.shape[0]:
            raise ValueError("lag must be a (clients, tasks) array")
        if cap.shape[0] == 0:
            raise ValueError("no clients")
        cdef const int64_t[:, ::1] lg = lag_a
        self.keep = [st, cap, lg]
        self.d8 = 0
        self.d64 = 0
        self.d32 = 0
        self.inp.n_clients = <int32_t>cap.shape[0]
        self.inp.n_tasks = <int32_t>st.shape[0]
        self.inp.stateful = &st[0] if st.shape[0] else &self.d8
        self.inp.capacity = &cap[0]
        self.inp.lag = &lg[0, 0] if st.shape[0] else &self.d64
        self.inp.num_standby_replicas = num_standby_replicas
        self.inp.max_warmup_replicas = max_warmup_replicas
        self.inp.acceptable_recovery_lag = acceptable_recovery_lag
        self.inp.n_tag_keys = 0
        self.inp.client_tag = NULL
        self.inp.n_tag_values = NULL
        self.inp.move_allowed = NULL
        self.inp.pending_order = NULL
        self.inp.n_pending_order = 0
        if client_tag is None:
            return
        cdef const int32_t[:, ::1] ctag = np.ascontiguousarray(client_tag, dtype=np.int32)
        cdef const int32_t[::1] nval = np.ascontiguousarray(n_tag_values, dtype=np.int32)
        cdef const uint8_t[:, ::1] allowed = np.ascontiguousarray(move_allowed, dtype=np.uint8)
        cdef const int32_t[::1] pend = np.ascontiguousarray(pending_order, dtype=np.int32)
        if (ctag.shape[0] != cap.shape[0] or ctag.shape[1] != nval.shape[0] or allowed.shape[0] != cap.shape[0]
                or allowed.shape[1] != cap.shape[0]):
            raise ValueError("client tag arrays must be (clients, keys), (keys,) and (clients, clients)")
        self.keep += [ctag, nval, allowed, pend]
        if nval.shape[0] > 0:
            self.inp.n_tag_keys = <int32_t>nval.shape[0]
            self.inp.client_tag = &ctag[0, 0]
            self.inp.n_tag_values = &nval[0]
            self.inp.move_allowed = &allowed[0, 0]
            self.inp.pending_order = &pend[0] if pend.shape[0] else &self.d32
            self.inp.n_pending_order = <int32_t>pend.shape[0]


def ha_assign(stateful, capacity, lag, int num_standby_replicas, int max_warmup_replicas,
              int64_t acceptable_recovery_lag, client_tag=None, n_tag_values=None, move_allowed=None,
              pending_order=None):
    """HighAvailabilityTaskAssignor: ``(role[C, T] uint8, active_movements, standby_movements)``.

    With ``client_tag`` ((C, K) int32 value ids, -1 none), ``n_tag_values`` (K), ``move_allowed``
    ((C, C) uint8) and ``pending_order`` (stateful task indexes) standbys are placed by the
    ClientTagAwareStandbyTaskAssignor."""
    cdef _HaInput h = _HaInput(stateful, capacity, lag, num_standby_replicas, max_warmup_replicas,
                               acceptable_recovery_lag, client_tag, n_tag_values, move_allowed, pending_order)
    role = np.zeros((h.inp.n_clients, h.inp.n_tasks), dtype=np.uint8)
    cdef uint8_t[:, ::1] rl = role
    cdef kc_ha_output out
    out.role = &rl[0, 0] if h.inp.n_tasks else &h.d8
    out.active_movements = 0
    out.standby_movements = 0
    cdef int rc
    with nogil:
        rc = kc_streams_ha_assign(&h.inp, &out)
    _check(rc, "kc_streams_ha_assign")
    return role, out.active_movements, out.standby_movements


def standby_assign(stateful, capacity, role, int num_standby_replicas, client_tag=None, n_tag_values=None,
                   move_allowed=None, pending_order=None):
    """The HighAvailabilityTaskAssignor's standby step alone, on the actives (role 1) of
    ``role[C, T]``: a new role array with the standbys (2) added."""
    out_role = np.ascontiguousarray(role, dtype=np.uint8).copy()
    if out_role.ndim != 2:
        raise ValueError("role must be a (clients, tasks) array")
    cdef _HaInput h = _HaInput(stateful, capacity, np.zeros(out_role.shape, dtype=np.int64), num_standby_replicas,
                               1, 0, client_tag, n_tag_values, move_allowed, pending_order)
    cdef uint8_t[:, ::1] rl = out_role
    cdef uint8_t *p = &rl[0, 0] if h.inp.n_tasks else &h.d8
    cdef int rc
    with nogil:
        rc = kc_streams_standby_assign(&h.inp, p)
    _check(rc, "kc_streams_standby_assign")
    return out_role


cdef _check(int rc, str what):
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError(what)
    if rc != 0:
        raise ValueError("invalid input to the HighAvailabilityTaskAssignor (capacities >= 1, "
                         "non-negative configs, tag value ids in range)")


cdef const int32_t *_ptr32(const int32_t[::1] a, const int32_t *dummy):
    return &a[0] if a.shape[0] else dummy


def sticky_assign(capacity, client_hash, prev_active, prev_active_order, standby_offsets,
                  standby_clients, unassigned_order, stateful_order, int num_standby_replicas,
                  bint must_preserve_active, bint jdk19=False):
    """LegacyStickyTaskAssignor (FallbackPriorTaskAssignor with ``must_preserve_active``):
    ``role[C, T]`` uint8 (0 none, 1 active, 2 standby).  Orders as kc_streams_tasks.h says."""
    cdef const int32_t[::1] cap = np.ascontiguousarray(capacity, dtype=np.int32)
    cdef const uint32_t[::1] ch = np.ascontiguousarray(client_hash, dtype=np.uint32)
    cdef const int32_t[::1] pa = np.ascontiguousarray(prev_active, dtype=np.int32)
    cdef const int32_t[::1] pao = np.ascontiguousarray(prev_active_order, dtype=np.int32)
    cdef const int32_t[::1] so = np.ascontiguousarray(standby_offsets, dtype=np.int32)
    cdef const int32_t[::1] sc = np.ascontiguousarray(standby_clients, dtype=np.int32)
    cdef const int32_t[::1] uo = np.ascontiguousarray(unassigned_order, dtype=np.int32)
    cdef const int32_t[::1] sto = np.ascontiguousarray(stateful_order, dtype=np.int32)
    cdef Py_ssize_t C = cap.shape[0], T = pa.shape[0]
    if C == 0:
        raise ValueError("no clients")
    if ch.shape[0] != C or so.shape[0] != T + 1 or uo.shape[0] != T:
        raise ValueError("array sizes do not match (clients, tasks)")
    if so[0] != 0 or so[T] != sc.shape[0]:
        raise ValueError("standby_offsets must run from 0 to len(standby_clients)")
    cdef Py_ssize_t i
    for i in range(T):
        if so[i] > so[i + 1] or pa[i] < -1 or pa[i] >= C or uo[i] < 0 or uo[i] >= T:
            raise ValueError("bad task row %d" % i)
    for i in range(sc.shape[0]):
        if sc[i] < 0 or sc[i] >= C:
            raise ValueError("bad standby client")
    for i in range(pao.shape[0]):
        if pao[i] < 0 or pao[i] >= T or pa[pao[i]] < 0:
            raise ValueError("prev_active_order names a task without a previous owner")
    for i in range(sto.shape[0]):
        if sto[i] < 0 or sto[i] >= T:
            raise ValueError("bad stateful task")
    role = np.zeros((C, T), dtype=np.uint8)
    cdef uint8_t[:, ::1] rl = role
    cdef int32_t d32 = 0
    cdef uint8_t d8 = 0
    cdef kc_sticky_input inp
    inp.n_clients = <int32_t>C
    inp.n_tasks = <int32_t>T
    inp.capacity = &cap[0]
    inp.client_hash = &ch[0]
    inp.prev_active = _ptr32(pa, &d32)
    inp.prev_active_order = _ptr32(pao, &d32)
    inp.n_prev_active_order = <int32_t>pao.shape[0]
    inp.standby_offsets = &so[0]
    inp.standby_clients = _ptr32(sc, &d32)
    inp.unassigned_order = _ptr32(uo, &d32)
    inp.stateful_order = _ptr32(sto, &d32)
    inp.n_stateful_order = <int32_t>sto.shape[0]
    inp.num_standby_replicas = num_standby_replicas
    inp.must_preserve_active = must_preserve_active
    inp.jdk19 = jdk19
    cdef uint8_t *out = &rl[0, 0] if T else &d8
    cdef int rc
    with nogil:
        rc = kc_streams_sticky_assign(&inp, out)
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError("kc_streams_sticky_assign")
    if rc != 0:
        raise ValueError("invalid input to the LegacyStickyTaskAssignor (capacities >= 1, "
                         "num.standby.replicas >= 0, fewer than 46342 tasks)")
    return role
