/*
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as Kafka uses it for
 * record batch format v2 (the CRC covers the attributes field to the end of
 * the batch).  Plain C99, no Python headers.
 *
 * The implementation is chosen once at run time: the SSE4.2 crc32 instruction
 * when the CPU has it (x86-64 only), otherwise a portable slice-by-8 table.
 */
#ifndef KC_CRC32C_H
#define KC_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC-32C over buf[0..len).  Start with crc = 0. */
uint32_t kc_crc32c(uint32_t crc, const uint8_t *buf, size_t len);

/* The portable implementation alone (for tests and benchmarks). */
uint32_t kc_crc32c_portable(uint32_t crc, const uint8_t *buf, size_t len);

/* 1 when kc_crc32c uses the hardware instruction. */
int kc_crc32c_hw(void);

#endif
