/* Kafka Streams' rack-aware task assignment (KIP-925): the RackAwareTaskAssignor's
 * optimizeActiveTasks / optimizeStandbyTasks and the min-cost-flow graph they solve.
 *
 * Kafka solves min-cost flow by cycle cancelling: Bellman-Ford from a dummy node joined to
 * every node finds a negative cycle in the residual graph, the cycle is saturated, repeat.
 * Which optimum it lands on (and so which tasks move) depends on the exact order of that
 * search: nodes by integer id (the dummy first), each node's residual edges by destination
 * id, strict relaxation, and the node relaxed first in the last of |nodes| passes.  This file
 * keeps that order; only the passes after one that relaxes nothing are skipped, which cannot
 * change the outcome.  Node ids are Kafka's: source -1, tasks 0.., client nodes after them,
 * sink last (see the graph builders below).
 *
 * Active graphs have two modes (kc_rack_input.exact): exact runs the search above (min_traffic
 * on the graph's structure, exact_min_traffic; balance_subtopology on the generic graph), fast
 * solves the same min-cost flow by primal-dual on a compressed graph (fast_solve, kc_mcf.c):
 * Kafka's optimal cost, maybe another assignment of that cost.  Costs Kafka would wrap or could
 * not negate (INT32_MIN) are refused, and every loop has a proven bound. */
#include "kc_streams_tasks.h"
#include "kc_mcf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int32_t node, dest;    /* dense indexes (0 is the dummy node) */
    int32_t cost, residual, flow;
    int32_t counter;       /* index of the paired edge */
    int32_t orig;          /* original edge for a forward edge, -1 for a backward one */
} redge;

typedef struct {
    int32_t n;             /* real nodes 1..n */
    int32_t *ids;          /* ids[1..n]: Kafka's node ids, ascending */
    int32_t *start;        /* edges of node v: e[start[v] .. start[v + 1]) */
    redge *e;
    int32_t ne;
    /* scratch */
    int64_t *dist, *scan;
    uint8_t *has, *seen;
    int32_t *parent, *pedge, *queue;
} rgraph;

static void graph_free(rgraph *g) {
    free(g->ids); free(g->start); free(g->e); free(g->dist); free(g->scan); free(g->has); free(g->seen);
    free(g->parent); free(g->pedge); free(g->queue);
    memset(g, 0, sizeof *g);
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_redge(const void *a, const void *b) {
    const redge *x = (const redge *)a, *y = (const redge *)b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->dest < y->dest ? -1 : x->dest > y->dest;
}

static int32_t dense(const rgraph *g, int32_t id) {   /* 0 when id is not a node */
    int32_t lo = 1, hi = g->n;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (g->ids[mid] == id) return mid;
        if (g->ids[mid] < id) lo = mid + 1; else hi = mid - 1;
    }
    return 0;
}

/* Graph.residualGraph: a forward edge (residual capacity - flow) and a backward edge
 * (cost negated, residual = flow) per edge, each node's edges ordered by destination. */
static int graph_build(rgraph *g, const kc_flow_edge *edges, int32_t m) {
    memset(g, 0, sizeof *g);
    if (m < 0 || m > (INT32_MAX / 2 - 1)) return KC_STREAMS_EINVAL;
    for (int32_t i = 0; i < m; i++)
        if (edges[i].capacity < 0 || edges[i].flow < 0 || edges[i].flow > edges[i].capacity
            || edges[i].u == edges[i].v)
            return KC_STREAMS_EINVAL;
    int32_t *all = malloc(((size_t)2 * (size_t)m + 1) * sizeof(int32_t));
    if (!all) return KC_STREAMS_ENOMEM;
    for (int32_t i = 0; i < m; i++) { all[2 * i] = edges[i].u; all[2 * i + 1] = edges[i].v; }
    qsort(all, (size_t)2 * (size_t)m, sizeof(int32_t), cmp_i32);
    int32_t n = 0;
    for (int32_t i = 0; i < 2 * m; i++)
        if (i == 0 || all[i] != all[i - 1]) all[n++] = all[i];
    size_t nn = (size_t)n + 2, ne = (size_t)2 * (size_t)m + 1;
    g->n = n;
    g->ids = malloc(nn * sizeof(int32_t));
    g->start = calloc(nn, sizeof(int32_t));
    g->e = malloc(ne * sizeof(redge));
    g->dist = malloc(nn * sizeof(int64_t));
    g->scan = malloc(nn * sizeof(int64_t));
    g->has = malloc(nn);
    g->seen = malloc(nn);
    g->parent = malloc(nn * sizeof(int32_t));
    g->pedge = malloc(nn * sizeof(int32_t));
    g->queue = malloc(nn * sizeof(int32_t));
    int32_t *pos = malloc(ne * sizeof(int32_t));
    if (!g->ids || !g->start || !g->e || !g->dist || !g->scan || !g->has || !g->seen || !g->parent || !g->pedge
        || !g->queue || !pos) {
        free(all); free(pos); graph_free(g);
        return KC_STREAMS_ENOMEM;
    }
    g->ids[0] = 0;
    memcpy(g->ids + 1, all, (size_t)n * sizeof(int32_t));
    free(all);
    g->ne = 2 * m;
    for (int32_t i = 0; i < m; i++) {
        int32_t u = dense(g, edges[i].u), v = dense(g, edges[i].v);
        redge f = {u, v, edges[i].cost, edges[i].capacity - edges[i].flow, edges[i].flow, 2 * i + 1, i};
        /* Java's edge.cost * -1 wraps like this */
        redge b = {v, u, (int32_t)(0u - (uint32_t)edges[i].cost), edges[i].flow, 0, 2 * i, -1};
        g->e[2 * i] = f;
        g->e[2 * i + 1] = b;
    }
    /* sort by (node, destination), following each edge's pair: flow briefly holds the old index */
    int32_t *oldflow = malloc(ne * sizeof(int32_t));
    if (!oldflow) { free(pos); graph_free(g); return KC_STREAMS_ENOMEM; }
    for (int32_t i = 0; i < g->ne; i++) { oldflow[i] = g->e[i].flow; g->e[i].flow = i; }
    qsort(g->e, (size_t)g->ne, sizeof(redge), cmp_redge);
    int rc = 0;
    for (int32_t i = 0; i < g->ne; i++) {
        pos[g->e[i].flow] = i;
        if (i > 0 && g->e[i].node == g->e[i - 1].node && g->e[i].dest == g->e[i - 1].dest)
            rc = KC_STREAMS_EINVAL;   /* a repeated edge, or an edge both ways (Kafka refuses it) */
    }
    for (int32_t i = 0; i < g->ne; i++) {
        g->e[i].flow = oldflow[g->e[i].flow];
        g->e[i].counter = pos[g->e[i].counter];
    }
    free(oldflow);
    free(pos);
    if (rc) { graph_free(g); return rc; }
    for (int32_t i = 0; i < g->ne; i++) g->start[g->e[i].node + 1]++;
    for (int32_t v = 0; v <= n; v++) g->start[v + 1] += g->start[v];
    return 0;
}

static void push(rgraph *g, int32_t ei, int32_t f) {   /* move f units along residual edge ei */
    redge *p = &g->e[ei], *c = &g->e[p->counter];
    p->residual -= f;
    if (p->orig >= 0) p->flow += f;
    c->residual += f;
    if (c->orig >= 0 && c->flow >= f) c->flow -= f;
}

