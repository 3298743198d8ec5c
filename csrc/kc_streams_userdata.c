/*
 * Kafka Streams userData writers: see kc_streams_userdata.h.  The orders come from the
 * java.util.HashMap model (kc_javahash.c); the writers are DataOutputStream's big-endian
 * int32s and writeUTF's uint16 length + modified UTF-8.
 */
#include "kc_streams_userdata.h"
#include "kc_javahash.h"

#include <stdlib.h>
#include <string.h>

#define UTF_MAX 0xFFFF         /* writeUTF: at most 65535 encoded bytes */

static int from_jh(int rc) { return rc == KC_JH_ENOMEM ? KC_UD_ENOMEM : KC_UD_EINVAL; }

static uint8_t *put_i32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
    return p + 4;
}

static uint8_t *put_utf(uint8_t *p, const kc_ud_strings *s, int32_t i)
{
    int64_t n = s->off[i + 1] - s->off[i];
    p[0] = (uint8_t)(n >> 8);
    p[1] = (uint8_t)n;
    if (n) memcpy(p + 2, s->data + s->off[i], (size_t)n);
    return p + 2 + n;
}

/* the strings' offsets ascend from 0 and each fits writeUTF */
static int strings_ok(const kc_ud_strings *s)
{
    if (s->n < 0 || (s->n && (!s->off || !s->data)) || (s->off && s->off[0] != 0)) return 0;
    for (int32_t i = 0; i < s->n; i++) {
        int64_t n = s->off[i + 1] - s->off[i];
        if (n < 0 || n > UTF_MAX) return 0;
    }
    return 1;
}

static int64_t utf_size(const kc_ud_strings *s, int32_t i) { return 2 + s->off[i + 1] - s->off[i]; }

/* a map's hosts, their partition ranges (each within int32 counts) and topic ids */
static int map_ok(const kc_ud_host_map *m, int32_t n_topics)
{
    if (!strings_ok(&m->host)) return 0;
    int32_t n = m->host.n;
    if (n && (!m->port || !m->start)) return 0;
    if (n && m->start[0] != 0) return 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t a = m->start[i], b = m->start[i + 1];
        if (b < a || b - a > INT32_MAX) return 0;
    }
    int64_t total = n ? m->start[n] : 0;
    if (total && (!m->topic || !m->partition)) return 0;
    for (int64_t k = 0; k < total; k++)
        if (m->topic[k] < 0 || m->topic[k] >= n_topics) return 0;
    return 1;
}

static int section_ok(const kc_ud_host_section *s)
{
    if (!s || s->n_maps < 0 || s->n_maps > 2 || !strings_ok(&s->topic)) return 0;
    if (s->layout != KC_UD_HOSTS && s->layout != KC_UD_DICTIONARY) return 0;
    for (int32_t j = 0; j < s->n_maps; j++)
        if (!map_ok(&s->map[j], s->topic.n)) return 0;
    return 1;
}

/* The iteration order of n distinct keys put into a `new HashMap<>()`: when no bin ever holds
 * more than 8 keys (nothing treeified, no early resize) it is the keys stably sorted by their
 * bucket in the final table, a counting sort; else the full model (kc_javahash_order). */
static int put_order(int32_t n, const int32_t *hash_codes, const int64_t *ranks, int32_t *order)
{
    int64_t cap = 16, thr = 12;
    while (n > thr && cap < KC_JH_MAX_CAPACITY) {
        cap <<= 1;
        thr <<= 1;
    }
    if (n > thr) return kc_javahash_order(n, hash_codes, ranks, -1, KC_JH_PUT, order, NULL);
    int32_t *count = calloc((size_t)cap + 1, sizeof *count);
    if (!count) return KC_JH_ENOMEM;
    /* the table sizes the map passes through: the keys it holds at each, bins of <= 8 */
    int plain = 1;
    for (int64_t c = 16, t = 12; plain; c <<= 1, t <<= 1) {
        int64_t held = n < t + 1 ? n : t + 1;
        uint32_t mask = (uint32_t)(c - 1);
        memset(count, 0, (size_t)c * sizeof *count);
        for (int64_t i = 0; i < held && plain; i++) {
            uint32_t h = (uint32_t)hash_codes[i];
            plain = ++count[(h ^ (h >> 16)) & mask] <= 8;
        }
        if (c == cap) break;
    }
    if (!plain) {
        free(count);
        return kc_javahash_order(n, hash_codes, ranks, -1, KC_JH_PUT, order, NULL);
    }
    /* count holds the final table's bin sizes: a stable counting sort by bucket */
    uint32_t mask = (uint32_t)(cap - 1);
    int32_t at = 0;
    for (int64_t b = 0; b < cap; b++) {
        int32_t c = count[b];
        count[b] = at;
        at += c;
    }
    for (int32_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)hash_codes[i];
        order[count[(h ^ (h >> 16)) & mask]++] = i;
    }
    free(count);
    return KC_JH_OK;
}

