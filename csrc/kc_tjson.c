/* JSON text of a decoded message from the engine's tape (kc_tjson.h). */
#include "kc_tjson.h"
#include "kc_engine.h"
#include "kc_jtext.h"

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
                /* a short string: its 16 bytes (and what follows it) checked and copied
                 * at once, the exact path only when an escape may be needed */
                uint64_t w0, w1;
                memcpy(&w0, str, 8);
                memcpy(&w1, str + 8, 8);
                if (!word_needs_escape(w0) && !word_needs_escape(w1)) {
                    *p = '"';
                    memcpy(p + 1, str, 16);
                    p[1 + len] = '"';
                    p += 2 + len;
                    continue;
                }
            }
            if ((size_t)(end - p) < 2 + 6 * len + 32)
                return KC_E_SHORT;
            p = write_string_hex(p, str, str + len, k->hex);
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

int kc_tjson_write(const kc_tj_msg *m, int style, int flags, const uint8_t *buf, size_t buf_len,
                   const int64_t *tape, size_t n_slots, int64_t *scratch, size_t scratch_cap,
                   char *out, size_t cap, size_t *out_len)
{
    tj k;
    size_t i = 0;
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
