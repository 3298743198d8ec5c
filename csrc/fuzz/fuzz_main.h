/*
 * The entry points of a fuzz target whose input is raw bytes: the libFuzzer hook (built
 * with -DKC_LIBFUZZER) or a standalone driver that feeds random inputs for a time budget
 * ("TARGET seconds seed", seeded so a failing run can be repeated).  Include after the
 * target's `static void run_one(const uint8_t *data, size_t size)`, with FUZZ_NAME set.
 */
#ifndef KC_FUZZ_MAIN_H
#define KC_FUZZ_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef KC_LIBFUZZER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_one(data, size);
    return 0;
}

#else

#include "fuzz_rng.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s seconds seed\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[1]);
    rnd_seed(argv[2]);
    clock_t t0 = clock();
    unsigned long iters = 0;
    uint8_t buf[2048];
    while ((double)(clock() - t0) / CLOCKS_PER_SEC < seconds) {
        for (int k = 0; k < 64; k++) {
            size_t len = rnd() % sizeof buf;
            for (size_t j = 0; j < len; j++)
                buf[j] = (uint8_t)rnd();
            run_one(buf, len);
            iters++;
        }
    }
    printf("%s: %lu groups, no crash\n", FUZZ_NAME, iters);
    return 0;
}

#endif
#endif
