"""Kafka versions: release names (``3.7``, ``3.7.1``, ``0.10.1``) and KIP-778
``metadata.version`` names (``3.7-IV4``, ``4.1-IV1``), parsed into one ordered type, and
the ``metadata.version`` table of Kafka 4.1.1 (``MetadataVersion``: name, feature level,
production readiness).  Downgrade checks and the KRaft feature planner compare through
it::

    >>> from kcodec.versions import parse_version, metadata_version
    >>> parse_version("3.7-IV2") < parse_version("3.7-IV4") < parse_version("3.7.1")
    True
    >>> parse_version("3.7").release
    (3, 7, 0)
    >>> mv = metadata_version("3.7")     # a release name: its latest production level
    >>> (str(mv.version), mv.feature_level, mv.name)
    ('3.7-IV4', 19, 'IBP_3_7_IV4')
    >>> metadata_version(27).version == parse_version("4.1-IV1")
    True

Ordering: versions compare by release line (major, minor), then metadata.version IVs of
that line in order, then releases of the line by patch: a release comes after every IV of
its line (it carries all of them), so ``3.7-IV4 < 3.7 == 3.7.0 < 3.7.1 < 3.8-IV0``.
"""
from __future__ import annotations

import functools
import json
import os
import re
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

__all__ = ["KafkaVersion", "parse_version", "MetadataVersion", "metadata_versions",
           "metadata_version", "METADATA_VERSION_FEATURE", "FeatureLevel", "Feature", "features"]

METADATA_VERSION_FEATURE = "metadata.version"

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(?:-IV(\d+))?$")
_LAST = 1 << 30     # sorts a release after every IV of its line


@functools.total_ordering
class KafkaVersion:
    """A Kafka release (``iv is None``) or a ``metadata.version`` (``X.Y-IVn``)."""

    __slots__ = ("major", "minor", "patch", "iv")

    def __init__(self, major: int, minor: int, patch: int = 0, iv: Optional[int] = None) -> None:
        self.major, self.minor, self.patch, self.iv = major, minor, patch, iv

    @property
    def release(self) -> Tuple[int, int, int]:
        """``(major, minor, patch)``; an IV name gives its release line's ``.0``."""
        return (self.major, self.minor, self.patch)

    @property
    def is_metadata_version(self) -> bool:
        return self.iv is not None

    def _key(self) -> Tuple[int, int, int, int]:
        return (self.major, self.minor, _LAST if self.iv is None else self.iv, self.patch)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KafkaVersion) and self._key() == other._key()

    def __lt__(self, other: "KafkaVersion") -> bool:
        if not isinstance(other, KafkaVersion):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        if self.iv is not None:
            return f"{self.major}.{self.minor}-IV{self.iv}"
        return f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch else "")

    def __repr__(self) -> str:
        return f"KafkaVersion({str(self)!r})"


def parse_version(s: Union[str, KafkaVersion]) -> KafkaVersion:
    """Parse ``"3.7"``, ``"3.7.1"``, ``"0.10.1"``, ``"3.7-IV4"``; :class:`ValueError`
    for anything else."""
    if isinstance(s, KafkaVersion):
        return s
    m = _VERSION.match(str(s).strip())
    if not m or (m.group(3) is not None and m.group(4) is not None):
        raise ValueError(f"not a Kafka version: {s!r} (e.g. 3.7, 3.7.1 or 3.7-IV4)")
    major, minor, patch, iv = m.groups()
    return KafkaVersion(int(major), int(minor), int(patch or 0), None if iv is None else int(iv))


# --------------------------------------------------------------------------- metadata.version

class MetadataVersion(NamedTuple):
    """One ``metadata.version`` level (Kafka's ``MetadataVersion`` enum constant)."""
    name: str                 # "IBP_3_7_IV4"
    feature_level: int        # the FeatureLevelRecord level (19)
    version: KafkaVersion     # 3.7-IV4
    is_production: bool
    did_metadata_change: bool


