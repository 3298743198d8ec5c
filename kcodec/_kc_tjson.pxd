# The tape JSON writer (csrc/kc_tjson.h), declared once for the bindings that print
# messages with it: the offsets dump (kcodec.offsets._odump) and the KRaft dump's two
# paths (kcodec.kraft._dump, kcodec.log._jsonl).
from libc.stdint cimport int32_t, int64_t, uint8_t

cdef extern from "kc_tjson.h" nogil:
    enum:
        KC_TJ_PY, KC_TJ_COMPACT, KC_TJ_NOT_DIRECT
    ctypedef struct kc_tj_flat:
        pass
    ctypedef struct kc_tj_embed:
        const kc_tj_msg *versions
        int32_t n_versions
    ctypedef struct kc_tj_msg:
        const int32_t *code
        const int32_t *plan
        const char *blob
        const kc_tj_embed *embeds
        int32_t n_embeds
        const kc_tj_flat *flat
    int kc_tjson_check(const int32_t *code, const int32_t *plan, size_t plan_len, size_t blob_len,
                       int32_t n_embeds)
    int kc_tjson_flat(const kc_tj_msg *m, int style, kc_tj_flat *out)
    int kc_tjson_direct(const kc_tj_msg *m, int style, const uint8_t *buf, size_t buf_len, size_t pos,
                        size_t end, char *out, size_t cap, size_t *out_len)
    int kc_tjson_write(const kc_tj_msg *m, int style, int flags, const uint8_t *buf, size_t buf_len,
                       const int64_t *tape, size_t n_slots, int64_t *scratch, size_t scratch_cap,
                       char *out, size_t cap, size_t *out_len)

cdef extern from "kc_kjson.h" nogil:
    ctypedef struct kc_kdump_type:
        const int32_t *code
        const int32_t *plan
        const char *blob
        const char *head
        int32_t head_len
    ctypedef struct kc_kdump_state:
        int64_t batch
        int64_t record
        int64_t position
    enum:
        KC_KD_DONE, KC_KD_FULL, KC_KD_BATCH, KC_KD_RECORD
    int kc_kdump_lines(const kc_kdump_type *types, int32_t n_keys, int32_t n_versions,
                       const uint8_t *data, size_t data_len,
                       const void *batches, int64_t n_batches,
                       const void *recs, int64_t n_recs,
                       kc_kdump_state *st, char *out, size_t cap, size_t *out_len)
