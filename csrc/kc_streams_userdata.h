/*
 * Kafka Streams rebalance userData writers (plain C99, no Python headers): the parts of
 * SubscriptionInfo (v1-v6 task sets) and AssignmentInfo (host maps, topic dictionary) whose
 * order Kafka takes from java.util.HashMap / HashSet (kc_javahash.h), written byte for byte
 * as Kafka 4.1.1's encoders do.  The binding turns Python values into these arrays; strings
 * arrive already in Java's modified UTF-8 (DataOutput.writeUTF's bytes, without the length).
 *
 * Every function checks its inputs (counts, offsets, ids in range, strings within writeUTF's
 * 65535 bytes, the output buffer's size) and writes nothing past `cap`.
 */
#ifndef KC_STREAMS_USERDATA_H
#define KC_STREAMS_USERDATA_H

#include <stdint.h>

enum {
    KC_UD_OK = 0,
    KC_UD_ENOMEM = -1,
    KC_UD_EINVAL = -2          /* a count, offset, id or string length out of range; a short buffer */
};

/* n strings: bytes data[off[i] .. off[i + 1]) */
typedef struct {
    int32_t n;
    const uint8_t *data;
    const int64_t *off;
} kc_ud_strings;

/* One Map<HostInfo, Set<TopicPartition>> in the caller's order: host i has the partitions
 * (topic[k], partition[k]) for k in [start[i], start[i + 1]), topics as ids into the section's
 * topic table. */
typedef struct {
    kc_ud_strings host;
    const int32_t *port;
    const int64_t *start;
    const int32_t *topic;
    const int32_t *partition;
} kc_ud_host_map;

enum {
    KC_UD_HOSTS = 0,           /* v2-v4: topic names inline (writeUTF topic, int32 partition) */
    KC_UD_DICTIONARY = 1       /* v5+: int32 n, n x (int32 index, UTF topic), then the maps by index */
};

typedef struct {
    int layout;
    int32_t n_maps;            /* 1 or 2 (v6+: partitionsByHost, standbyPartitionsByHost) */
    kc_ud_host_map map[2];
    kc_ud_strings topic;       /* the topic table: every topic the maps (and dictionary) name */
    /* KC_UD_DICTIONARY: the dictionary's entries in wire order, (index[k], topic table id[k]),
     * and each topic's index as written in the maps (number[t]) */
    int32_t n_dict;
    const int32_t *dict_index;
    const int32_t *dict_topic;
    const int32_t *number;
} kc_ud_host_section;

/* Kafka 4.1.1 AssignmentInfo.encodeTopicDictionaryAndGet: the partitions of the first
 * `dict_maps` maps collected into a HashSet<TopicPartition>, the topics numbered in that
 * set's iteration order, written in the order of a HashMap<String, Integer> of them.
 * topic_hash: String.hashCode of each topic; topic_rank: their String.compareTo order (equal
 * hash codes only; NULL when no two share one).  Writes n_topics-sized dict_index / dict_topic
 * (the entries, *n_dict of them) and number (-1: a topic no partition names). */
int kc_ud_topic_dictionary(const kc_ud_host_section *s, int32_t dict_maps, const int32_t *topic_hash,
                           const int64_t *topic_rank, int32_t *dict_index, int32_t *dict_topic,
                           int32_t *number, int32_t *n_dict);

/* The bytes of the host section (KC_UD_HOSTS: the `hosts` block; KC_UD_DICTIONARY: the
 * dictionary and every map): its size into *size, then written into out[0 .. cap). */
int kc_ud_host_section_size(const kc_ud_host_section *s, int64_t *size);
int kc_ud_host_section_write(const kc_ud_host_section *s, uint8_t *out, int64_t cap);

/* SubscriptionInfo v1-v6's prevTasks then standbyTasks (int32 n, n x (int32 subtopology,
 * int32 partition)): task k (subtopology[k], partition[k], unnamed) goes to prevTasks when
 * active[k], else to standbyTasks.  ordered: as HashSet<TaskId>s iterate them (the sets
 * Kafka's constructor fills in k order; tasks distinct); else in k order.  out needs
 * 8 + 8 n bytes (cap). */
int kc_ud_task_sets(int32_t n, const int32_t *subtopology, const int32_t *partition,
                    const uint8_t *active, int ordered, uint8_t *out, int64_t cap);

#endif
