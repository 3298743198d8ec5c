/* JSON text of a decoded message from the engine's tape (kc_tjson.h). */
#include "kc_tjson.h"
#include "kc_engine.h"
#include "kc_jtext.h"
#include "kc_varint.h"
#include "kc_wire.h"

#include <string.h>

/* Fields of one struct the writer keeps slot positions for (the check refuses more). */
#define TJ_MAX_FIELDS 128
#define TJ_NONE ((size_t)-1)

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Base64 of s[0..n) at p (padding as `pad` says); returns the end. */
static char *base64(char *p, const uint8_t *s, size_t n, const char *abc, int pad)
{
    size_t k = 0;
    for (; k + 3 <= n; k += 3) {
        uint32_t v = (uint32_t)s[k] << 16 | (uint32_t)s[k + 1] << 8 | s[k + 2];
        p[0] = abc[v >> 18];
        p[1] = abc[(v >> 12) & 63];
        p[2] = abc[(v >> 6) & 63];
        p[3] = abc[v & 63];
        p += 4;
    }
    if (n - k == 1) {
        uint32_t v = (uint32_t)s[k] << 16;
        *p++ = abc[v >> 18];
        *p++ = abc[(v >> 12) & 63];
        if (pad) {
            *p++ = '=';
            *p++ = '=';
        }
    } else if (n - k == 2) {
        uint32_t v = (uint32_t)s[k] << 16 | (uint32_t)s[k + 1] << 8;
        *p++ = abc[v >> 18];
        *p++ = abc[(v >> 12) & 63];
        *p++ = abc[(v >> 6) & 63];
        if (pad)
            *p++ = '=';
    }
    return p;
}

typedef struct {
    const kc_tj_msg *m;
    const uint8_t *buf;
    size_t buf_len;
    const int64_t *tape;
    size_t n;
    int64_t *scratch;
    size_t scratch_cap;
    char *p, *end;
    const char *sep;           /* between items: ", " or ","                            */
    int sep_len;
    const char *hex;
    int flags;
    int depth;
} tj;

/* Room for m more bytes (+ the fixed-size copies' slack), or KC_E_SHORT. */
#define NEED(k, m)                                                   \
    do {                                                             \
        if ((size_t)((k)->end - (k)->p) < (size_t)(m) + 32)          \
            return KC_E_SHORT;                                       \
    } while (0)

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)

static int tj_struct(tj *k, int sidx, size_t *i);

static int tj_base64(tj *k, const uint8_t *s, size_t len, const char *abc, int pad)
{
    NEED(k, 4 * (len / 3 + 1) + 2);
    *k->p++ = '"';
    k->p = base64(k->p, s, len, abc, pad);
    *k->p++ = '"';
    return KC_OK;
}

/* An embedded message's JSON (its int16 prefix picks the program), or its base64 when it
 * does not decode. */
static int tj_embedded(tj *k, const kc_tj_embed *e, const uint8_t *s, size_t len)
{
    if (len >= 2 && e->n_versions > 0 && (s[0] & 0x80) == 0) {
        int32_t v = (int32_t)s[0] << 8 | s[1];
        const kc_tj_msg *m = &e->versions[v < e->n_versions ? v : e->n_versions - 1];
        size_t stop = 0, used = 0;
        if (len + 2 > k->scratch_cap)
            return KC_E_INVALID;
        /* s lies inside buf: the tape's REFs are offsets into buf */
        size_t at = (size_t)(s - k->buf);
        if (kc_decode(m->code, k->buf, at + len, at + 2, k->scratch, k->scratch_cap, &stop, &used,
                      NULL) == KC_OK) {
            tj sub = *k;
            size_t i = 0;
            sub.m = m;
            sub.tape = k->scratch;
            sub.n = used;
            sub.scratch = NULL;
            sub.scratch_cap = 0;
            sub.flags = 0;            /* unknown tags in embedded messages: dropped */
            int rc = tj_struct(&sub, 0, &i);
            k->p = sub.p;
            return rc;
        }
    }
    return tj_base64(k, s, len, B64, 1);
}

