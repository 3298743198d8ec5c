/*
 * Bulk decoding into columns: N values of one program appended, row by row,
 * into a tree of growable column buffers in Arrow's layout.  Plain C99, no
 * Python headers; nothing here knows a particular message.
 *
 * The tree mirrors the program (kc_engine.h), numbered in pre-order (a node,
 * then each child's subtree in turn); node 0 is the message:
 *
 *   struct  -> KC_N_STRUCT: children = regular fields (wire order), tagged fields
 *              (tagged-table order), then, if flexible, its unknown tagged fields
 *   array   -> KC_N_LIST: int32 offsets (len + 1) and one child, the element
 *   string, bytes, records -> KC_N_VAR: int32 offsets (len + 1) + data
 *   bool    -> KC_N_BOOL: bit-packed values
 *   ints, float64, uuid -> KC_N_FIXED: `width` bytes per value, little-endian
 *              (uuid: its 16 bytes as on the wire)
 *   unknown tagged fields -> LIST of STRUCT (sidx -1) of {FIXED int32 tag, VAR data}
 *
 * Every node has `len` values and a validity bitmap (LSB first; NULL while it
 * has no null: all valid; its bits from `len` to `cap` are set); a struct's
 * children hold exactly one value per struct value (a null struct gets a null
 * in every child).  A tagged field absent from a struct takes the node's
 * default (def_*; set by the caller, all zero = null / 0 / empty).
 *
 * A row that fails to decode rolls back what it appended and becomes a null
 * root; status[r] = its KC_E_* code and err_off[r] = the byte offset of the
 * failure in the message (after `skip`).  A null row is a null root with
 * status KC_E_NULL_ROW.  Lengths read from the input are checked against the
 * bytes left before anything grows, so memory stays proportional to the input.
 */
#ifndef KC_COLUMNS_H
#define KC_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include "kc_status.h"

enum { KC_N_STRUCT = 1, KC_N_LIST, KC_N_FIXED, KC_N_BOOL, KC_N_VAR };

#define KC_COLUMNS_MAX_NODES (1 << 16)

typedef struct {
    int32_t kind;           /* KC_N_*                                              */
    int32_t type;           /* KC_T_* of the value; KC_T_INT32/KC_T_BYTES in unknown tags */
    int32_t width;          /* FIXED: bytes per value                              */
    int32_t sidx;           /* STRUCT: struct index in the program (-1: unknown tag) */
    int32_t first_kid;      /* its children: kids[first_kid .. first_kid + n_kids) */
    int32_t n_kids;
    int32_t skip;           /* decoded (checked) but not kept; len stays 0         */
    size_t len, cap;
    uint8_t *validity;      /* cap bits; NULL until the first null; set from len on */
    uint8_t *values;        /* FIXED: cap * width bytes; BOOL: cap bits            */
    int32_t *offsets;       /* LIST, VAR: cap + 1 entries                          */
    uint8_t *data;          /* VAR                                                 */
    size_t data_len, data_cap;
    /* the default of an absent tagged field, and of the fields of a default struct */
    int32_t def_null;       /* 1: null                                             */
    int64_t def_i;          /* FIXED/BOOL: the value (float64: its IEEE bits)      */
    const uint8_t *def_bytes;   /* VAR: the bytes; uuid: 16 bytes (NULL = zeros)   */
    size_t def_len;
} kc_col;

typedef struct {
    kc_col *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t *kids;
    int32_t n_kids, cap_kids;
    const int32_t *code;
    int32_t *row_nodes;     /* the nodes holding one value per row (the message and its
                               structs' fields outside lists), in pre-order */
    int32_t n_row_nodes;
    /* several versions in one tree (rows.which): row r decodes with codes[which[r]]
     * (NULL: a null row); each program was accepted by kc_columns_accepts.  Without
     * rows.which every row decodes with `code`. */
    const int32_t *const *codes;
    size_t n_codes;
} kc_columns;

/* Where the rows are.  Either an Arrow (Large)Binary array: row r is
 * data[offsets[r] .. offsets[r + 1]) (int32 or int64 offsets, n + 1 entries),
 * null where bit valid_off + r of `valid` is 0 (valid NULL: no nulls); or
 * record slices: entry e is data[pos[e] .. pos[e] + lens[e]), lens[e] < 0 = null,
 * and row r is entry r, or entry take[r] when `take` is set (take[r] outside
 * [0, n_entries) makes a bad row).  pos_stride / lens_stride are the bytes from
 * one entry to the next (0: packed), so the fields of an array of structs such
 * as the batch scanner's records are read in place.  With `select`, row r is a
 * null row wherever select[r] == 0 (any source), and with `which` wherever
 * which[r] < 0.
 * The first `skip` bytes of each row (a version prefix) are not part of the
 * message.  With `prefix` (2 or 4; kc_columns_decode_rows only) each row starts
 * with a big-endian int16 / int32 version that picks the row's program:
 * kc_columns.codes[version] (a version below 0 or past n_codes, or a NULL
 * program: a null row); `skip` is then usually the prefix, or 0 when the
 * version is also the message's first field. */
