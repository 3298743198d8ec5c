/*
 * Fuzz target for the KRaft metadata image kernels (csrc/kc_kraft_image.c), the ones
 * behind kcodec/kraft/_image.pyx.  The first byte picks one of three runs:
 *
 * - id index: a key table of 16-byte ids (many equal, many that differ in one byte, so
 *   probe runs collide and wrap), a power-of-two slot table of 1..64 slots, and a series
 *   of kc_kraft_ids_put / _drop / _find calls from an empty table, loaded up to one free
 *   slot (all the binding demands; kcodec.kraft keeps it at half).  A model (which row
 *   each id points to) gives every answer: find returns the row last put for that id,
 *   drop says whether the row was indexed, and after every call the table holds each
 *   indexed row exactly once, rows of the key table only, and still a free slot.
 * - partition index: keys ascending (topic << 32 | the partition id's 32 bits, as
 *   kcodec.kraft builds them) or in any order with repeats, topic
 *   starts right or anywhere in 0..nkeys, queries with negative, huge and unknown topics
 *   and partitions.  Sorted unique keys: each answer is the linear search's; any keys:
 *   -1 or the row of a position holding exactly that key.
 * - partition changes: partition rows (epochs near INT32_MAX among them), changes to
 *   rows in range or < 0 (skipped), leader / leaderRecoveryState values meaning
 *   "unchanged" or not, and each of the 7 list fields absent or present with offsets
 *   (not from 0, empty lists, non-decreasing, as the binding checks), a validity bitmap
 *   at a bit offset or none, and value buffers with the room the binding checks for.
 *   The result must equal applying PartitionRegistration.merge in order (epochs wrap as
 *   Java ints do); values before `values_n` and after the appended ones stay untouched,
 *   and values_n never passes the buffer.
 *
 * Every array is allocated at exactly the size the binding would pass (NULL where it
 * passes NULL), so ASan sees any access past one.  abort() on a broken property; no
 * crash, no out-of-bounds access, no UB, no leak (build with ASan + UBSan).
 *
 * Standalone random driver (what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_kraft_image.c csrc/fuzz/fuzz_kraft_image.c -o fuzz_kraft_image
 *   ./fuzz_kraft_image SECONDS SEED
 * libFuzzer: clang -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER ... (same sources)
 */
#define FUZZ_NAME "fuzz_kraft_image"

#include "kc_kraft_image.h"
#include "fuzz_input.h"

#include <string.h>

#define MAX_KEYS 24
#define MAX_OPS 40
#define MAX_FIND 12
#define MAX_PKEYS 40
#define MAX_ROWS 8
#define MAX_CHANGES 16

/* an int32 now and then at the edges: epochs and leaders a log may carry */
static int32_t pick32(reader *r)
{
    switch (take(r, 8)) {
    case 0: return INT32_MAX;
    case 1: return INT32_MAX - 1;
    case 2: return INT32_MIN;
    case 3: return -1;
    case 4: return -2;
    default: return (int32_t)take(r, 0) - 16;
    }
}

/* ---- id index ---- */

static void make_id(reader *r, uint8_t *id, const uint8_t *keys, int32_t row)
{
    uint32_t kind = take(r, 4);
    if (kind == 0 && row > 0) {                    /* an id already in the table */
        memcpy(id, keys + 16 * (size_t)take(r, (uint32_t)row), 16);
        return;
    }
    memset(id, 0, 16);
    if (kind <= 1) {                               /* small ids, as tests and tools use */
        id[take(r, 16)] = (uint8_t)take(r, 4);
        return;
    }
    for (int b = 0; b < 16; b++)
        id[b] = (uint8_t)take(r, 0);
}

static int slot_of(const int32_t *slots, int64_t cap, int32_t row)
{
    int seen = 0;
    for (int64_t s = 0; s < cap; s++)
        seen += slots[s] == row;
    return seen;
}

/* the indexed row whose id is `id`, -1 when none (the model's answer) */
static int32_t model_find(const uint8_t *keys, const uint8_t *indexed, int32_t m, const uint8_t *id)
{
    for (int32_t k = 0; k < m; k++)
        if (indexed[k] && memcmp(keys + 16 * (size_t)k, id, 16) == 0)
            return k;
    return -1;
}