static int tj_value(tj *k, int type, int flags, int arg, int embed, size_t *i)
{
    if (type == KC_T_STRUCT && !(flags & KC_F_NULLABLE))
        return tj_struct(k, arg, i);      /* no presence slot (and maybe no slot at all) */
    if (*i >= k->n)
        return KC_E_TAPE;
    int64_t v = k->tape[(*i)++];
    switch (type) {
    case KC_T_BOOL:
        NEED(k, 5);
        if (v)
            LIT(k->p, "true");
        else
            LIT(k->p, "false");
        return KC_OK;
    case KC_T_INT8: case KC_T_INT16: case KC_T_UINT16: case KC_T_INT32: case KC_T_UINT32:
    case KC_T_INT64:
        NEED(k, 24);
        k->p += write_num(k->p, v);
        return KC_OK;
    case KC_T_UUID: case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS: {
        if (v == 0) {
            NEED(k, 4);
            LIT(k->p, "null");
            return KC_OK;
        }
        size_t off = KC_REF_OFF(v), len = KC_REF_LEN(v);
        if (off > k->buf_len || len > k->buf_len - off)
            return KC_E_TAPE;
        const uint8_t *s = k->buf + off;
        if (type == KC_T_STRING) {
            NEED(k, 2 + 6 * len);
            k->p = write_string_hex(k->p, s, s + len, k->hex);
            return KC_OK;
        }
        if (type == KC_T_UUID) {
            if (len != 16)
                return KC_E_TAPE;
            return tj_base64(k, s, len, B64URL, 0);
        }
        if (embed >= 0)
            return tj_embedded(k, &k->m->embeds[embed], s, len);
        return tj_base64(k, s, len, B64, 1);
    }
    case KC_T_STRUCT:
        if (v == 0) {
            NEED(k, 4);
            LIT(k->p, "null");
            return KC_OK;
        }
        return tj_struct(k, arg, i);
    case KC_T_ARRAY: {
        NEED(k, 4);
        if (v < 0) {
            LIT(k->p, "null");
            return KC_OK;
        }
        if ((uint64_t)v > k->n)
            return KC_E_TAPE;
        int et = arg & 0xFF, es = arg >> 8;
        if (et >= KC_T_INT8 && et <= KC_T_INT64 && et != KC_T_FLOAT64) {
            /* ints (replicas, ISRs): one room check, no call per element */
            if ((uint64_t)v > k->n - *i)
                return KC_E_TAPE;
            NEED(k, 24 * (size_t)v + 2);
            *k->p++ = '[';
            const int64_t *t = k->tape + *i;
            for (int64_t e = 0; e < v; e++) {
                if (e) {
                    memcpy(k->p, k->sep, 2);
                    k->p += k->sep_len;
                }
                k->p += write_num(k->p, t[e]);
            }
            *k->p++ = ']';
            *i += (size_t)v;
            return KC_OK;
        }
        *k->p++ = '[';
        for (int64_t e = 0; e < v; e++) {
            if (e) {
                NEED(k, 2);
                memcpy(k->p, k->sep, 2);
                k->p += k->sep_len;
            }
            int rc = tj_value(k, et, flags & KC_F_COMPACT, es, embed, i);
            if (rc != KC_OK)
                return rc;
        }
        NEED(k, 1);
        *k->p++ = ']';
        return KC_OK;
    }
    default:          /* float64: its text is not ours to write (the check refuses it) */
        return KC_E_PROGRAM;
    }
}

static int tj_is_default(const tj *k, const int32_t *e, int type, size_t j)
{
    if (j >= k->n)
        return 0;
    int64_t v = k->tape[j];
    switch (e[3]) {
    case KC_TJ_D_INT:
        return v == (int64_t)((uint64_t)(uint32_t)e[5] << 32 | (uint32_t)e[4]);
    case KC_TJ_D_NULL:
        return type == KC_T_ARRAY ? v < 0 : v == 0;
    case KC_TJ_D_EMPTY:
        return type == KC_T_ARRAY ? v == 0 : (v != 0 && KC_REF_LEN(v) == 0);
    case KC_TJ_D_STR:
        return v != 0 && KC_REF_LEN(v) == (size_t)e[5] && KC_REF_OFF(v) <= k->buf_len
            && (size_t)e[5] <= k->buf_len - KC_REF_OFF(v)
            && memcmp(k->buf + KC_REF_OFF(v), k->m->blob + e[4], (size_t)e[5]) == 0;
    case KC_TJ_D_UUID_ZERO: {
        static const uint8_t zero[16];
        return v != 0 && KC_REF_LEN(v) == 16 && KC_REF_OFF(v) <= k->buf_len
            && 16 <= k->buf_len - KC_REF_OFF(v)
            && memcmp(k->buf + KC_REF_OFF(v), zero, 16) == 0;
    }
    default:
        return 0;
    }
}

