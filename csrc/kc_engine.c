/*
 * kcodec spec engine: the interpreter of compiled message programs.
 * Formats (PROGRAM, TAPE) and the entry points are documented in kc_engine.h.
 *
 * Decoding never reads outside [pos, len), never writes beyond the tape's
 * capacity, and recursion is bounded by KC_MAX_DEPTH nested structs.  Error
 * reasons and offsets mirror the pure-Python reference (kcodec/_codec_py.py).
 */
#include "kc_engine.h"
#include "kc_varint.h"
#include "kc_wire.h"

#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------------- */
/* program check */

static int check_type(int32_t nstructs, int32_t type, int32_t arg)
{
    if (type == KC_T_STRUCT)
        return arg >= 0 && arg < nstructs;
    if (type == KC_T_ARRAY) {
        int32_t et = arg & 0xff, sidx = arg >> 8;
        if (et == KC_T_ARRAY || et < KC_T_BOOL || et > KC_T_STRUCT)
            return 0;
        return et != KC_T_STRUCT || (sidx >= 0 && sidx < nstructs);
    }
    return type >= KC_T_BOOL && type <= KC_T_RECORDS;
}

int kc_program_check(const int32_t *code, size_t code_len)
{
    int32_t ns;
    if (code == NULL || code_len < 2 || code[0] != (int32_t)KC_PROG_MAGIC)
        return KC_E_PROGRAM;
    ns = code[1];
    if (ns < 1 || (size_t)ns > code_len - 2)
        return KC_E_PROGRAM;
    for (int32_t i = 0; i < ns; i++) {
        int32_t off = code[2 + i];
        const int32_t *s;
        size_t need;
        if (off < 2 + ns || (size_t)off + 4 > code_len)
            return KC_E_PROGRAM;
        s = code + off;
        if (KC_S_NF(s) < 0 || KC_S_NT(s) < 0 || KC_S_NB(s) < 0 || KC_S_NF(s) > 1 << 20 || KC_S_NT(s) > 1 << 20
            || KC_S_NB(s) > 1 << 20)
            return KC_E_PROGRAM;
        need = (size_t)off + 4 + 3 * (size_t)KC_S_NF(s) + 4 * (size_t)KC_S_NT(s) + (size_t)KC_S_NB(s);
        if (need > code_len)
            return KC_E_PROGRAM;
        for (int32_t f = 0; f < KC_S_NF(s); f++) {
            const int32_t *fp = KC_S_FIELD(s, f);
            if (!check_type(ns, fp[0], fp[2]))
                return KC_E_PROGRAM;
        }
        for (int32_t k = 0; k < KC_S_NT(s); k++) {
            const int32_t *tp = KC_S_TAGGED(s, k);
            if (tp[0] < 0 || !check_type(ns, tp[1], tp[3]))
                return KC_E_PROGRAM;
        }
    }
    return KC_OK;
}

/* ------------------------------------------------------------------------- */
/* decoding */

typedef struct {
    const int32_t *code;
    const uint8_t *buf;
    size_t pos, end;
    int64_t *tape;
    size_t nt, cap;
    kc_error *err;
} kc_dec;

static int fail(kc_dec *d, int code, size_t offset, int64_t a, int64_t b)
{
    if (d->err) {
        d->err->code = code;
        d->err->offset = (int64_t)offset;
        d->err->a = a;
        d->err->b = b;
        d->err->path_len = 0;
    }
    return code;
}

static int frame(kc_dec *d, int rc, int kind, int sidx, int64_t value)
{
    kc_error *e = d->err;
    if (e && e->path_len < KC_MAX_PATH) {
        e->path[e->path_len].kind = kind;
        e->path[e->path_len].sidx = sidx;
        e->path[e->path_len].value = value;
        e->path_len++;
    }
    return rc;
}

#define PUSH(d, v)                                                   \
    do {                                                             \
        if (KC_UNLIKELY((d)->nt >= (d)->cap))                        \
            return fail((d), KC_E_TAPE_FULL, (d)->pos, 0, 0);        \
        (d)->tape[(d)->nt++] = (int64_t)(v);                         \
    } while (0)

