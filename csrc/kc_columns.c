/*
 * Bulk decoding into Arrow-layout columns (kc_columns.h).
 *
 * The decoder walks the program like kc_engine.c's and appends each value
 * straight to its column node (no tape).  Which rows decode and which fail is
 * exactly kc_decode's verdict (same checks, same order); the error texts are
 * left to kc_decode, which the binding runs again on the (rare) failing rows.
 *
 * Invariant: at the start of a struct value, each of the struct's children
 * holds exactly as many values as the struct.  Rolling a row back is therefore
 * truncating the root to its row index, and "tagged field k already seen in
 * this struct value" is "child k holds one more value than the struct".
 */
#include "kc_columns.h"
#include "kc_engine.h"
#include "kc_varint.h"
#include "kc_wire.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* building the tree */

static int32_t new_node(kc_columns *t, int kind, int type, int width)
{
    kc_col *c;
    if (t->n_nodes >= KC_COLUMNS_MAX_NODES)
        return -KC_E_PROGRAM;
    if (t->n_nodes == t->cap_nodes) {
        int32_t ncap = t->cap_nodes ? 2 * t->cap_nodes : 16;
        kc_col *nn = (kc_col *)realloc(t->nodes, (size_t)ncap * sizeof(kc_col));
        if (!nn)
            return -KC_E_NOMEM;
        t->nodes = nn;
        t->cap_nodes = ncap;
    }
    c = &t->nodes[t->n_nodes];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->type = type;
    c->width = width;
    c->sidx = -1;
    return t->n_nodes++;
}

/* Reserve n child slots for node i; returns the index of the first. */
static int32_t new_kids(kc_columns *t, int32_t i, int32_t n)
{
    int32_t first = t->n_kids;
    if (t->n_kids > KC_COLUMNS_MAX_NODES - n)
        return -KC_E_PROGRAM;
    if (t->n_kids + n > t->cap_kids) {
        int32_t ncap = t->cap_kids ? t->cap_kids : 16;
        int32_t *nk;
        while (ncap < t->n_kids + n)
            ncap *= 2;
        nk = (int32_t *)realloc(t->kids, (size_t)ncap * sizeof(int32_t));
        if (!nk)
            return -KC_E_NOMEM;
        t->kids = nk;
        t->cap_kids = ncap;
    }
    t->n_kids += n;
    t->nodes[i].first_kid = first;
    t->nodes[i].n_kids = n;
    return first;
}

static const uint8_t FIXED_WIDTH[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 16};

static int32_t build_struct(kc_columns *t, int sidx, int depth);

static int32_t build_value(kc_columns *t, int type, int arg, int depth)
{
    int32_t i, k, c;
    switch (type) {
    case KC_T_BOOL:
        return new_node(t, KC_N_BOOL, type, 0);
    case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS:
        return new_node(t, KC_N_VAR, type, 0);
    case KC_T_STRUCT:
        return build_struct(t, arg, depth + 1);
    case KC_T_ARRAY:
        if ((i = new_node(t, KC_N_LIST, type, 0)) < 0)
            return i;
        if ((k = new_kids(t, i, 1)) < 0)
            return k;
        if ((c = build_value(t, arg & 0xff, arg >> 8, depth)) < 0)
            return c;
        t->kids[k] = c;
        return i;
    default:
        if (type < KC_T_BOOL || type > KC_T_UUID)
            return -KC_E_PROGRAM;
        return new_node(t, KC_N_FIXED, type, FIXED_WIDTH[type]);
    }
}

/* list<struct<tag: int32, data: binary>> */
static int32_t build_unknown(kc_columns *t)
{
    int32_t l, s, k, c;
    if ((l = new_node(t, KC_N_LIST, KC_T_ARRAY, 0)) < 0 || (k = new_kids(t, l, 1)) < 0)
        return l < 0 ? l : k;
    if ((s = new_node(t, KC_N_STRUCT, KC_T_STRUCT, 0)) < 0)
        return s;
    t->kids[k] = s;
    if ((k = new_kids(t, s, 2)) < 0)
        return k;
    if ((c = new_node(t, KC_N_FIXED, KC_T_INT32, 4)) < 0)
        return c;
    t->kids[k] = c;
    if ((c = new_node(t, KC_N_VAR, KC_T_BYTES, 0)) < 0)
        return c;
    t->kids[k + 1] = c;
    return l;
}

static int32_t build_struct(kc_columns *t, int sidx, int depth)
{
    const int32_t *s = kc_prog_struct(t->code, sidx);
    int32_t nf = KC_S_NF(s), nt = KC_S_NT(s), flex = KC_S_FLAGS(s) & 1;
    int32_t i, k, c;
    if (depth > KC_MAX_DEPTH)
        return -KC_E_PROGRAM;
    if ((i = new_node(t, KC_N_STRUCT, KC_T_STRUCT, 0)) < 0)
        return i;
    t->nodes[i].sidx = sidx;
    if ((k = new_kids(t, i, nf + nt + flex)) < 0)
        return k;
    for (int32_t f = 0; f < nf; f++) {
        const int32_t *fp = KC_S_FIELD(s, f);
        if ((c = build_value(t, fp[0], fp[2], depth)) < 0)
            return c;
        t->kids[k + f] = c;
    }
    for (int32_t q = 0; q < nt; q++) {
        const int32_t *tp = KC_S_TAGGED(s, q);
        if ((c = build_value(t, tp[1], tp[3], depth)) < 0)
            return c;
        t->kids[k + nf + q] = c;
    }
    if (flex) {
        if ((c = build_unknown(t)) < 0)
            return c;
        t->kids[k + nf + nt] = c;
    }
    return i;
}

static void list_row_nodes(kc_columns *t, int32_t i)
{
    const kc_col *c = &t->nodes[i];
    t->row_nodes[t->n_row_nodes++] = i;
    if (c->kind == KC_N_STRUCT)
        for (int32_t q = 0; q < c->n_kids; q++)
            list_row_nodes(t, t->kids[c->first_kid + q]);
}

int kc_columns_init(kc_columns *t, const int32_t *code)
{
    int32_t r;
    memset(t, 0, sizeof *t);
    t->code = code;
    r = build_struct(t, 0, 0);
    if (r >= 0 && !(t->row_nodes = (int32_t *)malloc((size_t)t->n_nodes * sizeof(int32_t))))
        r = -KC_E_NOMEM;
    if (r < 0) {
        kc_columns_free(t);
        return -r;
    }
    list_row_nodes(t, 0);
    return KC_OK;
}

static int accepts_struct(const kc_columns *t, int32_t node, const int32_t *code, int sidx, int depth);

static int accepts_value(const kc_columns *t, int32_t node, const int32_t *code, int type, int arg,
                         int depth)
{
    const kc_col *c = &t->nodes[node];
    if (type == KC_T_STRUCT)
        return accepts_struct(t, node, code, arg, depth + 1);
    if (c->type != type)
        return 0;
    if (type == KC_T_ARRAY)
        return accepts_value(t, t->kids[c->first_kid], code, arg & 0xff, arg >> 8, depth);
    return 1;
}

static int accepts_struct(const kc_columns *t, int32_t node, const int32_t *code, int sidx, int depth)
{
    const kc_col *c = &t->nodes[node];
    const int32_t *s, *ts;
    int32_t nf, nt;
    if (depth > KC_MAX_DEPTH || c->kind != KC_N_STRUCT || c->sidx < 0)
        return 0;
    s = kc_prog_struct(code, sidx);
    ts = kc_prog_struct(t->code, c->sidx);
    nf = KC_S_NF(s);
    nt = KC_S_NT(s);
    if (KC_S_NF(ts) != nf || ((KC_S_FLAGS(s) & 1) && !(KC_S_FLAGS(ts) & 1)))
        return 0;
    /* the same tagged fields, unless `code`'s struct is not flexible (none) and the tree's
     * is: its rows then take the defaults of the tree's */
    if ((KC_S_FLAGS(s) & 1) == (KC_S_FLAGS(ts) & 1) ? KC_S_NT(ts) != nt : nt != 0)
        return 0;
    for (int32_t f = 0; f < nf; f++) {
        const int32_t *fp = KC_S_FIELD(s, f);
        if (!accepts_value(t, t->kids[c->first_kid + f], code, fp[0], fp[2], depth))
            return 0;
    }
    for (int32_t q = 0; q < nt; q++) {
        const int32_t *tp = KC_S_TAGGED(s, q);
        if (tp[0] != KC_S_TAGGED(ts, q)[0]
            || !accepts_value(t, t->kids[c->first_kid + nf + q], code, tp[1], tp[3], depth))
            return 0;
    }
    return 1;
}

