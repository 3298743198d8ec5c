/* Kafka Streams' LegacyStickyTaskAssignor (the pre-3.8 StickyTaskAssignor) and, with
 * must_preserve_active set, the FallbackPriorTaskAssignor built on it.  See kc_streams_tasks.h
 * for the layout.  Kafka iterates java.util.HashMap/HashSet collections here, so the caller
 * passes the clients in the iteration order of Kafka's client map and the task orders of the
 * sets it walks; the kernel rebuilds the smaller HashSets Kafka makes on the way (candidate
 * clients, previous standby owners) from the clients' spread hashes. */
#include "kc_streams_tasks.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t C, T;
    const int32_t *cap;
    const uint32_t *chash;
    uint8_t *role;
    int32_t *nact, *nall;          /* assigned actives; actives + standbys */
    int32_t **held;                /* per client: assigned task ids (active or standby) */
    int32_t *held_cap;
    uint8_t *pairs;                /* TaskPairs: triangular bitset over (low, high) task pairs */
    int64_t npairs, max_pairs;
    const int32_t *prev_active;    /* per task: previous active owner or -1 */
    const int32_t *sb_off, *sb_cli;/* previous standby owners per task (client indexes, map order) */
    int jdk19;
    int32_t *buf, *buf2;           /* scratch client lists */
    uint32_t *keys;                /* bucket counts, max table size + 1 */
    int32_t *sorted;
} sk;

#define ROLE(s, c, t) ((s)->role[(size_t)(c) * (size_t)(s)->T + (size_t)(t)])

static uint64_t pair_bit(const sk *s, int32_t a, int32_t b) {
    if (a > b) { int32_t x = a; a = b; b = x; }
    /* rows 0..b-1 of a strictly lower triangle: b*(b-1)/2 bits precede row b */
    (void)s;
    return (uint64_t)b * (uint64_t)(b - 1) / 2 + (uint64_t)a;
}

static int has_pair(const sk *s, int32_t a, int32_t b) {
    uint64_t i = pair_bit(s, a, b);
    return (s->pairs[i >> 3] >> (i & 7)) & 1;
}

static void add_pairs(sk *s, int32_t t, int32_t c) {      /* TaskPairs.addPairs */
    for (int32_t i = 0; i < s->nall[c]; i++) {
        int32_t u = s->held[c][i];
        if (u == t) continue;
        uint64_t b = pair_bit(s, t, u);
        if (!((s->pairs[b >> 3] >> (b & 7)) & 1)) {
            s->pairs[b >> 3] |= (uint8_t)(1u << (b & 7));
            s->npairs++;
        }
    }
}

static int has_new_pair(const sk *s, int32_t t, int32_t c) {   /* TaskPairs.hasNewPair */
    if (s->npairs == s->max_pairs) return 0;
    for (int32_t i = 0; i < s->nall[c]; i++)
        if (!has_pair(s, t, s->held[c][i])) return 1;
    return 0;
}

static int assign(sk *s, int32_t c, int32_t t, uint8_t r) {
    if (s->nall[c] == s->held_cap[c]) {
        int32_t n = s->held_cap[c] ? s->held_cap[c] * 2 : 8;
        int32_t *p = (int32_t *)realloc(s->held[c], (size_t)n * sizeof(int32_t));
        if (!p) return KC_STREAMS_ENOMEM;
        s->held[c] = p;
        s->held_cap[c] = n;
    }
    add_pairs(s, t, c);
    s->held[c][s->nall[c]++] = t;
    if (r == KC_ROLE_ACTIVE) s->nact[c]++;
    ROLE(s, c, t) = r;
    return 0;
}

/* ClientState.hasMoreAvailableCapacityThan */
static int more_room(const sk *s, int32_t a, int32_t b) {
    double la = (double)s->nall[a] / (double)s->cap[a], lb = (double)s->nall[b] / (double)s->cap[b];
    if (la < lb) return 1;
    if (la > lb) return 0;
    return s->cap[a] > s->cap[b];
}

static int should_balance(const sk *s, int32_t c) {       /* shouldBalanceLoad */
    if (s->nall[c] < s->cap[c]) return 0;
    for (int32_t o = 0; o < s->C; o++)
        if (more_room(s, o, c)) return 1;
    return 0;
}

