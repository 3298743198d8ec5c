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

/* ---------------------------------------------------------------------------
 * Entry points (kc_engine.c).
 *
 * Errors: every function returns KC_OK (0) or a KC_E_* code and, when given a
 * kc_error, fills it.  `a`/`b` are the numbers of the message (see each code);
 * `offset` is the byte offset (in the caller's buffer) where reading failed;
 * `path` is the field path, INNERMOST FIRST (path[0] is the field being read):
 *   KC_PATH_FIELD : struct `sidx`, regular field index `value`
 *   KC_PATH_TAGGED: struct `sidx`, tagged-table index `value`
 *   KC_PATH_INDEX : array element `value`
 * The path is truncated (outermost frames dropped) beyond KC_MAX_PATH frames.
 */
enum {
    KC_OK = 0,
    KC_E_SHORT,         /* needs a bytes, b left                               */
    KC_E_VARINT_TRUNC,  /* truncated varint                                    */
    KC_E_VARINT_LONG,   /* varint is too long                                  */
    KC_E_NULL,          /* non-nullable field was serialized as null           */
    KC_E_STRLEN,        /* string had invalid length a                         */
    KC_E_UTF8,          /* string is not valid UTF-8 (offset: bad sequence)    */
    KC_E_ARRAY_COUNT,   /* array claims a elements, b bytes left               */
    KC_E_TAG_COUNT,     /* tagged field count a exceeds bytes left             */
    KC_E_TAG_SIZE,      /* tagged field size a exceeds bytes left              */
    KC_E_BAD_TAG,       /* tag a is not valid for this version                 */
    KC_E_TAG_SPAN,      /* tagged field used a of its b bytes                  */
    KC_E_DEPTH,         /* nesting too deep (> KC_MAX_DEPTH structs)           */
    KC_E_PROGRAM,       /* malformed program                                   */
    KC_E_TAPE_FULL,     /* the tape is too small (retry with len + 2 slots)    */
    KC_E_TAPE,          /* encode: malformed tape / heap reference             */
    KC_E_TOO_BIG,       /* input or output beyond 4 GiB (REF offsets are 32-bit) */
    KC_E_NOMEM,         /* allocation failed                                   */
    KC_E_TRAILING       /* bulk: a bytes after the message                     */
};

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

/* ---------------------------------------------------------------------------
 * Bulk decode: N values of one program into per-top-level-field columns.
 *
 * Row r is data[off[r] .. off[r+1]) (off: n_rows + 1 entries, int32 or int64:
 * exactly an Arrow (Large)BinaryArray's offsets, relative to `data`).  A row
 * decodes like kc_decode with pos 0 and must be consumed exactly.
 *
 * One kc_column per requested top-level field, `field` >= 0 a regular field,
 * -1 - k tagged-table entry k.  Only scalar types: fixed-width (bool, ints,
 * float64: `values` holds n_rows elements of the type's natural C width, bool as
 * uint8, float64 as double; uuid: 16 bytes per row) and string/bytes/records
 * (`offsets`: n_rows + 1 int64, or `offsets32`: n_rows + 1 int32 when set; `data` of capacity `data_cap`: when `growable`
 * it is realloc()ed as needed (the caller frees it with free()), otherwise a
 * full buffer fails the call with KC_E_NOMEM).
 * `validity` (optional, n_rows bits, LSB first, Arrow layout) gets 1 for a
 * non-null value of an ok row.  A tagged field absent from a row takes `def_i`
 * (fixed types: the value; float64 as IEEE bits), `def_bytes`/`def_len` (string,
 * bytes, uuid; def_len < 0 = null).  Error rows get 0 / empty / invalid.
 *
 * status[r] = KC_OK or the error code, err_off[r] = the byte offset in the row.
 */
typedef struct {
    int32_t field;
    int32_t type;
    void *values;
    int64_t *offsets;
    int32_t *offsets32;
    uint8_t *data;
    size_t data_len, data_cap;
    int32_t growable;
    uint8_t *validity;
    int64_t def_i;
    const uint8_t *def_bytes;
    int64_t def_len;
} kc_column;

int kc_decode_bulk(const int32_t *code, const uint8_t *data, const void *offsets,
                   int offsets_64, size_t n_rows, kc_column *cols, int n_cols,
                   int32_t *status, int64_t *err_off);

#endif
