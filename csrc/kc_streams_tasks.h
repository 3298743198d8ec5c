/* Kafka Streams task assignment kernels (plain C99, no Python headers).
 *
 * kc_streams_ha_assign: Kafka 4.1.1's HighAvailabilityTaskAssignor (KIP-441) for the
 * default configuration (no rack-aware optimisation, DefaultStandbyTaskAssignor).
 *
 * Layout of the inputs (the caller sorts, the kernel never compares ids):
 *   clients 0..n_clients-1 in ProcessId order (java.util.UUID.compareTo),
 *   tasks   0..n_tasks-1   in TaskId order (TaskId.compareTo),
 *   stateful[t]            1 for a stateful task (has changelogs), else 0,
 *   capacity[c]            the client's stream threads (>= 1),
 *   lag[c * n_tasks + t]   the client's lag on stateful task t, as ClientState.computeTaskLags
 *                          gives it: -2 running active, -3 unknown offset sum, else >= 0.
 * Output:
 *   role[c * n_tasks + t]  KC_ROLE_NONE / ACTIVE / STANDBY / WARMUP (a standby kept or added
 *                          only to warm up state for a later probing rebalance).
 *   active_movements, standby_movements: the movements scheduled; > 0 means Kafka asks for a
 *                          probing rebalance.
 * Returns 0, or KC_STREAMS_EINVAL / KC_STREAMS_ENOMEM (nothing else is written then).
 */
#ifndef KC_STREAMS_TASKS_H
#define KC_STREAMS_TASKS_H

#include <stdint.h>

#define KC_ROLE_NONE 0
#define KC_ROLE_ACTIVE 1
#define KC_ROLE_STANDBY 2
#define KC_ROLE_WARMUP 3

#define KC_STREAMS_EINVAL (-1)
#define KC_STREAMS_ENOMEM (-2)

typedef struct {
    int32_t n_clients;
    int32_t n_tasks;
    const uint8_t *stateful;
    const int32_t *capacity;
    const int64_t *lag;
    int32_t num_standby_replicas;
    int32_t max_warmup_replicas;
    int64_t acceptable_recovery_lag;   /* INT64_MAX: every client is caught up */
} kc_ha_input;

typedef struct {
    uint8_t *role;
    int32_t active_movements;
    int32_t standby_movements;
} kc_ha_output;

int kc_streams_ha_assign(const kc_ha_input *in, kc_ha_output *out);

#endif
