/*
 * Fuzz target for the assignors (csrc/kc_assign*.c): bytes become a consumer group
 * (members, subscriptions, owned-partition claims with generations, member and replica
 * racks), then range, round-robin, sticky and cooperative-sticky run on it.
 *
 * Properties checked (abort() on violation, so sanitizers and the fuzzer see it):
 *   - no crash, no out-of-bounds access, no UB, no leak (build with ASan + UBSan);
 *   - every call returns KC_ASSIGN_OK (the inputs are consistent by construction);
 *   - every partition of a subscribed topic has exactly one owner, a subscriber of it,
 *     and partitions of topics nobody subscribes stay unassigned;
 *   - cooperative: what is handed out now is part of the target, and nothing is handed
 *     to a new owner while another member's winning claim still holds it (KIP-429).
 * Claims may name unknown topics, partitions past the end, duplicates and stale
 * generations: the assignors must ignore or resolve them, never trust them.
 *
 * libFuzzer (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DKC_LIBFUZZER -Icsrc \
 *       csrc/kc_assign_*.c csrc/fuzz/fuzz_assign.c -o fuzz_assign
 * Standalone random driver (gcc or clang, what the tests use):
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_assign_*.c csrc/fuzz/fuzz_assign.c -o fuzz_assign
 *   ./fuzz_assign SECONDS SEED
 */
#include "kc_assign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_M 12
#define MAX_T 6
#define MAX_P 16
#define MAX_R 4
#define MAX_OWN 48

#define FUZZ_NAME "fuzz_assign"
#include "fuzz_input.h"

static void run_one(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    int32_t M = (int32_t)take(&r, MAX_M + 1), T = (int32_t)take(&r, MAX_T + 1);
    int32_t R = (int32_t)take(&r, MAX_R + 1);
    int32_t part_count[MAX_T + 1], base[MAX_T + 1];
    int64_t sub_off[MAX_M + 1], own_off[MAX_M + 1];
    int32_t sub_topic[MAX_M * MAX_T + 1], own_topic[MAX_M * MAX_OWN + 1], own_part[MAX_M * MAX_OWN + 1];
    int32_t generation[MAX_M + 1], member_rack[MAX_M + 1];
    uint8_t subs[MAX_M + 1][MAX_T + 1];
    int32_t N = 0;
    for (int32_t t = 0; t < T; t++) {
        base[t] = N;
        part_count[t] = (int32_t)take(&r, MAX_P + 1);
        N += part_count[t];
    }
    sub_off[0] = own_off[0] = 0;
    int64_t ns = 0, no = 0;
    for (int32_t m = 0; m < M; m++) {
        uint32_t mask = take(&r, 0) | (take(&r, 0) << 8);
        for (int32_t t = 0; t < T; t++) {
            subs[m][t] = (uint8_t)((mask >> t) & 1);
            if (subs[m][t])
                sub_topic[ns++] = t;
        }
        sub_off[m + 1] = ns;
        int32_t k = (int32_t)take(&r, MAX_OWN + 1);
        for (int32_t i = 0; i < k; i++) {
            own_topic[no] = (int32_t)take(&r, MAX_T + 2) - 1;          /* -1 and T: unknown */
            own_part[no++] = (int32_t)take(&r, MAX_P + 2) - 1;         /* -1 and past the end */
        }
        own_off[m + 1] = no;
        generation[m] = (int32_t)take(&r, 5) - 1;
        member_rack[m] = R ? (int32_t)take(&r, (uint32_t)R + 1) - 1 : -1;
    }
    int64_t *prack_off = (int64_t *)malloc(sizeof(int64_t) * ((size_t)N + 1));
    int32_t *prack = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N * MAX_R + 1));
    int32_t *owner = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int32_t *target = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int32_t *claim_gen = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    int32_t *claimer = (int32_t *)malloc(sizeof(int32_t) * ((size_t)N + 1));
    check(prack_off && prack && owner && target && claim_gen && claimer, "out of memory");
    int64_t np = 0;
    prack_off[0] = 0;
    for (int32_t g = 0; g < N; g++) {
        uint32_t mask = R ? take(&r, 1u << R) : 0;
        for (int32_t k = 0; k < R; k++)
            if (mask >> k & 1)
                prack[np++] = k;
        prack_off[g + 1] = np;
    }
    kc_assign_input in;
    memset(&in, 0, sizeof(in));
    in.n_members = M;
    in.n_topics = T;
    in.n_racks = R;
    in.part_count = part_count;
    in.sub_off = sub_off;
    in.sub_topic = sub_topic;
    in.own_off = own_off;
    in.own_topic = own_topic;
    in.own_part = own_part;
    in.generation = generation;
    in.member_rack = R ? member_rack : NULL;
    in.prack_off = R ? prack_off : NULL;
    in.prack = prack;
    in.prefer_rack_aware = (int32_t)take(&r, 2);

    /* the winning claim of each partition, as KIP-792 resolves it (-2: a tie) */
    for (int32_t g = 0; g < N; g++) {
        claimer[g] = -1;
        claim_gen[g] = -2;
    }
    for (int32_t m = 0; m < M; m++)
        for (int64_t i = own_off[m]; i < own_off[m + 1]; i++) {
            int32_t t = own_topic[i], p = own_part[i];
            if (t < 0 || t >= T || p < 0 || p >= part_count[t])
                continue;
            int32_t g = base[t] + p, gm = generation[m] < -1 ? -1 : generation[m];
            if (claimer[g] == m)
                continue;
            if (claim_gen[g] < gm || claimer[g] == -1) {
                claimer[g] = m;
                claim_gen[g] = gm;
            } else if (claim_gen[g] == gm) {
                claimer[g] = -2;
            }
        }

    for (int strategy = 0; strategy < 4; strategy++) {
        kc_assign_stats st;
        int rc;
        if (strategy == 0)
            rc = kc_assign_range(&in, owner);
        else if (strategy == 1)
            rc = kc_assign_roundrobin(&in, owner);
        else
            rc = kc_assign_sticky(&in, strategy == 3, owner, target, &st);
        check(rc == KC_ASSIGN_OK, "assignor failed on consistent input");
        const int32_t *goal = strategy >= 2 ? target : owner;
        for (int32_t t = 0; t < T; t++) {
            int any = 0;
            for (int32_t m = 0; m < M; m++)
                any |= subs[m][t];
            for (int32_t g = base[t]; g < base[t] + part_count[t]; g++) {
                int32_t o = goal[g];
                if (!any) {
                    check(o == -1, "partition of an unsubscribed topic assigned");
                    continue;
                }
                check(o >= 0 && o < M, "partition left unassigned");
                check(subs[o][t], "partition assigned to a member not subscribed to its topic");
                if (strategy == 3) {
                    check(owner[g] == -1 || owner[g] == o, "handed out something not in the target");
                    if (owner[g] >= 0 && claimer[g] != -1)
                        check(claimer[g] == owner[g], "handed to a new owner while still claimed");
                } else if (strategy == 2) {
                    check(owner[g] == o, "eager sticky: handed out differs from the target");
                }
            }
        }
    }
    free(prack_off);
    free(prack);
    free(owner);
    free(target);
    free(claim_gen);
    free(claimer);
}

#include "fuzz_main.h"
