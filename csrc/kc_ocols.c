/*
 * __consumer_offsets batches in one call (kc_ocols.h): the per-row dispatch onto the
 * engine's programs and union trees (kc_columns.c), the driver's own columns, and the
 * export of the result as one Arrow C data interface struct array.
 */
#include "kc_ocols.h"
#include "kc_wire.h"

#include <stdlib.h>
#include <string.h>

/* what a zero-length buffer points at (Arrow wants offsets[0] even for no rows) */
static const int64_t ZERO[2] = {0, 0};

typedef struct {
    kc_columns *trees;
    int32_t n_trees;
    size_t n, m;                /* rows; consumer members decoded */
    int16_t *rtype, *vver;
    uint8_t *good, *has_value, *tomb, *zeros;   /* bitmaps (zeros: max(n, m) bits) */
    int32_t *zero_offs;         /* max(n, m) + 1 zeros */
    uint8_t *raw_bits, *raw_data;
    int32_t *raw_offs;
    size_t raw_len, raw_cap;
    int32_t *m_offs;
    uint8_t *m_bits;
    int16_t *sub_ver, *asg_ver;
    size_t m_cap;
    void **extra;               /* converted buffers */
    size_t n_extra;
    struct ArrowArray *arrays;
    struct ArrowArray **kidp;
    const void **bufs;
} kc_oc_holder;

static void holder_free(kc_oc_holder *h)
{
    if (!h)
        return;
    if (h->trees)
        for (int32_t i = 0; i < h->n_trees; i++)
            kc_columns_free(&h->trees[i]);
    free(h->trees);
    free(h->rtype);
    free(h->vver);
    free(h->good);
    free(h->has_value);
    free(h->tomb);
    free(h->zeros);
    free(h->zero_offs);
    free(h->raw_bits);
    free(h->raw_data);
    free(h->raw_offs);
    free(h->m_offs);
    free(h->m_bits);
    free(h->sub_ver);
    free(h->asg_ver);
    for (size_t i = 0; i < h->n_extra; i++)
        free(h->extra[i]);
    free(h->extra);
    free(h->arrays);
    free(h->kidp);
    free(h->bufs);
    free(h);
}

/* The root owns everything; children only mark themselves released. */
static void release_root(struct ArrowArray *a)
{
    kc_oc_holder *h = (kc_oc_holder *)a->private_data;
    a->release = NULL;
    holder_free(h);
}

static void release_child(struct ArrowArray *a)
{
    a->release = NULL;
}

static inline void set_bit(uint8_t *bits, size_t i)
{
    bits[i >> 3] = (uint8_t)(bits[i >> 3] | (1u << (i & 7)));
}

static inline int bit(const uint8_t *bits, size_t i)
{
    return !bits || ((bits[i >> 3] >> (i & 7)) & 1);
}

/* tree t holds rows 0 .. r - 1 */
static inline int fill_to(kc_columns *t, size_t r)
{
    size_t have = t->nodes[0].len;
    return have < r ? kc_columns_put_nulls(t, r - have) : KC_OK;
}

static int grow_members(kc_oc_holder *h, size_t need)
{
    size_t cap = h->m_cap ? h->m_cap : 64;
    int16_t *s, *a;
    if (need <= h->m_cap)
        return KC_OK;
    while (cap < need)
        cap *= 2;
    if (!(s = (int16_t *)realloc(h->sub_ver, cap * sizeof *s)))
        return KC_E_NOMEM;
    h->sub_ver = s;
    if (!(a = (int16_t *)realloc(h->asg_ver, cap * sizeof *a)))
        return KC_E_NOMEM;
    h->asg_ver = a;
    h->m_cap = cap;
    return KC_OK;
}

/* One embedded consumer-protocol payload (bytes j of column c) into tree t: KC_OK,
 * 1 (the exact path decides: null, short, a version without a program, an error,
 * trailing bytes), or a fatal code. */
