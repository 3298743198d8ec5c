"""Feature levels of Kafka 4.1.1: metadata.version (MetadataVersion) and the other
production features (kraft.version, transaction.version, group.version,
eligible.leader.replicas.version, share.version, streams.version) with their
dependencies, as dumped from kafka-server-common-4.1.1.jar.

    >>> from kcodec.kraft import features
    >>> mv = features.metadata_version("4.1-IV1")
    >>> (mv.level, mv.release, features.metadata_version(27).name)
    (27, '4.1', 'IBP_4_1_IV1')
    >>> features.metadata_changed(27, 21)
    True
"""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

from kcodec import versions as _versions
from kcodec.versions import Feature, FeatureLevel
from kcodec.errors import UnsupportedVersionError

__all__ = [
    "MetadataVersion", "FeatureLevel", "Feature", "METADATA_VERSIONS", "FEATURES",
    "MINIMUM", "LATEST_PRODUCTION", "LATEST_TESTING", "MINIMUM_BOOTSTRAP_LEVEL",
    "metadata_version", "metadata_changed", "feature", "default_levels", "validate_level",
    "supported_ranges",
]

FEATURE_NAME = _versions.METADATA_VERSION_FEATURE

# What each metadata.version lets the controller write (MetadataVersion's isXSupported and
# xRecordVersion accessors), as the first level at which each value holds; the levels,
# names and ordering themselves come from kcodec.versions.
# (tests/test_kraft_features.py checks this against every level of features.json)
_SINCE: Dict[str, Tuple[Tuple[str, Any], ...]] = {
    "fetchRequestVersion": (("3.3-IV3", 13), ("3.5-IV0", 14), ("3.5-IV1", 15), ("3.7-IV4", 16),
                            ("3.9-IV0", 17), ("4.1-IV1", 18)),
    "listOffsetRequestVersion": (("3.3-IV3", 7), ("3.5-IV0", 8), ("3.9-IV0", 9), ("4.0-IV3", 10)),
    "isMigrationSupported": (("3.3-IV3", False), ("3.4-IV0", True)),
    "isScramSupported": (("3.3-IV3", False), ("3.5-IV2", True)),
    "isLeaderEpochBumpRequiredOnIsrShrink": (("3.3-IV3", True), ("3.6-IV0", False)),
    "isMetadataTransactionSupported": (("3.3-IV3", False), ("3.6-IV1", True)),
    "isDelegationTokenSupported": (("3.3-IV3", False), ("3.6-IV2", True)),
    "isControllerRegistrationSupported": (("3.3-IV3", False), ("3.7-IV0", True)),
    "isDirectoryAssignmentSupported": (("3.3-IV3", False), ("3.7-IV2", True)),
    "isElrSupported": (("3.3-IV3", False), ("4.0-IV1", True)),
    "registerBrokerRecordVersion": (("3.3-IV3", 1), ("3.4-IV0", 2), ("3.7-IV2", 3)),
    # None: the level has no RegisterControllerRecord (Kafka throws)
    "registerControllerRecordVersion": (("3.3-IV3", None), ("3.7-IV0", 0)),
    "partitionRecordVersion": (("3.3-IV3", 0), ("3.7-IV2", 1), ("4.0-IV1", 2)),
    "partitionChangeRecordVersion": (("3.3-IV3", 0), ("3.7-IV2", 1), ("4.0-IV1", 2)),
}


def _properties(v: _versions.KafkaVersion) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for prop, since in _SINCE.items():
        for first, value in since:
            if _versions.parse_version(first) <= v:
                out[prop] = value
    return out


class MetadataVersion(NamedTuple):
    """One metadata.version level."""
    name: str                # IBP_4_1_IV1
    level: int               # the FeatureLevelRecord level
    version: str             # 4.1-IV1
    release: str             # 4.1
    metadata_changed: bool   # didMetadataChange
    production: bool
    properties: dict         # record versions and isXSupported flags at this level

    def __str__(self) -> str:
        return self.version

    def record_version(self, record: str) -> Optional[int]:
        """The version the controller writes ``record`` at this level (None: the level
        cannot carry the record at all)."""
        p = self.properties
        if record == "RegisterBrokerRecord":
            return p["registerBrokerRecordVersion"]
        if record == "RegisterControllerRecord":
            return p["registerControllerRecordVersion"]
        if record == "PartitionRecord":
            return p["partitionRecordVersion"]
        if record == "PartitionChangeRecord":
            return p["partitionChangeRecordVersion"]
        if record == "UserScramCredentialRecord" or record == "RemoveUserScramCredentialRecord":
            return 0 if p["isScramSupported"] else None
        if record in ("DelegationTokenRecord", "RemoveDelegationTokenRecord"):
            return 0 if p["isDelegationTokenSupported"] else None
        if record in ("BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord"):
            return 0 if p["isMetadataTransactionSupported"] else None
        if record == "ZkMigrationStateRecord":
            return 0 if p["isMigrationSupported"] else None
        if record == "BrokerRegistrationChangeRecord":
            return 2 if p["isDirectoryAssignmentSupported"] else 1
        if record == "ClearElrRecord":
            return 0 if p["isElrSupported"] else None
        return 0


