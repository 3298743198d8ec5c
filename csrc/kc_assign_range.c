/*
 * RangeAssignor (KIP-881 rack aware) and RoundRobinAssignor, with the output Kafka's
 * Java assignors give for the same members (in MemberInfo order) and topics.
 */
#include "kc_assign.h"

#include <stdlib.h>
#include <string.h>

/* Per-topic state of the range assignor (Kafka's TopicAssignmentState). */
typedef struct {
    int32_t t, P, C;         /* topic, partitions, subscribers */
    int32_t q;               /* partitions per consumer */
    int32_t extra;           /* consumers that may still take one more */
    int32_t *num;            /* [C] assigned per subscriber entry */
    int32_t next;            /* first possibly unassigned partition */
    int32_t has_consumer_rack;
    int32_t needs_rack;
} range_topic;

static int32_t max_assignable(const range_topic *s, int32_t e)
{
    int32_t v = s->q + (s->extra > 0 ? 1 : 0) - s->num[e];
    return v > 0 ? v : 0;
}

static void on_assigned(range_topic *s, int32_t e, int32_t k)
{
    s->num[e] += k;
    if (s->num[e] > s->q)
        s->extra--;
}

/* Does the topic need rack-aware assignment (AbstractPartitionAssignor.useRackAwareAssignment)? */
static int topic_needs_rack(const kc_ctx *cx, range_topic *s, uint8_t *crack, uint8_t *prk)
{
    const kc_assign_input *in = cx->in;
    int32_t R = in->n_racks;
    if (!in->member_rack || R == 0)
        return 0;
    memset(crack, 0, (size_t)R);
    int any = 0;
    for (int32_t e = cx->tsub_off[s->t]; e < cx->tsub_off[s->t + 1]; e++) {
        int32_t r = in->member_rack[cx->tsub_mem[e]];
        if (r >= 0) {
            crack[r] = 1;
            any = 1;
        }
    }
    s->has_consumer_rack = any;
    if (!any || !in->prack_off)
        return 0;
    memset(prk, 0, (size_t)R);
    int32_t nunion = 0, inter = 0;
    for (int32_t p = 0; p < s->P; p++) {
        int32_t g = cx->base[s->t] + p;
        for (int64_t i = in->prack_off[g]; i < in->prack_off[g + 1]; i++) {
            int32_t r = in->prack[i];
            if (!prk[r]) {
                prk[r] = 1;
                nunion++;
                if (crack[r])
                    inter = 1;
            }
        }
    }
    if (!inter)
        return 0;
    if (in->prefer_rack_aware)
        return 1;
    /* every partition's (distinct) rack set equals the union iff it has the union's size */
    for (int32_t p = 0; p < s->P; p++) {
        int32_t g = cx->base[s->t] + p;
        if (in->prack_off[g + 1] - in->prack_off[g] != nunion)
            return 1;
    }
    return 0;
}

/* Range pass over one topic restricted to rack-matching partitions. */
static void assign_ranges_rack(const kc_ctx *cx, range_topic *s, int32_t *owner)
{
    int32_t b = cx->base[s->t];
    int32_t remaining = 0;
    for (int32_t p = 0; p < s->P; p++)
        if (owner[b + p] < 0)
            remaining++;
    for (int32_t e = cx->tsub_off[s->t], i = 0; e < cx->tsub_off[s->t + 1]; e++, i++) {
        if (remaining == 0)
            break;
        int32_t m = cx->tsub_mem[e];
        int32_t lim = max_assignable(s, i), k = 0;
        for (int32_t p = s->next; p < s->P && k < lim; p++) {
            if (owner[b + p] >= 0 || !kc_rack_match(cx, m, b + p))
                continue;
            owner[b + p] = m;
            k++;
        }
        if (k > 0) {
            on_assigned(s, i, k);
            remaining -= k;
            while (s->next < s->P && owner[b + s->next] >= 0)
                s->next++;
        }
    }
}

/* Kafka's assignCoPartitionedWithRackMatching over a group of topics with the same
   subscribers and partition count. */
