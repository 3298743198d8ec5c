/* Kafka's JSON text from the engine's tape, and metadata-log dump lines (kc_kjson.h). */
#include "kc_kjson.h"
#include "kc_engine.h"
#include "kc_jtext.h"

#include <stdlib.h>
#include <string.h>

/* Fields of one struct the writer keeps slot positions for (the check refuses more). */
#define KJ_MAX_FIELDS 128
#define KJ_NONE ((size_t)-1)
#define KJ_ENTRY 6

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
    const int32_t *code, *plan;
    const char *blob;
    const uint8_t *buf;
    const int64_t *tape;
    size_t n;
    char *p, *end;
    int depth;
} kj;

/* Room for m more bytes (+ the fixed-size copies' slack), or KC_E_SHORT. */
#define NEED(k, m)                                                   \
    do {                                                             \
        if ((size_t)((k)->end - (k)->p) < (size_t)(m) + 32)          \
            return KC_E_SHORT;                                       \
    } while (0)

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)

static int kj_struct(kj *k, int sidx, size_t *i);

static inline char *put_num(char *p, int64_t v)
{
    return p + write_num(p, v);
}

static int kj_value(kj *k, int type, int flags, int arg, size_t *i)
{
    if (type == KC_T_STRUCT && !(flags & KC_F_NULLABLE))
        return kj_struct(k, arg, i);      /* no presence slot (and maybe no slot at all) */
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
        k->p = put_num(k->p, v);
        return KC_OK;
    case KC_T_UUID: case KC_T_STRING: case KC_T_BYTES: case KC_T_RECORDS: {
        if (v == 0) {
            NEED(k, 4);
            LIT(k->p, "null");
            return KC_OK;
        }
        const uint8_t *s = k->buf + KC_REF_OFF(v);
        size_t len = KC_REF_LEN(v);
        if (type == KC_T_STRING) {
            NEED(k, 2 + 6 * len);
            k->p = write_string_hex(k->p, s, s + len, HEX_UPPER);   /* as Jackson escapes */
            return KC_OK;
        }
        if (type == KC_T_UUID && len != 16)
            return KC_E_TAPE;
        NEED(k, 4 * (len / 3 + 1) + 2);
        *k->p++ = '"';
        k->p = type == KC_T_UUID ? base64(k->p, s, len, B64URL, 0) : base64(k->p, s, len, B64, 1);
        *k->p++ = '"';
        return KC_OK;
    }
    case KC_T_STRUCT:
        if (v == 0) {
            NEED(k, 4);
            LIT(k->p, "null");
            return KC_OK;
        }
        return kj_struct(k, arg, i);
    case KC_T_ARRAY: {
        NEED(k, 4);
        if (v < 0) {
            LIT(k->p, "null");
            return KC_OK;
        }
        if ((uint64_t)v > k->n)
            return KC_E_TAPE;
        int et = arg & 0xFF, es = arg >> 8;
        if (et >= KC_T_INT8 && et <= KC_T_INT64 && et != KC_T_FLOAT64) {
            /* ints (replicas, ISRs): one room check, no call per element */
            if ((uint64_t)v > k->n - *i)
                return KC_E_TAPE;
            NEED(k, 21 * (size_t)v + 2);
            *k->p++ = '[';
            const int64_t *t = k->tape + *i;
            for (int64_t e = 0; e < v; e++) {
                if (e)
                    *k->p++ = ',';
                k->p = put_num(k->p, t[e]);
            }
            *k->p++ = ']';
            *i += (size_t)v;
            return KC_OK;
        }
        *k->p++ = '[';
        for (int64_t e = 0; e < v; e++) {
            if (e) {
                NEED(k, 1);
                *k->p++ = ',';
            }
            int rc = kj_value(k, et, flags & KC_F_COMPACT, es, i);
            if (rc != KC_OK)
                return rc;
        }
        NEED(k, 1);
        *k->p++ = ']';
        return KC_OK;
    }
    default:          /* float64: Jackson's double text is not ours to write (the check refuses it) */
        return KC_E_PROGRAM;
    }
}

