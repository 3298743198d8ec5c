# cython: language_level=3
"""Cython binding of the Streams task assignment kernels (csrc/kc_streams_*.c).

Inputs are NumPy arrays in Kafka's orders (clients by ProcessId, tasks by TaskId; see
``kcodec.streams.assignors``); the GIL is released while the C code runs.
"""
import numpy as np

from kcodec.errors import InvalidArgumentError
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

cdef extern from "kc_streams_tasks.h":
    ctypedef struct kc_rack_input:
        int32_t strategy
        int32_t n_racks
        const int32_t *client_rack
        const int32_t *pid_order
        const int32_t *source_miss
        const int32_t *changelog_miss
        const int32_t *group
        int32_t n_groups
        int32_t traffic_cost
        int32_t non_overlap_cost
        const int32_t *tag_off
        const int32_t *tag_ids
        int32_t n_tag_ids
        int32_t exact
    ctypedef struct kc_flow_edge:
        int32_t u, v, capacity, cost, flow
    int kc_streams_min_cost_flow(kc_flow_edge *edges, int32_t n_edges, int32_t has_source, int32_t source,
                                 int32_t has_sink, int32_t sink, int64_t *cost, int32_t *bad_node) nogil
    void kc_streams_rack_full_scan(int on) nogil
    int kc_streams_max_flow(kc_flow_edge *edges, int32_t n_edges, int32_t source, int32_t sink,
                            int64_t *flow) nogil
    int kc_streams_rack_optimize_active(const kc_rack_input *inp, int32_t n_clients, int32_t n_tasks,
                                        const uint8_t *in_list, uint8_t *role, int32_t traffic_cost,
                                        int32_t non_overlap_cost, int64_t *cost) nogil
    int kc_streams_rack_optimize_standby(const kc_rack_input *inp, int32_t n_clients, int32_t n_tasks,
                                         uint8_t *role, int32_t traffic_cost, int32_t non_overlap_cost,
                                         int64_t *cost) nogil
    int KC_STREAMS_EINVAL
    int KC_RACK_ENOPARTITIONS
    int KC_FLOW_ESINK
    int KC_FLOW_ESOURCE
    int KC_FLOW_ECONSERVE
    int KC_FLOW_EBALANCE
    int KC_FLOW_ECOST
    int KC_FLOW_ERANGE
    int KC_RACK_ECOST
    int KC_FLOW_ELIMIT
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
        const kc_rack_input *rack
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
        const kc_rack_input *rack
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
        self.inp.rack = NULL
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
              pending_order=None, RackInput rack=None):
    """HighAvailabilityTaskAssignor: ``(role[C, T] uint8, active_movements, standby_movements)``.

    With ``client_tag`` ((C, K) int32 value ids, -1 none), ``n_tag_values`` (K), ``move_allowed``
    ((C, C) uint8) and ``pending_order`` (stateful task indexes) standbys are placed by the
    ClientTagAwareStandbyTaskAssignor."""
    cdef _HaInput h = _HaInput(stateful, capacity, lag, num_standby_replicas, max_warmup_replicas,
                               acceptable_recovery_lag, client_tag, n_tag_values, move_allowed, pending_order)
    role = np.zeros((h.inp.n_clients, h.inp.n_tasks), dtype=np.uint8)
    cdef uint8_t[:, ::1] rl = role
    cdef kc_ha_output out
    _attach(rack, h)
    out.role = &rl[0, 0] if h.inp.n_tasks else &h.d8
    out.active_movements = 0
    out.standby_movements = 0
    cdef int rc
    with nogil:
        rc = kc_streams_ha_assign(&h.inp, &out)
    _check(rc, "kc_streams_ha_assign")
    return role, out.active_movements, out.standby_movements


def standby_assign(stateful, capacity, role, int num_standby_replicas, client_tag=None, n_tag_values=None,
                   move_allowed=None, pending_order=None, RackInput rack=None):
    """The HighAvailabilityTaskAssignor's standby step alone, on the actives (role 1) of
    ``role[C, T]``: a new role array with the standbys (2) added."""
    out_role = np.ascontiguousarray(role, dtype=np.uint8).copy()
    if out_role.ndim != 2:
        raise ValueError("role must be a (clients, tasks) array")
    cdef _HaInput h = _HaInput(stateful, capacity, np.zeros(out_role.shape, dtype=np.int64), num_standby_replicas,
                               1, 0, client_tag, n_tag_values, move_allowed, pending_order)
    _attach(rack, h)
    cdef uint8_t[:, ::1] rl = out_role
    cdef uint8_t *p = &rl[0, 0] if h.inp.n_tasks else &h.d8
    cdef int rc
    with nogil:
        rc = kc_streams_standby_assign(&h.inp, p)
    _check(rc, "kc_streams_standby_assign")
    return out_role


