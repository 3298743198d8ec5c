/*
 * Fuzz target for the spec engine (csrc/kc_engine.c): decode, re-encode, decode
 * again, and bulk-decode arbitrary bytes against real compiled programs.
 *
 * Properties checked (abort() on violation, so sanitizers and the fuzzer see it):
 *   - no crash, no out-of-bounds access, no UB (build with ASan + UBSan);
 *   - a decoded tape always re-encodes (kc_encode_size/kc_encode_write succeed);
 *   - the re-encoded bytes decode, to the same bytes again (encode is idempotent);
 *   - a too-small tape only ever yields KC_E_TAPE_FULL, never an overflow;
 *   - bulk decode into columns (csrc/kc_columns.c) agrees with kc_decode on
 *     success/failure, with or without a prefix to skip, and keeps Arrow's invariants;
 *     so does the record-array row source (strided entries, take, select), whose
 *     bad entries become bad rows, and kc_rows_heads reads only what a row has;
 *     so does a version prefix picking each row's program (kc_columns_decode_rows);
 *   - a flat program (kc_flat_build, some of the message's fields not kept) appends
 *     only rows the generic decoder decodes, exactly its columns, and
 *     kc_columns_decode_flat is kc_columns_decode_one: status, error offset, columns.
 *
 * Programs come from a text file, one program per line as int32 words (the tests
 * dump them from kcodec._program: tests/test_native_fuzz.py).  The first input
 * byte picks the program.
 *
 * libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER -Icsrc \
 *       csrc/kc_engine.c csrc/kc_columns.c csrc/fuzz/fuzz_engine.c -o fuzz_engine
 *   KC_FUZZ_PROGRAMS=programs.txt ./fuzz_engine corpus/
 * Standalone random/mutation driver (gcc or clang, what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_engine.c csrc/kc_columns.c csrc/fuzz/fuzz_engine.c -o fuzz_engine
 *   ./fuzz_engine programs.txt corpus.txt SECONDS SEED
 *   (corpus.txt: one "program_index hex" per line)
 */
#include "kc_columns.h"
#include "kc_engine.h"
#include "kc_varint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PROGS 4096

static int32_t *g_prog[MAX_PROGS];
static size_t g_plen[MAX_PROGS];
static int g_nprogs;

static void load_programs(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    if (!f) {
        perror(path);
        exit(2);
    }
    while (g_nprogs < MAX_PROGS) {
        size_t n = 0, wcap = 64;
        int32_t *w;
        char *p, *end;
        int c, len = 0;
        /* read one line of any length */
        if (!line) {
            cap = 1 << 16;
            line = (char *)malloc(cap);
        }
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if ((size_t)len + 2 >= cap) {
                cap *= 2;
                line = (char *)realloc(line, cap);
            }
            line[len++] = (char)c;
        }
        line[len] = 0;
        if (c == EOF && len == 0)
            break;
        w = (int32_t *)malloc(wcap * sizeof(int32_t));
        for (p = line;;) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (n == wcap) {
                wcap *= 2;
                w = (int32_t *)realloc(w, wcap * sizeof(int32_t));
            }
            w[n++] = (int32_t)v;
            p = end;
        }
        if (n && kc_program_check(w, n) == KC_OK) {
            g_prog[g_nprogs] = w;
            g_plen[g_nprogs] = n;
            g_nprogs++;
        } else {
            free(w);
        }
        if (c == EOF)
            break;
    }
    free(line);
    fclose(f);
    if (g_nprogs == 0) {
        fprintf(stderr, "no programs in %s\n", path);
        exit(2);
    }
}

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_engine: property violated: %s\n", what);
        abort();
    }
}

