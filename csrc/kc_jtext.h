/*
 * JSON text pieces shared by the dump writers (kc_jsonl.c, kc_kjson.c): decimal integers
 * as Python's str(int) / Java's Long.toString write them, and strings escaped as Python's
 * json.dumps(..., ensure_ascii=False) does.  Header-only (static inline): the writers'
 * inner loops inline them.  Plain C99, no Python headers.
 */
#ifndef KC_JTEXT_H
#define KC_JTEXT_H

#include <stdint.h>
#include <string.h>

/* Python's json escapes: the two-character forms, \u00XX (lowercase hex) for the
 * other control characters; everything else (non-ASCII included) as it is. */
static const char HEX[] = "0123456789abcdef";
static const char HEX_UPPER[] = "0123456789ABCDEF";   /* Jackson's \u001F */

static inline int needs_escape(unsigned char c)
{
    return c < 0x20 || c == '"' || c == '\\';
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Whether any of the 8 bytes of x is < 0x20, '"' or '\\' (exact: each test is the classic
 * "has a byte less than n" / "has a zero byte" word trick, which never misses one). */
static inline int word_needs_escape(uint64_t x)
{
    uint64_t ctl = (x - ONES * 0x20) & ~x;
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ctl) & HIGHS ? 1 : 0;
}

/* The high bit of each byte of x that may need an escape: every one that does (the
 * tricks never miss one); a borrow from one that does may mark the bytes after it too. */
static inline uint64_t word_escapes(uint64_t x)
{
    uint64_t ctl = (x - ONES * 0x20) & ~x;
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) | ctl) & HIGHS;
}

/* Masks of a string's own n <= 16 bytes in the two words loaded from its start (what
 * follows it in the buffer, e.g. the next field's length, does not count). */
static inline void short_masks(size_t n, uint64_t *m0, uint64_t *m1)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    *m0 = n >= 8 ? ~0ull : n == 0 ? 0 : ~0ull << (8 * (8 - n));
    *m1 = n <= 8 ? 0 : n >= 16 ? ~0ull : ~0ull << (8 * (16 - n));
#else
    *m0 = n >= 8 ? ~0ull : (1ull << (8 * n)) - 1;
    *m1 = n <= 8 ? 0 : n >= 16 ? ~0ull : (1ull << (8 * (n - 8))) - 1;
#endif
}

/* Whether a string of n <= 16 bytes at s (16 of them readable) may need an escape (or,
 * with `ascii`, holds a non-ASCII byte).  No false "no": a yes sends the caller to the
 * exact path. */
static inline int short_needs_escape(const unsigned char *s, size_t n, int ascii)
{
    uint64_t w0, w1, m0, m1, hi = ascii ? HIGHS : 0;
    memcpy(&w0, s, 8);
    memcpy(&w1, s + 8, 8);
    short_masks(n, &m0, &m1);
    return (((word_escapes(w0) | (w0 & hi)) & m0) | ((word_escapes(w1) | (w1 & hi)) & m1)) != 0;
}

/* A string of n <= 16 bytes at s (16 readable) written quoted at p when it needs no
 * escape (17 bytes written past p + 1 at most: the caller's slack); NULL otherwise. */
static inline char *write_short_string(char *p, const unsigned char *s, size_t n)
{
    if (short_needs_escape(s, n, 0))
        return NULL;
    *p = '"';
    memcpy(p + 1, s, 16);
    p[1 + n] = '"';
    return p + 2 + n;
}

static const char DIGITS2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t POW10[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

/* Decimal digits of u (1 for 0): from its bit length where the compiler says it. */
static inline int n_digits(uint64_t u)
{
#if defined(__GNUC__) || defined(__clang__)
    uint64_t w = u | 1;
    int t = ((64 - __builtin_clzll(w)) * 1233) >> 12;    /* ~ bits * log10(2) */
    return t - (w < POW10[t]) + 1;
#else
    int n = 1;
    while (n < 20 && u >= POW10[n])
        n++;
    return n;
#endif
}

static inline void put2(char *q, uint32_t v)
{
    memcpy(q, DIGITS2 + 2 * v, 2);
}

/* Eight digits of v < 10^8 at q, in 32-bit arithmetic. */
static inline void put8(char *q, uint32_t v)
{
    uint32_t hi = v / 10000, lo = v % 10000;
    put2(q, hi / 100);
    put2(q + 2, hi % 100);
    put2(q + 4, lo / 100);
    put2(q + 6, lo % 100);
}

/* The n (1..8) digits of v < 10^n at p, with no branch on n: all eight are formed, the
 * last n copied in one 8-byte step (up to 8 bytes written: the caller's slack). */
static inline void put_short(char *p, uint32_t v, int n)
{
    char tmp[16];
    put8(tmp, v);
    memset(tmp + 8, '0', 8);
    memcpy(p, tmp + 8 - n, 8);
}

/* Decimal text of v at p; returns the length.  Writes up to 24 bytes whatever the length
 * (the caller's slack). */
static inline int write_i64(char *p, int64_t v)
{
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    int neg = v < 0;
    *p = '-';
    p += neg;
    int n = n_digits(u);
    if (n <= 8) {
        put_short(p, (uint32_t)u, n);
    } else if (n <= 16) {
        put_short(p, (uint32_t)(u / 100000000u), n - 8);
        put8(p + n - 8, (uint32_t)(u % 100000000u));
    } else {
        uint64_t hi = u / 100000000u;
        put_short(p, (uint32_t)(hi / 100000000u), n - 16);
        put8(p + n - 16, (uint32_t)(hi % 100000000u));
        put8(p + n - 8, (uint32_t)(u % 100000000u));
    }
    return neg + n;
}

/* write_i64 with the small values (ids, partitions, epochs, -1 sentinels) on a short path. */
static inline int write_num(char *p, int64_t v)
{
    if ((uint64_t)v < 10) {
        *p = (char)('0' + v);
        return 1;
    }
    if ((uint64_t)v < 100) {
        memcpy(p, DIGITS2 + 2 * v, 2);
        return 2;
    }
    if (v == -1) {
        memcpy(p, "-1", 2);
        return 2;
    }
    return write_i64(p, v);
}

/* Writes a string's JSON text at p; the caller made room for 2 + 6 bytes per byte. */
static inline char *write_string_hex(char *p, const unsigned char *s, const unsigned char *e,
                                     const char *hex)
{
    *p++ = '"';
    while (s < e) {
        const unsigned char *run = s;
        while (e - s >= 8) {
            uint64_t x;
            memcpy(&x, s, 8);
            if (word_needs_escape(x))
                break;
            s += 8;
        }
        while (s < e && !needs_escape(*s))
            s++;
        memcpy(p, run, (size_t)(s - run));
        p += s - run;
        if (s == e)
            break;
        unsigned char ch = *s++;
        *p++ = '\\';
        switch (ch) {
        case '"': *p++ = '"'; break;
        case '\\': *p++ = '\\'; break;
        case '\n': *p++ = 'n'; break;
        case '\r': *p++ = 'r'; break;
        case '\t': *p++ = 't'; break;
        case '\b': *p++ = 'b'; break;
        case '\f': *p++ = 'f'; break;
        default:
            *p++ = 'u'; *p++ = '0'; *p++ = '0';
            *p++ = hex[ch >> 4]; *p++ = hex[ch & 15];
        }
    }
    *p++ = '"';
    return p;
}

/* Python json's text of a string (lower-case hex escapes). */
static inline char *write_string(char *p, const unsigned char *s, const unsigned char *e)
{
    return write_string_hex(p, s, e, HEX);
}

#endif