static void run_ids(reader *r)
{
    int32_t m = (int32_t)take(r, MAX_KEYS) + 1;    /* the binding skips empty key tables */
    int64_t cap = (int64_t)1 << take(r, 7);
    uint8_t *keys = malloc(16 * (size_t)m);
    int32_t *slots = malloc(sizeof(int32_t) * (size_t)cap);
    uint8_t indexed[MAX_KEYS + 1];
    int32_t used = 0;
    for (int32_t k = 0; k < m; k++)
        make_id(r, keys + 16 * (size_t)k, keys, k);
    for (int64_t s = 0; s < cap; s++)
        slots[s] = -1;
    memset(indexed, 0, sizeof indexed);
    int32_t nops = (int32_t)take(r, MAX_OPS + 1);
    for (int32_t op = 0; op < nops; op++) {
        switch (take(r, 3)) {
        case 0: {                                  /* put: the binding's checks first */
            int32_t n = (int32_t)take(r, 6) + 1;
            if (used + n >= cap)
                n = (int32_t)(cap - 1 - used);
            if (n <= 0)
                break;
            int32_t *rows = malloc(sizeof(int32_t) * (size_t)n);
            for (int32_t i = 0; i < n; i++)
                rows[i] = (int32_t)take(r, (uint32_t)m);
            kc_kraft_ids_put(keys, slots, cap, rows, n);
            for (int32_t i = 0; i < n; i++) {      /* an equal id indexed: its row is replaced */
                int32_t old = model_find(keys, indexed, m, keys + 16 * (size_t)rows[i]);
                if (old >= 0) {
                    indexed[old] = 0;
                    used--;
                }
                indexed[rows[i]] = 1;
                used++;
            }
            free(rows);
            break;
        }
        case 1: {
            int32_t row = (int32_t)take(r, (uint32_t)m);
            int got = kc_kraft_ids_drop(keys, slots, cap, row);
            check(got == indexed[row], "drop: indexed or not");
            if (indexed[row]) {
                indexed[row] = 0;
                used--;
            }
            break;
        }
        default: {
            int32_t n = (int32_t)take(r, MAX_FIND) + 1;
            uint8_t *ids = malloc(16 * (size_t)n);
            int32_t *out = malloc(sizeof(int32_t) * (size_t)n);
            for (int32_t i = 0; i < n; i++)
                make_id(r, ids + 16 * (size_t)i, keys, m);
            kc_kraft_ids_find(keys, slots, cap, ids, n, out);
            for (int32_t i = 0; i < n; i++)
                check(out[i] == model_find(keys, indexed, m, ids + 16 * (size_t)i), "find: the row put last");
            free(ids);
            free(out);
            break;
        }
        }
        int32_t live = 0;
        for (int64_t s = 0; s < cap; s++) {
            check(slots[s] >= -1 && slots[s] < m, "a slot outside the key table");
            live += slots[s] >= 0;
        }
        check(live == used && live < cap, "slots in use");
        for (int32_t k = 0; k < m; k++)
            check(slot_of(slots, cap, k) == indexed[k], "an indexed row once, no other");
    }
    free(keys);
    free(slots);
}

/* ---- partition index ---- */

