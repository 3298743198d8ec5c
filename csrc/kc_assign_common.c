/* Input validation and small helpers shared by the assignors. */
#include "kc_assign.h"

#include <stdlib.h>
#include <string.h>

int64_t kc_assign_total_partitions(const kc_assign_input *in)
{
    if (!in || in->n_topics < 0 || (in->n_topics > 0 && !in->part_count))
        return KC_ASSIGN_EINVAL;
    int64_t total = 0;
    for (int32_t t = 0; t < in->n_topics; t++) {
        if (in->part_count[t] < 0)
            return KC_ASSIGN_EINVAL;
        total += in->part_count[t];
        /* global partition indexes are int32 */
        if (total > (int64_t)INT32_MAX - 1)
            return KC_ASSIGN_EINVAL;
    }
    return total;
}

static int check_offsets(const int64_t *off, int32_t n, int64_t *last)
{
    if (off[0] != 0)
        return 0;
    for (int32_t i = 0; i < n; i++)
        if (off[i + 1] < off[i])
            return 0;
    *last = off[n];
    return 1;
}

int kc_assign_prepare(const kc_assign_input *in, kc_ctx *cx)
{
    memset(cx, 0, sizeof(*cx));
    if (!in || in->n_members < 0 || in->n_topics < 0 || in->n_racks < 0)
        return KC_ASSIGN_EINVAL;
    if (in->n_topics > 0 && !in->part_count)
        return KC_ASSIGN_EINVAL;
    if (!in->sub_off)
        return KC_ASSIGN_EINVAL;
    int64_t total = kc_assign_total_partitions(in);
    if (total < 0)
        return (int)total;
    cx->in = in;
    cx->M = in->n_members;
    cx->T = in->n_topics;
    cx->N = total;

    int64_t last;
    if (!check_offsets(in->sub_off, cx->M, &last))
        return KC_ASSIGN_EINVAL;
    for (int64_t i = 0; i < last; i++)
        if (in->sub_topic[i] < 0 || in->sub_topic[i] >= cx->T)
            return KC_ASSIGN_EINVAL;
    if (in->own_off && !check_offsets(in->own_off, cx->M, &last))
        return KC_ASSIGN_EINVAL;
    if (in->member_rack)
        for (int32_t m = 0; m < cx->M; m++)
            if (in->member_rack[m] < -1 || in->member_rack[m] >= in->n_racks)
                return KC_ASSIGN_EINVAL;
    if (in->prack_off) {
        if (!check_offsets(in->prack_off, (int32_t)cx->N, &last))
            return KC_ASSIGN_EINVAL;
        for (int64_t i = 0; i < last; i++)
            if (in->prack[i] < 0 || in->prack[i] >= in->n_racks)
                return KC_ASSIGN_EINVAL;
    }

    if (in->visit_order) {
        /* must be a permutation */
        uint8_t *seen = (uint8_t *)calloc((size_t)cx->M + 1, 1);
        if (!seen)
            return KC_ASSIGN_ENOMEM;
        for (int32_t k = 0; k < cx->M; k++) {
            int32_t m = in->visit_order[k];
            if (m < 0 || m >= cx->M || seen[m]) {
                free(seen);
                return KC_ASSIGN_EINVAL;
            }
            seen[m] = 1;
        }
        free(seen);
    }

    cx->base = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->T + 1));
    /* subscriber lists per topic, deduplicated, in member order */
    cx->tsub_off = (int32_t *)calloc((size_t)cx->T + 1, sizeof(int32_t));
    cx->msub_off = (int64_t *)calloc((size_t)cx->M + 1, sizeof(int64_t));
    int32_t *stamp = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->T + 1));
    if (!cx->base || !cx->tsub_off || !cx->msub_off || !stamp) {
        free(stamp);
        kc_ctx_free(cx);
        return KC_ASSIGN_ENOMEM;
    }
    cx->base[0] = 0;
    for (int32_t t = 0; t < cx->T; t++)
        cx->base[t + 1] = cx->base[t] + in->part_count[t];
    for (int32_t t = 0; t < cx->T; t++)
        stamp[t] = -1;
    int64_t nsub = 0;
    for (int32_t m = 0; m < cx->M; m++) {
        for (int64_t i = in->sub_off[m]; i < in->sub_off[m + 1]; i++) {
            int32_t t = in->sub_topic[i];
            if (stamp[t] == m)
                continue;
            stamp[t] = m;
            cx->tsub_off[t + 1]++;
            nsub++;
        }
        cx->msub_off[m + 1] = nsub;
    }
    for (int32_t t = 0; t < cx->T; t++)
        cx->tsub_off[t + 1] += cx->tsub_off[t];
    cx->nsub = nsub;
    cx->tsub_mem = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nsub + 1));
    cx->msub_topic = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nsub + 1));
    cx->msub_ent = (int32_t *)malloc(sizeof(int32_t) * ((size_t)nsub + 1));
    int32_t *fill = (int32_t *)malloc(sizeof(int32_t) * ((size_t)cx->T + 1));
    if (!cx->tsub_mem || !cx->msub_topic || !cx->msub_ent || !fill) {
        free(stamp);
        free(fill);
        kc_ctx_free(cx);
        return KC_ASSIGN_ENOMEM;
    }
    for (int32_t t = 0; t < cx->T; t++) {
        stamp[t] = -1;
        fill[t] = cx->tsub_off[t];
    }
    int64_t k = 0;
    for (int32_t m = 0; m < cx->M; m++) {
        for (int64_t i = in->sub_off[m]; i < in->sub_off[m + 1]; i++) {
            int32_t t = in->sub_topic[i];
            if (stamp[t] == m)
                continue;
            stamp[t] = m;
            int32_t e = fill[t]++;
            cx->tsub_mem[e] = m;
            cx->msub_topic[k] = t;
            cx->msub_ent[k] = e;
            k++;
        }
    }
    free(stamp);
    free(fill);
    return KC_ASSIGN_OK;
}