static inline int rd_uvarint(kc_dec *d, uint32_t *v)
{
    int r = kc_read_uvarint(d->buf + d->pos, d->end - d->pos, v);
    if (KC_UNLIKELY(r < 0))
        return fail(d, r == KC_VARINT_TRUNCATED ? KC_E_VARINT_TRUNC : KC_E_VARINT_LONG, d->pos, 0, 0);
    d->pos += (size_t)r;
    return KC_OK;
}

static int dec_struct(kc_dec *d, int sidx, int depth);

static int dec_value(kc_dec *d, int type, int flags, int arg, int depth, int in_tag)
{
    size_t left = d->end - d->pos;
    const uint8_t *p = d->buf + d->pos;
    size_t start = d->pos;
    int rc;

    switch (type) {
    case KC_T_BOOL:
    case KC_T_INT8:
        if (KC_UNLIKELY(left < 1))
            return fail(d, KC_E_SHORT, start, 1, (int64_t)left);
        PUSH(d, type == KC_T_BOOL ? (p[0] != 0) : (int64_t)(int8_t)p[0]);
        d->pos += 1;
        return KC_OK;
    case KC_T_INT16:
    case KC_T_UINT16:
        if (KC_UNLIKELY(left < 2))
            return fail(d, KC_E_SHORT, start, 2, (int64_t)left);
        PUSH(d, type == KC_T_INT16 ? (int64_t)(int16_t)rd16(p) : (int64_t)rd16(p));
        d->pos += 2;
        return KC_OK;
    case KC_T_INT32:
    case KC_T_UINT32:
        if (KC_UNLIKELY(left < 4))
            return fail(d, KC_E_SHORT, start, 4, (int64_t)left);
        PUSH(d, type == KC_T_INT32 ? (int64_t)(int32_t)rd32(p) : (int64_t)rd32(p));
        d->pos += 4;
        return KC_OK;
    case KC_T_INT64:
    case KC_T_FLOAT64:
        if (KC_UNLIKELY(left < 8))
            return fail(d, KC_E_SHORT, start, 8, (int64_t)left);
        PUSH(d, (int64_t)rd64(p));
        d->pos += 8;
        return KC_OK;
    case KC_T_UUID:
        if (KC_UNLIKELY(left < 16))
            return fail(d, KC_E_SHORT, start, 16, (int64_t)left);
        PUSH(d, KC_REF(start, 16));
        d->pos += 16;
        return KC_OK;
    case KC_T_STRING:
    case KC_T_BYTES:
    case KC_T_RECORDS: {
        int64_t n;
        if (flags & KC_F_COMPACT) {
            uint32_t u;
            if ((rc = rd_uvarint(d, &u)) != KC_OK)
                return rc;
            n = (int64_t)u - 1;
        } else if (type == KC_T_STRING) {
            if (KC_UNLIKELY(left < 2))
                return fail(d, KC_E_SHORT, start, 2, (int64_t)left);
            n = (int16_t)rd16(p);
            d->pos += 2;
        } else {
            if (KC_UNLIKELY(left < 4))
                return fail(d, KC_E_SHORT, start, 4, (int64_t)left);
            n = (int32_t)rd32(p);
            d->pos += 4;
        }
        if (n < 0) {
            if (KC_UNLIKELY(!(flags & KC_F_NULLABLE)))
                return fail(d, KC_E_NULL, start, 0, 0);
            PUSH(d, 0);
            return KC_OK;
        }
        if (type == KC_T_STRING && KC_UNLIKELY(n > 0x7fff))
            return fail(d, KC_E_STRLEN, start, n, 0);
        left = d->end - d->pos;
        if (KC_UNLIKELY((uint64_t)n > left))
            return fail(d, KC_E_SHORT, d->pos, n, (int64_t)left);
        if (type == KC_T_STRING) {
            size_t bad = utf8_check(d->buf + d->pos, (size_t)n);
            if (KC_UNLIKELY(bad != (size_t)n))
                return fail(d, KC_E_UTF8, d->pos + bad, 0, 0);
        }
        PUSH(d, KC_REF(d->pos, n));
        d->pos += (size_t)n;
        return KC_OK;
    }
    case KC_T_STRUCT:
        if (flags & KC_F_NULLABLE) {
            int present = 0, r = kc_read_presence(p, left, in_tag, &present);
            if (KC_UNLIKELY(r <= 0))
                return r == 0 ? fail(d, KC_E_SHORT, start, 1, (int64_t)left)
                              : fail(d, r == KC_VARINT_TRUNCATED ? KC_E_VARINT_TRUNC : KC_E_VARINT_LONG, start, 0, 0);
            d->pos += (size_t)r;
            PUSH(d, present);
            if (!present)
                return KC_OK;
        }
        return dec_struct(d, arg, depth + 1);
    case KC_T_ARRAY: {
        int64_t n;
        int et = arg & 0xff, esidx = arg >> 8, eflags = flags & KC_F_COMPACT;
        if (flags & KC_F_COMPACT) {
            uint32_t u;
            if ((rc = rd_uvarint(d, &u)) != KC_OK)
                return rc;
            n = (int64_t)u - 1;
        } else {
            if (KC_UNLIKELY(left < 4))
                return fail(d, KC_E_SHORT, start, 4, (int64_t)left);
            n = (int32_t)rd32(p);
            d->pos += 4;
        }
        if (n < 0) {
            if (KC_UNLIKELY(!(flags & KC_F_NULLABLE)))
                return fail(d, KC_E_NULL, start, 0, 0);
            PUSH(d, -1);
            return KC_OK;
        }
        left = d->end - d->pos;
        if (KC_UNLIKELY((uint64_t)n > left))
            return fail(d, KC_E_ARRAY_COUNT, start, n, (int64_t)left);
        PUSH(d, n);
        /* fast paths: fixed-width elements */
        if (et == KC_T_INT32) {
            if (KC_UNLIKELY((uint64_t)n * 4 > left)) {
                int64_t i = (int64_t)(left / 4);
                return frame(d, fail(d, KC_E_SHORT, d->pos + 4 * (size_t)i, 4, (int64_t)(left - 4 * (size_t)i)),
                             KC_PATH_INDEX, 0, i);
            }
            if (KC_UNLIKELY(d->cap - d->nt < (size_t)n))
                return fail(d, KC_E_TAPE_FULL, d->pos, 0, 0);
            for (int64_t i = 0; i < n; i++)
                d->tape[d->nt + (size_t)i] = (int32_t)rd32(d->buf + d->pos + 4 * (size_t)i);
            d->nt += (size_t)n;
            d->pos += 4 * (size_t)n;
            return KC_OK;
        }
        for (int64_t i = 0; i < n; i++) {
            if ((rc = dec_value(d, et, eflags, esidx, depth, 0)) != KC_OK)
                return frame(d, rc, KC_PATH_INDEX, 0, i);
        }
        return KC_OK;
    }
    default:
        return fail(d, KC_E_PROGRAM, start, type, 0);
    }
}