static int embedded(const kc_oc_plan *p, const kc_col *c, size_t j, const kc_oc_prog *progs,
                    kc_columns *t, int16_t *ver)
{
    const uint8_t *b;
    size_t len;
    int16_t v;
    int64_t eo;
    int rc;
    if (!bit(c->validity, j))
        return 1;
    len = (size_t)(c->offsets[j + 1] - c->offsets[j]);
    if (len < 2)
        return 1;
    b = c->data + c->offsets[j];
    v = (int16_t)rd16(b);
    if (v < 0 || v >= p->n_protocol || !progs[v].code)
        return 1;
    rc = kc_columns_decode_one(t, progs[v].code, progs[v].map, b, len, 2, &eo);
    if (rc == KC_E_NOMEM || rc == KC_E_TOO_BIG)
        return -rc;
    if (rc != KC_OK)
        return 1;
    *ver = v;
    return KC_OK;
}

/* The members of row r of the members type's tree vt: for protocol type "consumer",
 * each member's subscription and assignment decoded.  KC_OK, 1 (slow row, rolled
 * back), or -code. */
static int members(const kc_oc_plan *p, kc_oc_holder *h, kc_columns *vt, size_t r)
{
    const kc_col *pc = &vt->nodes[p->m_protocol], *lc = &vt->nodes[p->m_list];
    const kc_col *sc = &vt->nodes[p->m_sub], *ac = &vt->nodes[p->m_asg];
    kc_columns *st = &h->trees[p->n_trees - 2], *at = &h->trees[p->n_trees - 1];
    size_t m0 = h->m, j0, j1;
    int rc;
    if (!bit(pc->validity, r) || pc->offsets[r + 1] - pc->offsets[r] != 8
        || memcmp(pc->data + pc->offsets[r], "consumer", 8) != 0 || !bit(lc->validity, r))
        return KC_OK;           /* other protocol types: members stay undecoded (null) */
    j0 = (size_t)lc->offsets[r];
    j1 = (size_t)lc->offsets[r + 1];
    if ((rc = grow_members(h, m0 + (j1 - j0))) != KC_OK)
        return -rc;
    for (size_t j = j0; j < j1; j++) {
        size_t k = m0 + (j - j0);
        rc = embedded(p, sc, j, p->subscription, st, &h->sub_ver[k]);
        if (rc == KC_OK)
            rc = embedded(p, ac, j, p->assignment, at, &h->asg_ver[k]);
        if (rc != KC_OK) {
            kc_columns_truncate(st, m0);
            kc_columns_truncate(at, m0);
            return rc;
        }
    }
    h->m = m0 + (j1 - j0);
    set_bit(h->m_bits, r);
    return KC_OK;
}

static int put_raw(kc_oc_holder *h, size_t r, const uint8_t *b, size_t len)
{
    if (h->raw_cap - h->raw_len < len) {
        size_t cap = h->raw_cap ? h->raw_cap : 4096;
        uint8_t *d;
        while (cap - h->raw_len < len)
            cap *= 2;
        if (!(d = (uint8_t *)realloc(h->raw_data, cap)))
            return KC_E_NOMEM;
        h->raw_data = d;
        h->raw_cap = cap;
    }
    if (h->raw_len + len > 0x7fffffff)
        return KC_E_TOO_BIG;
    memcpy(h->raw_data + h->raw_len, b, len);
    h->raw_len += len;
    set_bit(h->raw_bits, r);
    return KC_OK;
}

/* One key or value (its int16 prefix skipped) into tree t. */
static inline int decode_prog(kc_columns *t, const kc_oc_prog *pr, const uint8_t *b, size_t len, int64_t *eo)
{
    if (pr->flat && KC_LIKELY(kc_flat_try(t, pr->flat, b, len, 2) == KC_OK))
        return KC_OK;           /* (*eo is read on errors only) */
    return kc_columns_decode_one(t, pr->code, pr->map, b, len, 2, eo);
}

