/* `kcodec offsets dump` lines straight from the record bytes (kc_odump.h). */
#include "kc_odump.h"
#include "kc_engine.h"
#include "kc_jtext.h"

#include <stdlib.h>
#include <string.h>

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)

/* Bytes past a line's fixed pieces: the numbers, the tails, the copies' slack. */
#define SLACK 160

/* A line piece in 16-byte steps: every source has KC_OD_PAD readable bytes after it, the
 * output SLACK. */
static char *put_lit(char *p, const char *s, size_t n)
{
    for (size_t k = 0; k < n; k += 16)
        memcpy(p + k, s + k, 16);
    return p + n;
}

/* The batch's part of each line after the timestamp (record_json's header fields). */
static char *batch_head2(char *p, const kc_batch *b)
{
    if (b->attributes & 0x08)
        LIT(p, ", \"timestamp_type\": \"LogAppendTime\", \"producer_id\": ");
    else
        LIT(p, ", \"timestamp_type\": \"CreateTime\", \"producer_id\": ");
    p += write_num(p, b->producer_id);
    LIT(p, ", \"producer_epoch\": ");
    p += write_num(p, b->producer_epoch);
    if (b->attributes & 0x10)
        LIT(p, ", \"is_transactional\": true, \"is_control\": false, \"partition_leader_epoch\": ");
    else
        LIT(p, ", \"is_transactional\": false, \"is_control\": false, \"partition_leader_epoch\": ");
    p += write_num(p, b->partition_leader_epoch);
    LIT(p, ", ");
    return p;
}

/* The string REF a regular top-level field of the value holds (0: none, or not a string). */
static int64_t top_string(const int32_t *code, const int64_t *tape, size_t n, int32_t field)
{
    const int32_t *s = kc_prog_struct(code, 0);
    size_t i = 0;
    if (field < 0 || field >= KC_S_NF(s))
        return 0;
    for (int32_t f = 0; f < field; f++) {
        const int32_t *fd = KC_S_FIELD(s, f);
        int64_t w = kc_tape_skip(code, tape, n, i, fd[0], fd[1], fd[2], 0);
        if (w < 0)
            return 0;
        i += (size_t)w;
    }
    if (KC_S_FIELD(s, field)[0] != KC_T_STRING || i >= n)
        return 0;
    return tape[i];
}

static int in_range(int64_t pos, int64_t len, size_t data_len)
{
    return pos >= 0 && len >= 0 && (uint64_t)pos <= data_len && (uint64_t)len <= data_len - (uint64_t)pos;
}

/* Tape room for a message of n bytes (and, with val, its embedded messages), grown. */
static int64_t *tape_for(int64_t **tape, size_t *cap, size_t need)
{
    if (need > *cap) {
        free(*tape);
        *cap = need < 1024 ? 1024 : 2 * need;
        *tape = malloc(*cap * sizeof **tape);
        if (!*tape)
            *cap = 0;
    }
    return *tape;
}

/* The JSON of the message data[pos..end) at p: a flat one straight from its bytes, else
 * decoded onto the tape and written (with val: a value, written with val->alt when its
 * switch field says so, handed back when its protocol is another decoder's).  KC_OK,
 * KC_E_SHORT (no room), KC_E_NOMEM, or another code: the record is the caller's. */
static int put_msg(const kc_tj_msg *m, const uint8_t *data, size_t data_len, size_t pos, size_t end,
                   int64_t **tape, size_t *tcap, const kc_odump_value *val, char *p, size_t room,
                   size_t *n)
{
    if (!val || !val->alt.code) {    /* (a switch field is read from the tape) */
        int w = kc_tjson_direct(m, KC_TJ_PY, data, data_len, pos, end, p, room, n);
        if (w != KC_TJ_NOT_DIRECT)
            return w;
    }
    /* the tape, and room for embedded messages after it */
    size_t slots = end - pos + 2;
    if (!tape_for(tape, tcap, 2 * slots))
        return KC_E_NOMEM;
    int64_t *t = *tape, *scratch = *tape + slots;
    size_t stop = 0, used = 0;
    if (kc_decode(m->code, data, end, pos, t, slots, &stop, &used, NULL) != KC_OK || stop != end)
        return KC_E_INVALID;           /* the caller's way says what is wrong */
    if (val && val->alt.code) {
        int64_t ref = top_string(val->msg.code, t, used, val->sw_field);
        if (ref != 0 && KC_REF_LEN(ref) == (size_t)val->sw_len
            && memcmp(data + KC_REF_OFF(ref), val->sw_text, (size_t)val->sw_len) == 0) {
            m = &val->alt;
            int64_t ex = val->ex_len ? top_string(val->msg.code, t, used, val->ex_field) : 0;
            for (int32_t at = 0; ex != 0 && at < val->ex_len; ) {
                size_t k = (uint8_t)val->ex_text[at];
                if (at + 1 + (int64_t)k > val->ex_len)
                    break;
                if (KC_REF_LEN(ex) == k && memcmp(data + KC_REF_OFF(ex), val->ex_text + at + 1, k) == 0)
                    return KC_E_INVALID;   /* another decoder's protocol */
                at += 1 + (int32_t)k;
            }
        }
    }
    return kc_tjson_write(m, KC_TJ_PY, KC_TJ_F_REFUSE_UNKNOWN, data, data_len, t, used,
                          val ? scratch : NULL, val ? slots : 0, p, room, n);
}