static void assign_copartitioned(const kc_ctx *cx, range_topic **grp, int32_t ng, int32_t *owner,
                                 int32_t *remaining)
{
    range_topic *s0 = grp[0];
    int32_t C = s0->C, nrem = C;
    const int32_t *mem = cx->tsub_mem + cx->tsub_off[s0->t];
    for (int32_t i = 0; i < C; i++)
        remaining[i] = i;
    for (int32_t p = 0; p < s0->P; p++) {
        int32_t found = -1, fi = -1;
        for (int32_t j = 0; j < nrem && found < 0; j++) {
            int32_t e = remaining[j], ok = 1;
            for (int32_t k = 0; k < ng && ok; k++)
                ok = kc_rack_match(cx, mem[e], cx->base[grp[k]->t] + p) && max_assignable(grp[k], e) > 0;
            if (ok) {
                found = e;
                fi = j;
            }
        }
        if (found < 0)
            continue;
        int any_left = 0;
        for (int32_t k = 0; k < ng; k++) {
            owner[cx->base[grp[k]->t] + p] = mem[found];
            on_assigned(grp[k], found, 1);
        }
        for (int32_t k = 0; k < ng; k++)
            if (max_assignable(grp[k], found) > 0)
                any_left = 1;
        if (!any_left) {
            memmove(remaining + fi, remaining + fi + 1, sizeof(int32_t) * (size_t)(nrem - fi - 1));
            nrem--;
            if (nrem == 0)
                break;
        }
    }
    for (int32_t k = 0; k < ng; k++) {
        range_topic *s = grp[k];
        int32_t b = cx->base[s->t];
        while (s->next < s->P && owner[b + s->next] >= 0)
            s->next++;
    }
}

static uint64_t hash_members(const kc_ctx *cx, int32_t t)
{
    uint64_t h = 1469598103934665603ULL;
    for (int32_t e = cx->tsub_off[t]; e < cx->tsub_off[t + 1]; e++) {
        h ^= (uint64_t)(uint32_t)cx->tsub_mem[e];
        h *= 1099511628211ULL;
    }
    return h;
}

static int same_members(const kc_ctx *cx, int32_t a, int32_t b)
{
    int32_t na = cx->tsub_off[a + 1] - cx->tsub_off[a], nb = cx->tsub_off[b + 1] - cx->tsub_off[b];
    return na == nb && memcmp(cx->tsub_mem + cx->tsub_off[a], cx->tsub_mem + cx->tsub_off[b],
                              sizeof(int32_t) * (size_t)na) == 0;
}

