/*
 * Sticky and cooperative-sticky assignors (Kafka's AbstractStickyAssignor semantics).
 *
 * Owned partitions: the claim with the highest generation wins; two claims at the same
 * (highest) generation invalidate each other (KIP-792, KAFKA-12984/14639).
 *
 * Equal subscriptions take Kafka's constrained path (quotas floor/ceil(N/M), owned
 * partitions kept up to quota, the rest handed out round-robin; members are visited in
 * index order where Java visits a HashMap). Unequal subscriptions take our general path,
 * which works on per-(topic, member) counts so it stays near-linear at a million
 * partitions: keep valid owned partitions, water-fill the unassigned ones topic by topic
 * (topics with fewest subscribers first), then move units from a member to another
 * subscriber of the same topic while their sizes differ by 2 or more. That ends exactly in
 * Kafka's definition of balanced (no member could take a partition from one with at least
 * two more), and only moves what balance needs: units handed out this round move first,
 * directly or along a chain of members found by breadth-first search, and an owned
 * partition is revoked only when no such chain exists (this is what keeps cooperative
 * rebalances to two rounds). Counts are turned into partitions at the end, keeping owned
 * partitions in place and preferring previous owners and racks.
 *
 * Cooperative: every partition that goes to a member other than its (winning) previous
 * owner, or that was claimed twice, is held back this round (KIP-429).
 */
#include "kc_assign.h"

#include <stdlib.h>
#include <string.h>

#define UNCLAIMED_GEN INT32_MIN

typedef struct {
    kc_ctx cx;
    const kc_assign_input *in;
    int32_t *gen;          /* [M] */
    int32_t *cl_owner;     /* [N] resolved previous owner, -1 none, -2 double claim */
    int32_t *cl_gen;       /* [N] */
    int32_t *prev;         /* [N] a claimant that lost to a newer generation, or -1 */
    int32_t *tgt;          /* [N] sticky target */
    int32_t rack_aware;
    int32_t sort_by_rack;  /* Java sorts unassigned partitions whenever members have racks */
    int32_t *rack_members; /* [R] members per rack */
    int32_t *rdrop;        /* [N] rack-aware: the owner that dropped it for a rack mismatch */
} sticky;

static void sticky_free(sticky *s)
{
    free(s->gen);
    free(s->cl_owner);
    free(s->cl_gen);
    free(s->prev);
    free(s->rack_members);
    free(s->rdrop);
    kc_ctx_free(&s->cx);
}

static int mismatch(const sticky *s, int32_t m, int32_t g)
{
    return s->rack_aware && !kc_rack_match(&s->cx, m, g);
}

static inline int valid_claim(const kc_ctx *cx, int32_t t, int32_t p)
{
    return t >= 0 && t < cx->T && p >= 0 && p < cx->in->part_count[t]
        && cx->tsub_off[t + 1] > cx->tsub_off[t];
}

/* Resolve owned-partition claims by generation. */
static void resolve_claims(sticky *s, kc_assign_stats *st)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    for (int64_t g = 0; g < cx->N; g++) {
        s->cl_owner[g] = -1;
        s->cl_gen[g] = UNCLAIMED_GEN;
        s->prev[g] = -1;
    }
    if (!in->own_off)
        return;
    for (int32_t m = 0; m < cx->M; m++) {
        int32_t gm = s->gen[m];
        for (int64_t i = in->own_off[m]; i < in->own_off[m + 1]; i++) {
            int32_t t = in->own_topic[i], p = in->own_part[i];
            if (!valid_claim(cx, t, p))
                continue;
            int32_t g = cx->base[t] + p, o = s->cl_owner[g];
            if (o == m)
                continue;
            if (s->cl_gen[g] == UNCLAIMED_GEN) {
                s->cl_owner[g] = m;
                s->cl_gen[g] = gm;
            } else if (gm == s->cl_gen[g]) {
                if (o >= 0)
                    s->prev[g] = o;
                s->cl_owner[g] = -2;
            } else if (gm > s->cl_gen[g]) {
                if (o >= 0)
                    s->prev[g] = o;
                s->cl_owner[g] = m;
                s->cl_gen[g] = gm;
            } else if (s->prev[g] < 0) {
                s->prev[g] = m;
            }
        }
    }
    int64_t dbl = 0;
    for (int64_t g = 0; g < cx->N; g++)
        if (s->cl_owner[g] == -2)
            dbl++;
    if (st)
        st->doubly_claimed = dbl;
}

/* Kafka's RackInfo: is the assignment rack aware at all? */
static int setup_racks(sticky *s)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    int32_t R = in->n_racks;
    if (!in->member_rack || R == 0)
        return KC_ASSIGN_OK;
    s->rack_members = (int32_t *)calloc((size_t)R + 1, sizeof(int32_t));
    uint8_t *prk = (uint8_t *)calloc((size_t)R + 1, 1);
    if (!s->rack_members || !prk) {
        free(prk);
        return KC_ASSIGN_ENOMEM;
    }
    int any = 0;
    for (int32_t m = 0; m < cx->M; m++)
        if (in->member_rack[m] >= 0) {
            s->rack_members[in->member_rack[m]]++;
            any = 1;
        }
    if (!any || !in->prack_off) {
        free(prk);
        return KC_ASSIGN_OK;
    }
    s->sort_by_rack = 1;
    int32_t nunion = 0, inter = 0;
    for (int32_t t = 0; t < cx->T; t++) {
        if (cx->tsub_off[t + 1] == cx->tsub_off[t])
            continue;
        for (int32_t g = cx->base[t]; g < cx->base[t + 1]; g++)
            for (int64_t i = in->prack_off[g]; i < in->prack_off[g + 1]; i++) {
                int32_t r = in->prack[i];
                if (!prk[r]) {
                    prk[r] = 1;
                    nunion++;
                    if (s->rack_members[r])
                        inter = 1;
                }
            }
    }
    free(prk);
    if (!inter)
        return KC_ASSIGN_OK;
    if (in->prefer_rack_aware) {
        s->rack_aware = 1;
        return KC_ASSIGN_OK;
    }
    for (int32_t t = 0; t < cx->T; t++) {
        if (cx->tsub_off[t + 1] == cx->tsub_off[t])
            continue;
        for (int32_t g = cx->base[t]; g < cx->base[t + 1]; g++)
            if (in->prack_off[g + 1] - in->prack_off[g] != nunion) {
                s->rack_aware = 1;
                return KC_ASSIGN_OK;
            }
    }
    return KC_ASSIGN_OK;
}

static int all_subscriptions_equal(const kc_ctx *cx)
{
    if (cx->M <= 1)
        return 1;
    uint8_t *mark = (uint8_t *)calloc((size_t)cx->T + 1, 1);
    if (!mark)
        return -1;
    int64_t n0 = cx->msub_off[1];
    for (int64_t k = 0; k < n0; k++)
        mark[cx->msub_topic[k]] = 1;
    int eq = 1;
    for (int32_t m = 1; m < cx->M && eq; m++) {
        if (cx->msub_off[m + 1] - cx->msub_off[m] != n0) {
            eq = 0;
            break;
        }
        for (int64_t k = cx->msub_off[m]; k < cx->msub_off[m + 1]; k++)
            if (!mark[cx->msub_topic[k]]) {
                eq = 0;
                break;
            }
    }
    free(mark);
    return eq;
}

