/*
 * Fuzz target for `kcodec kraft dump`'s C line writer (csrc/kc_kjson.c: kc_kdump_lines
 * and kc_tjson_write in the compact style), driven as kcodec/kraft/_dump.pyx drives it: corrupted
 * __cluster_metadata segments and snapshots (fuzz_dump.h's batch-aware mutations, CRCs
 * made right again) scanned by kc_scan, then kc_kdump_lines with the package's own
 * (api key, version) table until DONE, handing back batches and records as
 * kcodec.kraft.dump's caller does.  The binding gives the writer only windows whose
 * batches are all clean; here it gets whatever the scanner found as well.
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan); the output
 *     buffer is allocated at its exact size;
 *   - the status is a KC_KD_* code; out_len <= cap; only whole lines, well-formed UTF-8;
 *     record lines start "| offset: ", batch lines "baseOffset: ";
 *   - the caller's loop (double the room on an empty FULL) ends in a bounded number of
 *     calls; the text and what is handed back do not depend on the output's size;
 *   - kc_tjson_write alone at any room: OK within cap, or SHORT and then the same
 *     answer with room to spare, the same text either way.
 *
 * Standalone mutation driver (what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_kjson.c csrc/kc_tjson.c csrc/kc_engine.c csrc/kc_batch.c csrc/kc_crc32c.c \
 *       csrc/fuzz/fuzz_kdump.c -o fuzz_kdump
 *   ./fuzz_kdump tables.txt corpus.txt SECONDS SEED
 * (tables.txt: written by tests/test_dump_fuzz.py from kcodec.kraft.dump's table.)
 */
#define FUZZ_NAME "fuzz_kdump"

#include "kc_kjson.h"
#include "kc_tjson.h"
#include "kc_status.h"
#include "fuzz_dump.h"


static kc_kdump_type *g_types;
static int32_t g_nkeys, g_nver;
static void *g_owned[16384];
static int g_nowned;

static void *own(void *p)
{
    g_owned[g_nowned++] = p;
    return p;
}

/* n_keys n_versions n_entries, then per entry: key version code plan blob head */
static void load_table(const char *path)
{
    size_t n;
    toks t;
    t.s = t.at = own(slurp(path, &n));
    g_nkeys = (int32_t)tok_int(&t);
    g_nver = (int32_t)tok_int(&t);
    int32_t ne = (int32_t)tok_int(&t);
    g_types = own(calloc((size_t)g_nkeys * (size_t)g_nver + 1, sizeof *g_types));
    for (int32_t i = 0; i < ne; i++) {
        int32_t key = (int32_t)tok_int(&t), ver = (int32_t)tok_int(&t);
        size_t nc, np, nb, nh;
        kc_kdump_type *e = &g_types[key * g_nver + ver];
        int32_t *code = own(tok_words(&t, &nc));
        int32_t *plan = own(tok_words(&t, &np));
        e->blob = own(tok_bytes(&t, &nb, 0));
        e->head = own(tok_bytes(&t, &nh, 0));
        e->head_len = (int32_t)nh;
        if (kc_program_check(code, nc) != KC_OK || kc_tjson_check(code, plan, np, nb, 0) != KC_OK) {
            fprintf(stderr, "table: a program or plan does not check\n");
            exit(2);
        }
        e->code = code;
        e->plan = plan;
    }
}

static void check_lines(const char *out, size_t n)
{
    check(n == 0 || out[n - 1] == '\n', "a line cut off");
    check(utf8_ok((const uint8_t *)out, n), "the text is not UTF-8");
    for (size_t at = 0; at < n; ) {
        const char *eol = memchr(out + at, '\n', n - at);
        size_t ll = (size_t)(eol - (out + at)) + 1;
        check((ll > 10 && memcmp(out + at, "| offset: ", 10) == 0 && out[at + ll - 2] == '}')
              || (ll > 12 && memcmp(out + at, "baseOffset: ", 12) == 0), "a line of another kind");
        at += ll;
    }
}