/* encode a decoded tape whose REFs point into `heap`; returns malloc'd bytes */
static uint8_t *reencode(const int32_t *code, const int64_t *tape, size_t nslots,
                         const uint8_t *heap, size_t heap_len, size_t *out_len)
{
    uint32_t *aux = (uint32_t *)calloc(nslots + 1, sizeof(uint32_t));
    kc_error err;
    size_t size = 0;
    uint8_t *out;
    int rc = kc_encode_size(code, tape, nslots, heap, heap_len, aux, &size, &err);
    check(rc == KC_OK, "a decoded tape re-encodes");
    out = (uint8_t *)malloc(size + 1);
    rc = kc_encode_write(code, tape, nslots, heap, heap_len, aux, out, &err);
    check(rc == KC_OK, "encode write");
    free(aux);
    *out_len = size;
    return out;
}

/* Arrow invariants of one column node and its subtree: offsets monotone and within
 * the child / data, a struct's children as long as the struct. */
static void check_node(const kc_columns *t, int32_t i)
{
    const kc_col *c = &t->nodes[i];
    if (c->kind == KC_N_LIST || c->kind == KC_N_VAR) {
        size_t last = c->kind == KC_N_LIST ? t->nodes[t->kids[c->first_kid]].len : c->data_len;
        check(c->len == 0 || c->offsets[0] == 0, "offsets start at 0");
        for (size_t r = 0; r < c->len; r++)
            check(c->offsets[r] <= c->offsets[r + 1], "offsets monotone");
        check(c->len == 0 || (size_t)c->offsets[c->len] == last, "offsets end at the child");
    }
    for (int32_t q = 0; q < c->n_kids; q++) {
        int32_t k = t->kids[c->first_kid + q];
        if (c->kind == KC_N_STRUCT)
            check(t->nodes[k].len == c->len, "struct children as long as the struct");
        check_node(t, k);
    }
}

/* Bulk-decode the bytes three times in one call (as a row, as a null row, as the row
 * after a 2-byte prefix); returns the first row's status. */
static int bulk_one(const int32_t *code, const uint8_t *data, size_t n)
{
    kc_columns t;
    kc_rows rows;
    uint8_t *buf = (uint8_t *)malloc(n + 3);
    int64_t pos[3] = {0, 0, 1};
    int32_t lens[3] = {(int32_t)n, -1, (int32_t)n + 2};
    int32_t status[3] = {-7, -7, -7};
    int64_t erroff[3];
    buf[0] = 0;
    buf[1] = 0xab;
    buf[2] = 0xcd;
    if (n)
        memcpy(buf + 3, data, n);
    memset(&rows, 0, sizeof rows);
    rows.data = buf + 3;
    rows.data_len = n;
    rows.pos = pos;
    rows.lens = lens;
    check(kc_columns_init(&t, code) == KC_OK, "column tree builds");
    check(kc_columns_decode(&t, &rows, 2, status, erroff) == KC_OK, "bulk ran");
    rows.data = buf;
    rows.data_len = n + 3;
    rows.skip = 2;
    rows.pos = pos + 2;
    rows.lens = lens + 2;
    check(kc_columns_decode(&t, &rows, 1, status + 2, erroff) == KC_OK, "bulk ran");
    check(status[1] == KC_E_NULL_ROW, "a null row is null");
    check(status[2] == status[0], "a prefix skipped is not part of the message");
    check(t.nodes[0].len == 3, "one root value per row");
    check_node(&t, 0);
    kc_columns_free(&t);
    free(buf);
    return status[0];
}

/* The bytes through the record-array row source: entries of an array of structs read
 * by stride, taken out of order (one take outside the entries, one entry outside the
 * data), one row selected out; then the heads of the same rows. */
