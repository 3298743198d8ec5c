/* Kafka Streams task assignment kernels (plain C99, no Python headers).
 *
 * kc_streams_ha_assign: Kafka 4.1.1's HighAvailabilityTaskAssignor (KIP-441), with the
 * rack-aware min-cost-flow optimisation when in->rack is given; standbys by the DefaultStandbyTaskAssignor, or with
 * client tags (n_tag_keys > 0) by the ClientTagAwareStandbyTaskAssignor (KIP-708).
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

/* ---- rack-aware assignment (KIP-925), csrc/kc_streams_rack.c ---- */
#define KC_RACK_NONE 0
#define KC_RACK_MIN_TRAFFIC 1
#define KC_RACK_BALANCE_SUBTOPOLOGY 2

#define KC_RACK_ENOPARTITIONS (-3)  /* a task to place has no (source / changelog) partitions */
#define KC_FLOW_ESINK (-4)          /* the sink has outgoing edges */
#define KC_FLOW_ESOURCE (-5)        /* the source has incoming edges */
#define KC_FLOW_ECONSERVE (-6)      /* a node's in-flow differs from its out-flow */
#define KC_FLOW_EBALANCE (-7)       /* the source's out-flow differs from the sink's in-flow */
#define KC_FLOW_ECOST (-8)          /* an edge cost of INT32_MIN: Java's cost * -1 wraps to itself and
                                     * Kafka's cycle cancelling never ends (*bad_node: the edge index) */
#define KC_FLOW_ERANGE (-9)         /* sum |cost| x capacity over the edges overflows 64 bits */
#define KC_RACK_ECOST (-10)         /* traffic_cost x partitions (+ non_overlap_cost) leaves a Java
                                     * int (Kafka would wrap) or is INT32_MIN */
#define KC_FLOW_ELIMIT (-11)        /* a solver loop hit its proven bound (a bug, never bad input) */

/* One edge of Kafka's Graph<Integer> (addEdge(u, v, capacity, cost, flow)). */
typedef struct { int32_t u, v, capacity, cost, flow; } kc_flow_edge;

/* Graph.solveMinCostFlow on edges[0..n_edges) in place (flow updated), with Kafka's checks
 * (capacity >= 0, 0 <= flow <= capacity, no edge both ways; flow conservation; source / sink
 * optional as Kafka's may be null).  *cost = totalCost(); *bad_node names the node a
 * KC_FLOW_E* error is about. */
int kc_streams_min_cost_flow(kc_flow_edge *edges, int32_t n_edges, int32_t has_source, int32_t source,
                             int32_t has_sink, int32_t sink, int64_t *cost, int32_t *bad_node);

/* Testing: 1 = scan every edge in every Bellman-Ford pass exactly as Kafka does, on the generic
 * graph (exact min_traffic too); 0 (default) = skip nodes whose distance has not changed since
 * their last scan, and exact min_traffic on the graph's structure (same result, faster). */
void kc_streams_rack_full_scan(int on);

/* Graph.calculateMaxFlow (Ford-Fulkerson, breadth-first in edge order), flows in place. */
int kc_streams_max_flow(kc_flow_edge *edges, int32_t n_edges, int32_t source, int32_t sink, int64_t *flow);

/* The RackAwareTaskAssignor's view of the clients and tasks:
 *   client_rack[c]          rack index (0..n_racks-1) of client row c,
 *   pid_order               client rows in ProcessId order (NULL: rows already are),
 *   source_miss[t * R + r]  how many source partitions of task t have no replica on rack r
 *                           (-1: the task has none; Kafka then fails), the active cost,
 *   changelog_miss          the same over changelog partitions, the standby cost (or NULL),
 *   group[t]                the task's subtopology, 0..n_groups-1 in Subtopology order
 *                           (read by balance_subtopology),
 *   tag_off/tag_ids         per client row the ids of its client tags (key=value pairs), for
 *                           the ClientTagAwareStandbyTaskAssignor's per-task move predicate
 *                           (tag_off NULL: every standby move allowed). */
typedef struct {
    int32_t strategy;
    int32_t n_racks;
    const int32_t *client_rack;
    const int32_t *pid_order;
    const int32_t *source_miss;
    const int32_t *changelog_miss;
    const int32_t *group;
    int32_t n_groups;
    int32_t traffic_cost;          /* the assignor's stateful costs (configured or its default) */
    int32_t non_overlap_cost;
    const int32_t *tag_off;
    const int32_t *tag_ids;
    int32_t n_tag_ids;
    /* 0 (fast): active graphs solved by primal-dual min-cost flow (csrc/kc_mcf.c), the optimal
     * cost Kafka reaches, maybe another optimal assignment; 1 (exact): Kafka's cycle
     * cancelling, Kafka's assignment move for move.  Standby pair graphs are always exact. */
    int32_t exact;
} kc_rack_input;

