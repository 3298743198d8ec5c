# C declarations of the assignor kernels (csrc/kc_assign.h).
from libc.stdint cimport int32_t, int64_t

cdef extern from "kc_assign.h":
    int KC_ASSIGN_OK
    int KC_ASSIGN_ENOMEM
    int KC_ASSIGN_EINVAL
    int KC_ASSIGN_EINTERNAL

    ctypedef struct kc_assign_input:
        int32_t n_members
        int32_t n_topics
        int32_t n_racks
        const int32_t *part_count
        const int64_t *sub_off
        const int32_t *sub_topic
        const int64_t *own_off
        const int32_t *own_topic
        const int32_t *own_part
        const int32_t *generation
        const int32_t *member_rack
        const int64_t *prack_off
        const int32_t *prack
        int32_t prefer_rack_aware
        const int32_t *visit_order

    ctypedef struct kc_assign_stats:
        int32_t general_path
        int32_t rack_aware
        int32_t max_generation
        int64_t doubly_claimed
        int64_t transferring
        int64_t balance_moves

    int64_t kc_assign_total_partitions(const kc_assign_input *inp) nogil
    int kc_assign_range(const kc_assign_input *inp, int32_t *owner_out) nogil
    int kc_assign_roundrobin(const kc_assign_input *inp, int32_t *owner_out) nogil
    int kc_assign_sticky(const kc_assign_input *inp, int cooperative, int32_t *owner_out,
                         int32_t *target_out, kc_assign_stats *stats) nogil
