/*
 * Fuzz target for the log scanner (csrc/kc_batch.c) and the checksums it uses
 * (csrc/kc_crc32c.c): every function kcodec/log/_records.pyx calls.
 *
 * Properties checked (abort() on violation, so sanitizers and the fuzzer see it):
 *   - no crash, no out-of-bounds access, no UB (build with ASan + UBSan);
 *   - kc_scan: a final scan consumes the whole input (unless its arrays are full);
 *     batch rows are in order, each inside the input, its records' key / value /
 *     header positions inside the input; scans with tiny output arrays, without CRC
 *     checks, and split into a non-final window plus the rest, stay in bounds and
 *     make progress;
 *   - kc_resync returns a position in [from, len];
 *   - kc_records_parse, kc_headers_parse and kc_legacy_parse (v2 records, headers,
 *     a legacy inner message set) keep every position inside the input;
 *   - CRC-32C (hardware and portable) agree, and CRC-32 matches a bitwise one.
 *
 * libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER -Icsrc \
 *       csrc/kc_batch.c csrc/kc_crc32c.c csrc/fuzz/fuzz_batch.c -o fuzz_batch
 * Standalone mutation driver (gcc or clang, what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_batch.c csrc/kc_crc32c.c csrc/fuzz/fuzz_batch.c -o fuzz_batch
 *   ./fuzz_batch corpus.txt SECONDS SEED
 *   (corpus.txt: one hex-encoded log segment per line; the tests write record
 *   batches, legacy message sets and fixture segments there)
 */
#define FUZZ_NAME "fuzz_batch"

#include "kc_batch.h"
#include "kc_crc32c.h"
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

static void check_records(const kc_record *r, size_t n, size_t len, const uint8_t *buf)
{
    for (size_t i = 0; i < n; i++) {
        check(r[i].key_len >= -1 && r[i].value_len >= -1, "negative length below -1");
        if (r[i].key_len > 0)
            check(r[i].key_pos >= 0 && (size_t)r[i].key_pos + (size_t)r[i].key_len <= len,
                  "key outside the input");
        if (r[i].value_len > 0)
            check(r[i].value_pos >= 0 && (size_t)r[i].value_pos + (size_t)r[i].value_len <= len,
                  "value outside the input");
        check(r[i].headers_pos >= 0 && (size_t)r[i].headers_pos <= len, "headers outside");
        if (r[i].headers_count > 0) {
            check((size_t)r[i].headers_count <= len, "more headers than bytes");
            kc_header *h = (kc_header *)malloc(sizeof(kc_header) * (size_t)r[i].headers_count);
            int ok = kc_headers_parse(buf, len, (size_t)r[i].headers_pos, r[i].headers_count, h);
            check(ok == 0, "headers the record parse accepted do not parse");
            for (int32_t j = 0; j < r[i].headers_count; j++) {
                check((size_t)h[j].key_pos + (size_t)h[j].key_len <= len, "header key outside");
                if (h[j].value_len > 0)
                    check((size_t)h[j].value_pos + (size_t)h[j].value_len <= len,
                          "header value outside");
            }
            free(h);
        }
    }
}

static void check_scan(const uint8_t *buf, size_t len, size_t consumed, const kc_batch *b,
                       size_t nb, const kc_record *r, size_t nr)
{
    check(consumed <= len, "consumed past the input");
    int64_t last = -1;
    for (size_t i = 0; i < nb; i++) {
        check(b[i].position > last, "batch rows out of order");
        last = b[i].position;
        check(b[i].next_position > b[i].position || b[i].status == KC_ST_FULL,
              "no progress past a batch");
        check((size_t)b[i].next_position <= len, "next position past the input");
        check(b[i].first_record >= 0 && (size_t)b[i].first_record + (size_t)b[i].records_parsed <= nr,
              "batch records outside the record array");
        for (int32_t k = 0; k < b[i].records_parsed; k++)
            check(r[b[i].first_record + k].batch_index == (int32_t)i, "record of another batch");
    }
    check_records(r, nr, len, buf);
}

