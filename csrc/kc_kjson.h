/*
 * kafka-dump-log --cluster-metadata-decoder's lines for a window of a metadata log: the
 * batch line, and for each record its `| offset: ...` line and payload, the record
 * decoded by the spec engine onto a TAPE (kc_engine.h) and printed in the compact JSON
 * Kafka's generated <Message>JsonConverter + Jackson print, by kc_tjson.h's writer
 * (KC_TJ_COMPACT) from a plan kcodec._tjson.tjson_plan(prog, "compact") compiles.
 *
 * Plain C99, no Python headers.
 */
#ifndef KC_KJSON_H
#define KC_KJSON_H

#include <stddef.h>
#include <stdint.h>

#include "kc_batch.h"

/* ---------------------------------------------------------------------------------
 * kafka-dump-log --cluster-metadata-decoder lines of a window of a metadata log. */

/* One (record type, version) the writer prints: Kafka's text before the data
 * (` payload: {"type":"PARTITION_RECORD","version":1,"data":`), and the message: its
 * program and its tape-writer plan and blob (kc_tjson.h, checked by kc_tjson_check). */
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