/* kc_javahash_distinct of the (topic, partition) keys; with partitions in a dense range
 * (the usual 0..n-1 of each topic) a table of flags indexed by topic and partition */
static int32_t distinct_pairs(const kc_ud_host_section *s, int32_t n,
                              const int64_t *key, int32_t *first)
{
    int64_t lo = INT32_MAX, hi = INT32_MIN;
    for (int32_t i = 0; i < n; i++) {
        int32_t p = (int32_t)(uint32_t)key[i];
        if (p < lo) lo = p;
        if (p > hi) hi = p;
    }
    int64_t span = hi - lo + 1, cells = (int64_t)s->topic.n * span;
    if (n == 0 || cells > 4 * (int64_t)n + 4096) return kc_javahash_distinct(n, key, first);
    uint8_t *seen = calloc((size_t)cells, 1);
    if (!seen) return KC_JH_ENOMEM;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t cell = (key[i] >> 32) * span + ((int32_t)(uint32_t)key[i] - lo);
        if (!seen[cell]) {
            seen[cell] = 1;
            first[k++] = i;
        }
    }
    free(seen);
    return k;
}

int kc_ud_topic_dictionary(const kc_ud_host_section *s, int32_t dict_maps, const int32_t *topic_hash,
                           const int64_t *topic_rank, int32_t *dict_index, int32_t *dict_topic,
                           int32_t *number, int32_t *n_dict)
{
    if (!section_ok(s) || dict_maps < 0 || dict_maps > s->n_maps) return KC_UD_EINVAL;
    int32_t nt = s->topic.n;
    if (nt && (!topic_hash || !dict_index || !dict_topic || !number)) return KC_UD_EINVAL;
    int64_t total = 0;
    for (int32_t j = 0; j < dict_maps; j++)
        total += s->map[j].host.n ? s->map[j].start[s->map[j].host.n] : 0;
    if (total > INT32_MAX) return KC_UD_EINVAL;
    int32_t n = (int32_t)total;
    int rc = KC_UD_OK;
    int64_t *key = malloc((size_t)(n ? n : 1) * sizeof *key);
    int32_t *first = malloc((size_t)(n ? n : 1) * sizeof *first);
    int32_t *hash = malloc((size_t)(n ? n : 1) * sizeof *hash);
    int32_t *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    int32_t *tp_topic = malloc((size_t)(n ? n : 1) * sizeof *tp_topic);
    int32_t *th = malloc((size_t)(nt ? nt : 1) * sizeof *th);
    int64_t *tr = topic_rank ? malloc((size_t)(nt ? nt : 1) * sizeof *tr) : NULL;
    if (!key || !first || !hash || !order || !tp_topic || !th || (topic_rank && !tr)) {
        rc = KC_UD_ENOMEM;
        goto out;
    }
    /* the HashSet<TopicPartition>, filled map by map, host by host: each pair once */
    int32_t k = 0;
    for (int32_t j = 0; j < dict_maps; j++) {
        const kc_ud_host_map *m = &s->map[j];
        int64_t end = m->host.n ? m->start[m->host.n] : 0;
        for (int64_t x = 0; x < end; x++)
            key[k++] = (int64_t)((uint64_t)(uint32_t)m->topic[x] << 32 | (uint32_t)m->partition[x]);
    }
    int32_t nd = distinct_pairs(s, n, key, first);
    if (nd < 0) {
        rc = from_jh(nd);
        goto out;
    }
    for (int32_t i = 0; i < nd; i++) {
        int64_t kv = key[first[i]];
        int32_t t = (int32_t)(kv >> 32), p = (int32_t)(uint32_t)kv;
        tp_topic[i] = t;
        /* TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode() */
        hash[i] = (int32_t)(31u * (31u + (uint32_t)p) + (uint32_t)topic_hash[t]);
    }
    rc = put_order(nd, hash, NULL, order);
    if (rc != KC_JH_OK) {
        rc = from_jh(rc);
        goto out;
    }
    /* topics numbered in the order of their first partition in that set */
    for (int32_t t = 0; t < nt; t++) number[t] = -1;
    int32_t numbered = 0;
    for (int32_t i = 0; i < nd; i++) {
        int32_t t = tp_topic[order[i]];
        if (number[t] < 0) {
            number[t] = numbered;
            dict_topic[numbered] = t;          /* by number, for now */
            th[numbered] = topic_hash[t];
            if (tr) tr[numbered] = topic_rank[t];
            numbered++;
        }
    }
    /* the HashMap<String, Integer> of them, iterated: (number, topic) in its order */
    rc = put_order(numbered, th, tr, order);
    if (rc != KC_JH_OK) {
        rc = from_jh(rc);
        goto out;
    }
    for (int32_t i = 0; i < numbered; i++) first[i] = dict_topic[i];
    for (int32_t i = 0; i < numbered; i++) {
        dict_index[i] = order[i];
        dict_topic[i] = first[order[i]];
    }
    *n_dict = numbered;
out:
    free(key);
    free(first);
    free(hash);
    free(order);
    free(tp_topic);
    free(th);
    free(tr);
    return rc;
}