/* nextRackConsumer: index (cyclic from first) of the first listed member on one of g's racks. */
static int32_t next_rack_consumer(const sticky *s, int32_t g, const int32_t *list, int32_t n, int32_t first)
{
    const kc_assign_input *in = s->in;
    if (n == 0 || in->prack_off[g + 1] == in->prack_off[g])
        return -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t idx = (first + i) % n;
        if (kc_has_rack(&s->cx, g, in->member_rack[list[idx]]))
            return idx;
    }
    return -1;
}

/* ---------------------------------------------------------------- constrained */

/* Kafka's constrainedAssign state: quotas, member counts and the two unfilled lists. */
typedef struct {
    int32_t minQ, maxQ;    /* floor and ceil of partitions per member */
    int32_t expected;      /* members that get maxQ */
    int32_t curOver;       /* members at maxQ so far */
    int32_t *cnt;          /* [M] partitions per member */
    int32_t *under;        /* [M] unfilled members below minQ (nunder of them) */
    int32_t nunder;
    int32_t *ex;           /* [M] members at exactly minQ that may take one more: ex[exh..ext) */
    int32_t exh, ext;
    int32_t *un;           /* [N] unassigned partitions (nun of them) */
    int32_t nun;
    uint64_t *keys;        /* [largest owned list] scratch */
} quota;

/* assignOwnedPartitions: members (in visit order) keep their owned partitions up to quota. */
static void constrained_keep_owned(sticky *s, quota *q)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    for (int32_t vi = 0; vi < cx->M; vi++) {
        int32_t m = in->visit_order ? in->visit_order[vi] : vi;
        int64_t k = 0;
        if (in->own_off)
            for (int64_t i = in->own_off[m]; i < in->own_off[m + 1]; i++) {
                int32_t t = in->own_topic[i], p = in->own_part[i];
                if (!valid_claim(cx, t, p))
                    continue;
                int32_t g = cx->base[t] + p;
                if (s->cl_owner[g] != m)
                    continue;
                if (mismatch(s, m, g)) {
                    s->rdrop[g] = m;   /* dropped; it may come back if no rack wants it */
                    continue;
                }
                q->keys[k++] = ((uint64_t)(uint32_t)p << 32) | (uint32_t)t;  /* (partition, topic) */
            }
        kc_sort_u64(q->keys, k);
        int64_t w = 0;
        for (int64_t i = 0; i < k; i++)
            if (i == 0 || q->keys[i] != q->keys[i - 1])
                q->keys[w++] = q->keys[i];
        k = w;
        int64_t keep;
        if (k < q->minQ) {
            keep = k;
            q->under[q->nunder++] = m;
        } else if (k >= q->maxQ && q->curOver < q->expected) {
            q->curOver++;
            if (q->curOver == q->expected)
                q->exh = q->ext;
            keep = q->maxQ;
        } else {
            keep = q->minQ;
            if (q->curOver < q->expected)
                q->ex[q->ext++] = m;
        }
        for (int64_t i = 0; i < keep; i++) {
            int32_t p = (int32_t)(q->keys[i] >> 32), t = (int32_t)(q->keys[i] & 0xffffffffu);
            s->tgt[cx->base[t] + p] = m;
        }
        q->cnt[m] = (int32_t)keep;
    }
}

/* Both unfilled lists are sorted by member id, which is index order (they were filled in
   visit order). */
static int constrained_sort_unfilled(const sticky *s, quota *q)
{
    int32_t M = s->cx.M;
    if (!s->in->visit_order)
        return KC_ASSIGN_OK;
    uint8_t *mark = (uint8_t *)calloc((size_t)M + 1, 1);
    if (!mark)
        return KC_ASSIGN_ENOMEM;
    for (int32_t i = 0; i < q->nunder; i++)
        mark[q->under[i]] = 1;
    for (int32_t m = 0, w = 0; m < M; m++)
        if (mark[m]) {
            q->under[w++] = m;
            mark[m] = 0;
        }
    for (int32_t i = q->exh; i < q->ext; i++)
        mark[q->ex[i]] = 1;
    for (int32_t m = 0, w = q->exh; m < M; m++)
        if (mark[m])
            q->ex[w++] = m;
    free(mark);
    return KC_ASSIGN_OK;
}

/* The unassigned partitions in (topic, partition) order; with racks, stably sorted by the
   number of members on the partition's racks, as Java sorts them. */
static int constrained_unassigned(const sticky *s, quota *q)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    int32_t M = cx->M, nun = 0;
    for (int32_t t = 0; t < cx->T; t++) {
        if (cx->tsub_off[t + 1] == cx->tsub_off[t])
            continue;
        for (int32_t g = cx->base[t]; g < cx->base[t + 1]; g++)
            if (s->tgt[g] < 0)
                q->un[nun++] = g;
    }
    q->nun = nun;
    if (!s->sort_by_rack || nun <= 1)
        return KC_ASSIGN_OK;
    int64_t *keyc = (int64_t *)calloc((size_t)M + 2, sizeof(int64_t));
    int32_t *tmp = (int32_t *)malloc(sizeof(int32_t) * (size_t)nun);
    int32_t *kv = (int32_t *)malloc(sizeof(int32_t) * (size_t)nun);
    if (!keyc || !tmp || !kv) {
        free(keyc); free(tmp); free(kv);
        return KC_ASSIGN_ENOMEM;
    }
    for (int32_t i = 0; i < nun; i++) {
        int32_t g = q->un[i];
        int64_t c = 0;
        for (int64_t j = in->prack_off[g]; j < in->prack_off[g + 1]; j++)
            c += s->rack_members[in->prack[j]];
        if (c > M)
            c = M;
        kv[i] = (int32_t)c;
        keyc[c + 1]++;
    }
    for (int32_t c = 0; c <= M; c++)
        keyc[c + 1] += keyc[c];
    for (int32_t i = 0; i < nun; i++)
        tmp[keyc[kv[i]]++] = q->un[i];
    memcpy(q->un, tmp, sizeof(int32_t) * (size_t)nun);
    free(keyc); free(tmp); free(kv);
    return KC_ASSIGN_OK;
}

/* assignRackAwareRoundRobin: each unassigned partition to the next unfilled member on one
   of its racks (under-min members first, then exactly-min ones). */
