/*
 * JSON lines from columns: a generic text writer for dumps.
 *
 * Each printed row follows one template, a list of ops: a literal piece, or a
 * reference to a column whose value at the row is written as JSON text.  Columns
 * are plain buffers (Arrow layout for strings: int32 offsets + UTF-8 data, and an
 * optional validity bitmap, a null written as `null`), optionally reached through a
 * per-row index (`take`: e.g. a record's batch).  Nothing here knows what the rows
 * mean.  Strings are escaped exactly as Python's json.dumps(..., ensure_ascii=False)
 * does; numbers are written as Python's str(int) does.  Plain C99, no Python headers.
 */
#ifndef KC_JSONL_H
#define KC_JSONL_H

#include <stddef.h>
#include <stdint.h>

enum {
    KC_J_I64 = 1, KC_J_I32, KC_J_I16, KC_J_I8,
    KC_J_STR,    /* a JSON string: quotes + escaped UTF-8                         */
    KC_J_RAW,    /* the bytes as they are (text already formatted)                */
    KC_J_ENUM    /* uint8 code -> one of `names` (e.g. false/true, a type name)   */
};

typedef struct {
    int type;
    const void *values;        /* numbers / ENUM codes; STR/RAW: the data bytes          */
    const int32_t *offsets;    /* STR/RAW: length + 1 offsets into `values`              */
    int64_t data_len;          /* STR/RAW: bytes in `values` (offsets are checked)       */
    const uint8_t *valid;      /* optional validity bitmap (LSB first), bit = index + bit_offset */
    int64_t bit_offset;
    int64_t length;            /* entries: an index outside [0, length) is an error      */
    const int64_t *take;       /* optional: the entry of row r is take[r]                */
    int64_t take_length;       /* rows `take` covers                                     */
    const char *const *names;  /* ENUM: the literal of each code                         */
    const int32_t *name_lens;
    int32_t n_names;
} kc_jcol;

/* Literals are copied in 16-byte steps: `lit` must have KC_JSONL_PAD readable bytes
 * after its lit_len. */
#define KC_JSONL_PAD 16

typedef struct {
    int32_t col;               /* column index, or -1 for the literal                    */
    const char *lit;
    int32_t lit_len;
} kc_jop;

typedef struct {
    const kc_jop *ops;
    int32_t n_ops;
} kc_jtemplate;

/*
 * Write rows rows[0..n_rows) (row indices into the columns) in that order, row r
 * following templates[row_tpl[r]] (a negative template: the row is not printed),
 * into out[0..cap) (bytes past the end of the text may be written, up to cap);
 * row_ends (optional) gets the end of each row's text (of rows[j]: row_ends[j]).
 * Only whole rows are written: when the next row does not fit,
 * returns KC_E_SHORT with *rows_done rows written (call again from there with more
 * room).  *out_len is the bytes written.  An index outside a column, a template or
 * an offsets range is KC_E_INVALID (nothing past the last whole row counts).
 */
int kc_jsonl_write(const kc_jtemplate *templates, int32_t n_templates,
                   const kc_jcol *cols, int32_t n_cols,
                   const int64_t *rows, const int32_t *row_tpl, int64_t n_row_tpl,
                   int64_t n_rows, char *out, int64_t cap, int64_t *row_ends,
                   int64_t *rows_done, int64_t *out_len);

/*
 * JSON text from a token stream: the text json.dumps(..., ensure_ascii=False) writes
 * with its default separators (", " between items, ": " after a key), for values a
 * caller flattened into tokens (e.g. Python dicts, lists, strings and ints).  The
 * writer keeps no stack: a comma goes before any key or value that follows another
 * item at its level, so a well-nested stream gives well-nested text (a badly nested one
 * gives bad text, never a bad access).
 */
enum {
    KC_JT_OBJ = 1,   /* `{`                                                  */
    KC_JT_END_OBJ,   /* `}`                                                  */
    KC_JT_ARR,       /* `[`                                                  */
    KC_JT_END_ARR,   /* `]`                                                  */
    KC_JT_KEY,       /* s[0..len) as a JSON string, then `: `                */
    KC_JT_STR,       /* s[0..len) as a JSON string                           */
    KC_JT_INT,       /* i in decimal                                         */
    KC_JT_RAW        /* s[0..len) as it is (true, false, null, big numbers)  */
};

typedef struct {
    int32_t kind;
    int32_t len;         /* KEY, STR, RAW: bytes at s                         */
    const char *s;
    int64_t i;           /* INT                                               */
} kc_jtok;

/*
 * Write tokens[0..n) as JSON text into out[0..cap); *out_len is its length.
 * KC_E_SHORT: out is too small (*out_len 0; call again with more room, at most
 * kc_json_room bytes are needed); KC_E_INVALID: an unknown kind or a negative length.
 */
int kc_json_write(const kc_jtok *tokens, int64_t n, char *out, int64_t cap, int64_t *out_len);

/* Room enough for kc_json_write of tokens[0..n) (-1: a bad token). */
int64_t kc_json_room(const kc_jtok *tokens, int64_t n);

#endif