static int64_t part_key(int32_t t, int32_t p)
{
    /* as kcodec.kraft builds them: (topic << 32) | the partition id's 32 bits (masked, so
     * that a negative id cannot alias another topic's partition) */
    return (int64_t)((uint64_t)(uint32_t)t << 32) | (int64_t)(uint32_t)p;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int32_t pick_partition(reader *r)
{
    switch (take(r, 10)) {
    case 0: return -(int32_t)take(r, 3) - 1;
    case 1: return INT32_MAX - (int32_t)take(r, 2);
    case 2: return INT32_MIN;
    default: return (int32_t)take(r, 12);
    }
}

static void run_parts(reader *r)
{
    int64_t nkeys = 0;
    int64_t buf[MAX_PKEYS];
    int sorted = take(r, 6) != 0;
    int32_t ntop = (int32_t)take(r, 5) + 1;
    if (sorted) {                                  /* as a log creates them, with gaps */
        for (int32_t t = 0; t < ntop && nkeys < MAX_PKEYS; t++) {
            int32_t np = (int32_t)take(r, 10);
            for (int32_t p = 0; p < np && nkeys < MAX_PKEYS; p++)
                if (take(r, 8))
                    buf[nkeys++] = part_key(t, p);
        }
        int32_t extra = (int32_t)take(r, 4);
        for (int32_t e = 0; e < extra && nkeys < MAX_PKEYS; e++)
            buf[nkeys++] = part_key((int32_t)take(r, (uint32_t)ntop + 1), pick_partition(r));
        qsort(buf, (size_t)nkeys, sizeof buf[0], cmp64);
        int64_t u = 0;
        for (int64_t k = 0; k < nkeys; k++)
            if (!u || buf[k] != buf[u - 1])
                buf[u++] = buf[k];
        nkeys = u;
    } else {
        nkeys = take(r, MAX_PKEYS + 1);
        for (int64_t k = 0; k < nkeys; k++)
            buf[k] = part_key((int32_t)take(r, (uint32_t)ntop), pick_partition(r));
    }
    int64_t *keys = nkeys ? malloc(sizeof(int64_t) * (size_t)nkeys) : NULL;
    int64_t *rows = nkeys ? malloc(sizeof(int64_t) * (size_t)nkeys) : NULL;
    for (int64_t k = 0; k < nkeys; k++) {
        keys[k] = buf[k];
        rows[k] = take(r, 16) ? 1000 + k : (int64_t)take(r, 0) - 128;
    }
    /* topic starts: where each topic's keys begin (kcodec.kraft's searchsorted) or any
     * position the binding lets through */
    int64_t ntopics = take(r, (uint32_t)ntop + 2);
    int wrong = take(r, 4) == 0;
    int64_t *starts = ntopics ? malloc(sizeof(int64_t) * (size_t)ntopics) : NULL;
    for (int64_t t = 0; t < ntopics; t++) {
        int64_t at = 0;
        while (at < nkeys && keys[at] < part_key((int32_t)t, 0))
            at++;
        starts[t] = wrong ? (int64_t)take(r, (uint32_t)nkeys + 1) : at;
    }
    int64_t n = take(r, 32) + 1;                   /* the binding calls with n > 0 only */
    int32_t *topic = malloc(sizeof(int32_t) * (size_t)n);
    int32_t *partition = malloc(sizeof(int32_t) * (size_t)n);
    int64_t *out = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = take(r, 12);
        topic[i] = k == 0 ? INT32_MAX : k == 1 ? -(int32_t)take(r, 3) - 1 : k == 2 ? INT32_MIN
                 : (int32_t)take(r, (uint32_t)ntop + 2);
        partition[i] = pick_partition(r);
    }
    kc_kraft_parts_find(keys, rows, nkeys, starts, ntopics, topic, partition, n, out);
    for (int64_t i = 0; i < n; i++) {
        int64_t key = part_key(topic[i], partition[i]), want = -1;
        int any = 0, found = 0;
        for (int64_t k = 0; k < nkeys && topic[i] >= 0; k++)
            if (keys[k] == key) {
                if (!any)
                    want = rows[k];
                any = 1;
                found |= out[i] == rows[k];
            }
        if (topic[i] < 0)
            check(out[i] == -1, "parts: a negative topic found");
        else if (sorted)
            check(out[i] == want, "parts: not the indexed row");
        else
            check(out[i] == -1 || found, "parts: a row of another key");
    }
    free(keys);
    free(rows);
    free(starts);
    free(topic);
    free(partition);
    free(out);
}

/* ---- partition changes ---- */

typedef struct {
    int32_t *offsets;
    uint8_t *validity;
    int64_t voff;
    int32_t *values;
    int64_t values_len;
} list_in;

typedef struct {
    int64_t start[MAX_ROWS + 1];
    int32_t length[MAX_ROWS + 1];
    uint8_t null[MAX_ROWS + 1];
} list_rows;

/* Java's int + 1: INT32_MAX wraps to INT32_MIN */
static int32_t wrap_inc(int32_t v)
{
    uint32_t u = (uint32_t)v + 1u;
    return u > (uint32_t)INT32_MAX ? -(int32_t)(~u) - 1 : (int32_t)u;
}