static int kj_is_default(const kj *k, const int32_t *e, int type, size_t j)
{
    int64_t v = k->tape[j];
    switch (e[3]) {
    case KC_KJ_D_INT:
        return v == (int64_t)((uint64_t)(uint32_t)e[5] << 32 | (uint32_t)e[4]);
    case KC_KJ_D_NULL:
        return type == KC_T_ARRAY ? v < 0 : v == 0;
    case KC_KJ_D_EMPTY:
        return type == KC_T_ARRAY ? v == 0 : (v != 0 && KC_REF_LEN(v) == 0);
    case KC_KJ_D_STR:
        return v != 0 && KC_REF_LEN(v) == (size_t)e[5]
            && memcmp(k->buf + KC_REF_OFF(v), k->blob + e[4], (size_t)e[5]) == 0;
    case KC_KJ_D_UUID_ZERO: {
        static const uint8_t zero[16];
        return v != 0 && KC_REF_LEN(v) == 16 && memcmp(k->buf + KC_REF_OFF(v), zero, 16) == 0;
    }
    default:
        return 0;
    }
}

static int kj_struct(kj *k, int sidx, size_t *i)
{
    size_t start[KJ_MAX_FIELDS], tstart[KJ_MAX_FIELDS];
    const int32_t *s = kc_prog_struct(k->code, sidx);
    int32_t nf = KC_S_NF(s), nt = KC_S_NT(s);
    if (++k->depth > KC_MAX_DEPTH)
        return KC_E_DEPTH;
    /* where each field's value starts: regular fields in wire order, then the tagged
     * entries in the order the tape has them (JSON order is the schema's) */
    for (int32_t f = 0; f < nf; f++) {
        const int32_t *fd = KC_S_FIELD(s, f);
        start[f] = *i;
        int64_t w;
        if (fd[0] != KC_T_STRUCT && fd[0] != KC_T_ARRAY) {
            w = 1;                    /* a scalar, string, bytes or uuid: one slot */
        } else if (fd[0] == KC_T_ARRAY && (fd[2] & 0xFF) != KC_T_STRUCT) {
            if (*i >= k->n)           /* an array of those: its count, then one slot each */
                return KC_E_TAPE;
            int64_t cnt = k->tape[*i];
            if (cnt >= 0 && (uint64_t)cnt > k->n - *i - 1)
                return KC_E_TAPE;
            w = cnt < 0 ? 1 : cnt + 1;
        } else {
            w = kc_tape_skip(k->code, k->tape, k->n, *i, fd[0], fd[1], fd[2], 0);
            if (w < 0)
                return KC_E_TAPE;
        }
        *i += (size_t)w;
    }
    for (int32_t q = 0; q < nt; q++)
        tstart[q] = KJ_NONE;
    if (KC_S_FLAGS(s) & 1) {
        if (*i >= k->n)
            return KC_E_TAPE;
        int64_t ne = k->tape[(*i)++];
        for (int64_t e = 0; e < ne; e++) {
            if (*i >= k->n)
                return KC_E_TAPE;
            int64_t q = k->tape[(*i)++];
            if (q < 0) {
                (*i)++;          /* an unknown tag's payload: dropped, as Kafka's JSON does */
                continue;
            }
            if (q >= nt)
                return KC_E_TAPE;
            const int32_t *td = KC_S_TAGGED(s, q);
            tstart[q] = *i;
            int64_t w = kc_tape_skip(k->code, k->tape, k->n, *i, td[1], td[2], td[3], 1);
            if (w < 0)
                return KC_E_TAPE;
            *i += (size_t)w;
        }
    }
    if (*i > k->n)
        return KC_E_TAPE;
    const int32_t *blk = k->plan + k->plan[2 + sidx];
    NEED(k, 1);
    *k->p++ = '{';
    int first = 1;
    for (int32_t o = 0; o < blk[0]; o++) {
        const int32_t *e = blk + 1 + KJ_ENTRY * o;
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
            if (j == KJ_NONE || kj_is_default(k, e, type, j))
                continue;          /* absent or at its default: Kafka leaves it out */
        }
        NEED(k, (size_t)e[1] + 1);
        if (!first)
            *k->p++ = ',';
        first = 0;
        memcpy(k->p, k->blob + e[0], (size_t)e[1]);
        k->p += e[1];
        int rc = kj_value(k, type, flags, arg, &j);
        if (rc != KC_OK)
            return rc;
    }
    NEED(k, 1);
    *k->p++ = '}';
    k->depth--;
    return KC_OK;
}