/* Row r: KC_OC_* (or -code, fatal). */
static int decode_row(const kc_oc_plan *p, kc_oc_holder *h, size_t r, const uint8_t *kp, size_t kl,
                      const uint8_t *vp, size_t vl)
{
    int32_t rt, vv = -1;
    int vnull = !vp && !vl;
    const kc_oc_prog *vprog = NULL;
    kc_columns *kt = &h->trees[0], *vt = NULL;
    int64_t eo;
    int rc;
    if (!kp || kl < 2)
        return KC_OC_SLOW;
    rt = (int16_t)rd16(kp);
    if (rt <= 0 || rt >= p->n_types || !p->keys[rt].code)
        return KC_OC_SLOW;      /* type 0 (0.8.2; its values switch schema), unknown types */
    if (!vnull) {
        if (!vp || vl < 2)
            return KC_OC_SLOW;
        vv = (int16_t)rd16(vp);
        if (vv < 0 || vv >= p->n_versions || !p->values[rt * p->n_versions + vv].code)
            return KC_OC_SLOW;
        vprog = &p->values[rt * p->n_versions + vv];
        vt = &h->trees[p->value_tree[rt]];
    }
    if ((rc = fill_to(kt, r)) != KC_OK)
        return -rc;
    rc = decode_prog(kt, &p->keys[rt], kp, kl, &eo);
    if (rc == KC_E_NOMEM || rc == KC_E_TOO_BIG)
        return -rc;
    if (rc != KC_OK)
        return KC_OC_SLOW;
    if (vt) {
        if ((rc = fill_to(vt, r)) != KC_OK)
            return -rc;
        rc = decode_prog(vt, vprog, vp, vl, &eo);
        if (rc == KC_OK && rt == p->members_type)
            rc = members(p, h, vt, r);
        if (rc != KC_OK) {
            kc_columns_truncate(vt, r);
            kc_columns_truncate(kt, r);
            if (rc < 0 || rc == KC_E_NOMEM || rc == KC_E_TOO_BIG)
                return rc < 0 ? rc : -rc;
            return KC_OC_SLOW;
        }
    }
    h->rtype[r] = (int16_t)rt;
    set_bit(h->good, r);
    if (vnull) {
        set_bit(h->tomb, r);
    } else {
        h->vver[r] = (int16_t)vv;
        set_bit(h->has_value, r);
        if (p->raw[rt] && (rc = put_raw(h, r, vp, vl)) != KC_OK)
            return -rc;
    }
    return KC_OC_OK;
}

int kc_oc_plan_check(const kc_oc_plan *p)
{
    const int32_t *w = p->export_prog;
    if (p->n_types < 1 || p->n_types > 0x8000 || p->n_versions < 1 || p->n_versions > 0x8000
        || p->n_trees < 1 || !p->trees || !p->keys || !p->values || !p->value_tree || !p->raw
        || p->n_export < 1 || !w)
        return KC_E_PROGRAM;
    for (int32_t rt = 0; rt < p->n_types; rt++)
        if (p->keys[rt].code && (p->value_tree[rt] < 1 || p->value_tree[rt] >= p->n_trees))
            return KC_E_PROGRAM;
    if (p->members_type >= 0) {
        const kc_columns *t;
        if (p->members_type >= p->n_types || p->n_trees < 4 || p->n_protocol < 1 || p->n_protocol > 0x7fff
            || !p->subscription || !p->assignment)
            return KC_E_PROGRAM;
        t = &p->trees[p->value_tree[p->members_type]];
        if (p->m_protocol <= 0 || p->m_protocol >= t->n_nodes || p->m_list <= 0 || p->m_list >= t->n_nodes
            || p->m_sub <= 0 || p->m_sub >= t->n_nodes || p->m_asg <= 0 || p->m_asg >= t->n_nodes
            || t->nodes[p->m_protocol].kind != KC_N_VAR || t->nodes[p->m_protocol].skip
            || t->nodes[p->m_list].kind != KC_N_LIST || t->nodes[p->m_list].skip
            || t->nodes[p->m_sub].kind != KC_N_VAR || t->nodes[p->m_sub].skip
            || t->nodes[p->m_asg].kind != KC_N_VAR || t->nodes[p->m_asg].skip
            || p->value_tree[p->members_type] >= p->n_trees - 2)
            return KC_E_PROGRAM;
    }
    for (int32_t e = 0; e < p->n_export; e++, w += 5) {
        if (w[4] < 0 || w[4] >= p->n_export)
            return KC_E_PROGRAM;
        switch (w[0]) {
        case KC_OC_TREE:
            if (w[1] < 0 || w[1] >= p->n_trees || w[2] < 0 || w[2] >= p->trees[w[1]].n_nodes
                || p->trees[w[1]].nodes[w[2]].skip || w[3] < 0 || w[3] > KC_OC_CONV_BINARY)
                return KC_E_PROGRAM;
            break;
        case KC_OC_STRUCT:
            if (w[1] < 0 || w[1] > 1 || w[2] >= p->n_trees)
                return KC_E_PROGRAM;
            break;
        case KC_OC_COL:
            if (w[1] < KC_OC_C_RECORD_TYPE || w[1] > KC_OC_C_NULL_STRING_M
                || (w[1] >= KC_OC_C_SUB_VERSION && p->members_type < 0))
                return KC_E_PROGRAM;
            break;
        default:
            return KC_E_PROGRAM;
        }
    }
    return KC_OK;
}

