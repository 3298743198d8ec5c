/*
 * Fuzz target for the rack-aware task assignment (csrc/kc_streams_rack.c): bytes become either
 * a plain graph for kc_streams_min_cost_flow / kc_streams_max_flow, or clients on racks, tasks
 * in subtopologies with per-rack partition misses (some missing), an assignment of actives and
 * standbys, costs, a strategy and client tags, run through the active and standby optimisers.
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan);
 *   - a solved graph keeps every flow within 0..capacity and never costs more than before;
 *   - the optimisers keep every task's count of holders and every client's count of actives
 *     and of standbys, and never put a task twice on one client;
 *   - a task to place without partitions gives KC_RACK_ENOPARTITIONS, not a result.
 *
 * Standalone random driver:
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_streams_*.c csrc/fuzz/fuzz_streams_rack.c -lm -o fuzz_rack && ./fuzz_rack SECONDS SEED
 */
#include "kc_streams_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_C 7
#define MAX_T 14
#define MAX_R 4
#define MAX_E 40

#define FUZZ_NAME "fuzz_streams_rack"
#include "fuzz_input.h"

static void run_graph(reader *r)
{
    kc_flow_edge e[MAX_E], before[MAX_E];
    int32_t n = (int32_t)take(r, MAX_E + 1);
    int zero = take(r, 2) == 0;                    /* no flow yet: always conserving */
    for (int32_t i = 0; i < n; i++) {
        e[i].u = (int32_t)take(r, 8) - 1;
        e[i].v = (int32_t)take(r, 8) - 1;
        e[i].capacity = (int32_t)take(r, 4) - (take(r, 50) == 0);
        e[i].cost = (int32_t)take(r, 0) - 128;
        e[i].flow = zero ? 0 : (int32_t)take(r, 3);
    }
    memcpy(before, e, sizeof e);
    int64_t cost = 0, old = 0;
    int32_t bad = 0;
    for (int32_t i = 0; i < n; i++) old += (int64_t)e[i].cost * e[i].flow;
    int rc = kc_streams_min_cost_flow(e, n, 1, -1, 1, 6, &cost, &bad);
    if (rc == 0) {
        check(cost <= old, "min cost flow costs more than the input flow");
        for (int32_t i = 0; i < n; i++)
            check(e[i].flow >= 0 && e[i].flow <= e[i].capacity, "flow out of bounds");
    }
    memcpy(e, before, sizeof e);
    int64_t f = 0;
    rc = kc_streams_max_flow(e, n, -1, 6, &f);
    if (rc == 0)
        for (int32_t i = 0; i < n; i++)
            check(e[i].flow >= 0 && e[i].flow <= e[i].capacity, "max flow out of bounds");
}