static void constrained_rack_round_robin(sticky *s, quota *q)
{
    int32_t nextIdx = 0, w = 0;
    for (int32_t i = 0; i < q->nun; i++) {
        int32_t g = q->un[i], c = -1;
        int32_t idx = next_rack_consumer(s, g, q->under, q->nunder, nextIdx);
        if (idx >= 0) {
            c = q->under[idx];
            int32_t ac = q->cnt[c] + 1;
            if (ac >= q->minQ) {
                memmove(q->under + idx, q->under + idx + 1, sizeof(int32_t) * (size_t)(q->nunder - idx - 1));
                q->nunder--;
                if (ac < q->maxQ && q->curOver < q->expected)
                    q->ex[q->ext++] = c;
            } else {
                idx++;
            }
            nextIdx = q->nunder == 0 ? 0 : idx % q->nunder;
        } else if (q->ext > q->exh) {
            int32_t fi = next_rack_consumer(s, g, q->ex + q->exh, q->ext - q->exh, 0);
            if (fi >= 0) {
                c = q->ex[q->exh + fi];
                if (q->cnt[c] + 1 == q->maxQ) {
                    memmove(q->ex + q->exh + fi, q->ex + q->exh + fi + 1,
                            sizeof(int32_t) * (size_t)(q->ext - q->exh - fi - 1));
                    q->ext--;
                    q->curOver++;
                    if (q->curOver == q->expected)
                        q->exh = q->ext;
                }
            }
        }
        if (c >= 0) {
            s->tgt[g] = c;
            q->cnt[c]++;
        } else {
            q->un[w++] = g;
        }
    }
    q->nun = w;
}

/* Partitions dropped for a rack mismatch that no member on a matching rack took go back
   to their owner while it has room (Kafka would hand them to an arbitrary unfilled
   member, equally mismatched: a move that gains nothing and costs a cooperative round). */
static int constrained_return_dropped(sticky *s, quota *q)
{
    uint8_t *state = (uint8_t *)calloc((size_t)s->cx.M + 1, 1);   /* 1: under-min, 2: exactly-min */
    if (!state)
        return KC_ASSIGN_ENOMEM;
    for (int32_t i = 0; i < q->nunder; i++)
        state[q->under[i]] = 1;
    for (int32_t i = q->exh; i < q->ext; i++)
        state[q->ex[i]] = 2;
    int32_t w = 0;
    for (int32_t i = 0; i < q->nun; i++) {
        int32_t g = q->un[i], x = s->rdrop[g];
        if (x >= 0 && state[x] == 1) {
            s->tgt[g] = x;
            if (++q->cnt[x] >= q->minQ) {
                state[x] = 0;
                if (q->cnt[x] < q->maxQ && q->curOver < q->expected) {
                    q->ex[q->ext++] = x;
                    state[x] = 2;
                }
            }
        } else if (x >= 0 && state[x] == 2) {
            s->tgt[g] = x;
            if (++q->cnt[x] == q->maxQ) {
                state[x] = 0;
                if (++q->curOver == q->expected) {
                    for (int32_t j = q->exh; j < q->ext; j++)
                        state[q->ex[j]] = 0;
                    q->exh = q->ext;
                }
            }
        } else {
            q->un[w++] = g;
        }
    }
    q->nun = w;
    int32_t k = 0;
    for (int32_t i = 0; i < q->nunder; i++)
        if (state[q->under[i]] == 1)
            q->under[k++] = q->under[i];
    q->nunder = k;
    k = q->exh;
    for (int32_t i = q->exh; i < q->ext; i++)
        if (state[q->ex[i]] == 2)
            q->ex[k++] = q->ex[i];
    q->ext = k;
    free(state);
    return KC_ASSIGN_OK;
}

/* assignRoundRobin: iterate the under-min list (compacting it in place), then take
   exactly-min members first in, first out. */
static int constrained_round_robin(sticky *s, quota *q)
{
    int32_t ri = 0, wi = 0, nu = q->nunder;
    for (int32_t i = 0; i < q->nun; i++) {
        int32_t g = q->un[i], c, from_under = 0;
        if (ri < nu) {
            c = q->under[ri++];
            from_under = 1;
        } else {
            int32_t live = wi;   /* ri == nu: the live list is under[0..wi) */
            if (live == 0 && q->ext == q->exh) {
                return KC_ASSIGN_EINTERNAL;  /* "No more unfilled consumers to be assigned." */
            } else if (live == 0) {
                c = q->ex[q->exh++];
            } else {
                nu = wi;
                ri = 0;
                wi = 0;
                c = q->under[ri++];
                from_under = 1;
            }
        }
        s->tgt[g] = c;
        int32_t ac = ++q->cnt[c];
        if (ac == q->minQ) {
            if (from_under)
                from_under = 0;  /* iter.remove() */
            q->ex[q->ext++] = c;
        } else if (ac == q->maxQ) {
            q->curOver++;
        }
        if (from_under)
            q->under[wi++] = c;
    }
    return KC_ASSIGN_OK;
}

/* Kafka's constrainedAssign (equal subscriptions), phase by phase. */
static int constrained(sticky *s)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    int32_t M = cx->M;
    int64_t Nsub = 0;
    for (int32_t t = 0; t < cx->T; t++)
        if (cx->tsub_off[t + 1] > cx->tsub_off[t])
            Nsub += in->part_count[t];
    quota q;
    memset(&q, 0, sizeof q);
    q.minQ = (int32_t)(Nsub / M);
    q.maxQ = (int32_t)((Nsub + M - 1) / M);
    q.expected = (int32_t)(Nsub % M);

    int64_t maxown = 0;
    if (in->own_off)
        for (int32_t m = 0; m < M; m++)
            if (in->own_off[m + 1] - in->own_off[m] > maxown)
                maxown = in->own_off[m + 1] - in->own_off[m];
    q.cnt = (int32_t *)calloc((size_t)M + 1, sizeof(int32_t));
    q.under = (int32_t *)malloc(sizeof(int32_t) * ((size_t)M + 1));
    q.ex = (int32_t *)malloc(sizeof(int32_t) * ((size_t)M + 1));
    q.keys = (uint64_t *)malloc(sizeof(uint64_t) * ((size_t)maxown + 1));
    q.un = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->N + 1));
    int rc = (!q.cnt || !q.under || !q.ex || !q.keys || !q.un) ? KC_ASSIGN_ENOMEM : KC_ASSIGN_OK;
    if (!rc) {
        constrained_keep_owned(s, &q);
        rc = constrained_sort_unfilled(s, &q);
    }
    if (!rc)
        rc = constrained_unassigned(s, &q);
    if (!rc && s->rack_aware) {
        constrained_rack_round_robin(s, &q);
        if (q.nun > 0)
            rc = constrained_return_dropped(s, &q);
    }
    if (!rc)
        rc = constrained_round_robin(s, &q);
    free(q.cnt);
    free(q.under);
    free(q.ex);
    free(q.keys);
    free(q.un);
    return rc;
}

/* [N] 1 where some subscriber of the partition's topic is on one of its replicas' racks
   (a member there could take it), or NULL when out of memory. */
static uint8_t *rack_takers(const sticky *s)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    uint8_t *takers = (uint8_t *)calloc((size_t)cx->N + 1, 1);
    int32_t *rmark = (int32_t *)malloc(sizeof(int32_t) * ((size_t)in->n_racks + 1));
    if (!takers || !rmark) {
        free(takers);
        free(rmark);
        return NULL;
    }
    for (int32_t r = 0; r < in->n_racks; r++)
        rmark[r] = -1;
    for (int32_t t = 0; t < cx->T; t++) {
        for (int32_t e = cx->tsub_off[t]; e < cx->tsub_off[t + 1]; e++) {
            int32_t r = in->member_rack[cx->tsub_mem[e]];
            if (r >= 0)
                rmark[r] = t;
        }
        for (int64_t g = cx->base[t]; g < cx->base[t + 1]; g++)
            for (int64_t j = in->prack_off[g]; j < in->prack_off[g + 1]; j++)
                if (rmark[in->prack[j]] == t) {
                    takers[g] = 1;
                    break;
                }
    }
    free(rmark);
    return takers;
}

