/* CRC-32C: slice-by-8 tables, plus the SSE4.2 instruction picked at run time. */
#include "kc_crc32c.h"

#include <string.h>

#define KC_CRC32C_POLY 0x82F63B78u

static uint32_t kc_crc_table[8][256];
static int kc_crc_ready = 0;   /* 0: not set up, 1: portable, 2: hardware */

static void kc_crc32c_init_tables(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++)
            c = (c & 1u) ? (c >> 1) ^ KC_CRC32C_POLY : c >> 1;
        kc_crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = kc_crc_table[0][n];
        for (int t = 1; t < 8; t++) {
            c = kc_crc_table[0][c & 0xffu] ^ (c >> 8);
            kc_crc_table[t][n] = c;
        }
    }
}

static uint32_t kc_crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    /* Byte at a time until 8-byte chunks; the chunk loop reads little-endian
     * words byte by byte so it is correct on any host byte order. */
    while (len >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                             (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = kc_crc_table[7][lo & 0xffu] ^ kc_crc_table[6][(lo >> 8) & 0xffu] ^
              kc_crc_table[5][(lo >> 16) & 0xffu] ^ kc_crc_table[4][lo >> 24] ^
              kc_crc_table[3][p[4]] ^ kc_crc_table[2][p[5]] ^
              kc_crc_table[1][p[6]] ^ kc_crc_table[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = kc_crc_table[0][(crc ^ *p++) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

/*
 * One crc32 instruction has a latency of three cycles but a throughput of one: three
 * independent streams over adjacent blocks keep it busy, and their CRCs are joined
 * after.  The raw (uninverted) CRC register is linear over GF(2), so the register
 * after block A and then B is shift_|B|(crc_A) ^ crc_B, where crc_B starts from 0 and
 * shift_n(x) (x followed by n zero bytes) is a fixed 32x32-bit matrix: four 256-entry
 * tables per block length.
 */
#define KC_CRC_BLOCK_LONG 256   /* bytes per stream and round, for long buffers */
#define KC_CRC_BLOCK_SHORT 64   /* for the rest (record batches are often ~2 kB) */

static uint32_t kc_crc_shift_long[4][256];
static uint32_t kc_crc_shift_short[4][256];

/* The raw register after n zero bytes, one byte at a time (set-up only). */
static uint32_t kc_crc_zeros(uint32_t c, size_t n)
{
    while (n--)
        c = kc_crc_table[0][c & 0xffu] ^ (c >> 8);
    return c;
}

static void kc_crc_shift_init(uint32_t t[4][256], size_t n)
{
    uint32_t col[32];             /* the image of each single-bit register */
    for (int b = 0; b < 32; b++)
        col[b] = kc_crc_zeros((uint32_t)1 << b, n);
    for (int k = 0; k < 4; k++) {
        for (uint32_t v = 0; v < 256; v++) {
            uint32_t r = 0;
            for (int b = 0; b < 8; b++)
                if (v >> b & 1u)
                    r ^= col[8 * k + b];
            t[k][v] = r;
        }
    }
}

static inline uint32_t kc_crc_shift(uint32_t t[4][256], uint32_t c)
{
    return t[0][c & 0xffu] ^ t[1][(c >> 8) & 0xffu] ^ t[2][(c >> 16) & 0xffu] ^ t[3][c >> 24];
}

#if defined(__x86_64__) && defined(__GNUC__)
#define KC_HAVE_SSE42_PATH 1

/* Rounds of three streams of `block` bytes each while they fit; returns the register. */
__attribute__((target("sse4.2")))
static inline uint64_t kc_crc32c_sse42_3way(uint64_t c, const uint8_t **pp, size_t *lenp,
                                            size_t block, uint32_t t[4][256])
{
    const uint8_t *p = *pp;
    size_t len = *lenp;
    while (len >= 3 * block) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < block; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + block + i, 8);
            memcpy(&w2, p + 2 * block + i, 8);
            c = __builtin_ia32_crc32di(c, w0);
            c1 = __builtin_ia32_crc32di(c1, w1);
            c2 = __builtin_ia32_crc32di(c2, w2);
        }
        c = kc_crc_shift(t, kc_crc_shift(t, (uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * block;
        len -= 3 * block;
    }
    *pp = p;
    *lenp = len;
    return c;
}

__attribute__((target("sse4.2")))
static uint32_t kc_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = (uint32_t)~crc;
    while (len && ((uintptr_t)p & 7u)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
    c = kc_crc32c_sse42_3way(c, &p, &len, KC_CRC_BLOCK_LONG, kc_crc_shift_long);
    c = kc_crc32c_sse42_3way(c, &p, &len, KC_CRC_BLOCK_SHORT, kc_crc_shift_short);
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);   /* x86 is little-endian, which the instruction expects */
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

static void kc_crc32c_setup(void)
{
    kc_crc32c_init_tables();
    kc_crc_shift_init(kc_crc_shift_long, KC_CRC_BLOCK_LONG);
    kc_crc_shift_init(kc_crc_shift_short, KC_CRC_BLOCK_SHORT);
#ifdef KC_HAVE_SSE42_PATH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) {
        kc_crc_ready = 2;
        return;
    }
#endif
    kc_crc_ready = 1;
}

uint32_t kc_crc32c_portable(uint32_t crc, const uint8_t *buf, size_t len)
{
    if (!kc_crc_ready)
        kc_crc32c_setup();
    return kc_crc32c_sw(crc, buf, len);
}

int kc_crc32c_hw(void)
{
    if (!kc_crc_ready)
        kc_crc32c_setup();
    return kc_crc_ready == 2;
}

uint32_t kc_crc32c(uint32_t crc, const uint8_t *buf, size_t len)
{
    /* The set-up is idempotent, so a race between threads only repeats it. */
    if (!kc_crc_ready)
        kc_crc32c_setup();
#ifdef KC_HAVE_SSE42_PATH
    if (kc_crc_ready == 2)
        return kc_crc32c_sse42(crc, buf, len);
#endif
    return kc_crc32c_sw(crc, buf, len);
}
