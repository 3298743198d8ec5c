/* Primal-dual min-cost flow (see kc_mcf.h): potentials keep every residual arc's reduced cost
 * >= 0, Dijkstra finds the cheapest augmenting distance, Dinic sends all it can along arcs of
 * reduced cost 0.  Used by the rack-aware assignor's fast mode on small compressed graphs. */
#include "kc_mcf.h"

#include <stdlib.h>
#include <string.h>

#define INF64 INT64_MAX

struct kc_mcf {
    int32_t n;
    int64_t narcs, max_arcs;
    int32_t *from, *to, *res, *cost, *cap;   /* arcs 2i (forward) and 2i+1 (backward) */
};

kc_mcf *kc_mcf_new(int32_t n, int64_t max_arcs) {
    if (n <= 0 || max_arcs < 0 || max_arcs > (INT64_C(1) << 40)) return NULL;
    kc_mcf *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    size_t na = (size_t)(2 * max_arcs + 1);
    g->n = n;
    g->max_arcs = max_arcs;
    g->from = malloc(na * sizeof(int32_t));
    g->to = malloc(na * sizeof(int32_t));
    g->res = malloc(na * sizeof(int32_t));
    g->cost = malloc(na * sizeof(int32_t));
    g->cap = malloc(na * sizeof(int32_t));
    if (!g->from || !g->to || !g->res || !g->cost || !g->cap) { kc_mcf_free(g); return NULL; }
    return g;
}

void kc_mcf_free(kc_mcf *g) {
    if (!g) return;
    free(g->from); free(g->to); free(g->res); free(g->cost); free(g->cap);
    free(g);
}

int64_t kc_mcf_add(kc_mcf *g, int32_t u, int32_t v, int32_t cap, int32_t cost) {
    if (u < 0 || v < 0 || u >= g->n || v >= g->n || cap < 0 || cost == INT32_MIN || g->narcs >= g->max_arcs)
        return -1;
    int64_t i = g->narcs++, a = 2 * i;
    g->from[a] = u; g->to[a] = v; g->res[a] = cap; g->cost[a] = cost; g->cap[a] = cap;
    g->from[a + 1] = v; g->to[a + 1] = u; g->res[a + 1] = 0; g->cost[a + 1] = -cost; g->cap[a + 1] = 0;
    return i;
}

int32_t kc_mcf_flow(const kc_mcf *g, int64_t i) {
    return (i >= 0 && i < g->narcs) ? g->res[2 * i + 1] : 0;
}

/* binary min-heap of (key, node), lazy deletion */
typedef struct { int64_t key; int32_t node; } hitem;

static void heap_push(hitem *h, int64_t *n, int64_t key, int32_t node) {
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (h[p].key <= key) break;
        h[i] = h[p];
        i = p;
    }
    h[i].key = key; h[i].node = node;
}

static hitem heap_pop(hitem *h, int64_t *n) {
    hitem top = h[0], last = h[--*n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].key < h[c].key) c++;
        if (h[c].key >= last.key) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

