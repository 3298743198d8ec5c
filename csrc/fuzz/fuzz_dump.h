/*
 * What the dump writers' fuzz targets (fuzz_odump.c, fuzz_kdump.c) share: a corpus of
 * log segments (one hex line each), a table file of programs and JSON plans written by
 * the tests from the package's own tables (whitespace-separated tokens), and mutations
 * that know a v2 batch's layout:
 *   - header fields set to edge values (offsets and epochs at INT64/INT32 limits,
 *     sequences -1, -2, MAX, attributes bits: transactional, control, LogAppendTime,
 *     delete horizon, compression codecs), record counts off by one;
 *   - inside a record's key or value (the scanner's own positions): bytes flipped or
 *     set, version prefixes and length prefixes made absurd, in place;
 *   - the record framing's varints rewritten in place (same size, other values);
 *   - raw flips, cuts and splices anywhere;
 * then, most of the time, each batch's CRC-32C made right again so the records reach
 * the writers (a bad CRC keeps them out of the fast paths).
 */
#ifndef KC_FUZZ_DUMP_H
#define KC_FUZZ_DUMP_H

#include "kc_batch.h"
#include "kc_crc32c.h"
#include "kc_engine.h"
#include "fuzz_rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* an invariant broken: abort, naming the target (FUZZ_NAME) and what broke */
static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: %s\n", FUZZ_NAME, what);
        abort();
    }
}

#define MAX_CORPUS 1024

static uint8_t *g_seg[MAX_CORPUS];
static size_t g_len[MAX_CORPUS];
static int g_n;

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, len = 0, got;
    char *s = malloc(cap + 1);
    while ((got = fread(s + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap)
            s = realloc(s, (cap *= 2) + 1);
    }
    fclose(f);
    s[len] = 0;
    *n = len;
    return s;
}

static void load_corpus(const char *path)
{
    size_t n;
    char *s = slurp(path, &n);
    for (char *line = s; *line && g_n < MAX_CORPUS; ) {
        char *eol = strchr(line, '\n');
        size_t ll = eol ? (size_t)(eol - line) : strlen(line);
        if (ll >= 2) {
            uint8_t *b = malloc(ll / 2);
            size_t k = 0;
            for (size_t i = 0; i + 1 < ll; i += 2)
                b[k++] = (uint8_t)(hexval(line[i]) << 4 | hexval(line[i + 1]));
            g_seg[g_n] = b;
            g_len[g_n++] = k;
        }
        line += ll + (eol != NULL);
    }
    free(s);
}

/* ---------------------------------------------------------------- table tokens */

typedef struct {
    char *s;
    char *at;
} toks;

static char *tok(toks *t)
{
    while (*t->at == ' ' || *t->at == '\n' || *t->at == '\t' || *t->at == '\r')
        t->at++;
    if (!*t->at) {
        fprintf(stderr, "table: out of tokens\n");
        exit(2);
    }
    char *w = t->at;
    while (*t->at && *t->at != ' ' && *t->at != '\n' && *t->at != '\t' && *t->at != '\r')
        t->at++;
    if (*t->at)
        *t->at++ = 0;
    return w;
}

static long long tok_int(toks *t)
{
    return strtoll(tok(t), NULL, 10);
}

/* int32 words: a count, then the words (exactly that many allocated) */
static int32_t *tok_words(toks *t, size_t *n)
{
    *n = (size_t)tok_int(t);
    int32_t *w = malloc(*n * sizeof *w + 1);
    for (size_t i = 0; i < *n; i++)
        w[i] = (int32_t)tok_int(t);
    return w;
}

/* bytes: hex, or "-" for none; `pad` zero bytes readable after them */
static char *tok_bytes(toks *t, size_t *n, size_t pad)
{
    char *h = tok(t);
    size_t l = strcmp(h, "-") == 0 ? 0 : strlen(h) / 2;
    char *b = calloc(l + pad + 1, 1);
    for (size_t i = 0; i < l; i++)
        b[i] = (char)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1]));
    *n = l;
    return b;
}

/* ---------------------------------------------------------------- mutations */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static const int64_t EDGE64[] = {0, 1, -1, -2, INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                                 INT32_MAX, INT32_MIN, 1LL << 32, 1795000000000LL};
static const int64_t EDGE32[] = {0, 1, -1, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1,
                                 32767, -32768, 65535, 100};

