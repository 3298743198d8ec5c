/*
 * KRaft image kernels (kc_kraft_extract.c).  Plain C99, no Python headers.
 */
#ifndef KC_KRAFT_H
#define KC_KRAFT_H

#include <stddef.h>
#include <stdint.h>

enum { KC_KRAFT_SCALAR = 0, KC_KRAFT_UUID = 1, KC_KRAFT_INT_LIST = 2, KC_KRAFT_UUID_LIST = 3 };
#define KC_KRAFT_ABSENT ((int32_t)0x80000000)

/* One wanted top-level field: `ref` >= 0 a regular field index, -1 - k tagged-table
 * entry k, KC_KRAFT_ABSENT when the version lacks it; `slot` its output column among
 * those of its kind; `def` the value of an absent scalar. */
typedef struct {
    int32_t ref;
    int32_t kind;
    int32_t slot;
    int64_t def;
} kc_kraft_role;

/* Outputs.  scalars: n_scalar x n_rows int64; uuids: n_uuid x n_rows x 16 bytes;
 * list_len: n_list x n_rows (-2 absent, -1 null, else the count); list values are
 * appended to list_ints[slot] (int lists) / list_uuids[slot] (16 bytes each), whose
 * capacity the caller sizes from the input (an element takes at least 4 / 16 input
 * bytes); list_used[slot] counts what was appended. */
typedef struct {
    size_t n_rows;
    int64_t *scalars;
    uint8_t *uuids;
    int32_t *list_len;
    int32_t **list_ints;
    uint8_t **list_uuids;
    size_t *list_used;
} kc_kraft_out;

/* Decode rows[r][0 .. lens[r]) with `code` (one compiled message
 * version) and extract the roles.  `tape` has tape_cap slots (the longest row + 2
 * suffices).  status[r]: KC_OK or the engine's error code; err_off[r]: the byte
 * offset in the row.  Returns the number of bad rows. */
int kc_kraft_extract(const int32_t *code, const uint8_t *const *rows, const int64_t *lens,
                     size_t n_rows, const kc_kraft_role *roles, int n_roles,
                     int64_t *tape, size_t tape_cap, kc_kraft_out *out,
                     int32_t *status, int64_t *err_off);

#endif