int kc_kjson_check(const int32_t *code, const int32_t *plan, size_t plan_len, size_t blob_len)
{
    if (plan_len < 2 || plan[0] != KC_KJ_MAGIC || plan[1] != code[1] || plan[1] < 1
        || (size_t)plan[1] + 2 > plan_len)
        return KC_E_PROGRAM;
    for (int32_t sidx = 0; sidx < plan[1]; sidx++) {
        const int32_t *s = kc_prog_struct(code, sidx);
        int32_t nf = KC_S_NF(s), nt = KC_S_NT(s);
        if (nf > KJ_MAX_FIELDS || nt > KJ_MAX_FIELDS)
            return KC_E_PROGRAM;
        for (int32_t f = 0; f < nf; f++)
            if (KC_S_FIELD(s, f)[0] == KC_T_FLOAT64
                || (KC_S_FIELD(s, f)[0] == KC_T_ARRAY && (KC_S_FIELD(s, f)[2] & 0xFF) == KC_T_FLOAT64))
                return KC_E_PROGRAM;
        for (int32_t q = 0; q < nt; q++)
            if (KC_S_TAGGED(s, q)[1] == KC_T_FLOAT64
                || (KC_S_TAGGED(s, q)[1] == KC_T_ARRAY && (KC_S_TAGGED(s, q)[3] & 0xFF) == KC_T_FLOAT64))
                return KC_E_PROGRAM;
        int64_t off = plan[2 + sidx];
        if (off < 2 + plan[1] || (size_t)off >= plan_len)
            return KC_E_PROGRAM;
        int64_t n_out = plan[off];
        if (n_out < 0 || (size_t)(off + 1 + KJ_ENTRY * n_out) > plan_len)
            return KC_E_PROGRAM;
        for (int64_t o = 0; o < n_out; o++) {
            const int32_t *e = plan + off + 1 + KJ_ENTRY * o;
            if (e[0] < 0 || e[1] < 0 || (size_t)e[0] + (size_t)e[1] > blob_len)
                return KC_E_PROGRAM;
            if (e[2] >= nf || -1 - e[2] >= nt)
                return KC_E_PROGRAM;
            if (e[3] < KC_KJ_D_NONE || e[3] > KC_KJ_D_UUID_ZERO || (e[2] >= 0) != (e[3] == KC_KJ_D_NONE))
                return KC_E_PROGRAM;
            if (e[3] == KC_KJ_D_STR && (e[4] < 0 || e[5] < 0 || (size_t)e[4] + (size_t)e[5] > blob_len))
                return KC_E_PROGRAM;
        }
    }
    return KC_OK;
}

int kc_kjson_write(const int32_t *code, const int32_t *plan, const char *blob,
                   const uint8_t *buf, const int64_t *tape, size_t n_slots,
                   char *out, size_t cap, size_t *out_len)
{
    kj k = {code, plan, blob, buf, tape, n_slots, out, out + cap, 0};
    size_t i = 0;
    *out_len = 0;
    int rc = kj_struct(&k, 0, &i);
    if (rc == KC_OK)
        *out_len = (size_t)(k.p - out);
    return rc;
}

/* ------------------------------------------------------------------------- dump lines */

/* A Java int's value of u (two's complement). */
static int32_t jint(uint32_t u)
{
    return u <= (uint32_t)INT32_MAX ? (int32_t)u : (int32_t)(u - 2147483648u) - INT32_MAX - 1;
}