typedef struct {
    const uint8_t *data;
    size_t data_len;
    const void *offsets;
    int offsets_64;
    const uint8_t *valid;
    size_t valid_off;
    const int64_t *pos;
    const int32_t *lens;
    size_t skip;
    size_t pos_stride, lens_stride;
    const int64_t *take;
    size_t n_entries;
    const uint8_t *select;
    const int8_t *which;    /* with kc_columns.codes: row r's program; < 0 = a null row */
    int32_t prefix;         /* 0, or 2 / 4: the version prefix that picks each row's program */
} kc_rows;

/* What kc_columns_decode_rows reports per row; a NULL pointer: not wanted. */
typedef struct {
    int32_t *status;        /* KC_OK, KC_E_NULL_ROW (a null row, selected out, or no
                               program for its version), or the row's KC_E_* error   */
    int64_t *err_off;       /* the failure's byte offset in the message (after skip) */
    void *versions;         /* rows.prefix 2: int16, 4: int32: the row's version, -1
                               when the row has fewer bytes (null, short, outside)   */
    int8_t *have;           /* rows.prefix: the prefix bytes the row has (at most the
                               prefix), -1 a null row, -2 a row outside the data      */
    int32_t *tagged;        /* the tagged fields (known and unknown) in the tag section
                               of the message's top-level struct; 0 unless decoded    */
} kc_row_info;

/* Row r's bytes (its prefix included), or NULL for a null row (*n = 0) or a row
 * outside the data (*n = 1). */
const uint8_t *kc_rows_at(const kc_rows *rows, size_t r, size_t *n);

/* kc_rows_at of rows from an Arrow (Large)Binary array (no pos) selecting every row (no
 * select, no which), inline for per-row loops; kc_rows_is_array tells such rows. */
static inline int kc_rows_is_array(const kc_rows *rows)
{
    return !rows->pos && !rows->select && !rows->which;
}

static inline const uint8_t *kc_rows_array_at(const kc_rows *rows, size_t r, size_t *n)
{
    size_t a, b;
    if (rows->valid) {
        size_t bit = rows->valid_off + r;
        if (!(rows->valid[bit >> 3] & (1u << (bit & 7)))) {
            *n = 0;
            return NULL;
        }
    }
    if (rows->offsets_64) {
        a = (size_t)((const int64_t *)rows->offsets)[r];
        b = (size_t)((const int64_t *)rows->offsets)[r + 1];
    } else {
        a = (size_t)(uint32_t)((const int32_t *)rows->offsets)[r];
        b = (size_t)(uint32_t)((const int32_t *)rows->offsets)[r + 1];
    }
    if (b < a || b > rows->data_len) {
        *n = 1;
        return NULL;
    }
    *n = b - a;
    return rows->data + a;
}

/* The first k (<= 8) bytes of each of n rows (version prefixes, frame heads):
 * out[r * k ..] zero-padded, have[r] = the bytes the row has (at most k), -1 for
 * a null row, -2 for a row outside the data.  `skip` is not applied. */
int kc_rows_heads(const kc_rows *rows, size_t n, size_t k, uint8_t *out, int32_t *have);

/* Build the tree of a checked program (empty columns).  KC_OK, KC_E_NOMEM, or
 * KC_E_PROGRAM (deeper than KC_MAX_DEPTH or more than KC_COLUMNS_MAX_NODES). */
int kc_columns_init(kc_columns *t, const int32_t *code);

/* Whether rows of the checked program `code` can be appended to the tree t (built
 * from another version of the message): the same structs with the same fields of the
 * same types (tagged fields: the same tags), where a struct flexible in `code` is
 * flexible in the tree.  A struct not flexible in `code` but flexible in the tree
 * takes the defaults of the tree's tagged fields and no unknown tags, as Kafka reads a
 * field a version does not have.  1 yes, 0 no. */
int kc_columns_accepts(const kc_columns *t, const int32_t *code);

/* Free the tree and every buffer still owned by it (a caller that takes a
 * buffer sets the pointer to NULL). */
void kc_columns_free(kc_columns *t);

/* Mark node i and its subtree as not kept. */
void kc_columns_skip(kc_columns *t, int32_t i);

/* Append n rows.  Returns KC_OK (row errors are in status/err_off) or
 * KC_E_NOMEM (the columns are then unusable). */
int kc_columns_decode(kc_columns *t, const kc_rows *rows, size_t n, int32_t *status,
                      int64_t *err_off);

/* kc_columns_decode reporting what `out` asks for (out->status is required).  The
 * versions and prefix bytes are those of every row, selected out or not.  Returns
 * KC_OK, KC_E_NOMEM, KC_E_PROGRAM (which[r] past the programs) or KC_E_INVALID
 * (a prefix other than 0, 2, 4; a prefix with `which` or without programs). */