cdef _attach(RackInput rack, _HaInput h):
    if rack is None:
        return
    if rack.n_clients != h.inp.n_clients or rack.n_tasks != h.inp.n_tasks:
        raise ValueError("rack input sized for other clients / tasks")
    h.keep.append(rack)
    h.inp.rack = &rack.inp


cdef _check(int rc, str what):
    if rc in (KC_RACK_ENOPARTITIONS, KC_RACK_ECOST, KC_FLOW_ELIMIT):
        _rack_check(rc, what)
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError(what)
    if rc != 0:
        raise ValueError("invalid input to the HighAvailabilityTaskAssignor (capacities >= 1, "
                         "non-negative configs, tag value ids in range)")


cdef const int32_t *_ptr32(const int32_t[::1] a, const int32_t *dummy):
    return &a[0] if a.shape[0] else dummy


def sticky_assign(capacity, client_hash, prev_active, prev_active_order, standby_offsets,
                  standby_clients, unassigned_order, stateful_order, int num_standby_replicas,
                  bint must_preserve_active, bint jdk19=False, RackInput rack=None):
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
    inp.rack = NULL
    if rack is not None:
        if rack.n_clients != C or rack.n_tasks != T:
            raise ValueError("rack input sized for other clients / tasks")
        inp.rack = &rack.inp
    cdef uint8_t *out = &rl[0, 0] if T else &d8
    cdef int rc
    with nogil:
        rc = kc_streams_sticky_assign(&inp, out)
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError("kc_streams_sticky_assign")
    if rc in (KC_RACK_ENOPARTITIONS, KC_RACK_ECOST, KC_FLOW_ELIMIT):
        _rack_check(rc, "LegacyStickyTaskAssignor")
    if rc != 0:
        raise ValueError("invalid input to the LegacyStickyTaskAssignor (capacities >= 1, "
                         "num.standby.replicas >= 0, fewer than 46342 tasks)")
    return role


cdef class RackInput:
    """The arrays behind one kc_rack_input (see kc_streams_tasks.h), checked against the
    client and task counts."""
    cdef kc_rack_input inp
    cdef object keep
    cdef readonly int n_clients, n_tasks

    def __init__(self, int n_clients, int n_tasks, int strategy, client_rack, int n_racks, source_miss,
                 changelog_miss, group, int n_groups, int traffic_cost, int non_overlap_cost,
                 pid_order=None, tag_off=None, tag_ids=None, int n_tag_ids=0, bint exact=False):
        if strategy not in (1, 2):
            raise ValueError("strategy must be 1 (min_traffic) or 2 (balance_subtopology)")
        if n_clients <= 0 or n_tasks < 0 or n_racks <= 0:
            raise ValueError("need clients and racks")
        cdef const int32_t[::1] cr = np.ascontiguousarray(client_rack, dtype=np.int32)
        sm = np.ascontiguousarray(source_miss, dtype=np.int32)
        if cr.shape[0] != n_clients or sm.shape != (n_tasks, n_racks):
            raise ValueError("client_rack must be (clients,) and source_miss (tasks, racks)")
        if np.any(np.asarray(cr) < 0) or np.any(np.asarray(cr) >= n_racks):
            raise ValueError("client rack index out of range")
        cdef const int32_t[:, ::1] smv = sm
        cdef const int32_t[:, ::1] cmv
        cdef const int32_t[::1] gv = np.ascontiguousarray(group if group is not None else np.zeros(n_tasks),
                                                         dtype=np.int32)
        if gv.shape[0] != n_tasks or (n_tasks and (np.min(gv) < 0 or np.max(gv) >= max(n_groups, 1))):
            raise ValueError("group must give every task a subtopology index below n_groups")
        self.keep = [cr, smv, gv]
        self.n_clients = n_clients
        self.n_tasks = n_tasks
        memset_rack(&self.inp)
        self.inp.strategy = strategy
        self.inp.n_racks = n_racks
        self.inp.client_rack = &cr[0]
        self.inp.source_miss = &smv[0, 0] if n_tasks else NULL
        self.inp.group = &gv[0] if n_tasks else NULL
        self.inp.n_groups = n_groups
        self.inp.traffic_cost = traffic_cost
        self.inp.non_overlap_cost = non_overlap_cost
        self.inp.exact = exact
        cdef const int32_t[::1] po
        cdef const int32_t[::1] to
        cdef const int32_t[::1] ti
        if changelog_miss is not None:
            cm = np.ascontiguousarray(changelog_miss, dtype=np.int32)
            if cm.shape != (n_tasks, n_racks):
                raise ValueError("changelog_miss must be (tasks, racks)")
            cmv = cm
            self.keep.append(cmv)
            self.inp.changelog_miss = &cmv[0, 0] if n_tasks else NULL
        if pid_order is not None:
            po = np.ascontiguousarray(pid_order, dtype=np.int32)
            if po.shape[0] != n_clients or sorted(np.asarray(po).tolist()) != list(range(n_clients)):
                raise ValueError("pid_order must be a permutation of the client rows")
            self.keep.append(po)
            self.inp.pid_order = &po[0]
        if tag_off is not None:
            to = np.ascontiguousarray(tag_off, dtype=np.int32)
            ti = np.ascontiguousarray(tag_ids if tag_ids is not None else [], dtype=np.int32)
            if to.shape[0] != n_clients + 1 or to[0] != 0 or to[n_clients] != ti.shape[0] \
                    or np.any(np.diff(np.asarray(to)) < 0):
                raise ValueError("tag_off must run from 0 to len(tag_ids) over clients + 1 entries")
            if ti.shape[0] and (np.min(ti) < 0 or np.max(ti) >= n_tag_ids):
                raise ValueError("tag id out of range")
            self.keep += [to, ti]
            self.inp.tag_off = &to[0]
            self.inp.tag_ids = &ti[0] if ti.shape[0] else &to[0]
            self.inp.n_tag_ids = n_tag_ids