static int dictionary_ok(const kc_ud_host_section *s)
{
    if (s->layout != KC_UD_DICTIONARY) return 1;
    if (s->n_dict < 0 || (s->n_dict && (!s->dict_index || !s->dict_topic))) return 0;
    if (s->topic.n && !s->number) return 0;
    for (int32_t i = 0; i < s->n_dict; i++)
        if (s->dict_topic[i] < 0 || s->dict_topic[i] >= s->topic.n) return 0;
    /* every partition's topic has an index */
    for (int32_t j = 0; j < s->n_maps; j++) {
        const kc_ud_host_map *m = &s->map[j];
        int64_t end = m->host.n ? m->start[m->host.n] : 0;
        for (int64_t x = 0; x < end; x++)
            if (s->number[m->topic[x]] < 0) return 0;
    }
    return 1;
}

int kc_ud_host_section_size(const kc_ud_host_section *s, int64_t *size)
{
    if (!section_ok(s) || !dictionary_ok(s)) return KC_UD_EINVAL;
    int64_t n = 0;
    if (s->layout == KC_UD_DICTIONARY) {
        n += 4;
        for (int32_t i = 0; i < s->n_dict; i++) n += 4 + utf_size(&s->topic, s->dict_topic[i]);
    }
    for (int32_t j = 0; j < s->n_maps; j++) {
        const kc_ud_host_map *m = &s->map[j];
        n += 4;
        for (int32_t i = 0; i < m->host.n; i++) {
            n += utf_size(&m->host, i) + 8;
            if (s->layout == KC_UD_DICTIONARY) {
                n += 8 * (m->start[i + 1] - m->start[i]);
            } else {
                for (int64_t x = m->start[i]; x < m->start[i + 1]; x++)
                    n += utf_size(&s->topic, m->topic[x]) + 4;
            }
        }
    }
    *size = n;
    return KC_UD_OK;
}