/* ---------------------------------------------------------------- general */

typedef struct {
    int32_t *keep, *tg;    /* [nsub] per (topic, subscriber) entry */
    int64_t *load;         /* [M] */
    uint64_t *scratch;     /* [max subscribers of a topic] */
    int32_t *dropped;      /* [nsub] rack-aware: owned units given up for a rack mismatch, or NULL */
} gstate;

/* Give u more units of topic t to its least loaded subscribers (ties: member order). */
static void water_fill(const kc_ctx *cx, gstate *G, int32_t t, int64_t u)
{
    int32_t lo = cx->tsub_off[t], hi = cx->tsub_off[t + 1];
    if (u <= 0 || hi == lo)
        return;
    int64_t mn = INT64_MAX;
    for (int32_t e = lo; e < hi; e++)
        if (G->load[cx->tsub_mem[e]] < mn)
            mn = G->load[cx->tsub_mem[e]];
    /* largest level L with sum(max(0, L - load)) <= u */
    int64_t a = mn, b = mn + u;
    while (a < b) {
        int64_t L = a + (b - a + 1) / 2, f = 0;
        for (int32_t e = lo; e < hi && f <= u; e++) {
            int64_t d = L - G->load[cx->tsub_mem[e]];
            if (d > 0)
                f += d;
        }
        if (f <= u)
            a = L;
        else
            b = L - 1;
    }
    int64_t L = a, used = 0;
    for (int32_t e = lo; e < hi; e++) {
        int32_t m = cx->tsub_mem[e];
        if (G->load[m] < L) {
            int64_t d = L - G->load[m];
            G->tg[e] += (int32_t)d;
            G->load[m] = L;
            used += d;
        }
    }
    int64_t rem = u - used;
    if (rem <= 0)
        return;
    /* the last units go first to members at the level that gave up one of the topic's
       partitions for a rack mismatch (the unit may be that partition: no move, and no
       partition bouncing between two equal members from one rebalance to the next), then
       to those with the fewest subscriptions (they have the fewest other ways to be
       balanced), then in member order */
    int64_t n = 0;
    for (int32_t e = lo; e < hi; e++)
        if (G->load[cx->tsub_mem[e]] == L)
            G->scratch[n++] = ((uint64_t)(G->dropped && G->dropped[e] > 0 ? 0 : 1) << 62)
                              | ((uint64_t)(cx->msub_off[cx->tsub_mem[e] + 1] - cx->msub_off[cx->tsub_mem[e]]) << 32)
                              | (uint32_t)e;
    kc_sort_u64(G->scratch, n);
    for (int64_t i = 0; i < n && rem > 0; i++, rem--) {
        int32_t e = (int32_t)(G->scratch[i] & 0xffffffffu);
        G->tg[e]++;
        G->load[cx->tsub_mem[e]]++;
    }
}

typedef struct {
    int32_t *vis_m, *vis_t, *par, *pe_v, *pe_u, *queue;
    int32_t stamp;
    int64_t budget;        /* entries the searches may still scan */
} bfs_state;

/* m's entry in topic t's subscriber list, or -1 when m does not subscribe t */
static int32_t sub_entry(const kc_ctx *cx, int32_t t, int32_t m)
{
    int32_t a = cx->tsub_off[t], b = cx->tsub_off[t + 1];
    while (a < b) {
        int32_t mid = a + (b - a) / 2;
        if (cx->tsub_mem[mid] < m)
            a = mid + 1;
        else
            b = mid;
    }
    return a < cx->tsub_off[t + 1] && cx->tsub_mem[a] == m ? a : -1;
}

enum { PULL = 1, PUSH = -1 };

/*
 * Shift one unit along a chain of members found by breadth-first search from `start`,
 * each hop moving a unit its giver got this round (never one it owned), so balance
 * improves without revoking anything.
 *   PULL: start is light; the chain ends at a member with load(start) + slack or more.
 *   PUSH: start is heavy; the chain ends at a member with load(start) - slack or less.
 * Slack 2 improves balance; slack 1 is a sideways shift that lets a member take a unit
 * instead of an owner giving one up. avoid_t >= 0 (sideways shifts for that topic): the
 * chain may not end where it makes a new imbalance of avoid_t, i.e. at a subscriber that
 * drops below `floor` (PULL) or at a holder of it (PUSH: Kafka's balance only looks at
 * partitions held).
 */
static int bfs_shift(const kc_ctx *cx, gstate *G, bfs_state *B, int32_t start, int dir, int32_t slack,
                     int32_t avoid_t, int64_t floor)
{
    if (B->budget <= 0)
        return 0;
    int32_t id = ++B->stamp, qh = 0, qt = 0;
    B->queue[qt++] = start;
    B->vis_m[start] = id;
    int64_t want = G->load[start] + dir * slack;
    while (qh < qt) {
        int32_t u = B->queue[qh++];
        for (int64_t k = cx->msub_off[u]; k < cx->msub_off[u + 1]; k++) {
            int32_t t = cx->msub_topic[k], eu = cx->msub_ent[k];
            if (B->vis_t[t] == id || (dir == PUSH && G->tg[eu] <= G->keep[eu]))
                continue;
            B->vis_t[t] = id;
            int32_t lo = cx->tsub_off[t], hi = cx->tsub_off[t + 1];
            B->budget -= hi - lo;
            for (int32_t e = lo; e < hi; e++) {
                int32_t v = cx->tsub_mem[e];
                if (B->vis_m[v] == id || (dir == PULL && G->tg[e] <= G->keep[e]))
                    continue;
                B->vis_m[v] = id;
                B->par[v] = u;
                B->pe_v[v] = e;
                B->pe_u[v] = eu;
                int far = dir == PULL ? G->load[v] >= want : G->load[v] <= want;
                if (far && avoid_t >= 0) {
                    int32_t ev = sub_entry(cx, avoid_t, v);
                    far = dir == PULL ? (ev < 0 || G->load[v] - 1 >= floor) : (ev < 0 || G->tg[ev] == 0);
                }
                if (far) {
                    for (int32_t w = v; w != start; w = B->par[w]) {
                        G->tg[B->pe_v[w]] -= dir;
                        G->tg[B->pe_u[w]] += dir;
                    }
                    G->load[v] -= dir;
                    G->load[start] += dir;
                    return 1;
                }
                B->queue[qt++] = v;
            }
        }
    }
    return 0;
}

/* Move units until no subscriber of a topic has 2+ fewer than a holder of it (Kafka's
   definition of balanced). Units given this round move first (directly or along a chain);
   owned ones only when nothing else can restore balance. */