/* Slots of one regular field's value at tape[i]: 1 for scalars, else the engine says. */
static int64_t tj_width(const tj *k, const int32_t *fd, size_t i)
{
    if (fd[0] == KC_T_ARRAY && (fd[2] & 0xFF) != KC_T_STRUCT) {
        if (i >= k->n)            /* an array of scalars: its count, then one slot each */
            return -1;
        int64_t cnt = k->tape[i];
        if (cnt >= 0 && (uint64_t)cnt > k->n - i - 1)
            return -1;
        return cnt < 0 ? 1 : cnt + 1;
    }
    switch (fd[0]) {
    case KC_T_STRUCT: case KC_T_ARRAY:
        return kc_tape_skip(k->m->code, k->tape, k->n, i, fd[0], fd[1], fd[2], 0);
    default:
        return 1;
    }
}

static int tj_struct(tj *k, int sidx, size_t *i)
{
    size_t start[TJ_MAX_FIELDS], tstart[TJ_MAX_FIELDS];
    const int32_t *s = kc_prog_struct(k->m->code, sidx);
    int32_t nf = KC_S_NF(s), nt = KC_S_NT(s);
    if (++k->depth > KC_MAX_DEPTH)
        return KC_E_DEPTH;
    /* where each field's value starts: regular fields in wire order, then the tagged
     * entries in the order the tape has them (JSON order is the schema's) */
    for (int32_t f = 0; f < nf; f++) {
        start[f] = *i;
        int64_t w = tj_width(k, KC_S_FIELD(s, f), *i);
        if (w < 0)
            return KC_E_TAPE;
        *i += (size_t)w;
    }
    for (int32_t q = 0; q < nt; q++)
        tstart[q] = TJ_NONE;
    if (KC_S_FLAGS(s) & 1) {
        if (*i >= k->n)
            return KC_E_TAPE;
        int64_t ne = k->tape[(*i)++];
        for (int64_t e = 0; e < ne; e++) {
            if (*i >= k->n)
                return KC_E_TAPE;
            int64_t q = k->tape[(*i)++];
            if (q < 0) {
                if (k->flags & KC_TJ_F_REFUSE_UNKNOWN)
                    return KC_TJ_UNKNOWN_TAGS;
                (*i)++;          /* an unknown tag's payload: dropped, as Kafka's JSON does */
                continue;
            }
            if (q >= nt)
                return KC_E_TAPE;
            const int32_t *td = KC_S_TAGGED(s, q);
            tstart[q] = *i;
            int64_t w = kc_tape_skip(k->m->code, k->tape, k->n, *i, td[1], td[2], td[3], 1);
            if (w < 0)
                return KC_E_TAPE;
            *i += (size_t)w;
        }
    }
    if (*i > k->n)
        return KC_E_TAPE;
    const int32_t *blk = k->m->plan + k->m->plan[2 + sidx];
    const char *blob = k->m->blob;
    /* the output pointer in a local: writes through it cannot move it (char stores alias) */
    char *p = k->p, *end = k->end;
    if (end - p < 33)
        return KC_E_SHORT;
    *p++ = '{';
    int first = 1;
    for (int32_t o = 0; o < blk[0]; o++) {
        const int32_t *e = blk + 1 + KC_TJ_ENTRY * o;
        int type, flags, arg;
        size_t j;
        if (e[2] >= 0) {
            const int32_t *fd = KC_S_FIELD(s, e[2]);
            type = fd[0], flags = fd[1], arg = fd[2];
            j = start[e[2]];
        } else {
            int32_t q = -1 - e[2];
            const int32_t *td = KC_S_TAGGED(s, q);
            type = td[1], flags = td[2], arg = td[3];
            j = tstart[q];
            if (j == TJ_NONE || tj_is_default(k, e, type, j))
                continue;          /* absent or at its default: Kafka leaves it out */
        }
        /* separator, key (copied in 16-byte steps: the blob is padded) and a number */
        if ((size_t)(end - p) < (size_t)e[1] + 2 + 24 + 48)
            return KC_E_SHORT;
        if (!first) {
            memcpy(p, k->sep, 2);
            p += k->sep_len;
        }
        first = 0;
        for (int32_t c = 0; c < e[1]; c += 16)
            memcpy(p + c, blob + e[0] + c, 16);
        p += e[1];
        if (type >= KC_T_INT8 && type <= KC_T_INT64 && type != KC_T_FLOAT64 && j < k->n) {
            p += write_num(p, k->tape[j]);
            continue;
        }
        if (type == KC_T_STRING && j < k->n && k->tape[j] != 0) {
            int64_t v = k->tape[j];
            size_t off = KC_REF_OFF(v), len = KC_REF_LEN(v);
            if (off > k->buf_len || len > k->buf_len - off)
                return KC_E_TAPE;
            const uint8_t *str = k->buf + off;
            if (len <= 16 && k->buf_len - off >= 16) {
                /* a short string: checked and copied 16 bytes at once, the exact path
                 * only when an escape may be needed */
                char *q = write_short_string(p, str, len);
                if (q) {
                    p = q;
                    continue;
                }
            }
            if ((size_t)(end - p) < 2 + 6 * len + 32)
                return KC_E_SHORT;
            p = write_string_hex(p, str, str + len, k->hex);
            continue;
        }
        if (type == KC_T_UUID && j < k->n && k->tape[j] != 0) {
            /* ids (topic ids in metadata records): 22 base64url characters, in the room
             * checked above */
            int64_t v = k->tape[j];
            size_t off = KC_REF_OFF(v);
            if (KC_REF_LEN(v) != 16 || off > k->buf_len || 16 > k->buf_len - off)
                return KC_E_TAPE;
            *p++ = '"';
            p = base64(p, k->buf + off, 16, B64URL, 0);
            *p++ = '"';
            continue;
        }
        k->p = p;
        int rc = tj_value(k, type, flags, arg, e[6], &j);
        if (rc != KC_OK)
            return rc;
        p = k->p;
    }
    if (end - p < 33)
        return KC_E_SHORT;
    *p++ = '}';
    k->p = p;
    k->depth--;
    return KC_OK;
}

