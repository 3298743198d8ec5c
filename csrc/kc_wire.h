/*
 * Wire primitives shared by the C kernels, header-only.  Plain C99, no Python
 * headers: big-endian fixed-width reads/writes and Python's strict UTF-8 check.
 */
#ifndef KC_WIRE_H
#define KC_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define KC_LIKELY(x) __builtin_expect(!!(x), 1)
#define KC_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KC_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define KC_LIKELY(x) (x)
#define KC_UNLIKELY(x) (x)
#define KC_ALWAYS_INLINE inline
#endif

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(((unsigned)p[0] << 8) | p[1]); }
static inline uint32_t rd32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t rd64(const uint8_t *p) { return ((uint64_t)rd32(p) << 32) | rd32(p + 4); }
static inline void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void wr64(uint8_t *p, uint64_t v) { wr32(p, (uint32_t)(v >> 32)); wr32(p + 4, (uint32_t)v); }

static size_t utf8_check_slow(const uint8_t *s, size_t n, size_t i);

/* Python's strict UTF-8 (no surrogates, no overlongs, <= U+10FFFF).  Returns the
 * index of the first bad sequence, or n when valid.  ASCII is checked inline. */
static inline size_t utf8_check(const uint8_t *s, size_t n)
{
    size_t i = 0;
    uint64_t w;
    if (n >= 8 && n <= 16) {    /* names: two overlapping words, no loop */
        uint64_t b;
        memcpy(&w, s, 8);
        memcpy(&b, s + n - 8, 8);
        return ((w | b) & 0x8080808080808080ull) ? utf8_check_slow(s, n, 0) : n;
    }
    while (i + 8 <= n) {
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull)
            return utf8_check_slow(s, n, i);
        i += 8;
    }
    if (i == n)
        return n;
    /* the last n - i (< 8) bytes without a loop: the string's last word (overlapping
     * checked bytes), or for short strings two overlapping halves / its first, middle
     * and last byte */
    if (n >= 8) {
        memcpy(&w, s + n - 8, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        w = a | b;
    } else {
        w = (uint64_t)(s[0] | s[n >> 1] | s[n - 1]);
    }
    return (w & 0x8080808080808080ull) ? utf8_check_slow(s, n, i) : n;
}

static size_t utf8_check_slow(const uint8_t *s, size_t n, size_t i)
{
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80)
                return i;
            i += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            uint8_t lo = 0x80, hi = 0xbf;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
            if (i + 2 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xc0) != 0x80)
                return i;
            i += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            uint8_t lo = 0x80, hi = 0xbf;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
            if (i + 3 >= n || s[i + 1] < lo || s[i + 1] > hi || (s[i + 2] & 0xc0) != 0x80
                || (s[i + 3] & 0xc0) != 0x80)
                return i;
            i += 4;
        } else {
            return i;
        }
    }
    return n;
}

#endif
