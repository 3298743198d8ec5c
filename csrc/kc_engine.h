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

#include "kc_status.h"
#include "kc_varint.h"

#define KC_PROG_MAGIC 0x4B430001

enum {
    KC_T_BOOL = 1, KC_T_INT8, KC_T_INT16, KC_T_UINT16, KC_T_INT32, KC_T_UINT32,
    KC_T_INT64, KC_T_FLOAT64, KC_T_UUID, KC_T_STRING, KC_T_BYTES, KC_T_RECORDS,
    KC_T_STRUCT, KC_T_ARRAY
};

enum { KC_F_NULLABLE = 1, KC_F_COMPACT = 2, KC_F_TAGGED = 4 };

/* struct block accessors (s = kc_prog_struct(code, sidx)) */
#define KC_S_FLAGS(s) ((s)[0])
#define KC_S_NF(s) ((s)[1])
#define KC_S_NT(s) ((s)[2])
#define KC_S_NB(s) ((s)[3])
#define KC_S_FIELD(s, i) ((s) + 4 + 3 * (i))
#define KC_S_TAGGED(s, k) ((s) + 4 + 3 * KC_S_NF(s) + 4 * (k))
#define KC_S_BAD(s) ((s) + 4 + 3 * KC_S_NF(s) + 4 * KC_S_NT(s))

static inline const int32_t *kc_prog_struct(const int32_t *code, int sidx)
{
    return code + code[2 + sidx];
}

/* Tag `tag` in struct block s: its index in the tagged table (>= 0), KC_TAG_UNKNOWN
 * (kept as an unknown tagged field) or KC_TAG_BAD (a tag the version reserves: the
 * decode fails).  Shared by the decoder and the column decoder. */
enum { KC_TAG_UNKNOWN = -1, KC_TAG_BAD = -2 };

static inline int32_t kc_struct_tag(const int32_t *s, uint32_t tag)
{
    const int32_t *bad = KC_S_BAD(s);
    for (int32_t q = 0; q < KC_S_NT(s); q++)
        if ((uint32_t)KC_S_TAGGED(s, q)[0] == tag)
            return q;
    for (int32_t q = 0; q < KC_S_NB(s); q++)
        if ((uint32_t)bad[q] == tag)
            return KC_TAG_BAD;
    return KC_TAG_UNKNOWN;
}

/* A nullable struct's presence marker at p (n bytes left): int8 (< 0 = null) or,
 * inside a tagged field, a uvarint (0 = null).  Returns the bytes read, 0 when p is
 * empty (KC_E_SHORT) or KC_VARINT_TRUNCATED / KC_VARINT_TOO_LONG (kc_varint.h). */
static inline int kc_read_presence(const uint8_t *p, size_t n, int in_tag, int *present)
{
    uint32_t u = 0;
    int r;
    if (!in_tag) {
        if (n < 1)
            return 0;
        *present = (int8_t)p[0] >= 0;
        return 1;
    }
    r = kc_read_uvarint(p, n, &u);
    *present = u > 0;
    return r;
}

#define KC_REF(off, len) ((((int64_t)(off)) << 32) | (int64_t)((uint32_t)(len) + 1u))
#define KC_REF_OFF(r) ((size_t)(((uint64_t)(r)) >> 32))
#define KC_REF_LEN(r) ((size_t)((uint32_t)((uint64_t)(r) & 0xffffffffu) - 1u))

/* ---------------------------------------------------------------------------
 * Entry points (kc_engine.c).
 *
 * Errors: every function returns KC_OK (0) or a KC_E_* code (kc_status.h) and, when given a
 * kc_error, fills it.  `a`/`b` are the numbers of the message (see each code);
 * `offset` is the byte offset (in the caller's buffer) where reading failed;
 * `path` is the field path, INNERMOST FIRST (path[0] is the field being read):
 *   KC_PATH_FIELD : struct `sidx`, regular field index `value`
 *   KC_PATH_TAGGED: struct `sidx`, tagged-table index `value`
 *   KC_PATH_INDEX : array element `value`
 * The path is truncated (outermost frames dropped) beyond KC_MAX_PATH frames.
 */

#define KC_MAX_DEPTH 64
#define KC_MAX_PATH 160

enum { KC_PATH_FIELD = 0, KC_PATH_TAGGED = 1, KC_PATH_INDEX = 2 };

typedef struct {
    int32_t kind;
    int32_t sidx;
    int64_t value;
} kc_path_elem;

typedef struct {
    int code;
    int64_t offset;
    int64_t a, b;
    int path_len;
    kc_path_elem path[KC_MAX_PATH];
} kc_error;

/* Check a program once (bounds of every offset, type, struct index); the other
 * functions trust a checked program. */
int kc_program_check(const int32_t *code, size_t code_len);

/* Decode one message of `code` from buf[pos..len) into `tape` (capacity `cap`
 * slots; len - pos + 2 always suffices).  REFs are offsets into `buf`.
 * On success *end = position after the message and *n_slots = slots used. */
int kc_decode(const int32_t *code, const uint8_t *buf, size_t len, size_t pos,
              int64_t *tape, size_t cap, size_t *end, size_t *n_slots, kc_error *err);

/* Encoding, two passes over the same tape.  `aux` has n_slots entries of
 * scratch (tagged payload sizes).  kc_encode_size returns the exact size;
 * kc_encode_write writes exactly that many bytes to `out`. */
int kc_encode_size(const int32_t *code, const int64_t *tape, size_t n_slots,
                   const uint8_t *heap, size_t heap_len, uint32_t *aux,
                   size_t *size, kc_error *err);
int kc_encode_write(const int32_t *code, const int64_t *tape, size_t n_slots,
                    const uint8_t *heap, size_t heap_len, const uint32_t *aux,
                    uint8_t *out, kc_error *err);

/* Slots taken by one value of (type, flags, arg) starting at tape[i], or -1 if the
 * tape is malformed.  `in_tag`: the value is a tagged field's payload. */
int64_t kc_tape_skip(const int32_t *code, const int64_t *tape, size_t n_slots, size_t i,
                     int type, int flags, int arg, int in_tag);

/* Bulk decoding into Arrow-layout columns: kc_columns.h. */

#endif
