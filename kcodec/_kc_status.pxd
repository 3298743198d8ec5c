# The C kernels' status codes (csrc/kc_status.h) and the one place they become Python
# exceptions.  Every binding cimports this instead of mapping codes itself.

cdef extern from "kc_status.h" nogil:
    enum:
        KC_OK, KC_E_SHORT, KC_E_VARINT_TRUNC, KC_E_VARINT_LONG, KC_E_NULL, KC_E_STRLEN
        KC_E_UTF8, KC_E_ARRAY_COUNT, KC_E_TAG_COUNT, KC_E_TAG_SIZE, KC_E_BAD_TAG
        KC_E_TAG_SPAN, KC_E_DEPTH, KC_E_PROGRAM, KC_E_TAPE_FULL, KC_E_TAPE, KC_E_TOO_BIG
        KC_E_NOMEM, KC_E_TRAILING, KC_E_NULL_ROW


cdef inline object status_error(int code, str what):
    """The exception for a C status that is not about a particular input's bytes (those
    become DecodeError with field path and offset where the caller knows them):
    allocation -> MemoryError, malformed program -> SchemaError, input too large ->
    ValueError, anything else -> DecodeError."""
    from kcodec.errors import DecodeError, SchemaError
    if code == KC_E_NOMEM:
        return MemoryError(f"{what}: out of memory")
    if code == KC_E_PROGRAM:
        return SchemaError(f"{what}: malformed program")
    if code == KC_E_TOO_BIG:
        return ValueError(f"{what}: input larger than the 4 GiB a single call takes")
    return DecodeError(f"{what}: status {code}")
