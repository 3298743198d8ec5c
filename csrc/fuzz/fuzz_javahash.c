/*
 * Fuzz target for the java.util.HashMap model (csrc/kc_javahash.c): bytes become up to 600
 * hash codes drawn from a few values (heavy collisions: treeified bins, splits that untreeify
 * or re-treeify on resize), optional compareTo ranks with ties and non-Comparable keys, an
 * initial capacity and put or computeIfAbsent.
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan);
 *   - the order is a permutation of the keys, grouped by bucket ((h ^ h >>> 16) & (cap - 1))
 *     in ascending bucket order, and the table holds the keys within its load factor;
 *   - puts whose hashes are all distinct modulo 64 never treeify: their order is the stable
 *     sort by bucket;
 *   - kc_javahash_distinct keeps exactly the first occurrence of each value, in order;
 *   - bad arguments give KC_JH_EINVAL, not a result.
 *
 * Standalone random driver:
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_javahash.c csrc/fuzz/fuzz_javahash.c -o fuzz_javahash && ./fuzz_javahash SECONDS SEED
 */
#include "kc_javahash.h"

#include <string.h>

#define MAX_N 600

#define FUZZ_NAME "fuzz_javahash"
#include "fuzz_input.h"

static uint32_t bucket(int32_t h, int64_t cap)
{
    uint32_t u = (uint32_t)h;
    return (u ^ (u >> 16)) & (uint32_t)(cap - 1);
}

static void run_one(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    static int32_t hc[MAX_N], order[MAX_N], again[MAX_N];
    static int64_t rk[MAX_N];
    static uint8_t seen[MAX_N];
    int32_t pool[8];
    int32_t n = (int32_t)(take(&r, 0) << 2 | take(&r, 4)) % (MAX_N + 1);
    uint32_t npool = take(&r, 8) + 1, shape = take(&r, 4);
    for (uint32_t i = 0; i < npool; i++)
        pool[i] = (int32_t)(take(&r, 0) << 24 | take(&r, 0) << 16 | take(&r, 0) << 8 | take(&r, 0));
    int with_ranks = take(&r, 3) != 0;
    for (int32_t i = 0; i < n; i++) {
        uint32_t b = take(&r, 0);
        /* shape 0: a few hash codes (one bin); 1: same low bits, spread high bits; else random */
        if (shape == 0) hc[i] = pool[b % npool];
        else if (shape == 1) hc[i] = (int32_t)(((uint32_t)b << 16) ^ ((uint32_t)b << 24) ^ (uint32_t)pool[0]);
        else hc[i] = (int32_t)((uint32_t)pool[b % npool] + (uint32_t)take(&r, 0) * 0x9E3779B9u);
        rk[i] = take(&r, 11) == 0 ? KC_JH_NO_RANK : (int64_t)take(&r, 0) - 128;
    }
    int64_t init = take(&r, 4) == 0 ? -1 : (int64_t)take(&r, 0) * (int64_t)(take(&r, 3) + 1);
    int mode = (int)take(&r, 2);
    int64_t cap = 0;
    int rc = kc_javahash_order(n, hc, with_ranks ? rk : NULL, init, mode, order, &cap);
    check(rc == KC_JH_OK, "valid input rejected");
    check(n == 0 || (cap >= 1 && (cap & (cap - 1)) == 0), "capacity not a power of two");
    check(n <= cap, "more keys than slots");
    memset(seen, 0, sizeof seen);
    for (int32_t k = 0; k < n; k++) {
        check(order[k] >= 0 && order[k] < n && !seen[order[k]], "order is not a permutation");
        seen[order[k]] = 1;
        if (k) check(bucket(hc[order[k - 1]], cap) <= bucket(hc[order[k]], cap), "buckets out of order");
    }
    rc = kc_javahash_order(n, hc, with_ranks ? rk : NULL, init, mode, again, NULL);
    check(rc == KC_JH_OK && memcmp(order, again, (size_t)n * sizeof *order) == 0, "not deterministic");

    /* distinct buckets at 64 slots and above: no bin reaches 8 keys, never a tree */
    if (mode == KC_JH_PUT && init < 0 && n <= 48) {
        int distinct = 1;
        memset(seen, 0, 64);
        for (int32_t i = 0; i < n && distinct; i++) {
            uint32_t b = bucket(hc[i], 64);
            distinct = !seen[b];
            seen[b] = 1;
        }
        if (distinct)
            for (int32_t k = 1; k < n; k++) {
                uint32_t a = bucket(hc[order[k - 1]], cap), b = bucket(hc[order[k]], cap);
                check(a < b || (a == b && order[k - 1] < order[k]), "plain bins not in insertion order");
            }
    }
    static int64_t keys[MAX_N];
    static int32_t first[MAX_N];
    for (int32_t i = 0; i < n; i++) keys[i] = (int64_t)hc[i] * (int64_t)(take(&r, 3));
    int32_t k = kc_javahash_distinct(n, keys, first), at = 0;
    check(k >= 0 && k <= n, "distinct count out of range");
    for (int32_t i = 0; i < n; i++) {
        int dup = 0;
        for (int32_t j = 0; j < i && !dup; j++) dup = keys[j] == keys[i];
        if (!dup) check(at < k && first[at++] == i, "distinct missed a first occurrence");
    }
    check(at == k, "distinct kept a repeat");
    check(kc_javahash_distinct(-1, keys, first) == KC_JH_EINVAL, "distinct: n < 0 accepted");
    check(kc_javahash_order(-1, hc, NULL, -1, KC_JH_PUT, order, NULL) == KC_JH_EINVAL, "n < 0 accepted");
    check(kc_javahash_order(n, hc, NULL, -1, 7, order, NULL) == KC_JH_EINVAL, "bad mode accepted");
    check(kc_javahash_order(n, hc, NULL, (int64_t)KC_JH_MAX_CAPACITY + 1, KC_JH_PUT, order, NULL)
          == KC_JH_EINVAL, "capacity above MAXIMUM_CAPACITY accepted");
}

#include "fuzz_main.h"