static void bulk_records(const int32_t *code, const uint8_t *data, size_t n, int want)
{
    struct entry { int64_t pos; int32_t len; int32_t pad; } ents[3];
    const int64_t take[5] = {2, 0, 7, 1, 0};
    const uint8_t select[5] = {1, 1, 1, 1, 0};
    int32_t status[5], have[5];
    int64_t erroff[5];
    uint8_t heads[5 * 8];
    kc_columns t;
    kc_rows rows;
    ents[0].pos = 0;
    ents[0].len = (int32_t)n;
    ents[1].pos = 0;
    ents[1].len = -1;
    ents[2].pos = (int64_t)n;
    ents[2].len = 1;                    /* one byte past the data */
    memset(&rows, 0, sizeof rows);
    rows.data = data;
    rows.data_len = n;
    rows.pos = &ents[0].pos;
    rows.lens = &ents[0].len;
    rows.pos_stride = rows.lens_stride = sizeof(struct entry);
    rows.take = take;
    rows.n_entries = 3;
    rows.select = select;
    check(kc_columns_init(&t, code) == KC_OK, "column tree builds");
    check(kc_columns_decode(&t, &rows, 5, status, erroff) == KC_OK, "bulk ran");
    check(status[0] == KC_E_TOO_BIG && status[2] == KC_E_TOO_BIG, "bad entries are bad rows");
    check(status[1] == want, "a strided, taken row decodes as the row");
    check(status[3] == KC_E_NULL_ROW && status[4] == KC_E_NULL_ROW, "null and selected-out rows");
    check(t.nodes[0].len == 5, "one root value per row");
    check_node(&t, 0);
    kc_columns_free(&t);
    check(kc_rows_heads(&rows, 5, 8, heads, have) == KC_OK, "heads ran");
    check(have[0] == -2 && have[2] == -2 && have[3] == -1 && have[4] == -1, "heads of bad rows");
    check(have[1] == (int32_t)(n < 8 ? n : 8) && memcmp(heads + 8, data, (size_t)have[1]) == 0,
          "heads are the row's first bytes");
}

/* The bytes behind an int16 version prefix that picks the program per row
 * (kc_columns_decode_rows): version 1 -> the program, as a row and selected out; a
 * null row, a 1-byte row, and version 5 (no program) are null rows; every row's
 * version and prefix bytes are reported. */
static void bulk_framed(const int32_t *code, const uint8_t *data, size_t n, int want)
{
    uint8_t *buf = (uint8_t *)malloc(n + 4);
    const int32_t *codes[2] = {NULL, code};
    int64_t pos[5] = {0, 0, 0, n + 2, 0};
    int32_t lens[5] = {(int32_t)n + 2, -1, 1, 2, (int32_t)n + 2};
    const uint8_t select[5] = {1, 1, 1, 1, 0};
    int32_t status[5], tagged[5];
    int16_t versions[5];
    int8_t have[5];
    kc_row_info out;
    kc_columns t;
    kc_rows rows;
    buf[0] = 0;
    buf[1] = 1;
    if (n)
        memcpy(buf + 2, data, n);
    buf[n + 2] = 0;
    buf[n + 3] = 5;
    memset(&rows, 0, sizeof rows);
    rows.data = buf;
    rows.data_len = n + 4;
    rows.pos = pos;
    rows.lens = lens;
    rows.select = select;
    rows.skip = 2;
    rows.prefix = 2;
    memset(&out, 0, sizeof out);
    out.status = status;
    out.versions = versions;
    out.have = have;
    out.tagged = tagged;
    check(kc_columns_init(&t, code) == KC_OK, "column tree builds");
    check(kc_columns_decode_rows(&t, &rows, 5, &out) == KC_E_INVALID, "a prefix needs programs");
    t.codes = codes;
    t.n_codes = 2;
    check(kc_columns_decode_rows(&t, &rows, 5, &out) == KC_OK, "framed bulk ran");
    check(status[0] == want, "the version's program decodes the row as the row");
    for (int r = 1; r < 5; r++)
        check(status[r] == KC_E_NULL_ROW, "null, short, unknown-version, selected-out rows");
    check(versions[0] == 1 && versions[1] == -1 && versions[2] == -1 && versions[3] == 5
          && versions[4] == 1, "versions of every row");
    check(have[0] == 2 && have[1] == -1 && have[2] == 1 && have[3] == 2 && have[4] == 2,
          "prefix bytes of every row");
    for (int r = 0; r < 5; r++)
        check(tagged[r] >= 0 && (tagged[r] == 0 || (r == 0 && want == KC_OK)), "tagged counts");
    check(t.nodes[0].len == 5, "one root value per row");
    check_node(&t, 0);
    kc_columns_free(&t);
    free(buf);
}

