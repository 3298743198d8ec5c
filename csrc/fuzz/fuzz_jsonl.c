/*
 * Fuzz target for the JSON-lines writer (csrc/kc_jsonl.c), the kernel behind
 * kcodec/log/_jsonl.pyx.
 *
 * The input chooses columns (every type, with or without a `take` index and a validity
 * bitmap, offsets that may point anywhere), templates (literals and column references,
 * some out of range), the rows and their templates, and the output's size.  Every
 * buffer is allocated at its exact size, so ASan sees any read or write past it.
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB (build with ASan + UBSan);
 *   - the status is OK, SHORT (out of room) or INVALID; rows_done <= rows and
 *     out_len <= cap; row ends never decrease and never pass out_len;
 *   - SHORT only when the output is smaller than the text needs: with room for every
 *     row, a call that was SHORT completes (or finds the same bad input);
 *   - a number column's text is its value in decimal, a null is `null`.
 * Then a token stream for kc_json_write (every kind, some unknown, lengths that may be
 * negative, text at exact-size buffers, any nesting) and an output of any size:
 *   - OK exactly when kc_json_room says the tokens are good and fit; then out_len <= room;
 *   - an INT token on its own is its value in decimal; brackets come out as many as
 *     their tokens.
 *
 * Standalone mutation driver (what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_jsonl.c csrc/fuzz/fuzz_jsonl.c -o fuzz_jsonl && ./fuzz_jsonl SECONDS SEED
 * libFuzzer: clang -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER ... (same sources)
 */
#define FUZZ_NAME "fuzz_jsonl"

#include "kc_jsonl.h"
#include "kc_status.h"
#include "fuzz_input.h"

#include <inttypes.h>
#include <string.h>

#define MAXC 6
#define MAXT 4

#define MAXTOK 48

static void run_tokens(reader *rd)
{
    int64_t n = take(rd, MAXTOK);
    kc_jtok toks[MAXTOK];
    char *texts[MAXTOK];
    int64_t opens = 0;
    for (int64_t k = 0; k < n; k++) {
        kc_jtok *t = &toks[k];
        uint32_t kind = take(rd, 0);
        t->kind = kind >= 250 ? (int32_t)kind - 240 : (int32_t)(kind % 8) + KC_JT_OBJ;  /* now and then unknown */
        int32_t len = (int32_t)take(rd, 24);
        t->len = take(rd, 64) == 0 ? -1 - len : len;
        texts[k] = malloc((size_t)len + 1);
        for (int32_t b = 0; b < len; b++)
            texts[k][b] = (char)take(rd, 0);
        t->s = texts[k];
        uint64_t v = 0;
        for (int b = 0; b < 8; b++)
            v = v << 8 | take(rd, 0);
        t->i = (int64_t)v >> (take(rd, 64));
        opens += t->kind >= KC_JT_OBJ && t->kind <= KC_JT_END_ARR;
    }
    int64_t room = kc_json_room(toks, n);
    int64_t cap = (int64_t)take(rd, 0) * 8;
    char *out = malloc((size_t)cap + 1);
    int64_t len = -1;
    int rc = kc_json_write(toks, n, out, cap, &len);
    check(rc == KC_OK || rc == KC_E_SHORT || rc == KC_E_INVALID, "json status");
    check((rc == KC_OK) == (room >= 0 && room <= cap), "json: OK exactly when good and fits");
    check(rc == KC_OK ? len >= 0 && len <= room : len == 0, "json out_len");
    if (rc == KC_OK) {
        int64_t brackets = 0;
        for (int64_t k = 0; k < len; k++)
            brackets += out[k] == '{' || out[k] == '}' || out[k] == '[' || out[k] == ']';
        check(brackets >= opens, "json brackets");     /* strings may hold more */
    }
    for (int64_t k = 0; k < n && rc != KC_E_INVALID; k++) {
        if (toks[k].kind != KC_JT_INT)
            continue;
        char buf[32], want[32];
        int64_t l1;
        check(kc_json_write(&toks[k], 1, buf, sizeof buf, &l1) == KC_OK, "json: an int");
        int wl = snprintf(want, sizeof want, "%" PRId64, toks[k].i);
        check(l1 == wl && memcmp(buf, want, (size_t)wl) == 0, "json: an int's text");
    }
    free(out);
    for (int64_t k = 0; k < n; k++)
        free(texts[k]);
}

