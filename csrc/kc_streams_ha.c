/* Kafka Streams' HighAvailabilityTaskAssignor (KIP-441), as Kafka 4.1.1 runs it by default.
 * See kc_streams_tasks.h for the layout.  Client and task indexes are already in Kafka's
 * ProcessId / TaskId order, so "smallest index" is Kafka's tie-break everywhere. */
#include "kc_streams_tasks.h"

#include <stdlib.h>
#include <string.h>

#define LATEST_OFFSET (-2)

typedef struct {
    int32_t C, T;
    uint8_t *role;
    int32_t *nact, *nstb;
    const int32_t *cap;
    const int64_t *lag;
    const uint8_t *allowed;    /* standby movement predicate, or NULL */
} st;

#define ROLE(s, c, t) ((s)->role[(size_t)(c) * (size_t)(s)->T + (size_t)(t)])
#define LAG(s, c, t) ((s)->lag[(size_t)(c) * (size_t)(s)->T + (size_t)(t)])

static double load(const st *s, int32_t c) {          /* ClientState.assignedTaskLoad */
    return (double)(s->nact[c] + s->nstb[c]) / (double)s->cap[c];
}

static double active_load(const st *s, int32_t c) {   /* ClientState.activeTaskLoad */
    return (double)s->nact[c] / (double)s->cap[c];
}

static void set_role(st *s, int32_t c, int32_t t, uint8_t r) {
    uint8_t old = ROLE(s, c, t);
    if (old == KC_ROLE_ACTIVE) s->nact[c]--;
    else if (old != KC_ROLE_NONE) s->nstb[c]--;
    if (r == KC_ROLE_ACTIVE) s->nact[c]++;
    else if (r != KC_ROLE_NONE) s->nstb[c]++;
    ROLE(s, c, t) = r;
}

/* HighAvailabilityTaskAssignor.shouldMoveATask */
static int should_move(const st *s, int32_t src, int32_t dst) {
    double skew = load(s, src) - load(s, dst);
    if (skew <= 0) return 0;
    double at_dst = ((double)(s->nact[dst] + s->nstb[dst]) + 1.0) / (double)s->cap[dst];
    double at_src = ((double)(s->nact[src] + s->nstb[src]) - 1.0) / (double)s->cap[src];
    double proposed = at_src - at_dst;
    if (proposed < 0) return 0;
    return proposed < skew;
}

/* balanceTasksOverThreads: move tasks of one kind (active or standby) from more to less
 * loaded clients, source tasks in TaskId order, until a full pass moves nothing. */
static void balance(st *s, int standby) {
    int keep = 1;
    while (keep) {
        keep = 0;
        for (int32_t a = 0; a < s->C; a++) {
            for (int32_t b = 0; b < s->C; b++) {
                if (a == b || !should_move(s, a, b)) continue;
                /* the tag-aware standby assignor only moves between clients with equal tags */
                if (standby && s->allowed && !s->allowed[(size_t)a * (size_t)s->C + (size_t)b]) continue;
                for (int32_t t = 0; t < s->T && should_move(s, a, b); t++) {
                    uint8_t r = ROLE(s, a, t);
                    int mine = standby ? (r == KC_ROLE_STANDBY || r == KC_ROLE_WARMUP) : r == KC_ROLE_ACTIVE;
                    if (!mine || ROLE(s, b, t) != KC_ROLE_NONE) continue;
                    set_role(s, a, t, KC_ROLE_NONE);
                    set_role(s, b, t, standby ? KC_ROLE_STANDBY : KC_ROLE_ACTIVE);
                    keep = 1;
                }
            }
        }
    }
}

/* ---- java.util.PriorityQueue of task movements, ordered by (caught-up clients, task) ---- */
typedef struct { int32_t ncaught, task, dest; } mv;

static int mv_cmp(const mv *x, const mv *y) {
    if (x->ncaught != y->ncaught) return x->ncaught < y->ncaught ? -1 : 1;
    if (x->task != y->task) return x->task < y->task ? -1 : 1;
    return 0;
}