static int dec_struct(kc_dec *d, int sidx, int depth)
{
    const int32_t *s = kc_prog_struct(d->code, sidx);
    int32_t nf = KC_S_NF(s);
    int rc;

    if (KC_UNLIKELY(depth > KC_MAX_DEPTH))
        return fail(d, KC_E_DEPTH, d->pos, 0, 0);
    for (int32_t i = 0; i < nf; i++) {
        const int32_t *f = KC_S_FIELD(s, i);
        if (KC_UNLIKELY((rc = dec_value(d, f[0], f[1], f[2], depth, 0)) != KC_OK))
            return frame(d, rc, KC_PATH_FIELD, sidx, i);
    }
    if (KC_S_FLAGS(s) & 1) {
        uint32_t n, tag, size;
        size_t count_at = d->pos;
        if ((rc = rd_uvarint(d, &n)) != KC_OK)
            return rc;
        if (KC_UNLIKELY((uint64_t)n > d->end - d->pos))
            return fail(d, KC_E_TAG_COUNT, count_at, n, 0);
        PUSH(d, n);
        for (uint32_t j = 0; j < n; j++) {
            int32_t k;
            if ((rc = rd_uvarint(d, &tag)) != KC_OK)
                return rc;
            if ((rc = rd_uvarint(d, &size)) != KC_OK)
                return rc;
            k = kc_struct_tag(s, tag);
            if (k >= 0) {
                const int32_t *t = KC_S_TAGGED(s, k);
                size_t start = d->pos, saved_end = d->end;
                if (KC_UNLIKELY((uint64_t)size > d->end - start))
                    return frame(d, fail(d, KC_E_TAG_SIZE, start, size, 0), KC_PATH_TAGGED, sidx, k);
                d->end = start + size;
                PUSH(d, k);
                rc = dec_value(d, t[1], t[2], t[3], depth, 1);
                if (rc == KC_OK && d->pos != d->end)
                    rc = fail(d, KC_E_TAG_SPAN, d->pos, (int64_t)(d->pos - start), size);
                d->end = saved_end;
                if (rc != KC_OK)
                    return frame(d, rc, KC_PATH_TAGGED, sidx, k);
            } else {
                if (k == KC_TAG_BAD)
                    return fail(d, KC_E_BAD_TAG, d->pos, tag, 0);
                if (KC_UNLIKELY((uint64_t)size > d->end - d->pos))
                    return fail(d, KC_E_SHORT, d->pos, size, (int64_t)(d->end - d->pos));
                PUSH(d, -1 - (int64_t)tag);
                PUSH(d, KC_REF(d->pos, size));
                d->pos += size;
            }
        }
    }
    return KC_OK;
}