/* Off (the default): skip the edges of a node whose distance has not changed since they were
 * last scanned in this search; none of them could relax (the node's distance is the same and
 * every other distance only falls), so the search relaxes exactly what Kafka's full scan does,
 * in the same order.  On: scan everything, as Kafka does (tests compare the two). */
static int full_scan = 0;

void kc_streams_rack_full_scan(int on) { full_scan = on; }

/* Graph.detectNegativeCycles from the dummy node: the node relaxed first in the last pass,
 * or -1. */
static int32_t detect(rgraph *g) {
    const int32_t n = g->n, passes = n + 1;
    memset(g->has, 0, (size_t)n + 1);
    memset(g->seen, 0, (size_t)n + 1);       /* seen[u]: u's edges scanned at distance scan[u] */
    g->has[0] = 1;
    g->dist[0] = 0;
    for (int32_t i = 0; i < passes; i++) {
        int changed = 0;
        for (int32_t v = 1; v <= n; v++)     /* the dummy's edges: residual 1, cost 0 */
            if (!g->has[v] || g->dist[v] > 0) {
                g->has[v] = 1; g->dist[v] = 0; g->parent[v] = 0; g->pedge[v] = -1;
                changed = 1;
                if (i == passes - 1) return v;
            }
        for (int32_t u = 1; u <= n; u++) {
            if (!g->has[u]) continue;
            if (!full_scan && g->seen[u] && g->scan[u] == g->dist[u]) continue;
            g->seen[u] = 1;
            g->scan[u] = g->dist[u];
            for (int32_t k = g->start[u]; k < g->start[u + 1]; k++) {
                const redge *e = &g->e[k];
                if (e->residual == 0) continue;
                int64_t d = g->dist[u] + e->cost;
                if (!g->has[e->dest] || g->dist[e->dest] > d) {
                    g->has[e->dest] = 1; g->dist[e->dest] = d;
                    g->parent[e->dest] = u; g->pedge[e->dest] = k;
                    changed = 1;
                    if (i == passes - 1) return e->dest;
                }
            }
        }
        if (!changed) return -1;
    }
    return -1;
}

/* Graph.cancelNegativeCycles.  A cycle of the parent graph is negative and is cancelled by at
 * least one unit, so each round lowers the total cost by >= 1: with no INT32_MIN cost (its
 * negation would wrap) the rounds are at most the cost range, budget = sum |cost| x capacity
 * (checked to fit 64 bits by the caller), and reaching it means a bug. */
static int cancel_cycles(rgraph *g, int64_t budget) {
    for (int64_t round = 0;; round++) {
        if (round > budget) return KC_FLOW_ELIMIT;
        int32_t v = detect(g);
        if (v < 0) return 0;
        memset(g->seen, 0, (size_t)g->n + 1);
        g->parent[0] = 0;
        while (!g->seen[v]) { g->seen[v] = 1; v = g->parent[v]; }
        if (v == 0) return KC_STREAMS_EINVAL;   /* Kafka would fail here (no cycle on the path) */
        int32_t f = g->e[g->pedge[v]].residual;
        for (int32_t u = g->parent[v]; u != v; u = g->parent[u])
            if (g->e[g->pedge[u]].residual < f) f = g->e[g->pedge[u]].residual;
        push(g, g->pedge[v], f);
        for (int32_t u = g->parent[v]; u != v; u = g->parent[u]) push(g, g->pedge[u], f);
    }
}

/* Graph.calculateMaxFlow: Ford-Fulkerson with breadth-first search in edge order. */
static int64_t max_flow(rgraph *g, int32_t s, int32_t t) {
    int64_t total = 0;
    if (!s || !t) return 0;
    for (;;) {
        memset(g->seen, 0, (size_t)g->n + 1);
        int32_t head = 0, tail = 0, found = 0;
        g->queue[tail++] = s;
        g->seen[s] = 1;
        while (head < tail && !found) {
            int32_t u = g->queue[head++];
            for (int32_t k = g->start[u]; k < g->start[u + 1]; k++) {
                int32_t d = g->e[k].dest;
                if (g->seen[d] || g->e[k].residual <= 0) continue;
                g->parent[d] = u; g->pedge[d] = k;
                if (d == t) { found = 1; break; }
                g->queue[tail++] = d;
                g->seen[d] = 1;
            }
        }
        if (!found) return total;
        int32_t f = INT32_MAX;
        for (int32_t v = t; v != s; v = g->parent[v])
            if (g->e[g->pedge[v]].residual < f) f = g->e[g->pedge[v]].residual;
        for (int32_t v = t; v != s; v = g->parent[v]) push(g, g->pedge[v], f);
        total += f;
    }
}

/* Graph.validateMinCostGraph: flow conservation, source and sink as Kafka checks them. */
static int validate(const rgraph *g, int32_t s, int32_t t, int32_t *bad) {
    size_t nn = (size_t)g->n + 1;
    int64_t *in = calloc(nn, sizeof(int64_t)), *out = calloc(nn, sizeof(int64_t));
    uint8_t *hin = calloc(nn, 1), *hout = calloc(nn, 1);
    int rc = 0;
    if (!in || !out || !hin || !hout) { rc = KC_STREAMS_ENOMEM; goto done; }
    for (int32_t k = 0; k < g->ne; k++) {
        const redge *e = &g->e[k];
        if (e->orig < 0) continue;
        if (t && e->node == t) { *bad = g->ids[t]; rc = KC_FLOW_ESINK; goto done; }
        if (s && e->dest == s) { *bad = g->ids[s]; rc = KC_FLOW_ESOURCE; goto done; }
        out[e->node] += e->flow; hout[e->node] = 1;
        in[e->dest] += e->flow; hin[e->dest] = 1;
    }
    for (int32_t v = 1; v <= g->n; v++) {
        if (!hin[v] || v == s || v == t) continue;
        if (!hout[v] || out[v] != in[v]) { *bad = g->ids[v]; rc = KC_FLOW_ECONSERVE; goto done; }
    }
    {
        int so = s && hout[s], ti = t && hin[t];   /* Kafka compares two Longs, null or not */
        if (so != ti || (so && out[s] != in[t])) { *bad = t ? g->ids[t] : 0; rc = KC_FLOW_EBALANCE; goto done; }
    }
done:
    free(in); free(out); free(hin); free(hout);
    return rc;
}

static void copy_back(const rgraph *g, kc_flow_edge *edges) {
    for (int32_t k = 0; k < g->ne; k++)
        if (g->e[k].orig >= 0) edges[g->e[k].orig].flow = g->e[k].flow;
}

static int64_t total_cost(const kc_flow_edge *edges, int32_t m) {
    int64_t c = 0;
    for (int32_t i = 0; i < m; i++) c += (int64_t)edges[i].cost * edges[i].flow;
    return c;
}

/* sum |cost| x capacity, or an error: a cost Kafka cannot negate (INT32_MIN, *bad = its edge)
 * or a range past 64 bits */
static int cost_budget(const kc_flow_edge *edges, int32_t m, int64_t *budget, int32_t *bad) {
    int64_t b = 0;
    for (int32_t i = 0; i < m; i++) {
        if (edges[i].cost == INT32_MIN) { *bad = i; return KC_FLOW_ECOST; }
        int64_t c = edges[i].cost < 0 ? -(int64_t)edges[i].cost : edges[i].cost, term;
        if (__builtin_mul_overflow(c, (int64_t)(edges[i].capacity > 0 ? edges[i].capacity : 0), &term)
            || __builtin_add_overflow(b, term, &b))
            return KC_FLOW_ERANGE;
    }
    *budget = b;
    return 0;
}

