"""Version probing (KIP-268) and ``upgrade.from``, as Kafka Streams 4.1.1 applies them.

The leader's side (``StreamsPartitionAssignor.assign``): the assignment is written at the
minimum *used* version received and carries the minimum *latest supported* version as the
commonly supported version; members on a version above the leader's are "future" members
(grouped as one client, still given tasks since 2.6), which is version probing; a future
member together with a v1/v2 member is an error.  The member's side
(``onAssignment``): downgrade after a successful probe, upgrade once the commonly
supported version rises, and rebalance at once in both cases.

    >>> from kcodec.streams.probing import member_on_assignment
    >>> member_on_assignment(12, 11, 11, latest_supported=12)
    MemberUpdate(used_version=11, rebalance_now=True, reason='downgrade after version probing')
"""
from __future__ import annotations

from typing import Dict, List, Mapping, NamedTuple, Optional, Tuple

from kcodec.errors import KcodecError

from .protocol import (EARLIEST_PROBEABLE_VERSION, LATEST_SUPPORTED_VERSION, UNKNOWN, AssignorError,
                       SubscriptionInfo)

__all__ = [
    "TaskAssignmentError", "RELEASES", "UPGRADE_FROM_VALUES", "UpgradeFrom", "upgrade_from",
    "release_version", "subscription_version", "rebalance_protocol", "LeaderVersions",
    "leader_versions", "MemberUpdate", "member_on_assignment", "gives_future_members_tasks",
    "assignment_versions",
]


class TaskAssignmentError(KcodecError):
    """Kafka's ``TaskAssignmentException`` during a Streams rebalance."""


# The newest SubscriptionInfo/AssignmentInfo version each Streams release speaks
# (StreamsAssignmentProtocolVersions.LATEST_SUPPORTED_VERSION on each release branch).
RELEASES: Dict[str, int] = {
    "0.10.0": 1, "0.10.1": 2, "0.10.2": 2, "0.11.0": 2, "1.0": 2, "1.1": 2,
    "2.0": 3, "2.1": 4, "2.2": 4, "2.3": 4, "2.4": 5, "2.5": 6, "2.6": 8, "2.7": 8, "2.8": 9,
    "3.0": 10, "3.1": 10, "3.2": 11, "3.3": 11, "3.4": 11, "3.5": 11, "3.6": 11, "3.7": 11,
    "3.8": 11, "3.9": 11, "4.0": 11, "4.1": 11,
}

# StreamsConfig.UPGRADE_FROM_CONFIG values 4.1.1 accepts (UpgradeFromValues).
UPGRADE_FROM_VALUES: Tuple[str, ...] = (
    "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5",
    "2.6", "2.7", "2.8", "3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8",
)
_EAGER_UPGRADE_FROM = UPGRADE_FROM_VALUES[:UPGRADE_FROM_VALUES.index("2.3") + 1]


class UpgradeFrom(NamedTuple):
    """What an ``upgrade.from`` value forces."""
    value: Optional[str]
    subscription_version: int      # the version the member sends (at most)
    eager: bool                    # EAGER rebalance protocol instead of COOPERATIVE


def upgrade_from(value: Optional[str]) -> UpgradeFrom:
    """The effect of ``upgrade.from=value`` (None: not set).  Unknown values raise
    ValueError, as StreamsConfig does."""
    if value is None:
        return UpgradeFrom(None, LATEST_SUPPORTED_VERSION, False)
    if value not in UPGRADE_FROM_VALUES:
        raise ValueError(f"Unknown configuration value for parameter 'upgrade.from': {value}")
    version = 1 if value == "0.10.0" else 2 if RELEASES[value] <= 2 else LATEST_SUPPORTED_VERSION
    return UpgradeFrom(value, version, value in _EAGER_UPGRADE_FROM)


def release_version(release: str) -> int:
    """The newest metadata version of a Streams release (``"2.3"``, ``"3.8.1"``);
    ``"future"``/``"12"`` style strings name a simulated later version."""
    parts = release.split(".")
    key = ".".join(parts[:3 if parts[0] == "0" else 2])
    if key in RELEASES:
        return RELEASES[key]
    if release.isdigit():
        return int(release)
    raise ValueError(f"unknown Streams release {release!r} (known: {', '.join(RELEASES)})")


def subscription_version(release: str, upgrade_from_value: Optional[str] = None) -> int:
    """The version a member of ``release`` sends when it starts."""
    latest = release_version(release)
    if upgrade_from_value is None or latest < EARLIEST_PROBEABLE_VERSION:
        return latest
    return min(latest, upgrade_from(upgrade_from_value).subscription_version)