int kc_odump_lines(const kc_odump_type *types, int32_t n_types, const kc_odump_sel *sel,
                   const char *head, int32_t head_len, int64_t base,
                   const uint8_t *data, size_t data_len,
                   const kc_batch *batches, int64_t n_batches,
                   const kc_record *recs, int64_t n_recs,
                   kc_odump_state *st, char *out, size_t cap, size_t *out_len)
{
    char *p = out, *end = out + cap;
    int64_t *tape = NULL;
    size_t tcap = 0;
    char *h1 = NULL, h2[256 + KC_OD_PAD];
    size_t h1_len = 0, h2_len = 0;
    int64_t h_batch = -1;
    int rc = KC_OD_DONE;
    *out_len = 0;
    if (n_types < 0 || head_len < 0 || st->batch < 0 || n_batches < 0 || n_recs < 0)
        return KC_E_INVALID;
    h1 = malloc((size_t)head_len + 64 + KC_OD_PAD);
    if (!h1)
        return KC_E_NOMEM;
    memcpy(h1, head, (size_t)head_len);
    while (st->batch < n_batches) {
        const kc_batch *b = &batches[st->batch];
        if (st->record < 0) {
            if (b->status != KC_OK || (b->attributes & 0x20) || b->records_parsed < 0
                || b->first_record < 0 || b->first_record > n_recs
                || b->records_parsed > n_recs - b->first_record) {
                rc = KC_OD_BATCH;          /* compressed, control, or not plainly readable */
                break;
            }
            st->record = 0;
        }
        if (h_batch != st->batch) {
            char *q = h1 + head_len;
            q += write_num(q, base + b->position);
            LIT(q, ", \"offset\": ");
            h1_len = (size_t)(q - h1);
            h2_len = (size_t)(batch_head2(h2, b) - h2);
            h_batch = st->batch;
        }
        for (; st->record < b->records_parsed; st->record++) {
            const kc_record *r = &recs[b->first_record + st->record];
            if (r->offset < sel->first_offset || r->offset > sel->last_offset)
                continue;
            int32_t rtype = -1;
            if (r->key_len >= 2 && in_range(r->key_pos, r->key_len, data_len))
                rtype = (int16_t)((uint16_t)data[r->key_pos] << 8 | data[r->key_pos + 1]);
            if (sel->types && !((sel->types[(uint16_t)rtype >> 3] >> ((uint16_t)rtype & 7)) & 1))
                continue;
            if (r->headers_count != 0 || rtype < 0 || rtype >= n_types || !types[rtype].key.code
                || !in_range(r->key_pos, r->key_len, data_len)
                || (r->value_len >= 0 && !in_range(r->value_pos, r->value_len, data_len))) {
                rc = KC_OD_RECORD;
                goto done;
            }
            const kc_odump_type *t = &types[rtype];
            const kc_odump_value *val = NULL;
            size_t kpos = (size_t)r->key_pos + 2, kend = (size_t)r->key_pos + (size_t)r->key_len;
            size_t vpos = 0, vend = 0, vlen = r->value_len >= 0 ? (size_t)r->value_len : 0;
            if (r->value_len >= 0) {
                int32_t ver = vlen >= 2 ? (int16_t)((uint16_t)data[r->value_pos] << 8 | data[r->value_pos + 1]) : -1;
                if (ver < 0 || ver >= t->n_values || !t->values[ver].msg.code) {
                    rc = KC_OD_RECORD;     /* newer, negative or unknown version, short value */
                    goto done;
                }
                val = &t->values[ver];
                vpos = (size_t)r->value_pos + 2;
                vend = (size_t)r->value_pos + vlen;
            }
            /* the line: every fixed piece fits, the JSON writers check their own room */
            size_t fixed = h1_len + h2_len + (size_t)t->head_len + (val ? (size_t)val->head_len : 0) + SLACK;
            if ((size_t)(end - p) < fixed) {
                rc = KC_OD_FULL;
                goto done;
            }
            char *line = p;
            p = put_lit(p, h1, h1_len);
            p += write_num(p, r->offset);
            LIT(p, ", \"timestamp\": ");
            p += write_num(p, r->timestamp);
            p = put_lit(p, h2, h2_len);
            p = put_lit(p, t->head, (size_t)t->head_len);
            size_t n = 0;
            int w = put_msg(&t->key, data, data_len, kpos, kend, &tape, &tcap, NULL, p,
                            (size_t)(end - p) - 96, &n);
            if (w == KC_OK) {
                p += n;
                if (!val) {
                    LIT(p, "}, \"payload\": null}\n");
                } else {
                    p = put_lit(p, val->head, (size_t)val->head_len);
                    size_t room = (size_t)(end - p);
                    w = room > 96 ? put_msg(&val->msg, data, data_len, vpos, vend, &tape, &tcap, val,
                                            p, room - 96, &n)
                                  : KC_E_SHORT;
                    if (w == KC_OK) {
                        p += n;
                        LIT(p, "}}\n");
                    }
                }
            }
            if (w != KC_OK) {
                p = line;
                rc = w == KC_E_SHORT ? KC_OD_FULL : w == KC_E_NOMEM ? KC_E_NOMEM : KC_OD_RECORD;
                goto done;
            }
        }
        st->batch++;
        st->record = -1;
    }
done:
    free(tape);
    free(h1);
    *out_len = (size_t)(p - out);
    return rc;
}
