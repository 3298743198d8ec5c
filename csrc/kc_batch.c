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
        r->offset = (int64_t)((uint64_t)base_offset + (uint64_t)(int64_t)ival);   /* Java's long wraps */
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

/* ------------------------------------------------------------------ legacy messages */

static const uint32_t kc_crc32_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t kc_crc32(uint32_t crc, const uint8_t *buf, size_t len)
{
    uint32_t c = ~crc;
    for (size_t i = 0; i < len; i++)
        c = kc_crc32_table[(c ^ buf[i]) & 0xFF] ^ (c >> 8);
    return ~c;
}

static inline int64_t legacy_min(int magic)
{
    return magic ? KC_LEGACY_V1_MIN_LENGTH : KC_LEGACY_MIN_LENGTH;
}

/* Parse the message of the legacy entry buf[p..end) (its size already checked
 * against legacy_min) into r.  Returns KC_RF_NONE or the field that fails. */
static int legacy_message(const uint8_t *buf, size_t p, size_t end, kc_record *r)
{
    int magic = buf[p + 16];
    size_t pos = p + 18;
    r->offset = (int64_t)rd64(buf + p);
    r->size = (int32_t)(end - p - KC_LEGACY_OVERHEAD);
    r->attributes = buf[p + 17];
    r->headers_count = 0;
    r->timestamp = -1;                     /* magic 0 has none */
    if (magic == 1) {
        r->timestamp = (int64_t)rd64(buf + pos);
        pos += 8;
    }
    for (int f = 0; f < 2; f++) {
        if (end - pos < 4)
            return f ? KC_RF_VALUE : KC_RF_KEY;
        int32_t l = (int32_t)rd32(buf + pos);
        pos += 4;
        if (l < -1 || (l > 0 && (size_t)l > end - pos))
            return f ? KC_RF_VALUE : KC_RF_KEY;
        if (f) {
            r->value_len = l;
            r->value_pos = (int64_t)pos;
        } else {
            r->key_len = l;
            r->key_pos = (int64_t)pos;
        }
        if (l > 0)
            pos += (size_t)l;
    }
    r->headers_pos = (int64_t)pos;
    return pos == end ? KC_RF_NONE : KC_RF_SIZE;
}

/* Does a legacy message plausibly start at p (magic at p + 16 is 0 or 1)?  1 yes,
 * 0 no, -1 undecidable (needs bytes beyond the window). */
static int legacy_plausible(const uint8_t *buf, size_t len, size_t p, int final,
                            int64_t max_len)
{
    int magic = buf[p + 16];
    int32_t size = (int32_t)rd32(buf + p + 8);
    if (size < legacy_min(magic) || (int64_t)size > max_len)
        return 0;
    if (len - p < 18)
        return final ? 0 : -1;
    if ((buf[p + 17] & 7) > 3)
        return 0;
    size_t total = KC_LEGACY_OVERHEAD + (size_t)size;
    if (total > len - p)
        return final ? 0 : -1;
    return kc_crc32(0, buf + p + 16, (size_t)size - 4) == rd32(buf + p + 12);
}

int64_t kc_legacy_parse(const uint8_t *buf, size_t len, int wrapper_magic,
                        int64_t wrapper_offset, int64_t wrapper_timestamp,
                        int log_append_time, int verify_crc, int32_t batch_index,
                        kc_record *recs, size_t max_recs, int *status, int *field,
                        size_t *err_pos)
{
    size_t pos = 0;
    int64_t n = 0;
    *status = KC_OK;
    *field = KC_RF_NONE;
    *err_pos = 0;
    while (pos < len) {
        if ((size_t)n >= max_recs) {
            *status = KC_ST_FULL;
            return n;
        }
        size_t rem = len - pos;
        if (rem < KC_LEGACY_OVERHEAD + KC_LEGACY_MIN_LENGTH)
            KC_FAIL(KC_RF_LENGTH);
        int32_t size = (int32_t)rd32(buf + pos + 8);
        int magic = buf[pos + 16];
        if (magic > 1)
            KC_FAIL(KC_RF_MAGIC);
        if (size < legacy_min(magic) || (size_t)size > rem - KC_LEGACY_OVERHEAD)
            KC_FAIL(KC_RF_SIZE);
        size_t end = pos + KC_LEGACY_OVERHEAD + (size_t)size;
        if (verify_crc && kc_crc32(0, buf + pos + 16, (size_t)size - 4) != rd32(buf + pos + 12))
            KC_FAIL(KC_RF_CRC);
        if (buf[pos + 17] & 7)             /* inner messages are never compressed */
            KC_FAIL(KC_RF_ATTRIBUTES);
        kc_record *r = &recs[n];
        int f = legacy_message(buf, pos, end, r);
        if (f != KC_RF_NONE)
            KC_FAIL(f);
        r->batch_index = batch_index;
        if (magic == 1 && log_append_time)
            r->timestamp = wrapper_timestamp;
        pos = end;
        n++;
    }
    if (n == 0)                            /* Kafka refuses an empty inner set */
        KC_FAIL(KC_RF_LENGTH);
    if (wrapper_magic == 1) {
        /* Relative inner offsets; a wrapper offset of 0 comes from some producers
         * (librdkafka) and leaves them as they are, as Kafka does. */
        int64_t last = recs[n - 1].offset;
        uint64_t base = 0;
        if (wrapper_offset != 0) {
            if (wrapper_offset < last) {
                pos = 0;
                KC_FAIL(KC_RF_OFFSET);
            }
            base = (uint64_t)wrapper_offset - (uint64_t)last;
        }
        for (int64_t i = 0; i < n; i++)
            recs[i].offset = (int64_t)((uint64_t)recs[i].offset + base);
    }
    return n;
}

