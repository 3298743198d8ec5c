/*
 * Fuzz target for the Streams task assignor (csrc/kc_streams_ha.c): bytes become clients
 * (capacities, possibly invalid), tasks (stateful or not), lags (running, unknown, corrupt,
 * huge) and configs, then the HighAvailabilityTaskAssignor runs.
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan);
 *   - invalid inputs (capacity < 1, negative configs) return KC_STREAMS_EINVAL, valid ones 0;
 *   - every task has exactly one active client; stateless tasks have no standby or warm-up;
 *   - warm-ups never exceed max.warmup.replicas;
 *   - a stateful task has at most num.standby.replicas + 1 standbys (one may be kept to warm up).
 *
 * libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER -Icsrc \
 *       csrc/kc_streams_ha.c csrc/fuzz/fuzz_streams.c -o fuzz_streams
 * Standalone random driver:
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_streams_ha.c csrc/fuzz/fuzz_streams.c -o fuzz_streams && ./fuzz_streams SECONDS SEED
 */
#include "kc_streams_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_C 12
#define MAX_T 40

#define FUZZ_NAME "fuzz_streams"
#include "fuzz_input.h"

static void run_one(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    int32_t C = (int32_t)take(&r, MAX_C) + 1, T = (int32_t)take(&r, MAX_T + 1);
    uint8_t stateful[MAX_T + 1];
    int32_t cap[MAX_C];
    int64_t lag[MAX_C * MAX_T + 1];
    uint8_t role[MAX_C * MAX_T + 1];
    int valid = 1;
    for (int32_t c = 0; c < C; c++) {
        uint32_t k = take(&r, 0);
        cap[c] = k == 255 ? 0 : (int32_t)(k % 5) + 1;
        if (cap[c] < 1) valid = 0;
    }
    for (int32_t t = 0; t < T; t++)
        stateful[t] = (uint8_t)(take(&r, 4) != 0);
    for (int32_t i = 0; i < C * T; i++) {
        switch (take(&r, 6)) {
        case 0: lag[i] = -2; break;                       /* running active */
        case 1: lag[i] = -3; break;                       /* unknown offset sum */
        case 2: lag[i] = INT64_MAX; break;
        default: lag[i] = (int64_t)take(&r, 0) * 1000; break;
        }
    }
    kc_ha_input in;
    memset(&in, 0, sizeof in);          /* no client tags: the default standby assignor */
    in.n_clients = C;
    in.n_tasks = T;
    in.stateful = stateful;
    in.capacity = cap;
    in.lag = lag;
    in.num_standby_replicas = (int32_t)take(&r, 4);
    in.max_warmup_replicas = (int32_t)take(&r, 4);
    uint32_t a = take(&r, 5);
    in.acceptable_recovery_lag = a == 0 ? 0 : a == 1 ? INT64_MAX : a == 2 ? -1 : (int64_t)a * 10000;
    if (in.acceptable_recovery_lag < 0) valid = 0;
    kc_ha_output out;
    out.role = role;
    int rc = kc_streams_ha_assign(&in, &out);
    if (!valid) {
        check(rc == KC_STREAMS_EINVAL, "invalid input accepted");
        return;
    }
    check(rc == 0, "valid input refused");
    int warm = 0;
    for (int32_t t = 0; t < T; t++) {
        int act = 0, stb = 0;
        for (int32_t c = 0; c < C; c++) {
            uint8_t x = role[c * T + t];
            check(x <= KC_ROLE_WARMUP, "bad role");
            act += x == KC_ROLE_ACTIVE;
            stb += x == KC_ROLE_STANDBY || x == KC_ROLE_WARMUP;
            warm += x == KC_ROLE_WARMUP;
        }
        check(act == 1, "a task without exactly one active");
        check(stateful[t] || stb == 0, "standby of a stateless task");
        check(stb <= in.num_standby_replicas + 1 + in.max_warmup_replicas, "too many standbys");
    }
    check(warm <= in.max_warmup_replicas, "more warm-ups than max.warmup.replicas");
}

#include "fuzz_main.h"
