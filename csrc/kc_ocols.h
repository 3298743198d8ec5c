/*
 * __consumer_offsets key/value batches decoded in one call into Arrow arrays (the
 * Spark column function's kernel, kcodec.spark._kernels.decode_offsets).
 *
 * Plain C99, no Python headers; nothing here knows a message: the programs, their
 * field maps into union trees (kc_columns.h) and the layout of the result (an export
 * program, below) come from the caller, built once per (selected record types, fields,
 * Spark types or Kafka's).
 *
 * Per row: the key's int16 prefix is the record type, the value's the value version.
 * A row of a known type (keys[rt].code set) whose value is null (a tombstone) or has a
 * version with a program decodes its key into tree 0 (every key type's fields in one
 * union: group, topic, partition, ...) and its value into its value schema's tree
 * (value_tree[rt]: the union of the schema's versions).  For members_type's values
 * (GroupMetadataValue) of protocol type "consumer", each member's subscription and
 * assignment (int16 version 0..n_protocol-1, then the body) decode into the last two
 * trees, one row per member.  A row that fails anywhere (or that the rules above do
 * not cover: type 0, unknown types, version anomalies, trailing bytes, embedded
 * versions past the programs) is rolled back everywhere, null in every tree, and
 * marked for the caller's exact path: status[r] = KC_OC_SLOW.  A row null in both key
 * and value is KC_OC_NULL; a decoded row KC_OC_OK.
 */
#ifndef KC_OCOLS_H
#define KC_OCOLS_H

#include <stddef.h>
#include <stdint.h>

#include "kc_columns.h"

/* The Arrow C data interface (arrow/c/abi.h), as the specification defines it. */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif

enum { KC_OC_SLOW = 0, KC_OC_OK = 1, KC_OC_NULL = 2 };

typedef struct {
    const int32_t *code;    /* a checked program; NULL: rows needing it take the exact path */
    const int32_t *map;     /* its field map into its tree (kc_columns_map_check passed) */
    const kc_flat *flat;    /* its flat program into that tree (kc_flat_build), or NULL */
} kc_oc_prog;

/* Export program: the result's Arrow layout, entries of 5 int32 words in pre-order
 * (op, a, b, c, n_children), each entry's children right after it. */
enum {
    KC_OC_TREE = 1,         /* node b of tree a; c: KC_OC_CONV_*                          */
    KC_OC_STRUCT = 2,       /* a struct: a = 0 one per row, 1 one per member; b >= 0: the
                               validity of tree b's root (rows)                          */
    KC_OC_COL = 3           /* a column of the driver's, a = KC_OC_C_*                    */
};
enum { KC_OC_CONV_NONE = 0, KC_OC_CONV_I32 = 1, KC_OC_CONV_I64 = 2, KC_OC_CONV_BINARY = 3 };
enum {
    KC_OC_C_RECORD_TYPE = 1,    /* int16 per row, null unless decoded                      */
    KC_OC_C_VALUE_VERSION,      /* int16, null unless decoded with a value                 */
    KC_OC_C_TOMBSTONE,          /* bool                                                    */
    KC_OC_C_FALSE,              /* bool false on decoded rows (unknown, newer_than_known)  */
    KC_OC_C_RAW_VALUE,          /* binary: the value bytes of rows of raw[rt] types        */
    KC_OC_C_NULL_STRING,        /* string, all null (per row: _error)                      */
    KC_OC_C_MEMBERS,            /* list per row (1 child: per member), null unless consumer */
    KC_OC_C_SUB_VERSION,        /* int16 per member: its subscription's version            */
    KC_OC_C_ASG_VERSION,        /* ... assignment's                                        */
    KC_OC_C_EMPTY_BINARY,       /* binary per member, all empty                            */
    KC_OC_C_NULL_STRING_M       /* string per member, all null                             */
};

typedef struct {
    int32_t n_types;            /* record types 0 .. n_types - 1                            */
    int32_t n_versions;         /* value versions 0 .. n_versions - 1                       */
    const kc_oc_prog *keys;     /* [rt]                                                     */
    const kc_oc_prog *values;   /* [rt * n_versions + v]                                    */
    const int32_t *value_tree;  /* [rt]: the tree of its values (1 .. n_trees - 1)          */
    const uint8_t *raw;         /* [rt]: its value bytes go to raw_value                    */
    int32_t members_type;       /* -1: no members column                                    */
    /* nodes of members_type's value tree: protocolType (string), members (list), its
     * item struct, and the item's subscription and assignment (bytes) */
    int32_t m_protocol, m_list, m_sub, m_asg;
    int32_t n_protocol;         /* embedded versions 0 .. n_protocol - 1                    */
    const kc_oc_prog *subscription, *assignment;     /* [v]                                */
    int32_t n_trees;            /* keys, value trees, then with members: the two bodies     */
    const kc_columns *trees;    /* the trees' templates (kc_columns_clone)                  */
    const int32_t *export_prog;
    int32_t n_export;
} kc_oc_plan;

/* Check a plan's shape (indices in range, export program well formed) once.  KC_OK or
 * KC_E_PROGRAM. */
int kc_oc_plan_check(const kc_oc_plan *plan);

/* Decode n rows (key and value: Arrow binary columns, kc_columns.h's kc_rows) and export the result struct into *out (its release frees every
 * buffer; the caller, or the Arrow consumer it hands *out to, must call it).
 * status[r]: KC_OC_*.  Returns KC_OK, KC_E_NOMEM or KC_E_TOO_BIG (a column past
 * Arrow's int32 offsets). */
int kc_oc_decode(const kc_oc_plan *plan, const kc_rows *key, const kc_rows *value,
                 size_t n, uint8_t *status, struct ArrowArray *out);

#endif