int kc_columns_decode_rows(kc_columns *t, const kc_rows *rows, size_t n,
                           const kc_row_info *out);

/* ---------------------------------------------------------------------------
 * Union trees: the rows of several programs (the versions of a message, or messages
 * whose fields share columns) in one tree whose structs hold the fields of all of them.
 *
 * kc_columns_init_nodes builds a tree from an explicit node list: per node, in
 * pre-order (node 0 the root struct), the words kind, type (KC_T_*), width (FIXED:
 * bytes per value), n_kids, then the kids' node indices (each after its parent).
 *
 * A program decodes into it through a FIELD MAP (int32 words): map[u] for each node u
 * of the tree is the offset in `map` of u's block, or -1 (no struct of the program
 * lands on u); a block is n_missing, then n_missing kid slots of u that the program's
 * struct lacks (slot s >= 0: a null there; -1 - s: an empty list, the unknown tagged
 * fields of a version without a tag section), then, for each field of the program's
 * struct (regular, tagged, then its unknown tagged fields when flexible), the kid slot
 * of u it goes to.  Kids that keep nothing (kc_columns_skip) may be left out of the
 * missing list: nothing is appended to them either way.
 */

/* Whether the checked program `code` decodes into the tree t through `map` (map_len
 * words): each struct of the program maps onto a struct node, each field onto a kid
 * of the field's type, every kid that keeps values filled exactly once per struct
 * value.  1 yes, 0 no.
 * kc_columns_decode_one trusts a map that passed. */
int kc_columns_map_check(const kc_columns *t, const int32_t *code, const int32_t *map, size_t map_len);

/* Build a union tree (empty columns).  KC_OK, KC_E_NOMEM or KC_E_PROGRAM (a malformed
 * node list).  Defaults (def_*) are the caller's to set, as for kc_columns_init. */
int kc_columns_init_nodes(kc_columns *t, const int32_t *spec, int32_t n_nodes);

/* A new tree with src's structure, skips and defaults and no values (a cached tree's
 * columns for one batch).  What src skips stays skipped in it. */
int kc_columns_clone(kc_columns *dst, const kc_columns *src);

/* Room for n more rows in the nodes that hold one value per row. */
int kc_columns_reserve_rows(kc_columns *t, size_t n);

/* Append k null rows / drop the rows from n on. */
int kc_columns_put_nulls(kc_columns *t, size_t k);
void kc_columns_truncate(kc_columns *t, size_t n);

/* Decode one row, p[skip .. n), with `code` (checked) and its field map (NULL: the
 * tree is code's own) and append it.  Returns KC_OK, or the row's KC_E_* error (its
 * offset in *err_off) with nothing appended (KC_E_NOMEM: the tree is unusable). */
int kc_columns_decode_one(kc_columns *t, const int32_t *code, const int32_t *map,
                          const uint8_t *p, size_t n, size_t skip, int64_t *err_off);

/* ---------------------------------------------------------------------------
 * Flat programs: a message whose fields are all scalars, strings and bytes (no struct
 * or array field), compiled once per (tree, program, field map) into a list of steps:
 * read each field into its column, or check it (strings, bytes) or skip it (fixed-width
 * fields, folded into the next step's bounds check) where nothing keeps it; the tag
 * section when it is empty; the nulls, defaults and empty lists the row appends
 * elsewhere.  A row runs them with the read position in a register and no per-field
 * dispatch on types.  Anything else (a tagged field present, an error of any kind, an
 * overlong varint, an allocation failure) rolls the row back and leaves it to the
 * generic decoder, so results, errors and offsets are exactly kc_columns_decode_one's.
 * Nodes' skip flags are read at build time: the tree the rows go to is t or a clone of
 * it (kc_columns_clone).
 */
typedef struct kc_flat kc_flat;

/* *out = the flat program of `code` (checked) and its field map (NULL: t is code's own
 * tree; map passed kc_columns_map_check), or NULL when `code` is not flat.  KC_OK or
 * KC_E_NOMEM.  The program and map must outlive it; kc_flat_free releases it. */
int kc_flat_build(const kc_columns *t, const int32_t *code, const int32_t *map, kc_flat **out);
void kc_flat_free(kc_flat *f);

/* Append row p[skip .. n) the flat way: KC_OK, or 1 with nothing appended (the row is
 * for kc_columns_decode_one). */
int kc_flat_try(kc_columns *t, const kc_flat *f, const uint8_t *p, size_t n, size_t skip);

/* kc_columns_decode_one(t, code, map, p, n, skip, err_off) for f's program and map,
 * the flat way when the row allows it. */
int kc_columns_decode_flat(kc_columns *t, const kc_flat *f, const uint8_t *p, size_t n, size_t skip,
                           int64_t *err_off);

#endif
