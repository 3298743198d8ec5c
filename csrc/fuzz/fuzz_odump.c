/*
 * Fuzz target for `kcodec offsets dump`'s C line writer (csrc/kc_odump.c) and the tape
 * JSON writer under it (csrc/kc_tjson.c), driven as kcodec/offsets/_odump.pyx drives
 * them: corrupted __consumer_offsets segments (fuzz_dump.h's batch-aware mutations,
 * CRCs made right again) scanned by kc_scan, then kc_odump_lines with the package's own
 * record-type table (keys, every value version, group metadata with its members'
 * consumer-protocol metadata embedded) until DONE, handing back batches and records as
 * the binding's caller does.
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan); the output
 *     buffer is allocated at its exact size;
 *   - the status is a KC_OD_* code; out_len <= cap; only whole lines are written (each
 *     starts with the head and ends with "}\n"), well-formed UTF-8;
 *   - FULL is given only when a line does not fit: the caller's loop (double the room
 *     on an empty FULL) ends, and in a bounded number of calls;
 *   - the text and the records handed back do not depend on the output's size: a run
 *     with small buffers equals a run with one large buffer;
 *   - kc_tjson_write alone, both styles, at any room: OK within cap, or SHORT and then
 *     OK (or the same refusal) with room to spare, the same text either way.
 *
 * Standalone mutation driver (what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_odump.c csrc/kc_tjson.c csrc/kc_engine.c csrc/kc_batch.c csrc/kc_crc32c.c \
 *       csrc/fuzz/fuzz_odump.c -o fuzz_odump
 *   ./fuzz_odump tables.txt corpus.txt SECONDS SEED
 * (tables.txt: the record-type table, written by tests/test_dump_fuzz.py from
 * kcodec.offsets.dump's; corpus.txt: one hex segment a line.)
 */
#define FUZZ_NAME "fuzz_odump"

#include "kc_odump.h"
#include "kc_tjson.h"
#include "kc_status.h"
#include "fuzz_dump.h"



/* ------------------------------------------------------------------ the table */

static kc_odump_type *g_types;
static int32_t g_ntypes;
static kc_tj_msg *g_msgs[4096];          /* every message, for kc_tjson_write alone */
static int g_nmsgs;
static void *g_owned[65536];
static int g_nowned;

static void *own(void *p)
{
    g_owned[g_nowned++] = p;
    return p;
}

/* M n_code code.. n_plan plan.. blob n_embeds (n_versions msg..).. */
static void read_msg(toks *t, kc_tj_msg *m)
{
    size_t nc, np, nb;
    if (strcmp(tok(t), "M") != 0) {
        fprintf(stderr, "table: a message expected\n");
        exit(2);
    }
    int32_t *code = own(tok_words(t, &nc));
    int32_t *plan = own(tok_words(t, &np));
    char *blob = own(tok_bytes(t, &nb, 0));
    int32_t ne = (int32_t)tok_int(t);
    kc_tj_embed *emb = ne ? own(calloc((size_t)ne, sizeof *emb)) : NULL;
    for (int32_t i = 0; i < ne; i++) {
        int32_t nv = (int32_t)tok_int(t);
        kc_tj_msg *vs = own(calloc((size_t)nv, sizeof *vs));
        for (int32_t j = 0; j < nv; j++)
            read_msg(t, &vs[j]);
        emb[i].versions = vs;
        emb[i].n_versions = nv;
    }
    if (kc_program_check(code, nc) != KC_OK || kc_tjson_check(code, plan, np, nb, ne) != KC_OK) {
        fprintf(stderr, "table: a program or plan does not check\n");
        exit(2);
    }
    m->code = code;
    m->plan = plan;
    m->blob = blob;
    m->embeds = emb;
    m->n_embeds = ne;
    if (g_nmsgs < 4096)
        g_msgs[g_nmsgs++] = m;
}

/* n_types, then per type: 0 | 1 key head n_values (0 | 1 msg has_alt [alt] sw_field
 * sw_text head)..; then ex_field ex_text */
