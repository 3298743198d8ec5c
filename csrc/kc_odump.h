/*
 * `kcodec offsets dump` lines of a window of a __consumer_offsets log, straight from the
 * record bytes: for each record of an uncompressed (or inflated), non-control batch, its
 * key and value decoded by the spec engine onto a tape and written as JSON (kc_tjson.h,
 * json.dumps' style) between the line's head (file, position, offset, timestamp, the
 * batch's header fields) and tail, exactly the text kcodec.offsets.dump.record_json
 * gives once json.dumps'd.  Anything else is handed back to the caller, whole batch or
 * one record, in place: control batches, compressed batches, records with headers,
 * unknown record types or value versions, keys or values that do not decode (or hold
 * unknown tagged fields).  What the record types mean comes from the caller's table;
 * nothing here knows a schema.  Plain C99, no Python headers.
 */
#ifndef KC_ODUMP_H
#define KC_ODUMP_H

#include <stddef.h>
#include <stdint.h>

#include "kc_batch.h"
#include "kc_tjson.h"

/* The heads below are followed by KC_OD_PAD readable bytes (they are copied in 16-byte
 * steps). */
#define KC_OD_PAD 16

/* One value version of a record type. */
typedef struct {
    kc_tj_msg msg;              /* msg.code NULL: the version is handed back        */
    kc_tj_msg alt;              /* alt.code not NULL: written with alt instead when
                                   the value's regular field sw_field is the string
                                   sw_text (e.g. protocolType "consumer": members'
                                   metadata decoded as that protocol)                */
    int32_t sw_field;
    const char *sw_text;
    int32_t sw_len;
    int32_t ex_field;           /* with alt: a record whose regular field ex_field is  */
    const char *ex_text;        /* one of the strings in ex_text (each a uint8 length  */
    int32_t ex_len;             /* then its bytes) is handed back (e.g. a protocol
                                   another decoder is registered for)                */
    const char *head;           /* `}, "payload": {"version": "3", "data": `         */
    int32_t head_len;
} kc_odump_value;

/* One record type (its int16 key prefix). */
typedef struct {
    kc_tj_msg key;              /* key.code NULL: the type is handed back            */
    const char *head;           /* `"type_name": "OffsetCommit", "key": {"type": "1", "data": ` */
    int32_t head_len;
    const kc_odump_value *values;   /* by value version                             */
    int32_t n_values;
} kc_odump_type;

/* Which records are printed (the others are skipped, as the reference skips them). */
typedef struct {
    int64_t first_offset, last_offset;  /* inclusive                                 */
    const uint8_t *types;       /* NULL: every type; else a bit per int16 record type
                                   (bit (uint16_t)type; a key shorter than 2 bytes: -1) */
} kc_odump_sel;

/* Where writing stands; the caller keeps it between calls. */
typedef struct {
    int64_t batch;              /* the batch being written                           */
    int64_t record;             /* its next record; -1: the batch is not begun        */
} kc_odump_state;

enum {
    KC_OD_DONE = 0,             /* every batch written                               */
    KC_OD_FULL = 1,             /* out is full: write it out, call again             */
    KC_OD_BATCH = 2,            /* batch st->batch is the caller's to write whole
                                   (it advances st: batch + 1, record -1)            */
    KC_OD_RECORD = 3            /* record st->record of batch st->batch: the caller
                                   writes its line (or not) and advances st->record  */
};

/*
 * Lines of batches[st->batch..n_batches) (records in recs, bytes in data) from where st
 * stands into out[0..cap): only whole lines; *out_len the bytes written.  `head` is the
 * line's start up to the position (`{"file": "x.log", "position": `), base what the
 * batches' positions are counted from.  types: n_types entries by record type.  Returns
 * a KC_OD_* code, or KC_E_* (bad arguments, out of memory).
 */
int kc_odump_lines(const kc_odump_type *types, int32_t n_types, const kc_odump_sel *sel,
                   const char *head, int32_t head_len, int64_t base,
                   const uint8_t *data, size_t data_len,
                   const kc_batch *batches, int64_t n_batches,
                   const kc_record *recs, int64_t n_recs,
                   kc_odump_state *st, char *out, size_t cap, size_t *out_len);

#endif
