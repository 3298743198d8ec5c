/* KRaft metadata image kernels (plain C99, no Python headers): the hot loops of
 * kcodec.kraft's replay, over arrays the caller owns.
 *
 * Id index: an open-addressing hash table (linear probing) from 16-byte ids (topic and
 * directory UUIDs) to their row in a key table.  `slots` has a power-of-two `cap` of
 * int32 entries, -1 empty, else a row of `keys` (16 bytes a row); the caller keeps the
 * load at or under one half.  Removal shifts the probe run back (no tombstones).
 *
 * Partition changes: PartitionChangeRecords applied one by one in log order to the
 * partition columns, as PartitionRegistration.merge does (every change bumps the
 * partition epoch, a leader change also the leader epoch; a list present replaces the
 * row's list, appended to that list column's value buffer).
 */
#ifndef KC_KRAFT_IMAGE_H
#define KC_KRAFT_IMAGE_H

#include <stdint.h>

#define KC_KRAFT_LISTS 7      /* replicas, isr, removing, adding, elr, last known elr, dirs */
#define KC_KRAFT_NO_LEADER_CHANGE (-2)

void kc_kraft_ids_find(const uint8_t *keys, const int32_t *slots, int64_t cap,
                       const uint8_t *ids, int64_t n, int32_t *out);
void kc_kraft_ids_put(const uint8_t *keys, int32_t *slots, int64_t cap,
                      const int32_t *rows, int64_t n);
int kc_kraft_ids_drop(const uint8_t *keys, int32_t *slots, int64_t cap, int32_t row);

/* Partition index: `keys` ascending (topic << 32 | the partition id's 32 bits, as int64), `rows` the row
 * of each; `topic_start[t]` (t < ntopics) the position of topic t's first key.  Row of
 * each (topic[i], partition[i]), -1 when not indexed: a topic's partitions are mostly
 * 0..N-1, so the guess topic_start + partition mostly hits; else a binary search. */
void kc_kraft_parts_find(const int64_t *keys, const int64_t *rows, int64_t nkeys,
                         const int64_t *topic_start, int64_t ntopics, const int32_t *topic,
                         const int32_t *partition, int64_t n, int64_t *out);

typedef struct {
    int64_t *start;           /* per partition row */
    int32_t *length;
    uint8_t *null;
    int32_t *values;          /* the value buffer; values_n used, room for every append */
    int64_t values_n;
} kc_kraft_list_col;

typedef struct {
    const int32_t *offsets;   /* n + 1 list offsets of the decoded column, or NULL: absent */
    const uint8_t *validity;  /* Arrow validity bitmap (bit set: present), or NULL: all */
    int64_t validity_offset;  /* bit of row 0 in validity */
    const int32_t *values;    /* the decoded values (directories: directory indexes) */
} kc_kraft_list_in;

/* Apply changes i = 0..n-1 to partition rows[i] (< 0: skipped).  leader and lrs are the
 * decoded values (KC_KRAFT_NO_LEADER_CHANGE / -1: unchanged). */
void kc_kraft_apply_changes(int64_t n, const int64_t *rows, const int32_t *leader,
                            const int8_t *lrs, const kc_kraft_list_in *lists,
                            int32_t *leader_col, int32_t *leader_epoch_col,
                            int32_t *partition_epoch_col, int8_t *lrs_col,
                            kc_kraft_list_col *cols);

#endif