static int balance_general(const kc_ctx *cx, gstate *G, const uint64_t *tkeys, int32_t nt, int64_t *moves)
{
    bfs_state B;
    memset(&B, 0, sizeof(B));
    B.vis_m = (int32_t *)calloc((size_t)cx->M + 1, sizeof(int32_t));
    B.par = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->M + 1));
    B.pe_v = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->M + 1));
    B.pe_u = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->M + 1));
    B.queue = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->M + 1));
    B.vis_t = (int32_t *)calloc((size_t)cx->T + 1, sizeof(int32_t));
    int rc = KC_ASSIGN_OK;
    if (!B.vis_m || !B.par || !B.pe_v || !B.pe_u || !B.queue || !B.vis_t) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    B.budget = 64 * cx->nsub + (1 << 22);
    int64_t sideways = cx->M;   /* sideways shifts do not improve balance: bounded */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t i = 0; i < nt; i++) {
            int32_t t = (int32_t)(tkeys[i] & 0xffffffffu);
            int32_t lo = cx->tsub_off[t], hi = cx->tsub_off[t + 1];
            if (hi - lo < 2)
                continue;
            for (;;) {
                int32_t ex_ = -1, ey = -1, eyn = -1;
                int64_t mnl = INT64_MAX, mxl = -1, mxn = -1;
                for (int32_t e = lo; e < hi; e++) {
                    int64_t l = G->load[cx->tsub_mem[e]];
                    if (l < mnl) {
                        mnl = l;
                        ex_ = e;
                    }
                    if (G->tg[e] > 0 && l > mxl) {
                        mxl = l;
                        ey = e;
                    }
                    if (G->tg[e] > G->keep[e] && l > mxn) {
                        mxn = l;
                        eyn = e;
                    }
                }
                if (ey < 0 || mxl - mnl < 2)
                    break;
                changed = 1;
                int64_t k;
                if (eyn >= 0 && mxn - mnl >= 2) {
                    ey = eyn;   /* a unit given this round */
                    k = (mxn - mnl) / 2;
                    if (k > G->tg[ey] - G->keep[ey])
                        k = G->tg[ey] - G->keep[ey];
                } else if (bfs_shift(cx, G, &B, cx->tsub_mem[ex_], PULL, 2, -1, 0)
                           || bfs_shift(cx, G, &B, cx->tsub_mem[ey], PUSH, 2, -1, 0)) {
                    *moves += 1;
                    continue;
                } else if (sideways > 0 && (bfs_shift(cx, G, &B, cx->tsub_mem[ex_], PULL, 1, t, mxl - 1)
                                            || bfs_shift(cx, G, &B, cx->tsub_mem[ey], PUSH, 1, t, 0))) {
                    sideways--;
                    *moves += 1;
                    continue;
                } else {
                    k = (mxl - mnl) / 2;   /* revoke owned partitions: balance needs it */
                    if (k > G->tg[ey])
                        k = G->tg[ey];
                }
                G->tg[ey] -= (int32_t)k;
                G->tg[ex_] += (int32_t)k;
                G->load[cx->tsub_mem[ey]] -= k;
                G->load[cx->tsub_mem[ex_]] += k;
                *moves += k;
            }
        }
    }
out:
    free(B.vis_m);
    free(B.par);
    free(B.pe_v);
    free(B.pe_u);
    free(B.queue);
    free(B.vis_t);
    return rc;
}

/* Scratch of the materialize step, reused topic after topic. */
typedef struct {
    int32_t *need;         /* [M] units a member still takes of the current topic */
    int32_t *qdrop;        /* [M] kept units a member gives up of the current topic */
    int32_t *roff, *rcur;  /* [R+2] members in rmem per rack: offsets, cursors */
    int32_t *rmem;         /* [max subscribers of a topic] members still needing, by rack */
} topic_fill;

/* Keep owned partitions of still-subscribed topics (on matching racks, unless no member
   on a matching rack could take them); eot/tstamp are [T] scratch. */
static void general_keep_owned(sticky *s, gstate *G, const uint8_t *matchable, int32_t *eot,
                               int32_t *tstamp)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    for (int32_t t = 0; t < cx->T; t++)
        tstamp[t] = -1;
    for (int32_t m = 0; m < cx->M; m++) {
        for (int64_t k = cx->msub_off[m]; k < cx->msub_off[m + 1]; k++) {
            eot[cx->msub_topic[k]] = cx->msub_ent[k];
            tstamp[cx->msub_topic[k]] = m;
        }
        if (!in->own_off)
            continue;
        for (int64_t i = in->own_off[m]; i < in->own_off[m + 1]; i++) {
            int32_t t = in->own_topic[i], p = in->own_part[i];
            if (!valid_claim(cx, t, p) || tstamp[t] != m)
                continue;
            int32_t g = cx->base[t] + p;
            if (s->cl_owner[g] != m || s->tgt[g] == m)
                continue;
            if (mismatch(s, m, g) && matchable[g]) {
                s->rdrop[g] = m;
                G->dropped[eot[t]]++;
                continue;
            }
            s->tgt[g] = m;
            G->keep[eot[t]]++;
            G->load[m]++;
        }
    }
}

/* Free the partitions of topic t its holders give up (highest partitions first); returns
   how many partitions of t are now unassigned. */
static int64_t release_surplus(sticky *s, const gstate *G, topic_fill *F, int32_t t)
{
    const kc_ctx *cx = &s->cx;
    int32_t b = cx->base[t], P = s->in->part_count[t];
    int64_t pool = 0;
    for (int32_t e = cx->tsub_off[t]; e < cx->tsub_off[t + 1]; e++) {
        int32_t m = cx->tsub_mem[e];
        F->qdrop[m] = G->keep[e] > G->tg[e] ? G->keep[e] - G->tg[e] : 0;
        F->need[m] = G->tg[e] > G->keep[e] ? G->tg[e] - G->keep[e] : 0;
    }
    for (int32_t p = P - 1; p >= 0; p--) {
        int32_t m = s->tgt[b + p];
        if (m >= 0 && F->qdrop[m] > 0) {
            F->qdrop[m]--;
            s->tgt[b + p] = -1;
        }
        if (s->tgt[b + p] < 0)
            pool++;
    }
    return pool;
}

/* Unassigned partitions of t to members on one of the partition's racks. */
static void place_by_rack(sticky *s, topic_fill *F, int32_t t)
{
    const kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    int32_t R = in->n_racks, lo = cx->tsub_off[t], hi = cx->tsub_off[t + 1];
    int32_t b = cx->base[t], P = in->part_count[t];
    int32_t *need = F->need, *roff = F->roff, *rcur = F->rcur, *rmem = F->rmem;
    memset(roff, 0, sizeof(int32_t) * ((size_t)R + 2));
    for (int32_t e = lo; e < hi; e++) {
        int32_t m = cx->tsub_mem[e], r = in->member_rack[m];
        if (r >= 0 && need[m] > 0)
            roff[r + 1]++;
    }
    for (int32_t r = 0; r < R; r++)
        roff[r + 1] += roff[r];
    memcpy(rcur, roff, sizeof(int32_t) * ((size_t)R + 1));
    for (int32_t e = lo; e < hi; e++) {
        int32_t m = cx->tsub_mem[e], r = in->member_rack[m];
        if (r >= 0 && need[m] > 0)
            rmem[rcur[r]++] = m;
    }
    memcpy(rcur, roff, sizeof(int32_t) * ((size_t)R + 1));
    for (int32_t p = 0; p < P; p++) {
        int32_t g = b + p;
        if (s->tgt[g] >= 0)
            continue;
        for (int64_t j = in->prack_off[g]; j < in->prack_off[g + 1]; j++) {
            int32_t r = in->prack[j];
            while (rcur[r] < roff[r + 1] && need[rmem[rcur[r]]] == 0)
                rcur[r]++;
            if (rcur[r] < roff[r + 1]) {
                int32_t m = rmem[rcur[r]];
                s->tgt[g] = m;
                need[m]--;
                break;
            }
        }
    }
}