static void run_changes(reader *r)
{
    int64_t nrows = take(r, MAX_ROWS + 1);
    int64_t n = take(r, MAX_CHANGES) + 1;          /* the binding calls with n > 0 only */
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)n);
    int32_t *leader = malloc(sizeof(int32_t) * (size_t)n);
    int8_t *lrs = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = take(r, 16);
        rows[i] = k == 0 ? INT64_MIN : (int64_t)take(r, (uint32_t)nrows + 2) - 2;
        leader[i] = take(r, 3) == 0 ? KC_KRAFT_NO_LEADER_CHANGE : pick32(r);
        lrs[i] = take(r, 3) == 0 ? -1 : (int8_t)take(r, 0);
    }
    size_t rsz = (size_t)nrows;
    int32_t *leader_col = malloc(sizeof(int32_t) * rsz), *leader_epoch_col = malloc(sizeof(int32_t) * rsz);
    int32_t *partition_epoch_col = malloc(sizeof(int32_t) * rsz);
    int8_t *lrs_col = malloc(rsz);
    int32_t m_leader[MAX_ROWS + 1], m_le[MAX_ROWS + 1], m_pe[MAX_ROWS + 1];
    int8_t m_lrs[MAX_ROWS + 1];
    for (int64_t j = 0; j < nrows; j++) {
        m_leader[j] = leader_col[j] = pick32(r);
        m_le[j] = leader_epoch_col[j] = pick32(r);
        m_pe[j] = partition_epoch_col[j] = pick32(r);
        m_lrs[j] = lrs_col[j] = (int8_t)take(r, 3);
    }
    kc_kraft_list_in ins[KC_KRAFT_LISTS];
    kc_kraft_list_col cols[KC_KRAFT_LISTS];
    list_in li[KC_KRAFT_LISTS];
    list_rows before[KC_KRAFT_LISTS], want[KC_KRAFT_LISTS];
    int32_t *cv_before[KC_KRAFT_LISTS];
    int64_t cv_len[KC_KRAFT_LISTS], used[KC_KRAFT_LISTS], m_used[KC_KRAFT_LISTS];
    for (int k = 0; k < KC_KRAFT_LISTS; k++) {
        memset(&li[k], 0, sizeof li[k]);
        memset(&ins[k], 0, sizeof ins[k]);
        int present = take(r, 3) != 0;
        int64_t span = 0;
        if (present) {                             /* offsets: n + 1, from >= 0, never down */
            li[k].offsets = malloc(sizeof(int32_t) * (size_t)(n + 1));
            int32_t at = (int32_t)take(r, 5);
            for (int64_t i = 0; i <= n; i++) {
                if (i)
                    at += take(r, 8) == 0 ? (int32_t)take(r, 24) : (int32_t)take(r, 4);
                li[k].offsets[i] = at;
            }
            span = li[k].offsets[n] - li[k].offsets[0];
            li[k].values_len = li[k].offsets[n] + take(r, 3);
            li[k].values = li[k].values_len ? malloc(sizeof(int32_t) * (size_t)li[k].values_len) : NULL;
            for (int64_t v = 0; v < li[k].values_len; v++)
                li[k].values[v] = (int32_t)take(r, 0) - 1;
            if (take(r, 2)) {                      /* a validity bitmap at a bit offset */
                li[k].voff = take(r, 20);
                size_t nb = (size_t)((li[k].voff + n + 7) / 8);
                li[k].validity = malloc(nb);
                for (size_t b = 0; b < nb; b++)
                    li[k].validity[b] = (uint8_t)take(r, 0);
            }
            ins[k].offsets = li[k].offsets;
            ins[k].validity = li[k].validity;
            ins[k].validity_offset = li[k].voff;
            ins[k].values = li[k].values;
        }
        /* the image's list column: rows as they were, room for every value appended */
        used[k] = take(r, 6);
        cv_len[k] = used[k] + span + take(r, 3);
        cols[k].start = malloc(sizeof(int64_t) * rsz);
        cols[k].length = malloc(sizeof(int32_t) * rsz);
        cols[k].null = malloc(rsz);
        cols[k].values = cv_len[k] ? malloc(sizeof(int32_t) * (size_t)cv_len[k]) : NULL;
        cols[k].values_n = used[k];
        cv_before[k] = malloc(sizeof(int32_t) * (size_t)cv_len[k] + 1);
        for (int64_t v = 0; v < cv_len[k]; v++)
            cols[k].values[v] = cv_before[k][v] = -1000 - (int32_t)v;
        for (int64_t j = 0; j < nrows; j++) {
            cols[k].start[j] = before[k].start[j] = take(r, (uint32_t)used[k] + 1);
            cols[k].length[j] = before[k].length[j] = 0;
            cols[k].null[j] = before[k].null[j] = (uint8_t)take(r, 2);
        }
        want[k] = before[k];
        m_used[k] = used[k];
    }
    kc_kraft_apply_changes(n, rows, leader, lrs, ins, leader_col, leader_epoch_col,
                           partition_epoch_col, lrs_col, cols);
    /* the model: PartitionRegistration.merge, change by change; the
     * values appended, in order, must be the present lists' */
    for (int64_t i = 0; i < n; i++) {
        int64_t row = rows[i];
        if (row < 0)
            continue;
        m_pe[row] = wrap_inc(m_pe[row]);
        if (leader[i] != KC_KRAFT_NO_LEADER_CHANGE) {
            m_leader[row] = leader[i];
            m_le[row] = wrap_inc(m_le[row]);
        }
        if (lrs[i] != -1)
            m_lrs[row] = lrs[i];
        for (int k = 0; k < KC_KRAFT_LISTS; k++) {
            if (!li[k].offsets)
                continue;
            int64_t bit = i + li[k].voff;
            if (li[k].validity && !((li[k].validity[bit / 8] >> (bit % 8)) & 1))
                continue;
            int32_t a = li[k].offsets[i], len = li[k].offsets[i + 1] - a;
            check(m_used[k] + len <= cv_len[k] && (len == 0 || memcmp(cols[k].values + m_used[k],
                  li[k].values + a, sizeof(int32_t) * (size_t)len) == 0), "changes: a list's values");
            want[k].start[row] = m_used[k];
            want[k].length[row] = len;
            want[k].null[row] = 0;
            m_used[k] += len;
        }
    }
    for (int64_t j = 0; j < nrows; j++) {
        check(leader_col[j] == m_leader[j], "changes: leader");
        check(leader_epoch_col[j] == m_le[j], "changes: leader epoch");
        check(partition_epoch_col[j] == m_pe[j], "changes: partition epoch");
        check(lrs_col[j] == m_lrs[j], "changes: leader recovery state");
    }
    for (int k = 0; k < KC_KRAFT_LISTS; k++) {
        kc_kraft_list_col *c = &cols[k];
        check(c->values_n == m_used[k], "changes: values used");
        check(c->values_n >= used[k] && c->values_n <= cv_len[k], "changes: values_n past the buffer");
        for (int64_t v = 0; v < used[k]; v++)
            check(c->values[v] == cv_before[k][v], "changes: a value before values_n written");
        for (int64_t v = c->values_n; v < cv_len[k]; v++)
            check(c->values[v] == cv_before[k][v], "changes: a value past the appended ones written");
        for (int64_t j = 0; j < nrows; j++) {
            check(c->start[j] == want[k].start[j] && c->length[j] == want[k].length[j]
                  && c->null[j] == want[k].null[j], "changes: a list's row");
        }
    }
    free(rows);
    free(leader);
    free(lrs);
    free(leader_col);
    free(leader_epoch_col);
    free(partition_epoch_col);
    free(lrs_col);
    for (int k = 0; k < KC_KRAFT_LISTS; k++) {
        free(li[k].offsets);
        free(li[k].validity);
        free(li[k].values);
        free(cols[k].start);
        free(cols[k].length);
        free(cols[k].null);
        free(cols[k].values);
        free(cv_before[k]);
    }
}

static void run_one(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    switch (take(&r, 3)) {
    case 0: run_ids(&r); break;
    case 1: run_parts(&r); break;
    default: run_changes(&r); break;
    }
}

#include "fuzz_main.h"