def rebalance_protocol(release: str, upgrade_from_value: Optional[str] = None) -> str:
    """``"EAGER"`` or ``"COOPERATIVE"`` (Streams switched to cooperative in 2.4)."""
    if release_version(release) < RELEASES["2.4"] and not release.isdigit():
        return "EAGER"
    return "EAGER" if upgrade_from(upgrade_from_value).eager else "COOPERATIVE"


def gives_future_members_tasks(leader_latest: int) -> bool:
    """Leaders since 2.6 hand future members tasks (one synthetic client); 2.0-2.5 sent
    them an empty assignment."""
    return leader_latest >= RELEASES["2.6"]


class LeaderVersions(NamedTuple):
    """The leader's reading of the subscriptions' versions."""
    min_received: int                 # the version every assignment is written at
    commonly_supported: int           # min latest-supported version (-1 with a v1/v2 member)
    future_members: List[str]         # members above the leader's version
    version_probing: bool
    error_code: int                   # AssignorError code for everyone (0: none)
    error: Optional[str]


def leader_versions(subscriptions: Mapping[str, SubscriptionInfo], *,
                    leader_latest: int = LATEST_SUPPORTED_VERSION) -> LeaderVersions:
    """Apply the leader's version rules to the members' decoded subscriptions.

    ``leader_latest`` is the leader's own newest version (11 for 4.1.1; lower to model an
    older leader).  A leader before 2.0 (``leader_latest`` < 3) cannot read a newer
    subscription at all: that raises :class:`TaskAssignmentError`, as it did."""
    min_received = leader_latest
    min_supported = leader_latest
    future: List[str] = []
    shutdown = False
    for member, info in subscriptions.items():
        if info.version > leader_latest:
            if leader_latest < EARLIEST_PROBEABLE_VERSION:
                raise TaskAssignmentError(f"unable to decode subscription data: version={info.version}")
            future.append(member)
        else:
            min_received = min(min_received, info.version)
        if info.error_code == AssignorError.SHUTDOWN_REQUESTED:
            shutdown = True
        if info.latest_supported_version < min_supported:
            min_supported = info.latest_supported_version
    if shutdown:
        return LeaderVersions(min_received, min_supported, future, False,
                              AssignorError.SHUTDOWN_REQUESTED, "shutdown requested")
    probing = bool(future)
    if future and min_received < EARLIEST_PROBEABLE_VERSION:
        return LeaderVersions(min_received, min_supported, future, False, AssignorError.ASSIGNMENT_ERROR,
                              f"Received a future (version probing) subscription (version: "
                              f"{subscriptions[future[-1]].version}) and an incompatible pre Kafka 2.0 "
                              f"subscription (version: {min_received}) at the same time.")
    return LeaderVersions(min_received, min_supported, future, probing, 0, None)


class MemberUpdate(NamedTuple):
    """What a member does with the versions of the assignment it received."""
    used_version: int           # the version of its next subscription
    rebalance_now: bool         # rejoin immediately (version probing / end of upgrade)
    reason: Optional[str]


def member_on_assignment(used_version: int, received_version: int, commonly_supported: int, *,
                         latest_supported: int = LATEST_SUPPORTED_VERSION) -> MemberUpdate:
    """A member that sent ``used_version`` receives an assignment of ``received_version``
    carrying ``commonly_supported``.  Raises :class:`TaskAssignmentError` where Kafka does
    (an assignment newer than the subscription, or a commonly supported version above the
    member's own)."""
    if received_version > used_version:
        raise TaskAssignmentError(f"Sent a version {used_version} subscription but got an assignment "
                                  f"with higher version {received_version}.")
    if latest_supported >= EARLIEST_PROBEABLE_VERSION:
        if commonly_supported > latest_supported:
            raise TaskAssignmentError("Can't upgrade to metadata version greater than we support")
        if received_version >= EARLIEST_PROBEABLE_VERSION:
            if commonly_supported > used_version:
                return MemberUpdate(commonly_supported, True, "upgrade at the end of the rolling upgrade")
            if received_version < used_version:
                return MemberUpdate(commonly_supported, True, "downgrade after version probing")
    return MemberUpdate(used_version, False, None)


def assignment_versions(lv: LeaderVersions, *, leader_latest: int = LATEST_SUPPORTED_VERSION) -> Tuple[int, int]:
    """``(usedVersion, commonlySupportedVersion)`` of the assignments the leader writes: the
    error assignment is written at the leader's latest version."""
    if lv.error_code:
        return leader_latest, leader_latest
    return lv.min_received, lv.commonly_supported if lv.min_received >= EARLIEST_PROBEABLE_VERSION else UNKNOWN

