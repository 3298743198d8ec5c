/* Record batch v2 scanner: see kc_batch.h for the layout. */
#include "kc_batch.h"
#include "kc_crc32c.h"
#include "kc_varint.h"
#include "kc_wire.h"

#include <string.h>

/* kc_varint.h's readers with 0 for "does not parse" (truncated or too long): a record
 * field that fails either way is reported the same. */
static inline size_t rd_varint(const uint8_t *p, size_t avail, int32_t *out)
{
    int r = kc_read_varint(p, avail, out);
    return r > 0 ? (size_t)r : 0;
}

static inline size_t rd_varlong(const uint8_t *p, size_t avail, int64_t *out)
{
    int r = kc_read_varlong(p, avail, out);
    return r > 0 ? (size_t)r : 0;
}

void kc_batch_header(const uint8_t *p, kc_batch *b)
{
    b->base_offset = (int64_t)rd64(p);
    b->batch_length = (int32_t)rd32(p + 8);
    b->partition_leader_epoch = (int32_t)rd32(p + 12);
    b->magic = (int8_t)p[16];
    b->crc = rd32(p + 17);
    b->attributes = (int16_t)rd16(p + 21);
    b->last_offset_delta = (int32_t)rd32(p + 23);
    b->base_timestamp = (int64_t)rd64(p + 27);
    b->max_timestamp = (int64_t)rd64(p + 35);
    b->producer_id = (int64_t)rd64(p + 43);
    b->producer_epoch = (int16_t)rd16(p + 51);
    b->base_sequence = (int32_t)rd32(p + 53);
    b->record_count = (int32_t)rd32(p + 57);
}

#define KC_FAIL(f) do { *field = (f); *err_pos = pos; *status = KC_ST_BAD_RECORDS; return n; } while (0)

int64_t kc_records_parse(const uint8_t *buf, size_t start, size_t end, int32_t count,
                         int64_t base_offset, int64_t base_timestamp, int32_t batch_index,
                         kc_record *recs, size_t max_recs, int *status, int *field,
                         size_t *err_pos)
{
    size_t pos = start;
    int64_t n = 0;
    *status = KC_OK;
    *field = KC_RF_NONE;
    *err_pos = 0;
    while (pos < end && (count < 0 || n < (int64_t)count)) {
        if ((size_t)n >= max_recs) {
            *status = KC_ST_FULL;
            return n;
        }
        int32_t size, ival;
        int64_t lval;
        size_t k = rd_varint(buf + pos, end - pos, &size);
        if (!k)
            KC_FAIL(KC_RF_LENGTH);
        if (size < 0 || (size_t)size > end - pos - k)
            KC_FAIL(KC_RF_SIZE);
        size_t rec_start = pos;
        pos += k;
        size_t rend = pos + (size_t)size;   /* the record must end exactly here */
        kc_record *r = &recs[n];
        r->size = size;
        r->batch_index = batch_index;
        if (pos >= rend)
            KC_FAIL(KC_RF_ATTRIBUTES);
        r->attributes = buf[pos++];
        if (!(k = rd_varlong(buf + pos, rend - pos, &lval)))
            KC_FAIL(KC_RF_TIMESTAMP);
        pos += k;
        r->timestamp = (int64_t)((uint64_t)base_timestamp + (uint64_t)lval);
        if (!(k = rd_varint(buf + pos, rend - pos, &ival)))
            KC_FAIL(KC_RF_OFFSET);
        pos += k;
        r->offset = base_offset + ival;
        if (!(k = rd_varint(buf + pos, rend - pos, &ival)) || ival < -1 ||
            (ival > 0 && (size_t)ival > rend - pos - k))
            KC_FAIL(KC_RF_KEY);
        pos += k;
        r->key_len = ival;
        r->key_pos = (int64_t)pos;
        if (ival > 0)
            pos += (size_t)ival;
        if (!(k = rd_varint(buf + pos, rend - pos, &ival)) || ival < -1 ||
            (ival > 0 && (size_t)ival > rend - pos - k))
            KC_FAIL(KC_RF_VALUE);
        pos += k;
        r->value_len = ival;
        r->value_pos = (int64_t)pos;
        if (ival > 0)
            pos += (size_t)ival;
        if (!(k = rd_varint(buf + pos, rend - pos, &ival)) || ival < 0 ||
            (size_t)ival > rend - pos - k)   /* a header takes >= 2 bytes */
            KC_FAIL(KC_RF_HEADERS);
        pos += k;
        r->headers_count = ival;
        r->headers_pos = (int64_t)pos;
        for (int32_t h = 0; h < r->headers_count; h++) {
            int32_t hl;
            if (!(k = rd_varint(buf + pos, rend - pos, &hl)) || hl < 0 ||
                (size_t)hl > rend - pos - k)
                KC_FAIL(KC_RF_HEADER_KEY);
            pos += k + (size_t)hl;
            if (!(k = rd_varint(buf + pos, rend - pos, &hl)) || hl < -1 ||
                (hl > 0 && (size_t)hl > rend - pos - k))
                KC_FAIL(KC_RF_HEADER_VALUE);
            pos += k + (hl > 0 ? (size_t)hl : 0);
        }
        if (pos != rend) {
            pos = rec_start;
            KC_FAIL(KC_RF_SIZE);
        }
        n++;
    }
    if (count >= 0 && (n != (int64_t)count || pos != end)) {
        *status = KC_ST_COUNT_MISMATCH;
        *err_pos = pos;
    }
    return n;
}