static void pq_add(mv *q, int32_t *n, mv x) {      /* PriorityQueue.offer (siftUp) */
    int32_t k = (*n)++;
    while (k > 0) {
        int32_t parent = (k - 1) >> 1;
        if (mv_cmp(&x, &q[parent]) >= 0) break;
        q[k] = q[parent];
        k = parent;
    }
    q[k] = x;
}

static mv pq_poll(mv *q, int32_t *n) {             /* PriorityQueue.poll (siftDown) */
    mv result = q[0];
    int32_t size = --(*n);
    if (size > 0) {
        mv x = q[size];
        int32_t k = 0, half = size >> 1;
        while (k < half) {
            int32_t child = 2 * k + 1, right = child + 1;
            if (right < size && mv_cmp(&q[child], &q[right]) > 0) child = right;
            if (mv_cmp(&x, &q[child]) <= 0) break;
            q[k] = q[child];
            k = child;
        }
        q[k] = x;
    }
    return result;
}

/* ---- the assignment ---- */
typedef struct {
    const uint8_t *caught;     /* caught[c * T + t] */
    int64_t *best_lag;         /* per task: the smallest lag of any client */
} lags;

static int is_caught(const st *s, const lags *l, int32_t c, int32_t t) {
    return l->caught[(size_t)c * (size_t)s->T + (size_t)t];
}

/* mostCaughtUpEligibleClient: clients in (lag, ProcessId) order up to the destination. */
static int32_t most_caught_up(const st *s, int32_t t, int32_t dest, int need_free) {
    int64_t dl = LAG(s, dest, t);
    int32_t best = -1;
    int64_t bl = 0;
    for (int32_t c = 0; c < s->C; c++) {
        int64_t cl = LAG(s, c, t);
        if (!(cl < dl || (cl == dl && c < dest))) continue;      /* not ahead of the destination */
        if (need_free && ROLE(s, c, t) != KC_ROLE_NONE) continue;
        if (best < 0 || cl < bl) { best = c; bl = cl; }
    }
    return best;
}

/* The least loaded caught-up client for task t (ConstrainedPrioritySet.poll: smallest
 * (load, ProcessId)); want: 0 any, 1 holding a standby of t, 2 not holding t at all. */
static int32_t least_loaded_caught_up(const st *s, const lags *l, int32_t t, int want) {
    int32_t src = -1;
    double sl = 0;
    for (int32_t c = 0; c < s->C; c++) {
        uint8_t r = ROLE(s, c, t);
        if (!is_caught(s, l, c, t)) continue;
        if (want == 1 && r != KC_ROLE_STANDBY && r != KC_ROLE_WARMUP) continue;
        if (want == 2 && r != KC_ROLE_NONE) continue;
        double lc = load(s, c);
        if (src < 0 || lc < sl) { src = c; sl = lc; }
    }
    return src;
}

/* Queue a movement for every task of the given role on a client that is not caught up while
 * a client with a smaller lag exists (taskIsNotCaughtUpOnClientAndOtherMoreCaughtUpClientsExist). */
static int32_t queue_movements(const st *s, const lags *l, const uint8_t *stateful, const int32_t *ncaught,
                               uint8_t role, mv *q) {
    int32_t nq = 0;
    for (int32_t c = 0; c < s->C; c++)
        for (int32_t t = 0; t < s->T; t++)
            if (stateful[t] && ROLE(s, c, t) == role && !is_caught(s, l, c, t) && l->best_lag[t] < LAG(s, c, t)) {
                mv m = {ncaught[t], t, c};
                pq_add(q, &nq, m);
            }
    return nq;
}

/* ConstrainedPrioritySet.poll for a standby of t: the smallest (load, ProcessId) client not
 * holding t and, if excl is given, not on a used tag entry.  Clients only change load while
 * polled out of Kafka's queue, so its heap always yields this minimum. */
static int32_t poll_standby(const st *s, int32_t t, const uint8_t *excl) {
    int32_t pick = -1;
    double pl = 0;
    for (int32_t c = 0; c < s->C; c++) {
        if (ROLE(s, c, t) != KC_ROLE_NONE || (excl && excl[c])) continue;
        double lc = load(s, c);
        if (pick < 0 || lc < pl) { pick = c; pl = lc; }
    }
    return pick;
}

