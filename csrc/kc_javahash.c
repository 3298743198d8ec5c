/*
 * java.util.HashMap (JDK 17) iteration order: see kc_javahash.h.  Nodes are the key indexes;
 * links are int32 indexes (-1: null).  Each step mirrors HashMap.putVal / computeIfAbsent,
 * resize, treeifyBin and TreeNode.{putTreeVal, treeify, split, balanceInsertion,
 * rotateLeft, rotateRight, moveRootToFront}, keeping only what decides the order.
 */
#include "kc_javahash.h"

#include <stdlib.h>
#include <string.h>

#define NIL (-1)
#define TREEIFY 8
#define UNTREEIFY 6
#define MIN_TREEIFY_CAP 64

typedef struct {
    int32_t hash;                       /* spread: h ^ (h >>> 16) */
    int32_t next, prev, parent, left, right;
    uint8_t red, tree;
} node;

typedef struct {
    node *nd;
    const int64_t *rank;
    int32_t *tab;
    int64_t cap;                        /* 0: no table yet */
    int64_t threshold;
    int64_t size;
} map;

static uint32_t mask_of(const map *m) { return (uint32_t)(m->cap - 1); }

static int32_t spread(int32_t h)
{
    uint32_t u = (uint32_t)h;
    return (int32_t)(u ^ (u >> 16));
}

/* TreeNode's order of key x against p: hash, then compareTo, then the newer key first */
static int direction(const map *m, int32_t x, int32_t p)
{
    int32_t h = m->nd[x].hash, ph = m->nd[p].hash;
    if (ph > h) return -1;
    if (ph < h) return 1;
    if (m->rank) {
        int64_t a = m->rank[x], b = m->rank[p];
        if (a != KC_JH_NO_RANK && b != KC_JH_NO_RANK) {
            if (a < b) return -1;
            if (b < a) return 1;
        }
    }
    return -1;
}

/* rotateLeft (right_side = 1: p's right child takes p's place) and its mirror rotateRight */
static int32_t rotate(node *nd, int32_t root, int32_t p, int right_side)
{
    if (p == NIL) return root;
    int32_t *pside = right_side ? &nd[p].right : &nd[p].left;
    int32_t c = *pside;
    if (c == NIL) return root;
    int32_t inner = right_side ? nd[c].left : nd[c].right;
    *pside = inner;
    if (inner != NIL) nd[inner].parent = p;
    int32_t pp = nd[c].parent = nd[p].parent;
    if (pp == NIL) {
        root = c;
        nd[c].red = 0;
    } else if ((right_side ? nd[pp].left : nd[pp].right) == p) {
        if (right_side) nd[pp].left = c; else nd[pp].right = c;
    } else {
        if (right_side) nd[pp].right = c; else nd[pp].left = c;
    }
    if (right_side) nd[c].left = p; else nd[c].right = p;
    nd[p].parent = c;
    return root;
}

static int32_t balance_insertion(node *nd, int32_t root, int32_t x)
{
    nd[x].red = 1;
    for (;;) {
        int32_t xp = nd[x].parent, xpp;
        if (xp == NIL) {
            nd[x].red = 0;
            return x;
        }
        xpp = nd[xp].parent;
        if (!nd[xp].red || xpp == NIL) return root;
        int32_t xppl = nd[xpp].left;
        int left = xp == xppl;                 /* mirror image otherwise */
        int32_t uncle = left ? nd[xpp].right : xppl;
        if (uncle != NIL && nd[uncle].red) {
            nd[uncle].red = 0;
            nd[xp].red = 0;
            nd[xpp].red = 1;
            x = xpp;
        } else {
            if (x == (left ? nd[xp].right : nd[xp].left)) {
                x = xp;
                root = rotate(nd, root, x, left);
                xp = nd[x].parent;
                xpp = xp == NIL ? NIL : nd[xp].parent;
            }
            if (xp != NIL) {
                nd[xp].red = 0;
                if (xpp != NIL) {
                    nd[xpp].red = 1;
                    root = rotate(nd, root, xpp, !left);
                }
            }
        }
    }
}

static void move_root_to_front(map *m, int32_t root)
{
    if (root == NIL) return;
    node *nd = m->nd;
    uint32_t i = (uint32_t)nd[root].hash & mask_of(m);
    int32_t first = m->tab[i];
    if (root != first) {
        m->tab[i] = root;
        int32_t rp = nd[root].prev, rn = nd[root].next;
        if (rn != NIL) nd[rn].prev = rp;
        if (rp != NIL) nd[rp].next = rn;
        if (first != NIL) nd[first].prev = root;
        nd[root].next = first;
        nd[root].prev = NIL;
    }
}