static unsigned long g_flat_rows, g_flat_taken;

/* Two trees hold the same values: lengths, validity, values, offsets, data. */
static void same_columns(const kc_columns *a, const kc_columns *b)
{
    check(a->n_nodes == b->n_nodes, "same tree");
    for (int32_t i = 0; i < a->n_nodes; i++) {
        const kc_col *x = &a->nodes[i], *y = &b->nodes[i];
        check(x->len == y->len, "flat: same lengths");
        for (size_t r = 0; r < x->len; r++) {
            int vx = !x->validity || ((x->validity[r >> 3] >> (r & 7)) & 1);
            int vy = !y->validity || ((y->validity[r >> 3] >> (r & 7)) & 1);
            check(vx == vy, "flat: same validity");
        }
        if (x->skip || !x->len)
            continue;
        if (x->kind == KC_N_FIXED)
            check(memcmp(x->values, y->values, x->len * (size_t)x->width) == 0, "flat: same values");
        else if (x->kind == KC_N_BOOL)
            for (size_t r = 0; r < x->len; r++)
                check(((x->values[r >> 3] >> (r & 7)) & 1) == ((y->values[r >> 3] >> (r & 7)) & 1),
                      "flat: same bools");
        else if (x->kind == KC_N_LIST || x->kind == KC_N_VAR)
            check(memcmp(x->offsets, y->offsets, (x->len + 1) * sizeof(int32_t)) == 0, "flat: same offsets");
        if (x->kind == KC_N_VAR)
            check(x->data_len == y->data_len && (!x->data_len || memcmp(x->data, y->data, x->data_len) == 0),
                  "flat: same data");
    }
}

/* The bytes through the program's flat form (when it has one), some top-level fields not
 * kept (picked by the bytes), against the generic decoder on the same tree: twice, with a
 * null row between, kc_flat_try then kc_columns_decode_flat. */
static void bulk_flat(const int32_t *code, const uint8_t *data, size_t n, int want)
{
    kc_columns a, b;
    kc_flat *f = NULL;
    uint32_t mask = (uint32_t)n * 2654435761u;
    for (size_t i = 0; i < n && i < 16; i++)
        mask = (mask ^ data[i]) * 16777619u;
    check(kc_columns_init(&a, code) == KC_OK && kc_columns_init(&b, code) == KC_OK, "column trees build");
    if (mask & 1)           /* keep everything, or drop the fields the mask's bits pick */
        for (int32_t q = 0; q < a.nodes[0].n_kids; q++)
            if ((mask >> (1 + q % 31)) & 1) {
                kc_columns_skip(&a, a.kids[a.nodes[0].first_kid + q]);
                kc_columns_skip(&b, b.kids[b.nodes[0].first_kid + q]);
            }
    check(kc_flat_build(&a, code, NULL, &f) == KC_OK, "flat build");
    if (f) {
        for (int i = 0; i < 2; i++) {
            int64_t ea = -7, eb = -7;
            int ra = kc_columns_decode_one(&a, code, NULL, data, n, 0, &ea), rb;
            check(ra == want, "decode_one agrees with the bulk decoder");
            g_flat_rows++;
            if (i == 0) {
                rb = kc_flat_try(&b, f, data, n, 0);
                if (rb == KC_OK) {
                    g_flat_taken++;
                    check(ra == KC_OK, "the flat way appends only rows the generic path decodes");
                    eb = ea;
                } else {
                    check(rb == 1, "flat try: 0 or 1");
                    rb = kc_columns_decode_one(&b, code, NULL, data, n, 0, &eb);
                }
            } else {
                rb = kc_columns_decode_flat(&b, f, data, n, 0, &eb);
            }
            check(ra == rb && (ra == KC_OK || ea == eb), "flat: the generic path's status and offset");
            check(kc_columns_put_nulls(&a, 1) == KC_OK && kc_columns_put_nulls(&b, 1) == KC_OK, "nulls");
        }
        same_columns(&a, &b);
        if (!(mask & 1))        /* (check_node knows no skipped nodes) */
            check_node(&b, 0);
        kc_flat_free(f);
    }
    kc_columns_free(&a);
    kc_columns_free(&b);
}