static void load_table(const char *path)
{
    size_t n;
    toks t;
    t.s = t.at = own(slurp(path, &n));
    g_ntypes = (int32_t)tok_int(&t);
    g_types = own(calloc((size_t)g_ntypes + 1, sizeof *g_types));
    kc_odump_value *all_values[32768];
    int32_t n_all = 0;
    for (int32_t k = 0; k < g_ntypes; k++) {
        if (!tok_int(&t))
            continue;
        kc_odump_type *ty = &g_types[k];
        read_msg(&t, &ty->key);
        size_t hl;
        ty->head = own(tok_bytes(&t, &hl, KC_OD_PAD));
        ty->head_len = (int32_t)hl;
        ty->n_values = (int32_t)tok_int(&t);
        kc_odump_value *vals = own(calloc((size_t)ty->n_values + 1, sizeof *vals));
        ty->values = vals;
        for (int32_t v = 0; v < ty->n_values; v++) {
            if (!tok_int(&t))
                continue;
            kc_odump_value *val = &vals[v];
            read_msg(&t, &val->msg);
            if (tok_int(&t))
                read_msg(&t, &val->alt);
            val->sw_field = (int32_t)tok_int(&t);
            size_t sl;
            val->sw_text = own(tok_bytes(&t, &sl, 0));
            val->sw_len = (int32_t)sl;
            val->head = own(tok_bytes(&t, &hl, KC_OD_PAD));
            val->head_len = (int32_t)hl;
            if (val->alt.code && n_all < 32768)
                all_values[n_all++] = val;
        }
    }
    int32_t ex_field = (int32_t)tok_int(&t);
    size_t el;
    char *ex = own(tok_bytes(&t, &el, 0));
    for (int32_t i = 0; i < n_all; i++) {
        all_values[i]->ex_field = ex_field;
        all_values[i]->ex_text = ex;
        all_values[i]->ex_len = (int32_t)el;
    }
}

/* ------------------------------------------------------------------ one input */

static const char HEAD[] = "{\"file\": \"00000000000000000000.log\", \"position\": ";

static void check_lines(const char *out, size_t n, const char *head)
{
    size_t hl = strlen(head);
    check(n == 0 || out[n - 1] == '\n', "a line cut off");
    check(utf8_ok((const uint8_t *)out, n), "the text is not UTF-8");
    for (size_t at = 0; at < n; ) {
        const char *eol = memchr(out + at, '\n', n - at);
        check(eol != NULL, "a line without its end");
        size_t ll = (size_t)(eol - (out + at)) + 1;
        check(ll > hl + 2 && memcmp(out + at, head, hl) == 0, "a line without its head");
        check(out[at + ll - 2] == '}', "a line not ending in }");
        at += ll;
    }
}