/* HashMap table size: grown from 16 by n insertions, or HashSet(Collection) of n elements. */
static uint32_t grown_cap(int32_t n) {
    uint32_t cap = 16;
    while ((uint32_t)n > cap / 4 * 3) cap <<= 1;
    return cap;
}

static uint32_t table_size_for(uint32_t n) {
    uint32_t cap = 1;
    while (cap < n) cap <<= 1;
    return cap;
}

static uint32_t copy_cap(const sk *s, int32_t n) {
    if (s->jdk19)   /* HashMap.newHashMap(max(n, 12)): ceil(n / 0.75) */
        return table_size_for((uint32_t)(((int64_t)(n < 12 ? 12 : n) * 4 + 2) / 3));
    /* JDK 17: new HashMap(max((int)(n / .75f) + 1, 16)) */
    uint32_t want = (uint32_t)((float)n / .75f) + 1;
    return table_size_for(want < 16 ? 16 : want);
}

/* Reorder ids[0..n) (inserted in this order into a HashSet of table size cap) into the set's
 * iteration order: by bucket, ties in insertion order (a stable counting sort). */
static void hash_order(sk *s, int32_t *ids, int32_t n, uint32_t cap) {
    if (n < 2) return;
    uint32_t *cnt = s->keys;
    memset(cnt, 0, ((size_t)cap + 1) * sizeof(uint32_t));
    for (int32_t i = 0; i < n; i++) cnt[(s->chash[ids[i]] & (cap - 1)) + 1]++;
    for (uint32_t b = 0; b < cap; b++) cnt[b + 1] += cnt[b];
    for (int32_t i = 0; i < n; i++) s->sorted[cnt[s->chash[ids[i]] & (cap - 1)]++] = ids[i];
    memcpy(ids, s->sorted, (size_t)n * sizeof(int32_t));
}

/* findLeastLoaded over ids[0..n) in iteration order */
static int32_t find_least_loaded(const sk *s, int32_t t, const int32_t *ids, int32_t n, int check) {
    int32_t least = -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t c = ids[i];
        if (s->nall[c] == 0) return c;
        if (least < 0 || more_room(s, c, least)) {
            if (!check || has_new_pair(s, t, c)) least = c;
        }
    }
    return least;
}

static int32_t least_loaded(const sk *s, int32_t t, const int32_t *ids, int32_t n) {
    int32_t c = find_least_loaded(s, t, ids, n, 1);
    return c >= 0 ? c : find_least_loaded(s, t, ids, n, 0);
}

/* findLeastLoadedClientWithPreviousStandByTask: -2 when Kafka's map has no entry (null),
 * -1 when no candidate is left */
static int32_t least_loaded_prev_standby(sk *s, int32_t t, const uint8_t *within) {
    int32_t a = s->sb_off[t], b = s->sb_off[t + 1];
    if (a == b) return -2;
    int32_t n = 0;
    /* the set of previous owners (grown HashSet, inserted in client map order) ... */
    for (int32_t i = a; i < b; i++) s->buf2[n++] = s->sb_cli[i];
    hash_order(s, s->buf2, n, grown_cap(n));
    /* ... copied (new HashSet<>(ids)) and retained to the candidates */
    hash_order(s, s->buf2, n, copy_cap(s, n));
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (within[s->buf2[i]]) s->buf2[m++] = s->buf2[i];
    return least_loaded(s, t, s->buf2, m);
}

/* findClient: within[] flags the candidates, ids[0..n) lists them in iteration order */
static int32_t find_client(sk *s, int32_t t, const uint8_t *within, const int32_t *ids, int32_t n) {
    if (n == 1) return ids[0];
    int32_t prev = s->prev_active[t];
    if (prev < 0 || !within[prev]) prev = least_loaded_prev_standby(s, t, within);
    if (prev < 0) return least_loaded(s, t, ids, n);
    if (should_balance(s, prev)) {
        int32_t sb = least_loaded_prev_standby(s, t, within);
        if (sb < 0 || should_balance(s, sb)) return least_loaded(s, t, ids, n);
        return sb;
    }
    return prev;
}

/* The rack optimisation moves actives between clients without touching TaskPairs (Kafka
 * records pairs only when it places a task); the clients' held task lists follow the moves.
 * owner is scratch of T entries. */
