/*
 * kcodec spec engine: executes compiled Kafka message programs.
 *
 * Plain C99, no Python headers.  Everything here is driven by a PROGRAM that
 * kcodec/_program.py compiles from Kafka's JSON message specs for one
 * (message, version); nothing in C knows any particular message.
 *
 * ---------------------------------------------------------------------------
 * PROGRAM (int32 words)
 *
 *   [0] KC_PROG_MAGIC
 *   [1] n_structs
 *   [2 .. 2+n_structs) word offset of each struct block; struct 0 = the message
 *   struct block at `off`:
 *     [off+0] flags          bit0: flexible (struct ends with a tagged-field section)
 *     [off+1] n_fields       regular fields present in this version, wire order
 *     [off+2] n_tagged       fields tagged in this version, ascending tag
 *     [off+3] n_bad_tags     tags the struct defines but that are NOT tagged in
 *                            this version (reading one is an error, as in Kafka:
 *                            "Tag N is not valid for version V")
 *     then n_fields  x 3 words: type, flags, arg
 *     then n_tagged  x 4 words: tag, type, flags, arg
 *     then n_bad_tags x 1 word: tag
 *
 *   type: KC_T_*; flags: KC_F_*; arg: struct index for KC_T_STRUCT;
 *   for KC_T_ARRAY: element type | (struct index << 8).  Array elements are
 *   never null; string/bytes elements use the array's COMPACT flag.
 *
 * Encodings (Kafka, all big-endian): see ../shared/reference/kafka-facts.md §A.
 *   string: COMPACT ? uvarint(len+1) (0 = null) : int16 len (-1 = null); len <= 0x7fff
 *   bytes/records: COMPACT ? uvarint(len+1) : int32 len (-1 = null)
 *   array: COMPACT ? uvarint(count+1) : int32 count (-1 = null); count <= bytes left
 *   struct: NULLABLE ? int8 marker (<0 null, else present) then fields.
 *           Inside a tagged field a nullable struct's marker is a uvarint (0 null).
 *   flexible struct: after the regular fields, uvarint n, n x (uvarint tag,
 *           uvarint size, payload).  A known tag's payload is its field encoded
 *           with its type; it must span exactly `size` bytes.  Unknown tags are
 *           kept raw.
 *
 * ---------------------------------------------------------------------------
 * TAPE (int64 slots): the decoded form, and the input of the encoder.
 * A value is laid out recursively, in wire order:
 *
 *   bool/int8/int16/uint16/int32/uint32/int64 : 1 slot, the value
 *   float64 : 1 slot, the IEEE-754 bits
 *   uuid    : 1 slot, REF to 16 bytes (len 16)
 *   string/bytes/records : 1 slot, REF (0 = null)
 *   array   : 1 slot count (-1 = null), then each element's slots
 *   struct  : if NULLABLE: 1 slot (0 = null, 1 = present), then if present
 *             the regular fields' slots in order, then, if flexible, 1 slot
 *             n_entries followed by each tagged entry in wire order:
 *               known   : 1 slot k >= 0 (index into the struct's tagged table),
 *                         then the field's slots (a nullable struct gets its
 *                         0/1 slot as above)
 *               unknown : 1 slot -1 - tag (tag as uint32), then 1 slot REF payload
 *
 *   REF = (offset << 32) | (length + 1): a byte range of the input buffer when
 *   decoding, of the caller's "heap" buffer when encoding.  0 = null.
 *
 * The encoder writes tagged entries in the order they appear on the tape; the
 * caller (Python) sorts them by tag, which is how Kafka writes them.
 *
 * Slots never outnumber input bytes + 2 (every slot consumes at least one
 * input byte, but the top-level tagged count), so decoding into a tape of
 * len+2 slots cannot overflow.
 */
#ifndef KC_ENGINE_H
#define KC_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#define KC_PROG_MAGIC 0x4B430001

enum {
    KC_T_BOOL = 1, KC_T_INT8, KC_T_INT16, KC_T_UINT16, KC_T_INT32, KC_T_UINT32,
    KC_T_INT64, KC_T_FLOAT64, KC_T_UUID, KC_T_STRING, KC_T_BYTES, KC_T_RECORDS,
    KC_T_STRUCT, KC_T_ARRAY
};

enum { KC_F_NULLABLE = 1, KC_F_COMPACT = 2, KC_F_TAGGED = 4 };

#define KC_REF(off, len) ((((int64_t)(off)) << 32) | (int64_t)((uint32_t)(len) + 1u))
#define KC_REF_OFF(r) ((size_t)(((uint64_t)(r)) >> 32))
#define KC_REF_LEN(r) ((size_t)((uint32_t)((uint64_t)(r) & 0xffffffffu) - 1u))

#endif
