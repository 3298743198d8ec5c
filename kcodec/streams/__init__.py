"""Kafka Streams rebalancing.

* :mod:`~kcodec.streams.protocol`: ``SubscriptionInfo``/``AssignmentInfo`` v1-v11 (the user
  data of Streams' consumer-protocol messages), byte-exact both ways;
* :mod:`~kcodec.streams.groups`: Streams groups inside ``__consumer_offsets``;
* :mod:`~kcodec.streams.probing`: version probing (KIP-268) and ``upgrade.from``;
* :mod:`~kcodec.streams.assignors`: Kafka's HighAvailabilityTaskAssignor (KIP-441), in C;
* :mod:`~kcodec.streams.racks`: rack-aware task assignment (KIP-925, min-cost flow in C);
* :mod:`~kcodec.streams.leader`: the group leader, subscription bytes in, assignment bytes out;
* :mod:`~kcodec.streams.learner`: the learner-task design of the KIP-429 draft;
* :mod:`~kcodec.streams.simulate`: rolling upgrades and scaling, round by round.

    >>> from kcodec.streams import decode_subscription
    >>> decode_subscription(bytes.fromhex("0000000c0000000d")).future
    True
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