/* ClientTagAwareStandbyTaskAssignor.assign */
static int tag_aware_standbys(st *s, const kc_ha_input *in) {
    const int32_t C = s->C, T = s->T, K = in->n_tag_keys;
    int32_t maxv = 1;
    for (int32_t k = 0; k < K; k++)
        if (in->n_tag_values[k] > maxv) maxv = in->n_tag_values[k];
    uint8_t *used = malloc((size_t)K * (size_t)maxv);        /* tagEntryToUsedClients keys */
    uint8_t *excl = malloc((size_t)C);
    int32_t *remaining = malloc(((size_t)T + 1) * sizeof(int32_t));
    int32_t *owner = malloc(((size_t)T + 1) * sizeof(int32_t));
    if (!used || !excl || !remaining || !owner) {
        free(used); free(excl); free(remaining); free(owner);
        return KC_STREAMS_ENOMEM;
    }
    for (int32_t t = 0; t < T; t++) {
        owner[t] = -1;
        for (int32_t c = 0; c < C && owner[t] < 0; c++)
            if (ROLE(s, c, t) == KC_ROLE_ACTIVE) owner[t] = c;
    }
    for (int32_t t = 0; t < T; t++) {
        remaining[t] = 0;
        if (!in->stateful[t] || owner[t] < 0) continue;
        int32_t left = in->num_standby_replicas, count = 1, last = owner[t];
        memset(used, 0, (size_t)K * (size_t)maxv);
        do {
            /* updateClientsOnAlreadyUsedTagEntries(last, count) */
            for (int32_t k = 0; k < K; k++) {
                int32_t v = in->client_tag[(size_t)last * (size_t)K + (size_t)k];
                if (v < 0) continue;
                if (in->n_tag_values[k] <= count) memset(used + (size_t)k * (size_t)maxv, 0, (size_t)maxv);
                else used[(size_t)k * (size_t)maxv + (size_t)v] = 1;
            }
            for (int32_t c = 0; c < C; c++) {
                excl[c] = 0;
                for (int32_t k = 0; k < K && !excl[c]; k++) {
                    int32_t v = in->client_tag[(size_t)c * (size_t)K + (size_t)k];
                    excl[c] = v >= 0 && used[(size_t)k * (size_t)maxv + (size_t)v];
                }
            }
            int32_t pick = poll_standby(s, t, excl);
            if (pick < 0) break;
            count++;
            left--;
            set_role(s, pick, t, KC_ROLE_STANDBY);
            last = pick;
        } while (left > 0);
        remaining[t] = left;
    }
    /* the rest, in tasksToRemainingStandbys order, on the least loaded clients */
    for (int32_t i = 0; i < in->n_pending_order; i++) {
        int32_t t = in->pending_order[i];
        while (remaining[t] > 0) {
            int32_t pick = poll_standby(s, t, NULL);
            if (pick < 0) break;             /* Kafka logs that capacity is missing */
            set_role(s, pick, t, KC_ROLE_STANDBY);
            remaining[t]--;
        }
    }
    free(used); free(excl); free(remaining); free(owner);
    return 0;
}

/* assignStandbyReplicaTasks: the standby assignor, then balancing standbys over threads */
static int place_standbys(st *s, const kc_ha_input *in) {
    if (in->num_standby_replicas == 0) return 0;
    if (in->n_tag_keys > 0) {
        int rc = tag_aware_standbys(s, in);
        if (rc) return rc;
    } else {
        /* DefaultStandbyTaskAssignor: least loaded client not holding the task */
        for (int32_t t = 0; t < s->T; t++) {
            if (!in->stateful[t]) continue;
            for (int32_t k = 0; k < in->num_standby_replicas; k++) {
                int32_t pick = poll_standby(s, t, NULL);
                if (pick < 0) break;        /* not enough clients: Kafka logs and goes on */
                set_role(s, pick, t, KC_ROLE_STANDBY);
            }
        }
    }
    balance(s, 1);
    if (in->rack) {   /* optimizeStandbyTasks with the standby assignor's move predicate */
        int rc = kc_streams_rack_optimize_standby(in->rack, s->C, s->T, s->role, in->rack->traffic_cost,
                                                  in->rack->non_overlap_cost, NULL);
        if (rc) return rc;
    }
    return 0;
}