int kc_columns_accepts(const kc_columns *t, const int32_t *code)
{
    return t->n_nodes > 0 && accepts_struct(t, 0, code, 0, 0);
}

void kc_columns_free(kc_columns *t)
{
    for (int32_t i = 0; i < t->n_nodes; i++) {
        kc_col *c = &t->nodes[i];
        free(c->validity);
        free(c->values);
        free(c->offsets);
        free(c->data);
    }
    free(t->nodes);
    free(t->kids);
    free(t->row_nodes);
    memset(t, 0, sizeof *t);
}

void kc_columns_skip(kc_columns *t, int32_t i)
{
    kc_col *c = &t->nodes[i];
    c->skip = 1;
    for (int32_t q = 0; q < c->n_kids; q++)
        kc_columns_skip(t, t->kids[c->first_kid + q]);
}

/* ------------------------------------------------------------------------- */
/* appending */

#define KID(t, c, q) (&(t)->nodes[(t)->kids[(c)->first_kid + (q)]])

static int grow(kc_col *restrict c, size_t need)
{
    size_t ncap = c->cap ? c->cap : 64;
    void *p;
    while (ncap < need)
        ncap *= 2;
    if (c->validity) {
        size_t had = (c->cap + 7) / 8, nb = (ncap + 7) / 8;
        if (!(p = realloc(c->validity, nb)))
            return KC_E_NOMEM;
        c->validity = (uint8_t *)p;
        memset(c->validity + had, 0xff, nb - had);     /* set from len on */
    }
    if (c->kind == KC_N_FIXED || c->kind == KC_N_BOOL) {
        size_t nb = c->kind == KC_N_BOOL ? (ncap + 7) / 8 : ncap * (size_t)c->width;
        if (!(p = realloc(c->values, nb)))
            return KC_E_NOMEM;
        c->values = (uint8_t *)p;
    } else if (c->kind == KC_N_LIST || c->kind == KC_N_VAR) {
        if (!(p = realloc(c->offsets, (ncap + 1) * sizeof(int32_t))))
            return KC_E_NOMEM;
        c->offsets = (int32_t *)p;
        if (c->cap == 0)
            c->offsets[0] = 0;
    }
    c->cap = ncap;
    return KC_OK;
}

/* room for `need` bytes of string/bytes data; first 8 bytes per value slot (a column
 * reserved for a batch's rows starts near its size instead of doubling up from 256) */
static int grow_data(kc_col *restrict c, size_t need)
{
    size_t ncap = c->data_cap ? c->data_cap : c->cap > 32 ? 8 * c->cap : 256;
    uint8_t *nd;
    while (ncap < need)
        ncap *= 2;
    if (ncap > 0x7fffffff) {        /* int32 offsets */
        if (need > 0x7fffffff)
            return KC_E_TOO_BIG;
        ncap = 0x7fffffff;
    }
    if (!(nd = (uint8_t *)realloc(c->data, ncap)))
        return KC_E_NOMEM;
    c->data = nd;
    c->data_cap = ncap;
    return KC_OK;
}

/* room for n more values */
static inline int reserve(kc_col *restrict c, size_t n)
{
    if (KC_LIKELY(c->cap - c->len >= n && c->cap))
        return KC_OK;
    return grow(c, c->len + n);
}

/* room for one more value: the check of every appended value, one compare (len <= cap) */
static inline int reserve1(kc_col *restrict c)
{
    return KC_LIKELY(c->len < c->cap) ? KC_OK : grow(c, c->len + 1);
}

static inline void put_bit(uint8_t *bits, size_t i, int v)
{
    uint8_t m = (uint8_t)(1u << (i & 7));
    bits[i >> 3] = v ? (uint8_t)(bits[i >> 3] | m) : (uint8_t)(bits[i >> 3] & ~m);
}

/* A bitmap for c, all set: from the first null on (columns without nulls never pay
 * for one). */
static int new_validity(kc_col *restrict c)
{
    if (!(c->validity = (uint8_t *)malloc((c->cap + 7) / 8)))
        return KC_E_NOMEM;
    memset(c->validity, 0xff, (c->cap + 7) / 8);
    return KC_OK;
}

/* Record value c->len's validity and count it.  A bitmap's bits from len on are set,
 * so a valid value only counts. */
static inline int put_valid(kc_col *restrict c, int valid)
{
    int rc;
    if (KC_LIKELY(valid)) {
        c->len++;
        return KC_OK;
    }
    if (!c->validity && (rc = new_validity(c)) != KC_OK)
        return rc;
    put_bit(c->validity, c->len++, 0);
    return KC_OK;
}