int kc_headers_parse(const uint8_t *buf, size_t len, size_t pos, int32_t count,
                     kc_header *out)
{
    for (int32_t h = 0; h < count; h++) {
        int32_t l;
        size_t k;
        if (pos > len || !(k = rd_varint(buf + pos, len - pos, &l)) || l < 0 ||
            (size_t)l > len - pos - k)
            return -1;
        pos += k;
        out[h].key_pos = (int64_t)pos;
        out[h].key_len = l;
        pos += (size_t)l;
        if (!(k = rd_varint(buf + pos, len - pos, &l)) || l < -1 ||
            (l > 0 && (size_t)l > len - pos - k))
            return -1;
        pos += k;
        out[h].value_pos = (int64_t)pos;
        out[h].value_len = l;
        if (l > 0)
            pos += (size_t)l;
    }
    return 0;
}

/* Does a v2 batch plausibly start at p?  1 yes, 0 no, -1 undecidable (needs
 * bytes beyond the window). */
static int kc_plausible(const uint8_t *buf, size_t len, size_t p, int final,
                        int64_t max_len)
{
    if (len - p < KC_BATCH_HEADER_SIZE)
        return final ? 0 : -1;
    int32_t blen = (int32_t)rd32(buf + p + 8);
    if (buf[p + 16] != 2 || blen < KC_BATCH_MIN_LENGTH || (int64_t)blen > max_len)
        return 0;
    int16_t attr = (int16_t)rd16(buf + p + 21);
    if ((attr & 7) > 4)
        return 0;
    size_t total = KC_BATCH_OVERHEAD + (size_t)blen;
    if (total > len - p)
        return final ? 0 : -1;
    uint32_t crc = kc_crc32c(0, buf + p + 21, total - 21);
    return crc == rd32(buf + p + 17);
}

size_t kc_resync(const uint8_t *buf, size_t len, size_t from, int final,
                 int64_t max_batch_length)
{
    for (size_t p = from; p < len; p++) {
        /* Cheap filter first: magic byte 2 at +16. */
        if (len - p > 16 && buf[p + 16] != 2)
            continue;
        if (kc_plausible(buf, len, p, final, max_batch_length) != 0)
            return p;
    }
    return len;
}