/* Turn topic t's per-member counts into partitions: owned ones stay, freed ones go to
   previous owners (stale generations) first, then to members on their racks, then back to
   an owner that dropped them for a rack mismatch, then in member order. */
static int materialize_topic(sticky *s, const gstate *G, topic_fill *F, int32_t t)
{
    const kc_ctx *cx = &s->cx;
    int32_t lo = cx->tsub_off[t], hi = cx->tsub_off[t + 1], b = cx->base[t];
    int32_t P = s->in->part_count[t];
    int32_t *need = F->need;
    int rc = KC_ASSIGN_OK;
    if (release_surplus(s, G, F, t) == 0)
        goto done;
    for (int32_t p = 0; p < P; p++) {
        int32_t g = b + p, pv = s->prev[g];
        if (s->tgt[g] < 0 && pv >= 0 && need[pv] > 0 && !mismatch(s, pv, g)) {
            s->tgt[g] = pv;
            need[pv]--;
        }
    }
    if (s->rack_aware) {
        place_by_rack(s, F, t);
        for (int32_t p = 0; p < P; p++) {
            int32_t g = b + p, x = s->rdrop[g];
            if (s->tgt[g] < 0 && x >= 0 && need[x] > 0) {
                s->tgt[g] = x;
                need[x]--;
            }
        }
    }
    for (int32_t p = 0, e = lo; p < P; p++) {
        int32_t g = b + p;
        if (s->tgt[g] >= 0)
            continue;
        while (e < hi && need[cx->tsub_mem[e]] == 0)
            e++;
        if (e == hi) {
            rc = KC_ASSIGN_EINTERNAL;
            goto done;
        }
        s->tgt[g] = cx->tsub_mem[e];
        need[cx->tsub_mem[e]]--;
    }
done:
    for (int32_t e = lo; e < hi; e++) {
        need[cx->tsub_mem[e]] = 0;
        F->qdrop[cx->tsub_mem[e]] = 0;
    }
    return rc;
}

static int general(sticky *s, kc_assign_stats *st)
{
    kc_ctx *cx = &s->cx;
    const kc_assign_input *in = s->in;
    int32_t M = cx->M, T = cx->T;
    int rc = KC_ASSIGN_OK;
    gstate G;
    topic_fill F;
    G.keep = (int32_t *)calloc((size_t)cx->nsub + 1, sizeof(int32_t));
    G.tg = (int32_t *)calloc((size_t)cx->nsub + 1, sizeof(int32_t));
    G.load = (int64_t *)calloc((size_t)M + 1, sizeof(int64_t));
    G.scratch = (uint64_t *)malloc(sizeof(uint64_t) * ((size_t)M + 1));
    G.dropped = NULL;
    int32_t *eot = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T + 1));
    int32_t *tstamp = (int32_t *)malloc(sizeof(int32_t) * ((size_t)T + 1));
    uint64_t *tkeys = (uint64_t *)malloc(sizeof(uint64_t) * ((size_t)T + 1));
    int32_t R = in->n_racks;
    F.need = (int32_t *)calloc((size_t)M + 1, sizeof(int32_t));
    F.qdrop = (int32_t *)calloc((size_t)M + 1, sizeof(int32_t));
    F.roff = (int32_t *)calloc((size_t)R + 2, sizeof(int32_t));
    F.rcur = (int32_t *)calloc((size_t)R + 2, sizeof(int32_t));
    F.rmem = NULL;
    uint8_t *matchable = NULL;
    if (!G.keep || !G.tg || !G.load || !G.scratch || !eot || !tstamp || !tkeys || !F.need || !F.qdrop
        || !F.roff || !F.rcur) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    int32_t maxC = 0;
    for (int32_t t = 0; t < T; t++)
        if (cx->tsub_off[t + 1] - cx->tsub_off[t] > maxC)
            maxC = cx->tsub_off[t + 1] - cx->tsub_off[t];
    F.rmem = (int32_t *)malloc(sizeof(int32_t) * ((size_t)maxC + 1));
    if (!F.rmem) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }

    /* rack-aware: which partitions some subscriber on one of their racks could take. A
       mismatched owned partition is given up only for those; otherwise every taker
       would be as mismatched as its owner, and moving it would be churn for nothing. */
    if (s->rack_aware) {
        matchable = rack_takers(s);
        G.dropped = (int32_t *)calloc((size_t)cx->nsub + 1, sizeof(int32_t));
        if (!matchable || !G.dropped) {
            rc = KC_ASSIGN_ENOMEM;
            goto out;
        }
    }

    general_keep_owned(s, &G, matchable, eot, tstamp);
    memcpy(G.tg, G.keep, sizeof(int32_t) * (size_t)cx->nsub);

    /* topics with the fewest potential members first, then by name */
    int32_t nt = 0;
    for (int32_t t = 0; t < T; t++)
        if (cx->tsub_off[t + 1] > cx->tsub_off[t])
            tkeys[nt++] = ((uint64_t)(uint32_t)(cx->tsub_off[t + 1] - cx->tsub_off[t]) << 32) | (uint32_t)t;
    kc_sort_u64(tkeys, nt);

    /* fill: water-fill each topic's unassigned partitions */
    for (int32_t i = 0; i < nt; i++) {
        int32_t t = (int32_t)(tkeys[i] & 0xffffffffu);
        int64_t u = in->part_count[t];
        for (int32_t e = cx->tsub_off[t]; e < cx->tsub_off[t + 1]; e++)
            u -= G.keep[e];
        water_fill(cx, &G, t, u);
    }

    /* balance: while some subscriber of a topic has 2+ fewer than a holder of it, move */
    int64_t moves = 0;
    rc = balance_general(cx, &G, tkeys, nt, &moves);
    if (rc)
        goto out;
    if (st)
        st->balance_moves = moves;

    /* materialize counts into partitions, topic by topic */
    for (int32_t i = 0; i < nt && !rc; i++)
        rc = materialize_topic(s, &G, &F, (int32_t)(tkeys[i] & 0xffffffffu));
out:
    free(G.keep);
    free(G.tg);
    free(G.load);
    free(G.scratch);
    free(G.dropped);
    free(eot);
    free(tstamp);
    free(tkeys);
    free(F.need);
    free(F.qdrop);
    free(F.roff);
    free(F.rcur);
    free(F.rmem);
    free(matchable);
    return rc;
}