int kc_streams_min_cost_flow(kc_flow_edge *edges, int32_t n_edges, int32_t has_source, int32_t source,
                             int32_t has_sink, int32_t sink, int64_t *cost, int32_t *bad_node) {
    int32_t bad = 0;
    int64_t budget = 0;
    if (!edges && n_edges) return KC_STREAMS_EINVAL;
    if (n_edges < 0) return KC_STREAMS_EINVAL;
    int rc = cost_budget(edges, n_edges, &budget, &bad);
    if (rc) { if (bad_node) *bad_node = bad; return rc; }
    rgraph g;
    rc = graph_build(&g, edges, n_edges);
    if (rc) return rc;
    int32_t s = has_source ? dense(&g, source) : 0, t = has_sink ? dense(&g, sink) : 0;
    rc = validate(&g, s, t, &bad);
    if (!rc) rc = cancel_cycles(&g, budget);
    if (!rc) {
        copy_back(&g, edges);
        if (cost) *cost = total_cost(edges, n_edges);
    }
    if (bad_node) *bad_node = bad;
    graph_free(&g);
    return rc;
}

int kc_streams_max_flow(kc_flow_edge *edges, int32_t n_edges, int32_t source, int32_t sink, int64_t *flow) {
    if (!edges && n_edges) return KC_STREAMS_EINVAL;
    rgraph g;
    int rc = graph_build(&g, edges, n_edges);
    if (rc) return rc;
    int64_t f = max_flow(&g, dense(&g, source), dense(&g, sink));
    copy_back(&g, edges);
    if (flow) *flow = f;
    graph_free(&g);
    return 0;
}

/* ---- the task graphs (MinTrafficGraphConstructor, BalanceSubtopologyGraphConstructor) ---- */

#define ROLE_AT(role, T, c, t) ((role)[(size_t)(c) * (size_t)(T) + (size_t)(t)])

typedef struct {
    const kc_rack_input *in;
    int32_t C, T;
    uint8_t *role;
    int standby;                 /* 0: actives, 1: standbys (warm-ups count as standbys) */
} ctx;

static int holds(const ctx *x, int32_t c, int32_t t) {
    uint8_t r = ROLE_AT(x->role, x->T, c, t);
    return x->standby ? (r == KC_ROLE_STANDBY || r == KC_ROLE_WARMUP) : r == KC_ROLE_ACTIVE;
}

/* RackAwareTaskAssignor.getCost.  Kafka computes it in int arithmetic and wraps; a cost out of
 * (INT32_MIN, INT32_MAX] is refused instead (*err = 2): a wrapped cost is not the traffic asked
 * for, and INT32_MIN cannot be negated in the residual graph (Kafka then cancels forever). */
static int32_t cost_of(const ctx *x, int32_t c, int32_t t, int current, int32_t traffic, int32_t non_overlap,
                       int *err) {
    const int32_t *miss = x->standby ? x->in->changelog_miss : x->in->source_miss;
    int32_t m = miss ? miss[(size_t)t * (size_t)x->in->n_racks + (size_t)x->in->client_rack[c]] : -1;
    if (m < 0) { if (!*err) *err = 1; return 0; }   /* Kafka: "Task ... has no TopicPartitions" */
    int64_t v = (int64_t)traffic * m + (current ? 0 : non_overlap);
    if (v <= INT32_MIN || v > INT32_MAX) { *err = 2; return 0; }
    return (int32_t)v;
}

/* Build, solve and apply one graph over clients cl[0..k) (ProcessId order) and tasks
 * tl[0..m) (TaskId order).  Returns 0 / error; *moved set when a task changed client. */