static void run_one(const uint8_t *data, size_t size)
{
    reader rd = {data, size, 0};
    run_tokens(&rd);
    int32_t nc = (int32_t)take(&rd, MAXC) + 1;
    int64_t nrows = take(&rd, 40);
    kc_jcol cols[MAXC];
    void *owned[MAXC * 6];
    int n_owned = 0;
    static const char *const names[] = {"false", "true", "CreateTime"};
    static const int32_t name_lens[] = {5, 4, 10};
    memset(cols, 0, sizeof cols);
    for (int32_t c = 0; c < nc; c++) {
        kc_jcol *col = &cols[c];
        uint32_t ty = take(&rd, 32);
        col->type = ty == 31 ? 0 : (int)(ty % 7) + KC_J_I64;     /* now and then no such type */
        int64_t len = take(&rd, 12);
        col->length = len;
        if (col->type == KC_J_STR || col->type == KC_J_RAW) {
            int64_t dlen = take(&rd, 64);
            uint8_t *d = malloc((size_t)dlen + 1);
            int32_t *o = malloc(sizeof(int32_t) * (size_t)(len + 1));
            for (int64_t k = 0; k < dlen; k++)
                d[k] = (uint8_t)take(&rd, 0);
            int32_t at = 0;
            for (int64_t k = 0; k <= len; k++) {
                uint32_t step = take(&rd, 0);
                at = step >= 250 ? (int32_t)step - 300 : at + (int32_t)(step % 9);  /* now and then wrong */
                o[k] = at;
            }
            col->values = d;
            col->offsets = o;
            col->data_len = dlen;
            owned[n_owned++] = d;
            owned[n_owned++] = o;
        } else {
            size_t w = col->type == KC_J_I64 ? 8 : col->type == KC_J_I32 ? 4 : col->type == KC_J_I16 ? 2 : 1;
            uint8_t *v = malloc(w * (size_t)len + 1);
            for (size_t k = 0; k < w * (size_t)len; k++)
                v[k] = (uint8_t)take(&rd, 0);
            col->values = v;
            owned[n_owned++] = v;
            if (col->type == KC_J_ENUM) {
                col->names = names;
                col->name_lens = name_lens;
                col->n_names = (int32_t)take(&rd, 4);
            }
        }
        if (take(&rd, 2)) {
            int64_t bo = take(&rd, 9);
            uint8_t *bits = malloc((size_t)((bo + len + 7) / 8) + 1);
            for (int64_t k = 0; k < (bo + len + 7) / 8; k++)
                bits[k] = (uint8_t)take(&rd, 0);
            col->valid = bits;
            col->bit_offset = bo;
            owned[n_owned++] = bits;
        }
        if (take(&rd, 2)) {
            int64_t tl = take(&rd, 48);
            int64_t *t = malloc(sizeof(int64_t) * (size_t)tl + 1);
            for (int64_t k = 0; k < tl; k++)
                t[k] = (int64_t)take(&rd, (uint32_t)len + 1) - (take(&rd, 64) == 0);
            col->take = t;
            col->take_length = tl;
            owned[n_owned++] = t;
        }
    }
    /* templates: literals padded as the header asks */
    int32_t nt = (int32_t)take(&rd, MAXT) + 1;
    kc_jtemplate tpls[MAXT];
    kc_jop ops[MAXT][8];
    char *lits[MAXT][8];
    memset(lits, 0, sizeof lits);
    for (int32_t t = 0; t < nt; t++) {
        tpls[t].ops = ops[t];
        tpls[t].n_ops = (int32_t)take(&rd, 8);
        for (int32_t k = 0; k < tpls[t].n_ops; k++) {
            int32_t col = (int32_t)take(&rd, (uint32_t)nc + 1) - 1;    /* -1: a literal */
            if (take(&rd, 64) == 0)
                col = nc;                                               /* no such column */
            ops[t][k].col = col;
            if (col < 0) {
                int32_t n = (int32_t)take(&rd, 40);
                lits[t][k] = malloc((size_t)n + KC_JSONL_PAD);
                memset(lits[t][k], 'x', (size_t)n + KC_JSONL_PAD);
                ops[t][k].lit = lits[t][k];
                ops[t][k].lit_len = n;
            }
        }
    }
    int64_t nrt = take(&rd, 40);
    int32_t *row_tpl = malloc(sizeof(int32_t) * (size_t)nrt + 1);
    for (int64_t k = 0; k < nrt; k++)
        row_tpl[k] = (int32_t)take(&rd, (uint32_t)nt + 1) - 1 + (take(&rd, 64) == 0);
    int64_t *rows = malloc(sizeof(int64_t) * (size_t)nrows + 1);
    for (int64_t k = 0; k < nrows; k++)
        rows[k] = (int64_t)take(&rd, (uint32_t)nrt + 1) - (take(&rd, 64) == 0);
    int64_t cap = take(&rd, 0) * 4;
    int64_t *ends = malloc(sizeof(int64_t) * (size_t)nrows + 1);
    char *out = malloc((size_t)cap + 1);
    int64_t done = -1, len = -1;
    int rc = kc_jsonl_write(tpls, nt, cols, nc, rows, row_tpl, nrt, nrows, out, cap, ends, &done, &len);
    check(rc == KC_OK || rc == KC_E_SHORT || rc == KC_E_INVALID || rc == KC_E_NOMEM, "status");
    check(done >= 0 && done <= nrows && len >= 0 && len <= cap, "rows_done / out_len");
    for (int64_t k = 0; k < done; k++)
        check(ends[k] >= (k ? ends[k - 1] : 0) && ends[k] <= len, "row ends");
    if (rc == KC_E_SHORT) {          /* with room for everything: done, or the same bad input */
        int64_t big = cap + 64 + 64 * 1024;
        char *out2 = malloc((size_t)big);
        int64_t done2, len2;
        int rc2 = kc_jsonl_write(tpls, nt, cols, nc, rows, row_tpl, nrt, nrows, out2, big, NULL,
                                 &done2, &len2);
        check(rc2 == KC_OK || rc2 == KC_E_INVALID, "short with room for all");
        check(done2 >= done && len2 >= len && memcmp(out, out2, (size_t)len) == 0,
              "more room, other text");
        free(out2);
    }
    /* one number column on its own: its text is the value, a null is `null` */
    for (int32_t c = 0; c < nc && rc != KC_E_NOMEM; c++) {
        kc_jcol one = cols[c];
        if (one.type < KC_J_I64 || one.type > KC_J_I8 || one.length == 0)
            continue;
        one.take = NULL;
        kc_jop op = {0, NULL, 0};
        kc_jtemplate tp = {&op, 1};
        int64_t r = 0;
        int32_t z = 0;
        char buf[128];
        int64_t d1, l1;
        check(kc_jsonl_write(&tp, 1, &one, 1, &r, &z, 1, 1, buf, sizeof buf, NULL, &d1, &l1) == KC_OK,
              "a number column");
        int64_t v = one.type == KC_J_I64 ? ((const int64_t *)one.values)[0]
                  : one.type == KC_J_I32 ? ((const int32_t *)one.values)[0]
                  : one.type == KC_J_I16 ? ((const int16_t *)one.values)[0]
                  : ((const int8_t *)one.values)[0];
        char want[32];
        int wl = one.valid && !((one.valid[one.bit_offset >> 3] >> (one.bit_offset & 7)) & 1)
            ? snprintf(want, sizeof want, "null") : snprintf(want, sizeof want, "%" PRId64, v);
        check(l1 == wl && memcmp(buf, want, (size_t)wl) == 0, "a number's text");
    }
    free(out);
    free(ends);
    free(rows);
    free(row_tpl);
    for (int32_t t = 0; t < nt; t++)
        for (int k = 0; k < 8; k++)
            free(lits[t][k]);
    for (int k = 0; k < n_owned; k++)
        free(owned[k]);
}

#include "fuzz_main.h"
