# C declarations of the spec engine (csrc/kc_engine.h, csrc/kc_varint.h).
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t


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
        KC_OK, KC_E_SHORT, KC_E_VARINT_TRUNC, KC_E_VARINT_LONG, KC_E_NULL, KC_E_STRLEN
        KC_E_UTF8, KC_E_ARRAY_COUNT, KC_E_TAG_COUNT, KC_E_TAG_SIZE, KC_E_BAD_TAG
        KC_E_TAG_SPAN, KC_E_DEPTH, KC_E_PROGRAM, KC_E_TAPE_FULL, KC_E_TAPE, KC_E_TOO_BIG
        KC_E_NOMEM, KC_E_TRAILING
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

    ctypedef struct kc_column:
        int32_t field
        int32_t type
        void *values
        int64_t *offsets
        int32_t *offsets32
        uint8_t *data
        size_t data_len
        size_t data_cap
        int32_t growable
        uint8_t *validity
        int64_t def_i
        const uint8_t *def_bytes
        int64_t def_len

    int kc_decode_bulk(const int32_t *code, const uint8_t *data, const void *offsets,
                       int offsets_64, size_t n_rows, kc_column *cols, int n_cols,
                       int32_t *status, int64_t *err_off)
