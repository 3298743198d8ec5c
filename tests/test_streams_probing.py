"""Version probing and upgrade.from, as StreamsPartitionAssignor(Test) and StreamsConfig have them."""
from __future__ import annotations

import uuid

import pytest

from kcodec.streams import AssignorError, SubscriptionInfo
from kcodec.streams.probing import (RELEASES, UPGRADE_FROM_VALUES, TaskAssignmentError, assignment_versions,
                                    leader_versions, member_on_assignment, rebalance_protocol, release_version,
                                    subscription_version, upgrade_from)


def sub(v, latest=None, err=0):
    latest = (-1 if v < 3 else max(v, 11)) if latest is None else latest
    return SubscriptionInfo(v, latest, uuid.uuid4(), error_code=err)


def test_lowest_used_version_wins():
    # shouldReturnLowestAssignmentVersionForDifferentSubscriptionVersions
    lv = leader_versions({"a": sub(7, 11), "b": sub(8, 11), "c": sub(11, 11)})
    assert (lv.min_received, lv.commonly_supported, lv.version_probing) == (7, 11, False)
    assert assignment_versions(lv) == (7, 11)


def test_v1_member_pulls_commonly_supported_to_unknown():
    lv = leader_versions({"a": sub(1), "b": sub(11, 11)})
    assert (lv.min_received, lv.commonly_supported) == (1, -1)


def test_future_member_is_version_probing_and_does_not_lower_versions():
    lv = leader_versions({"a": sub(11, 11), "f": sub(12, 12)})
    assert lv.version_probing and lv.future_members == ["f"]
    assert (lv.min_received, lv.commonly_supported) == (11, 11)


@pytest.mark.parametrize("old", [1, 2])
def test_future_and_pre_2_0_member_is_an_assignment_error(old):
    # shouldEncodeAssignmentErrorIfV1/V2SubscriptionAndFutureSubscriptionIsMixed
    lv = leader_versions({"a": sub(old), "f": sub(12, 12)})
    assert lv.error_code == AssignorError.ASSIGNMENT_ERROR
    assert assignment_versions(lv) == (11, 11)


def test_shutdown_request_reaches_everyone():
    lv = leader_versions({"a": sub(11, 11, err=4), "b": sub(11, 11)})
    assert lv.error_code == AssignorError.SHUTDOWN_REQUESTED


def test_pre_2_0_leader_cannot_read_newer_subscriptions():
    with pytest.raises(TaskAssignmentError):
        leader_versions({"a": sub(2), "b": sub(3, 3)}, leader_latest=2)


def test_member_downgrades_after_probe_and_upgrades_at_the_end():
    u = member_on_assignment(12, 11, 11, latest_supported=12)
    assert (u.used_version, u.rebalance_now) == (11, True)
    u = member_on_assignment(11, 11, 12, latest_supported=12)
    assert (u.used_version, u.rebalance_now) == (12, True)
    assert member_on_assignment(11, 11, 11) == (11, False, None)
    # below the first probeable version nothing changes
    assert member_on_assignment(2, 2, -1) == (2, False, None)


def test_member_refuses_impossible_assignments():
    with pytest.raises(TaskAssignmentError):
        member_on_assignment(7, 8, 11)
    with pytest.raises(TaskAssignmentError):
        member_on_assignment(11, 11, 12)


def test_upgrade_from_values():
    assert upgrade_from("0.10.0").subscription_version == 1
    for v in ("0.10.1", "0.10.2", "0.11.0", "1.0", "1.1"):
        assert upgrade_from(v).subscription_version == 2
    for v in UPGRADE_FROM_VALUES:
        assert upgrade_from(v).eager == (RELEASES[v] <= RELEASES["2.3"])
        if RELEASES[v] >= 3:
            assert upgrade_from(v).subscription_version == 11
    with pytest.raises(ValueError):
        upgrade_from("3.9")
    assert len(UPGRADE_FROM_VALUES) == 24


def test_release_versions_and_protocols():
    assert release_version("2.3.1") == 4 and release_version("3.8") == 11 and release_version("0.10.0.1") == 1
    assert subscription_version("4.1", "1.1") == 2
    assert rebalance_protocol("2.3") == "EAGER" and rebalance_protocol("3.8") == "COOPERATIVE"
    assert rebalance_protocol("3.8", "2.3") == "EAGER"
