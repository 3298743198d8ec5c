/*
 * Status codes shared by every C kernel (engine, bulk column decoder, batch
 * reader).  Plain C99, no Python headers.
 *
 * Functions return KC_OK (0) or one KC_E_* code; the Cython layer maps a code to
 * a kcodec.errors exception in one place (kcodec/_kc_status.pxd).  `a`/`b` in the
 * comments are the numbers a kc_error carries for that code (kc_engine.h).
 *
 * The record batch reader reports per-batch conditions (KC_ST_*, kc_batch.h) in
 * the same numbering space's KC_OK; they describe data, not a failed call.
 */
#ifndef KC_STATUS_H
#define KC_STATUS_H

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
    KC_E_TRAILING,      /* bulk: a bytes after the message                     */
    KC_E_NULL_ROW       /* bulk: the row itself is null (not an error)         */
};

#endif