static void scan_all(const uint8_t *buf, size_t len, int verify, size_t cap_b, size_t cap_r)
{
    kc_batch *b = (kc_batch *)malloc(sizeof(kc_batch) * (cap_b ? cap_b : 1));
    kc_record *r = (kc_record *)malloc(sizeof(kc_record) * (cap_r ? cap_r : 1));
    size_t pos = 0;
    int rounds = 0;
    while (pos < len) {
        size_t nb = 0, nr = 0;
        size_t c = kc_scan(buf + pos, len - pos, verify, 1, 1 << 20, b, cap_b, &nb, r, cap_r, &nr);
        check_scan(buf + pos, len - pos, c, b, nb, r, nr);
        if (c == 0)
            break;                       /* arrays too small for the next batch */
        pos += c;
        check(++rounds <= (int)len + 1, "scan loops");
    }
    free(b);
    free(r);
}

static void run_one(const uint8_t *data, size_t size)
{
    /* Exact-size copy, so ASan sees any read past the end. */
    uint8_t *buf = (uint8_t *)malloc(size ? size : 1);
    if (size)
        memcpy(buf, data, size);
    reader in = {data, size, size > 8 ? size - 8 : 0};

    /* One final scan with ample arrays: consumes everything. */
    size_t cap_b = size / 26 + 8, cap_r = size / 7 + 8;
    kc_batch *b = (kc_batch *)malloc(sizeof(kc_batch) * cap_b);
    kc_record *r = (kc_record *)malloc(sizeof(kc_record) * cap_r);
    size_t nb = 0, nr = 0;
    size_t c = kc_scan(buf, size, 1, 1, 1 << 20, b, cap_b, &nb, r, cap_r, &nr);
    check_scan(buf, size, c, b, nb, r, nr);
    check(c == size, "a final scan left bytes");

    /* A non-final window, then the rest. */
    size_t k = size ? take(&in, 0) * size / 256 : 0;
    nb = nr = 0;
    size_t c1 = kc_scan(buf, k, 1, 0, 1 << 20, b, cap_b, &nb, r, cap_r, &nr);
    check_scan(buf, k, c1, b, nb, r, nr);
    nb = nr = 0;
    size_t c2 = kc_scan(buf + c1, size - c1, 1, 1, 1 << 20, b, cap_b, &nb, r, cap_r, &nr);
    check_scan(buf + c1, size - c1, c2, b, nb, r, nr);

    /* Tiny arrays, no CRC checks, small max lengths. */
    scan_all(buf, size, 1, 1 + take(&in, 3), take(&in, 6));
    scan_all(buf, size, 0, cap_b, cap_r);
    nb = nr = 0;
    c = kc_scan(buf, size, 1, 1, take(&in, 200), b, cap_b, &nb, r, cap_r, &nr);
    check_scan(buf, size, c, b, nb, r, nr);

    /* Resync from a few places. */
    for (int i = 0; i < 3 && size; i++) {
        size_t from = take(&in, 0) * size / 256;
        size_t p = kc_resync(buf, size, from, (int)(take(&in, 2)), 1 << 20);
        check(p >= from && p <= size, "resync outside [from, len]");
    }

    /* The whole input as a v2 records section and as a legacy inner message set. */
    int st, field;
    size_t err_pos;
    int32_t count = (int32_t)take(&in, 0) - 1;
    int64_t n = kc_records_parse(buf, 0, size, count, -(int64_t)take(&in, 0) << 56,
                                 (int64_t)take(&in, 0) << 56, 0, r, cap_r, &st, &field, &err_pos);
    check(n >= 0 && (size_t)n <= cap_r && err_pos <= size, "records parse out of bounds");
    check_records(r, (size_t)n, size, buf);
    static const int64_t extremes[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1000};
    int64_t woff = extremes[take(&in, 6)];
    n = kc_legacy_parse(buf, size, (int)take(&in, 2), woff, extremes[take(&in, 6)],
                        (int)take(&in, 2), (int)take(&in, 2), 0, r, size / 26 + 1, &st, &field,
                        &err_pos);
    check(n >= 0 && (size_t)n <= size / 26 + 1 && err_pos <= size, "legacy parse out of bounds");
    check_records(r, (size_t)n, size, buf);

    /* Checksums. */
    check(kc_crc32c(0, buf, size) == kc_crc32c_portable(0, buf, size), "CRC-32C paths disagree");
    size_t half = size / 2;
    check(kc_crc32c(kc_crc32c(0, buf, half), buf + half, size - half) == kc_crc32c(0, buf, size),
          "CRC-32C does not continue");
    check(kc_crc32(0, buf, size) == crc32_bitwise(buf, size), "CRC-32 wrong");

    free(b);
    free(r);
    free(buf);
}

#ifdef KC_LIBFUZZER