/* ------------------------------------------------------------------ scanning */

/* Does a v2 batch or a legacy message plausibly start at p?  1 yes, 0 no, -1
 * undecidable (needs bytes beyond the window). */
static int kc_plausible(const uint8_t *buf, size_t len, size_t p, int final,
                        int64_t max_len)
{
    if (len - p <= 16)
        return final ? 0 : -1;
    if (buf[p + 16] < 2)
        return legacy_plausible(buf, len, p, final, max_len);
    if (buf[p + 16] != 2)
        return 0;
    if (len - p < KC_BATCH_HEADER_SIZE)
        return final ? 0 : -1;
    int32_t blen = (int32_t)rd32(buf + p + 8);
    if (blen < KC_BATCH_MIN_LENGTH || (int64_t)blen > max_len)
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
        /* Cheap filter first: magic byte 0, 1 or 2 at +16. */
        if (len - p > 16 && buf[p + 16] > 2)
            continue;
        if (kc_plausible(buf, len, p, final, max_batch_length) != 0)
            return p;
    }
    return len;
}

/* Unreadable bytes from pos (status bad): where does readable data start again?
 * Returns 0 when the window cannot tell (the scan stops there), else fills b. */
static int kc_skip_bad(const uint8_t *buf, size_t len, size_t pos, int final,
                       int64_t max_batch_length, int bad, kc_batch *b, size_t *next_out)
{
    size_t next = kc_resync(buf, len, pos + 1, final, max_batch_length);
    if (!final && next >= len) {
        /* Undecidable without more data: keep the last header-sized tail for the
         * next window. */
        next = len > KC_BATCH_HEADER_SIZE ? len - KC_BATCH_HEADER_SIZE : 0;
        if (next <= pos)
            return 0;
    }
    if (bad == KC_ST_TRUNCATED && next < len)
        bad = KC_ST_BAD_LENGTH;    /* data follows: the length lied */
    b->status = (int8_t)bad;
    b->next_position = (int64_t)next;
    *next_out = next;
    return 1;
}

/* A batch or legacy entry buf[pos..end) whose CRC fails: may its length be trusted
 * (the scan goes on at end)?  Garbage often looks like a header: only when readable
 * data (or the end of the log) follows and, unless inside_ok, no run of readable
 * entries inside it ends exactly at end.  1 yes, 0 no, -1 undecidable in this window. */
static int kc_trust_length(const uint8_t *buf, size_t len, size_t pos, size_t end, int final,
                           int64_t max_batch_length, int inside_ok)
{
    int pl = end == len ? (final ? 1 : -1) : kc_plausible(buf, len, end, final, max_batch_length);
    if (pl <= 0 || inside_ok)
        return pl;
    size_t q = kc_resync(buf, end, pos + 1, 1, max_batch_length);
    if (q >= end)
        return 1;
    /* Readable entries inside: garbage that swallowed them when they run exactly to
     * end; entries a damaged wrapper holds verbatim when something else follows them
     * (a compression trailer). */
    while (q < end && kc_plausible(buf, end, q, 1, max_batch_length) == 1)
        q += KC_BATCH_OVERHEAD + (size_t)(int32_t)rd32(buf + q + 8);
    return q == end ? 0 : 1;
}

/* One legacy entry at pos (magic at pos + 16 is 0 or 1, rem >= 17 bytes).
 * Returns 1 with *next set when a row was written, 0 to stop the scan. */