size_t kc_scan(const uint8_t *buf, size_t len, int verify_crc, int final,
               int64_t max_batch_length,
               kc_batch *batches, size_t max_batches, size_t *n_batches,
               kc_record *recs, size_t max_recs, size_t *n_recs)
{
    size_t pos = 0;
    while (pos < len) {
        if (*n_batches >= max_batches)
            break;
        size_t rem = len - pos;
        kc_batch *b = &batches[*n_batches];
        memset(b, 0, sizeof(*b));
        b->position = (int64_t)pos;
        b->first_record = (int64_t)*n_recs;
        if (rem < KC_BATCH_HEADER_SIZE) {
            if (!final)
                break;
            /* The log ends inside a batch header. */
            if (rem >= 12) {
                b->base_offset = (int64_t)rd64(buf + pos);
                b->batch_length = (int32_t)rd32(buf + pos + 8);
            }
            if (rem > 16)
                b->magic = (int8_t)buf[pos + 16];
            b->status = KC_ST_TRUNCATED;
            b->next_position = (int64_t)len;
            (*n_batches)++;
            pos = len;
            break;
        }
        kc_batch_header(buf + pos, b);
        int64_t blen = b->batch_length;
        int bad = 0;
        if (b->magic != 2) {
            /* A legacy (magic 0/1) entry shares the offset+size prefix: skip it
             * whole when its size is sane, else treat the bytes as garbage. */
            if ((b->magic == 0 || b->magic == 1) && blen >= KC_LEGACY_MIN_LENGTH &&
                blen <= max_batch_length) {
                if ((size_t)blen + KC_BATCH_OVERHEAD > rem) {
                    if (!final)
                        break;
                    bad = KC_ST_TRUNCATED;
                } else {
                    b->status = KC_ST_BAD_MAGIC;
                    b->next_position = (int64_t)(pos + KC_BATCH_OVERHEAD + (size_t)blen);
                    (*n_batches)++;
                    pos = (size_t)b->next_position;
                    continue;
                }
            } else {
                bad = KC_ST_BAD_MAGIC;
            }
        } else if (blen < KC_BATCH_MIN_LENGTH || blen > max_batch_length) {
            bad = KC_ST_BAD_LENGTH;
        } else if ((size_t)blen + KC_BATCH_OVERHEAD > rem) {
            if (!final)
                break;
            bad = KC_ST_TRUNCATED;
        }
        if (bad) {
            /* Find where readable data starts again. */
            size_t next = kc_resync(buf, len, pos + 1, final, max_batch_length);
            if (!final && next >= len) {
                /* Undecidable without more data: keep the last header-sized
                 * tail for the next window. */
                next = len > KC_BATCH_HEADER_SIZE ? len - KC_BATCH_HEADER_SIZE : 0;
                if (next <= pos)
                    break;
            }
            if (bad == KC_ST_TRUNCATED && next < len)
                bad = KC_ST_BAD_LENGTH;    /* data follows: the length lied */
            b->status = (int8_t)bad;
            b->next_position = (int64_t)next;
            (*n_batches)++;
            pos = next;
            continue;
        }
        size_t total = KC_BATCH_OVERHEAD + (size_t)blen;
        if (verify_crc) {
            b->computed_crc = kc_crc32c(0, buf + pos + 21, total - 21);
            b->crc_ok = b->computed_crc == b->crc;
        } else {
            b->computed_crc = b->crc;
            b->crc_ok = 1;
        }
        b->next_position = (int64_t)(pos + total);
        int codec = b->attributes & 7;
        if (codec == 0) {
            int st, field;
            size_t err_pos;
            /* LogAppendTime batches stamp every record with maxTimestamp; the
             * caller applies that (it knows the attribute), we store deltas
             * from baseTimestamp as Kafka's reader would before the override. */
            int64_t n = kc_records_parse(buf, pos + KC_BATCH_HEADER_SIZE, pos + total,
                                         b->record_count, b->base_offset, b->base_timestamp,
                                         (int32_t)*n_batches, recs + *n_recs,
                                         max_recs - *n_recs, &st, &field, &err_pos);
            if (st == KC_ST_FULL) {
                if (*n_batches == 0 && pos == 0) {
                    /* Not even one batch fits: report it rather than loop. */
                    b->status = KC_ST_FULL;
                    b->records_parsed = (int32_t)n;
                    *n_recs += (size_t)n;
                    (*n_batches)++;
                    return total;
                }
                break;
            }
            if ((b->attributes & 0x08) != 0) {
                for (int64_t i = 0; i < n; i++)
                    recs[*n_recs + (size_t)i].timestamp = b->max_timestamp;
            }
            b->records_parsed = (int32_t)n;
            b->status = (int8_t)st;
            b->error_field = (int8_t)field;
            *n_recs += (size_t)n;
            if (b->record_count < 0 && st == KC_OK)
                b->status = KC_ST_COUNT_MISMATCH;
        } else if (codec <= 4) {
            b->status = KC_ST_COMPRESSED;
        } else {
            b->status = KC_ST_BAD_COMPRESSION;
        }
        (*n_batches)++;
        pos += total;
    }
    return pos;
}

/* ------------------------------------------------------------------ offset commits */