/* Kafka's DefaultRecordBatch.incrementSequence, in Java's int arithmetic: past
 * Integer.MAX_VALUE a sequence wraps to 0, and a hostile increment (a negative
 * lastOffsetDelta) wraps as Java's does. */
static int64_t next_sequence(int32_t seq, int32_t increment)
{
    if (seq > jint((uint32_t)INT32_MAX - (uint32_t)increment))
        return jint((uint32_t)increment - ((uint32_t)INT32_MAX - (uint32_t)seq) - 1u);
    return jint((uint32_t)seq + (uint32_t)increment);
}

static char *put_i64(char *p, int64_t v)
{
    return put_num(p, v);
}

/* kafka-dump-log's line of an uncompressed, valid, non-control batch (v2). */
static char *batch_line(char *p, const kc_batch *b, int64_t position)
{
    LIT(p, "baseOffset: ");
    p = put_i64(p, b->base_offset);
    LIT(p, " lastOffset: ");
    p = put_i64(p, (int64_t)((uint64_t)b->base_offset + (uint64_t)(int64_t)b->last_offset_delta));
    LIT(p, " count: ");
    p = put_i64(p, b->record_count);
    LIT(p, " baseSequence: ");
    p = put_i64(p, b->base_sequence);
    LIT(p, " lastSequence: ");
    p = put_i64(p, b->base_sequence == -1 ? -1 : next_sequence(b->base_sequence, b->last_offset_delta));
    LIT(p, " producerId: ");
    p = put_i64(p, b->producer_id);
    LIT(p, " producerEpoch: ");
    p = put_i64(p, b->producer_epoch);
    LIT(p, " partitionLeaderEpoch: ");
    p = put_i64(p, b->partition_leader_epoch);
    if (b->attributes & 0x10)
        LIT(p, " isTransactional: true isControl: false deleteHorizonMs: ");
    else
        LIT(p, " isTransactional: false isControl: false deleteHorizonMs: ");
    if (b->attributes & 0x40) {
        LIT(p, "OptionalLong[");
        p = put_i64(p, b->base_timestamp);
        LIT(p, "]");
    } else {
        LIT(p, "OptionalLong.empty");
    }
    LIT(p, " position: ");
    p = put_i64(p, position);
    if (b->attributes & 0x08)
        LIT(p, " LogAppendTime: ");
    else
        LIT(p, " CreateTime: ");
    p = put_i64(p, b->max_timestamp);
    LIT(p, " size: ");
    p = put_i64(p, (int64_t)b->batch_length + 12);
    LIT(p, " magic: 2 compresscodec: none crc: ");
    p = put_i64(p, (int64_t)b->crc);
    LIT(p, " isvalid: true\n");
    return p;
}

/* An unsigned varint of up to 5 bytes at s[*at..n); -1 when it is not one. */
static int64_t uvarint(const uint8_t *s, size_t n, size_t *at)
{
    uint32_t v = 0;
    for (int sh = 0; sh < 35 && *at < n; sh += 7) {
        uint8_t c = s[(*at)++];
        v |= (uint32_t)(c & 0x7F) << sh;
        if (!(c & 0x80))
            return v;
    }
    return -1;
}