int kc_mcf_solve(kc_mcf *g, int32_t s, int32_t t, int64_t required, int64_t *sent, int64_t *cost) {
    if (!g || s < 0 || t < 0 || s >= g->n || t >= g->n || s == t || required < 0) return KC_MCF_EINVAL;
    const int32_t n = g->n;
    const int64_t na = 2 * g->narcs;
    int rc = 0;
    int64_t *start = calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *adj = malloc(((size_t)na + 1) * sizeof(int64_t));
    int64_t *it = malloc((size_t)n * sizeof(int64_t));
    int64_t *pi = malloc((size_t)n * sizeof(int64_t));
    int64_t *dist = malloc((size_t)n * sizeof(int64_t));
    int32_t *level = malloc((size_t)n * sizeof(int32_t));
    int32_t *queue = malloc((size_t)n * sizeof(int32_t));
    int32_t *cnt = calloc((size_t)n, sizeof(int32_t));
    uint8_t *inq = calloc((size_t)n, 1);
    int64_t *stack = malloc(((size_t)n + 1) * sizeof(int64_t));
    hitem *heap = malloc(((size_t)na + (size_t)n + 1) * sizeof(hitem));
    int64_t flow = 0;
    if (!start || !adj || !it || !pi || !dist || !level || !queue || !cnt || !inq || !stack || !heap) {
        rc = KC_MCF_ENOMEM;
        goto out;
    }
    /* adjacency arrays: each node's arcs in the order they were added */
    for (int64_t a = 0; a < na; a++) start[g->from[a] + 1]++;
    for (int32_t v = 0; v < n; v++) start[v + 1] += start[v];
    for (int32_t v = 0; v < n; v++) it[v] = start[v];
    for (int64_t a = 0; a < na; a++) adj[it[g->from[a]]++] = a;

    /* potentials: Bellman-Ford (queue-based) from s; a node queued n times means a negative cycle */
    for (int32_t v = 0; v < n; v++) pi[v] = INF64;
    {
        int32_t head = 0, size = 0;
        pi[s] = 0; queue[0] = s; size = 1; inq[s] = 1;
        while (size > 0) {
            int32_t u = queue[head];
            head = head + 1 == n ? 0 : head + 1;
            size--;
            inq[u] = 0;
            for (int64_t k = start[u]; k < start[u + 1]; k++) {
                int64_t a = adj[k];
                if (g->res[a] <= 0) continue;
                int32_t v = g->to[a];
                int64_t d = pi[u] + g->cost[a];
                if (d < pi[v]) {
                    pi[v] = d;
                    if (!inq[v]) {
                        if (++cnt[v] > n) { rc = KC_MCF_ENEGCYCLE; goto out; }
                        inq[v] = 1;
                        queue[(head + size) % n] = v;
                        size++;
                    }
                }
            }
        }
    }
    if (pi[t] == INF64) goto done;   /* nothing can reach the sink */
    for (int32_t v = 0; v < n; v++)
        if (pi[v] == INF64) pi[v] = 0;   /* unreachable now, and so for ever */

    while (flow < required) {
        const int64_t before = flow;   /* each phase sends >= 1 unit: at most `required` phases */
        /* Dijkstra on reduced costs */
        for (int32_t v = 0; v < n; v++) dist[v] = INF64;
        int64_t hn = 0;
        dist[s] = 0;
        heap_push(heap, &hn, 0, s);
        while (hn > 0) {
            hitem h = heap_pop(heap, &hn);
            if (h.key != dist[h.node]) continue;
            int32_t u = h.node;
            for (int64_t k = start[u]; k < start[u + 1]; k++) {
                int64_t a = adj[k];
                if (g->res[a] <= 0) continue;
                int32_t v = g->to[a];
                int64_t d = h.key + g->cost[a] + pi[u] - pi[v];
                if (d < dist[v]) {
                    dist[v] = d;
                    heap_push(heap, &hn, d, v);
                }
            }
        }
        if (dist[t] == INF64) break;
        for (int32_t v = 0; v < n; v++) pi[v] += dist[v] < dist[t] ? dist[v] : dist[t];
        /* Dinic over the arcs of reduced cost 0 */
        for (;;) {
            for (int32_t v = 0; v < n; v++) level[v] = -1;
            int32_t head = 0, tail = 0;
            level[s] = 0; queue[tail++] = s;
            while (head < tail) {
                int32_t u = queue[head++];
                for (int64_t k = start[u]; k < start[u + 1]; k++) {
                    int64_t a = adj[k];
                    int32_t v = g->to[a];
                    if (g->res[a] <= 0 || level[v] >= 0 || g->cost[a] + pi[u] - pi[v] != 0) continue;
                    level[v] = level[u] + 1;
                    queue[tail++] = v;
                }
            }
            if (level[t] < 0) break;
            for (int32_t v = 0; v < n; v++) it[v] = start[v];
            while (flow < required) {
                int32_t top = 0, u = s;
                while (u != t) {
                    int64_t k = it[u];
                    for (; k < start[u + 1]; k++) {
                        int64_t a = adj[k];
                        int32_t v = g->to[a];
                        if (g->res[a] > 0 && level[v] == level[u] + 1 && g->cost[a] + pi[u] - pi[v] == 0) break;
                    }
                    it[u] = k;
                    if (k == start[u + 1]) {          /* dead end: retreat */
                        level[u] = -1;
                        if (top == 0) break;
                        u = g->from[stack[--top]];
                        it[u]++;
                        continue;
                    }
                    stack[top++] = adj[k];
                    u = g->to[adj[k]];
                }
                if (u != t) break;                   /* blocking flow reached */
                int64_t f = required - flow;
                for (int32_t i = 0; i < top; i++)
                    if (g->res[stack[i]] < f) f = g->res[stack[i]];
                for (int32_t i = 0; i < top; i++) {
                    g->res[stack[i]] -= (int32_t)f;
                    g->res[stack[i] ^ 1] += (int32_t)f;
                }
                flow += f;
            }
            if (flow >= required) break;
        }
        if (flow == before) { rc = KC_MCF_ELIMIT; goto out; }   /* cannot happen: a shortest path is admissible */
    }
done:
    if (cost) {
        int64_t c = 0;
        for (int64_t i = 0; i < g->narcs; i++) {
            int64_t term;
            if (__builtin_mul_overflow((int64_t)g->cost[2 * i], (int64_t)g->res[2 * i + 1], &term)
                || __builtin_add_overflow(c, term, &c)) { rc = KC_MCF_EINVAL; goto out; }
        }
        *cost = c;
    }
    if (sent) *sent = flow;
out:
    free(start); free(adj); free(it); free(pi); free(dist); free(level); free(queue); free(cnt); free(inq);
    free(stack); free(heap);
    return rc;
}