/* ------------------------------------------------------------------------- export */

static void *extra(kc_oc_holder *h, size_t n)
{
    void *b = malloc(n ? n : 1);
    if (b)
        h->extra[h->n_extra++] = b;
    return b;
}

/* An unsigned column (uint16, uint32) as Spark's next wider signed type. */
static void *widen(kc_oc_holder *h, const kc_col *c)
{
    size_t w = (size_t)c->width;
    uint8_t *o = (uint8_t *)extra(h, c->len * 2 * w);
    if (!o)
        return NULL;
    for (size_t i = 0; i < c->len; i++) {
        uint32_t x = 0;
        uint64_t y;
        memcpy(&x, c->values + w * i, w);           /* little-endian hosts, as Arrow's */
        y = x;
        if (w == 2) {
            uint32_t z = x;
            memcpy(o + 4 * i, &z, 4);
        } else {
            memcpy(o + 8 * i, &y, 8);
        }
    }
    return o;
}

/* Export entry *at (and its subtree) into h->arrays; *kids_used: pointers handed out. */
static int export_entry(const kc_oc_plan *p, kc_oc_holder *h, int32_t *at, int32_t *kids_used)
{
    int32_t e = (*at)++;
    const int32_t *w = p->export_prog + 5 * e;
    struct ArrowArray *a = &h->arrays[e];
    const void **b = h->bufs + 3 * e;
    int rc;
    memset(a, 0, sizeof *a);
    a->buffers = b;
    a->private_data = h;
    a->release = release_child;
    a->n_children = w[4];
    switch (w[0]) {
    case KC_OC_TREE: {
        const kc_col *c = &h->trees[w[1]].nodes[w[2]];
        a->length = (int64_t)c->len;
        b[0] = c->validity;
        switch (c->kind) {
        case KC_N_STRUCT:
            a->n_buffers = 1;
            break;
        case KC_N_LIST:
            a->n_buffers = 2;
            b[1] = c->offsets ? (const void *)c->offsets : ZERO;
            break;
        case KC_N_VAR:
            a->n_buffers = 3;
            b[1] = c->offsets ? (const void *)c->offsets : ZERO;
            b[2] = c->data ? (const void *)c->data : ZERO;
            break;
        case KC_N_BOOL:
            a->n_buffers = 2;
            b[1] = c->values ? (const void *)c->values : ZERO;
            break;
        default:
            a->n_buffers = 2;
            b[1] = c->values ? (const void *)c->values : ZERO;
            if ((w[3] == KC_OC_CONV_I32 && c->width == 2) || (w[3] == KC_OC_CONV_I64 && c->width == 4)) {
                if (!(b[1] = widen(h, c)))
                    return KC_E_NOMEM;
            } else if (w[3] == KC_OC_CONV_BINARY && c->width == 16) {  /* uuid -> binary */
                int32_t *o = (int32_t *)extra(h, (c->len + 1) * 4);
                if (!o)
                    return KC_E_NOMEM;
                if (c->len > 0x7fffffff / 16)
                    return KC_E_TOO_BIG;
                for (size_t i = 0; i <= c->len; i++)
                    o[i] = (int32_t)(16 * i);
                a->n_buffers = 3;
                b[2] = b[1];
                b[1] = o;
            } else if (w[3] != KC_OC_CONV_NONE) {
                return KC_E_PROGRAM;
            }
        }
        break;
    }
    case KC_OC_STRUCT:
        a->length = (int64_t)(w[1] ? h->m : h->n);
        a->n_buffers = 1;
        b[0] = w[2] >= 0 ? h->trees[w[2]].nodes[0].validity : NULL;
        if (w[2] >= 0 && h->trees[w[2]].nodes[0].len != h->n)
            return KC_E_INTERNAL;
        break;
    default: {
        size_t n = h->n, m = h->m;
        a->n_buffers = 2;
        switch (w[1]) {
        case KC_OC_C_RECORD_TYPE: a->length = (int64_t)n; b[0] = h->good; b[1] = h->rtype; break;
        case KC_OC_C_VALUE_VERSION: a->length = (int64_t)n; b[0] = h->has_value; b[1] = h->vver; break;
        case KC_OC_C_TOMBSTONE: a->length = (int64_t)n; b[0] = h->good; b[1] = h->tomb; break;
        case KC_OC_C_FALSE: a->length = (int64_t)n; b[0] = h->good; b[1] = h->zeros; break;
        case KC_OC_C_RAW_VALUE:
            a->length = (int64_t)n;
            a->n_buffers = 3;
            b[0] = h->raw_bits;
            b[1] = h->raw_offs;
            b[2] = h->raw_data ? (const void *)h->raw_data : ZERO;
            break;
        case KC_OC_C_NULL_STRING: case KC_OC_C_NULL_STRING_M:
            a->length = (int64_t)(w[1] == KC_OC_C_NULL_STRING ? n : m);
            a->n_buffers = 3;
            b[0] = h->zeros;
            b[1] = h->zero_offs;
            b[2] = ZERO;
            break;
        case KC_OC_C_EMPTY_BINARY:
            a->length = (int64_t)m;
            a->n_buffers = 3;
            b[0] = NULL;
            b[1] = h->zero_offs;
            b[2] = ZERO;
            break;
        case KC_OC_C_MEMBERS: a->length = (int64_t)n; b[0] = h->m_bits; b[1] = h->m_offs; break;
        case KC_OC_C_SUB_VERSION: a->length = (int64_t)m; b[0] = NULL; b[1] = h->sub_ver ? (const void *)h->sub_ver : ZERO; break;
        case KC_OC_C_ASG_VERSION: a->length = (int64_t)m; b[0] = NULL; b[1] = h->asg_ver ? (const void *)h->asg_ver : ZERO; break;
        default: return KC_E_PROGRAM;
        }
    }
    }
    a->null_count = b[0] ? -1 : 0;
    if (a->n_children) {
        a->children = h->kidp + *kids_used;
        *kids_used += (int32_t)a->n_children;
        for (int64_t q = 0; q < a->n_children; q++) {
            int32_t ce = *at;
            if (ce >= p->n_export)
                return KC_E_PROGRAM;
            if ((rc = export_entry(p, h, at, kids_used)) != KC_OK)
                return rc;
            a->children[q] = &h->arrays[ce];
            /* a struct's fields hold one value per struct value */
            if ((w[0] == KC_OC_STRUCT || (w[0] == KC_OC_TREE && h->trees[w[1]].nodes[w[2]].kind == KC_N_STRUCT))
                && h->arrays[ce].length != a->length)
                return KC_E_INTERNAL;
        }
    }
    return KC_OK;
}