cdef void memset_rack(kc_rack_input *p):
    p.strategy = 0
    p.n_racks = 0
    p.client_rack = NULL
    p.pid_order = NULL
    p.source_miss = NULL
    p.changelog_miss = NULL
    p.group = NULL
    p.n_groups = 0
    p.traffic_cost = 0
    p.non_overlap_cost = 0
    p.tag_off = NULL
    p.tag_ids = NULL
    p.n_tag_ids = 0
    p.exact = 0


cdef _rack_check(int rc, str what):
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError(what)
    if rc == KC_RACK_ECOST:
        raise InvalidArgumentError("rack.aware.assignment.traffic_cost", f"{what}: rack.aware.assignment.traffic_cost x a task's off-rack partitions "
                            "(+ rack.aware.assignment.non_overlap_cost) leaves the range of a Java int or is "
                            "-2**31 (Kafka would wrap it, or cancel cycles for ever)")
    if rc == KC_FLOW_ELIMIT:
        raise RuntimeError(f"{what}: the min-cost-flow solver passed its proven iteration bound (a kcodec bug)")
    if rc == KC_RACK_ENOPARTITIONS:
        raise ValueError(f"{what}: a task to place has no partitions to cost (Kafka: 'Task ... has no "
                         "TopicPartitions')")
    if rc != 0:
        raise ValueError(f"{what}: invalid assignment (a task on no client or on two clients)")


cdef _role_copy(RackInput rack, role):
    out = np.ascontiguousarray(role, dtype=np.uint8).copy()
    if out.shape != (rack.n_clients, rack.n_tasks):
        raise ValueError("role must be (clients, tasks)")
    return out


def rack_optimize_active(RackInput rack, role, in_list, int traffic_cost, int non_overlap_cost):
    """RackAwareTaskAssignor.optimizeActiveTasks over the tasks flagged in ``in_list``:
    ``(new role[C, T], cost)``."""
    out = _role_copy(rack, role)
    cdef const uint8_t[::1] fl = np.ascontiguousarray(in_list, dtype=np.uint8)
    if fl.shape[0] != rack.n_tasks:
        raise ValueError("in_list must be (tasks,)")
    cdef uint8_t[:, ::1] rl = out
    cdef uint8_t d8 = 0
    cdef int64_t cost = 0
    cdef int rc
    cdef uint8_t *rp = &rl[0, 0] if rack.n_tasks else &d8
    cdef const uint8_t *fp = &fl[0] if rack.n_tasks else &d8
    with nogil:
        rc = kc_streams_rack_optimize_active(&rack.inp, rack.n_clients, rack.n_tasks, fp, rp,
                                             traffic_cost, non_overlap_cost, &cost)
    _rack_check(rc, "optimizeActiveTasks")
    return out, cost


