/*
 * How a fuzz target reads its input: bytes taken one at a time (zero once the input runs
 * out), and an invariant check that aborts naming the target (FUZZ_NAME) and what broke.
 */
#ifndef KC_FUZZ_INPUT_H
#define KC_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const uint8_t *d;
    size_t n, i;
} reader;

static uint32_t take(reader *r, uint32_t bound)
{
    uint32_t v = r->i < r->n ? r->d[r->i++] : 0;
    return bound ? v % bound : v;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "%s: %s\n", FUZZ_NAME, what);
        abort();
    }
}

#endif
