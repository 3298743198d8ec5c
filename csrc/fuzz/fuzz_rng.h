/*
 * The standalone fuzz drivers' random numbers: xorshift64, seeded from the command line so
 * a failing run can be repeated.
 */
#ifndef KC_FUZZ_RNG_H
#define KC_FUZZ_RNG_H

#include <stdint.h>
#include <stdlib.h>

static uint64_t g_rng;

static void rnd_seed(const char *seed)
{
    g_rng = (uint64_t)strtoull(seed, NULL, 10) * 0x9E3779B97F4A7C15ull + 1;
}

static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 11);
}

#endif
