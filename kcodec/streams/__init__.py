"""Kafka Streams rebalancing: the subscription/assignment user data of every version
(:mod:`~kcodec.streams.protocol`), version probing (:mod:`~kcodec.streams.probing`).

    >>> from kcodec.streams import decode_subscription
    >>> info = decode_subscription(user_data)
"""
from __future__ import annotations

from .protocol import (ASSIGNMENT_LAYOUT, ASSIGNOR_NAME, EARLIEST_PROBEABLE_VERSION, LATEST_OFFSET,
                       LATEST_SUPPORTED_VERSION, MIN_NAMED_TOPOLOGY_VERSION, STREAMS_VERSION, UNKNOWN,
                       UNKNOWN_OFFSET_SUM, AssignmentInfo, AssignorError, HostInfo, SubscriptionInfo, TaskId,
                       TopicPartition, assignment_to_json, decode_assignment, decode_subscription,
                       encode_assignment, encode_host_section, encode_subscription, subscription_to_json,
                       task_sort_key)
from .groups import STREAMS_KEY, decode_member_metadata, register, streams_user_data

__all__ = [
    "STREAMS_KEY", "decode_member_metadata", "register", "streams_user_data",
    "ASSIGNMENT_LAYOUT", "ASSIGNOR_NAME", "EARLIEST_PROBEABLE_VERSION", "LATEST_OFFSET",
    "LATEST_SUPPORTED_VERSION", "MIN_NAMED_TOPOLOGY_VERSION", "STREAMS_VERSION", "UNKNOWN",
    "UNKNOWN_OFFSET_SUM", "AssignmentInfo", "AssignorError", "HostInfo", "SubscriptionInfo", "TaskId",
    "TopicPartition", "assignment_to_json", "decode_assignment", "decode_subscription",
    "encode_assignment", "encode_host_section", "encode_subscription", "subscription_to_json",
    "task_sort_key",
]

# Streams groups decode inside kcodec.offsets as soon as Streams is imported.
register()
