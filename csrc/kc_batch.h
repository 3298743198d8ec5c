/*
 * Kafka record batch (magic v2) reader.  Plain C99, no Python headers.
 *
 * Batch header (61 bytes, big-endian):
 *    0 baseOffset int64        8 batchLength int32 (bytes after this field)
 *   12 partitionLeaderEpoch    16 magic int8       17 crc uint32 (CRC-32C of
 *   21 attributes int16           bytes 21..end)   23 lastOffsetDelta int32
 *   27 baseTimestamp int64     35 maxTimestamp     43 producerId int64
 *   51 producerEpoch int16     53 baseSequence     57 recordCount int32
 *   61 records (compressed as a whole when attributes & 7 != 0)
 * attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd),
 *   bit 3 timestamp type (LogAppendTime), bit 4 transactional, bit 5 control,
 *   bit 6 delete horizon set (baseTimestamp is then the delete horizon).
 * Record: varint length, int8 attributes, varlong timestampDelta, varint
 *   offsetDelta, varint keyLength (-1 null), key, varint valueLength (-1 null),
 *   value, varint headerCount, headers (varint keyLength, key, varint
 *   valueLength (-1 null), value).
 *
 * The caller hands a window of the log (a whole file or a chunk of it); the
 * scanner reports complete batches and their records as flat arrays of plain
 * structs; a batch cut by the end of the window is left for the next call.
 * Nothing here allocates: all lengths are checked against the window.
 */
#ifndef KC_BATCH_H
#define KC_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "kc_status.h"

#define KC_BATCH_HEADER_SIZE 61
#define KC_BATCH_OVERHEAD 12          /* baseOffset + batchLength */
#define KC_BATCH_MIN_LENGTH 49        /* batchLength of a batch with no records */
/*
 * Legacy message sets (magic 0 and 1, written before Kafka 0.11) share the log's
 * offset + size prefix.  One entry (big-endian):
 *    0 offset int64            8 size int32 (bytes after this field)
 *   12 crc uint32 (CRC-32, IEEE, of bytes 16..end)
 *   16 magic int8             17 attributes int8: bits 0-2 compression (0 none,
 *      1 gzip, 2 snappy, 3 lz4), bit 3 timestamp type (LogAppendTime; magic 1)
 *   18 timestamp int64 (magic 1 only), then keyLength int32 (-1 null), key,
 *      valueLength int32 (-1 null), value.
 * An uncompressed entry is one record.  A compressed one wraps a whole inner
 * message set compressed in its value: the caller inflates it and parses it with
 * kc_legacy_parse.  Inner offsets are absolute under a magic 0 wrapper and
 * relative under magic 1 (the wrapper holds the last inner record's offset).
 * The smallest message is 14 bytes (v0, null key and value), 22 for v1.
 */
#define KC_LEGACY_MIN_LENGTH 14
#define KC_LEGACY_V1_MIN_LENGTH 22
#define KC_LEGACY_OVERHEAD 12         /* offset + size, as KC_BATCH_OVERHEAD */

/* Batch / record conditions (kc_batch.status, kc_scan stop reasons); KC_OK from
 * kc_status.h.  The numbers are stored in BATCH_DTYPE and mirrored by the Python twin. */
enum {
    KC_ST_COMPRESSED = 1,      /* records left to the caller to decompress       */
    KC_ST_BAD_CRC = 2,         /* CRC mismatch; records parsed anyway            */
    KC_ST_BAD_LENGTH = 3,      /* batchLength too small or beyond the input      */
    KC_ST_BAD_MAGIC = 4,       /* magic not 2 (0/1 legacy or garbage)            */
    KC_ST_BAD_RECORDS = 5,     /* record section does not parse                  */
    KC_ST_BAD_COMPRESSION = 6, /* compression codec 5..7                         */
    KC_ST_TRUNCATED = 7,       /* input ends inside a batch                      */
    KC_ST_COUNT_MISMATCH = 8,  /* recordCount disagrees with the records found   */
    KC_ST_FULL = 9             /* scan stopped: output arrays full               */
};

/* One batch; 96 bytes, no implicit padding (mirrored by a NumPy dtype). */
typedef struct {
    int64_t position;          /* byte position of the batch in the window      */
    int64_t base_offset;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int64_t first_record;      /* index of its first record in the record array */
    int64_t next_position;     /* where the scan went on after this batch        */
    uint32_t crc;
    uint32_t computed_crc;
    int32_t batch_length;
    int32_t partition_leader_epoch;
    int32_t last_offset_delta;
    int32_t base_sequence;
    int32_t record_count;      /* as the header says                            */
    int32_t records_parsed;    /* records written to the record array           */
    int16_t attributes;
    int16_t producer_epoch;
    int8_t magic;
    int8_t crc_ok;
    int8_t status;             /* KC_OK or a KC_ST_* code                        */
    int8_t error_field;        /* which record field failed (KC_RF_*)            */
} kc_batch;

/* One record; 64 bytes.  Positions are byte positions in the buffer parsed
 * (the window, or the caller's decompressed buffer). */
