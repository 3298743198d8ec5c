/*
 * Kafka varints (ByteUtils), header-only.  Plain C99, no Python headers.
 *
 *   uvarint : unsigned int32, little-endian base 128, at most 5 bytes.  Like
 *             Kafka's readUnsignedVarint, the bits of the 5th byte above 2^32 are
 *             dropped, and only a 5th byte with its continuation bit is "too long".
 *   varint  : zig-zag int32 over uvarint.
 *   varlong : zig-zag int64, at most 10 bytes (a 10th byte with continuation bit
 *             is too long).
 *
 * Readers return the number of bytes consumed (> 0), or KC_VARINT_TRUNCATED /
 * KC_VARINT_TOO_LONG.  Writers return the bytes written; the caller provides room
 * for kc_sizeof_*() bytes (at most 5 / 10).
 */
#ifndef KC_VARINT_H
#define KC_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define KC_VARINT_TRUNCATED (-1)
#define KC_VARINT_TOO_LONG  (-2)

static inline int kc_read_uvarint(const uint8_t *p, size_t n, uint32_t *out)
{
    uint32_t v;
    if (n > 0 && p[0] < 0x80) {         /* the common one-byte case */
        *out = p[0];
        return 1;
    }
    v = 0;
    for (int i = 0; i < 5; i++) {
        uint8_t b;
        if ((size_t)i >= n)
            return KC_VARINT_TRUNCATED;
        b = p[i];
        if (i == 4) {
            if (b & 0x80)
                return KC_VARINT_TOO_LONG;
            v |= (uint32_t)b << 28;     /* bits above 2^32 are dropped, as in Kafka */
            *out = v;
            return 5;
        }
        v |= (uint32_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return KC_VARINT_TOO_LONG;          /* not reached */
}

static inline uint32_t kc_zigzag32(int32_t v)
{
    return ((uint32_t)v << 1) ^ (uint32_t)(-(int32_t)((uint32_t)v >> 31));
}

static inline int32_t kc_unzigzag32(uint32_t v)
{
    return (int32_t)((v >> 1) ^ (uint32_t)(-(int32_t)(v & 1)));
}

static inline uint64_t kc_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(-(int64_t)((uint64_t)v >> 63));
}

static inline int64_t kc_unzigzag64(uint64_t v)
{
    return (int64_t)((v >> 1) ^ (uint64_t)(-(int64_t)(v & 1)));
}

static inline int kc_read_varint(const uint8_t *p, size_t n, int32_t *out)
{
    uint32_t u;
    int r = kc_read_uvarint(p, n, &u);
    if (r > 0)
        *out = kc_unzigzag32(u);
    return r;
}

static inline int kc_read_uvarlong(const uint8_t *p, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        uint8_t b;
        if ((size_t)i >= n)
            return KC_VARINT_TRUNCATED;
        b = p[i];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return i + 1;
        }
    }
    return KC_VARINT_TOO_LONG;          /* shift would exceed 63, as Kafka rejects */
}

static inline int kc_read_varlong(const uint8_t *p, size_t n, int64_t *out)
{
    uint64_t u;
    int r = kc_read_uvarlong(p, n, &u);
    if (r > 0)
        *out = kc_unzigzag64(u);
    return r;
}

static inline int kc_sizeof_uvarlong(uint64_t v)
{
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline int kc_write_uvarlong(uint8_t *p, uint64_t v)
{
    int n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* The 32-bit forms are the 64-bit ones on a widened value: one encoder. */
static inline int kc_sizeof_uvarint(uint32_t v) { return kc_sizeof_uvarlong(v); }

static inline int kc_write_uvarint(uint8_t *p, uint32_t v) { return kc_write_uvarlong(p, v); }

static inline int kc_sizeof_varint(int32_t v) { return kc_sizeof_uvarint(kc_zigzag32(v)); }

static inline int kc_write_varint(uint8_t *p, int32_t v) { return kc_write_uvarint(p, kc_zigzag32(v)); }

static inline int kc_sizeof_varlong(int64_t v) { return kc_sizeof_uvarlong(kc_zigzag64(v)); }

static inline int kc_write_varlong(uint8_t *p, int64_t v) { return kc_write_uvarlong(p, kc_zigzag64(v)); }

#endif