int kc_kdump_lines(const kc_kdump_type *types, int32_t n_keys, int32_t n_versions,
                   const uint8_t *data, size_t data_len,
                   const kc_batch *batches, int64_t n_batches,
                   const kc_record *recs, int64_t n_recs,
                   kc_kdump_state *st, char *out, size_t cap, size_t *out_len)
{
    char *p = out, *end = out + cap;
    int64_t *tape = NULL;
    size_t tcap = 0;
    int rc = KC_KD_DONE;
    /* a batch's records mostly share one timestamp: its text is kept */
    int64_t last_ts = 0;
    char ts_text[32];
    int ts_len = 0;
    *out_len = 0;
    if (n_keys < 0 || n_versions < 0 || st->batch < 0)
        return KC_E_INVALID;
    while (st->batch < n_batches) {
        const kc_batch *b = &batches[st->batch];
        if (st->record < 0) {
            if (b->status != KC_OK || !b->crc_ok || b->magic != 2 || (b->attributes & 0x20)
                || b->records_parsed != b->record_count || b->first_record < 0
                || b->first_record + b->records_parsed > n_recs) {
                rc = KC_KD_BATCH;          /* compressed, corrupt, control, legacy */
                break;
            }
            if (end - p < 640) {
                rc = KC_KD_FULL;
                break;
            }
            p = batch_line(p, b, st->position);
            st->record = 0;
        }
        for (; st->record < b->records_parsed; st->record++) {
            const kc_record *r = &recs[b->first_record + st->record];
            if (end - p < 320) {
                rc = KC_KD_FULL;
                goto done;
            }
            if (r->headers_count != 0 || r->value_len < 0 || r->value_pos < 0
                || (size_t)r->value_pos + (size_t)r->value_len > data_len) {
                rc = KC_KD_RECORD;
                goto done;
            }
            /* MetadataRecordSerde's frame: frame version 1, api key, version */
            size_t vend = (size_t)r->value_pos + (size_t)r->value_len, at = (size_t)r->value_pos;
            int64_t fv = uvarint(data, vend, &at);
            int64_t key = uvarint(data, vend, &at);
            int64_t ver = uvarint(data, vend, &at);
            const kc_kdump_type *t = NULL;
            if (fv == 1 && key >= 0 && key < n_keys && ver >= 0 && ver < n_versions)
                t = &types[key * n_versions + ver];
            if (t == NULL || t->code == NULL) {
                rc = KC_KD_RECORD;         /* unknown type or version, bad frame */
                goto done;
            }
            size_t need = (size_t)r->value_len + 2, used = 0, stop = 0;
            if (need > tcap) {
                free(tape);
                tcap = need < 256 ? 256 : 2 * need;
                tape = malloc(tcap * sizeof *tape);
                if (!tape) {
                    rc = KC_E_NOMEM;
                    goto done;
                }
            }
            if (kc_decode(t->code, data, vend, at, tape, tcap, &stop, &used, NULL) != KC_OK
                || stop != vend) {
                rc = KC_KD_RECORD;         /* the caller's way says what is wrong */
                goto done;
            }
            char *line = p;
            LIT(p, "| offset: ");
            p = put_i64(p, r->offset);
            if (b->attributes & 0x08)
                LIT(p, " LogAppendTime: ");
            else
                LIT(p, " CreateTime: ");
            if (ts_len == 0 || r->timestamp != last_ts) {
                last_ts = r->timestamp;
                ts_len = write_i64(ts_text, last_ts);
            }
            memcpy(p, ts_text, 24);
            p += ts_len;
            LIT(p, " keySize: ");
            p = put_i64(p, r->key_len);
            LIT(p, " valueSize: ");
            p = put_i64(p, r->value_len);
            LIT(p, " sequence: ");
            /* DefaultRecord: a sequence only under a base sequence >= 0; the increment is
             * the record's offset delta (offsets wrap as Java's longs do) */
            p = put_i64(p, b->base_sequence < 0 ? -1 : next_sequence(b->base_sequence,
                        jint((uint32_t)((uint64_t)r->offset - (uint64_t)b->base_offset))));
            LIT(p, " headerKeys: []");
            if ((size_t)(end - p) < (size_t)t->head_len + 64) {
                p = line;
                rc = KC_KD_FULL;
                goto done;
            }
            memcpy(p, t->head, (size_t)t->head_len);
            p += t->head_len;
            size_t n = 0;
            int w = kc_kjson_write(t->code, t->plan, t->blob, data, tape, used, p,
                                   (size_t)(end - p) - 2, &n);
            if (w != KC_OK) {
                p = line;
                rc = w == KC_E_SHORT ? KC_KD_FULL : KC_KD_RECORD;
                goto done;
            }
            p += n;
            *p++ = '}';
            *p++ = '\n';
        }
        st->position += (int64_t)b->batch_length + 12;
        st->batch++;
        st->record = -1;
    }
done:
    free(tape);
    *out_len = (size_t)(p - out);
    return rc;
}