#include "fuzz_main.h"    /* the libFuzzer hook; the driver below reads a corpus */

#else

#include "fuzz_rng.h"

#define MAX_CORPUS 4096

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

static void load_corpus(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *cur = (uint8_t *)malloc(cap);
    int hi = -1, ch;
    while ((ch = fgetc(f)) != EOF || len) {
        if (ch == '\n' || ch == EOF) {
            if (len && g_n < MAX_CORPUS) {
                g_seg[g_n] = cur;
                g_len[g_n++] = len;
                cur = (uint8_t *)malloc(cap = 1 << 16);
            }
            len = 0;
            hi = -1;
            if (ch == EOF)
                break;
            continue;
        }
        int v = hexval(ch);
        if (v < 0)
            continue;
        if (hi < 0) {
            hi = v;
            continue;
        }
        if (len == cap)
            cur = (uint8_t *)realloc(cur, cap *= 2);
        cur[len++] = (uint8_t)(hi << 4 | v);
        hi = -1;
    }
    free(cur);
    fclose(f);
}

/* One corrupted copy of a corpus segment: flips, overwrites, inserted garbage (some
 * shaped like a legacy entry header), cuts, zeroed stretches, splices. */
static size_t mutate(uint8_t *out, size_t cap)
{
    int which = (int)(rnd() % (unsigned)g_n);
    const uint8_t *src = g_seg[which];
    size_t len = g_len[which] < cap ? g_len[which] : cap;
    memcpy(out, src, len);
    int edits = 1 + (int)(rnd() % 4);
    for (int e = 0; e < edits && len; e++) {
        size_t at = rnd() % len;
        switch (rnd() % 7) {
        case 0:
            out[at] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 1:
            out[at] = (uint8_t)rnd();
            break;
        case 2: {                                /* insert garbage */
            size_t g = 1 + rnd() % 80;
            if (len + g > cap)
                break;
            memmove(out + at + g, out + at, len - at);
            for (size_t j = 0; j < g; j++)
                out[at + j] = (uint8_t)rnd();
            if (g > 17 && rnd() % 2) {           /* looks like a legacy entry */
                out[at + 16] = (uint8_t)(rnd() % 2);
                uint32_t sz = 14 + rnd() % 300;
                out[at + 8] = (uint8_t)(sz >> 24);
                out[at + 9] = (uint8_t)(sz >> 16);
                out[at + 10] = (uint8_t)(sz >> 8);
                out[at + 11] = (uint8_t)sz;
            }
            len += g;
            break;
        }
        case 3:
            len = at;
            break;
        case 4: {
            size_t z = 1 + rnd() % 128;
            if (at + z > len)
                z = len - at;
            memset(out + at, 0, z);
            break;
        }
        case 5: {                                /* splice another segment's bytes */
            int o = (int)(rnd() % (unsigned)g_n);
            size_t take_n = g_len[o] ? rnd() % g_len[o] : 0;
            if (at + take_n > cap)
                take_n = cap - at;
            memcpy(out + at, g_seg[o], take_n);
            if (at + take_n > len)
                len = at + take_n;
            break;
        }
        default: {                               /* a length field made absurd */
            if (at + 12 <= len) {
                uint32_t v = rnd();
                out[at + 8] = (uint8_t)(v >> 24);
                out[at + 11] = (uint8_t)v;
            }
            break;
        }
        }
    }
    return len;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s corpus.txt seconds seed\n", argv[0]);
        return 2;
    }
    load_corpus(argv[1]);
    double seconds = atof(argv[2]);
    rnd_seed(argv[3]);
    size_t cap = 1 << 17;
    uint8_t *buf = (uint8_t *)malloc(cap);
    clock_t t0 = clock();
    unsigned long iters = 0;
    while ((double)(clock() - t0) / CLOCKS_PER_SEC < seconds) {
        for (int k = 0; k < 16; k++) {
            size_t len;
            if (g_n == 0 || rnd() % 8 == 0) {
                len = rnd() % 2048;
                for (size_t j = 0; j < len; j++)
                    buf[j] = (uint8_t)rnd();
            } else {
                len = mutate(buf, cap);
            }
            run_one(buf, len);
            iters++;
        }
    }
    printf("%s: %lu inputs from %d corpus segments, no crash\n", FUZZ_NAME, iters, g_n);
    free(buf);
    for (int i = 0; i < g_n; i++)
        free(g_seg[i]);
    return 0;
}

#endif