int kc_decode(const int32_t *code, const uint8_t *buf, size_t len, size_t pos,
              int64_t *tape, size_t cap, size_t *end, size_t *n_slots, kc_error *err)
{
    kc_dec d;
    int rc;
    if (err)
        err->path_len = 0;
    if (len > 0xfffffffeu)
        return (err ? (err->code = KC_E_TOO_BIG, err->offset = 0, err->a = err->b = 0) : 0), KC_E_TOO_BIG;
    if (pos > len)
        pos = len;
    d.code = code;
    d.buf = buf;
    d.pos = pos;
    d.end = len;
    d.tape = tape;
    d.nt = 0;
    d.cap = cap;
    d.err = err;
    rc = dec_struct(&d, 0, 0);
    if (rc == KC_OK) {
        *end = d.pos;
        *n_slots = d.nt;
    }
    return rc;
}

/* ------------------------------------------------------------------------- */
/* tape skipping */

typedef struct {
    const int32_t *code;
    const int64_t *tape;
    size_t n;
} kc_skip;

static int64_t skip_struct(const kc_skip *k, size_t i, int sidx, int depth);

static int64_t skip_value(const kc_skip *k, size_t i, int type, int flags, int arg, int depth)
{
    switch (type) {
    case KC_T_STRUCT:
        if (flags & KC_F_NULLABLE) {
            int64_t r;
            if (i >= k->n)
                return -1;
            if (k->tape[i] == 0)
                return 1;
            r = skip_struct(k, i + 1, arg, depth + 1);
            return r < 0 ? -1 : r + 1;
        }
        return skip_struct(k, i, arg, depth + 1);
    case KC_T_ARRAY: {
        int64_t cnt, used = 1;
        int et = arg & 0xff;
        if (i >= k->n)
            return -1;
        cnt = k->tape[i];
        if (cnt < 0)
            return 1;
        if (et != KC_T_STRUCT)
            return (uint64_t)cnt <= k->n - i - 1 ? cnt + 1 : -1;
        for (int64_t e = 0; e < cnt; e++) {
            int64_t r = skip_value(k, i + (size_t)used, et, flags & KC_F_COMPACT, arg >> 8, depth);
            if (r < 0)
                return -1;
            used += r;
        }
        return used;
    }
    default:
        return i < k->n ? 1 : -1;
    }
}

static int64_t skip_struct(const kc_skip *k, size_t i, int sidx, int depth)
{
    const int32_t *s = kc_prog_struct(k->code, sidx);
    size_t j = i;
    if (depth > KC_MAX_DEPTH + 1)
        return -1;
    for (int32_t f = 0; f < KC_S_NF(s); f++) {
        const int32_t *fp = KC_S_FIELD(s, f);
        int64_t r = skip_value(k, j, fp[0], fp[1], fp[2], depth);
        if (r < 0)
            return -1;
        j += (size_t)r;
    }
    if (KC_S_FLAGS(s) & 1) {
        int64_t n;
        if (j >= k->n)
            return -1;
        n = k->tape[j++];
        if (n < 0)
            return -1;
        for (int64_t e = 0; e < n; e++) {
            int64_t key;
            if (j >= k->n)
                return -1;
            key = k->tape[j++];
            if (key >= 0) {
                const int32_t *t;
                int64_t r;
                if (key >= KC_S_NT(s))
                    return -1;
                t = KC_S_TAGGED(s, key);
                r = skip_value(k, j, t[1], t[2], t[3], depth);
                if (r < 0)
                    return -1;
                j += (size_t)r;
            } else {
                j += 1;
            }
        }
    }
    return j <= k->n ? (int64_t)(j - i) : -1;
}