static int64_t edge64(void) { return EDGE64[rnd() % (sizeof EDGE64 / sizeof *EDGE64)]; }
static int64_t edge32(void) { return EDGE32[rnd() % (sizeof EDGE32 / sizeof *EDGE32)]; }

/* One header field of the batch at b set to an edge value. */
static void mutate_header(uint8_t *b)
{
    switch (rnd() % 10) {
    case 0: put_be(b, (uint64_t)edge64(), 8); break;                      /* baseOffset */
    case 1: put_be(b + 12, (uint64_t)edge32(), 4); break;                 /* leader epoch */
    case 2: {                                                             /* attributes */
        static const uint16_t bits[] = {0x08, 0x10, 0x20, 0x40, 0x01, 0x04, 0x07, 0x80, 0x8000};
        uint16_t a = (uint16_t)(b[21] << 8 | b[22]);
        a ^= bits[rnd() % (sizeof bits / sizeof *bits)];
        put_be(b + 21, a, 2);
        break;
    }
    case 3: put_be(b + 23, (uint64_t)edge32(), 4); break;                 /* lastOffsetDelta */
    case 4: put_be(b + 27, (uint64_t)edge64(), 8); break;                 /* baseTimestamp */
    case 5: put_be(b + 35, (uint64_t)edge64(), 8); break;                 /* maxTimestamp */
    case 6: put_be(b + 43, (uint64_t)edge64(), 8); break;                 /* producerId */
    case 7: put_be(b + 51, (uint64_t)edge32(), 2); break;                 /* producerEpoch */
    case 8: put_be(b + 53, (uint64_t)edge32(), 4); break;                 /* baseSequence */
    default: {                                                            /* recordCount */
        uint32_t c = be32(b + 57);
        put_be(b + 57, rnd() % 2 ? c + 1 : c - 1, 4);
        break;
    }
    }
}

/* In place inside a key or value at s[0..n): a flip, a byte, a version or length prefix
 * (int16, int32 or a varint's first byte) made absurd. */
static void mutate_payload(uint8_t *s, size_t n)
{
    if (!n)
        return;
    size_t at = rnd() % n;
    switch (rnd() % 6) {
    case 0: s[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
    case 1: s[at] = (uint8_t)rnd(); break;
    case 2:                                            /* the version prefix */
        if (n >= 2)
            put_be(s, (uint64_t)(rnd() % 4 ? rnd() % 12 : (uint32_t)edge32()), 2);
        break;
    case 3:
        if (at + 2 <= n)
            put_be(s + at, (uint64_t)edge32(), 2);
        break;
    case 4:
        if (at + 4 <= n)
            put_be(s + at, (uint64_t)edge32(), 4);
        break;
    default:                                           /* a compact length / count */
        s[at] = (uint8_t)(rnd() % 4 ? rnd() % 8 : 0x80 | rnd());
        break;
    }
}

/* Each batch's CRC-32C recomputed (batches walked by their length fields). */
static void fix_crcs(uint8_t *buf, size_t len)
{
    size_t pos = 0;
    while (pos + KC_BATCH_HEADER_SIZE <= len) {
        uint32_t bl = be32(buf + pos + 8);
        if (bl < KC_BATCH_MIN_LENGTH || bl > len - pos - 12)
            break;
        if (buf[pos + 16] == 2)
            put_be(buf + pos + 17, kc_crc32c(0, buf + pos + 21, (size_t)bl - 9), 4);
        pos += 12 + (size_t)bl;
    }
}

/* A corrupted copy of a corpus segment in out[0..cap); returns its length. */
static size_t mutate_log(uint8_t *out, size_t cap, kc_batch *b, size_t cap_b, kc_record *r,
                         size_t cap_r)
{
    int which = (int)(rnd() % (unsigned)g_n);
    size_t len = g_len[which] < cap ? g_len[which] : cap;
    memcpy(out, g_seg[which], len);
    size_t nb = 0, nr = 0;
    kc_scan(out, len, 0, 1, 1 << 30, b, cap_b, &nb, r, cap_r, &nr);
    int edits = 1 + (int)(rnd() % 4);
    for (int e = 0; e < edits && len; e++) {
        switch (rnd() % 8) {
        case 0: case 1:
            if (nb) {
                const kc_batch *x = &b[rnd() % nb];
                if ((size_t)x->position + KC_BATCH_HEADER_SIZE <= len)
                    mutate_header(out + x->position);
            }
            break;
        case 2: case 3: case 4:
            if (nr) {
                const kc_record *x = &r[rnd() % nr];
                int key = rnd() % 4 == 0;
                int64_t p = key ? x->key_pos : x->value_pos;
                int32_t n = key ? x->key_len : x->value_len;
                if (n > 0 && (size_t)p + (size_t)n <= len)
                    mutate_payload(out + p, (size_t)n);
            }
            break;
        case 5:
            if (nr) {                                  /* framing varints, in place */
                const kc_record *x = &r[rnd() % nr];
                int64_t p = x->key_pos > 0 ? x->key_pos - 1 - (int64_t)(rnd() % 8) : -1;
                if (p >= 0 && (size_t)p < len)
                    out[p] = (uint8_t)((out[p] & 0x80) | (rnd() & 0x7F));
            }
            break;
        case 6:
            out[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        default:
            if (rnd() % 2) {
                len = rnd() % len;                     /* a cut */
            } else {                                   /* a splice from another segment */
                int o = (int)(rnd() % (unsigned)g_n);
                size_t at = rnd() % len, n = g_len[o] ? rnd() % g_len[o] : 0;
                if (at + n > cap)
                    n = cap - at;
                memcpy(out + at, g_seg[o], n);
                if (at + n > len)
                    len = at + n;
            }
            break;
        }
    }
    if (rnd() % 8)
        fix_crcs(out, len);
    return len;
}

/* Well-formed UTF-8 (what Python decodes the dump's text with). */
static int utf8_ok(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        size_t k;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            k = 1, cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            k = 2, cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            k = 3, cp = c & 0x07;
        } else {
            return 0;
        }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000)
            || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += k + 1;
    }
    return 1;
}

