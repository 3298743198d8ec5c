/*
 * kc_assign: the classic consumer-group partition assignors in plain C.
 *
 * Kafka's client-side assignors (range with KIP-881 rack awareness, round-robin,
 * sticky and cooperative-sticky with KIP-792 generations) over interned integer ids.
 *
 * Conventions (the Python layer interns names to ids before calling):
 *  - members are numbered 0..n_members-1 in the order the assignor sorts them
 *    (range / round-robin: Kafka's MemberInfo order; sticky: member id order);
 *  - topics are numbered 0..n_topics-1 in topic-name order (Java String order);
 *  - partition p of topic t has the global index base[t] + p, base being the prefix
 *    sum of part_count (computed here); all outputs are indexed by global partition;
 *  - racks are small ids 0..n_racks-1, -1 meaning "no rack".
 *
 * No Python headers: this file and its .c files build and fuzz on their own.
 */
#ifndef KC_ASSIGN_H
#define KC_ASSIGN_H

#include <stdint.h>

#define KC_ASSIGN_OK        0
#define KC_ASSIGN_ENOMEM   (-1)  /* allocation failed */
#define KC_ASSIGN_EINVAL   (-2)  /* inconsistent input (bad id, negative count, overflow) */
#define KC_ASSIGN_EINTERNAL (-3) /* an internal invariant broke (a bug: report it) */

typedef struct kc_assign_input {
    int32_t n_members;
    int32_t n_topics;
    int32_t n_racks;            /* rack ids are < n_racks */
    const int32_t *part_count;  /* [n_topics] partitions per topic (>= 0) */

    /* subscriptions, CSR: member m subscribes sub_topic[sub_off[m] .. sub_off[m+1]) */
    const int64_t *sub_off;     /* [n_members + 1] */
    const int32_t *sub_topic;

    /* owned partitions, CSR: member m claims (own_topic[i], own_part[i]) for i in
       own_off[m] .. own_off[m+1]; claims of unknown topics or partitions are ignored */
    const int64_t *own_off;     /* [n_members + 1], may be NULL (nobody owns anything) */
    const int32_t *own_topic;
    const int32_t *own_part;
    const int32_t *generation;  /* [n_members], -1 = no generation; may be NULL */

    /* racks: member_rack[m] (may be NULL); partition racks CSR over the global
       partition index: prack[prack_off[g] .. prack_off[g+1]) distinct rack ids */
    const int32_t *member_rack;
    const int64_t *prack_off;   /* [total partitions + 1] or NULL */
    const int32_t *prack;

    int32_t prefer_rack_aware;  /* Kafka's test-only preferRackAwareLogic switch */

    /* sticky, equal subscriptions: the order members' owned partitions are visited in
       (Java visits a HashMap; the caller may reproduce its order). A permutation of
       0..n_members-1, or NULL for index order. */
    const int32_t *visit_order;
} kc_assign_input;

/* Statistics the sticky assignor reports (for the what-if tool and tests). */
typedef struct kc_assign_stats {
    int32_t general_path;       /* 1: unequal subscriptions (general algorithm) */
    int32_t rack_aware;         /* 1: rack-aware assignment was used */
    int32_t max_generation;
    int64_t doubly_claimed;     /* partitions claimed twice at the same generation */
    int64_t transferring;       /* cooperative: partitions held back this round */
    int64_t balance_moves;      /* general path: units moved by the balancing pass */
} kc_assign_stats;

/* Total partitions (sum of part_count) or a negative KC_ASSIGN_* code. */
int64_t kc_assign_total_partitions(const kc_assign_input *in);

/* RangeAssignor ("range"), KIP-881 rack aware when member and partition racks allow. */
int kc_assign_range(const kc_assign_input *in, int32_t *owner_out);

/* RoundRobinAssignor ("roundrobin"). */
int kc_assign_roundrobin(const kc_assign_input *in, int32_t *owner_out);

/*
 * Sticky ("sticky", cooperative == 0) and cooperative-sticky (cooperative != 0).
 * target_out: the sticky assignment (the goal). owner_out: what is handed out this
 * round; equal to target_out for eager, and for cooperative with every partition that
 * changes owner held back (-1) until its previous owner has revoked it.
 * Either output may be NULL. stats may be NULL.
 */
int kc_assign_sticky(const kc_assign_input *in, int cooperative,
                     int32_t *owner_out, int32_t *target_out, kc_assign_stats *stats);

/* ---- internals shared by the kc_assign_*.c files (not part of the API) ---- */

typedef struct kc_ctx {
    const kc_assign_input *in;
    int32_t M, T;
    int64_t N;              /* total partitions */
    int32_t *base;          /* [T + 1] first global index of each topic */
    /* deduplicated subscriptions: per topic (members ascending) and per member */
    int32_t *tsub_off;      /* [T + 1] */
    int32_t *tsub_mem;      /* [nsub] */
    int64_t *msub_off;      /* [M + 1] */
    int32_t *msub_topic;    /* [nsub] topic of each member subscription */
    int32_t *msub_ent;      /* [nsub] its entry index in tsub_mem */
    int64_t nsub;
} kc_ctx;

int kc_assign_prepare(const kc_assign_input *in, kc_ctx *cx);
/* kc_assign_prepare, then every partition unassigned (-1) in owner */
int kc_assign_prepare_owner(const kc_assign_input *in, kc_ctx *cx, int32_t *owner);
void kc_ctx_free(kc_ctx *cx);
/* 1 if the member has no rack or one of partition g's replicas is on its rack */
int kc_rack_match(const kc_ctx *cx, int32_t member, int32_t g);
int kc_has_rack(const kc_ctx *cx, int32_t g, int32_t rack);
void kc_sort_u64(uint64_t *a, int64_t n);

#endif