int64_t kc_tape_skip(const int32_t *code, const int64_t *tape, size_t n_slots, size_t i,
                     int type, int flags, int arg, int in_tag)
{
    kc_skip k;
    (void)in_tag;
    k.code = code;
    k.tape = tape;
    k.n = n_slots;
    return skip_value(&k, i, type, flags, arg, 0);
}

/* ------------------------------------------------------------------------- */
/* encoding: pass 1 measures (and records tagged payload sizes in aux), pass 2
 * writes.  Both walk the tape in the same order. */

typedef struct {
    const int32_t *code;
    const int64_t *tape;
    size_t n, i;
    const uint8_t *heap;
    size_t heap_len;
    uint32_t *aux;
    const uint32_t *caux;
    uint8_t *out;
    size_t o;
    kc_error *err;
} kc_enc;

static int efail(kc_enc *e, int code)
{
    if (e->err) {
        e->err->code = code;
        e->err->offset = (int64_t)e->i;
        e->err->a = e->err->b = 0;
        e->err->path_len = 0;
    }
    return code;
}

#define TAKE(e, v)                              \
    do {                                        \
        if (KC_UNLIKELY((e)->i >= (e)->n))      \
            return efail((e), KC_E_TAPE);       \
        (v) = (e)->tape[(e)->i++];              \
    } while (0)

static inline int ref_ok(const kc_enc *e, int64_t r)
{
    size_t off = KC_REF_OFF(r), len = KC_REF_LEN(r);
    return (r & 0xffffffff) != 0 && off <= e->heap_len && len <= e->heap_len - off;
}

static const uint8_t FIXED_SIZE[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 16};

/* -------- pass 1 */

static int sz_struct(kc_enc *e, int sidx, int depth, uint64_t *sz);

static int sz_value(kc_enc *e, int type, int flags, int arg, int depth, int in_tag, uint64_t *sz)
{
    int64_t v;
    int rc;
    int compact = flags & KC_F_COMPACT;
    switch (type) {
    case KC_T_BOOL: case KC_T_INT8: case KC_T_INT16: case KC_T_UINT16: case KC_T_INT32:
    case KC_T_UINT32: case KC_T_INT64: case KC_T_FLOAT64:
        TAKE(e, v);
        *sz += FIXED_SIZE[type];
        return KC_OK;
    case KC_T_UUID:
        TAKE(e, v);
        if (!ref_ok(e, v) || KC_REF_LEN(v) != 16)
            return efail(e, KC_E_TAPE);
        *sz += 16;
        return KC_OK;
    case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS: {
        size_t len;
        TAKE(e, v);
        if (v == 0) {
            if (!(flags & KC_F_NULLABLE))
                return efail(e, KC_E_NULL);
            *sz += compact ? 1 : (type == KC_T_STRING ? 2 : 4);
            return KC_OK;
        }
        if (!ref_ok(e, v))
            return efail(e, KC_E_TAPE);
        len = KC_REF_LEN(v);
        if (type == KC_T_STRING && len > 0x7fff)
            return efail(e, KC_E_STRLEN);
        if (len > 0x7ffffffe)
            return efail(e, KC_E_TOO_BIG);
        *sz += len + (compact ? (size_t)kc_sizeof_uvarint((uint32_t)len + 1) : (type == KC_T_STRING ? 2 : 4));
        return KC_OK;
    }
    case KC_T_STRUCT:
        if (flags & KC_F_NULLABLE) {
            TAKE(e, v);
            *sz += 1;
            if (v == 0)
                return KC_OK;
        }
        return sz_struct(e, arg, depth + 1, sz);
    case KC_T_ARRAY: {
        int et = arg & 0xff;
        TAKE(e, v);
        if (v < 0) {
            if (!(flags & KC_F_NULLABLE))
                return efail(e, KC_E_NULL);
            *sz += compact ? 1 : 4;
            return KC_OK;
        }
        if (v > 0x7ffffffe)
            return efail(e, KC_E_TOO_BIG);
        *sz += compact ? (size_t)kc_sizeof_uvarint((uint32_t)v + 1) : 4;
        if (et <= KC_T_FLOAT64) {
            if ((uint64_t)v > e->n - e->i)
                return efail(e, KC_E_TAPE);
            e->i += (size_t)v;
            *sz += (uint64_t)v * FIXED_SIZE[et];
            return KC_OK;
        }
        for (int64_t j = 0; j < v; j++) {
            if ((rc = sz_value(e, et, compact, arg >> 8, depth, 0, sz)) != KC_OK)
                return rc;
        }
        return KC_OK;
    }
    default:
        (void)in_tag;
        return efail(e, KC_E_PROGRAM);
    }
}

