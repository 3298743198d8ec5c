/* JSON lines from columns (see kc_jsonl.h). */
#include "kc_jsonl.h"
#include "kc_status.h"
#include "kc_jtext.h"

#include <stdlib.h>
#include <string.h>

/* Bytes written past a row's own text at most (fixed-size copies); every room check
 * includes them. */
#define SLACK 64

/* A short literal: whole 16-byte steps (the source is padded, the output has slack). */
static char *copy_lit(char *p, const char *lit, int32_t n)
{
    for (int32_t k = 0; k < n; k += 16)
        memcpy(p + k, lit + k, 16);
    return p + n;
}

static int is_valid(const kc_jcol *c, int64_t i)
{
    return !c->valid || ((c->valid[(i + c->bit_offset) >> 3] >> ((i + c->bit_offset) & 7)) & 1);
}

/* The most a value of column c takes, strings aside (-1: a bad column). */
static int64_t static_room(const kc_jcol *c)
{
    switch (c->type) {
    case KC_J_I64: case KC_J_I32: case KC_J_I16: case KC_J_I8:
        return 20;
    case KC_J_STR: case KC_J_RAW:
        return c->offsets ? 4 : -1;       /* `null`; the text itself is checked as written */
    case KC_J_ENUM: {
        int64_t m = 4;
        if (c->n_names < 0 || (c->n_names && (!c->names || !c->name_lens)))
            return -1;
        for (int32_t k = 0; k < c->n_names; k++) {
            if (c->name_lens[k] < 0)
                return -1;
            if (c->name_lens[k] > m)
                m = c->name_lens[k];
        }
        return m;
    }
    default:
        return -1;
    }
}

int kc_jsonl_write(const kc_jtemplate *templates, int32_t n_templates,
                   const kc_jcol *cols, int32_t n_cols,
                   const int64_t *rows, const int32_t *row_tpl, int64_t n_row_tpl,
                   int64_t n_rows, char *out, int64_t cap, int64_t *row_ends,
                   int64_t *rows_done, int64_t *out_len)
{
    *rows_done = 0;
    *out_len = 0;
    if (n_templates < 0 || n_cols < 0 || cap < 0)
        return KC_E_INVALID;
    /* each template's room, strings' text aside: checked once a row */
    int64_t *room = malloc(sizeof *room * (size_t)(n_templates ? n_templates : 1));
    if (!room)
        return KC_E_NOMEM;
    for (int32_t t = 0; t < n_templates; t++) {
        room[t] = 0;
        for (int32_t k = 0; k < templates[t].n_ops; k++) {
            const kc_jop *op = &templates[t].ops[k];
            int64_t r = op->col < 0 ? op->lit_len : op->col < n_cols ? static_room(&cols[op->col]) : -1;
            if (r < 0 || (op->col < 0 && !op->lit && op->lit_len)) {
                free(room);
                return KC_E_INVALID;
            }
            room[t] += r;
        }
        room[t] += SLACK;
    }
    int rc = KC_OK;
    char *p = out, *end = out + cap;
    int64_t j;
    for (j = 0; j < n_rows; j++) {
        int64_t r = rows[j];
        if (r < 0 || r >= n_row_tpl) {
            rc = KC_E_INVALID;
            break;
        }
        int32_t t = row_tpl[r];
        if (t < 0) {
            if (row_ends)
                row_ends[j] = p - out;
            continue;
        }
        if (t >= n_templates) {
            rc = KC_E_INVALID;
            break;
        }
        if (room[t] > end - p) {
            rc = KC_E_SHORT;
            break;
        }
        char *start = p;
        const kc_jtemplate *tp = &templates[t];
        for (int32_t k = 0; k < tp->n_ops && rc == KC_OK; k++) {
            const kc_jop *op = &tp->ops[k];
            if (op->col < 0) {
                p = copy_lit(p, op->lit, op->lit_len);
                continue;
            }
            const kc_jcol *c = &cols[op->col];
            int64_t i = r;
            if (c->take) {
                if (r >= c->take_length) {
                    rc = KC_E_INVALID;
                    break;
                }
                i = c->take[r];
            }
            if (i < 0 || i >= c->length) {
                rc = KC_E_INVALID;
                break;
            }
            if (!is_valid(c, i)) {
                memcpy(p, "null", 4);
                p += 4;
                continue;
            }
            switch (c->type) {
            case KC_J_I64: p += write_num(p, ((const int64_t *)c->values)[i]); break;
            case KC_J_I32: p += write_num(p, ((const int32_t *)c->values)[i]); break;
            case KC_J_I16: p += write_num(p, ((const int16_t *)c->values)[i]); break;
            case KC_J_I8: p += write_num(p, ((const int8_t *)c->values)[i]); break;
            case KC_J_ENUM: {
                uint8_t code = ((const uint8_t *)c->values)[i];
                if (code >= c->n_names) {
                    rc = KC_E_INVALID;
                    break;
                }
                memcpy(p, c->names[code], (size_t)c->name_lens[code]);
                p += c->name_lens[code];
                break;
            }
            default: {     /* KC_J_STR, KC_J_RAW */
                int32_t a = c->offsets[i], b = c->offsets[i + 1];
                if (a < 0 || b < a || b > c->data_len) {
                    rc = KC_E_INVALID;
                    break;
                }
                int64_t need = c->type == KC_J_RAW ? b - a : 2 + 6 * (int64_t)(b - a);
                if (need + room[t] > end - p) {   /* room[t] covers everything else left */
                    rc = KC_E_SHORT;
                    break;
                }
                const unsigned char *s = (const unsigned char *)c->values + a;
                if (c->type == KC_J_STR && b - a <= 16 && (int64_t)a + 16 <= c->data_len) {
                    /* a short string: checked and copied 16 bytes at once, the exact
                     * path only when an escape may be needed */
                    char *q = write_short_string(p, s, (size_t)(b - a));
                    if (q) {
                        p = q;
                        break;
                    }
                }
                if (c->type == KC_J_RAW) {
                    memcpy(p, s, (size_t)(b - a));
                    p += b - a;
                } else {
                    p = write_string(p, s, s + (b - a));
                }
            }
            }
        }
        if (rc != KC_OK) {
            p = start;       /* only whole rows count */
            break;
        }
        if (row_ends)
            row_ends[j] = p - out;
    }
    free(room);
    *rows_done = j;
    *out_len = p - out;
    return rc;
}