static int solve_tasks(const ctx *x, const int32_t *cl, int32_t k, const int32_t *tl, int32_t m, int strategy,
                       int replica, int32_t traffic, int32_t non_overlap, int64_t *cost, int *moved) {
    if (m == 0) { if (cost) *cost = 0; return 0; }
    const int balance = strategy == KC_RACK_BALANCE_SUBTOPOLOGY;
    const int32_t G = balance ? x->in->n_groups : 0;
    if ((int64_t)m * k + (int64_t)k * (G + 2) + m + 1 > (INT32_MAX / 2 - 1)) return KC_STREAMS_ENOMEM;
    size_t cap = (size_t)m * (size_t)k + (size_t)k * (size_t)(G + 2) + (size_t)m + 1;
    kc_flow_edge *ed = malloc(cap * sizeof(kc_flow_edge));
    int32_t *orig = calloc((size_t)k, sizeof(int32_t));
    int32_t *owner = malloc((size_t)m * sizeof(int32_t));
    int32_t *node = malloc((size_t)m * sizeof(int32_t));   /* task node id per list position */
    int32_t *order = malloc((size_t)m * sizeof(int32_t));  /* list positions in node id order */
    int32_t *gstart = calloc((size_t)G + 2, sizeof(int32_t));
    int rc = 0, err = 0;
    int32_t ne = 0;
    rgraph g;
    memset(&g, 0, sizeof g);
    if (!ed || !orig || !owner || !node || !order || !gstart) { rc = KC_STREAMS_ENOMEM; goto out; }
    for (int32_t i = 0; i < m; i++) {
        owner[i] = -1;
        for (int32_t j = 0; j < k; j++) orig[j] += holds(x, cl[j], tl[i]);
    }
    int32_t sink;
    if (!balance) {
        for (int32_t i = 0; i < m; i++) {
            node[i] = i; order[i] = i;
            for (int32_t j = 0; j < k; j++) {
                int f = holds(x, cl[j], tl[i]);
                int32_t c = cost_of(x, cl[j], tl[i], f, traffic, non_overlap, &err);
                if (f) {
                    if (!replica && owner[i] >= 0) { rc = KC_STREAMS_EINVAL; goto out; }   /* on two clients */
                    owner[i] = j;
                }
                kc_flow_edge e = {i, m + j, 1, c, f};
                ed[ne++] = e;
            }
            if (owner[i] < 0) { rc = KC_STREAMS_EINVAL; goto out; }   /* on no client */
            kc_flow_edge s = {-1, i, 1, 0, 1};
            ed[ne++] = s;
        }
        sink = k + m;
        for (int32_t j = 0; j < k; j++) {
            kc_flow_edge e = {m + j, sink, orig[j], 0, orig[j]};
            ed[ne++] = e;
        }
    } else {
        /* task nodes numbered subtopology by subtopology, TaskId order within one */
        for (int32_t i = 0; i < m; i++) {
            int32_t gr = x->in->group[tl[i]];
            if (gr < 0 || gr >= G) { rc = KC_STREAMS_EINVAL; goto out; }
            gstart[gr + 1]++;
        }
        for (int32_t gr = 0; gr < G; gr++) gstart[gr + 1] += gstart[gr];
        {
            int32_t *fill = malloc(((size_t)G + 1) * sizeof(int32_t));
            if (!fill) { rc = KC_STREAMS_ENOMEM; goto out; }
            memcpy(fill, gstart, ((size_t)G + 1) * sizeof(int32_t));
            for (int32_t i = 0; i < m; i++) {
                int32_t gr = x->in->group[tl[i]];
                node[i] = fill[gr]++;
                order[node[i]] = i;
            }
            free(fill);
        }
        const int32_t second = m + k * G;     /* second-stage client nodes */
        sink = k + m + k * G;
        for (int32_t gr = 0; gr < G; gr++) {
            int32_t cnt = gstart[gr + 1] - gstart[gr];
            for (int32_t j = 0; j < k; j++) {
                int32_t cn = m + k * gr + j;
                for (int32_t p = gstart[gr]; p < gstart[gr + 1]; p++) {
                    int32_t i = order[p];
                    int f = holds(x, cl[j], tl[i]);
                    kc_flow_edge e = {p, cn, 1, cost_of(x, cl[j], tl[i], f, traffic, non_overlap, &err), 0};
                    ed[ne++] = e;
                    if (f) {
                        if (!replica && owner[i] >= 0) { rc = KC_STREAMS_EINVAL; goto out; }
                        owner[i] = j;
                    }
                }
                if (cnt > 0) {
                    int32_t c = orig[j] > 0 ? (int32_t)ceil((double)orig[j] / (double)m * (double)cnt) : 0;
                    kc_flow_edge e = {cn, second + j, c, 0, 0};
                    ed[ne++] = e;
                }
            }
        }
        for (int32_t p = 0; p < m; p++) {
            kc_flow_edge e = {-1, p, 1, 0, 0};
            ed[ne++] = e;
        }
        for (int32_t j = 0; j < k; j++) {
            kc_flow_edge e = {second + j, sink, orig[j], 0, 0};
            ed[ne++] = e;
        }
        for (int32_t i = 0; i < m; i++)
            if (owner[i] < 0) { rc = KC_STREAMS_EINVAL; goto out; }
    }
    if (err) { rc = err == 2 ? KC_RACK_ECOST : KC_RACK_ENOPARTITIONS; goto out; }
    int64_t budget;
    int32_t bad_edge;
    if ((rc = cost_budget(ed, ne, &budget, &bad_edge))) goto out;
    if ((rc = graph_build(&g, ed, ne))) goto out;
    int32_t src = dense(&g, -1), snk = dense(&g, sink);
    if (balance) {
        if (max_flow(&g, src, snk) != m) { rc = KC_STREAMS_EINVAL; goto out; }
        copy_back(&g, ed);
    }
    int32_t bad;
    if ((rc = validate(&g, src, snk, &bad))) goto out;
    if ((rc = cancel_cycles(&g, budget))) goto out;
    copy_back(&g, ed);
    if (cost) *cost = total_cost(ed, ne);
    /* assignTaskFromMinCostFlow: the task node's edges in client order */
    int32_t assigned = 0;
    for (int32_t p = 0; p < m; p++) {
        int32_t i = order[p], t = tl[i], v = dense(&g, p);
        int32_t base = balance ? m + k * x->in->group[t] : m;
        for (int32_t e = g.start[v]; e < g.start[v + 1]; e++) {
            const redge *r = &g.e[e];
            if (r->orig < 0 || ed[r->orig].flow <= 0) continue;
            assigned++;
            int32_t j = g.ids[r->dest] - base;
            if (j == owner[i]) break;
            uint8_t kind = x->standby ? KC_ROLE_STANDBY : KC_ROLE_ACTIVE;
            /* ClientState.assignActive/assignStandby: Kafka throws if the client holds it already */
            if (ROLE_AT(x->role, x->T, cl[j], t) != KC_ROLE_NONE) { rc = KC_STREAMS_EINVAL; goto out; }
            ROLE_AT(x->role, x->T, cl[owner[i]], t) = KC_ROLE_NONE;
            ROLE_AT(x->role, x->T, cl[j], t) = kind;
            *moved = 1;
        }
    }
    if (assigned != m) rc = KC_STREAMS_EINVAL;
out:
    graph_free(&g);
    free(ed); free(orig); free(owner); free(node); free(order); free(gstart);
    return rc;
}

/* ---- optimizeActiveTasks without the generic graph ----
 *
 * Both solvers below see the same problem as solve_tasks: tasks tl[0..m) (TaskId order) each on
 * one of the clients cl[0..k) (ProcessId order), each client keeping its count; a task on
 * client j costs base[i][rack of j] (traffic_cost x its partitions off that rack), plus
 * non_overlap_cost unless j is where the task is now (its owner). */

typedef struct {
    int32_t m, k, R;
    int32_t *owner;      /* owner[i]: client position holding task i now */
    int32_t *crack;      /* crack[j]: rack of client position j */
    int64_t *base;       /* base[i * R + r] */
    int32_t *orig;       /* orig[j]: tasks client j holds */
    int32_t non_overlap;
} tproblem;

static void tproblem_free(tproblem *p) {
    free(p->owner); free(p->crack); free(p->base); free(p->orig);
    memset(p, 0, sizeof *p);
}

static int tproblem_build(tproblem *p, const ctx *x, const int32_t *cl, int32_t k, const int32_t *tl, int32_t m,
                          int32_t traffic, int32_t non_overlap) {
    const int32_t R = x->in->n_racks;
    memset(p, 0, sizeof *p);
    p->m = m; p->k = k; p->R = R; p->non_overlap = non_overlap;
    p->owner = malloc((size_t)m * sizeof(int32_t));
    p->crack = malloc((size_t)k * sizeof(int32_t));
    p->base = malloc((size_t)m * (size_t)R * sizeof(int64_t));
    p->orig = calloc((size_t)k, sizeof(int32_t));
    if (!p->owner || !p->crack || !p->base || !p->orig) { tproblem_free(p); return KC_STREAMS_ENOMEM; }
    for (int32_t j = 0; j < k; j++) p->crack[j] = x->in->client_rack[cl[j]];
    const int32_t *miss = x->in->source_miss;
    int err = 0;
    for (int32_t i = 0; i < m; i++) {
        p->owner[i] = -1;
        for (int32_t j = 0; j < k; j++)
            if (holds(x, cl[j], tl[i])) {
                if (p->owner[i] >= 0) { tproblem_free(p); return KC_STREAMS_EINVAL; }   /* on two clients */
                p->owner[i] = j;
            }
        if (p->owner[i] < 0) { tproblem_free(p); return KC_STREAMS_EINVAL; }         /* on no client */
        p->orig[p->owner[i]]++;
        for (int32_t r = 0; r < R; r++) {
            int32_t mm = miss ? miss[(size_t)tl[i] * (size_t)R + (size_t)r] : -1;
            int64_t b = (int64_t)traffic * mm;
            if (mm < 0) { if (!err) err = 1; continue; }
            /* every cost the graph holds must be a Java int Kafka can negate (see cost_of) */
            if (b <= INT32_MIN || b > INT32_MAX || b + non_overlap <= INT32_MIN || b + non_overlap > INT32_MAX)
                err = 2;
            p->base[(size_t)i * R + r] = b;
        }
    }
    if (err) { tproblem_free(p); return err == 2 ? KC_RACK_ECOST : KC_RACK_ENOPARTITIONS; }
    return 0;
}

static inline int64_t tcost(const tproblem *p, int32_t i, int32_t j) {
    return p->base[(size_t)i * p->R + p->crack[j]] + (j == p->owner[i] ? 0 : p->non_overlap);
}