/* insert x under the tree at root; returns the new root */
static int32_t tree_attach(map *m, int32_t root, int32_t x, int link_next)
{
    node *nd = m->nd;
    int32_t p = root;
    for (;;) {
        int d = direction(m, x, p);
        int32_t xp = p;
        p = d <= 0 ? nd[p].left : nd[p].right;
        if (p == NIL) {
            if (d <= 0) nd[xp].left = x; else nd[xp].right = x;
            nd[x].parent = xp;
            if (link_next) {                   /* putTreeVal: linked right after its parent */
                int32_t xpn = nd[xp].next;
                nd[x].next = xpn;
                nd[xp].next = x;
                nd[x].prev = xp;
                if (xpn != NIL) nd[xpn].prev = x;
            }
            return balance_insertion(nd, root, x);
        }
    }
}

static void treeify(map *m, int32_t first)
{
    node *nd = m->nd;
    int32_t root = NIL;
    for (int32_t x = first; x != NIL; x = nd[x].next) {
        nd[x].left = nd[x].right = NIL;
        if (root == NIL) {
            nd[x].parent = NIL;
            nd[x].red = 0;
            root = x;
        } else {
            root = tree_attach(m, root, x, 0);
        }
    }
    move_root_to_front(m, root);
}

/* TreeNode.split: the tree bin at index into lo (index) and hi (index + bit) in m->tab */
static void split(map *m, int32_t b, int64_t index, int64_t bit)
{
    node *nd = m->nd;
    int32_t head[2] = {NIL, NIL}, tail[2] = {NIL, NIL};
    int64_t count[2] = {0, 0};
    for (int32_t e = b, nx; e != NIL; e = nx) {
        nx = nd[e].next;
        int s = ((uint32_t)nd[e].hash & (uint32_t)bit) != 0;
        nd[e].prev = tail[s];
        nd[e].next = NIL;
        if (tail[s] == NIL) head[s] = e; else nd[tail[s]].next = e;
        tail[s] = e;
        count[s]++;
    }
    for (int s = 0; s < 2; s++) {
        if (head[s] == NIL) continue;
        m->tab[index + (s ? bit : 0)] = head[s];
        if (count[s] <= UNTREEIFY) {
            for (int32_t e = head[s]; e != NIL; e = nd[e].next) {
                nd[e].tree = 0;
                nd[e].parent = nd[e].left = nd[e].right = nd[e].prev = NIL;
            }
        } else if (head[!s] != NIL) {          /* else the tree moved whole, shape kept */
            treeify(m, head[s]);
        }
    }
}

static int resize(map *m)
{
    int64_t old_cap = m->cap, old_thr = m->threshold, new_cap, new_thr = 0;
    if (old_cap > 0) {
        new_cap = old_cap << 1;
        if (old_cap >= 16) new_thr = old_thr << 1;
    } else if (old_thr > 0) {
        new_cap = old_thr;
    } else {
        new_cap = 16;
        new_thr = 12;
    }
    if (new_cap > KC_JH_MAX_CAPACITY) return KC_JH_EINVAL;
    if (new_thr == 0) new_thr = new_cap * 3 / 4;   /* (int) (cap * 0.75f) */
    int32_t *tab = malloc((size_t)new_cap * sizeof *tab);
    if (!tab) return KC_JH_ENOMEM;
    for (int64_t j = 0; j < new_cap; j++) tab[j] = NIL;
    int32_t *old = m->tab;
    m->tab = tab;
    m->cap = new_cap;
    m->threshold = new_thr;
    node *nd = m->nd;
    for (int64_t j = 0; j < old_cap; j++) {
        int32_t e = old[j];
        if (e == NIL) continue;
        if (nd[e].next == NIL) {
            tab[(uint32_t)nd[e].hash & (uint32_t)(new_cap - 1)] = e;
        } else if (nd[e].tree) {
            split(m, e, j, old_cap);
        } else {
            int32_t head[2] = {NIL, NIL}, tail[2] = {NIL, NIL};
            for (int32_t x = e, nx; x != NIL; x = nx) {
                nx = nd[x].next;
                int s = ((uint32_t)nd[x].hash & (uint32_t)old_cap) != 0;
                nd[x].next = NIL;
                if (tail[s] == NIL) head[s] = x; else nd[tail[s]].next = x;
                tail[s] = x;
            }
            if (head[0] != NIL) tab[j] = head[0];
            if (head[1] != NIL) tab[j + old_cap] = head[1];
        }
    }
    free(old);
    return KC_JH_OK;
}

static int treeify_bin(map *m, int32_t h)
{
    if (m->cap < MIN_TREEIFY_CAP) return resize(m);
    node *nd = m->nd;
    uint32_t i = (uint32_t)h & mask_of(m);
    int32_t prev = NIL;
    for (int32_t e = m->tab[i]; e != NIL; e = nd[e].next) {
        nd[e].tree = 1;
        nd[e].prev = prev;
        nd[e].parent = nd[e].left = nd[e].right = NIL;
        prev = e;
    }
    if (m->tab[i] != NIL) treeify(m, m->tab[i]);
    return KC_JH_OK;
}

