/*
 * Fuzz target for the Streams userData writers (csrc/kc_streams_userdata.c), with inputs
 * shaped as kcodec/streams/_userdata.pyx passes them (host maps of 0-2 maps, hosts'
 * strings as offsets into one buffer, partitions as topic ids into a topic table, Kafka's
 * or a given topic dictionary, task sets with any int32 ids, hash codes that collide so
 * HashMap bins treeify), and now and then as it never should (counts, offsets, ids and
 * string lengths out of range: refused, never read past).
 *
 * Properties checked (abort() on violation):
 *   - no crash, no out-of-bounds access, no UB, no leak (ASan + UBSan); every array at
 *     its exact size;
 *   - valid input: OK; the size function and the writer agree; the bytes read back give
 *     the maps (hosts, ports, partitions, topics: inline or through the dictionary);
 *   - Kafka's dictionary numbers exactly the topics the maps name, 0..n-1, each once,
 *     and writes each (index, topic) once;
 *   - task sets: prevTasks are the active tasks and standbyTasks the rest; unordered, in
 *     the caller's order; ordered, in the order java.util.HashMap's model
 *     (kc_javahash_order) gives their hash codes and ranks (the writer's counting-sort
 *     shortcut must agree with it);
 *   - invalid input: KC_UD_EINVAL.
 *
 *   gcc -std=c99 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Icsrc \
 *       csrc/kc_streams_userdata.c csrc/kc_javahash.c csrc/fuzz/fuzz_userdata.c -o fuzz_userdata
 *   ./fuzz_userdata SECONDS SEED
 */
#define FUZZ_NAME "fuzz_userdata"

#include "kc_streams_userdata.h"
#include "kc_javahash.h"
#include "fuzz_input.h"

#include <string.h>

#define MAXH 12
#define MAXP 200
#define MAXT 24