/* Move the tasks to a[i] in role[], as assignTaskFromMinCostFlow does; total cost in *cost. */
static int tproblem_apply(const tproblem *p, const ctx *x, const int32_t *cl, const int32_t *tl, const int32_t *a,
                          int64_t *cost, int *moved) {
    int64_t total = 0;
    for (int32_t i = 0; i < p->m; i++) {
        total += tcost(p, i, a[i]);
        if (a[i] == p->owner[i]) continue;
        /* ClientState.assignActive: Kafka throws if the client holds the task already */
        if (ROLE_AT(x->role, x->T, cl[a[i]], tl[i]) != KC_ROLE_NONE) return KC_STREAMS_EINVAL;
        ROLE_AT(x->role, x->T, cl[p->owner[i]], tl[i]) = KC_ROLE_NONE;
        ROLE_AT(x->role, x->T, cl[a[i]], tl[i]) = KC_ROLE_ACTIVE;
        *moved = 1;
    }
    if (cost) *cost = total;
    return 0;
}

/* -- exact: Kafka's cycle cancelling on the min_traffic graph, with its structure used --
 *
 * Kafka's residual graph here: dummy, source (-1), tasks 0..m-1, clients m..m+k-1, sink.  Every
 * source->task and client->sink edge stays saturated (no cycle can use them), so a pass of
 * Bellman-Ford in Kafka's order is: (A) every task, in id order, relaxes the source (cost 0)
 * and each client it is not on (cost tcost); (B) every client relaxes the tasks on it (cost
 * -tcost).  Task distances do not change during A, nor client distances during B, so A is a
 * min-plus product: client j takes the smallest candidate, the first task in id order on a
 * tie (later equal ones do not relax strictly).  Grouping the clients by rack, a client's best
 * candidate is its rack's best task not on it (the best, or the best on another client than
 * the best's), or one of the tasks it owns (cost without non_overlap): O(m R + k) per pass
 * instead of O(m k), when non_overlap >= 0 (the grouped value is never below the true one).
 * The last pass, whose first relaxation names the cycle, runs edge by edge in Kafka's order. */

#define EX_DUMMY 0
#define EX_SOURCE 1

static int exact_min_traffic(const tproblem *p, int32_t *a) {
    const int32_t m = p->m, k = p->k, R = p->R;
    const int32_t N = m + k + 3;                 /* dummy, source, tasks, clients, sink */
    const int32_t passes = m + k + 3;            /* Kafka: nodes.size(), the dummy included */
    const int32_t T0 = 2, C0 = 2 + m;
    int64_t *dist = malloc((size_t)N * sizeof(int64_t));
    int32_t *par = malloc((size_t)N * sizeof(int32_t));
    uint8_t *seen = malloc((size_t)N);
    int32_t *own_start = calloc((size_t)k + 1, sizeof(int32_t)), *own = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t *on_start = calloc((size_t)k + 2, sizeof(int32_t)), *on = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t *b1 = malloc((size_t)R * sizeof(int32_t)), *b2 = malloc((size_t)R * sizeof(int32_t));
    int64_t *v1 = malloc((size_t)R * sizeof(int64_t)), *v2 = malloc((size_t)R * sizeof(int64_t));
    int rc = 0;
    if (!dist || !par || !seen || !own_start || !own || !on_start || !on || !b1 || !b2 || !v1 || !v2) {
        rc = KC_STREAMS_ENOMEM;
        goto out;
    }
    /* tasks each client owns (fixed), ascending */
    for (int32_t i = 0; i < m; i++) own_start[p->owner[i] + 1]++;
    for (int32_t j = 0; j < k; j++) own_start[j + 1] += own_start[j];
    {
        int32_t *fill = malloc(((size_t)k + 1) * sizeof(int32_t));
        if (!fill) { rc = KC_STREAMS_ENOMEM; goto out; }
        memcpy(fill, own_start, ((size_t)k + 1) * sizeof(int32_t));
        for (int32_t i = 0; i < m; i++) own[fill[p->owner[i]]++] = i;
        free(fill);
    }
    /* each cancelled cycle lowers the cost by >= 1 */
    int64_t lo = 0, hi = 0;
    for (int32_t i = 0; i < m; i++)
        for (int32_t j = 0; j < k; j++) {
            int64_t c = tcost(p, i, j);
            if (c < 0) lo += c; else hi += c;
        }
    const int64_t budget = hi - lo + 1;
    const int grouped = p->non_overlap >= 0;
    for (int64_t round = 0;; round++) {
        if (round > budget) { rc = KC_FLOW_ELIMIT; goto out; }
        int32_t found = -1;
        for (int32_t v = 0; v < N; v++) { dist[v] = 0; par[v] = EX_DUMMY; }   /* pass 0: the dummy's edges */
        for (int32_t pass = 0; pass < passes && found < 0; pass++) {
            int changed = pass == 0;
            if (pass == passes - 1) {
                /* Kafka's order, edge by edge, stopping at the first relaxation */
                for (int32_t i = 0; i < m && found < 0; i++) {
                    int64_t d = dist[T0 + i];
                    if (d < dist[EX_SOURCE]) { dist[EX_SOURCE] = d; par[EX_SOURCE] = T0 + i; found = EX_SOURCE; break; }
                    for (int32_t j = 0; j < k; j++) {
                        if (j == a[i]) continue;
                        int64_t c = d + tcost(p, i, j);
                        if (c < dist[C0 + j]) { dist[C0 + j] = c; par[C0 + j] = T0 + i; found = C0 + j; break; }
                    }
                }
                if (found >= 0) break;
                memset(on_start, 0, ((size_t)k + 2) * sizeof(int32_t));
                for (int32_t i = 0; i < m; i++) on_start[a[i] + 1]++;
                for (int32_t j = 0; j < k; j++) on_start[j + 1] += on_start[j];
                for (int32_t i = 0; i < m; i++) on[on_start[a[i]]++] = i;   /* on_start[j] now ends j's run */
                for (int32_t j = 0, b = 0; j < k && found < 0; j++) {
                    for (; b < on_start[j]; b++) {
                        int32_t i = on[b];
                        int64_t c = dist[C0 + j] - tcost(p, i, j);
                        if (c < dist[T0 + i]) { dist[T0 + i] = c; par[T0 + i] = C0 + j; found = T0 + i; break; }
                    }
                }
                break;
            }
            /* (A) the source: the first task of the smallest distance */
            for (int32_t i = 0; i < m; i++)
                if (dist[T0 + i] < dist[EX_SOURCE]) { dist[EX_SOURCE] = dist[T0 + i]; par[EX_SOURCE] = T0 + i; changed = 1; }
            /* (A) the clients */
            if (grouped) {
                for (int32_t r = 0; r < R; r++) { b1[r] = b2[r] = -1; v1[r] = v2[r] = INT64_MAX; }
                for (int32_t i = 0; i < m; i++) {
                    int64_t d = dist[T0 + i] + p->non_overlap;
                    for (int32_t r = 0; r < R; r++) {
                        int64_t v = d + p->base[(size_t)i * R + r];
                        if (v < v1[r]) {
                            /* the old best moves to second place only if on another client */
                            /* second: the best on another client than the new best's; the old
                             * best if on another client, else the old second stands */
                            if (b1[r] >= 0 && a[b1[r]] != a[i]) { v2[r] = v1[r]; b2[r] = b1[r]; }
                            v1[r] = v; b1[r] = i;
                        } else if (v < v2[r] && a[i] != a[b1[r]]) {
                            v2[r] = v; b2[r] = i;
                        }
                    }
                }
                for (int32_t j = 0; j < k; j++) {
                    int32_t r = p->crack[j];
                    int32_t bi = -1;
                    int64_t bv = INT64_MAX;
                    if (b1[r] >= 0 && a[b1[r]] != j) { bi = b1[r]; bv = v1[r]; }
                    else if (b2[r] >= 0) { bi = b2[r]; bv = v2[r]; }
                    for (int32_t q = own_start[j]; q < own_start[j + 1]; q++) {
                        int32_t i = own[q];
                        if (a[i] == j) continue;
                        int64_t v = dist[T0 + i] + p->base[(size_t)i * R + r];
                        if (v < bv || (v == bv && i < bi)) { bv = v; bi = i; }
                    }
                    if (bi >= 0 && bv < dist[C0 + j]) { dist[C0 + j] = bv; par[C0 + j] = T0 + bi; changed = 1; }
                }
            } else {
                for (int32_t i = 0; i < m; i++) {
                    int64_t d = dist[T0 + i];
                    for (int32_t j = 0; j < k; j++) {
                        if (j == a[i]) continue;
                        int64_t c = d + tcost(p, i, j);
                        if (c < dist[C0 + j]) { dist[C0 + j] = c; par[C0 + j] = T0 + i; changed = 1; }
                    }
                }
            }
            /* (B) each task from the client it is on (its one backward edge) */
            for (int32_t i = 0; i < m; i++) {
                int64_t c = dist[C0 + a[i]] - tcost(p, i, a[i]);
                if (c < dist[T0 + i]) { dist[T0 + i] = c; par[T0 + i] = C0 + a[i]; changed = 1; }
            }
            if (!changed) break;   /* a fixed point: no later pass relaxes anything */
        }
        if (found < 0) break;
        /* the cycle on the parent path, cancelled: each task on it moves to the client after it */
        memset(seen, 0, (size_t)N);
        int32_t v = found;
        while (!seen[v]) { seen[v] = 1; v = par[v]; }
        if (v == EX_DUMMY) { rc = KC_STREAMS_EINVAL; goto out; }
        int32_t u = v;
        do {
            if (u >= C0) a[par[u] - T0] = u - C0;
            u = par[u];
        } while (u != v);
    }
out:
    free(dist); free(par); free(seen); free(own_start); free(own); free(on_start); free(on);
    free(b1); free(b2); free(v1); free(v2);
    return rc;
}