static int float_free(int type, int arg)
{
    return type != KC_T_FLOAT64 && !(type == KC_T_ARRAY && (arg & 0xFF) == KC_T_FLOAT64);
}

int kc_tjson_check(const int32_t *code, const int32_t *plan, size_t plan_len, size_t blob_len,
                   int32_t n_embeds)
{
    if (plan_len < 2 || plan[0] != KC_TJ_MAGIC || plan[1] != code[1] || plan[1] < 1
        || (size_t)plan[1] + 2 > plan_len || n_embeds < 0)
        return KC_E_PROGRAM;
    for (int32_t sidx = 0; sidx < plan[1]; sidx++) {
        const int32_t *s = kc_prog_struct(code, sidx);
        int32_t nf = KC_S_NF(s), nt = KC_S_NT(s);
        if (nf > TJ_MAX_FIELDS || nt > TJ_MAX_FIELDS)
            return KC_E_PROGRAM;
        for (int32_t f = 0; f < nf; f++)
            if (!float_free(KC_S_FIELD(s, f)[0], KC_S_FIELD(s, f)[2]))
                return KC_E_PROGRAM;
        for (int32_t q = 0; q < nt; q++)
            if (!float_free(KC_S_TAGGED(s, q)[1], KC_S_TAGGED(s, q)[3]))
                return KC_E_PROGRAM;
        int64_t off = plan[2 + sidx];
        if (off < 2 + plan[1] || (size_t)off >= plan_len)
            return KC_E_PROGRAM;
        int64_t n_out = plan[off];
        if (n_out < 0 || (size_t)(off + 1 + KC_TJ_ENTRY * n_out) > plan_len)
            return KC_E_PROGRAM;
        for (int64_t o = 0; o < n_out; o++) {
            const int32_t *e = plan + off + 1 + KC_TJ_ENTRY * o;
            if (e[0] < 0 || e[1] < 0 || (size_t)e[0] + (size_t)e[1] + KC_TJ_PAD > blob_len)
                return KC_E_PROGRAM;
            if (e[2] >= nf || -1 - e[2] >= nt)
                return KC_E_PROGRAM;
            if (e[3] < KC_TJ_D_NONE || e[3] > KC_TJ_D_UUID_ZERO || (e[2] >= 0) != (e[3] == KC_TJ_D_NONE))
                return KC_E_PROGRAM;
            if (e[3] == KC_TJ_D_STR && (e[4] < 0 || e[5] < 0 || (size_t)e[4] + (size_t)e[5] > blob_len))
                return KC_E_PROGRAM;
            if (e[6] < -1 || e[6] >= n_embeds)
                return KC_E_PROGRAM;
            if (e[6] >= 0) {    /* only a bytes field (or an array of them) embeds */
                const int32_t *fd = e[2] >= 0 ? KC_S_FIELD(s, e[2]) : KC_S_TAGGED(s, -1 - e[2]) + 1;
                if (fd[0] != KC_T_BYTES && !(fd[0] == KC_T_ARRAY && (fd[2] & 0xFF) == KC_T_BYTES))
                    return KC_E_PROGRAM;
            }
        }
    }
    return KC_OK;
}

