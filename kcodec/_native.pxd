# C declarations of the spec engine (csrc/kc_engine.h, csrc/kc_varint.h) and its bulk
# column decoder (csrc/kc_columns.h).  Status codes: kcodec/_kc_status.pxd.
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t

from kcodec._kc_status cimport *


cdef extern from "kc_varint.h" nogil:
    int kc_read_uvarint(const uint8_t *p, size_t n, uint32_t *out)
    int kc_write_uvarint(uint8_t *p, uint32_t v)
    int kc_sizeof_uvarint(uint32_t v)
    int kc_read_varint(const uint8_t *p, size_t n, int32_t *out)
    int kc_write_varint(uint8_t *p, int32_t v)
    int kc_sizeof_varint(int32_t v)
    int kc_read_varlong(const uint8_t *p, size_t n, int64_t *out)
    int kc_write_varlong(uint8_t *p, int64_t v)
    int kc_sizeof_varlong(int64_t v)


cdef extern from "kc_engine.h" nogil:
    enum:
        KC_PROG_MAGIC
        KC_T_BOOL, KC_T_INT8, KC_T_INT16, KC_T_UINT16, KC_T_INT32, KC_T_UINT32
        KC_T_INT64, KC_T_FLOAT64, KC_T_UUID, KC_T_STRING, KC_T_BYTES, KC_T_RECORDS
        KC_T_STRUCT, KC_T_ARRAY
        KC_F_NULLABLE, KC_F_COMPACT, KC_F_TAGGED
        KC_MAX_DEPTH, KC_MAX_PATH
        KC_PATH_FIELD, KC_PATH_TAGGED, KC_PATH_INDEX

    int64_t KC_REF(size_t off, size_t length)
    size_t KC_REF_OFF(int64_t r)
    size_t KC_REF_LEN(int64_t r)

    ctypedef struct kc_path_elem:
        int32_t kind
        int32_t sidx
        int64_t value

    ctypedef struct kc_error:
        int code
        int64_t offset
        int64_t a
        int64_t b
        int path_len
        kc_path_elem path[160]

    int kc_program_check(const int32_t *code, size_t code_len)
    int kc_decode(const int32_t *code, const uint8_t *buf, size_t len, size_t pos,
                  int64_t *tape, size_t cap, size_t *end, size_t *n_slots, kc_error *err)
    int kc_encode_size(const int32_t *code, const int64_t *tape, size_t n_slots,
                       const uint8_t *heap, size_t heap_len, uint32_t *aux,
                       size_t *size, kc_error *err)
    int kc_encode_write(const int32_t *code, const int64_t *tape, size_t n_slots,
                        const uint8_t *heap, size_t heap_len, const uint32_t *aux,
                        uint8_t *out, kc_error *err)
    int64_t kc_tape_skip(const int32_t *code, const int64_t *tape, size_t n_slots, size_t i,
                         int type, int flags, int arg, int in_tag)


cdef extern from "kc_columns.h" nogil:
    enum:
        KC_N_STRUCT, KC_N_LIST, KC_N_FIXED, KC_N_BOOL, KC_N_VAR

    ctypedef struct kc_col:
        int32_t kind
        int32_t type
        int32_t width
        int32_t sidx
        int32_t first_kid
        int32_t n_kids
        int32_t skip
        size_t len
        size_t cap
        uint8_t *validity
        uint8_t *values
        int32_t *offsets
        uint8_t *data
        size_t data_len
        size_t data_cap
        int32_t def_null
        int64_t def_i
        const uint8_t *def_bytes
        size_t def_len

    ctypedef struct kc_columns:
        kc_col *nodes
        int32_t n_nodes
        int32_t *kids
        int32_t n_kids
        const int32_t **codes
        size_t n_codes

    ctypedef struct kc_rows:
        const uint8_t *data
        size_t data_len
        const void *offsets
        int offsets_64
        const uint8_t *valid
        size_t valid_off
        const int64_t *pos
        const int32_t *lens
        size_t skip
        size_t pos_stride, lens_stride
        const int64_t *take
        size_t n_entries
        const uint8_t *select
        const int8_t *which
        int32_t prefix

    ctypedef struct kc_row_info:
        int32_t *status
        int64_t *err_off
        void *versions
        int8_t *have
        int32_t *tagged

    int kc_columns_init(kc_columns *t, const int32_t *code)
    void kc_columns_free(kc_columns *t)
    void kc_columns_skip(kc_columns *t, int32_t i)
    int kc_columns_accepts(const kc_columns *t, const int32_t *code)
    const uint8_t *kc_rows_at(const kc_rows *rows, size_t r, size_t *n)
    int kc_rows_heads(const kc_rows *rows, size_t n, size_t k, uint8_t *out, int32_t *have)
    int kc_columns_decode(kc_columns *t, const kc_rows *rows, size_t n, int32_t *status,
                          int64_t *err_off)
    int kc_columns_decode_rows(kc_columns *t, const kc_rows *rows, size_t n,
                               const kc_row_info *out)
    int kc_columns_init_nodes(kc_columns *t, const int32_t *spec, int32_t n_nodes)
    int kc_columns_map_check(const kc_columns *t, const int32_t *code, const int32_t *map, size_t map_len)