/* -- fast: the same optimum by primal-dual min-cost flow on a compressed graph --
 *
 * Tasks with the same subtopology, owner and off-rack counts per rack are interchangeable, and
 * so are the clients of one rack for a task that moves, so the graph holds one node per class
 * of tasks (supply: its size), an edge to the owner's node (no non_overlap), and one edge per
 * rack to a pool that feeds the rack's clients at cost 0; then Kafka's capacities: per client
 * (min_traffic), or per client and subtopology then per client (balance_subtopology).  With
 * non_overlap < 0 moving inside a rack could pay, so each task keeps its own edges to every
 * client instead. */

typedef struct { const tproblem *p; const int32_t *grp; } class_cmp_ctx;

static int class_cmp(const class_cmp_ctx *c, int32_t x, int32_t y) {
    const tproblem *p = c->p;
    if (c->grp[x] != c->grp[y]) return c->grp[x] < c->grp[y] ? -1 : 1;
    if (p->owner[x] != p->owner[y]) return p->owner[x] < p->owner[y] ? -1 : 1;
    for (int32_t r = 0; r < p->R; r++) {
        int64_t u = p->base[(size_t)x * p->R + r], v = p->base[(size_t)y * p->R + r];
        if (u != v) return u < v ? -1 : 1;
    }
    return x < y ? -1 : x > y;
}

static void class_sort(const class_cmp_ctx *c, int32_t *v, int32_t *tmp, int32_t n) {   /* merge sort */
    for (int32_t w = 1; w < n; w *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * w) {
            int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;
            while (a < mid || b < hi) tmp[o++] = (b >= hi || (a < mid && class_cmp(c, v[a], v[b]) <= 0)) ? v[a++] : v[b++];
        }
        memcpy(v, tmp, (size_t)n * sizeof(int32_t));
    }
}

static int same_class(const class_cmp_ctx *c, int32_t x, int32_t y) {
    const tproblem *p = c->p;
    if (c->grp[x] != c->grp[y] || p->owner[x] != p->owner[y]) return 0;
    for (int32_t r = 0; r < p->R; r++)
        if (p->base[(size_t)x * p->R + r] != p->base[(size_t)y * p->R + r]) return 0;
    return 1;
}