static int rack_optimize_actives(sk *s, const kc_sticky_input *in, uint8_t *flags) {
    const int32_t C = s->C, T = s->T;
    int32_t *owner = (int32_t *)malloc(((size_t)T + 1) * sizeof(int32_t));
    if (!owner) return KC_STREAMS_ENOMEM;
    for (int32_t t = 0; t < T; t++) {
        owner[t] = -1;
        for (int32_t c = 0; c < C && owner[t] < 0; c++)
            if (ROLE(s, c, t) == KC_ROLE_ACTIVE) owner[t] = c;
    }
    int rc;
    memset(flags, 0, (size_t)T);
    for (int32_t i = 0; i < in->n_stateful_order; i++) flags[in->stateful_order[i]] = 1;
    rc = kc_streams_rack_optimize_active(in->rack, C, T, flags, s->role, in->rack->traffic_cost,
                                         in->rack->non_overlap_cost, NULL);
    if (!rc) {
        for (int32_t t = 0; t < T; t++) flags[t] = !flags[t];
        rc = kc_streams_rack_optimize_active(in->rack, C, T, flags, s->role, 1, 0, NULL);
    }
    for (int32_t t = 0; !rc && t < T; t++) {
        int32_t now = -1;
        for (int32_t c = 0; c < C && now < 0; c++)
            if (ROLE(s, c, t) == KC_ROLE_ACTIVE) now = c;
        if (now == owner[t] || now < 0 || owner[t] < 0) continue;
        int32_t o = owner[t];
        for (int32_t i = 0; i < s->nall[o]; i++)
            if (s->held[o][i] == t) { s->held[o][i] = s->held[o][--s->nall[o]]; break; }
        s->nact[o]--;
        /* assign() would also add pairs: append by hand instead */
        if (s->nall[now] == s->held_cap[now]) {
            int32_t n = s->held_cap[now] ? s->held_cap[now] * 2 : 8;
            int32_t *p = (int32_t *)realloc(s->held[now], (size_t)n * sizeof(int32_t));
            if (!p) { rc = KC_STREAMS_ENOMEM; break; }
            s->held[now] = p;
            s->held_cap[now] = n;
        }
        s->held[now][s->nall[now]++] = t;
        s->nact[now]++;
    }
    free(owner);
    return rc;
}

