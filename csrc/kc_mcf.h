/* A min-cost flow solver for the rack-aware task assignor's fast mode (plain C99).
 *
 * Primal-dual: Dijkstra on reduced costs (potentials from one Bellman-Ford pass over the
 * initial graph, which must hold no negative cycle), then a blocking flow (Dinic) over the arcs
 * of zero reduced cost, repeated until the required flow is sent or the sink is cut off.  Every
 * phase sends at least one unit, so it ends after at most `required` phases; each phase is
 * O(E log V + V E) at worst and in practice a handful of BFS/DFS sweeps.  Costs are 32-bit,
 * distances and totals 64-bit. */
#ifndef KC_MCF_H
#define KC_MCF_H

#include <stdint.h>

typedef struct kc_mcf kc_mcf;

/* A solver for n nodes (0..n-1) with room for up to max_arcs edges; NULL on bad sizes or no memory. */
kc_mcf *kc_mcf_new(int32_t n, int64_t max_arcs);
void kc_mcf_free(kc_mcf *g);
/* Add an edge u -> v; returns its index (0, 1, ...) or -1 (bad node, negative capacity,
 * cost INT32_MIN, full). */
int64_t kc_mcf_add(kc_mcf *g, int32_t u, int32_t v, int32_t cap, int32_t cost);
/* Send up to `required` units from s to t at minimum cost.  *sent = units sent, *cost = their
 * cost.  Returns 0, KC_MCF_ENOMEM, KC_MCF_ENEGCYCLE (a negative cycle reachable from s),
 * KC_MCF_ELIMIT or KC_MCF_EINVAL. */
int kc_mcf_solve(kc_mcf *g, int32_t s, int32_t t, int64_t required, int64_t *sent, int64_t *cost);
/* Flow on edge i (its index from kc_mcf_add) after solving. */
int32_t kc_mcf_flow(const kc_mcf *g, int64_t i);

#define KC_MCF_EINVAL (-1)
#define KC_MCF_ENOMEM (-2)
#define KC_MCF_ENEGCYCLE (-3)
#define KC_MCF_ELIMIT (-4)   /* a phase sent nothing: a bug, never bad input */

#endif