static int32_t rd32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* n strings of lengths the input picks (now and then past writeUTF's 65535) */
static int make_strings(reader *rd, int32_t n, kc_ud_strings *s, uint8_t **data, int64_t **off, int bad)
{
    *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t total = 0;
    (*off)[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t l = take(rd, 12);
        if (bad && take(rd, 32) == 0)
            l = take(rd, 2) ? 65536 : -1;
        (*off)[i + 1] = total += l;
    }
    int64_t dlen = total > 0 ? total : 0;
    *data = malloc((size_t)dlen + 1);
    for (int64_t k = 0; k < dlen; k++)
        (*data)[k] = (uint8_t)('a' + take(rd, 4));    /* few letters: equal names happen */
    s->n = n;
    s->data = *data;
    s->off = *off;
    return total >= 0;
}

static int strings_valid(const kc_ud_strings *s)
{
    for (int32_t i = 0; i < s->n; i++) {
        int64_t l = s->off[i + 1] - s->off[i];
        if (l < 0 || l > 0xFFFF)
            return 0;
    }
    return 1;
}

/* writeUTF at p: its length, then the bytes equal string i of s */
static const uint8_t *read_utf(const uint8_t *p, const uint8_t *end, const kc_ud_strings *s, int32_t i)
{
    check(end - p >= 2, "read back: short");
    int64_t n = (int64_t)p[0] << 8 | p[1];
    check(n == s->off[i + 1] - s->off[i] && end - p - 2 >= n
          && memcmp(p + 2, s->data + s->off[i], (size_t)n) == 0, "read back: another string");
    return p + 2 + n;
}

static void run_section(reader *rd)
{
    kc_ud_host_section s;
    memset(&s, 0, sizeof s);
    int bad = take(rd, 8) == 0;
    uint8_t *tdata, *hdata[2] = {NULL, NULL};
    int64_t *toff, *hoff[2] = {NULL, NULL}, *start[2] = {NULL, NULL};
    int32_t *port[2] = {NULL, NULL}, *topic[2] = {NULL, NULL}, *part[2] = {NULL, NULL};
    int32_t nt = (int32_t)take(rd, MAXT);
    int valid = make_strings(rd, nt, &s.topic, &tdata, &toff, bad) && strings_valid(&s.topic);
    s.layout = take(rd, 2) ? KC_UD_DICTIONARY : KC_UD_HOSTS;
    s.n_maps = (int32_t)take(rd, 3);
    if (bad && take(rd, 16) == 0) {
        s.layout = 7;
        valid = 0;
    }
    for (int32_t j = 0; j < s.n_maps; j++) {
        kc_ud_host_map *m = &s.map[j];
        int32_t nh = (int32_t)take(rd, MAXH);
        valid &= make_strings(rd, nh, &m->host, &hdata[j], &hoff[j], bad) && strings_valid(&m->host);
        start[j] = malloc(sizeof(int64_t) * (size_t)(nh + 1));
        port[j] = malloc(sizeof(int32_t) * (size_t)nh + 1);
        start[j][0] = 0;
        for (int32_t i = 0; i < nh; i++) {
            port[j][i] = (int32_t)(take(rd, 0) << 24 | take(rd, 0));
            int64_t c = take(rd, 20);
            if (bad && take(rd, 40) == 0) {
                c = -1;
                valid = 0;
            }
            start[j][i + 1] = start[j][i] + c;
        }
        int64_t total = nh ? start[j][nh] : 0;
        if (total < 0 || total > MAXP) {
            valid = 0;
            total = 0;
            start[j][nh] = 0;
            for (int32_t i = 0; i < nh; i++)
                start[j][i + 1] = 0;
        }
        topic[j] = malloc(sizeof(int32_t) * (size_t)total + 1);
        part[j] = malloc(sizeof(int32_t) * (size_t)total + 1);
        for (int64_t k = 0; k < total; k++) {
            topic[j][k] = nt ? (int32_t)take(rd, (uint32_t)nt) : 0;
            if (!nt || (bad && take(rd, 40) == 0)) {
                topic[j][k] = nt + (int32_t)take(rd, 2);
                valid = 0;
            }
            uint32_t pk = take(rd, 8);
            part[j][k] = pk < 6 ? (int32_t)take(rd, 8) : pk == 6 ? INT32_MIN + (int32_t)take(rd, 3)
                                                       : INT32_MAX - (int32_t)take(rd, 3);
        }
        m->port = port[j];
        m->start = start[j];
        m->topic = topic[j];
        m->partition = part[j];
    }
    /* topic hash codes: few distinct values now and then (treeified bins, ranks) */
    int32_t *th = malloc(sizeof(int32_t) * (size_t)nt + 1);
    int64_t *tr = malloc(sizeof(int64_t) * (size_t)nt + 1);
    int collide = take(rd, 3) == 0;
    for (int32_t t = 0; t < nt; t++) {
        th[t] = collide ? (int32_t)(take(rd, 2) << 20) : (int32_t)(take(rd, 0) << 16 | take(rd, 0) << 4 | (uint32_t)t);
        tr[t] = t;
    }
    int32_t *di = malloc(sizeof(int32_t) * (size_t)nt + 1), *dt = malloc(sizeof(int32_t) * (size_t)nt + 1);
    int32_t *num = malloc(sizeof(int32_t) * (size_t)nt + 1);
    int32_t nd = -1;
    if (s.layout == KC_UD_DICTIONARY) {
        if (take(rd, 4)) {               /* Kafka's */
            int rc = kc_ud_topic_dictionary(&s, s.n_maps, th, collide ? tr : NULL, di, dt, num, &nd);
            check(valid ? rc == KC_UD_OK : rc == KC_UD_OK || rc == KC_UD_EINVAL, "dictionary status");
            if (rc == KC_UD_OK) {
                check(nd >= 0 && nd <= nt, "dictionary size");
                /* the topics the maps name, numbered 0..nd-1, each once */
                uint8_t seen[MAXT + 1] = {0}, named[MAXT + 1] = {0};
                for (int32_t j = 0; j < s.n_maps; j++) {
                    int64_t tot = s.map[j].host.n ? s.map[j].start[s.map[j].host.n] : 0;
                    for (int64_t k = 0; k < tot; k++)
                        named[s.map[j].topic[k]] = 1;
                }
                int32_t n_named = 0;
                for (int32_t t = 0; t < nt; t++) {
                    n_named += named[t];
                    check(named[t] ? num[t] >= 0 && num[t] < nd : num[t] == -1, "a topic's number");
                }
                check(n_named == nd, "dictionary: not the named topics");
                for (int32_t i = 0; i < nd; i++) {
                    check(dt[i] >= 0 && dt[i] < nt && !seen[dt[i]] && di[i] == num[dt[i]], "dictionary entry");
                    seen[dt[i]] = 1;
                }
                s.n_dict = nd;
            } else {
                s.n_dict = 0;
            }
        } else {                         /* a given one: every topic once, any index */
            nd = nt;
            for (int32_t t = 0; t < nt; t++) {
                dt[t] = t;
                di[t] = num[t] = (int32_t)(take(rd, 0) << 8 | take(rd, 0)) - (bad ? 300 : 0);
                valid &= num[t] >= 0;        /* (the binding takes Python's way then) */
            }
            s.n_dict = nd;
            if (bad && nt && take(rd, 4) == 0) {
                dt[take(rd, (uint32_t)nt)] = nt;   /* a topic id past the table */
                valid = 0;
            }
        }
        s.dict_index = di;
        s.dict_topic = dt;
        s.number = num;
    }
    int64_t size = -1;
    int rc = kc_ud_host_section_size(&s, &size);
    check(valid ? rc == KC_UD_OK : rc == KC_UD_OK || rc == KC_UD_EINVAL, "size status");
    if (rc == KC_UD_OK) {
        check(size >= 0 && size < (1 << 24), "size");
        uint8_t *out = malloc((size_t)size + 1);
        check(kc_ud_host_section_write(&s, out, size) == KC_UD_OK, "write at the size given");
        if (size > 0)
            check(kc_ud_host_section_write(&s, out, size - 1) == KC_UD_EINVAL, "write past cap");
        /* read it back */
        const uint8_t *p = out, *end = out + size;
        if (s.layout == KC_UD_DICTIONARY) {
            check(rd32(p) == s.n_dict, "read back: dictionary size");
            p += 4;
            for (int32_t i = 0; i < s.n_dict; i++) {
                check(rd32(p) == s.dict_index[i], "read back: an index");
                p = read_utf(p + 4, end, &s.topic, s.dict_topic[i]);
            }
        }
        for (int32_t j = 0; j < s.n_maps; j++) {
            const kc_ud_host_map *m = &s.map[j];
            check(end - p >= 4 && rd32(p) == m->host.n, "read back: hosts");
            p += 4;
            for (int32_t i = 0; i < m->host.n; i++) {
                p = read_utf(p, end, &m->host, i);
                check(end - p >= 8 && rd32(p) == m->port[i]
                      && rd32(p + 4) == (int32_t)(m->start[i + 1] - m->start[i]), "read back: port, count");
                p += 8;
                for (int64_t x = m->start[i]; x < m->start[i + 1]; x++) {
                    if (s.layout == KC_UD_DICTIONARY) {
                        check(end - p >= 4 && rd32(p) == s.number[m->topic[x]], "read back: a topic's index");
                        p += 4;
                    } else {
                        p = read_utf(p, end, &s.topic, m->topic[x]);
                    }
                    check(end - p >= 4 && rd32(p) == m->partition[x], "read back: a partition");
                    p += 4;
                }
            }
        }
        check(p == end, "read back: bytes left over");
        free(out);
    }
    free(th);
    free(tr);
    free(di);
    free(dt);
    free(num);
    free(tdata);
    free(toff);
    for (int j = 0; j < 2; j++) {
        free(hdata[j]);
        free(hoff[j]);
        free(start[j]);
        free(port[j]);
        free(topic[j]);
        free(part[j]);
    }
}

static void run_tasks(reader *rd)
{
    int32_t n = (int32_t)take(rd, 0) * 2;
    int32_t *sub = malloc(sizeof(int32_t) * (size_t)n + 1), *part = malloc(sizeof(int32_t) * (size_t)n + 1);
    uint8_t *act = malloc((size_t)n + 1);
    int shape = (int)take(rd, 4);
    for (int32_t k = 0; k < n; k++) {
        act[k] = (uint8_t)take(rd, 2);
        if (shape == 0) {            /* distinct, dense: the usual */
            sub[k] = k / 16;
            part[k] = k % 16;
        } else if (shape == 1) {     /* hash codes that collide: 31*(31*(31+s)+q) equal */
            sub[k] = k;
            part[k] = -31 * k + (int32_t)take(rd, 2) * 1000000;
        } else {                     /* anything (duplicates too, as a tuple subclass can pass) */
            sub[k] = (int32_t)((take(rd, 0) << 24 | take(rd, 0)) - (shape == 3 ? (uint32_t)INT32_MAX : 0u));
            part[k] = (int32_t)take(rd, 4) - 2;
        }
    }
    int ordered = (int)take(rd, 2);
    int64_t cap = 8 + 8 * (int64_t)n;
    uint8_t *out = malloc((size_t)cap);
    int rc = kc_ud_task_sets(n, sub, part, act, ordered, out, cap);
    check(rc == KC_UD_OK, "task sets status");
    check(kc_ud_task_sets(n, sub, part, act, ordered, out, cap - 1) == KC_UD_EINVAL, "task sets: short cap");
    /* prevTasks: the active ones, standbyTasks the rest; in the caller's order or the model's */
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)n + 1), *hash = malloc(sizeof(int32_t) * (size_t)n + 1);
    int32_t *order = malloc(sizeof(int32_t) * (size_t)n + 1);
    int64_t *rank = malloc(sizeof(int64_t) * (size_t)n + 1);
    const uint8_t *p = out;
    for (int set = 0; set < 2; set++) {
        int32_t m = 0;
        for (int32_t k = 0; k < n; k++)
            if ((act[k] != 0) == (set == 0))
                idx[m++] = k;
        check(rd32(p) == m, "task set size");
        p += 4;
        for (int32_t i = 0; i < m; i++) {
            hash[i] = (int32_t)(31u * (31u * (31u + (uint32_t)sub[idx[i]]) + (uint32_t)part[idx[i]]));
            rank[i] = (int64_t)sub[idx[i]] * 4294967296 + ((int64_t)part[idx[i]] + 2147483648);
            if (rank[i] == KC_JH_NO_RANK)
                rank[i]++;
            order[i] = i;
        }
        int distinct = 1;
        for (int32_t i = 0; i < m && distinct; i++)
            for (int32_t j = i + 1; j < m && distinct; j++)
                distinct = rank[i] != rank[j];
        if (ordered && m > 1 && distinct)
            check(kc_javahash_order(m, hash, rank, -1, KC_JH_PUT, order, NULL) == KC_JH_OK, "model");
        for (int32_t i = 0; i < m; i++) {
            int same = rd32(p) == sub[idx[order[i]]] && rd32(p + 4) == part[idx[order[i]]];
            check(same || (ordered && !distinct), "a task set's order");
            p += 8;
        }
    }
    check(p == out + cap, "task sets: bytes left over");
    free(idx);
    free(hash);
    free(order);
    free(rank);
    free(out);
    free(sub);
    free(part);
    free(act);
}

static void run_one(const uint8_t *data, size_t size)
{
    reader rd = {data, size, 0};
    run_section(&rd);
    run_tasks(&rd);
}

#include "fuzz_main.h"