int64_t kc_json_room(const kc_jtok *tokens, int64_t n)
{
    int64_t room = 0;
    for (int64_t k = 0; k < n; k++) {
        const kc_jtok *t = &tokens[k];
        if (t->len < 0)
            return -1;
        switch (t->kind) {
        case KC_JT_OBJ: case KC_JT_END_OBJ: case KC_JT_ARR: case KC_JT_END_ARR:
            room += 3;
            break;
        case KC_JT_KEY: case KC_JT_STR:
            room += 6 + 6 * (int64_t)t->len;
            break;
        case KC_JT_INT:
            room += 22;
            break;
        case KC_JT_RAW:
            room += 2 + (int64_t)t->len;
            break;
        default:
            return -1;
        }
    }
    return room;
}

int kc_json_write(const kc_jtok *tokens, int64_t n, char *out, int64_t cap, int64_t *out_len)
{
    *out_len = 0;
    int64_t room = kc_json_room(tokens, n);
    if (room < 0)
        return KC_E_INVALID;
    if (room > cap)
        return KC_E_SHORT;
    char *p = out;
    int comma = 0;        /* an item precedes at this level: the next one takes ", " */
    for (int64_t k = 0; k < n; k++) {
        const kc_jtok *t = &tokens[k];
        int kind = t->kind;
        if (comma && kind != KC_JT_END_OBJ && kind != KC_JT_END_ARR) {
            memcpy(p, ", ", 2);
            p += 2;
        }
        switch (kind) {
        case KC_JT_OBJ: *p++ = '{'; comma = 0; break;
        case KC_JT_ARR: *p++ = '['; comma = 0; break;
        case KC_JT_END_OBJ: *p++ = '}'; comma = 1; break;
        case KC_JT_END_ARR: *p++ = ']'; comma = 1; break;
        case KC_JT_KEY:
            p = write_string(p, (const unsigned char *)t->s, (const unsigned char *)t->s + t->len);
            memcpy(p, ": ", 2);
            p += 2;
            comma = 0;
            break;
        case KC_JT_STR:
            p = write_string(p, (const unsigned char *)t->s, (const unsigned char *)t->s + t->len);
            comma = 1;
            break;
        case KC_JT_INT:
            p += write_num(p, t->i);
            comma = 1;
            break;
        default:                   /* KC_JT_RAW */
            if (t->len)
                memcpy(p, t->s, (size_t)t->len);
            p += t->len;
            comma = 1;
        }
    }
    *out_len = p - out;
    return KC_OK;
}
