"""The classic consumer group protocol: member subscription/assignment bytes and the
client-side assignors (range, roundrobin, sticky, cooperative-sticky), computed in C.

    >>> from kcodec.consumer import decode_subscription, assign, Member
    >>> sub = decode_subscription(member_metadata_bytes)
    >>> assign("cooperative-sticky", {"c1": sub}, {"orders": 12}).assignment()

Submodules: :mod:`~kcodec.consumer.protocol` (codec), :mod:`~kcodec.consumer.assignors`
(the assignors and the KIP-429 bookkeeping), :mod:`~kcodec.consumer.adapters`
(drop-in assignors for kafka-python and aiokafka), :mod:`~kcodec.consumer.whatif`
(``kcodec assign``).
"""
from __future__ import annotations

from .protocol import (LATEST_VERSION, PROTOCOL_TYPE, Assignment, RawMessage, StickyUserData, Subscription,
                       TopicPartition, decode_assignment, decode_sticky_user_data, decode_subscription,
                       encode_assignment, encode_sticky_user_data, encode_subscription, read_assignment_raw,
                       read_subscription_raw, write_raw)
from .assignors import (STRATEGIES, AssignmentResult, CooperativeAssignmentError, Member, MemberChanges,
                        RebalanceProtocol, assign, assign_arrays, member_changes, member_from_subscription,
                        select_group_protocol, select_rebalance_protocol, supported_protocols,
                        validate_cooperative_assignment)

__all__ = [
    "LATEST_VERSION", "PROTOCOL_TYPE", "Assignment", "RawMessage", "StickyUserData", "Subscription",
    "TopicPartition", "decode_assignment", "decode_sticky_user_data", "decode_subscription",
    "encode_assignment", "encode_sticky_user_data", "encode_subscription", "read_assignment_raw",
    "read_subscription_raw", "write_raw",
    "STRATEGIES", "AssignmentResult", "CooperativeAssignmentError", "Member", "MemberChanges",
    "RebalanceProtocol", "assign", "assign_arrays", "member_changes", "member_from_subscription",
    "select_group_protocol", "select_rebalance_protocol", "supported_protocols",
    "validate_cooperative_assignment",
]