/* one fixed-width value (bool, ints, float64 bits) */
static inline int put_fixed(kc_col *restrict c, int64_t v, int valid)
{
    int rc;
    if (c->skip)
        return KC_OK;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    switch (c->width) {
    case 0: put_bit(c->values, c->len, v != 0); break;
    case 1: c->values[c->len] = (uint8_t)v; break;
    case 2: { uint16_t x = (uint16_t)v; memcpy(c->values + 2 * c->len, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(c->values + 4 * c->len, &x, 4); break; }
    default: memcpy(c->values + 8 * c->len, &v, 8); break;
    }
    return put_valid(c, valid);
}

static inline int put_uuid(kc_col *restrict c, const uint8_t *p, int valid)
{
    int rc;
    if (c->skip)
        return KC_OK;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    if (p)
        memcpy(c->values + 16 * c->len, p, 16);
    else
        memset(c->values + 16 * c->len, 0, 16);
    return put_valid(c, valid);
}

/* one string/bytes value into a column that keeps values; p NULL = null.  n was
 * checked against the input. */
static KC_ALWAYS_INLINE int put_var_kept(kc_col *restrict c, const uint8_t *p, size_t n)
{
    int rc;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    if (n) {
        if (c->data_cap - c->data_len < n && (rc = grow_data(c, c->data_len + n)) != KC_OK)
            return rc;
        uint8_t *dst = c->data + c->data_len;
        if (n >= 8 && n <= 16) {    /* names: two overlapping words, no call, no loop */
            memcpy(dst, p, 8);
            memcpy(dst + n - 8, p + n - 8, 8);
        } else if (n < 8) {
            for (size_t i = 0; i < n; i++)
                dst[i] = p[i];
        } else {
            memcpy(c->data + c->data_len, p, n);
        }
        c->data_len += n;
    }
    c->offsets[c->len + 1] = (int32_t)c->data_len;
    return put_valid(c, p != NULL);
}

static inline int put_var(kc_col *restrict c, const uint8_t *p, size_t n)
{
    return c->skip ? KC_OK : put_var_kept(c, p, n);
}

/* close a list value whose elements were appended to its child */
static inline int put_list(kc_col *restrict c, size_t child_len, int valid)
{
    int rc;
    if (c->skip)
        return KC_OK;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    if (child_len > 0x7fffffff)
        return KC_E_TOO_BIG;
    c->offsets[c->len + 1] = (int32_t)child_len;
    return put_valid(c, valid);
}

static inline int put_struct(kc_col *restrict c, int valid)
{
    int rc;
    if (c->skip)
        return KC_OK;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    return put_valid(c, valid);
}

static int put_absent_struct(kc_columns *t, kc_col *c, int valid);

/* a null value (def: 0) or, with `dflt`, the node's default.  Inline for the leaves: the
 * fields a version lacks and the absent tagged fields take this once per row. */
static KC_ALWAYS_INLINE int put_absent(kc_columns *t, kc_col *c, int dflt)
{
    int valid = dflt && !c->def_null;
    if (c->skip)
        return KC_OK;
    switch (c->kind) {
    case KC_N_STRUCT:
        return put_absent_struct(t, c, valid);
    case KC_N_LIST:
        return put_list(c, KID(t, c, 0)->len, valid);
    case KC_N_VAR:
        return put_var(c, valid ? (c->def_bytes ? c->def_bytes : (const uint8_t *)"") : NULL,
                       valid ? c->def_len : 0);
    default:
        if (c->width == 16)
            return put_uuid(c, valid ? c->def_bytes : NULL, valid);
        return put_fixed(c, valid ? c->def_i : 0, valid);
    }
}

static int put_absent_struct(kc_columns *t, kc_col *c, int valid)
{
    int rc;
    for (int32_t q = 0; q < c->n_kids; q++)
        if ((rc = put_absent(t, KID(t, c, q), valid)) != KC_OK)
            return rc;
    return put_struct(c, valid);
}

/* bits [from, from + k) set to v: the partial bytes at either end masked, the whole
 * bytes between set at once (null runs are mostly short: a row of another type) */
static void fill_bits(uint8_t *bits, size_t from, size_t k, int v)
{
    size_t end = from + k, b0 = from >> 3, b1 = end >> 3;
    uint8_t head = (uint8_t)(0xffu << (from & 7)), tail = (uint8_t)((1u << (end & 7)) - 1);
    if (!k)
        return;
    if (b0 == b1)           /* within one byte (end is not on a byte boundary here) */
        head &= tail;
    bits[b0] = v ? (uint8_t)(bits[b0] | head) : (uint8_t)(bits[b0] & ~head);
    if (b0 == b1)
        return;
    for (size_t i = b0 + 1; i < b1 && i < b0 + 9; i++)
        bits[i] = v ? 0xff : 0;
    if (b1 > b0 + 9)
        memset(bits + b0 + 9, v ? 0xff : 0, b1 - b0 - 9);
    if (end & 7)            /* no byte past the last bit is touched */
        bits[b1] = v ? (uint8_t)(bits[b1] | tail) : (uint8_t)(bits[b1] & ~tail);
}

static void clear_bits(uint8_t *bits, size_t from, size_t k)
{
    fill_bits(bits, from, k, 0);
}

/* k null rows: a null in every node that holds one value per row, run by run (what
 * put_absent(root, 0) appends k times, without walking the tree per row). */
static int put_null_rows(kc_columns *t, size_t k)
{
    for (int32_t j = 0; j < t->n_row_nodes; j++) {
        kc_col *c = &t->nodes[t->row_nodes[j]];
        int rc;
        if (c->skip)
            continue;
        if ((rc = reserve(c, k)) != KC_OK)
            return rc;
        if (c->kind == KC_N_FIXED)
            memset(c->values + (size_t)c->width * c->len, 0, (size_t)c->width * k);
        else if (c->kind == KC_N_BOOL)
            clear_bits(c->values, c->len, k);
        else if (c->kind == KC_N_LIST || c->kind == KC_N_VAR)
            for (size_t i = 1; i <= k; i++)
                c->offsets[c->len + i] = c->offsets[c->len];
        if (!c->validity && (rc = new_validity(c)) != KC_OK)
            return rc;
        clear_bits(c->validity, c->len, k);
        c->len += k;
    }
    return KC_OK;
}

/* drop values from n on (n <= len).  Children are cut too even when the node itself
 * holds n values: a failed value may have appended to them already. */
static void col_truncate(kc_columns *t, kc_col *c, size_t n)
{
    size_t kid_n;
    if (c->skip || n > c->len)
        return;
    kid_n = (n && (c->kind == KC_N_LIST || c->kind == KC_N_VAR)) ? (size_t)(uint32_t)c->offsets[n] : 0;
    switch (c->kind) {
    case KC_N_STRUCT:
        for (int32_t q = 0; q < c->n_kids; q++)
            col_truncate(t, KID(t, c, q), n);
        break;
    case KC_N_LIST:
        col_truncate(t, KID(t, c, 0), kid_n);
        break;
    case KC_N_VAR:
        c->data_len = kid_n;
        break;
    default:
        break;
    }
    if (c->validity)        /* bits from len on stay set */
        fill_bits(c->validity, n, c->len - n, 1);
    c->len = n;
}

/* ------------------------------------------------------------------------- */
/* decoding */

typedef struct {
    kc_columns *t;
    const int32_t *code;    /* the row's program */
    const uint8_t *buf;
    size_t pos, end;
    size_t err_at;
    uint32_t tagged;        /* the tagged fields in the top-level struct's tag section */
    const int32_t *map;     /* NULL, or the program's field map into a union tree
                               (kc_columns_decode_one) */
} kc_cdec;

/* With a field map: the block of union struct node c (kc_columns.h), NULL without one. */
static inline const int32_t *map_block(const kc_cdec *d, const kc_col *c)
{
    int32_t at;
    if (!d->map)
        return NULL;
    at = d->map[c - d->t->nodes];
    return at < 0 ? NULL : d->map + at;
}

static inline int cfail(kc_cdec *restrict d, int code, size_t at)
{
    d->err_at = at;
    return code;
}

static inline int rd_uv(kc_cdec *restrict d, uint32_t *v)
{
    int r = kc_read_uvarint(d->buf + d->pos, d->end - d->pos, v);
    if (KC_UNLIKELY(r < 0))
        return cfail(d, r == KC_VARINT_TRUNCATED ? KC_E_VARINT_TRUNC : KC_E_VARINT_LONG, d->pos);
    d->pos += (size_t)r;
    return KC_OK;
}

/* a length prefix: compact uvarint(n + 1), else int16 (strings) or int32; -1 = null */
static inline int rd_len(kc_cdec *restrict d, int flags, int wide, int64_t *n)
{
    size_t left = d->end - d->pos;
    const uint8_t *p = d->buf + d->pos;
    if (flags & KC_F_COMPACT) {
        uint32_t u;
        int rc = rd_uv(d, &u);
        *n = (int64_t)u - 1;
        return rc;
    }
    if (!wide) {
        if (KC_UNLIKELY(left < 2))
            return cfail(d, KC_E_SHORT, d->pos);
        *n = (int16_t)rd16(p);
        d->pos += 2;
        return KC_OK;
    }
    if (KC_UNLIKELY(left < 4))
        return cfail(d, KC_E_SHORT, d->pos);
    *n = (int32_t)rd32(p);
    d->pos += 4;
    return KC_OK;
}

static int cd_struct(kc_cdec *restrict d, kc_col *restrict c, int sidx, int depth);

/* a fixed-width value, read and stored in one step (ints little-endian in the column) */
static inline int cd_fixed(kc_cdec *restrict d, kc_col *restrict c, int type)
{
    static const uint8_t size[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 16};
    size_t w = size[type];
    const uint8_t *p = d->buf + d->pos;
    uint8_t *dst;
    int rc;
    if (KC_UNLIKELY(d->end - d->pos < w))
        return cfail(d, KC_E_SHORT, d->pos);
    d->pos += w;
    if (c->skip)
        return KC_OK;
    if ((rc = reserve1(c)) != KC_OK)
        return rc;
    dst = c->values + (size_t)c->width * c->len;
    switch (type) {
    case KC_T_BOOL: put_bit(c->values, c->len, p[0] != 0); break;
    case KC_T_INT8: dst[0] = p[0]; break;
    case KC_T_INT16: case KC_T_UINT16: { uint16_t x = rd16(p); memcpy(dst, &x, 2); break; }
    case KC_T_INT32: case KC_T_UINT32: { uint32_t x = rd32(p); memcpy(dst, &x, 4); break; }
    case KC_T_UUID: memcpy(dst, p, 16); break;
    default: { uint64_t x = rd64(p); memcpy(dst, &x, 8); break; }
    }
    return put_valid(c, 1);
}

static inline int cd_bytes(kc_cdec *restrict d, kc_col *restrict c, int type, int flags)
{
    size_t start = d->pos;
    int64_t n;
    int rc = rd_len(d, flags, type != KC_T_STRING, &n);
    if (rc != KC_OK)
        return rc;
    if (n < 0) {
        if (KC_UNLIKELY(!(flags & KC_F_NULLABLE)))
            return cfail(d, KC_E_NULL, start);
        return put_var(c, NULL, 0);
    }
    if (type == KC_T_STRING && KC_UNLIKELY(n > 0x7fff))
        return cfail(d, KC_E_STRLEN, start);
    if (KC_UNLIKELY((uint64_t)n > d->end - d->pos))
        return cfail(d, KC_E_SHORT, d->pos);
    if (type == KC_T_STRING) {
        size_t bad = utf8_check(d->buf + d->pos, (size_t)n);
        if (KC_UNLIKELY(bad != (size_t)n))
            return cfail(d, KC_E_UTF8, d->pos + bad);
    }
    rc = put_var(c, d->buf + d->pos, (size_t)n);
    d->pos += (size_t)n;
    return rc;
}

/* int32 elements: checked once, converted in one loop */
static int cd_int32s(kc_cdec *restrict d, kc_col *e, int64_t n)
{
    int rc;
    if (KC_UNLIKELY((uint64_t)n * 4 > d->end - d->pos))
        return cfail(d, KC_E_SHORT, d->pos + 4 * ((d->end - d->pos) / 4));
    if (!e->skip) {
        if ((rc = reserve(e, (size_t)n)) != KC_OK)
            return rc;
        for (int64_t i = 0; i < n; i++) {
            uint32_t x = rd32(d->buf + d->pos + 4 * (size_t)i);
            memcpy(e->values + 4 * (e->len + (size_t)i), &x, 4);
        }
        e->len += (size_t)n;
    }
    d->pos += 4 * (size_t)n;
    return KC_OK;
}

static int cd_value(kc_cdec *restrict d, kc_col *restrict c, int type, int flags, int arg, int depth, int in_tag)
{
    size_t start = d->pos;
    int rc;
    switch (type) {
    case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS:
        return cd_bytes(d, c, type, flags);
    case KC_T_STRUCT:
        if (flags & KC_F_NULLABLE) {
            int present = 0, r = kc_read_presence(d->buf + d->pos, d->end - d->pos, in_tag, &present);
            if (KC_UNLIKELY(r <= 0))
                return cfail(d, r == 0 ? KC_E_SHORT : r == KC_VARINT_TRUNCATED ? KC_E_VARINT_TRUNC
                                                                              : KC_E_VARINT_LONG, start);
            d->pos += (size_t)r;
            if (!present)
                return put_absent(d->t, c, 0);
        }
        return cd_struct(d, c, arg, depth + 1);
    case KC_T_ARRAY: {
        int64_t n;
        int et = arg & 0xff;
        kc_col *e = KID(d->t, c, 0);
        if ((rc = rd_len(d, flags, 1, &n)) != KC_OK)
            return rc;
        if (n < 0) {
            if (KC_UNLIKELY(!(flags & KC_F_NULLABLE)))
                return cfail(d, KC_E_NULL, start);
            return put_list(c, e->len, 0);
        }
        if (KC_UNLIKELY((uint64_t)n > d->end - d->pos))
            return cfail(d, KC_E_ARRAY_COUNT, start);
        /* elements are not nullable (flags: compact only); scalars, strings and structs
         * without a call and a dispatch per element */
        if (et == KC_T_INT32)
            rc = cd_int32s(d, e, n);
        else if (et <= KC_T_UUID)
            for (int64_t i = 0; i < n && rc == KC_OK; i++)
                rc = cd_fixed(d, e, et);
        else if (et <= KC_T_RECORDS)
            for (int64_t i = 0; i < n && rc == KC_OK; i++)
                rc = cd_bytes(d, e, et, flags & KC_F_COMPACT);
        else if (et == KC_T_STRUCT)
            for (int64_t i = 0; i < n && rc == KC_OK; i++)
                rc = cd_struct(d, e, arg >> 8, depth + 1);
        else
            for (int64_t i = 0; i < n && rc == KC_OK; i++)
                rc = cd_value(d, e, et, flags & KC_F_COMPACT, arg >> 8, depth, 0);
        return rc != KC_OK ? rc : put_list(c, e->len, 1);
    }
    default:
        return cd_fixed(d, c, type);
    }
}

/* one tagged-section entry of a known tag: its payload spans exactly `size` bytes */
static int cd_tagged(kc_cdec *restrict d, kc_col *restrict c, const int32_t *tp, size_t size, size_t base, int depth)
{
    size_t start = d->pos, saved_end = d->end;
    int rc;
    if (KC_UNLIKELY((uint64_t)size > d->end - start))
        return cfail(d, KC_E_TAG_SIZE, start);
    if (c->len > base)              /* a repeated tag: the last one wins, as in decode */
        col_truncate(d->t, c, base);
    d->end = start + size;
    rc = cd_value(d, c, tp[1], tp[2], tp[3], depth, 1);
    if (rc == KC_OK && d->pos != d->end)
        rc = cfail(d, KC_E_TAG_SPAN, d->pos);
    d->end = saved_end;
    return rc;
}

/* an unknown tag: {tag, raw payload} appended to the struct value's list */
static int cd_unknown(kc_cdec *restrict d, kc_col *u, uint32_t tag, size_t size)
{
    kc_col *e = KID(d->t, u, 0);
    int rc;
    if (KC_UNLIKELY((uint64_t)size > d->end - d->pos))
        return cfail(d, KC_E_SHORT, d->pos);
    if ((rc = put_fixed(KID(d->t, e, 0), (int32_t)tag, 1)) != KC_OK
        || (rc = put_var(KID(d->t, e, 1), d->buf + d->pos, size)) != KC_OK
        || (rc = put_struct(e, 1)) != KC_OK)
        return rc;
    d->pos += size;
    return KC_OK;
}

static int cd_tag_section(kc_cdec *restrict d, kc_col *restrict c, const int32_t *s, int depth,
                          const int32_t *fm)
{
    int32_t nf = KC_S_NF(s), nt = KC_S_NT(s);
    size_t base = c->len, count_at = d->pos;
    kc_col *u = KID(d->t, c, fm ? fm[nf + nt] : nf + nt);
    uint32_t n, tag, size;
    int rc;
    if ((rc = rd_uv(d, &n)) != KC_OK)
        return rc;
    if (KC_UNLIKELY((uint64_t)n > d->end - d->pos))
        return cfail(d, KC_E_TAG_COUNT, count_at);
    if (depth == 0)
        d->tagged = n;
    for (uint32_t j = 0; j < n; j++) {
        int32_t k;
        if ((rc = rd_uv(d, &tag)) != KC_OK || (rc = rd_uv(d, &size)) != KC_OK)
            return rc;
        k = kc_struct_tag(s, tag);
        if (k >= 0) {
            rc = cd_tagged(d, KID(d->t, c, fm ? fm[nf + k] : nf + k), KC_S_TAGGED(s, k), size, base, depth);
        } else {
            if (k == KC_TAG_BAD)
                return cfail(d, KC_E_BAD_TAG, d->pos);
            rc = cd_unknown(d, u, tag, size);
        }
        if (rc != KC_OK)
            return rc;
    }
    if (!c->skip)
        for (int32_t q = 0; q < nt; q++) {
            kc_col *tc = KID(d->t, c, fm ? fm[nf + q] : nf + q);
            if (tc->len == base && (rc = put_absent(d->t, tc, 1)) != KC_OK)
                return rc;
        }
    return put_list(u, KID(d->t, u, 0)->len, 1);
}

static int cd_struct(kc_cdec *restrict d, kc_col *restrict c, int sidx, int depth)
{
    const int32_t *s = kc_prog_struct(d->code, sidx);
    int32_t nf = KC_S_NF(s);
    /* loaded once: the stores into the columns below could alias them for the compiler */
    kc_col *const nodes = d->t->nodes;
    const int32_t *const kids = d->t->kids + c->first_kid;
    /* a field map (union tree): the kid of each field, and the kids this version lacks */
    const int32_t *const mb = map_block(d, c);
    const int32_t *const fm = mb ? mb + 1 + mb[0] : NULL;
    int rc;
    if (KC_UNLIKELY(depth > KC_MAX_DEPTH))
        return cfail(d, KC_E_DEPTH, d->pos);
    for (int32_t i = 0; i < nf; i++) {
        const int32_t *f = KC_S_FIELD(s, i);
        kc_col *k = &nodes[kids[fm ? fm[i] : i]];
        /* scalars and strings inline: a flat struct never leaves this loop */
        if (f[0] <= KC_T_UUID)
            rc = cd_fixed(d, k, f[0]);
        else if (f[0] <= KC_T_RECORDS)
            rc = cd_bytes(d, k, f[0], f[1]);
        else
            rc = cd_value(d, k, f[0], f[1], f[2], depth, 0);
        if (KC_UNLIKELY(rc != KC_OK))
            return rc;
    }
    if (KC_S_FLAGS(s) & 1) {
        if ((rc = cd_tag_section(d, c, s, depth, fm)) != KC_OK)
            return rc;
    } else if (KC_UNLIKELY(!mb && c->n_kids > nf)) {
        /* an older, non-flexible version in a flexible version's tree (kc_columns_accepts):
         * the tree's tagged fields take their defaults, and no unknown tags */
        int32_t last = c->n_kids - 1;
        kc_col *u = KID(d->t, c, last);
        for (int32_t q = nf; q < last; q++)
            if ((rc = put_absent(d->t, KID(d->t, c, q), 1)) != KC_OK)
                return rc;
        if ((rc = put_list(u, KID(d->t, u, 0)->len, 1)) != KC_OK)
            return rc;
    }
    if (mb)         /* fields of other versions: null; unknown tags of a version without any: none */
        for (int32_t q = 1; q <= mb[0]; q++) {
            int32_t slot = mb[q];
            kc_col *k = &nodes[kids[slot >= 0 ? slot : -1 - slot]];
            rc = slot >= 0 ? put_absent(d->t, k, 0) : put_list(k, KID(d->t, k, 0)->len, 1);
            if (rc != KC_OK)
                return rc;
        }
    return put_struct(c, 1);
}

/* ------------------------------------------------------------------------- */
/* rows */

/* slice entry e's position and length (packed arrays, or fields read by stride) */
static inline void entry_at(const kc_rows *rows, size_t e, int64_t *p, int32_t *l)
{
    size_t ps = rows->pos_stride ? rows->pos_stride : sizeof *p;
    size_t ls = rows->lens_stride ? rows->lens_stride : sizeof *l;
    memcpy(p, (const uint8_t *)rows->pos + e * ps, sizeof *p);
    memcpy(l, (const uint8_t *)rows->lens + e * ls, sizeof *l);
}

static inline const uint8_t *slice_at(const kc_rows *rows, size_t r, size_t *n)
{
    size_t e = r;
    int64_t p;
    int32_t l;
    *n = 1;
    if (rows->take) {
        if (rows->take[r] < 0 || (uint64_t)rows->take[r] >= rows->n_entries)
            return NULL;
        e = (size_t)rows->take[r];
    }
    entry_at(rows, e, &p, &l);
    if (l < 0) {
        *n = 0;
        return NULL;
    }
    if (p < 0 || (uint64_t)p > rows->data_len || (uint64_t)l > rows->data_len - (size_t)p)
        return NULL;
    *n = (size_t)l;
    return rows->data + p;
}

/* selected out (select, or which < 0): a null row */
static inline int row_out(const kc_rows *rows, size_t r)
{
    return (rows->select && !rows->select[r]) || (rows->which && rows->which[r] < 0);
}

/* Row r's bytes whether selected or not (NULL: a null row, *n = 0, or a row outside
 * the data, *n = 1). */
static inline const uint8_t *row_bytes(const kc_rows *rows, size_t r, size_t *n)
{
    if (rows->pos)
        return slice_at(rows, r, n);
    return kc_rows_array_at(rows, r, n);
}

static inline const uint8_t *rows_at(const kc_rows *rows, size_t r, size_t *n)
{
    if (row_out(rows, r)) {
        *n = 0;
        return NULL;
    }
    return row_bytes(rows, r, n);
}

const uint8_t *kc_rows_at(const kc_rows *rows, size_t r, size_t *n)
{
    return rows_at(rows, r, n);
}

int kc_rows_heads(const kc_rows *rows, size_t n, size_t k, uint8_t *out, int32_t *have)
{
    if (k > 8)
        return KC_E_TOO_BIG;
    for (size_t r = 0; r < n; r++) {
        size_t len;
        const uint8_t *p = rows_at(rows, r, &len);
        uint8_t *o = out + r * k;
        size_t m = p ? (len < k ? len : k) : 0;
        if (m == k) {           /* the usual case: the whole head is there */
            if (k == 2)         /* int16 prefixes: no call per row */
                memcpy(o, p, 2);
            else
                memcpy(o, p, k);
        } else {
            memset(o, 0, k);
            if (m)
                memcpy(o, p, m);
        }
        have[r] = p ? (int32_t)m : len ? -2 : -1;
    }
    return KC_OK;
}

/* Decode one row's message, p[skip .. n), with `code` (and its field map, or NULL) into
 * the tree. */
static int decode_row(kc_columns *t, const int32_t *code, const int32_t *map, const uint8_t *p, size_t n,
                      size_t skip, int64_t *err_off, uint32_t *tagged)
{
    kc_cdec d;
    int rc;
    *err_off = 0;
    *tagged = 0;
    if (n > 0xfffffffeu)
        return KC_E_TOO_BIG;
    if (n < skip)
        return KC_E_SHORT;
    d.t = t;
    d.code = code;
    d.buf = p + skip;
    d.pos = 0;
    d.end = n - skip;
    d.err_at = 0;
    d.tagged = 0;
    d.map = map;
    rc = cd_struct(&d, &t->nodes[0], 0, 0);
    if (rc == KC_OK && d.pos != d.end)
        rc = cfail(&d, KC_E_TRAILING, d.pos);
    *err_off = (int64_t)d.err_at;
    *tagged = rc == KC_OK ? d.tagged : 0;
    return rc;
}

/* Room for n more values in every node that holds one value per row (the message and
 * its structs outside arrays): no regrowth while the rows are appended. */
static int reserve_rows(kc_columns *t, kc_col *c, size_t n)
{
    int rc = c->skip ? KC_OK : reserve(c, n);
    if (rc == KC_OK && c->kind == KC_N_STRUCT)
        for (int32_t q = 0; q < c->n_kids && rc == KC_OK; q++)
            rc = reserve_rows(t, KID(t, c, q), n);
    return rc;
}

/* Row r's version prefix (reported for every row) and the program it picks. */
static inline const int32_t *by_prefix(const kc_columns *t, const kc_rows *rows, size_t r,
                                       const uint8_t *p, size_t len, const kc_row_info *out)
{
    size_t w = (size_t)rows->prefix;
    int32_t v = -1;
    if (p && len >= w)
        v = w == 2 ? (int32_t)(int16_t)rd16(p) : (int32_t)rd32(p);
    if (w == 2)
        ((int16_t *)out->versions)[r] = (int16_t)v;
    else
        ((int32_t *)out->versions)[r] = v;
    if (out->have)
        out->have[r] = (int8_t)(p ? (int)(len < w ? len : w) : len ? -2 : -1);
    if (v < 0 || (size_t)v >= t->n_codes || (rows->select && !rows->select[r]))
        return NULL;
    return t->codes[v];
}

int kc_columns_decode_rows(kc_columns *t, const kc_rows *rows, size_t n, const kc_row_info *out)
{
    kc_col *root = &t->nodes[0];
    size_t nulls = 0;           /* a run of null rows not appended yet */
    int rc;
    if (rows->prefix && (rows->which || !t->codes || (rows->prefix != 2 && rows->prefix != 4)
                         || !out->versions))
        return KC_E_INVALID;
    if (rows->which)
        for (size_t r = 0; r < n; r++)
            if (rows->which[r] >= 0 && (!t->codes || (size_t)rows->which[r] >= t->n_codes))
                return KC_E_PROGRAM;
    if (reserve_rows(t, root, n) != KC_OK)
        return KC_E_NOMEM;
    for (size_t r = 0; r < n; r++) {
        const int32_t *code;
        const uint8_t *p;
        size_t len, at;
        int64_t eo = 0;
        uint32_t tagged = 0;
        if (rows->prefix) {
            p = row_bytes(rows, r, &len);
            code = by_prefix(t, rows, r, p, len, out);
        } else if (row_out(rows, r)) {
            p = NULL;
            len = 0;
            code = NULL;
        } else {
            p = row_bytes(rows, r, &len);
            code = rows->which ? t->codes[rows->which[r]] : t->code;
        }
        if (out->tagged)
            out->tagged[r] = 0;
        if (out->err_off)
            out->err_off[r] = 0;
        if (!code || (!p && !len)) {        /* a null row: appended with its run */
            out->status[r] = KC_E_NULL_ROW;
            nulls++;
            continue;
        }
        if (nulls) {
            if ((rc = put_null_rows(t, nulls)) != KC_OK)
                return rc;
            nulls = 0;
        }
        at = root->len;
        rc = p ? decode_row(t, code, NULL, p, len, rows->skip, &eo, &tagged) : KC_E_TOO_BIG;
        out->status[r] = rc;
        if (KC_LIKELY(rc == KC_OK)) {
            if (out->tagged)
                out->tagged[r] = (int32_t)(tagged > 0x7fffffff ? 0x7fffffff : tagged);
            continue;
        }
        if (out->err_off)
            out->err_off[r] = eo;
        if (rc == KC_E_NOMEM)
            return rc;
        col_truncate(t, root, at);
        nulls++;
    }
    return nulls ? put_null_rows(t, nulls) : KC_OK;
}

int kc_columns_decode(kc_columns *t, const kc_rows *rows, size_t n, int32_t *status,
                      int64_t *err_off)
{
    kc_row_info out;
    memset(&out, 0, sizeof out);
    out.status = status;
    out.err_off = err_off;
    return kc_columns_decode_rows(t, rows, n, &out);
}

/* ------------------------------------------------------------------------- */
/* union trees: one tree for the rows of several programs (kc_columns.h) */

int kc_columns_init_nodes(kc_columns *t, const int32_t *spec, int32_t n_nodes)
{
    const int32_t *w = spec;
    int32_t r = KC_OK;
    memset(t, 0, sizeof *t);
    if (n_nodes <= 0 || n_nodes > KC_COLUMNS_MAX_NODES)
        return KC_E_PROGRAM;
    for (int32_t i = 0; i < n_nodes && r == KC_OK; i++, w += 4 + w[3]) {
        int32_t kind = w[0], type = w[1], nk = w[3], k;
        /* a node's kind and width follow from its type, as kc_columns_init builds them */
        int ok = type == KC_T_STRUCT ? kind == KC_N_STRUCT
               : type == KC_T_ARRAY ? kind == KC_N_LIST && nk == 1
               : type == KC_T_BOOL ? kind == KC_N_BOOL
               : type >= KC_T_STRING && type <= KC_T_RECORDS ? kind == KC_N_VAR
               : type >= KC_T_INT8 && type <= KC_T_UUID && kind == KC_N_FIXED;
        if (!ok || nk < 0 || nk > KC_COLUMNS_MAX_NODES || (kind != KC_N_STRUCT && kind != KC_N_LIST && nk)) {
            r = KC_E_PROGRAM;
            break;
        }
        if ((k = new_node(t, kind, type, kind == KC_N_FIXED ? FIXED_WIDTH[type] : 0)) < 0
            || (nk && (k = new_kids(t, i, nk)) < 0)) {
            r = -k;
            break;
        }
        for (int32_t q = 0; q < nk; q++) {
            /* children come after their parent (pre-order), so the tree has no cycle */
            if (w[4 + q] <= i || w[4 + q] >= n_nodes) {
                r = KC_E_PROGRAM;
                break;
            }
            t->kids[t->nodes[i].first_kid + q] = w[4 + q];
        }
    }
    if (r == KC_OK && !(t->row_nodes = (int32_t *)malloc((size_t)t->n_nodes * sizeof(int32_t))))
        r = KC_E_NOMEM;
    if (r == KC_OK && t->nodes[0].kind != KC_N_STRUCT)
        r = KC_E_PROGRAM;
    if (r != KC_OK) {
        kc_columns_free(t);
        return r;
    }
    list_row_nodes(t, 0);
    return KC_OK;
}

int kc_columns_clone(kc_columns *dst, const kc_columns *src)
{
    size_t nb = (size_t)src->n_nodes * sizeof(kc_col), kb = (size_t)src->n_kids * sizeof(int32_t);
    memset(dst, 0, sizeof *dst);
    dst->nodes = (kc_col *)malloc(nb ? nb : 1);
    dst->kids = (int32_t *)malloc(kb ? kb : 1);
    dst->row_nodes = (int32_t *)malloc((size_t)src->n_row_nodes * sizeof(int32_t) + 1);
    if (!dst->nodes || !dst->kids || !dst->row_nodes) {
        free(dst->nodes);
        free(dst->kids);
        free(dst->row_nodes);
        memset(dst, 0, sizeof *dst);
        return KC_E_NOMEM;
    }
    memcpy(dst->nodes, src->nodes, nb);
    memcpy(dst->kids, src->kids, kb);
    /* the row nodes that keep values: what a null row appends to (skips are fixed now) */
    for (int32_t j = 0; j < src->n_row_nodes; j++)
        if (!src->nodes[src->row_nodes[j]].skip)
            dst->row_nodes[dst->n_row_nodes++] = src->row_nodes[j];
    for (int32_t i = 0; i < src->n_nodes; i++) {   /* the structure and defaults, no values */
        kc_col *c = &dst->nodes[i];
        c->len = c->cap = c->data_len = c->data_cap = 0;
        c->validity = c->values = c->data = NULL;
        c->offsets = NULL;
    }
    dst->n_nodes = dst->cap_nodes = src->n_nodes;
    dst->n_kids = dst->cap_kids = src->n_kids;
    dst->code = src->code;
    return KC_OK;
}

int kc_columns_reserve_rows(kc_columns *t, size_t n)
{
    return reserve_rows(t, &t->nodes[0], n);
}

int kc_columns_put_nulls(kc_columns *t, size_t k)
{
    return k ? put_null_rows(t, k) : KC_OK;
}

void kc_columns_truncate(kc_columns *t, size_t n)
{
    col_truncate(t, &t->nodes[0], n);
}

int kc_columns_decode_one(kc_columns *t, const int32_t *code, const int32_t *map,
                          const uint8_t *p, size_t n, size_t skip, int64_t *err_off)
{
    size_t at = t->nodes[0].len;
    uint32_t tagged;
    int rc = decode_row(t, code, map, p, n, skip, err_off, &tagged);
    if (rc != KC_OK)
        col_truncate(t, &t->nodes[0], at);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* flat programs (kc_columns.h): one row's top-level scalars and strings as a list of
 * steps, run with the read position in a register and no per-field type dispatch */

enum {
    FL_BOOL = 1, FL_I8, FL_I16, FL_I32, FL_I64, FL_UUID,   /* a fixed-width field into a column */
    FL_STR, FL_CSTR, FL_BYTES, FL_CBYTES,       /* int16 / compact length + UTF-8; int32 / compact
                                                   length (bytes, records): into a column */
    FL_STR_CHECK, FL_CSTR_CHECK, FL_BYTES_CHECK, FL_CBYTES_CHECK,  /* the same, read and
                                                   checked, not kept */
    FL_END          /* the tag section (`tags`): only an empty one here; no trailing bytes */
};

typedef struct {
    uint8_t op;
    uint8_t nullable;   /* KC_F_NULLABLE of a length-prefixed field                  */
    uint8_t tags;       /* FL_END: the message is flexible                           */
    uint32_t pre;       /* bytes of fixed-width fields nothing keeps, skipped first   */
    uint32_t need;      /* the bytes the step needs left: pre + a fixed field's width */
    size_t off;         /* the column: its byte offset in the tree's nodes            */
} kc_flat_op;

/* what the row appends after its fields, as cd_struct does: an absent tagged field's
 * default, a null for a field of other versions, an empty list of unknown tags */
typedef struct {
    int32_t node;
    int32_t what;       /* 1 default, 0 null, -1 empty list */
} kc_flat_fill;

struct kc_flat {
    const int32_t *code, *map;
    int32_t n_ops, n_fill;
    kc_flat_op *ops;
    kc_flat_fill *fill;
};


int kc_flat_build(const kc_columns *t, const int32_t *code, const int32_t *map, kc_flat **out)
{
    static const uint8_t OPS[] = {0, FL_BOOL, FL_I8, FL_I16, FL_I16, FL_I32, FL_I32, FL_I64, FL_I64, FL_UUID};
    const int32_t *s = kc_prog_struct(code, 0), *mb = NULL, *fm = NULL;
    const kc_col *root = &t->nodes[0];
    const int32_t *kids = t->kids + root->first_kid;
    int32_t nf = KC_S_NF(s), nt = KC_S_NT(s), flex = KC_S_FLAGS(s) & 1, n = 0, nfill = 0;
    uint32_t pre = 0;
    size_t nmiss;
    kc_flat *f;
    *out = NULL;
    if (t->n_nodes < 1 || root->kind != KC_N_STRUCT || root->skip)
        return KC_OK;
    if (map) {
        if (map[0] < 0)
            return KC_OK;
        mb = map + map[0];
        fm = mb + 1 + mb[0];
    } else if (root->n_kids != nf + nt + flex) {
        return KC_OK;           /* another version's tree: its defaults are the generic path's */
    }
    if (nf > 0xffff)            /* (the skipped bytes before a step fit 32 bits) */
        return KC_OK;
    for (int32_t i = 0; i < nf; i++)
        if (KC_S_FIELD(s, i)[0] > KC_T_RECORDS)
            return KC_OK;       /* a struct or an array: not flat */
    nmiss = mb ? (size_t)mb[0] : 0;
    if (!(f = (kc_flat *)calloc(1, sizeof *f + ((size_t)nf + 1) * sizeof(kc_flat_op)
                                       + ((size_t)nt + 1 + nmiss) * sizeof(kc_flat_fill))))
        return KC_E_NOMEM;
    f->ops = (kc_flat_op *)(f + 1);
    f->fill = (kc_flat_fill *)(f->ops + nf + 1);
    f->code = code;
    f->map = map;
    for (int32_t i = 0; i < nf; i++) {
        const int32_t *fp = KC_S_FIELD(s, i);
        int32_t kid = kids[fm ? fm[i] : i], type = fp[0], flags = fp[1];
        int keep = !t->nodes[kid].skip;
        kc_flat_op *o = &f->ops[n];
        if (type <= KC_T_UUID && !keep) {
            pre += FIXED_WIDTH[type];       /* skipped with the next step's read */
            continue;
        }
        o->pre = o->need = pre;
        o->off = (size_t)kid * sizeof(kc_col);
        pre = 0;
        if (type <= KC_T_UUID) {
            o->op = OPS[type];
            o->need += FIXED_WIDTH[type];
        } else {
            int compact = flags & KC_F_COMPACT;
            o->op = (uint8_t)(type == KC_T_STRING ? (compact ? FL_CSTR : FL_STR) : (compact ? FL_CBYTES : FL_BYTES));
            if (!keep)
                o->op = (uint8_t)(o->op + (FL_STR_CHECK - FL_STR));
            o->nullable = (uint8_t)(flags & KC_F_NULLABLE);
        }
        n++;
    }
    f->ops[n].op = FL_END;
    f->ops[n].pre = f->ops[n].need = pre;
    f->ops[n].tags = (uint8_t)flex;
    n++;
    /* then what cd_struct appends after the fields, in its order */
    if (flex) {
        int32_t u = kids[fm ? fm[nf + nt] : nf + nt];
        for (int32_t q = 0; q < nt; q++) {
            int32_t kid = kids[fm ? fm[nf + q] : nf + q];
            if (!t->nodes[kid].skip) {
                f->fill[nfill].node = kid;
                f->fill[nfill++].what = 1;
            }
        }
        if (!t->nodes[u].skip) {
            f->fill[nfill].node = u;
            f->fill[nfill++].what = -1;
        }
    }
    for (int32_t q = 1; mb && q <= mb[0]; q++) {
        int32_t slot = mb[q], kid = kids[slot >= 0 ? slot : -1 - slot];
        if (!t->nodes[kid].skip) {
            f->fill[nfill].node = kid;
            f->fill[nfill++].what = slot >= 0 ? 0 : -1;
        }
    }
    f->n_ops = n;
    f->n_fill = nfill;
    *out = f;
    return KC_OK;
}

void kc_flat_free(kc_flat *f)
{
    free(f);
}

/* A length-prefixed value's bytes, checked as cd_bytes checks them (`op` a constant:
 * each caller's copy keeps only its kind's checks): the bytes, or NULL with *len 0 for
 * a null, or NULL with *len 1 where the generic path decides. */
static KC_ALWAYS_INLINE const uint8_t *fl_var(const uint8_t **qp, const uint8_t *e, int op, int nullable,
                                              size_t *len)
{
    const uint8_t *q = *qp;
    int64_t n;
    *len = 1;
    if (op == FL_STR || op == FL_BYTES) {
        size_t w = op == FL_STR ? 2 : 4;
        if (KC_UNLIKELY((size_t)(e - q) < w))
            return NULL;
        n = op == FL_STR ? (int64_t)(int16_t)rd16(q) : (int64_t)(int32_t)rd32(q);
        q += w;
    } else {
        uint32_t u;
        if (KC_LIKELY(q < e && *q < 0x80)) {
            u = *q++;
        } else {
            int r = kc_read_uvarint(q, (size_t)(e - q), &u);
            if (r < 0)
                return NULL;
            q += r;
        }
        n = (int64_t)u - 1;
    }
    if (n < 0) {
        if (!nullable)
            return NULL;
        *qp = q;
        *len = 0;
        return NULL;
    }
    if (KC_UNLIKELY((uint64_t)n > (size_t)(e - q)) || (op == FL_CSTR && KC_UNLIKELY(n > 0x7fff)))
        return NULL;
    if ((op == FL_STR || op == FL_CSTR) && KC_UNLIKELY(utf8_check(q, (size_t)n) != (size_t)n))
        return NULL;
    *qp = q + n;
    *len = (size_t)n;
    return q;
}

/* Steps dispatch through a table of label addresses where the compiler has them (GNU C:
 * one indirect jump per step, at the end of the previous one), else through a switch. */
#if defined(__GNUC__) && !defined(KC_FLAT_SWITCH)
#define FL_THREADED 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"     /* labels as values: GNU C, used knowingly */
#endif

/* The steps on the message q[0 .. e - q); anything but a plain row (or an allocation
 * failure) rolls back what the row appended and leaves it to the generic path. */
int kc_flat_try(kc_columns *t, const kc_flat *f, const uint8_t *p, size_t n, size_t skip)
{
    char *const base = (char *)t->nodes;
    const size_t at = t->nodes[0].len;
    const kc_flat_op *o = f->ops;
    const uint8_t *q, *e;
    kc_col *c;
    if (KC_UNLIKELY(n < skip || n > 0xfffffffeu))
        return 1;
    q = p + skip;
    e = p + n;
#ifdef FL_THREADED
    static const void *const step[] = {
        &&op_FL_END, &&op_FL_BOOL, &&op_FL_I8, &&op_FL_I16, &&op_FL_I32, &&op_FL_I64, &&op_FL_UUID,
        &&op_FL_STR, &&op_FL_CSTR, &&op_FL_BYTES, &&op_FL_CBYTES, &&op_FL_STR_CHECK, &&op_FL_CSTR_CHECK,
        &&op_FL_BYTES_CHECK, &&op_FL_CBYTES_CHECK, &&op_FL_END};
#define FL_STEP(OP) op_##OP:
#define FL_GO() do { c = (kc_col *)(base + o->off); goto *step[o->op]; } while (0)
#define FL_NEXT() do { o++; FL_GO(); } while (0)
    FL_GO();
    {
#else
#define FL_STEP(OP) case OP:
#define FL_NEXT() do { o++; goto next; } while (0)
next:
    c = (kc_col *)(base + o->off);
    switch (o->op) {
#endif
/* the value at q + pre into c's next slot (valid: a bitmap's bits from len on are set) */
#define FL_FIXED(OP, W, STORE) \
    FL_STEP(OP) \
        if (KC_UNLIKELY((size_t)(e - q) < o->need)) \
            goto other; \
        if (KC_UNLIKELY(c->len >= c->cap) && grow(c, c->len + 1) != KC_OK) \
            goto other; \
        q += o->pre; \
        STORE; \
        c->len++; \
        q += (W); \
        FL_NEXT();
    FL_FIXED(FL_BOOL, 1, put_bit(c->values, c->len, q[0] != 0))
    FL_FIXED(FL_I8, 1, c->values[c->len] = q[0])
    FL_FIXED(FL_I16, 2, { uint16_t x = rd16(q); memcpy(c->values + 2 * c->len, &x, 2); })
    FL_FIXED(FL_I32, 4, { uint32_t x = rd32(q); memcpy(c->values + 4 * c->len, &x, 4); })
    FL_FIXED(FL_I64, 8, { uint64_t x = rd64(q); memcpy(c->values + 8 * c->len, &x, 8); })
    FL_FIXED(FL_UUID, 16, memcpy(c->values + 16 * c->len, q, 16))
#undef FL_FIXED
#define FL_VAR(OP, KIND, KEEP) \
    FL_STEP(OP) { \
        size_t len; \
        const uint8_t *v; \
        if (KC_UNLIKELY((size_t)(e - q) < o->need)) \
            goto other; \
        q += o->pre; \
        v = fl_var(&q, e, KIND, o->nullable, &len); \
        if (KC_UNLIKELY(!v && len)) \
            goto other; \
        if (KEEP && put_var_kept(c, v, len) != KC_OK) \
            goto other; \
        FL_NEXT(); \
    }
    FL_VAR(FL_STR, FL_STR, 1)
    FL_VAR(FL_CSTR, FL_CSTR, 1)
    FL_VAR(FL_BYTES, FL_BYTES, 1)
    FL_VAR(FL_CBYTES, FL_CBYTES, 1)
    FL_VAR(FL_STR_CHECK, FL_STR, 0)
    FL_VAR(FL_CSTR_CHECK, FL_CSTR, 0)
    FL_VAR(FL_BYTES_CHECK, FL_BYTES, 0)
    FL_VAR(FL_CBYTES_CHECK, FL_CBYTES, 0)
#undef FL_VAR
#ifndef FL_THREADED
    default:
#endif
    FL_STEP(FL_END)
        if (KC_UNLIKELY((size_t)(e - q) < o->need))
            goto other;
        q += o->pre;
        if (o->tags) {
            if (KC_UNLIKELY(q == e || *q != 0))
                goto other;        /* tagged fields present: the generic path */
            q++;
        }
        if (KC_UNLIKELY(q != e))
            goto other;
        for (int32_t i = 0; i < f->n_fill; i++) {
            kc_col *k = &t->nodes[f->fill[i].node];
            if ((f->fill[i].what >= 0 ? put_absent(t, k, f->fill[i].what) : put_list(k, KID(t, k, 0)->len, 1))
                != KC_OK)
                goto other;
        }
        if (KC_LIKELY(put_struct(&t->nodes[0], 1) == KC_OK))
            return KC_OK;
    }
#undef FL_STEP
#undef FL_NEXT
#undef FL_GO
other:      /* anything but a plain row (or an allocation failure): undone, for the generic path */
    col_truncate(t, &t->nodes[0], at);
    return 1;
}
#ifdef FL_THREADED
#pragma GCC diagnostic pop
#endif

int kc_columns_decode_flat(kc_columns *t, const kc_flat *f, const uint8_t *p, size_t n, size_t skip,
                           int64_t *err_off)
{
    if (KC_LIKELY(kc_flat_try(t, f, p, n, skip) == KC_OK)) {
        *err_off = 0;
        return KC_OK;
    }
    return kc_columns_decode_one(t, f->code, f->map, p, n, skip, err_off);
}

/* field maps: every field lands on a column of its type, every kid is filled once */

static int map_value(const kc_columns *t, int32_t node, const int32_t *code, int type, int arg,
                     const int32_t *map, size_t map_len, int depth);

static int map_struct(const kc_columns *t, int32_t node, const int32_t *code, int sidx,
                      const int32_t *map, size_t map_len, int depth)
{
    const kc_col *c = &t->nodes[node];
    const int32_t *s, *b, *fm;
    int32_t nf, nt, flex, nm, at, nk = c->n_kids;
    uint8_t *seen;
    int ok = 1;
    if (depth > KC_MAX_DEPTH || c->kind != KC_N_STRUCT)
        return 0;
    at = map[node];
    s = kc_prog_struct(code, sidx);
    nf = KC_S_NF(s);
    nt = KC_S_NT(s);
    flex = KC_S_FLAGS(s) & 1;
    if (at < 0 || (size_t)at >= map_len)
        return 0;
    b = map + at;
    nm = b[0];
    if (nm < 0 || nm > nk || (size_t)at + 1 + (size_t)nm + (size_t)(nf + nt + flex) > map_len
        || nm + nf + nt + flex > nk)
        return 0;
    fm = b + 1 + nm;
    if (!(seen = (uint8_t *)calloc((size_t)nk + 1, 1)))
        return 0;
    for (int32_t q = 0; q < nm && ok; q++) {
        int32_t slot = b[1 + q] >= 0 ? b[1 + q] : -1 - b[1 + q];
        ok = slot < nk && !seen[slot]
             && (b[1 + q] >= 0 || t->nodes[t->kids[c->first_kid + slot]].kind == KC_N_LIST);
        if (ok)
            seen[slot] = 1;
    }
    for (int32_t i = 0; i < nf + nt + flex && ok; i++) {
        int32_t slot = fm[i];
        int32_t kid;
        ok = slot >= 0 && slot < nk && !seen[slot];
        if (!ok)
            break;
        seen[slot] = 1;
        kid = t->kids[c->first_kid + slot];
        if (i < nf)
            ok = map_value(t, kid, code, KC_S_FIELD(s, i)[0], KC_S_FIELD(s, i)[2], map, map_len, depth);
        else if (i < nf + nt)
            ok = map_value(t, kid, code, KC_S_TAGGED(s, i - nf)[1], KC_S_TAGGED(s, i - nf)[3], map, map_len, depth);
        else {          /* unknown tags: list<struct<int32, bytes>> */
            const kc_col *l = &t->nodes[kid], *e;
            ok = l->kind == KC_N_LIST && (e = &t->nodes[t->kids[l->first_kid]])->kind == KC_N_STRUCT
                 && e->n_kids == 2 && t->nodes[t->kids[e->first_kid]].type == KC_T_INT32
                 && t->nodes[t->kids[e->first_kid]].kind == KC_N_FIXED
                 && t->nodes[t->kids[e->first_kid + 1]].kind == KC_N_VAR;
        }
    }
    /* a kid neither filled nor listed must be one that keeps nothing */
    for (int32_t q = 0; q < nk && ok; q++)
        ok = seen[q] || t->nodes[t->kids[c->first_kid + q]].skip;
    free(seen);
    return ok;
}

static int map_value(const kc_columns *t, int32_t node, const int32_t *code, int type, int arg,
                     const int32_t *map, size_t map_len, int depth)
{
    const kc_col *c = &t->nodes[node];
    if (type == KC_T_STRUCT)
        return map_struct(t, node, code, arg, map, map_len, depth + 1);
    if (c->type != type)
        return 0;
    if (type == KC_T_ARRAY)
        return map_value(t, t->kids[c->first_kid], code, arg & 0xff, arg >> 8, map, map_len, depth);
    return 1;
}

int kc_columns_map_check(const kc_columns *t, const int32_t *code, const int32_t *map, size_t map_len)
{
    return t->n_nodes > 0 && map_len >= (size_t)t->n_nodes && map_struct(t, 0, code, 0, map, map_len, 0);
}