/* ------------------------------------------------------------------------- */
/* flat messages: fixed texts between the top struct's values */

static int flat_type(int type)
{
    return type == KC_T_BOOL || type == KC_T_STRING
        || (type >= KC_T_INT8 && type <= KC_T_INT64 && type != KC_T_FLOAT64);
}

static int flat_text(kc_tj_flat *f, int32_t *t, const char *a, size_t a_len, const char *b,
                     size_t b_len, int32_t *off, int32_t *len)
{
    if ((size_t)*t + a_len + b_len > KC_TJ_FLAT_TEXT)
        return 0;
    *off = *t;
    memcpy(f->text + *t, a, a_len);
    memcpy(f->text + *t + a_len, b, b_len);
    *len = (int32_t)(a_len + b_len);
    *t += *len;
    return 1;
}

int kc_tjson_flat(const kc_tj_msg *m, int style, kc_tj_flat *f)
{
    const int32_t *s = kc_prog_struct(m->code, 0);
    const int32_t *blk = m->plan + m->plan[2];
    const char *sep = style == KC_TJ_COMPACT ? "," : ", ";
    int32_t t = 0, room = 32;
    memset(f, 0, sizeof *f);
    f->style = style;
    f->n_fields = KC_S_NF(s);
    f->flexible = KC_S_FLAGS(s) & 1;
    /* every regular field one slot: the tape's slot of field f is f */
    for (int32_t q = 0; q < KC_S_NF(s); q++)
        if (!flat_type(KC_S_FIELD(s, q)[0]))
            return KC_E_PROGRAM;
    for (int32_t o = 0; o < blk[0]; o++) {
        const int32_t *e = blk + 1 + KC_TJ_ENTRY * o;
        if (e[2] < 0)
            continue;              /* tagged: on this path, absent */
        int type = KC_S_FIELD(s, e[2])[0];
        if (f->n_ops == KC_TJ_FLAT_OPS || e[6] >= 0)
            return KC_E_PROGRAM;
        int32_t *op = &f->ops[f->n_ops].text_off;
        if (!flat_text(f, &t, f->n_ops ? sep : "{", f->n_ops ? strlen(sep) : 1, m->blob + e[0],
                       (size_t)e[1], &op[0], &op[1]))
            return KC_E_PROGRAM;
        op[2] = e[2];
        op[3] = type == KC_T_STRING ? KC_TJ_FLAT_STR : type == KC_T_BOOL ? KC_TJ_FLAT_BOOL : KC_TJ_FLAT_NUM;
        op[4] = type;
        op[5] = KC_S_FIELD(s, e[2])[1];
        room += (op[1] + 15) / 16 * 16 + 24;
        f->n_ops++;
    }
    if (!flat_text(f, &t, f->n_ops ? "}" : "{}", f->n_ops ? 1 : 2, "", 0, &f->tail_off, &f->tail_len))
        return KC_E_PROGRAM;
    f->room = room + 16;
    f->direct = f->n_ops == f->n_fields;
    for (int32_t o = 0; o < f->n_ops; o++)
        f->direct &= f->ops[o].slot == o;
    return KC_OK;
}