@functools.lru_cache(maxsize=1)
def _json() -> dict:
    # kafka-server-common 4.1.1's MetadataVersion and Feature, shipped as package data
    path = os.path.join(os.path.dirname(__file__), "_data", "features.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=1)
def _table() -> Tuple[List[MetadataVersion], Dict[str, MetadataVersion]]:
    values = _json()["metadata_version"]["values"]
    out = [MetadataVersion(v["name"], int(v["featureLevel"]), parse_version(v["version"]),
                           bool(v["isProduction"]), bool(v["didMetadataChange"])) for v in values]
    out.sort(key=lambda m: m.feature_level)
    by_name = {str(m.version): m for m in out}
    by_name.update((m.name, m) for m in out)
    return out, by_name


def metadata_versions() -> List[MetadataVersion]:
    """Every ``metadata.version`` Kafka 4.1.1 knows (KRaft levels 7-29), by level."""
    return list(_table()[0])


def metadata_version(v: Union[int, str, KafkaVersion]) -> MetadataVersion:
    """The ``metadata.version`` of a feature level (``19``), an IV name (``"3.7-IV4"``), an
    enum name (``"IBP_3_7_IV4"``) or a release (``"3.7"``, ``"3.7.1"``: its latest
    production level, as Kafka's ``MetadataVersion.fromVersionString``: a release with
    only testing levels has none).  :class:`ValueError` when there is none."""
    levels, by_name = _table()
    if isinstance(v, int):
        for m in levels:
            if m.feature_level == v:
                return m
        raise ValueError(f"unknown metadata.version feature level {v}")
    if isinstance(v, str) and v.startswith("IBP_"):
        m = by_name.get(v)
        if m is None:
            raise ValueError(f"unknown metadata.version {v}")
        return m
    kv = parse_version(v)
    if kv.iv is not None:
        m = by_name.get(str(kv))
        if m is None:
            raise ValueError(f"unknown metadata.version {kv}")
        return m
    prod = [m for m in levels if m.is_production
            and (m.version.major, m.version.minor) == (kv.major, kv.minor)]
    if not prod:
        raise ValueError(f"no production metadata.version for release {kv}")
    return prod[-1]


# --------------------------------------------------------------------------- other features

class FeatureLevel(NamedTuple):
    """One level of a feature (a constant of e.g. Kafka's ``TransactionVersion``)."""
    level: int
    bootstrap_metadata_version: str      # enum name of the first metadata.version that bootstraps it
    dependencies: Dict[str, int]
    production_ready: bool


class Feature(NamedTuple):
    """A production feature besides ``metadata.version`` (Kafka's ``Feature`` enum)."""
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

    def default_level(self, mv: Union[int, str, KafkaVersion]) -> int:
        """``Feature.defaultLevel``: the highest level whose bootstrap metadata.version is
        at most ``mv``."""
        at = metadata_version(mv).feature_level
        out = 0
        for fl in self.levels:
            if metadata_version(fl.bootstrap_metadata_version).feature_level > at:
                break
            out = fl.level
        return out


@functools.lru_cache(maxsize=1)
def _features() -> Dict[str, Feature]:
    return {f["featureName"]: Feature(
        f["featureName"], int(f["latestProduction"]), int(f["minimumProduction"]),
        int(f["latestTesting"]),
        tuple(FeatureLevel(int(x["featureLevel"]), x["bootstrapMetadataVersion"],
                           {k: int(n) for k, n in x["dependencies"].items()},
                           bool(x["isProductionReady"])) for x in f["levels"]))
        for f in _json()["features"]["values"] if f["inPRODUCTION_FEATURES"]}


def features() -> Dict[str, Feature]:
    """Kafka 4.1.1's production features other than ``metadata.version``
    (``kraft.version``, ``transaction.version``, ``group.version``, ...), by name."""
    return dict(_features())
