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
            size_t kend = (size_t)r->key_pos + (size_t)r->key_len;
            size_t vlen = r->value_len >= 0 ? (size_t)r->value_len : 0;
            if (r->value_len >= 0) {
                int32_t ver = vlen >= 2 ? (int16_t)((uint16_t)data[r->value_pos] << 8 | data[r->value_pos + 1]) : -1;
                if (ver < 0 || ver >= t->n_values || !t->values[ver].msg.code) {
                    rc = KC_OD_RECORD;     /* newer, negative or unknown version, short value */
                    goto done;
                }
                val = &t->values[ver];
            }
            /* tapes: the key's, the value's, room for embedded messages */
            size_t kslots = (size_t)r->key_len + 2, vslots = vlen + 2;
            size_t need = kslots + 2 * vslots;
            if (need > tcap) {
                free(tape);
                tcap = need < 1024 ? 1024 : 2 * need;
                tape = malloc(tcap * sizeof *tape);
                if (!tape) {
                    rc = KC_E_NOMEM;
                    goto done;
                }
            }
            int64_t *ktape = tape, *vtape = tape + kslots, *scratch = tape + kslots + vslots;
            size_t kstop = 0, kused = 0, vstop = 0, vused = 0;
            if (kc_decode(t->key.code, data, kend, (size_t)r->key_pos + 2, ktape, kslots, &kstop,
                          &kused, NULL) != KC_OK || kstop != kend) {
                rc = KC_OD_RECORD;         /* the caller's way says what is wrong */
                goto done;
            }
            const kc_tj_msg *vm = NULL;
            if (val) {
                size_t vend = (size_t)r->value_pos + vlen;
                if (kc_decode(val->msg.code, data, vend, (size_t)r->value_pos + 2, vtape, vslots,
                              &vstop, &vused, NULL) != KC_OK || vstop != vend) {
                    rc = KC_OD_RECORD;
                    goto done;
                }
                vm = &val->msg;
                if (val->alt.code) {
                    int64_t ref = top_string(val->msg.code, vtape, vused, val->sw_field);
                    if (ref != 0 && KC_REF_LEN(ref) == (size_t)val->sw_len
                        && memcmp(data + KC_REF_OFF(ref), val->sw_text, (size_t)val->sw_len) == 0) {
                        vm = &val->alt;
                        int64_t ex = val->ex_len ? top_string(val->msg.code, vtape, vused, val->ex_field) : 0;
                        for (int32_t at = 0; ex != 0 && at < val->ex_len; ) {
                            size_t n = (uint8_t)val->ex_text[at];
                            if (at + 1 + (int64_t)n > val->ex_len)
                                break;
                            if (KC_REF_LEN(ex) == n && memcmp(data + KC_REF_OFF(ex), val->ex_text + at + 1, n) == 0) {
                                rc = KC_OD_RECORD;     /* another decoder's protocol */
                                goto done;
                            }
                            at += 1 + (int32_t)n;
                        }
                    }
                }
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
            int w = kc_tjson_write(&t->key, KC_TJ_PY, KC_TJ_F_REFUSE_UNKNOWN, data, data_len, ktape,
                                   kused, NULL, 0, p, (size_t)(end - p) - 96, &n);
            if (w == KC_OK) {
                p += n;
                if (!val) {
                    LIT(p, "}, \"payload\": null}\n");
                } else {
                    p = put_lit(p, val->head, (size_t)val->head_len);
                    size_t room = (size_t)(end - p);
                    w = room > 96 ? kc_tjson_write(vm, KC_TJ_PY, KC_TJ_F_REFUSE_UNKNOWN, data, data_len,
                                                   vtape, vused, scratch, vslots, p, room - 96, &n)
                                  : KC_E_SHORT;
                    if (w == KC_OK) {
                        p += n;
                        LIT(p, "}}\n");
                    }
                }
            }
            if (w != KC_OK) {
                p = line;
                rc = w == KC_E_SHORT ? KC_OD_FULL : KC_OD_RECORD;
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