static int fast_solve(const tproblem *p, const int32_t *grp, int32_t G, int balance, int32_t *a) {
    const int32_t m = p->m, k = p->k, R = p->R;
    const int compress = p->non_overlap >= 0;
    int32_t *ord = malloc((size_t)m * sizeof(int32_t)), *tmp = malloc((size_t)m * sizeof(int32_t));
    int32_t *cstart = malloc(((size_t)m + 1) * sizeof(int32_t));
    int32_t *gcnt = calloc((size_t)G, sizeof(int32_t));
    int32_t *rack_has = calloc((size_t)R, sizeof(int32_t));
    int64_t *e_own = NULL, *e_pool = NULL, *e_in = NULL;
    int32_t *pool_q = NULL, *pool_n = NULL;
    kc_mcf *g = NULL;
    int rc = 0;
    if (!ord || !tmp || !cstart || !gcnt || !rack_has) { rc = KC_STREAMS_ENOMEM; goto out; }
    for (int32_t i = 0; i < m; i++) { ord[i] = i; gcnt[grp[i]]++; }
    for (int32_t j = 0; j < k; j++) rack_has[p->crack[j]] = 1;
    class_cmp_ctx cc = {p, grp};
    class_sort(&cc, ord, tmp, m);
    int32_t nc = 0;                    /* classes: ord[cstart[c] .. cstart[c + 1]) */
    for (int32_t q = 0; q < m; q++)
        if (q == 0 || !compress || !same_class(&cc, ord[q - 1], ord[q])) cstart[nc++] = q;
    cstart[nc] = m;
    /* nodes: 0 source, 1 sink, classes, pools (rack x subtopology), client nodes (client x
     * subtopology), then for balance_subtopology one second-stage node per client */
    const int32_t SRC = 0, SNK = 1, CL0 = 2, PL0 = CL0 + nc, CN0 = PL0 + (compress ? R * G : 0), C20 = CN0 + k * G;
    const int64_t nn = (int64_t)C20 + (balance ? k : 0);
    const int64_t narcs = (int64_t)nc * (1 + 1 + (compress ? R : 0)) + (compress ? (int64_t)k * G : 0)
                          + (!compress ? (int64_t)m * k : 0) + (int64_t)k * G + 2 * (int64_t)k;
    if (nn > INT32_MAX / 2) { rc = KC_STREAMS_ENOMEM; goto out; }
    g = kc_mcf_new((int32_t)nn, narcs);
    e_own = malloc(((size_t)nc + 1) * sizeof(int64_t));
    e_pool = malloc(((size_t)nc * (compress ? (size_t)R : (size_t)k) + 1) * sizeof(int64_t));
    e_in = malloc(((size_t)k * (size_t)G + 1) * sizeof(int64_t));
    if (!g || !e_own || !e_pool || !e_in) { rc = KC_STREAMS_ENOMEM; goto out; }
#define ADD(u, v, cap, cost) kc_mcf_add(g, (u), (v), (cap), (int32_t)(cost))
    for (int32_t c = 0; c < nc; c++) {
        int32_t i = ord[cstart[c]], n = cstart[c + 1] - cstart[c], s = grp[i], o = p->owner[i];
        ADD(SRC, CL0 + c, n, 0);
        e_own[c] = ADD(CL0 + c, CN0 + o * G + s, n, p->base[(size_t)i * R + p->crack[o]]);
        if (compress) {
            for (int32_t r = 0; r < R; r++)
                e_pool[(size_t)c * R + r] = rack_has[r]
                    ? ADD(CL0 + c, PL0 + r * G + s, n, p->base[(size_t)i * R + r] + p->non_overlap) : -1;
        } else {
            for (int32_t j = 0; j < k; j++)
                e_pool[(size_t)c * k + j] = j == o ? -1 : ADD(CL0 + c, CN0 + j * G + s, 1, tcost(p, i, j));
        }
    }
    for (int32_t j = 0; j < k; j++)
        for (int32_t s = 0; s < G; s++) {
            e_in[(size_t)j * G + s] = compress ? ADD(PL0 + p->crack[j] * G + s, CN0 + j * G + s, m, 0) : -1;
            if (balance && gcnt[s] > 0) {
                /* BalanceSubtopologyGraphConstructor's capacity, in double as Kafka computes it */
                int32_t cap = p->orig[j] > 0 ? (int32_t)ceil((double)p->orig[j] / (double)m * (double)gcnt[s]) : 0;
                ADD(CN0 + j * G + s, C20 + j, cap, 0);
            }
        }
    for (int32_t j = 0; j < k; j++) ADD(balance ? C20 + j : CN0 + j * G, SNK, p->orig[j], 0);
#undef ADD
    int64_t sent = 0;
    if ((rc = kc_mcf_solve(g, SRC, SNK, m, &sent, NULL))) {
        rc = rc == KC_MCF_ENOMEM ? KC_STREAMS_ENOMEM : rc == KC_MCF_ELIMIT ? KC_FLOW_ELIMIT : KC_STREAMS_EINVAL;
        goto out;
    }
    if (sent != m) { rc = KC_STREAMS_EINVAL; goto out; }   /* Kafka: the max flow misses tasks */
    /* read the assignment back: each class keeps its first tasks, sends the rest to pools, and
     * each pool hands its tasks to the rack's clients in ProcessId order */
    pool_q = malloc(((size_t)m + 1) * sizeof(int32_t));
    pool_n = calloc((size_t)R * (size_t)G + 1, sizeof(int32_t));
    int32_t *pool_at = calloc((size_t)R * (size_t)G + 1, sizeof(int32_t));
    if (!pool_q || !pool_n || !pool_at) { free(pool_at); rc = KC_STREAMS_ENOMEM; goto out; }
    int32_t *pool_start = calloc((size_t)R * (size_t)G + 1, sizeof(int32_t));
    if (!pool_start) { free(pool_at); rc = KC_STREAMS_ENOMEM; goto out; }
    if (compress) {
        /* count per pool, then fill */
        int32_t *cnt = pool_n;
        for (int32_t c = 0; c < nc; c++)
            for (int32_t r = 0; r < R; r++)
                if (e_pool[(size_t)c * R + r] >= 0) cnt[r * G + grp[ord[cstart[c]]]] += kc_mcf_flow(g, e_pool[(size_t)c * R + r]);
        for (int32_t q = 0, acc = 0; q < R * G; q++) { pool_start[q] = acc; pool_at[q] = acc; acc += cnt[q]; }
    }
    int bad = 0;
    for (int32_t c = 0; c < nc && !bad; c++) {
        int32_t q = cstart[c], s = grp[ord[q]], o = p->owner[ord[q]];
        int32_t stay = kc_mcf_flow(g, e_own[c]);
        for (int32_t t = 0; t < stay; t++) a[ord[q++]] = o;
        if (compress) {
            for (int32_t r = 0; r < R; r++) {
                if (e_pool[(size_t)c * R + r] < 0) continue;
                for (int32_t f = kc_mcf_flow(g, e_pool[(size_t)c * R + r]); f > 0; f--) pool_q[pool_at[r * G + s]++] = ord[q++];
            }
        } else {
            for (int32_t j = 0; j < k; j++)
                if (e_pool[(size_t)c * k + j] >= 0 && kc_mcf_flow(g, e_pool[(size_t)c * k + j]) > 0) a[ord[q++]] = j;
        }
        if (q != cstart[c + 1]) bad = 1;
    }
    if (compress && !bad) {
        for (int32_t q = 0; q < R * G; q++) pool_at[q] = pool_start[q];
        for (int32_t j = 0; j < k; j++)
            for (int32_t s = 0; s < G; s++) {
                int32_t pl = p->crack[j] * G + s;
                for (int32_t f = kc_mcf_flow(g, e_in[(size_t)j * G + s]); f > 0; f--) {
                    if (pool_at[pl] >= pool_start[pl] + pool_n[pl]) { bad = 1; break; }
                    a[pool_q[pool_at[pl]++]] = j;
                }
            }
    }
    free(pool_at); free(pool_start);
    if (bad) rc = KC_FLOW_ELIMIT;   /* the flow did not decompose: a bug */
out:
    kc_mcf_free(g);
    free(ord); free(tmp); free(cstart); free(gcnt); free(rack_has); free(e_own); free(e_pool); free(e_in);
    free(pool_q); free(pool_n);
    return rc;
}

/* optimizeActiveTasks over cl x tl by the mode asked for; 1 when handled here, 0 to leave it to
 * the generic graph (exact balance_subtopology, or the full-scan test switch) */
static int solve_active(const ctx *x, const int32_t *cl, int32_t k, const int32_t *tl, int32_t m, int strategy,
                        int32_t traffic, int32_t non_overlap, int64_t *cost, int *moved, int *rc) {
    const int balance = strategy == KC_RACK_BALANCE_SUBTOPOLOGY;
    if (x->in->exact && (balance || full_scan)) return 0;
    tproblem p;
    int32_t *a = NULL, *grp = NULL;
    if ((*rc = tproblem_build(&p, x, cl, k, tl, m, traffic, non_overlap))) return 1;
    a = malloc((size_t)m * sizeof(int32_t));
    grp = calloc((size_t)m, sizeof(int32_t));
    if (!a || !grp) { *rc = KC_STREAMS_ENOMEM; goto out; }
    memcpy(a, p.owner, (size_t)m * sizeof(int32_t));
    int32_t G = 1;
    if (balance) {
        G = x->in->n_groups;
        for (int32_t i = 0; i < m; i++) {
            grp[i] = x->in->group[tl[i]];
            if (grp[i] < 0 || grp[i] >= G) { *rc = KC_STREAMS_EINVAL; goto out; }
        }
    }
    *rc = x->in->exact ? exact_min_traffic(&p, a) : fast_solve(&p, grp, G, balance, a);
    if (!*rc) *rc = tproblem_apply(&p, x, cl, tl, a, cost, moved);
out:
    free(a); free(grp);
    tproblem_free(&p);
    return 1;
}

