/*
 * Kafka's JSON text of decoded messages, and kafka-dump-log's lines for metadata logs.
 *
 * kc_kjson_write turns the spec engine's TAPE (kc_engine.h) into the compact JSON text
 * Kafka's generated <Message>JsonConverter + Jackson print (what kcodec.to_kafka_json
 * gives, dumped with separators "," and ":"): fields in schema order, tagged fields at
 * their default left out, unknown tagged fields dropped, uuids as base64url without
 * padding, bytes as standard base64.  What the tape means comes from a JSON PLAN that
 * kcodec.kraft.dump.kjson_plan (Python) compiles from each program; nothing here knows a message.
 *
 * PLAN (int32 words; blob: the key texts and default strings it points into)
 *   [0] KC_KJ_MAGIC  [1] n_structs (= the program's)
 *   [2 .. 2+n_structs) word offset of each struct block
 *   struct block: [n_out], then n_out x 6 words, in JSON order:
 *     key_off, key_len   blob[key_off..+key_len): `"name":`
 *     src                >= 0: regular field index; < 0: tagged-table index -1 - src
 *     dflt               KC_KJ_D_*: when a tagged field is at its default (left out)
 *     d0, d1             the default: an int64 (d0 low word, d1 high word), or a string
 *                        (blob offset, length)
 *
 * Plain C99, no Python headers.
 */
#ifndef KC_KJSON_H
#define KC_KJSON_H

#include <stddef.h>
#include <stdint.h>

#include "kc_batch.h"

#define KC_KJ_MAGIC 0x4B4A0001

enum {
    KC_KJ_D_NONE = 0,   /* a regular field: always written                         */
    KC_KJ_D_INT,        /* bool / integer equal to (d1 << 32 | d0)                 */
    KC_KJ_D_NULL,       /* null string / bytes / array / nullable struct           */
    KC_KJ_D_EMPTY,      /* empty (non-null) array, string or bytes                 */
    KC_KJ_D_STR,        /* string equal to blob[d0..d0+d1)                          */
    KC_KJ_D_UUID_ZERO   /* the all-zero uuid                                       */
};

/* Check a plan against its (checked) program once; the writers trust a checked pair. */
int kc_kjson_check(const int32_t *code, const int32_t *plan, size_t plan_len, size_t blob_len);

/*
 * The JSON text of the message on tape[0..n_slots) (decoded from buf by kc_decode) at
 * out[0..cap).  KC_E_SHORT: out is too small (nothing counts; call again with more
 * room); KC_E_TAPE: the tape does not follow the program.
 */
int kc_kjson_write(const int32_t *code, const int32_t *plan, const char *blob,
                   const uint8_t *buf, const int64_t *tape, size_t n_slots,
                   char *out, size_t cap, size_t *out_len);

/* ---------------------------------------------------------------------------------
 * kafka-dump-log --cluster-metadata-decoder lines of a window of a metadata log. */

/* One (record type, version) the writer prints: Kafka's text before the data
 * (` payload: {"type":"PARTITION_RECORD","version":1,"data":`), and the message. */
typedef struct {
    const int32_t *code;        /* NULL: the record takes the caller's way           */
    const int32_t *plan;
    const char *blob;
    const char *head;
    int32_t head_len;
} kc_kdump_type;

/* Where writing stands; the caller keeps it between calls. */
typedef struct {
    int64_t batch;              /* the batch being written                           */
    int64_t record;             /* its next record; -1: its batch line is next       */
    int64_t position;           /* the position the batch line shows (Kafka counts
                                   the bytes of the batches before it)               */
} kc_kdump_state;

enum {
    KC_KD_DONE = 0,             /* every batch written                               */
    KC_KD_FULL = 1,             /* out is full: write it out, call again             */
    KC_KD_BATCH = 2,            /* batch st->batch is the caller's to write whole:
                                   it advances st (batch + 1, record -1, position)   */
    KC_KD_RECORD = 3            /* record st->record of batch st->batch: the caller
                                   writes its line and advances st->record           */
};

/*
 * Lines of batches[st->batch..n_batches) (records in recs, bytes in data) from where
 * st stands into out[0..cap): only whole lines; *out_len the bytes written.  types is a
 * table of n_keys x n_versions entries (api key * n_versions + version).  Returns a
 * KC_KD_* code, or KC_E_* (bad arguments, out of memory).
 */
int kc_kdump_lines(const kc_kdump_type *types, int32_t n_keys, int32_t n_versions,
                   const uint8_t *data, size_t data_len,
                   const kc_batch *batches, int64_t n_batches,
                   const kc_record *recs, int64_t n_recs,
                   kc_kdump_state *st, char *out, size_t cap, size_t *out_len);

#endif