def rack_optimize_standby(RackInput rack, role, int traffic_cost, int non_overlap_cost):
    """RackAwareTaskAssignor.optimizeStandbyTasks: ``(new role[C, T], standby cost)``."""
    out = _role_copy(rack, role)
    cdef uint8_t[:, ::1] rl = out
    cdef uint8_t d8 = 0
    cdef int64_t cost = 0
    cdef int rc
    cdef uint8_t *rp = &rl[0, 0] if rack.n_tasks else &d8
    with nogil:
        rc = kc_streams_rack_optimize_standby(&rack.inp, rack.n_clients, rack.n_tasks, rp, traffic_cost,
                                              non_overlap_cost, &cost)
    _rack_check(rc, "optimizeStandbyTasks")
    return out, cost


cdef _edges32(edges):
    arr = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 5)
    if arr.size and (arr.min() < -(1 << 31) or arr.max() >= (1 << 31)):
        raise ValueError("edge fields must fit a Java int")
    return np.ascontiguousarray(arr, dtype=np.int32)


def max_flow(edges, int source, int sink):
    """Kafka's ``Graph.calculateMaxFlow``: ``(flows, max_flow)``."""
    a32 = _edges32(edges)
    cdef int32_t[:, ::1] ev = a32
    cdef int32_t n = <int32_t>a32.shape[0]
    cdef int64_t total = 0
    cdef int rc
    cdef kc_flow_edge *ep = <kc_flow_edge *>&ev[0, 0] if n else NULL
    with nogil:
        rc = kc_streams_max_flow(ep, n, source, sink, &total)
    if rc != 0:
        raise _flow_error(rc, 0, "max_flow")
    return a32[:, 4].astype(np.int64), total


cdef object _flow_error(int rc, int32_t bad, str what):
    """The exception for a flow solver's status (Kafka's Graph throws these)."""
    if rc == KC_STREAMS_ENOMEM:
        return MemoryError(what)
    if rc == KC_FLOW_ESINK:
        return ValueError(f"sink node {bad} shouldn't have output")
    if rc == KC_FLOW_ESOURCE:
        return ValueError(f"source node {bad} shouldn't have input")
    if rc == KC_FLOW_ECONSERVE:
        return ValueError(f"input flow for node {bad} doesn't match its output flow")
    if rc == KC_FLOW_EBALANCE:
        return ValueError("output flow of the source doesn't match input flow of the sink")
    if rc == KC_FLOW_ECOST:
        return InvalidArgumentError(f"edges[{bad}].cost", f"edge {bad} has cost -2**31: its residual edge's cost cannot be negated (Java "
                             "wraps it to -2**31 again and Kafka's cycle cancelling never ends)")
    if rc == KC_FLOW_ERANGE:
        return InvalidArgumentError("edges", "the edges' |cost| x capacity sum overflows 64 bits")
    if rc == KC_FLOW_ELIMIT:
        return RuntimeError(f"{what}: the solver passed its proven iteration bound (a kcodec bug)")
    return ValueError("invalid graph: negative capacity or flow, flow above capacity, a self loop, "
                      "a repeated edge or an edge both ways")


def min_cost_flow(edges, source=None, sink=None):
    """Kafka's ``Graph.solveMinCostFlow``: ``edges`` rows ``(u, v, capacity, cost, flow)``;
    returns ``(flows, total_cost)``."""
    a32 = _edges32(edges)
    cdef int32_t[:, ::1] ev = a32
    cdef int32_t n = <int32_t>a32.shape[0]
    cdef int32_t src = 0 if source is None else source
    cdef int32_t snk = 0 if sink is None else sink
    cdef int32_t hs = source is not None, ht = sink is not None
    cdef int64_t cost = 0
    cdef int32_t bad = 0
    cdef int rc
    cdef kc_flow_edge *ep = <kc_flow_edge *>&ev[0, 0] if n else NULL
    with nogil:
        rc = kc_streams_min_cost_flow(ep, n, hs, src, ht, snk, &cost, &bad)
    if rc != 0:
        raise _flow_error(rc, bad, "min_cost_flow")
    return a32[:, 4].astype(np.int64), cost


def _rack_full_scan(bint on):
    """Testing: make the Bellman-Ford search scan every edge of every pass, as Kafka does."""
    kc_streams_rack_full_scan(on)
