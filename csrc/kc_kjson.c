/* kafka-dump-log's lines of metadata logs (kc_kjson.h); the records' JSON by kc_tjson.c's
 * writer in Jackson's compact style. */
#include "kc_kjson.h"
#include "kc_engine.h"
#include "kc_jtext.h"
#include "kc_tjson.h"

#include <stdlib.h>
#include <string.h>

#define LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)

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
    return p + write_num(p, v);
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
            kc_tj_msg m = {t->code, t->plan, t->blob, NULL, 0, NULL};
            int w = kc_tjson_write(&m, KC_TJ_COMPACT, 0, data, data_len, tape, used, NULL, 0, p,
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