static void run_one(int pi, const uint8_t *data, size_t n)
{
    const int32_t *code = g_prog[pi];
    size_t cap = n + 2, end = 0, nslots = 0, len1 = 0, len2 = 0, end2 = 0, ns2 = 0;
    int64_t *tape = (int64_t *)malloc(cap * sizeof(int64_t));
    int64_t small[3];
    kc_error err, err_small;
    int rc = kc_decode(code, data, n, 0, tape, cap, &end, &nslots, &err);
    int rc_small = kc_decode(code, data, n, 0, small, 3, &end2, &ns2, &err_small);
    int st;

    check(rc != KC_E_TAPE_FULL, "len + 2 slots always suffice");
    check(rc_small == rc || rc_small == KC_E_TAPE_FULL, "a small tape only adds TAPE_FULL");
    st = bulk_one(code, data, n);
    bulk_records(code, data, n, st);
    bulk_framed(code, data, n, st);
    bulk_flat(code, data, n, st);
    if (rc == KC_OK && end == n)
        check(st == KC_OK, "bulk decodes what decode decodes");
    else
        check(st != KC_OK, "bulk rejects what decode rejects");
    if (rc == KC_OK) {
        uint8_t *out1, *out2;
        int64_t *tape2;
        check(end <= n && nslots <= cap, "decode stays in bounds");
        out1 = reencode(code, tape, nslots, data, n, &len1);
        tape2 = (int64_t *)malloc((len1 + 2) * sizeof(int64_t));
        rc = kc_decode(code, out1, len1, 0, tape2, len1 + 2, &end2, &ns2, &err);
        check(rc == KC_OK && end2 == len1, "re-encoded bytes decode");
        out2 = reencode(code, tape2, ns2, out1, len1, &len2);
        check(len1 == len2 && memcmp(out1, out2, len1) == 0, "encode is idempotent");
        free(out1);
        free(out2);
        free(tape2);
    } else {
        check(err.code == rc && err.offset >= 0 && (size_t)err.offset <= n, "error offset in bounds");
        check(err.path_len >= 0 && err.path_len <= KC_MAX_PATH, "error path length");
    }
    free(tape);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *p = getenv("KC_FUZZ_PROGRAMS");
    (void)argc;
    (void)argv;
    load_programs(p ? p : "programs.txt");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy;
    if (size < 1)
        return 0;
    /* an exact-size heap copy so ASan sees any read past the end */
    copy = (uint8_t *)malloc(size - 1 ? size - 1 : 1);
    memcpy(copy, data + 1, size - 1);
    run_one(data[0] % g_nprogs, copy, size - 1);
    free(copy);
    return 0;
}

#ifndef KC_LIBFUZZER

#include "fuzz_rng.h"

typedef struct {
    int prog;
    uint8_t *data;
    size_t len;
} entry;

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static entry *load_corpus(const char *path, size_t *count)
{
    FILE *f = fopen(path, "r");
    entry *es = NULL;
    size_t n = 0, cap = 0;
    int c;
    if (!f) {
        perror(path);
        exit(2);
    }
    for (;;) {
        int prog = 0, any = 0;
        size_t len = 0, dcap = 64;
        uint8_t *d;
        while ((c = fgetc(f)) == ' ' || c == '\n')
            ;
        while (c >= '0' && c <= '9') {
            prog = prog * 10 + (c - '0');
            any = 1;
            c = fgetc(f);
        }
        if (!any)
            break;
        d = (uint8_t *)malloc(dcap);
        while ((c = fgetc(f)) == ' ')
            ;
        while (c != EOF && c != '\n') {
            int hi = hexval(c), lo = hexval(fgetc(f));
            if (hi < 0 || lo < 0)
                break;
            if (len == dcap) {
                dcap *= 2;
                d = (uint8_t *)realloc(d, dcap);
            }
            d[len++] = (uint8_t)(hi << 4 | lo);
            c = fgetc(f);
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            es = (entry *)realloc(es, cap * sizeof(entry));
        }
        es[n].prog = prog % g_nprogs;
        es[n].data = d;
        es[n].len = len;
        n++;
        if (c == EOF)
            break;
    }
    fclose(f);
    *count = n;
    return es;
}