typedef struct {
    int64_t offset;
    int64_t timestamp;
    int64_t key_pos;
    int64_t value_pos;
    int64_t headers_pos;       /* first header's key length varint             */
    int32_t key_len;           /* -1 = null                                      */
    int32_t value_len;         /* -1 = null (tombstone)                          */
    int32_t headers_count;
    int32_t size;              /* the record's length prefix                     */
    int32_t attributes;
    int32_t batch_index;       /* index of its batch in the batch array          */
} kc_record;

/* One header of a record. */
typedef struct {
    int64_t key_pos;
    int64_t value_pos;
    int32_t key_len;
    int32_t value_len;         /* -1 = null */
} kc_header;

/* Which record field failed to parse (kc_batch.error_field). */
enum {
    KC_RF_NONE = 0, KC_RF_LENGTH, KC_RF_ATTRIBUTES, KC_RF_TIMESTAMP, KC_RF_OFFSET,
    KC_RF_KEY, KC_RF_VALUE, KC_RF_HEADERS, KC_RF_HEADER_KEY, KC_RF_HEADER_VALUE,
    KC_RF_SIZE,
    KC_RF_CRC, KC_RF_MAGIC     /* legacy inner messages: their CRC-32 / magic */
};

/* Decode the 61-byte header at buf (len >= 61 bytes available).  Fills every
 * header field of *b; does not verify the CRC. */
void kc_batch_header(const uint8_t *buf, kc_batch *b);

/*
 * Parse `count` records from buf[start..end), numbering them from base_offset /
 * base_timestamp, into recs[0..max_recs).  Returns the number of records
 * written; *status is KC_OK, KC_ST_BAD_RECORDS (with *field set and *err_pos
 * at the failing byte), KC_ST_COUNT_MISMATCH (bytes left over), or KC_ST_FULL.
 * Each record's batch_index is set to batch_index.
 */
int64_t kc_records_parse(const uint8_t *buf, size_t start, size_t end, int32_t count,
                         int64_t base_offset, int64_t base_timestamp, int32_t batch_index,
                         kc_record *recs, size_t max_recs, int *status, int *field,
                         size_t *err_pos);

/* Parse the headers of one record (positions into buf, as in kc_record). */
int kc_headers_parse(const uint8_t *buf, size_t len, size_t pos, int32_t count,
                     kc_header *out);

/*
 * Scan batches from buf[0..len).  Batches go to batches[*n_batches..max_batches),
 * records of uncompressed batches to recs[*n_recs..max_recs).
 * verify_crc: compute and compare CRC-32C.  final: the window ends at the
 * end of the log (a batch cut by it is reported KC_ST_TRUNCATED, not left
 * for later).
 * max_batch_length: a batchLength above it is treated as corrupt.
 * Returns the number of bytes consumed (everything up to the first batch not
 * fully inside the window, or not fitting the output arrays).
 * A batch whose length cannot be trusted is reported with KC_ST_BAD_LENGTH and
 * the scan resynchronises on the next position holding a plausible batch
 * header with a valid CRC (or stops at the end of the window).
 * Legacy entries (magic 0/1) become batch rows too (magic 0/1, crc = CRC-32,
 * producer fields -1): an uncompressed one holds its one record, a compressed one
 * is KC_ST_COMPRESSED (see kc_legacy_parse).  A legacy entry whose CRC-32 fails
 * is trusted for its length only when readable data (or the end of the log)
 * follows it; otherwise it is garbage that looks like one, and the scan resyncs.
 */
size_t kc_scan(const uint8_t *buf, size_t len, int verify_crc, int final,
               int64_t max_batch_length,
               kc_batch *batches, size_t max_batches, size_t *n_batches,
               kc_record *recs, size_t max_recs, size_t *n_recs);

/* CRC-32 (IEEE 802.3, zlib's) of buf[0..len), continuing from crc: legacy messages. */
uint32_t kc_crc32(uint32_t crc, const uint8_t *buf, size_t len);

/*
 * Parse the inner message set of a compressed legacy wrapper (its inflated value,
 * buf[0..len)) into recs[0..max_recs), as Kafka's deep iterator reads it: every
 * entry whole, of magic 0 or 1, uncompressed, with a valid CRC-32 when verify_crc;
 * at least one entry.  Offsets become absolute (wrapper_magic 1: wrapper_offset -
 * last relative offset + relative offset, or the relative offset when the wrapper
 * says 0); inner magic 1 records take wrapper_timestamp when log_append_time.
 * Returns the records written; *status KC_OK, KC_ST_BAD_RECORDS (*field, *err_pos)
 * or KC_ST_FULL.
 */
int64_t kc_legacy_parse(const uint8_t *buf, size_t len, int wrapper_magic,
                        int64_t wrapper_offset, int64_t wrapper_timestamp,
                        int log_append_time, int verify_crc, int32_t batch_index,
                        kc_record *recs, size_t max_recs, int *status, int *field,
                        size_t *err_pos);

/* The next position >= from where a plausible v2 batch (magic 2, sane length and,
 * when the batch lies inside the window, a valid CRC-32C) or legacy message (magic
 * 0/1, sane size and codec, a valid CRC-32 when inside the window) starts.  When not
 * final, a position whose header the window cannot show yet also stops the
 * search (the caller decides it with more data).  Returns len when none. */
size_t kc_resync(const uint8_t *buf, size_t len, size_t from, int final,
                 int64_t max_batch_length);

#endif