static void run_tasks(reader *r)
{
    int32_t C = (int32_t)take(r, MAX_C) + 1, T = (int32_t)take(r, MAX_T + 1), R = (int32_t)take(r, MAX_R) + 1;
    int32_t G = (int32_t)take(r, 3) + 1;
    int32_t rack[MAX_C], group[MAX_T + 1], smiss[MAX_T * MAX_R + 1], cmiss[MAX_T * MAX_R + 1];
    int32_t order[MAX_C], tag_off[MAX_C + 1], tag_ids[MAX_C * 2 + 1];
    uint8_t role[MAX_C * MAX_T + 1], before[MAX_C * MAX_T + 1], flags[MAX_T + 1];
    int holes = 0;
    for (int32_t c = 0; c < C; c++) { rack[c] = (int32_t)take(r, (uint32_t)R); order[c] = c; }
    for (int32_t c = C - 1; c > 0; c--) {          /* rows in some ProcessId order */
        int32_t j = (int32_t)take(r, (uint32_t)c + 1), x = order[c];
        order[c] = order[j]; order[j] = x;
    }
    tag_off[0] = 0;
    for (int32_t c = 0; c < C; c++) {
        int32_t k = (int32_t)take(r, 3);
        for (int32_t i = 0; i < k; i++) tag_ids[tag_off[c] + i] = (int32_t)(2 * i + take(r, 2));
        tag_off[c + 1] = tag_off[c] + k;
    }
    for (int32_t t = 0; t < T; t++) {
        group[t] = (int32_t)take(r, (uint32_t)G);
        int none = take(r, 40) == 0;
        holes |= none;
        for (int32_t k = 0; k < R; k++) {
            smiss[t * R + k] = none ? -1 : (int32_t)take(r, 3);
            cmiss[t * R + k] = (int32_t)take(r, 3);
        }
    }
    memset(role, 0, sizeof role);
    for (int32_t t = 0; t < T; t++)                /* one active each */
        role[take(r, (uint32_t)C) * T + t] = KC_ROLE_ACTIVE;
    kc_rack_input in;
    memset(&in, 0, sizeof in);
    in.strategy = take(r, 2) ? KC_RACK_MIN_TRAFFIC : KC_RACK_BALANCE_SUBTOPOLOGY;
    in.n_racks = R;
    in.client_rack = rack;
    in.pid_order = take(r, 2) ? order : NULL;
    in.source_miss = smiss;
    in.changelog_miss = cmiss;
    in.group = group;
    in.n_groups = G;
    in.traffic_cost = (int32_t)take(r, 12);
    in.non_overlap_cost = (int32_t)take(r, 12);
    if (take(r, 2)) { in.tag_off = tag_off; in.tag_ids = tag_ids; in.n_tag_ids = 2 * 2 + 2; }
    for (int32_t t = 0; t < T; t++) flags[t] = (uint8_t)(take(r, 4) != 0);
    memcpy(before, role, sizeof role);
    int act0[MAX_C] = {0};
    for (int32_t c = 0; c < C; c++)
        for (int32_t t = 0; t < T; t++) act0[c] += role[c * T + t] == KC_ROLE_ACTIVE;
    int64_t cost = 0;
    if (take(r, 8) == 0) {   /* hostile costs: refused at once, nothing moved */
        int32_t bad = take(r, 2) ? INT32_MIN : INT32_MAX - (int32_t)take(r, 3);
        int32_t tr = take(r, 2) ? bad : 1, no = tr == bad ? 0 : bad;
        in.exact = (int32_t)take(r, 2);
        int rc = kc_streams_rack_optimize_active(&in, C, T, flags, role, tr, no, &cost);
        /* it returns (no endless cycle cancelling); 0 only where every edge cost the tasks
         * produce still fits (INT32_MIN x 0 off-rack partitions, say) */
        check(rc == KC_RACK_ECOST || rc == KC_RACK_ENOPARTITIONS || rc == 0, "a hostile cost gave another error");
        if (rc) check(memcmp(before, role, sizeof role) == 0, "a refused input moved tasks");
        return;
    }
    /* the fast and the exact mode: the same optimal cost, the same counts */
    static uint8_t role_exact[sizeof role];
    memcpy(role_exact, role, sizeof role);
    int64_t cost_exact = 0;
    in.exact = 1;
    int rc_exact = kc_streams_rack_optimize_active(&in, C, T, flags, role_exact, in.traffic_cost, in.non_overlap_cost,
                                                   &cost_exact);
    in.exact = 0;
    int rc = kc_streams_rack_optimize_active(&in, C, T, flags, role, in.traffic_cost, in.non_overlap_cost, &cost);
    check(rc == rc_exact, "fast and exact modes disagree on the status");
    if (rc == KC_RACK_ENOPARTITIONS) {
        check(holes, "no-partition error without a task lacking partitions");
        return;
    }
    check(rc == 0, "valid active input refused");
    check(cost == cost_exact, "fast mode missed the exact mode's optimal cost");
    for (int32_t t = 0; t < T; t++)                /* then standbys on other clients, as Kafka places them */
        for (int32_t c = 0; c < C; c++)
            if (role[c * T + t] == KC_ROLE_NONE && take(r, 3) == 0) role[c * T + t] = KC_ROLE_STANDBY;
    memcpy(before, role, sizeof role);
    rc = kc_streams_rack_optimize_standby(&in, C, T, role, in.traffic_cost, in.non_overlap_cost, &cost);
    check(rc == 0, "valid standby input refused");
    for (int32_t c = 0; c < C; c++) {
        int a0 = 0, a1 = 0, s0 = 0, s1 = 0;
        for (int32_t t = 0; t < T; t++) {
            a0 += before[c * T + t] == KC_ROLE_ACTIVE; a1 += role[c * T + t] == KC_ROLE_ACTIVE;
            s0 += before[c * T + t] == KC_ROLE_STANDBY; s1 += role[c * T + t] == KC_ROLE_STANDBY;
        }
        check(a0 == a1 && a1 == act0[c] && s0 == s1, "a client's task counts changed");
    }
    for (int32_t t = 0; t < T; t++) {
        int a = 0, s0 = 0, s1 = 0;
        for (int32_t c = 0; c < C; c++) {
            a += role[c * T + t] == KC_ROLE_ACTIVE;
            s0 += before[c * T + t] == KC_ROLE_STANDBY;
            s1 += role[c * T + t] == KC_ROLE_STANDBY;
        }
        check(a == 1 && s0 == s1, "a task's holders changed");
    }
}

static void run_one(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    if (take(&r, 2)) run_graph(&r);
    else run_tasks(&r);
}

#include "fuzz_main.h"