static const uint8_t INTERESTING[] = {0x00, 0x01, 0x7f, 0x80, 0xff, 0xfe, 0x10, 0x40};

int main(int argc, char **argv)
{
    size_t ncorpus = 0;
    entry *corpus;
    double seconds;
    clock_t t0;
    unsigned long iters = 0;
    if (argc < 5) {
        fprintf(stderr, "usage: %s programs.txt corpus.txt seconds seed\n", argv[0]);
        return 2;
    }
    load_programs(argv[1]);
    corpus = load_corpus(argv[2], &ncorpus);
    seconds = atof(argv[3]);
    rnd_seed(argv[4]);
    t0 = clock();
    /* every corpus entry as is, and at every truncation */
    for (size_t i = 0; i < ncorpus; i++) {
        for (size_t cut = 0; cut <= corpus[i].len; cut++) {
            uint8_t *d = (uint8_t *)malloc(cut ? cut : 1);
            memcpy(d, corpus[i].data, cut);
            run_one(corpus[i].prog, d, cut);
            free(d);
            iters++;
        }
    }
    while ((double)(clock() - t0) / CLOCKS_PER_SEC < seconds) {
        for (int k = 0; k < 256; k++) {
            entry *e = ncorpus ? &corpus[rnd() % ncorpus] : NULL;
            size_t len = e ? e->len : 0;
            size_t cap = len + 64;
            uint8_t *d = (uint8_t *)malloc(cap);
            int prog = e ? e->prog : (int)(rnd() % (uint32_t)g_nprogs);
            int nm = 1 + (int)(rnd() % 6);
            if (e && len)
                memcpy(d, e->data, len);
            if (rnd() % 16 == 0)
                prog = (int)(rnd() % (uint32_t)g_nprogs);      /* other program, same bytes */
            if (rnd() % 32 == 0) {                               /* pure noise */
                len = rnd() % 64;
                for (size_t j = 0; j < len; j++)
                    d[j] = (uint8_t)rnd();
            }
            for (int m = 0; m < nm; m++) {
                uint32_t op = rnd() % 6;
                size_t at = len ? rnd() % len : 0;
                if (op == 0 && len) d[at] ^= (uint8_t)(1u << (rnd() % 8));
                else if (op == 1 && len) d[at] = INTERESTING[rnd() % sizeof INTERESTING];
                else if (op == 2 && len) d[at] = (uint8_t)rnd();
                else if (op == 3 && len) len = at;                        /* truncate */
                else if (op == 4 && len + 4 < cap) {                      /* insert */
                    size_t k2 = 1 + rnd() % 4;
                    memmove(d + at + k2, d + at, len - at);
                    for (size_t j = 0; j < k2; j++)
                        d[at + j] = INTERESTING[rnd() % sizeof INTERESTING];
                    len += k2;
                } else if (op == 5 && len > 1) {                          /* delete */
                    size_t k2 = 1 + rnd() % (len - at < 4 ? len - at : 4);
                    memmove(d + at, d + at + k2, len - at - k2);
                    len -= k2;
                }
            }
            {
                uint8_t *exact = (uint8_t *)malloc(len ? len : 1);
                memcpy(exact, d, len);
                run_one(prog, exact, len);
                free(exact);
            }
            free(d);
            iters++;
        }
    }
    printf("fuzz_engine: %lu inputs, %d programs, %zu corpus entries, %lu rows through flat programs "
           "(%lu appended the flat way), no crash\n", iters, g_nprogs, ncorpus, g_flat_rows, g_flat_taken);
    for (size_t i = 0; i < ncorpus; i++)
        free(corpus[i].data);
    free(corpus);
    for (int i = 0; i < g_nprogs; i++)
        free(g_prog[i]);
    return 0;
}

#endif