static int put_new(map *m, int32_t x)
{
    int rc;
    node *nd = m->nd;
    if (m->cap == 0 && (rc = resize(m)) != KC_JH_OK) return rc;
    int32_t h = nd[x].hash;
    uint32_t i = (uint32_t)h & mask_of(m);
    int32_t p = m->tab[i];
    if (p == NIL) {
        m->tab[i] = x;
    } else if (nd[p].tree) {
        nd[x].tree = 1;
        move_root_to_front(m, tree_attach(m, p, x, 1));
    } else {
        int bin_count = 0;
        while (nd[p].next != NIL) {
            p = nd[p].next;
            bin_count++;
        }
        nd[p].next = x;
        if (bin_count >= TREEIFY - 1 && (rc = treeify_bin(m, h)) != KC_JH_OK) return rc;
    }
    if (++m->size > m->threshold) return resize(m);
    return KC_JH_OK;
}

static int compute_if_absent(map *m, int32_t x)
{
    int rc;
    node *nd = m->nd;
    if ((m->size > m->threshold || m->cap == 0) && (rc = resize(m)) != KC_JH_OK) return rc;
    int32_t h = nd[x].hash;
    uint32_t i = (uint32_t)h & mask_of(m);
    int32_t first = m->tab[i];
    if (first != NIL && nd[first].tree) {
        nd[x].tree = 1;
        move_root_to_front(m, tree_attach(m, first, x, 1));
    } else {
        int bin_count = 0;
        for (int32_t e = first; e != NIL; e = nd[e].next) bin_count++;
        nd[x].next = first;
        m->tab[i] = x;
        if (bin_count >= TREEIFY - 1 && (rc = treeify_bin(m, h)) != KC_JH_OK) return rc;
    }
    m->size++;
    return KC_JH_OK;
}

static int64_t table_size_for(int64_t c)
{
    int64_t n = 1;
    while (n < c) n <<= 1;
    return n;
}

int kc_javahash_order(int32_t n, const int32_t *hash_codes, const int64_t *ranks,
                      int64_t initial_capacity, int mode, int32_t *order, int64_t *capacity)
{
    if (n < 0 || (mode != KC_JH_PUT && mode != KC_JH_COMPUTE_IF_ABSENT)
            || initial_capacity > KC_JH_MAX_CAPACITY)
        return KC_JH_EINVAL;
    map m = {0};
    m.rank = ranks;
    m.threshold = initial_capacity < 0 ? 0 : table_size_for(initial_capacity);
    m.nd = malloc((size_t)(n ? n : 1) * sizeof *m.nd);
    if (!m.nd) return KC_JH_ENOMEM;
    int rc = KC_JH_OK;
    for (int32_t x = 0; x < n && rc == KC_JH_OK; x++) {
        node *e = &m.nd[x];
        e->hash = spread(hash_codes[x]);
        e->next = e->prev = e->parent = e->left = e->right = NIL;
        e->red = e->tree = 0;
        rc = mode == KC_JH_PUT ? put_new(&m, x) : compute_if_absent(&m, x);
    }
    if (rc == KC_JH_OK) {
        int32_t k = 0;
        for (int64_t j = 0; j < m.cap; j++)
            for (int32_t e = m.tab[j]; e != NIL && k < n; e = m.nd[e].next) order[k++] = e;
        if (k != n) rc = KC_JH_EINVAL;     /* unreachable: every key is in one bin */
        if (capacity) *capacity = m.cap;
    }
    free(m.tab);
    free(m.nd);
    return rc;
}

int32_t kc_javahash_distinct(int32_t n, const int64_t *keys, int32_t *first)
{
    if (n < 0) return KC_JH_EINVAL;
    uint64_t size = 16;
    while (size < 2 * (uint64_t)n) size <<= 1;
    int32_t *slot = malloc((size_t)size * sizeof *slot);       /* open addressing, -1: empty */
    if (!slot) return KC_JH_ENOMEM;
    memset(slot, 0xff, (size_t)size * sizeof *slot);
    int32_t count = 0;
    for (int32_t i = 0; i < n; i++) {
        uint64_t z = (uint64_t)keys[i] + 0x9E3779B97F4A7C15u;  /* splitmix64 finaliser */
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
        z ^= z >> 31;
        for (uint64_t j = z & (size - 1);; j = (j + 1) & (size - 1)) {
            if (slot[j] < 0) {
                slot[j] = i;
                first[count++] = i;
                break;
            }
            if (keys[slot[j]] == keys[i]) break;
        }
    }
    free(slot);
    return count;
}