int kc_assign_prepare_owner(const kc_assign_input *in, kc_ctx *cx, int32_t *owner)
{
    int rc = kc_assign_prepare(in, cx);
    if (rc)
        return rc;
    for (int64_t g = 0; g < cx->N; g++)
        owner[g] = -1;
    return KC_ASSIGN_OK;
}

void kc_ctx_free(kc_ctx *cx)
{
    free(cx->base);
    free(cx->tsub_off);
    free(cx->tsub_mem);
    free(cx->msub_off);
    free(cx->msub_topic);
    free(cx->msub_ent);
    memset(cx, 0, sizeof(*cx));
}

int kc_rack_match(const kc_ctx *cx, int32_t member, int32_t g)
{
    const kc_assign_input *in = cx->in;
    int32_t r = in->member_rack ? in->member_rack[member] : -1;
    if (r < 0)
        return 1;
    if (!in->prack_off)
        return 0;
    for (int64_t i = in->prack_off[g]; i < in->prack_off[g + 1]; i++)
        if (in->prack[i] == r)
            return 1;
    return 0;
}

int kc_has_rack(const kc_ctx *cx, int32_t g, int32_t rack)
{
    const kc_assign_input *in = cx->in;
    if (rack < 0 || !in->prack_off)
        return 0;
    for (int64_t i = in->prack_off[g]; i < in->prack_off[g + 1]; i++)
        if (in->prack[i] == rack)
            return 1;
    return 0;
}

/* In-place ascending sort of 64-bit keys (quicksort, insertion sort for short runs). */
void kc_sort_u64(uint64_t *a, int64_t n)
{
    while (n > 16) {
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1], piv;
        if (x < y)
            piv = (y < z) ? y : (x < z ? z : x);
        else
            piv = (x < z) ? x : (y < z ? z : y);
        int64_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t tmp = a[i];
            a[i] = a[j];
            a[j] = tmp;
            i++;
            j--;
        }
        /* recurse into the smaller half, loop on the larger one */
        int64_t left = j + 1;
        if (left < n - left) {
            kc_sort_u64(a, left);
            a += left;
            n -= left;
        } else {
            kc_sort_u64(a + left, n - left);
            n = left;
        }
    }
    for (int64_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        int64_t j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
}
