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

#if defined(__x86_64__) && defined(__GNUC__)
#define KC_HAVE_SSE42_PATH 1
__attribute__((target("sse4.2")))
static uint32_t kc_crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = (uint32_t)~crc;
    while (len && ((uintptr_t)p & 7u)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        len--;
    }
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