/* ---------------------------------------------------------------- idle rack drops */

/*
 * A mismatched owned partition is dropped so that a member on its racks can take it; when
 * it ends on another mismatched member instead, the move gained nothing and costs a
 * revocation (and the result is not a fixed point: fed back, the same partitions swap
 * again). Undo such a move by an exchange that keeps every member's load: the dropper
 * takes its partition back and hands the new holder one it gained this round, of a topic
 * the holder subscribes, as well placed on racks, where no subscriber of either topic is
 * left two or more below its holders (Kafka's balance).
 */
#define IDLE_DROP_SCAN 64

static int undo_idle_drops(sticky *s)
{
    const kc_ctx *cx = &s->cx;
    int32_t M = cx->M, T = cx->T;
    int64_t N = cx->N;
    int rc = KC_ASSIGN_OK;
    int64_t *load = (int64_t *)calloc((size_t)M + 1, sizeof(int64_t));
    int64_t *tmin = (int64_t *)malloc(sizeof(int64_t) * ((size_t)T + 1));
    int64_t *goff = (int64_t *)calloc((size_t)M + 2, sizeof(int64_t));
    int32_t *gained = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int32_t *topic = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    if (!load || !tmin || !goff || !gained || !topic) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    int any = 0;
    for (int32_t t = 0; t < T; t++)
        for (int32_t g = cx->base[t]; g < cx->base[t + 1]; g++) {
            topic[g] = t;
            int32_t m = s->tgt[g];
            if (m < 0)
                continue;
            load[m]++;
            if (s->cl_owner[g] != m)
                goff[m + 2]++;
            if (s->rdrop[g] >= 0 && s->rdrop[g] != m)
                any = 1;
        }
    if (!any)
        goto out;
    for (int32_t t = 0; t < T; t++) {
        tmin[t] = INT64_MAX;
        for (int32_t e = cx->tsub_off[t]; e < cx->tsub_off[t + 1]; e++)
            if (load[cx->tsub_mem[e]] < tmin[t])
                tmin[t] = load[cx->tsub_mem[e]];
    }
    for (int32_t m = 0; m < M; m++)
        goff[m + 2] += goff[m + 1];
    for (int64_t g = 0; g < N; g++) {
        int32_t m = s->tgt[g];
        if (m >= 0 && s->cl_owner[g] != m)
            gained[goff[m + 1]++] = (int32_t)g;
    }
    /* goff[m] .. goff[m + 1]: what m gained; taken entries become -1 */
    for (int64_t g = 0; g < N; g++) {
        int32_t m = s->rdrop[g], x = s->tgt[g];
        if (m < 0 || x < 0 || x == m || !mismatch(s, x, g) || tmin[topic[g]] < load[m] - 1)
            continue;
        int32_t scanned = 0;
        for (int64_t i = goff[m]; i < goff[m + 1] && scanned < IDLE_DROP_SCAN; i++) {
            int32_t y = gained[i];
            if (y < 0)
                continue;
            scanned++;
            int32_t ty = topic[y];
            if (s->tgt[y] != m || sub_entry(cx, ty, x) < 0 || tmin[ty] < load[x] - 1
                || (mismatch(s, x, y) && !mismatch(s, m, y)))
                continue;
            s->tgt[g] = m;
            s->tgt[y] = x;
            gained[i] = -1;
            break;
        }
    }
out:
    free(load);
    free(tmin);
    free(goff);
    free(gained);
    free(topic);
    return rc;
}

/* ---------------------------------------------------------------- entry point */

/* Rack-aware: partitions on a member off their racks while a subscriber of their topic is
   on one of them. With none, the target is a fixed point (fed back, nothing is dropped). */
static int64_t rack_improvable(const sticky *s)
{
    uint8_t *takers = rack_takers(s);
    if (!takers)
        return -1;
    int64_t n = 0;
    for (int64_t g = 0; g < s->cx.N; g++)
        n += s->tgt[g] >= 0 && takers[g] && mismatch(s, s->tgt[g], g);
    free(takers);
    return n;
}

/* One sticky computation: tgt from in's claims. claim (may be NULL) receives the winning
   previous owner of each partition (-1 none, -2 claimed twice); *rack_aware whether the
   assignment was rack aware and *improvable (both may be NULL) its rack_improvable count. */
static int sticky_compute(const kc_assign_input *in, int32_t *tgt, int32_t *claim, int *rack_aware,
                          int64_t *improvable, kc_assign_stats *st)
{
    sticky s;
    memset(&s, 0, sizeof(s));
    int rc = kc_assign_prepare(in, &s.cx);
    if (rc)
        return rc;
    s.in = in;
    s.tgt = tgt;
    const kc_ctx *cx = &s.cx;
    size_t N1 = (size_t)cx->N + 1;
    s.gen = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->M + 1));
    s.cl_owner = (int32_t *)malloc(sizeof(int32_t) * N1);
    s.cl_gen = (int32_t *)malloc(sizeof(int32_t) * N1);
    s.prev = (int32_t *)malloc(sizeof(int32_t) * N1);
    if (!s.gen || !s.cl_owner || !s.cl_gen || !s.prev) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    int32_t maxg = -1;
    for (int32_t m = 0; m < cx->M; m++) {
        s.gen[m] = in->generation ? in->generation[m] : -1;
        if (s.gen[m] < -1)
            s.gen[m] = -1;
        if (s.gen[m] > maxg)
            maxg = s.gen[m];
    }
    for (int64_t g = 0; g < cx->N; g++)
        tgt[g] = -1;
    resolve_claims(&s, st);
    rc = setup_racks(&s);
    if (rc)
        goto out;
    if (s.rack_aware) {
        s.rdrop = (int32_t *)malloc(sizeof(int32_t) * N1);
        if (!s.rdrop) {
            rc = KC_ASSIGN_ENOMEM;
            goto out;
        }
        for (int64_t g = 0; g < cx->N; g++)
            s.rdrop[g] = -1;
    }
    if (rack_aware)
        *rack_aware = s.rack_aware;
    if (st) {
        st->max_generation = maxg;
        st->rack_aware = s.rack_aware;
    }
    if (cx->M > 0) {
        int eq = all_subscriptions_equal(cx);
        if (eq < 0) {
            rc = KC_ASSIGN_ENOMEM;
            goto out;
        }
        if (st)
            st->general_path = !eq;
        rc = eq ? constrained(&s) : general(&s, st);
        if (!rc && s.rack_aware)
            rc = undo_idle_drops(&s);
        if (rc)
            goto out;
    }
    if (improvable && s.rack_aware) {
        *improvable = rack_improvable(&s);
        if (*improvable < 0) {
            rc = KC_ASSIGN_ENOMEM;
            goto out;
        }
    }
    if (claim)
        memcpy(claim, s.cl_owner, sizeof(int32_t) * (size_t)cx->N);
out:
    sticky_free(&s);
    return rc;
}