/* Every line of the window: the caller's loop with buffers of `cap0` bytes to start. */
static void dump(const uint8_t *buf, size_t len, const kc_batch *b, size_t nb,
                 const kc_record *r, size_t nr, const kc_odump_sel *sel, size_t cap0,
                 int64_t base, transcript *tr)
{
    kc_odump_state st = {0, -1};
    size_t cap = cap0;
    long calls = 0;
    for (;;) {
        char *out = malloc(cap ? cap : 1);         /* exact size: ASan sees past it */
        size_t n = 12345;
        int rc = kc_odump_lines(g_types, g_ntypes, sel, HEAD, (int32_t)strlen(HEAD), base, buf,
                                len, b, (int64_t)nb, r, (int64_t)nr, &st, out, cap, &n);
        check(rc >= KC_OD_DONE && rc <= KC_OD_RECORD, "status");
        check(n <= cap, "out_len past cap");
        check_lines(out, n, HEAD);
        append(tr, out, n);
        free(out);
        check(++calls < 4 * (long)(nb + nr) + 64, "the caller's loop does not end");
        if (rc == KC_OD_DONE)
            break;
        if (rc == KC_OD_FULL) {
            if (n == 0) {
                check(cap < (1u << 26), "FULL with ample room");
                cap = 2 * cap + 64;
            }
            continue;
        }
        check(st.batch >= 0 && (size_t)st.batch < nb, "handed back a batch past the end");
        char ev[48];
        int el;
        if (rc == KC_OD_BATCH) {
            el = snprintf(ev, sizeof ev, "<B%lld>\n", (long long)st.batch);
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

/* kc_tjson_write alone on a record's value (or key) decoded by one of the table's
 * messages. */
static void tjson_alone(const uint8_t *buf, size_t len, const kc_record *r)
{
    if (!g_nmsgs)
        return;
    const kc_tj_msg *m = g_msgs[rnd() % (unsigned)g_nmsgs];
    int key = rnd() % 2;
    int64_t p = key ? r->key_pos : r->value_pos;
    int32_t n = key ? r->key_len : r->value_len;
    if (n < 2 || (size_t)p + (size_t)n > len)
        return;
    size_t slots = (size_t)n + 2, stop, used;
    int64_t *tape = malloc(slots * sizeof *tape), *scratch = malloc(slots * sizeof *scratch);
    if (kc_decode(m->code, buf, (size_t)p + (size_t)n, (size_t)p + 2, tape, slots, &stop, &used,
                  NULL) == KC_OK) {
        int style = (int)(rnd() % 2), flags = (int)(rnd() % 2);
        size_t cap = rnd() % 512, big = 64 + 8 * (size_t)n + 16 * 1024, w1 = 7, w2 = 7;
        char *o1 = malloc(cap ? cap : 1), *o2 = malloc(big);
        int rc1 = kc_tjson_write(m, style, flags, buf, len, tape, used, scratch, slots, o1, cap, &w1);
        int rc2 = kc_tjson_write(m, style, flags, buf, len, tape, used, scratch, slots, o2, big, &w2);
        check(rc2 != KC_E_SHORT, "tjson: SHORT with room to spare");
        check(rc1 == rc2 || rc1 == KC_E_SHORT, "tjson: the room changed the answer");
        if (rc1 == KC_OK)
            check(w1 <= cap && w1 == w2 && memcmp(o1, o2, w1) == 0, "tjson: the room changed the text");
        if (rc2 == KC_OK)
            check(utf8_ok((const uint8_t *)o2, w2) && w2 >= 2 && o2[0] == '{' && o2[w2 - 1] == '}',
                  "tjson: not an object");
        else
            check(w2 == 0, "tjson: out_len after a failure");
        check(rc2 == KC_OK || rc2 == KC_E_TAPE || rc2 == KC_E_DEPTH || rc2 == KC_TJ_UNKNOWN_TAGS
              || rc2 == KC_E_INVALID, "tjson: status");
        free(o1);
        free(o2);
    }
    free(tape);
    free(scratch);
}

static void run_one(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);          /* exact size */
    if (size)
        memcpy(buf, data, size);
    size_t nb = 0, nr = 0;
    int verify = rnd() % 4 != 0;
    kc_scan(buf, size, verify, 1, 1 << 30, g_b, g_cap_b, &nb, g_r, g_cap_r, &nr);
    kc_odump_sel sel = {INT64_MIN, INT64_MAX, NULL};
    uint8_t bits[8192];
    if (rnd() % 4 == 0 && nr) {
        sel.first_offset = g_r[rnd() % nr].offset;
        sel.last_offset = rnd() % 2 ? INT64_MAX : g_r[rnd() % nr].offset;
    }
    if (rnd() % 4 == 0) {
        memset(bits, 0, sizeof bits);
        for (int k = 0; k < 4; k++) {
            int32_t ty = (int32_t)(rnd() % 8) - 1;
            bits[(uint16_t)ty >> 3] |= (uint8_t)(1u << ((uint16_t)ty & 7));
        }
        sel.types = bits;
    }
    int64_t base = rnd() % 4 ? 0 : edge64() / 2;
    transcript small = {NULL, 0, 0, 0}, large = {NULL, 0, 0, 0};
    dump(buf, size, g_b, nb, g_r, nr, &sel, rnd() % 600, base, &small);
    dump(buf, size, g_b, nb, g_r, nr, &sel, 1 << 20, base, &large);
    check(small.len == large.len && (small.len == 0 || memcmp(small.text, large.text, small.len) == 0)
          && small.events == large.events, "the text depends on the buffer's size");
    free(small.text);
    free(large.text);
    for (int k = 0; k < 4 && nr; k++)
        tjson_alone(buf, size, &g_r[rnd() % nr]);
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