/* optimizeActiveTasks over the tasks flagged in in_list (role: C x T, rows as client_rack);
 * *cost = the solved graph's total cost. */
int kc_streams_rack_optimize_active(const kc_rack_input *in, int32_t n_clients, int32_t n_tasks,
                                    const uint8_t *in_list, uint8_t *role, int32_t traffic_cost,
                                    int32_t non_overlap_cost, int64_t *cost);
/* optimizeStandbyTasks (min_traffic graphs over pairs of clients on different racks, at most 4
 * rounds); *cost = standByTasksCost afterwards. */
int kc_streams_rack_optimize_standby(const kc_rack_input *in, int32_t n_clients, int32_t n_tasks,
                                     uint8_t *role, int32_t traffic_cost, int32_t non_overlap_cost,
                                     int64_t *cost);

typedef struct {
    int32_t n_clients;
    int32_t n_tasks;
    const uint8_t *stateful;
    const int32_t *capacity;
    const int64_t *lag;
    int32_t num_standby_replicas;
    int32_t max_warmup_replicas;
    int64_t acceptable_recovery_lag;   /* INT64_MAX: every client is caught up */
    /* ClientTagAwareStandbyTaskAssignor (all NULL / 0 for the default standby assignor):
     *   client_tag[c * n_tag_keys + k]  the client's value id (0..n_tag_values[k]-1) for the
     *                                   k-th rack.aware.assignment.tags key, or -1 if it has none,
     *   n_tag_values[k]                 distinct values of key k over all clients,
     *   move_allowed[src * C + dst]     isAllowedTaskMovement (every tag of src, configured or
     *                                   not, has the same value on dst),
     *   pending_order                   the stateful tasks in the iteration order of Kafka's
     *                                   tasksToRemainingStandbys HashMap. */
    int32_t n_tag_keys;
    const int32_t *client_tag;
    const int32_t *n_tag_values;
    const uint8_t *move_allowed;
    const int32_t *pending_order;
    int32_t n_pending_order;
    /* rack-aware optimisation (NULL: off, as when canEnableRackAwareAssignor is false) */
    const kc_rack_input *rack;
} kc_ha_input;

typedef struct {
    uint8_t *role;
    int32_t active_movements;
    int32_t standby_movements;
} kc_ha_output;

int kc_streams_ha_assign(const kc_ha_input *in, kc_ha_output *out);

/* kc_streams_standby_assign: only the HighAvailabilityTaskAssignor's standby step
 * (assignStandbyReplicaTasks) on the actives already in role[] (other roles are cleared);
 * lag and max_warmup_replicas are not read. */
int kc_streams_standby_assign(const kc_ha_input *in, uint8_t *role);

/* kc_streams_sticky_assign: Kafka 4.1.1's LegacyStickyTaskAssignor, or with
 * must_preserve_active the FallbackPriorTaskAssignor's use of it (no rack optimisation).
 *   clients 0..n_clients-1   in the iteration order of Kafka's Map<ProcessId, ClientState>,
 *   client_hash[c]           the ProcessId's spread hash (h ^ h >>> 16 of UUID.hashCode),
 *   tasks 0..n_tasks-1       in TaskId order,
 *   prev_active[t]           the client in previousActiveTaskAssignment (the last client in
 *                            map order that had t active), or -1,
 *   prev_active_order        the tasks of that HashMap in its iteration order (known tasks only),
 *   standby_offsets/clients  per task t, the clients that had it as a standby, in map order
 *                            (standby_clients[standby_offsets[t] .. standby_offsets[t+1])),
 *   unassigned_order         all tasks in the order of Kafka's HashSet copy of allTaskIds,
 *   stateful_order           the stateful tasks in the order of Kafka's statefulTaskIds set,
 *   jdk19                    1: HashSet(Collection) sizes its table as JDK 19+ does.
 * Output: role[c * n_tasks + t] KC_ROLE_NONE / ACTIVE / STANDBY. */
typedef struct {
    int32_t n_clients;
    int32_t n_tasks;
    const int32_t *capacity;
    const uint32_t *client_hash;
    const int32_t *prev_active;
    const int32_t *prev_active_order;
    int32_t n_prev_active_order;
    const int32_t *standby_offsets;
    const int32_t *standby_clients;
    const int32_t *unassigned_order;
    const int32_t *stateful_order;
    int32_t n_stateful_order;
    int32_t num_standby_replicas;
    int32_t must_preserve_active;
    int32_t jdk19;
    /* rack-aware optimisation (NULL: off; FallbackPriorTaskAssignor always passes NULL) */
    const kc_rack_input *rack;
} kc_sticky_input;

int kc_streams_sticky_assign(const kc_sticky_input *in, uint8_t *role);

#endif