static int sz_struct(kc_enc *e, int sidx, int depth, uint64_t *sz)
{
    const int32_t *s = kc_prog_struct(e->code, sidx);
    int rc;
    if (depth > KC_MAX_DEPTH)
        return efail(e, KC_E_DEPTH);
    for (int32_t f = 0; f < KC_S_NF(s); f++) {
        const int32_t *fp = KC_S_FIELD(s, f);
        if ((rc = sz_value(e, fp[0], fp[1], fp[2], depth, 0, sz)) != KC_OK)
            return rc;
    }
    if (KC_S_FLAGS(s) & 1) {
        int64_t n;
        TAKE(e, n);
        if (n < 0 || n > 0x7fffffff)
            return efail(e, KC_E_TAPE);
        *sz += (size_t)kc_sizeof_uvarint((uint32_t)n);
        for (int64_t j = 0; j < n; j++) {
            int64_t key;
            size_t at = e->i;
            TAKE(e, key);
            if (key >= 0) {
                const int32_t *t;
                uint64_t psz = 0;
                if (key >= KC_S_NT(s))
                    return efail(e, KC_E_TAPE);
                t = KC_S_TAGGED(s, key);
                if ((rc = sz_value(e, t[1], t[2], t[3], depth, 1, &psz)) != KC_OK)
                    return rc;
                if (psz > 0xfffffffeu)
                    return efail(e, KC_E_TOO_BIG);
                e->aux[at] = (uint32_t)psz;
                *sz += (size_t)kc_sizeof_uvarint((uint32_t)t[0]) + (size_t)kc_sizeof_uvarint((uint32_t)psz) + psz;
            } else {
                int64_t r;
                uint64_t tag = (uint64_t)(-1 - key);
                size_t len;
                if (tag > 0xffffffffu)
                    return efail(e, KC_E_TAPE);
                TAKE(e, r);
                if (!ref_ok(e, r))
                    return efail(e, KC_E_TAPE);
                len = KC_REF_LEN(r);
                *sz += (size_t)kc_sizeof_uvarint((uint32_t)tag) + (size_t)kc_sizeof_uvarint((uint32_t)len) + len;
            }
        }
    }
    return KC_OK;
}

int kc_encode_size(const int32_t *code, const int64_t *tape, size_t n_slots,
                   const uint8_t *heap, size_t heap_len, uint32_t *aux,
                   size_t *size, kc_error *err)
{
    kc_enc e;
    uint64_t sz = 0;
    int rc;
    memset(&e, 0, sizeof e);
    e.code = code;
    e.tape = tape;
    e.n = n_slots;
    e.heap = heap;
    e.heap_len = heap_len;
    e.aux = aux;
    e.err = err;
    if (err)
        err->path_len = 0;
    rc = sz_struct(&e, 0, 0, &sz);
    if (rc != KC_OK)
        return rc;
    if (e.i != n_slots)
        return efail(&e, KC_E_TAPE);
    if (sz > 0xfffffffeu)
        return efail(&e, KC_E_TOO_BIG);
    *size = (size_t)sz;
    return KC_OK;
}

/* -------- pass 2 (the tape was validated by pass 1) */

static void wr_struct(kc_enc *e, int sidx);

static inline void wr_len(kc_enc *e, int64_t n, int compact, int wide)
{
    if (compact)
        e->o += (size_t)kc_write_uvarint(e->out + e->o, (uint32_t)(n + 1));
    else if (wide) {
        wr32(e->out + e->o, (uint32_t)(int32_t)n);
        e->o += 4;
    } else {
        wr16(e->out + e->o, (uint16_t)(int16_t)n);
        e->o += 2;
    }
}

