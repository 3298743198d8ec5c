/*
 * The iteration order of a JDK 17 java.util.HashMap / HashSet, from the keys' hashCode()s:
 * the exact table (resizes, each bin's linked order, treeified bins as red-black TreeNodes
 * whose root moves to the front of the bin, untreeified splits).  Plain C, no Python headers;
 * the pure-Python twin is kcodec/_java.py's JavaHashMap.
 *
 * Keys are distinct and added in index order.  In a treeified bin Java orders keys by hash,
 * then compareTo for keys of one Comparable class, and breaks what remains with
 * identityHashCode (not reproducible); `ranks` gives the compareTo order (equal rank: equal
 * under compareTo; KC_JH_NO_RANK: not Comparable), and every remaining tie puts the newer key
 * first (left), as the twin does.  Ranks are compared only between keys of equal hash code.
 */
#ifndef KC_JAVAHASH_H
#define KC_JAVAHASH_H

#include <stdint.h>

#define KC_JH_NO_RANK INT64_MIN
#define KC_JH_MAX_CAPACITY (1 << 30)   /* HashMap.MAXIMUM_CAPACITY */

enum {
    KC_JH_PUT = 0,                /* HashMap.put / HashSet.add */
    KC_JH_COMPUTE_IF_ABSENT = 1   /* HashMap.computeIfAbsent: lazy resize, new keys at the bin's head */
};

enum {
    KC_JH_OK = 0,
    KC_JH_ENOMEM = -1,
    KC_JH_EINVAL = -2             /* n < 0, an unknown mode, or a table above MAXIMUM_CAPACITY */
};

/* Write to order[0..n) the indexes of the n keys in iteration order and, when `capacity` is
 * not NULL, the final table size there.  initial_capacity < 0: `new HashMap<>()`; else
 * `new HashMap<>(initial_capacity)` (tableSizeFor on the first resize). */
int kc_javahash_order(int32_t n, const int32_t *hash_codes, const int64_t *ranks,
                      int64_t initial_capacity, int mode, int32_t *order, int64_t *capacity);

/* The indexes of the first occurrence of each distinct value of keys[0..n), ascending, into
 * first[]; returns their count, or KC_JH_ENOMEM / KC_JH_EINVAL (n < 0).  What a HashSet keeps
 * when keys are added in index order (equal keys: equal values). */
int32_t kc_javahash_distinct(int32_t n, const int64_t *keys, int32_t *first);

#endif