static int check_rack(const kc_rack_input *in, int32_t C, int32_t T) {
    if (!in || C <= 0 || T < 0 || in->n_racks <= 0 || !in->client_rack) return KC_STREAMS_EINVAL;
    if (in->strategy != KC_RACK_MIN_TRAFFIC && in->strategy != KC_RACK_BALANCE_SUBTOPOLOGY) return KC_STREAMS_EINVAL;
    if (in->strategy == KC_RACK_BALANCE_SUBTOPOLOGY && (in->n_groups <= 0 || (T > 0 && !in->group)))
        return KC_STREAMS_EINVAL;
    for (int32_t c = 0; c < C; c++)
        if (in->client_rack[c] < 0 || in->client_rack[c] >= in->n_racks) return KC_STREAMS_EINVAL;
    if (in->pid_order)
        for (int32_t c = 0; c < C; c++)
            if (in->pid_order[c] < 0 || in->pid_order[c] >= C) return KC_STREAMS_EINVAL;
    if (in->tag_off) {
        if (in->tag_off[0] != 0 || in->n_tag_ids < 0) return KC_STREAMS_EINVAL;
        for (int32_t c = 0; c < C; c++)
            if (in->tag_off[c + 1] < in->tag_off[c]) return KC_STREAMS_EINVAL;
        for (int32_t i = 0; i < in->tag_off[C]; i++)
            if (in->tag_ids[i] < 0 || in->tag_ids[i] >= in->n_tag_ids) return KC_STREAMS_EINVAL;
    }
    return 0;
}

static int32_t *client_order(const kc_rack_input *in, int32_t C) {
    int32_t *cl = malloc((size_t)C * sizeof(int32_t));
    if (cl)
        for (int32_t c = 0; c < C; c++) cl[c] = in->pid_order ? in->pid_order[c] : c;
    return cl;
}

int kc_streams_rack_optimize_active(const kc_rack_input *in, int32_t C, int32_t T, const uint8_t *in_list,
                                    uint8_t *role, int32_t traffic, int32_t non_overlap, int64_t *cost) {
    int rc = check_rack(in, C, T);
    if (rc || !role || (T > 0 && !in_list)) return rc ? rc : KC_STREAMS_EINVAL;
    int32_t *cl = client_order(in, C), *tl = malloc(((size_t)T + 1) * sizeof(int32_t));
    if (!cl || !tl) { free(cl); free(tl); return KC_STREAMS_ENOMEM; }
    int32_t m = 0;
    for (int32_t t = 0; t < T; t++)
        if (in_list[t]) tl[m++] = t;
    ctx x = {in, C, T, role, 0};
    int moved = 0;
    int64_t c = 0;
    if (m == 0 || !solve_active(&x, cl, C, tl, m, in->strategy, traffic, non_overlap, &c, &moved, &rc))
        rc = solve_tasks(&x, cl, C, tl, m, in->strategy, 0, traffic, non_overlap, &c, &moved);
    if (!rc && cost) *cost = c;
    free(cl); free(tl);
    return rc;
}

/* ClientTagAwareStandbyTaskAssignor.isAllowedTaskMovement(source, destination, task, clients):
 * the distinct tags of the task's holders must not shrink by moving it. */
static int tag_move_allowed(const ctx *x, int32_t src, int32_t dst, int32_t t, int32_t *mark, int32_t stamp) {
    const kc_rack_input *in = x->in;
    int32_t shared = 0;
    for (int32_t c = 0; c < x->C; c++) {
        if (c == src || c == dst || ROLE_AT(x->role, x->T, c, t) == KC_ROLE_NONE) continue;
        for (int32_t i = in->tag_off[c]; i < in->tag_off[c + 1]; i++)
            if (mark[in->tag_ids[i]] != stamp) { mark[in->tag_ids[i]] = stamp; shared++; }
    }
    int32_t with_src = shared, with_dst = shared;
    for (int32_t i = in->tag_off[src]; i < in->tag_off[src + 1]; i++) with_src += mark[in->tag_ids[i]] != stamp;
    for (int32_t i = in->tag_off[dst]; i < in->tag_off[dst + 1]; i++) with_dst += mark[in->tag_ids[i]] != stamp;
    return with_dst >= with_src;
}

static int32_t movable(const ctx *x, int32_t src, int32_t dst, int32_t *out, int32_t *mark, int32_t *stamp) {
    int32_t n = 0;
    for (int32_t t = 0; t < x->T; t++) {
        uint8_t r = ROLE_AT(x->role, x->T, src, t);
        if ((r != KC_ROLE_STANDBY && r != KC_ROLE_WARMUP) || ROLE_AT(x->role, x->T, dst, t) != KC_ROLE_NONE) continue;
        if (x->in->tag_off && !tag_move_allowed(x, src, dst, t, mark, ++*stamp)) continue;
        out[n++] = t;
    }
    return n;
}

int kc_streams_rack_optimize_standby(const kc_rack_input *in, int32_t C, int32_t T, uint8_t *role,
                                     int32_t traffic, int32_t non_overlap, int64_t *cost) {
    int rc = check_rack(in, C, T);
    if (rc || !role) return rc ? rc : KC_STREAMS_EINVAL;
    int32_t *cl = client_order(in, C);
    int32_t *m1 = malloc(((size_t)T + 1) * sizeof(int32_t)), *m2 = malloc(((size_t)T + 1) * sizeof(int32_t));
    int32_t *both = malloc(((size_t)2 * (size_t)T + 1) * sizeof(int32_t));
    int32_t *mark = calloc((size_t)in->n_tag_ids + 1, sizeof(int32_t));
    if (!cl || !m1 || !m2 || !both || !mark) { rc = KC_STREAMS_ENOMEM; goto out; }
    ctx x = {in, C, T, role, 1};
    int32_t stamp = 0;
    int moved = 1;
    /* STANDBY_OPTIMIZER_MAX_ITERATION rounds over every pair of clients on different racks */
    for (int round = 0; moved && round < 4; round++) {
        moved = 0;
        for (int32_t i = 0; i < C; i++)
            for (int32_t j = i + 1; j < C; j++) {
                int32_t a = cl[i], b = cl[j];
                if (in->client_rack[a] == in->client_rack[b]) continue;
                if (stamp > INT32_MAX - 2 * T - 2) { memset(mark, 0, ((size_t)in->n_tag_ids + 1) * sizeof(int32_t)); stamp = 0; }
                int32_t n1 = movable(&x, a, b, m1, mark, &stamp);
                int32_t n2 = movable(&x, b, a, m2, mark, &stamp);
                if (n1 == 0 || n2 == 0) continue;
                int32_t n = 0, p = 0, q = 0;      /* merge: TaskId order */
                while (p < n1 || q < n2) both[n++] = (q >= n2 || (p < n1 && m1[p] < m2[q])) ? m1[p++] : m2[q++];
                int32_t pair[2] = {a, b};
                if ((rc = solve_tasks(&x, pair, 2, both, n, KC_RACK_MIN_TRAFFIC, 1, traffic, non_overlap, NULL,
                                      &moved)))
                    goto out;
            }
    }
    if (cost) {   /* standByTasksCost: every standby's cross-rack changelog traffic */
        int64_t total = 0;
        int err = 0;
        for (int32_t c = 0; c < C; c++)
            for (int32_t t = 0; t < T; t++)
                if (holds(&x, c, t)) total += cost_of(&x, c, t, 1, traffic, non_overlap, &err);
        if (err) { rc = err == 2 ? KC_RACK_ECOST : KC_RACK_ENOPARTITIONS; goto out; }
        *cost = total;
    }
out:
    free(cl); free(m1); free(m2); free(both); free(mark);
    return rc;
}