/* ---------------------------------------------------------------- the driver */

/* Everything the writer gave (text and hand-backs), to compare runs. */
typedef struct {
    char *text;
    size_t len, cap;
    long events;
} transcript;

static void append(transcript *tr, const char *s, size_t n)
{
    if (tr->len + n + 1 > tr->cap) {
        tr->cap = 2 * (tr->len + n + 1);
        tr->text = realloc(tr->text, tr->cap);
    }
    memcpy(tr->text + tr->len, s, n);
    tr->len += n;
}

static kc_batch *g_b;
static kc_record *g_r;
static size_t g_cap_b, g_cap_r;

/* TARGET tables.txt corpus.txt seconds seed: mutated corpus segments through run_one
 * until the CPU time is spent. */
static int dump_main(int argc, char **argv, const char *name, void (*load_table)(const char *),
                     void (*run_one)(const uint8_t *, size_t), void (*free_table)(void))
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s tables.txt corpus.txt seconds seed\n", argv[0]);
        return 2;
    }
    load_table(argv[1]);
    load_corpus(argv[2]);
    double seconds = atof(argv[3]);
    rnd_seed(argv[4]);
    if (!g_n) {
        fprintf(stderr, "empty corpus\n");
        return 2;
    }
    size_t cap = 1 << 19;
    g_cap_b = cap / 26 + 8;
    g_cap_r = cap / 7 + 8;
    g_b = malloc(g_cap_b * sizeof *g_b);
    g_r = malloc(g_cap_r * sizeof *g_r);
    uint8_t *buf = malloc(cap);
    clock_t t0 = clock();
    unsigned long iters = 0;
    while ((double)(clock() - t0) / CLOCKS_PER_SEC < seconds) {
        for (int k = 0; k < 4; k++) {
            size_t len = mutate_log(buf, cap, g_b, g_cap_b, g_r, g_cap_r);
            run_one(buf, len);
            iters++;
        }
    }
    printf("%s: %lu inputs from %d corpus segments, no crash\n", name, iters, g_n);
    free(buf);
    free(g_b);
    free(g_r);
    for (int i = 0; i < g_n; i++)
        free(g_seg[i]);
    free_table();
    return 0;
}

#endif