int kc_assign_range(const kc_assign_input *in, int32_t *owner)
{
    kc_ctx cx;
    int rc = kc_assign_prepare_owner(in, &cx, owner);
    if (rc)
        return rc;
    range_topic *st = (range_topic *)calloc((size_t)cx.T + 1, sizeof(range_topic));
    int32_t *num = (int32_t *)calloc((size_t)cx.nsub + 1, sizeof(int32_t));
    int32_t R = in->n_racks;
    uint8_t *crack = (uint8_t *)malloc((size_t)R + 1), *prk = (uint8_t *)malloc((size_t)R + 1);
    if (!st || !num || !crack || !prk) {
        rc = KC_ASSIGN_ENOMEM;
        goto out;
    }
    int use_rack = 0;
    for (int32_t t = 0; t < cx.T; t++) {
        range_topic *s = &st[t];
        s->t = t;
        s->P = in->part_count[t];
        s->C = cx.tsub_off[t + 1] - cx.tsub_off[t];
        s->num = num + cx.tsub_off[t];
        s->q = s->C ? s->P / s->C : 0;
        s->extra = s->C ? s->P % s->C : 0;
        if (s->P > 0 && s->C > 0) {
            s->needs_rack = topic_needs_rack(&cx, s, crack, prk);
            use_rack |= s->needs_rack;
        }
    }
    if (use_rack) {
        /* group topics by (subscribers, partition count); only topics whose subscribers
           have racks matter (the others have no rack data and nothing to co-assign) */
        int32_t n = 0;
        uint64_t *keys = (uint64_t *)malloc(sizeof(uint64_t) * ((size_t)cx.T + 1));
        int32_t *order = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx.T + 1));
        uint64_t *hs = (uint64_t *)malloc(sizeof(uint64_t) * ((size_t)cx.T + 1));
        range_topic **grp = (range_topic **)malloc(sizeof(range_topic *) * ((size_t)cx.T + 1));
        int32_t *remaining = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx.M + 1));
        uint8_t *done = (uint8_t *)calloc((size_t)cx.T + 1, 1);
        if (!keys || !order || !hs || !grp || !remaining || !done) {
            free(keys); free(order); free(hs); free(grp); free(remaining); free(done);
            rc = KC_ASSIGN_ENOMEM;
            goto out;
        }
        for (int32_t t = 0; t < cx.T; t++) {
            if (st[t].P == 0 || st[t].C == 0 || !st[t].has_consumer_rack)
                continue;
            hs[t] = hash_members(&cx, t) ^ ((uint64_t)(uint32_t)st[t].P * 0x9E3779B97F4A7C15ULL);
            keys[n++] = ((hs[t] >> 32) << 32) | (uint64_t)(uint32_t)t;
        }
        kc_sort_u64(keys, n);
        for (int32_t i = 0; i < n; i++)
            order[i] = (int32_t)(keys[i] & 0xffffffffu);
        for (int32_t i = 0; i < n; i++) {
            int32_t t = order[i];
            if (done[t])
                continue;
            int32_t ng = 0;
            grp[ng++] = &st[t];
            done[t] = 1;
            for (int32_t j = i + 1; j < n && (hs[order[j]] >> 32) == (hs[t] >> 32); j++) {
                int32_t u = order[j];
                if (!done[u] && st[u].P == st[t].P && same_members(&cx, t, u)) {
                    grp[ng++] = &st[u];
                    done[u] = 1;
                }
            }
            if (ng > 1)
                assign_copartitioned(&cx, grp, ng, owner, remaining);
            else if (st[t].needs_rack)
                assign_ranges_rack(&cx, &st[t], owner);
        }
        free(keys); free(order); free(hs); free(grp); free(remaining); free(done);
    }
    /* the plain range pass assigns whatever is left, in partition order */
    for (int32_t t = 0; t < cx.T; t++) {
        range_topic *s = &st[t];
        int32_t b = cx.base[t];
        for (int32_t e = cx.tsub_off[t], i = 0; e < cx.tsub_off[t + 1]; e++, i++) {
            if (s->next >= s->P)
                break;
            int32_t lim = max_assignable(s, i), k = 0;
            for (int32_t p = s->next; p < s->P && k < lim; p++) {
                if (owner[b + p] >= 0)
                    continue;
                owner[b + p] = cx.tsub_mem[e];
                k++;
            }
            if (k > 0) {
                on_assigned(s, i, k);
                while (s->next < s->P && owner[b + s->next] >= 0)
                    s->next++;
            }
        }
    }
out:
    free(st);
    free(num);
    free(crack);
    free(prk);
    kc_ctx_free(&cx);
    return rc;
}

int kc_assign_roundrobin(const kc_assign_input *in, int32_t *owner)
{
    kc_ctx cx;
    int rc = kc_assign_prepare_owner(in, &cx, owner);
    if (rc)
        return rc;
    /* The circular iterator stands on member `cur`; for a topic the next subscriber at or
       after cur is found by binary search, then the topic's subscribers take turns. */
    int32_t cur = 0;
    for (int32_t t = 0; t < cx.T; t++) {
        int32_t lo = cx.tsub_off[t], hi = cx.tsub_off[t + 1], C = hi - lo, P = in->part_count[t];
        if (C == 0 || P == 0)
            continue;
        const int32_t *S = cx.tsub_mem + lo;
        int32_t a = 0, b = C;
        while (a < b) {
            int32_t mid = a + (b - a) / 2;
            if (S[mid] < cur)
                a = mid + 1;
            else
                b = mid;
        }
        int32_t j = (a == C) ? 0 : a;
        for (int32_t p = 0; p < P; p++) {
            owner[cx.base[t] + p] = S[j];
            cur = S[j] + 1 == cx.M ? 0 : S[j] + 1;
            j = (j + 1 == C) ? 0 : j + 1;
        }
    }
    kc_ctx_free(&cx);
    return KC_ASSIGN_OK;
}
