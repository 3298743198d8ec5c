/*
 * KRaft image replay: pull chosen fields out of many record bodies of one
 * (message, version) into columns, for the columnar metadata image.
 *
 * Decoding is the spec engine's (kc_decode with the message's compiled program);
 * this file only walks the resulting tape of the top-level struct, so it knows
 * no message: the caller says which top-level fields it wants ("roles") and how
 * to lay them out.  Plain C99, no Python headers.
 */
#include <string.h>

#include "kc_engine.h"
#include "kc_kraft.h"

/* Where field `ref` of struct 0 lives: regular field index (>= 0) or tagged-table
 * entry (-1 - k).  Returns its type words. */
static const int32_t *field_words(const int32_t *code, int32_t ref, int *is_tagged)
{
    const int32_t *blk = code + code[2];
    int32_t n_fields = blk[1];
    if (ref >= 0) {
        *is_tagged = 0;
        return blk + 4 + 3 * ref;
    }
    *is_tagged = 1;
    return blk + 4 + 3 * n_fields + 4 * (-1 - ref) + 1;   /* skip the tag word */
}

static void put_value(const kc_kraft_role *role, size_t r, const int64_t *tape, size_t i,
                      int type, const uint8_t *row, kc_kraft_out *out)
{
    if (role->kind == KC_KRAFT_SCALAR) {
        out->scalars[role->slot * out->n_rows + r] = tape[i];
        return;
    }
    if (role->kind == KC_KRAFT_UUID) {
        int64_t ref = tape[i];
        uint8_t *dst = out->uuids + (role->slot * out->n_rows + r) * 16;
        if (ref)
            memcpy(dst, row + KC_REF_OFF(ref), 16);
        return;
    }
    /* list: count slot (-1 null), then one slot per element */
    int64_t count = tape[i];
    out->list_len[role->slot * out->n_rows + r] = (int32_t)count;
    if (count <= 0)
        return;
    (void)type;
    if (role->kind == KC_KRAFT_INT_LIST) {
        int32_t *dst = out->list_ints[role->slot] + out->list_used[role->slot];
        for (int64_t k = 0; k < count; k++)
            dst[k] = (int32_t)tape[i + 1 + k];
    } else {
        uint8_t *dst = out->list_uuids[role->slot] + 16 * out->list_used[role->slot];
        for (int64_t k = 0; k < count; k++)
            memcpy(dst + 16 * k, row + KC_REF_OFF(tape[i + 1 + k]), 16);
    }
    out->list_used[role->slot] += (size_t)count;
}

int kc_kraft_extract(const int32_t *code, const uint8_t *const *rows, const int64_t *lens,
                     size_t n_rows, const kc_kraft_role *roles, int n_roles,
                     int64_t *tape, size_t tape_cap, kc_kraft_out *out,
                     int32_t *status, int64_t *err_off)
{
    const int32_t *blk = code + code[2];
    int flexible = blk[0] & 1;
    int32_t n_fields = blk[1];
    int bad = 0;
    /* role lookup: regular field index / tagged index -> role */
    int by_field[64], by_tag[64];
    for (int k = 0; k < 64; k++)
        by_field[k] = by_tag[k] = -1;
    for (int j = 0; j < n_roles; j++) {
        int32_t ref = roles[j].ref;
        if (ref >= 0 && ref < 64)
            by_field[ref] = j;
        else if (ref < 0 && ref != KC_KRAFT_ABSENT && -1 - ref < 64)
            by_tag[-1 - ref] = j;
    }
    for (size_t r = 0; r < n_rows; r++) {
        const uint8_t *row = rows[r];
        size_t len = lens[r] < 0 ? 0 : (size_t)lens[r];
        for (int j = 0; j < n_roles; j++) {
            const kc_kraft_role *ro = &roles[j];
            if (ro->kind == KC_KRAFT_SCALAR)
                out->scalars[ro->slot * n_rows + r] = ro->def;
            else if (ro->kind == KC_KRAFT_UUID)
                memset(out->uuids + (ro->slot * n_rows + r) * 16, 0, 16);
            else
                out->list_len[ro->slot * n_rows + r] = -2;   /* absent */
        }
        if (len + 2 > tape_cap) {
            status[r] = KC_E_TAPE_FULL;
            err_off[r] = 0;
            bad++;
            continue;
        }
        size_t end = 0, n_slots = 0;
        kc_error err;
        int rc = kc_decode(code, row, len, 0, tape, tape_cap, &end, &n_slots, &err);
        if (rc == KC_OK && end != len) {
            rc = KC_E_TRAILING;
            err.offset = (int64_t)end;
        }
        status[r] = rc;
        err_off[r] = rc == KC_OK ? 0 : err.offset;
        if (rc != KC_OK) {
            bad++;
            continue;
        }
        size_t i = 0;
        for (int32_t f = 0; f < n_fields; f++) {
            int tagged;
            const int32_t *w = field_words(code, f, &tagged);
            if (by_field[f] >= 0)
                put_value(&roles[by_field[f]], r, tape, i, w[0], row, out);
            int64_t s = kc_tape_skip(code, tape, n_slots, i, w[0], w[1], w[2], 0);
            if (s < 0) { status[r] = KC_E_TAPE; bad++; goto next; }
            i += (size_t)s;
        }
        if (flexible) {
            int64_t n_entries = tape[i++];
            for (int64_t e = 0; e < n_entries; e++) {
                int64_t k = tape[i++];
                if (k < 0) {      /* unknown tag: its raw payload */
                    i++;
                    continue;
                }
                int tagged;
                const int32_t *w = field_words(code, (int32_t)(-1 - k), &tagged);
                if (k < 64 && by_tag[k] >= 0)
                    put_value(&roles[by_tag[k]], r, tape, i, w[0], row, out);
                int64_t s = kc_tape_skip(code, tape, n_slots, i, w[0], w[1], w[2], 1);
                if (s < 0) { status[r] = KC_E_TAPE; bad++; goto next; }
                i += (size_t)s;
            }
        }
    next:;
    }
    return bad;
}