static int kc_scan_legacy(const uint8_t *buf, size_t len, size_t pos, int verify_crc,
                          int final, int64_t max_batch_length, kc_batch *b,
                          size_t n_batches, kc_record *recs, size_t max_recs,
                          size_t *n_recs, size_t *next)
{
    size_t rem = len - pos;
    int magic = buf[pos + 16];
    int64_t size = (int32_t)rd32(buf + pos + 8);
    int bad = 0;
    b->base_offset = (int64_t)rd64(buf + pos);
    b->batch_length = (int32_t)size;
    b->magic = (int8_t)magic;
    if (size < legacy_min(magic) || size > max_batch_length) {
        bad = KC_ST_BAD_MAGIC;
    } else if ((size_t)size + KC_LEGACY_OVERHEAD > rem) {
        if (!final)
            return 0;
        bad = KC_ST_TRUNCATED;
    } else {
        size_t total = KC_LEGACY_OVERHEAD + (size_t)size;
        b->crc = rd32(buf + pos + 12);
        b->computed_crc = verify_crc ? kc_crc32(0, buf + pos + 16, total - 16) : b->crc;
        b->crc_ok = b->computed_crc == b->crc;
        if (!b->crc_ok) {
            /* Garbage often looks like a legacy entry: trust the length of one whose
             * CRC fails only when readable data (or the end of the log) follows and
             * nothing readable starts inside it. */
            /* A compressor may leave a wrapper's inner entries verbatim (stored gzip
             * blocks, snappy literals): readable entries inside do not make it garbage
             * when its own key and value lengths fill it exactly, which garbage
             * practically never does. */
            kc_record w;
            int layout_ok = legacy_message(buf, pos, pos + total, &w) == KC_RF_NONE;
            int pl = kc_trust_length(buf, len, pos, pos + total, final, max_batch_length,
                                     layout_ok);
            if (pl < 0)
                return 0;
            if (pl == 0)
                bad = KC_ST_BAD_LENGTH;
        }
        if (!bad) {
            int attr = buf[pos + 17];
            int codec = attr & 7;
            /* Only codec and timestamp type are defined: nothing else may read as
             * the v2 transactional / control bits. */
            b->attributes = (int16_t)(attr & (magic ? 0x0F : 0x07));
            b->base_timestamp = b->max_timestamp = magic ? (int64_t)rd64(buf + pos + 18) : -1;
            b->producer_id = -1;
            b->producer_epoch = -1;
            b->base_sequence = -1;
            b->partition_leader_epoch = -1;
            b->next_position = (int64_t)(pos + total);
            if (codec == 0) {
                if (*n_recs >= max_recs)
                    return 0;
                int f = legacy_message(buf, pos, pos + total, &recs[*n_recs]);
                b->record_count = 1;
                if (f != KC_RF_NONE) {
                    b->status = KC_ST_BAD_RECORDS;
                    b->error_field = (int8_t)f;
                } else {
                    recs[*n_recs].batch_index = (int32_t)n_batches;
                    b->records_parsed = 1;
                    (*n_recs)++;
                }
            } else {
                /* The wrapper's own fields must hold for its value to be found. */
                kc_record w;
                int f = legacy_message(buf, pos, pos + total, &w);
                b->status = codec <= 3 ? KC_ST_COMPRESSED : KC_ST_BAD_COMPRESSION;
                if (f != KC_RF_NONE) {
                    b->status = KC_ST_BAD_RECORDS;
                    b->error_field = (int8_t)f;
                }
            }
            *next = pos + total;
            return 1;
        }
    }
    return kc_skip_bad(buf, len, pos, final, max_batch_length, bad, b, next);
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
        if (rem > 16 && buf[pos + 16] < 2) {
            size_t next;
            if (!kc_scan_legacy(buf, len, pos, verify_crc, final, max_batch_length, b,
                                *n_batches, recs, max_recs, n_recs, &next)) {
                if (*n_batches == 0 && pos == 0 && final) {
                    /* No room for even one record: report it rather than loop. */
                    b->status = KC_ST_FULL;
                    b->next_position = (int64_t)len;
                    (*n_batches)++;
                    return len;
                }
                break;
            }
            (*n_batches)++;
            pos = next;
            continue;
        }
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
            bad = KC_ST_BAD_MAGIC;
        } else if (blen < KC_BATCH_MIN_LENGTH || blen > max_batch_length) {
            bad = KC_ST_BAD_LENGTH;
        } else if ((size_t)blen + KC_BATCH_OVERHEAD > rem) {
            if (!final)
                break;
            bad = KC_ST_TRUNCATED;
        }
        if (bad) {
            size_t next;
            if (!kc_skip_bad(buf, len, pos, final, max_batch_length, bad, b, &next))
                break;
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
        if (!b->crc_ok) {
            int pl = kc_trust_length(buf, len, pos, pos + total, final, max_batch_length, 0);
            if (pl < 0)
                break;
            if (pl == 0) {
                size_t next;
                if (!kc_skip_bad(buf, len, pos, final, max_batch_length, KC_ST_BAD_LENGTH, b,
                                 &next))
                    break;
                (*n_batches)++;
                pos = next;
                continue;
            }
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