int kc_oc_decode(const kc_oc_plan *p, const kc_rows *key, const kc_rows *value,
                 size_t n, uint8_t *status, struct ArrowArray *out)
{
    kc_oc_holder *h = (kc_oc_holder *)calloc(1, sizeof *h);
    size_t nb = n / 8 + 1;
    int32_t at = 0, kids_used = 0;
    int rc = KC_OK;
    const int karr = kc_rows_is_array(key), varr = kc_rows_is_array(value);
    memset(out, 0, sizeof *out);
    if (!h)
        return KC_E_NOMEM;
    h->n = n;
    if (!(h->trees = (kc_columns *)calloc((size_t)p->n_trees, sizeof(kc_columns))))
        goto nomem;
    for (int32_t i = 0; i < p->n_trees; i++) {
        if ((rc = kc_columns_clone(&h->trees[i], &p->trees[i])) != KC_OK)
            goto fail;
        h->n_trees = i + 1;
    }
    h->rtype = (int16_t *)calloc(n + 1, 2);
    h->vver = (int16_t *)calloc(n + 1, 2);
    h->good = (uint8_t *)calloc(nb, 1);
    h->has_value = (uint8_t *)calloc(nb, 1);
    h->tomb = (uint8_t *)calloc(nb, 1);
    h->raw_bits = (uint8_t *)calloc(nb, 1);
    h->raw_offs = (int32_t *)calloc(n + 1, 4);
    h->m_offs = (int32_t *)calloc(n + 1, 4);
    h->m_bits = (uint8_t *)calloc(nb, 1);
    h->extra = (void **)calloc((size_t)p->n_export + 1, sizeof(void *));
    h->arrays = (struct ArrowArray *)calloc((size_t)p->n_export, sizeof(struct ArrowArray));
    h->kidp = (struct ArrowArray **)calloc((size_t)p->n_export, sizeof(struct ArrowArray *));
    h->bufs = (const void **)calloc((size_t)p->n_export * 3, sizeof(void *));
    if (!h->rtype || !h->vver || !h->good || !h->has_value || !h->tomb || !h->raw_bits || !h->raw_offs
        || !h->m_offs || !h->m_bits || !h->extra || !h->arrays || !h->kidp || !h->bufs)
        goto nomem;
    for (int32_t i = 0; i < p->n_trees; i++) {
        int per_member = p->members_type >= 0 && i >= p->n_trees - 2;
        if (!per_member && (rc = kc_columns_reserve_rows(&h->trees[i], n)) != KC_OK)
            goto fail;
    }
    for (size_t r = 0; r < n; r++) {
        size_t kl, vl;
        const uint8_t *kp = karr ? kc_rows_array_at(key, r, &kl) : kc_rows_at(key, r, &kl);
        const uint8_t *vp = varr ? kc_rows_array_at(value, r, &vl) : kc_rows_at(value, r, &vl);
        int st;
        if (!kp && !vp && !kl && !vl)
            st = KC_OC_NULL;    /* null in both: a null row, not an error */
        else
            st = decode_row(p, h, r, kp, kl, vp, vl);
        if (st < 0) {
            rc = -st;
            goto fail;
        }
        status[r] = (uint8_t)st;
        h->raw_offs[r + 1] = (int32_t)h->raw_len;
        h->m_offs[r + 1] = (int32_t)h->m;
        if (h->m > 0x7fffffff) {
            rc = KC_E_TOO_BIG;
            goto fail;
        }
    }
    for (int32_t i = 0; i < p->n_trees; i++) {
        int per_member = p->members_type >= 0 && i >= p->n_trees - 2;
        if (!per_member && (rc = fill_to(&h->trees[i], n)) != KC_OK)
            goto fail;
    }
    {
        size_t most = (n > h->m ? n : h->m) + 1;
        h->zeros = (uint8_t *)calloc(most / 8 + 1, 1);
        h->zero_offs = (int32_t *)calloc(most, 4);
        if (!h->zeros || !h->zero_offs)
            goto nomem;
    }
    if ((rc = export_entry(p, h, &at, &kids_used)) != KC_OK)
        goto fail;
    if (at != p->n_export) {
        rc = KC_E_PROGRAM;
        goto fail;
    }
    *out = h->arrays[0];
    out->release = release_root;
    h->arrays[0].release = NULL;
    return KC_OK;
nomem:
    rc = KC_E_NOMEM;
fail:
    holder_free(h);
    return rc;
}