/* Copies of fixed texts in 16-byte steps (the text has KC_TJ_PAD bytes after it, the
 * output the room counted for it). */
static char *flat_copy(char *p, const char *s, int32_t n)
{
    for (int32_t c = 0; c < n; c += 16)
        memcpy(p + c, s + c, 16);
    return p + n;
}

/* The flat writer: 1 when the tape is not flat (tagged fields present), else a status. */
static int tj_flat(const kc_tj_flat *f, const uint8_t *buf, size_t buf_len, const int64_t *tape,
                   size_t n, const char *hex, char *out, size_t cap, size_t *out_len)
{
    if (n != (size_t)f->n_fields + (size_t)f->flexible || (f->flexible && tape[f->n_fields] != 0))
        return 1;
    char *p = out, *end = out + cap;
    if ((size_t)(end - p) < (size_t)f->room)
        return KC_E_SHORT;
    for (int32_t o = 0; o < f->n_ops; o++) {
        p = flat_copy(p, f->text + f->ops[o].text_off, f->ops[o].text_len);
        int64_t v = tape[f->ops[o].slot];
        switch (f->ops[o].kind) {
        case KC_TJ_FLAT_NUM:
            p += write_num(p, v);
            break;
        case KC_TJ_FLAT_BOOL:
            if (v)
                LIT(p, "true");
            else
                LIT(p, "false");
            break;
        default: {
            if (v == 0) {
                LIT(p, "null");
                break;
            }
            size_t off = KC_REF_OFF(v), len = KC_REF_LEN(v);
            if (off > buf_len || len > buf_len - off)
                return KC_E_TAPE;
            const uint8_t *str = buf + off;
            if (len <= 16 && buf_len - off >= 16) {
                char *q = write_short_string(p, str, len);
                if (q) {
                    p = q;
                    break;
                }
            }
            if ((size_t)(end - p) < 2 + 6 * len + (size_t)f->room)
                return KC_E_SHORT;
            p = write_string_hex(p, str, str + len, hex);
        }
        }
    }
    p = flat_copy(p, f->text + f->tail_off, f->tail_len);
    *out_len = (size_t)(p - out);
    return KC_OK;
}

/* A string field's JSON straight from the bytes at buf[*pos..end), as kc_decode reads it
 * (KC_TJ_NOT_DIRECT where it would fail). */
static int direct_string(const uint8_t *buf, size_t buf_len, size_t *pos, size_t end, int flags,
                         const char *hex, char **pp, char *oend, size_t room)
{
    int64_t n;
    size_t at = *pos;
    if (flags & KC_F_COMPACT) {
        uint32_t u;
        int r = kc_read_uvarint(buf + at, end - at, &u);
        if (r < 0)
            return KC_TJ_NOT_DIRECT;
        at += (size_t)r;
        n = (int64_t)u - 1;
    } else {
        if (end - at < 2)
            return KC_TJ_NOT_DIRECT;
        n = (int16_t)rd16(buf + at);
        at += 2;
    }
    char *p = *pp;
    if (n < 0) {
        if (!(flags & KC_F_NULLABLE))
            return KC_TJ_NOT_DIRECT;
        LIT(p, "null");
        *pp = p;
        *pos = at;
        return KC_OK;
    }
    if (n > 0x7fff || (uint64_t)n > end - at)
        return KC_TJ_NOT_DIRECT;
    const uint8_t *s = buf + at, *e = s + n;
    if (n <= 16 && buf_len - at >= 16) {
        /* no escape, and ASCII (hence UTF-8) */
        if (!short_needs_escape(s, (size_t)n, 1)) {
            *p = '"';
            memcpy(p + 1, s, 16);
            p[1 + n] = '"';
            *pp = p + 2 + n;
            *pos = at + (size_t)n;
            return KC_OK;
        }
    }
    if (utf8_check(s, (size_t)n) != (size_t)n)
        return KC_TJ_NOT_DIRECT;
    if ((size_t)(oend - p) < 2 + 6 * (size_t)n + room)
        return KC_E_SHORT;
    *pp = write_string_hex(p, s, e, hex);
    *pos = at + (size_t)n;
    return KC_OK;
}