static int check_input(const kc_ha_input *in) {
    if (!in || in->n_clients <= 0 || in->n_tasks < 0 || !in->capacity
        || (in->n_tasks > 0 && (!in->stateful || !in->lag)) || in->num_standby_replicas < 0
        || in->max_warmup_replicas < 0 || in->acceptable_recovery_lag < 0)
        return KC_STREAMS_EINVAL;
    const int32_t C = in->n_clients, T = in->n_tasks;
    for (int32_t c = 0; c < C; c++)
        if (in->capacity[c] <= 0) return KC_STREAMS_EINVAL;
    if (in->n_tag_keys < 0 || (in->n_tag_keys > 0 && (!in->client_tag || !in->n_tag_values || !in->move_allowed
                                                      || (in->n_pending_order > 0 && !in->pending_order))))
        return KC_STREAMS_EINVAL;
    for (int32_t k = 0; k < in->n_tag_keys; k++)
        if (in->n_tag_values[k] < 0) return KC_STREAMS_EINVAL;
    for (int64_t i = 0; i < (int64_t)in->n_tag_keys * C; i++)
        if (in->client_tag[i] < -1 || in->client_tag[i] >= in->n_tag_values[i % in->n_tag_keys])
            return KC_STREAMS_EINVAL;
    for (int32_t i = 0; i < in->n_pending_order; i++)
        if (in->pending_order[i] < 0 || in->pending_order[i] >= T) return KC_STREAMS_EINVAL;
    return 0;
}

int kc_streams_standby_assign(const kc_ha_input *in, uint8_t *role) {
    if (check_input(in) || !role) return KC_STREAMS_EINVAL;
    const int32_t C = in->n_clients, T = in->n_tasks;
    st s = {C, T, role, calloc((size_t)C, sizeof(int32_t)), calloc((size_t)C, sizeof(int32_t)),
            in->capacity, in->lag, in->n_tag_keys > 0 ? in->move_allowed : NULL};
    int rc = 0;
    if (!s.nact || !s.nstb) { rc = KC_STREAMS_ENOMEM; goto done; }
    for (int32_t c = 0; c < C; c++)
        for (int32_t t = 0; t < T; t++) {
            uint8_t r = ROLE(&s, c, t);
            if (r == KC_ROLE_ACTIVE) s.nact[c]++;
            else ROLE(&s, c, t) = KC_ROLE_NONE;
        }
    rc = place_standbys(&s, in);
done:
    free(s.nact); free(s.nstb);
    return rc;
}

