/* KRaft metadata image kernels; see kc_kraft_image.h. */
#include "kc_kraft_image.h"

#include <string.h>

static uint64_t id_hash(const uint8_t *p)
{
    uint64_t a, b, h;
    memcpy(&a, p, 8);
    memcpy(&b, p + 8, 8);
    /* ids are random in practice, but tests and tools use small ones: mix both halves */
    h = a ^ (b * 0x9E3779B97F4A7C15ULL);
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ULL;
    h ^= h >> 32;
    return h;
}

void kc_kraft_ids_find(const uint8_t *keys, const int32_t *slots, int64_t cap,
                       const uint8_t *ids, int64_t n, int32_t *out)
{
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *id = ids + 16 * i;
        uint64_t s = id_hash(id) & mask;
        int32_t hit = -1;
        for (;;) {
            int32_t r = slots[s];
            if (r < 0)
                break;
            if (memcmp(keys + 16 * (int64_t)r, id, 16) == 0) {
                hit = r;
                break;
            }
            s = (s + 1) & mask;
        }
        out[i] = hit;
    }
}

void kc_kraft_ids_put(const uint8_t *keys, int32_t *slots, int64_t cap,
                      const int32_t *rows, int64_t n)
{
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *id = keys + 16 * (int64_t)rows[i];
        uint64_t s = id_hash(id) & mask;
        for (;;) {
            int32_t r = slots[s];
            /* an equal id already indexed: the new row takes its place */
            if (r < 0 || memcmp(keys + 16 * (int64_t)r, id, 16) == 0) {
                slots[s] = rows[i];
                break;
            }
            s = (s + 1) & mask;
        }
    }
}

int kc_kraft_ids_drop(const uint8_t *keys, int32_t *slots, int64_t cap, int32_t row)
{
    uint64_t mask = (uint64_t)cap - 1;
    uint64_t s = id_hash(keys + 16 * (int64_t)row) & mask;
    while (slots[s] != row) {
        if (slots[s] < 0)
            return 0;
        s = (s + 1) & mask;
    }
    /* backward shift: pull later entries of the probe run into the hole when their home
     * slot does not lie cyclically in (hole, j] */
    uint64_t hole = s, j = s;
    for (;;) {
        j = (j + 1) & mask;
        int32_t r = slots[j];
        if (r < 0)
            break;
        uint64_t home = id_hash(keys + 16 * (int64_t)r) & mask;
        int stays = (hole <= j) ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            slots[hole] = r;
            hole = j;
        }
    }
    slots[hole] = -1;
    return 1;
}

void kc_kraft_parts_find(const int64_t *keys, const int64_t *rows, int64_t nkeys,
                         const int64_t *topic_start, int64_t ntopics, const int32_t *topic,
                         const int32_t *partition, int64_t n, int64_t *out)
{
    for (int64_t i = 0; i < n; i++) {
        int32_t t = topic[i];
        /* the id's 32 bits, masked: a negative id must not spill into the topic's bits */
        int64_t key = ((int64_t)t * ((int64_t)1 << 32)) | (int64_t)(uint32_t)partition[i];
        int64_t hit = -1;
        if (t < 0 || nkeys == 0) {
            out[i] = -1;
            continue;
        }
        if (t < ntopics && partition[i] >= 0) {
            int64_t pos = topic_start[t] + partition[i];
            if (pos < nkeys && keys[pos] == key) {
                out[i] = rows[pos];
                continue;
            }
        }
        int64_t lo = 0, hi = nkeys;         /* first position with keys[pos] >= key */
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (keys[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < nkeys && keys[lo] == key)
            hit = rows[lo];
        out[i] = hit;
    }
}

/* Java's int + 1 (PartitionRegistration.merge): a log may carry an epoch at INT32_MAX,
 * which the next change wraps to INT32_MIN; in C that overflow would be undefined */
static int32_t epoch_bump(int32_t epoch)
{
    return epoch == INT32_MAX ? INT32_MIN : epoch + 1;
}

void kc_kraft_apply_changes(int64_t n, const int64_t *rows, const int32_t *leader,
                            const int8_t *lrs, const kc_kraft_list_in *lists,
                            int32_t *leader_col, int32_t *leader_epoch_col,
                            int32_t *partition_epoch_col, int8_t *lrs_col,
                            kc_kraft_list_col *cols)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t r = rows[i];
        if (r < 0)
            continue;
        partition_epoch_col[r] = epoch_bump(partition_epoch_col[r]);
        if (leader[i] != KC_KRAFT_NO_LEADER_CHANGE) {
            leader_col[r] = leader[i];
            leader_epoch_col[r] = epoch_bump(leader_epoch_col[r]);
        }
        if (lrs[i] != -1)
            lrs_col[r] = lrs[i];
        for (int k = 0; k < KC_KRAFT_LISTS; k++) {
            const kc_kraft_list_in *in = &lists[k];
            if (!in->offsets)
                continue;
            int64_t bit = i + in->validity_offset;
            if (in->validity && !((in->validity[bit >> 3] >> (bit & 7)) & 1))
                continue;       /* null: this change leaves the list as it is */
            kc_kraft_list_col *c = &cols[k];
            int32_t a = in->offsets[i], len = in->offsets[i + 1] - a;
            if (len > 0)
                memcpy(c->values + c->values_n, in->values + a, (size_t)len * sizeof(int32_t));
            c->start[r] = c->values_n;
            c->length[r] = len;
            if (c->null[r])     /* mostly 0 already: leave those pages unwritten */
                c->null[r] = 0;
            c->values_n += len;
        }
    }
}