static void dump(const uint8_t *buf, size_t len, const kc_batch *b, size_t nb,
                 const kc_record *r, size_t nr, size_t cap0, int64_t pos0, transcript *tr)
{
    kc_kdump_state st = {0, -1, pos0};
    size_t cap = cap0;
    long calls = 0;
    for (;;) {
        char *out = malloc(cap ? cap : 1);
        size_t n = 12345;
        int rc = kc_kdump_lines(g_types, g_nkeys, g_nver, buf, len, b, (int64_t)nb, r, (int64_t)nr,
                                &st, out, cap, &n);
        check(rc >= KC_KD_DONE && rc <= KC_KD_RECORD, "status");
        check(n <= cap, "out_len past cap");
        check_lines(out, n);
        append(tr, out, n);
        free(out);
        check(++calls < 4 * (long)(nb + nr) + 64, "the caller's loop does not end");
        if (rc == KC_KD_DONE)
            break;
        if (rc == KC_KD_FULL) {
            if (n == 0) {
                check(cap < (1u << 26), "FULL with ample room");
                cap = 2 * cap + 64;
            }
            continue;
        }
        check(st.batch >= 0 && (size_t)st.batch < nb, "handed back a batch past the end");
        char ev[64];
        int el;
        if (rc == KC_KD_BATCH) {
            check(st.record < 0, "a batch handed back after its line");
            el = snprintf(ev, sizeof ev, "<B%lld@%lld>\n", (long long)st.batch, (long long)st.position);
            st.position += (int64_t)b[st.batch].batch_length + 12;
            st.batch++;
            st.record = -1;
        } else {
            check(st.record >= 0 && st.record < b[st.batch].records_parsed, "handed back no record");
            el = snprintf(ev, sizeof ev, "<R%lld.%lld>\n", (long long)st.batch, (long long)st.record);
            st.record++;
        }
        append(tr, ev, (size_t)el);
        tr->events++;
    }
}

/* kc_tjson_write (compact, as the kraft dump writes) alone on a record's value, decoded by the program its frame names. */
static void kjson_alone(const uint8_t *buf, size_t len, const kc_record *r)
{
    if (r->value_len < 3 || (size_t)r->value_pos + (size_t)r->value_len > len)
        return;
    const uint8_t *v = buf + r->value_pos;
    int32_t key = v[1] & 0x7F, ver = v[2] & 0x7F;
    if (key >= g_nkeys || ver >= g_nver || !g_types[key * g_nver + ver].code)
        return;
    const kc_kdump_type *t = &g_types[key * g_nver + ver];
    size_t end = (size_t)r->value_pos + (size_t)r->value_len;
    size_t slots = (size_t)r->value_len + 2, stop, used;
    int64_t *tape = malloc(slots * sizeof *tape);
    if (kc_decode(t->code, buf, end, (size_t)r->value_pos + 3, tape, slots, &stop, &used, NULL) == KC_OK) {
        size_t cap = rnd() % 400, big = 64 + 8 * slots + 16 * 1024, w1 = 7, w2 = 7;
        char *o1 = malloc(cap ? cap : 1), *o2 = malloc(big);
        kc_tj_msg m = {t->code, t->plan, t->blob, NULL, 0, NULL};
        int rc1 = kc_tjson_write(&m, KC_TJ_COMPACT, 0, buf, len, tape, used, NULL, 0, o1, cap, &w1);
        int rc2 = kc_tjson_write(&m, KC_TJ_COMPACT, 0, buf, len, tape, used, NULL, 0, o2, big, &w2);
        check(rc2 != KC_E_SHORT, "kjson: SHORT with room to spare");
        check(rc1 == rc2 || rc1 == KC_E_SHORT, "kjson: the room changed the answer");
        if (rc1 == KC_OK)
            check(w1 <= cap && w1 == w2 && memcmp(o1, o2, w1) == 0, "kjson: the room changed the text");
        if (rc2 == KC_OK)
            check(utf8_ok((const uint8_t *)o2, w2) && w2 >= 2 && o2[0] == '{' && o2[w2 - 1] == '}',
                  "kjson: not an object");
        free(o1);
        free(o2);
    }
    free(tape);
}

static void run_one(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (size)
        memcpy(buf, data, size);
    size_t nb = 0, nr = 0;
    kc_scan(buf, size, rnd() % 4 != 0, 1, 1 << 30, g_b, g_cap_b, &nb, g_r, g_cap_r, &nr);
    int64_t pos0 = rnd() % 4 ? 0 : edge64() / 2;
    transcript small = {NULL, 0, 0, 0}, large = {NULL, 0, 0, 0};
    dump(buf, size, g_b, nb, g_r, nr, rnd() % 900, pos0, &small);
    dump(buf, size, g_b, nb, g_r, nr, 1 << 20, pos0, &large);
    check(small.len == large.len && (small.len == 0 || memcmp(small.text, large.text, small.len) == 0)
          && small.events == large.events, "the text depends on the buffer's size");
    free(small.text);
    free(large.text);
    for (int k = 0; k < 4 && nr; k++)
        kjson_alone(buf, size, &g_r[rnd() % nr]);
    free(buf);
}

static void free_table(void)
{
    for (int i = 0; i < g_nowned; i++)
        free(g_owned[i]);
}

int main(int argc, char **argv)
{
    return dump_main(argc, argv, FUZZ_NAME, load_table, run_one, free_table);
}
