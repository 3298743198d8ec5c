# cython: language_level=3
"""Cython binding of the Streams task assignment kernels (csrc/kc_streams_*.c).

Inputs are NumPy arrays in Kafka's orders (clients by ProcessId, tasks by TaskId; see
``kcodec.streams.assignors``); the GIL is released while the C code runs.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t

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
    ctypedef struct kc_ha_output:
        uint8_t *role
        int32_t active_movements
        int32_t standby_movements
    int kc_streams_ha_assign(const kc_ha_input *inp, kc_ha_output *out) nogil
    int KC_STREAMS_ENOMEM

ROLE_NONE, ROLE_ACTIVE, ROLE_STANDBY, ROLE_WARMUP = 0, 1, 2, 3


def ha_assign(stateful, capacity, lag, int num_standby_replicas, int max_warmup_replicas,
              int64_t acceptable_recovery_lag):
    """HighAvailabilityTaskAssignor: ``(role[C, T] uint8, active_movements, standby_movements)``."""
    cdef uint8_t[::1] st = np.ascontiguousarray(stateful, dtype=np.uint8)
    cdef int32_t[::1] cap = np.ascontiguousarray(capacity, dtype=np.int32)
    lag_a = np.ascontiguousarray(lag, dtype=np.int64)
    if lag_a.ndim != 2 or lag_a.shape[0] != cap.shape[0] or lag_a.shape[1] != st.shape[0]:
        raise ValueError("lag must be a (clients, tasks) array")
    if cap.shape[0] == 0:
        raise ValueError("no clients")
    cdef int64_t[:, ::1] lg = lag_a
    role = np.zeros((cap.shape[0], st.shape[0]), dtype=np.uint8)
    cdef uint8_t[:, ::1] rl = role
    cdef kc_ha_input inp
    cdef kc_ha_output out
    cdef uint8_t dummy8 = 0
    cdef int64_t dummy64 = 0
    inp.n_clients = <int32_t>cap.shape[0]
    inp.n_tasks = <int32_t>st.shape[0]
    inp.stateful = &st[0] if st.shape[0] else &dummy8
    inp.capacity = &cap[0]
    inp.lag = &lg[0, 0] if st.shape[0] else &dummy64
    inp.num_standby_replicas = num_standby_replicas
    inp.max_warmup_replicas = max_warmup_replicas
    inp.acceptable_recovery_lag = acceptable_recovery_lag
    out.role = &rl[0, 0] if st.shape[0] else &dummy8
    out.active_movements = 0
    out.standby_movements = 0
    cdef int rc
    with nogil:
        rc = kc_streams_ha_assign(&inp, &out)
    if rc == KC_STREAMS_ENOMEM:
        raise MemoryError("kc_streams_ha_assign")
    if rc != 0:
        raise ValueError("invalid input to the HighAvailabilityTaskAssignor (capacities >= 1, "
                         "non-negative configs)")
    return role, out.active_movements, out.standby_movements