int kc_streams_ha_assign(const kc_ha_input *in, kc_ha_output *out) {
    if (!out || !out->role || check_input(in)) return KC_STREAMS_EINVAL;
    const int32_t C = in->n_clients, T = in->n_tasks;
    size_t cells = (size_t)C * (size_t)T;
    st s = {C, T, out->role, calloc((size_t)C, sizeof(int32_t)), calloc((size_t)C, sizeof(int32_t)),
            in->capacity, in->lag, in->n_tag_keys > 0 ? in->move_allowed : NULL};
    uint8_t *caught = calloc(cells ? cells : 1, 1);
    int32_t *ncaught = calloc((size_t)T + 1, sizeof(int32_t));
    int64_t *best = calloc((size_t)T + 1, sizeof(int64_t));
    mv *q = malloc((cells ? cells : 1) * sizeof(mv));
    int rc = 0;
    if (!s.nact || !s.nstb || !caught || !ncaught || !best || !q) { rc = KC_STREAMS_ENOMEM; goto done; }
    memset(out->role, 0, cells);

    /* 1. stateful actives round-robin over the clients, then balanced over threads */
    int32_t next = 0;
    for (int32_t t = 0; t < T; t++) {
        if (!in->stateful[t]) continue;
        set_role(&s, next, t, KC_ROLE_ACTIVE);
        next = (next + 1) % C;
    }
    balance(&s, 0);
    /* rack-aware optimisation of the stateful actives (moves keep every client's count) */
    if (in->rack && (rc = kc_streams_rack_optimize_active(in->rack, C, T, in->stateful, s.role,
                                                          in->rack->traffic_cost, in->rack->non_overlap_cost, NULL)))
        goto done;

    /* 2. standbys */
    if ((rc = place_standbys(&s, in))) goto done;

    /* 3. caught-up clients per stateful task */
    for (int32_t t = 0; t < T; t++) {
        if (!in->stateful[t]) continue;
        best[t] = INT64_MAX;
        for (int32_t c = 0; c < C; c++) {
            int64_t lg = LAG(&s, c, t);
            int up = lg == LATEST_OFFSET || in->acceptable_recovery_lag == INT64_MAX
                     || (lg >= 0 && lg <= in->acceptable_recovery_lag);
            caught[(size_t)c * (size_t)T + (size_t)t] = (uint8_t)up;
            ncaught[t] += up;
            if (lg < best[t]) best[t] = lg;
        }
    }
    lags L = {caught, best};
    int64_t warmups_left = in->max_warmup_replicas;   /* one budget for the whole assignment */

    /* 4. active task movements */
    int32_t nq = queue_movements(&s, &L, in->stateful, ncaught, KC_ROLE_ACTIVE, q);
    out->active_movements = nq;
    while (nq > 0) {
        mv m = pq_poll(q, &nq);
        int32_t t = m.task, d = m.dest;
        /* (a) a caught-up client holding a standby of the task: swap */
        int32_t src = least_loaded_caught_up(&s, &L, t, 1);
        if (src >= 0) {
            set_role(&s, src, t, KC_ROLE_ACTIVE);
            set_role(&s, d, t, KC_ROLE_STANDBY);
            continue;
        }
        /* (b) the least loaded caught-up client; the destination warms up if budget remains */
        src = least_loaded_caught_up(&s, &L, t, 0);
        int swap = 0;
        if (src < 0) {
            /* (c) the most caught-up client ahead of the destination */
            src = most_caught_up(&s, t, d, 0);
            if (src < 0) { rc = KC_STREAMS_EINVAL; goto done; }   /* Kafka: IllegalStateException */
            uint8_t r = ROLE(&s, src, t);
            swap = r == KC_ROLE_STANDBY || r == KC_ROLE_WARMUP;
        }
        if (swap) {
            set_role(&s, src, t, KC_ROLE_ACTIVE);
            set_role(&s, d, t, KC_ROLE_STANDBY);
        } else {
            set_role(&s, src, t, KC_ROLE_ACTIVE);
            set_role(&s, d, t, warmups_left-- > 0 ? KC_ROLE_WARMUP : KC_ROLE_NONE);
        }
    }

    /* 5. standby task movements (warm-ups stay where they are) */
    nq = queue_movements(&s, &L, in->stateful, ncaught, KC_ROLE_STANDBY, q);
    int32_t moved = 0;
    while (nq > 0) {
        mv m = pq_poll(q, &nq);
        int32_t t = m.task, d = m.dest;
        int32_t src = least_loaded_caught_up(&s, &L, t, 2);
        if (src < 0) src = most_caught_up(&s, t, d, 1);
        if (src < 0) continue;              /* nowhere better to put it: stays */
        set_role(&s, src, t, KC_ROLE_STANDBY);
        set_role(&s, d, t, warmups_left-- > 0 ? KC_ROLE_WARMUP : KC_ROLE_NONE);
        moved++;
    }
    out->standby_movements = moved;

    /* 6. stateless actives: each to the client with the lowest active load */
    for (int32_t t = 0; t < T; t++) {
        if (in->stateful[t]) continue;
        int32_t pick = 0;
        double pl = active_load(&s, 0);
        for (int32_t c = 1; c < C; c++) {
            double lc = active_load(&s, c);
            if (lc < pl) { pick = c; pl = lc; }
        }
        set_role(&s, pick, t, KC_ROLE_ACTIVE);
    }
    if (in->rack) {   /* stateless tasks: traffic cost 1, non-overlap cost 0 */
        uint8_t *stateless = caught;      /* reuse: C * T >= T bytes when T > 0 */
        for (int32_t t = 0; t < T; t++) stateless[t] = !in->stateful[t];
        rc = kc_streams_rack_optimize_active(in->rack, C, T, stateless, s.role, 1, 0, NULL);
    }

done:
    free(s.nact); free(s.nstb); free(caught); free(ncaught); free(best); free(q);
    return rc;
}