int kc_ud_host_section_write(const kc_ud_host_section *s, uint8_t *out, int64_t cap)
{
    int64_t need;
    int rc = kc_ud_host_section_size(s, &need);
    if (rc != KC_UD_OK) return rc;
    if (need > cap || (need && !out)) return KC_UD_EINVAL;
    uint8_t *p = out;
    if (s->layout == KC_UD_DICTIONARY) {
        p = put_i32(p, s->n_dict);
        for (int32_t i = 0; i < s->n_dict; i++)
            p = put_utf(put_i32(p, s->dict_index[i]), &s->topic, s->dict_topic[i]);
    }
    for (int32_t j = 0; j < s->n_maps; j++) {
        const kc_ud_host_map *m = &s->map[j];
        p = put_i32(p, m->host.n);
        for (int32_t i = 0; i < m->host.n; i++) {
            int64_t a = m->start[i], b = m->start[i + 1];
            p = put_i32(put_utf(p, &m->host, i), m->port[i]);
            p = put_i32(p, (int32_t)(b - a));
            if (s->layout == KC_UD_DICTIONARY) {
                for (int64_t x = a; x < b; x++)
                    p = put_i32(put_i32(p, s->number[m->topic[x]]), m->partition[x]);
            } else {
                for (int64_t x = a; x < b; x++)
                    p = put_i32(put_utf(p, &s->topic, m->topic[x]), m->partition[x]);
            }
        }
    }
    return p - out == need ? KC_UD_OK : KC_UD_EINVAL;
}

/* one HashSet<TaskId>'s members (idx[0..n)) in its iteration order, written */
static int write_task_set(int32_t n, const int32_t *idx, const int32_t *sub, const int32_t *part,
                          int ordered, int32_t *hash, int64_t *rank, int32_t *order, uint8_t **pp)
{
    uint8_t *p = put_i32(*pp, n);
    if (ordered && n > 1) {
        for (int32_t i = 0; i < n; i++) {
            int32_t s = sub[idx[i]], q = part[idx[i]];
            /* TaskId.hashCode = Objects.hash(subtopology, partition, topologyName = null) */
            hash[i] = (int32_t)(31u * (31u * (31u + (uint32_t)s) + (uint32_t)q));
            /* compareTo: subtopology, then partition.  (MIN, MIN) would read as NO_RANK: it
             * takes the next rank, whose only key, (MIN, MIN + 1), never shares its hash code */
            rank[i] = (int64_t)s * 4294967296 + ((int64_t)q + 2147483648);
            if (rank[i] == KC_JH_NO_RANK) rank[i]++;
        }
        int rc = put_order(n, hash, rank, order);
        if (rc != KC_JH_OK) return from_jh(rc);
        for (int32_t i = 0; i < n; i++) p = put_i32(put_i32(p, sub[idx[order[i]]]), part[idx[order[i]]]);
    } else {
        for (int32_t i = 0; i < n; i++) p = put_i32(put_i32(p, sub[idx[i]]), part[idx[i]]);
    }
    *pp = p;
    return KC_UD_OK;
}

int kc_ud_task_sets(int32_t n, const int32_t *subtopology, const int32_t *partition,
                    const uint8_t *active, int ordered, uint8_t *out, int64_t cap)
{
    if (n < 0 || (n && (!subtopology || !partition || !active)) || !out || cap < 8 + 8 * (int64_t)n)
        return KC_UD_EINVAL;
    size_t m = (size_t)(n ? n : 1);
    int32_t *idx = malloc(m * sizeof *idx), *hash = malloc(m * sizeof *hash), *order = malloc(m * sizeof *order);
    int64_t *rank = malloc(m * sizeof *rank);
    int rc = KC_UD_ENOMEM;
    if (idx && hash && order && rank) {
        int32_t na = 0, ns = 0;
        for (int32_t k = 0; k < n; k++)
            if (active[k]) idx[na++] = k;
        for (int32_t k = 0; k < n; k++)
            if (!active[k]) idx[na + ns++] = k;
        uint8_t *p = out;
        rc = write_task_set(na, idx, subtopology, partition, ordered, hash, rank, order, &p);
        if (rc == KC_UD_OK)
            rc = write_task_set(ns, idx + na, subtopology, partition, ordered, hash, rank, order, &p);
    }
    free(idx);
    free(hash);
    free(order);
    free(rank);
    return rc;
}