/* Bytes of the flat types' values on the wire. */
static const uint8_t DIRECT_WIDTH[KC_T_ARRAY + 1] = {
    [KC_T_BOOL] = 1, [KC_T_INT8] = 1, [KC_T_INT16] = 2, [KC_T_UINT16] = 2, [KC_T_INT32] = 4,
    [KC_T_UINT32] = 4, [KC_T_INT64] = 8};

int kc_tjson_direct(const kc_tj_msg *m, int style, const uint8_t *buf, size_t buf_len, size_t pos,
                    size_t end, char *out, size_t cap, size_t *out_len)
{
    const kc_tj_flat *f = m->flat;
    const char *hex = style == KC_TJ_COMPACT ? HEX_UPPER : HEX;
    char *p = out, *oend = out + cap;
    *out_len = 0;
    if (!f || !f->direct || f->style != style || end > buf_len || pos > end)
        return KC_TJ_NOT_DIRECT;
    if ((size_t)(oend - p) < (size_t)f->room)
        return KC_E_SHORT;
    for (int32_t o = 0; o < f->n_ops; o++) {
        p = flat_copy(p, f->text + f->ops[o].text_off, f->ops[o].text_len);
        int type = f->ops[o].type;
        if (type == KC_T_STRING) {
            int rc = direct_string(buf, buf_len, &pos, end, f->ops[o].flags, hex, &p, oend,
                                   (size_t)f->room);
            if (rc != KC_OK)
                return rc;
            continue;
        }
        const uint8_t *q = buf + pos;
        size_t wd = DIRECT_WIDTH[type];          /* a flat type: 1, 2, 4 or 8 */
        if (end - pos < wd)
            return KC_TJ_NOT_DIRECT;
        pos += wd;
        int64_t v;
        switch (type) {
        case KC_T_BOOL:
            if (q[0])
                LIT(p, "true");
            else
                LIT(p, "false");
            continue;
        case KC_T_INT8: v = (int8_t)q[0]; break;
        case KC_T_INT16: v = (int16_t)rd16(q); break;
        case KC_T_UINT16: v = rd16(q); break;
        case KC_T_INT32: v = (int32_t)rd32(q); break;
        case KC_T_UINT32: v = rd32(q); break;
        default: v = (int64_t)rd64(q); break;     /* KC_T_INT64 */
        }
        p += write_num(p, v);
    }
    if (f->flexible) {            /* no tagged field: a zero count */
        uint32_t u;
        int r = kc_read_uvarint(buf + pos, end - pos, &u);
        if (r < 0 || u != 0)
            return KC_TJ_NOT_DIRECT;
        pos += (size_t)r;
    }
    if (pos != end)
        return KC_TJ_NOT_DIRECT;
    p = flat_copy(p, f->text + f->tail_off, f->tail_len);
    *out_len = (size_t)(p - out);
    return KC_OK;
}

int kc_tjson_write(const kc_tj_msg *m, int style, int flags, const uint8_t *buf, size_t buf_len,
                   const int64_t *tape, size_t n_slots, int64_t *scratch, size_t scratch_cap,
                   char *out, size_t cap, size_t *out_len)
{
    tj k;
    size_t i = 0;
    *out_len = 0;
    if (m->flat && m->flat->style == style) {
        int rc = tj_flat(m->flat, buf, buf_len, tape, n_slots,
                         style == KC_TJ_COMPACT ? HEX_UPPER : HEX, out, cap, out_len);
        if (rc != 1)
            return rc;
    }
    k.m = m;
    k.buf = buf;
    k.buf_len = buf_len;
    k.tape = tape;
    k.n = n_slots;
    k.scratch = scratch;
    k.scratch_cap = scratch ? scratch_cap : 0;
    k.p = out;
    k.end = out + cap;
    k.sep = style == KC_TJ_COMPACT ? ", " : ", ";
    k.sep_len = style == KC_TJ_COMPACT ? 1 : 2;
    k.hex = style == KC_TJ_COMPACT ? HEX_UPPER : HEX;
    k.flags = flags;
    k.depth = 0;
    *out_len = 0;
    int rc = tj_struct(&k, 0, &i);
    if (rc == KC_OK)
        *out_len = (size_t)(k.p - out);
    return rc;
}