/*
 * With racks, one pass can leave moves for the next rebalance: a rack move can become
 * possible only once this round's revocations have freed room on a member of the right
 * rack, and a rack-improving exchange can become visible only once partitions sit where
 * this pass put them. So the leader looks one round ahead, from what members will own
 * once they have revoked (their handout, all at one generation):
 *  - a round that holds partitions back needs a next round that revokes nothing (or the
 *    rebalance takes a third round): while the look-ahead would revoke, its result
 *    becomes the target, which only brings forward moves the next round would make;
 *  - a round that holds nothing back is the last one: its target should be a fixed point
 *    (fed back, nothing moves), but only moves that revoke nothing may be adopted for
 *    that, or this round would stop being the last. Eager, nothing is ever held back
 *    (everything is revoked before joining), so the target becomes a fixed point.
 * Bounded. When the look-aheads cycle (two partitions trading members from one look-ahead
 * to the next), the first target stands and, if this round holds partitions back anyway,
 * what the next round would move is not handed out in it either: a partition handed out a
 * round later costs no extra round, a revocation in the next round would. Without racks
 * the target has both properties already.
 */
#define SETTLE_ROUNDS 4

/* a claim value: not handed out this round whoever gets it (see settle_target) */
#define HOLD_BACK (-3)

/* handed out this round: not held back for a revocation (see kc_assign_sticky) */
static inline int handed_out(const int32_t *tgt, const int32_t *claim, int64_t g)
{
    return tgt[g] >= 0 && (!claim || claim[g] == -1 || claim[g] == tgt[g]);
}

static int64_t held_back(const int32_t *tgt, const int32_t *claim, int64_t N)
{
    int64_t n = 0;
    for (int64_t g = 0; claim && g < N; g++)
        n += tgt[g] >= 0 && !handed_out(tgt, claim, g);
    return n;
}

typedef struct {
    int64_t *own_off;
    int32_t *own_topic, *own_part, *gen0;
} owned_csr;

/* next = the sticky target when members own what tgt hands out (claim NULL: all of tgt);
   *kept: whether next leaves every one of those partitions where it is. */
static int look_ahead(const kc_assign_input *in, int64_t N, const int32_t *tgt, const int32_t *claim,
                      owned_csr *o, int32_t *next, int *kept)
{
    int32_t M = in->n_members;
    memset(o->own_off, 0, sizeof(int64_t) * ((size_t)M + 2));
    for (int64_t g = 0; g < N; g++)
        if (handed_out(tgt, claim, g))
            o->own_off[tgt[g] + 2]++;
    for (int32_t m = 0; m < M; m++)
        o->own_off[m + 2] += o->own_off[m + 1];
    for (int32_t t = 0, g = 0; t < in->n_topics; t++)
        for (int32_t p = 0; p < in->part_count[t]; p++, g++)
            if (handed_out(tgt, claim, g)) {
                int64_t k = o->own_off[tgt[g] + 1]++;
                o->own_topic[k] = t;
                o->own_part[k] = p;
            }
    kc_assign_input after = *in;
    after.own_off = o->own_off;
    after.own_topic = o->own_topic;
    after.own_part = o->own_part;
    after.generation = o->gen0;
    int rc = sticky_compute(&after, next, NULL, NULL, NULL, NULL);
    *kept = 1;
    for (int64_t g = 0; g < N && !rc && *kept; g++)
        if (handed_out(tgt, claim, g) && next[g] != tgt[g])
            *kept = 0;
    return rc;
}

static int settle_target(const kc_assign_input *in, int64_t N, int32_t *tgt, int32_t *claim)
{
    int32_t M = in->n_members;
    owned_csr o;
    o.own_off = (int64_t *)calloc((size_t)M + 2, sizeof(int64_t));
    o.own_topic = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    o.own_part = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    o.gen0 = (int32_t *)calloc((size_t)M + 1, sizeof(int32_t));
    int32_t *next = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int32_t *first = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int rc = KC_ASSIGN_OK;
    if (!o.own_off || !o.own_topic || !o.own_part || !o.gen0 || !next || !first) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    memcpy(first, tgt, sizeof(int32_t) * (size_t)N);
    for (int round = 0; round < SETTLE_ROUNDS; round++) {
        int kept;
        int last = held_back(tgt, claim, N) == 0;
        rc = look_ahead(in, N, tgt, claim, &o, next, &kept);
        if (rc || kept)
            goto out;                  /* the next round changes nothing this one hands out */
        if (last && held_back(next, claim, N) > 0)
            goto out;                  /* improving would cost another round: not now */
        memcpy(tgt, next, sizeof(int32_t) * (size_t)N);
    }
    memcpy(tgt, first, sizeof(int32_t) * (size_t)N);
    /* (a round that holds nothing back stays the last one) */
    for (int round = 0; held_back(tgt, claim, N) > 0 && round < SETTLE_ROUNDS; round++) {
        int kept;
        rc = look_ahead(in, N, tgt, claim, &o, next, &kept);
        if (rc || kept)
            goto out;
        for (int64_t g = 0; g < N; g++)
            if (handed_out(tgt, claim, g) && next[g] != tgt[g])
                claim[g] = HOLD_BACK;
    }
out:
    free(o.own_off);
    free(o.own_topic);
    free(o.own_part);
    free(o.gen0);
    free(next);
    free(first);
    return rc;
}

int kc_assign_sticky(const kc_assign_input *in, int cooperative,
                     int32_t *owner_out, int32_t *target_out, kc_assign_stats *st)
{
    if (st)
        memset(st, 0, sizeof(*st));
    int64_t N = kc_assign_total_partitions(in);
    if (N < 0)
        return (int)N;
    size_t N1 = (size_t)N + 1;
    int32_t *tgt_own = NULL, *claim = (int32_t *)malloc(sizeof(int32_t) * N1);
    int32_t *tgt = target_out;
    if (!tgt)
        tgt = tgt_own = (int32_t *)malloc(sizeof(int32_t) * N1);
    int rc = KC_ASSIGN_OK;
    int rack_aware = 0;
    int64_t improvable = 0, held;
    if (!claim || !tgt) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    rc = sticky_compute(in, tgt, claim, &rack_aware, &improvable, st);
    if (rc)
        goto out;
    held = rack_aware && cooperative ? held_back(tgt, claim, N) : 0;
    /* nothing held back and nothing to improve on racks: already settled */
    if (rack_aware && (improvable > 0 || held > 0)) {
        rc = settle_target(in, N, tgt, cooperative ? claim : NULL);
        if (rc)
            goto out;
    }
    if (owner_out) {
        memcpy(owner_out, tgt, sizeof(int32_t) * (size_t)N);
        if (cooperative) {
            /* Held back: partitions whose winning previous claim (highest generation) is
               another member's, or that were claimed twice (a stale claim by the new owner
               does not count: the current owner must revoke first, KAFKA-14639), and any
               the look-ahead holds back (settle_target). */
            int64_t nt = 0;
            for (int64_t g = 0; g < N; g++)
                if (tgt[g] >= 0 && !handed_out(tgt, claim, g)) {
                    owner_out[g] = -1;
                    nt++;
                }
            if (st)
                st->transferring = nt;
        }
    }
out:
    free(tgt_own);
    free(claim);
    return rc;
}