static void wr_value(kc_enc *e, int type, int flags, int arg, int in_tag)
{
    int64_t v = e->tape[e->i++];
    uint8_t *p = e->out + e->o;
    int compact = flags & KC_F_COMPACT;
    switch (type) {
    case KC_T_BOOL: p[0] = v != 0; e->o += 1; return;
    case KC_T_INT8: p[0] = (uint8_t)v; e->o += 1; return;
    case KC_T_INT16: case KC_T_UINT16: wr16(p, (uint16_t)v); e->o += 2; return;
    case KC_T_INT32: case KC_T_UINT32: wr32(p, (uint32_t)v); e->o += 4; return;
    case KC_T_INT64: case KC_T_FLOAT64: wr64(p, (uint64_t)v); e->o += 8; return;
    case KC_T_UUID: memcpy(p, e->heap + KC_REF_OFF(v), 16); e->o += 16; return;
    case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS: {
        size_t len;
        if (v == 0) {
            wr_len(e, -1, compact, type != KC_T_STRING);
            return;
        }
        len = KC_REF_LEN(v);
        wr_len(e, (int64_t)len, compact, type != KC_T_STRING);
        if (len)
            memcpy(e->out + e->o, e->heap + KC_REF_OFF(v), len);
        e->o += len;
        return;
    }
    case KC_T_STRUCT:
        if (flags & KC_F_NULLABLE) {
            /* in a tagged field the marker is uvarint 0/1, else int8 -1/1 */
            p[0] = v ? 1 : (in_tag ? 0 : 0xff);
            e->o += 1;
            if (!v)
                return;
        } else {
            e->i--;     /* a non-nullable struct has no marker slot */
        }
        wr_struct(e, arg);
        return;
    case KC_T_ARRAY: {
        int et = arg & 0xff;
        if (v < 0) {
            wr_len(e, -1, compact, 1);
            return;
        }
        wr_len(e, v, compact, 1);
        for (int64_t j = 0; j < v; j++)
            wr_value(e, et, compact, arg >> 8, 0);
        return;
    }
    default:
        return;
    }
}

static void wr_struct(kc_enc *e, int sidx)
{
    const int32_t *s = kc_prog_struct(e->code, sidx);
    for (int32_t f = 0; f < KC_S_NF(s); f++) {
        const int32_t *fp = KC_S_FIELD(s, f);
        wr_value(e, fp[0], fp[1], fp[2], 0);
    }
    if (KC_S_FLAGS(s) & 1) {
        int64_t n = e->tape[e->i++];
        e->o += (size_t)kc_write_uvarint(e->out + e->o, (uint32_t)n);
        for (int64_t j = 0; j < n; j++) {
            size_t at = e->i;
            int64_t key = e->tape[e->i++];
            if (key >= 0) {
                const int32_t *t = KC_S_TAGGED(s, key);
                e->o += (size_t)kc_write_uvarint(e->out + e->o, (uint32_t)t[0]);
                e->o += (size_t)kc_write_uvarint(e->out + e->o, e->caux[at]);
                wr_value(e, t[1], t[2], t[3], 1);
            } else {
                int64_t r = e->tape[e->i++];
                size_t len = KC_REF_LEN(r);
                e->o += (size_t)kc_write_uvarint(e->out + e->o, (uint32_t)(-1 - key));
                e->o += (size_t)kc_write_uvarint(e->out + e->o, (uint32_t)len);
                if (len)
                    memcpy(e->out + e->o, e->heap + KC_REF_OFF(r), len);
                e->o += len;
            }
        }
    }
}

int kc_encode_write(const int32_t *code, const int64_t *tape, size_t n_slots,
                    const uint8_t *heap, size_t heap_len, const uint32_t *aux,
                    uint8_t *out, kc_error *err)
{
    kc_enc e;
    memset(&e, 0, sizeof e);
    e.code = code;
    e.tape = tape;
    e.n = n_slots;
    e.heap = heap;
    e.heap_len = heap_len;
    e.caux = aux;
    e.out = out;
    e.err = err;
    wr_struct(&e, 0);
    return KC_OK;
}
