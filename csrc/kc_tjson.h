/*
 * JSON text of a decoded message from the spec engine's TAPE (kc_engine.h), by a PLAN
 * compiled in Python (kcodec/_tjson.py) from the same program: Kafka's JsonConverter form
 * (what kcodec.to_kafka_json gives: fields in schema order, tagged fields at their default
 * left out, unknown tagged fields dropped, uuids as base64url without padding, bytes as
 * standard base64), in one of two styles:
 *   KC_TJ_PY       Python's json.dumps(..., ensure_ascii=False): ", " between items,
 *                  ": " after keys (the plan's key texts carry it), \u00xx lower-case;
 *   KC_TJ_COMPACT  Jackson's compact text: "," and ":", \u00XX upper-case.
 * A bytes field may be an EMBEDDED message (e.g. a classic group member's
 * consumer-protocol subscription): an int16 version prefix, then the body read with the
 * program of that version (a prefix above the table's: the newest), bytes after the
 * body ignored; when it does not decode, its base64 is written instead.
 * Nothing here knows a message.  Plain C99, no Python headers.
 *
 * PLAN (int32 words; blob: the key texts and default strings it points into, then
 * KC_TJ_PAD bytes: keys are copied in 16-byte steps)
 *   [0] KC_TJ_MAGIC  [1] n_structs (= the program's)
 *   [2 .. 2+n_structs) word offset of each struct block
 *   struct block: [n_out], then n_out x 7 words, in JSON order:
 *     key_off, key_len   blob[key_off..+key_len): `"name": ` (or `"name":`)
 *     src                >= 0: regular field index; < 0: tagged-table index -1 - src
 *     dflt               KC_TJ_D_*: when a tagged field is at its default (left out)
 *     d0, d1             the default: an int64 (d0 low word, d1 high word), or a string
 *                        (blob offset, length)
 *     embed              -1, or (bytes fields) the index of the embedded message table
 */
#ifndef KC_TJSON_H
#define KC_TJSON_H

#include <stddef.h>
#include <stdint.h>

#define KC_TJ_MAGIC 0x544A0001
#define KC_TJ_ENTRY 7
#define KC_TJ_PAD 16

enum { KC_TJ_PY = 0, KC_TJ_COMPACT = 1 };

enum {
    KC_TJ_D_NONE = 0,   /* a regular field: always written                         */
    KC_TJ_D_INT,        /* bool / integer equal to (d1 << 32 | d0)                 */
    KC_TJ_D_NULL,       /* null string / bytes / array / nullable struct           */
    KC_TJ_D_EMPTY,      /* empty (non-null) array, string or bytes                 */
    KC_TJ_D_STR,        /* string equal to blob[d0..d0+d1)                          */
    KC_TJ_D_UUID_ZERO   /* the all-zero uuid                                       */
};

/* A status of kc_tjson_write besides kc_status.h's: the message holds an unknown tagged
 * field and the caller asked to be told (KC_TJ_F_REFUSE_UNKNOWN). */
#define KC_TJ_UNKNOWN_TAGS 100

enum { KC_TJ_F_REFUSE_UNKNOWN = 1 };

typedef struct kc_tj_msg kc_tj_msg;

/* A FLAT message's writer (kc_tjson_flat): one whose top struct holds only integers,
 * booleans and strings, so that its tape is one slot per regular field (then, when
 * flexible, the tagged count).  Its JSON is then fixed texts ("{" or the separator and
 * the key) between the fields' values, written in one loop with no look-up; a message
 * holding tagged fields takes the general writer. */
#define KC_TJ_FLAT_OPS 32
#define KC_TJ_FLAT_TEXT 1024
enum { KC_TJ_FLAT_NUM = 0, KC_TJ_FLAT_BOOL, KC_TJ_FLAT_STR };
typedef struct {
    int32_t style;              /* the style the texts were made for                 */
    int32_t n_ops;
    int32_t n_fields;           /* the top struct's regular fields (= slots)          */
    int32_t flexible;           /* then one slot: the tagged count (0 for this path)  */
    int32_t tail_off, tail_len; /* "}" (or "{}" when no field)                        */
    int32_t room;               /* bytes every line needs but the strings'            */
    int32_t direct;             /* the ops are the fields in wire order: the message can
                                   be written straight from its bytes (kc_tjson_direct) */
    struct {
        int32_t text_off, text_len, slot, kind;
        int32_t type, flags;    /* the field's (KC_T_*, KC_F_*)                       */
    } ops[KC_TJ_FLAT_OPS];
    char text[KC_TJ_FLAT_TEXT + KC_TJ_PAD];
} kc_tj_flat;

/* An embedded message: its program at each int16 version prefix 0..n_versions-1. */
typedef struct {
    const kc_tj_msg *versions;
    int32_t n_versions;
} kc_tj_embed;

struct kc_tj_msg {
    const int32_t *code;        /* a checked program                                */
    const int32_t *plan;        /* a plan checked against it (kc_tjson_check)       */
    const char *blob;
    const kc_tj_embed *embeds;  /* the plan's embed indices point here               */
    int32_t n_embeds;
    const kc_tj_flat *flat;     /* NULL, or the message's flat writer (kc_tjson_flat)  */
};

/* Check a plan against its (checked) program once; the writer trusts a checked pair.
 * Embedded messages' plans must embed nothing themselves. */
int kc_tjson_check(const int32_t *code, const int32_t *plan, size_t plan_len, size_t blob_len,
                   int32_t n_embeds);

/* The flat writer of a checked (program, plan) pair written in `style` into *out:
 * KC_OK, or KC_E_PROGRAM when the message is not flat (or too big for kc_tj_flat). */
int kc_tjson_flat(const kc_tj_msg *m, int style, kc_tj_flat *out);

/* A flat message's JSON (m->flat, the same text as kc_decode + kc_tjson_write give)
 * written straight from its bytes buf[pos..end) (buf_len: what may be read past end,
 * unused): KC_OK, KC_E_SHORT, or KC_TJ_NOT_DIRECT when the message is not flat or its
 * bytes are not plainly it (a field that does not read, a tagged field, bytes left
 * over): kc_decode and kc_tjson_write then say what they are. */
#define KC_TJ_NOT_DIRECT 101
int kc_tjson_direct(const kc_tj_msg *m, int style, const uint8_t *buf, size_t buf_len, size_t pos,
                    size_t end, char *out, size_t cap, size_t *out_len);

/*
 * The JSON text of the message on tape[0..n_slots) (decoded from buf by kc_decode) at
 * out[0..cap).  scratch[0..scratch_cap) is tape room for embedded messages (an embedded
 * payload of n bytes needs n + 2 slots; less is KC_E_INVALID).  KC_E_SHORT: out is too small (nothing
 * counts; call again with more room); KC_E_TAPE: the tape does not follow the program;
 * KC_TJ_UNKNOWN_TAGS (flags KC_TJ_F_REFUSE_UNKNOWN): an unknown tagged field outside
 * embedded messages.
 */
int kc_tjson_write(const kc_tj_msg *m, int style, int flags, const uint8_t *buf, size_t buf_len,
                   const int64_t *tape, size_t n_slots, int64_t *scratch, size_t scratch_cap,
                   char *out, size_t cap, size_t *out_len);

#endif