int kc_streams_sticky_assign(const kc_sticky_input *in, uint8_t *role) {
    int32_t C = in->n_clients, T = in->n_tasks;
    if (C <= 0 || T < 0 || in->num_standby_replicas < 0) return KC_STREAMS_EINVAL;
    int64_t total = 0;
    for (int32_t c = 0; c < C; c++) {
        if (in->capacity[c] < 1) return KC_STREAMS_EINVAL;
        total += in->capacity[c];
    }
    /* maxPairs = size * (size - 1) / 2 in int arithmetic; Kafka's HashSet(maxPairs) throws
     * once that overflows */
    int32_t mp = (int32_t)((uint32_t)T * (uint32_t)(T - 1)) / 2;
    if (T > 0 && mp < 0) return KC_STREAMS_EINVAL;
    if (total > INT32_MAX) return KC_STREAMS_EINVAL;
    int32_t per_thread = (int32_t)(T / total);

    sk s;
    memset(&s, 0, sizeof s);
    s.C = C; s.T = T; s.cap = in->capacity; s.chash = in->client_hash; s.role = role;
    s.prev_active = in->prev_active; s.sb_off = in->standby_offsets; s.sb_cli = in->standby_clients;
    s.max_pairs = mp; s.jdk19 = in->jdk19;
    size_t pb = ((uint64_t)T * (uint64_t)(T > 0 ? T - 1 : 0) / 2 + 8) / 8;
    s.pairs = (uint8_t *)calloc(pb, 1);
    s.nact = (int32_t *)calloc((size_t)C, sizeof(int32_t));
    s.nall = (int32_t *)calloc((size_t)C, sizeof(int32_t));
    s.held_cap = (int32_t *)calloc((size_t)C, sizeof(int32_t));
    s.held = (int32_t **)calloc((size_t)C, sizeof(int32_t *));
    s.buf = (int32_t *)malloc((size_t)C * sizeof(int32_t));
    s.buf2 = (int32_t *)malloc((size_t)C * sizeof(int32_t));
    uint32_t maxcap = copy_cap(&s, C);
    if (grown_cap(C) > maxcap) maxcap = grown_cap(C);
    s.keys = (uint32_t *)malloc(((size_t)maxcap + 1) * sizeof(uint32_t));
    s.sorted = (int32_t *)malloc((size_t)C * sizeof(int32_t));
    uint8_t *within = (uint8_t *)malloc((size_t)C);
    uint8_t *done = (uint8_t *)calloc((size_t)T + 1, 1);
    int rc = 0;
    if (!s.pairs || !s.nact || !s.nall || !s.held_cap || !s.held || !s.buf || !s.buf2 || !s.keys || !s.sorted ||
        !within || !done) { rc = KC_STREAMS_ENOMEM; goto out; }
    memset(role, 0, (size_t)C * (size_t)T);

    /* 1. previous active owners (HashMap<TaskId, ProcessId> iteration order) with quota left */
    for (int32_t i = 0; i < in->n_prev_active_order; i++) {
        int32_t t = in->prev_active_order[i], c = in->prev_active[t];
        if (in->must_preserve_active || s.nact[c] < s.cap[c] * per_thread) {
            if ((rc = assign(&s, c, t, KC_ROLE_ACTIVE))) goto out;
            done[t] = 1;
        }
    }
    /* 2. the rest (HashSet copy of all tasks) to a previous standby owner with quota left */
    for (int32_t i = 0; i < T; i++) {
        int32_t t = in->unassigned_order[i];
        if (done[t]) continue;
        int32_t a = s.sb_off[t], b = s.sb_off[t + 1], n = 0;
        for (int32_t j = a; j < b; j++) s.buf[n++] = s.sb_cli[j];
        hash_order(&s, s.buf, n, grown_cap(n));
        for (int32_t j = 0; j < n; j++) {
            int32_t c = s.buf[j];
            if (s.nact[c] < s.cap[c] * per_thread) {
                if ((rc = assign(&s, c, t, KC_ROLE_ACTIVE))) goto out;
                done[t] = 1;
                break;
            }
        }
    }
    /* 3. the rest in TaskId order, over every client (client map order) */
    memset(within, 1, (size_t)C);
    for (int32_t c = 0; c < C; c++) s.buf[c] = c;
    for (int32_t t = 0; t < T; t++) {
        if (done[t]) continue;
        int32_t c = find_client(&s, t, within, s.buf, C);
        if ((rc = assign(&s, c, t, KC_ROLE_ACTIVE))) goto out;
    }
    /* optimizeActive: stateful tasks (the assignor's costs), then stateless ones (1, 0) */
    if (in->rack && (rc = rack_optimize_actives(&s, in, done))) goto out;
    /* 4. standbys: stateful tasks in their set's order, each on clients without the task */
    for (int32_t i = 0; i < in->n_stateful_order; i++) {
        int32_t t = in->stateful_order[i];
        for (int32_t k = 0; k < in->num_standby_replicas; k++) {
            int32_t n = 0;
            for (int32_t c = 0; c < C; c++) {
                within[c] = ROLE(&s, c, t) == KC_ROLE_NONE;
                if (within[c]) s.buf[n++] = c;
            }
            if (n == 0) break;     /* Kafka logs that the standbys cannot all be placed */
            hash_order(&s, s.buf, n, grown_cap(n));
            int32_t c = find_client(&s, t, within, s.buf, n);
            if ((rc = assign(&s, c, t, KC_ROLE_STANDBY))) goto out;
        }
    }
    /* optimizeStandby, every move allowed */
    if (in->rack && in->num_standby_replicas > 0
        && (rc = kc_streams_rack_optimize_standby(in->rack, C, T, role, in->rack->traffic_cost,
                                                  in->rack->non_overlap_cost, NULL)))
        goto out;
out:
    if (s.held)
        for (int32_t c = 0; c < C; c++) free(s.held[c]);
    free(s.held); free(s.held_cap); free(s.nact); free(s.nall); free(s.pairs);
    free(s.buf); free(s.buf2); free(s.keys); free(s.sorted); free(within); free(done);
    if (rc) memset(role, 0, (size_t)C * (size_t)T);
    return rc;
}