METADATA_VERSIONS: Tuple[MetadataVersion, ...] = tuple(
    MetadataVersion(m.name, m.feature_level, str(m.version),
                    f"{m.version.major}.{m.version.minor}", m.did_metadata_change,
                    m.is_production, _properties(m.version))
    for m in _versions.metadata_versions())
_BY_LEVEL = {m.level: m for m in METADATA_VERSIONS}
MINIMUM = METADATA_VERSIONS[0]
LATEST_PRODUCTION = [m for m in METADATA_VERSIONS if m.production][-1]
LATEST_TESTING = METADATA_VERSIONS[-1]
#: IBP_3_3_IV0: the first level with FeatureLevelRecord; features above 0 need it
MINIMUM_BOOTSTRAP_LEVEL = 4

FEATURES: Dict[str, Feature] = _versions.features()


def metadata_version(v: Union[int, str, MetadataVersion]) -> MetadataVersion:
    """A level by feature level (27), version string (``4.1-IV1``), release (``4.1``:
    its latest production level, as ``MetadataVersion.fromVersionString``) or enum name."""
    if isinstance(v, MetadataVersion):
        return v
    if isinstance(v, int) or (isinstance(v, str) and v.isdigit()):
        m = _BY_LEVEL.get(int(v))
        if m is None:
            raise ValueError(f"No MetadataVersion with feature level {int(v)}. Valid feature "
                             f"levels are from {MINIMUM.level} to {LATEST_TESTING.level}.")
        return m
    try:
        return _BY_LEVEL[_versions.metadata_version(v).feature_level]
    except ValueError:
        raise ValueError(f"Version {v} is not a valid version") from None


def check_image_level(level: Optional[int]) -> None:
    """Refuse a log whose finalized metadata.version is not a level Kafka 4.1.1 knows (a
    newer release's log, or a damaged one): nothing can be planned or rewritten from it.
    Raises :class:`kcodec.errors.UnsupportedVersionError` naming the level."""
    if level is not None and level not in _BY_LEVEL:
        raise UnsupportedVersionError(
            f"the log finalizes metadata.version {level}, not a level Kafka 4.1.1 knows "
            f"({MINIMUM.level} to {LATEST_TESTING.level}): a newer release's log or a damaged "
            f"one, nothing is planned or rewritten from it",
            message="FeatureLevelRecord", path="featureLevel")


def metadata_changed(a: Union[int, str, MetadataVersion], b: Union[int, str, MetadataVersion]) -> bool:
    """MetadataVersion.checkIfMetadataChanged: whether some level in (lower, higher]
    changed the metadata format (a downgrade across it may lose metadata)."""
    x, y = metadata_version(a), metadata_version(b)
    if x.level == y.level:
        return False
    hi, lo = (x, y) if x.level > y.level else (y, x)
    return any(m.metadata_changed for m in METADATA_VERSIONS if lo.level < m.level <= hi.level)


def feature(name: str) -> Feature:
    f = FEATURES.get(name)
    if f is None:
        raise ValueError(f"Feature {name} not found.")
    return f


def default_levels(mv: Union[int, str, MetadataVersion]) -> Dict[str, int]:
    """The levels ``kafka-storage format --release-version`` finalizes with ``mv``."""
    return {name: f.default_level(mv) for name, f in FEATURES.items()}


def validate_level(name: str, level: int, proposed: Dict[str, int]) -> Optional[str]:
    """Feature.validateVersion: the reason ``name`` cannot be at ``level`` given the
    ``proposed`` levels (metadata.version included), or None."""
    mv = proposed.get(FEATURE_NAME)
    # Kafka 4.1.1 Feature.validateVersion: any enabled feature needs MetadataVersion.MINIMUM_VERSION
    if level >= 1 and (mv is None or mv < MINIMUM.level):
        return (f"{name} could not be set to {level} because it depends on "
                f"metadata.version={MINIMUM.level} ({MINIMUM.version})")
    for dep, need in feature(name).level(level).dependencies.items():
        have = proposed.get(dep)
        if have is None or have < need:
            return f"{name} could not be set to {level} because it depends on {dep} level {need}"
    return None


def supported_ranges(unstable: bool = False) -> Dict[str, Tuple[int, int]]:
    """QuorumFeatures.defaultSupportedFeatureMap of a 4.1.1 controller (``unstable``:
    ``unstable.feature.versions.enable=true``)."""
    out = {FEATURE_NAME: (MINIMUM.level, (LATEST_TESTING if unstable else LATEST_PRODUCTION).level)}
    for f in FEATURES.values():
        top = f.latest_testing if unstable else f.latest_production
        if top > 0:
            out[f.name] = (f.minimum_production, top)
    return out


def levels_table() -> List[Dict[str, object]]:
    """Every metadata.version level (for ``kcodec features versions``)."""
    return [{"level": m.level, "version": m.version, "name": m.name, "release": m.release,
             "metadata_changed": m.metadata_changed, "production": m.production}
            for m in METADATA_VERSIONS]
