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

from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from ._featuredata import DATA

__all__ = [
    "MetadataVersion", "FeatureLevel", "Feature", "METADATA_VERSIONS", "FEATURES",
    "MINIMUM", "LATEST_PRODUCTION", "LATEST_TESTING", "MINIMUM_BOOTSTRAP_LEVEL",
    "metadata_version", "metadata_changed", "feature", "default_levels", "validate_level",
    "supported_ranges",
]

FEATURE_NAME = "metadata.version"


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
            return p["registerControllerRecordVersion"] if p["isControllerRegistrationSupported"] else None
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


class FeatureLevel(NamedTuple):
    level: int
    bootstrap_metadata_version: str      # enum name of the first MV that bootstraps it
    dependencies: Dict[str, int]
    production_ready: bool


class Feature(NamedTuple):
    name: str
    latest_production: int
    minimum_production: int
    latest_testing: int
    levels: Tuple[FeatureLevel, ...]

    def level(self, level: int, allow_unstable: bool = True) -> FeatureLevel:
        for fl in self.levels:
            if fl.level == level and (allow_unstable or level <= self.latest_production):
                return fl
        raise ValueError(f"No feature:{self.name} with feature level {level}")

    def default_level(self, mv: Union[int, str, MetadataVersion]) -> int:
        """Feature.defaultLevel: the highest level whose bootstrap metadata.version is at
        most ``mv``."""
        m = metadata_version(mv)
        out = 0
        for fl in self.levels:
            if _BY_NAME[fl.bootstrap_metadata_version].level <= m.level:
                out = fl.level
            else:
                break
        return out


METADATA_VERSIONS: Tuple[MetadataVersion, ...] = tuple(
    MetadataVersion(v["name"], v["level"], v["version"], v["release"], v["metadata_changed"],
                    v["production"], v["properties"])
    for v in DATA["metadata_version"]["levels"])
_BY_NAME = {m.name: m for m in METADATA_VERSIONS}
_BY_LEVEL = {m.level: m for m in METADATA_VERSIONS}
MINIMUM = _BY_NAME[DATA["metadata_version"]["minimum"]]
LATEST_PRODUCTION = _BY_NAME[DATA["metadata_version"]["latest_production"]]
LATEST_TESTING = _BY_NAME[DATA["metadata_version"]["latest_testing"]]
#: IBP_3_3_IV0: the first level with FeatureLevelRecord; features above 0 need it
MINIMUM_BOOTSTRAP_LEVEL = 4

# "X.Y" -> the release's latest production level; "X.Y-IVn" -> that level
_BY_STRING: Dict[str, MetadataVersion] = {m.version: m for m in METADATA_VERSIONS}
for _m in METADATA_VERSIONS:
    if _m.production:
        _BY_STRING[_m.release] = _m

FEATURES: Dict[str, Feature] = {
    f["name"]: Feature(f["name"], f["latest_production"], f["minimum_production"],
                       f["latest_testing"],
                       tuple(FeatureLevel(x["level"], x["bootstrap_metadata_version"],
                                          dict(x["dependencies"]), x["production_ready"])
                             for x in f["levels"]))
    for f in DATA["features"]
}


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
    m = _BY_STRING.get(v) or _BY_NAME.get(v)
    if m is None:
        key = ".".join(v.split(".")[:2]) if v.count(".") > 1 and not v.startswith("0.") else v
        m = _BY_STRING.get(key)
    if m is None:
        raise ValueError(f"Version {v} is not a valid version")
    return m


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
    if level >= 1 and (mv is None or mv < MINIMUM_BOOTSTRAP_LEVEL):
        return (f"{name} could not be set to {level} because it depends on "
                f"metadata.version=4 (3.3-IV0)")
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
