"""UpdateFeatures against an image, with Kafka 4.1.1's controller semantics
(FeatureControlManager.updateFeatures, QuorumFeatures, Feature.validateVersion).

Every failure is ``INVALID_UPDATE_VERSION`` (95) with the message QuorumController answers
(``The update failed for all features since the following feature had an error: `` and the
first failing feature's reason); any failing feature fails the whole request and writes
nothing.  Enabling ``eligible.leader.replicas.version`` also writes what
``ConfigurationControlManager`` adds ahead of the feature records: a cluster-level
``min.insync.replicas`` when the cluster has none, and the removal of broker-level ones.
A dry run (``validate_only``) runs every check and writes nothing.

    >>> from kcodec.kraft.planner import FeatureUpdate, plan
    >>> # plan(image, [FeatureUpdate("metadata.version", 21, "SAFE_DOWNGRADE")])
"""
from __future__ import annotations

from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from kcodec._java import java_hashmap_order, timeline_hash_order
from kcodec.errors import ArgumentTypeError, expect_type

from . import features as F
from .image import MetadataImage

__all__ = ["FeatureUpdate", "UpdateResult", "Downgrade", "plan", "UPGRADE_TYPES",
           "INVALID_UPDATE_VERSION", "classify_downgrade", "ERROR_PREFIX"]

INVALID_UPDATE_VERSION = 95
#: FeatureUpdate.UpgradeType
UPGRADE_TYPES = {"UNKNOWN": 0, "UPGRADE": 1, "SAFE_DOWNGRADE": 2, "UNSAFE_DOWNGRADE": 3}
_KRAFT = "kraft.version"
_ELR = "eligible.leader.replicas.version"
_MIN_ISR = "min.insync.replicas"
_BROKER = 4                        # ConfigResource.Type.BROKER
#: what QuorumController.updateFeatures puts ahead of the failing feature's reason
ERROR_PREFIX = "The update failed for all features since the following feature had an error: "


class FeatureUpdate(NamedTuple):
    """One entry of an UpdateFeatures request (``level`` 0 disables a feature)."""
    feature: str
    level: int
    upgrade_type: str = "UPGRADE"     # UPGRADE | SAFE_DOWNGRADE | UNSAFE_DOWNGRADE | UNKNOWN


class Downgrade(NamedTuple):
    """What a metadata.version downgrade would do to the image."""
    lossy: bool                 # MetadataVersion.checkIfMetadataChanged
    changed_at: List[str]       # the levels in (target, current] that changed metadata
    losses: List[Tuple[str, str, int]]   # (record, field or "*" for the whole record, count)


class UpdateResult(NamedTuple):
    error_code: int                      # 0 NONE, 95 INVALID_UPDATE_VERSION
    error: str                           # NONE | INVALID_UPDATE_VERSION
    message: Optional[str]
    records: List[Tuple[str, dict, int]]  # (record, value, version) the controller would write
    validate_only: bool
    downgrade: Optional[Downgrade] = None

    @property
    def ok(self) -> bool:
        return self.error_code == 0


def _hashmap_order(keys: Iterable[str]) -> List[str]:
    """The iteration order of a java.util.HashMap holding ``keys`` inserted in order
    (the controller walks the request's features in that order: the first failure is
    the one reported)."""
    ks = list(dict.fromkeys(keys))
    return [ks[i] for i in java_hashmap_order(ks)]


def _range_text(lo: int, hi: int) -> str:
    """VersionRange.toString."""
    if lo == hi:
        return str(lo)
    if hi == 0x7FFF:
        return f"{lo}+"
    return f"{lo}-{hi}"


def _reason_not_supported(level: int, what: str, rng: Tuple[int, int]) -> Optional[str]:
    lo, hi = rng
    if not lo <= level <= hi:
        if hi == 0:
            return f"{what} does not support this feature."
        return f"{what} only supports versions {_range_text(lo, hi)}"
    return None


def _invalid_update(feature: str, level: int, msg: str) -> str:
    return f"Invalid update version {level} for feature {feature}. {msg}"


def _invalid_mv(level: int, msg: str) -> str:
    return f"Invalid metadata.version {level}. {msg}"


def _timeline_order(ids: Iterable[int]) -> List[int]:
    """Node ids in the order the controller's TimelineHashMap/TimelineHashSet iterates them
    (filled in image order)."""
    ks = list(ids)
    return [ks[i] for i in timeline_hash_order(ks)]


class _Controller:
    """The active controller's view: its own supported ranges, the registered nodes'."""

    def __init__(self, image: MetadataImage, controller_id: Optional[int],
                 local_supported: Optional[Dict[str, Tuple[int, int]]], unstable: bool) -> None:
        sup = image.supported_features()
        if controller_id is None:
            controller_id = (image.leader or {}).get("leaderId")
            if controller_id is None and image.controllers:
                controller_id = min(image.controllers)
        self.node_id = -1 if controller_id is None else controller_id
        if local_supported is None:
            local_supported = sup["controllers"].get(self.node_id) or F.supported_ranges(unstable)
        self.local = local_supported
        self.brokers = sup["brokers"]
        self.controllers = sup["controllers"]
        voters = []
        if image.voters:
            voters = [v["voterId"] for v in image.voters.get("voters", [])]
        elif image.leader:
            voters = [v["voterId"] for v in image.leader.get("voters", [])]
        self.voters = voters

    def reason_not_supported(self, image: MetadataImage, feature: str, level: int) -> Optional[str]:
        r = _reason_not_supported(level, f"Local controller {self.node_id}",
                                  self.local.get(feature, (0, 0)))
        if r:
            return r
        for bid in _timeline_order(self.brokers):   # ClusterControlManager's registrations
            r = _reason_not_supported(level, f"Broker {bid}", self.brokers[bid].get(feature, (0, 0)))
            if r:
                return r
        mv = F.metadata_version(image.metadata_version or F.MINIMUM.level)
        if mv.properties["isControllerRegistrationSupported"]:
            found = {self.node_id}
            for cid in _timeline_order(self.controllers):
                if cid == self.node_id:
                    continue
                r = _reason_not_supported(level, f"Controller {cid}",
                                          self.controllers[cid].get(feature, (0, 0)))
                if r:
                    return r
                found.add(cid)
            for vid in self.voters:
                if vid not in found:
                    return f"controller {vid} has not registered, and may not support this feature"
        return None


def plan(image: MetadataImage, updates: Sequence[Union[FeatureUpdate, Tuple[str, int, str]]], *,
         validate_only: bool = False, controller_id: Optional[int] = None,
         local_supported: Optional[Dict[str, Tuple[int, int]]] = None,
         unstable: bool = False, static_min_insync_replicas: int = 1) -> UpdateResult:
    """Validate an UpdateFeatures request against ``image`` as Kafka 4.1.1's active
    controller would, and return its error and the records it would write.

    The local controller's supported ranges are the ones it registered
    (RegisterControllerRecord), else ``local_supported``, else a 4.1.1 controller's
    defaults (``unstable``: with unstable feature versions enabled).
    ``static_min_insync_replicas``: the controller's own ``min.insync.replicas`` (its
    server.properties, default 1), the value it writes for the cluster when enabling ELR."""
    ups = _checked_updates(updates)
    F.check_image_level(image.metadata_version)
    by_name: Dict[str, FeatureUpdate] = {}
    for u in ups:
        by_name[u.feature] = u               # HashMap.put: the last entry for a name wins
    ctl = _Controller(image, controller_id, local_supported, unstable)
    cur_mv = image.metadata_version if image.metadata_version is not None else F.MINIMUM.level
    proposed: Dict[str, int] = dict(image.features)
    proposed["metadata.version"] = cur_mv
    for u in by_name.values():
        proposed[u.feature] = u.level
    records: List[Tuple[str, dict, int]] = []
    downgrade = None
    for name in _hashmap_order(by_name):
        u = by_name[name]
        err, recs, dg = _update_feature(image, ctl, u, proposed, cur_mv)
        if dg is not None:
            downgrade = dg
        if err is not None:
            return UpdateResult(INVALID_UPDATE_VERSION, "INVALID_UPDATE_VERSION", ERROR_PREFIX + err,
                                [], validate_only, downgrade)
        records.extend(recs)
    if validate_only:
        return UpdateResult(0, "NONE", None, [], validate_only, downgrade)
    if by_name.get(_ELR, FeatureUpdate(_ELR, 0)).level > 0:
        records[:0] = _elr_safety_records(image, static_min_insync_replicas)
    return UpdateResult(0, "NONE", None, records, validate_only, downgrade)


def _elr_safety_records(image: MetadataImage, static_min_isr: int) -> List[Tuple[str, dict, int]]:
    """ConfigurationControlManager.maybeGenerateElrSafetyRecords: with ELR the cluster-level
    min.insync.replicas must exist (the controller's static value) and broker-level ones go."""
    out: List[Tuple[str, dict, int]] = []
    if _MIN_ISR not in image.configs.get((_BROKER, ""), {}):
        out.append(("ConfigRecord", {"resourceType": _BROKER, "resourceName": "", "name": _MIN_ISR,
                                     "value": str(static_min_isr)}, 0))
    # brokersWithConfigs: a TimelineHashSet of the broker ids that have any config
    with_configs = {}
    for rtype, name in image.configs:
        if rtype == _BROKER and name != "":
            try:
                with_configs.setdefault(int(name), name)
            except ValueError:
                continue
    for bid in _timeline_order(with_configs):
        name = with_configs[bid]
        if _MIN_ISR in image.configs[(_BROKER, name)]:
            out.append(("ConfigRecord", {"resourceType": _BROKER, "resourceName": name,
                                         "name": _MIN_ISR, "value": None}, 0))
    return out


def _checked_updates(updates: Sequence[Union[FeatureUpdate, Tuple[str, int, str]]]) -> List[FeatureUpdate]:
    """The request's entries as FeatureUpdates, each field of the type the request
    carries (a string level or name is an ArgumentTypeError naming ``updates[i].field``)."""
    if isinstance(updates, (str, bytes)) or not isinstance(updates, Iterable):
        raise ArgumentTypeError("updates", f"expected a sequence of FeatureUpdate, got "
                                f"{type(updates).__name__}")
    out = []
    for i, u in enumerate(updates):
        if not isinstance(u, FeatureUpdate):
            if isinstance(u, (str, bytes)) or not isinstance(u, (tuple, list)) or not 2 <= len(u) <= 3:
                raise ArgumentTypeError(f"updates[{i}]", "expected a FeatureUpdate or a "
                                        f"(feature, level[, upgrade type]) tuple, got {u!r}")
            u = FeatureUpdate(*u)
        expect_type(u.feature, str, f"updates[{i}].feature", "a feature name")
        expect_type(u.level, int, f"updates[{i}].level", "an integer level")
        expect_type(u.upgrade_type, str, f"updates[{i}].upgrade_type",
                    f"one of {', '.join(UPGRADE_TYPES)}")
        out.append(u)
    return out


def _update_feature(image: MetadataImage, ctl: _Controller, u: FeatureUpdate,
                    proposed: Dict[str, int], cur_mv: int):
    name, level, kind = u.feature, u.level, u.upgrade_type
    if kind not in UPGRADE_TYPES or kind == "UNKNOWN":
        return _invalid_update(name, level, "The controller does not support the given upgrade type."), [], None
    if name == "metadata.version":
        current = cur_mv
    elif name == _KRAFT:
        current = image.kraft_version
    else:
        current = image.features.get(name, 0)
    if level < 0:
        return _invalid_update(name, level, "A feature version cannot be less than 0."), [], None
    reason = ctl.reason_not_supported(image, name, level)
    if reason:
        return _invalid_update(name, level, reason), [], None
    if level < current:
        if kind == "UPGRADE":
            return _invalid_update(name, level, "Can't downgrade the version of this feature "
                                   "without setting the upgrade type to either safe or unsafe "
                                   "downgrade."), [], None
    elif level > current:
        if kind != "UPGRADE":
            return _invalid_update(name, level, "Can't downgrade to a newer version."), [], None
    if name == "metadata.version":
        return _update_metadata_version(image, level, current, kind == "UNSAFE_DOWNGRADE")
    if name == _KRAFT:
        if kind == "UPGRADE":
            # the raft client writes the KRaftVersion control record; the controller a NoOp
            return None, [("NoOpRecord", {}, 0)], None
        if level != current:
            return _invalid_update(name, level, "Can't downgrade the version of this feature."), [], None
        return None, [], None
    try:
        reason = F.validate_level(name, level, proposed)
    except ValueError as e:      # unknown feature, or no such level
        reason = str(e)
    if reason:
        return _invalid_update(name, level, reason), [], None
    return None, [("FeatureLevelRecord", {"name": name, "featureLevel": level}, 0)], None


def _update_metadata_version(image: MetadataImage, level: int, current: int, unsafe: bool):
    try:
        new = F.metadata_version(level)
    except ValueError:
        return _invalid_mv(level, f"Valid versions are from {F.MINIMUM.level} to "
                           f"{F.LATEST_TESTING.level}."), [], None
    dg = None
    if new.level < current:
        dg = classify_downgrade(image, new.level, current)
        if dg.lossy:
            if unsafe:
                return _invalid_mv(new.level, "Unsafe metadata downgrade is not supported in "
                                   "this version."), [], dg
            return _invalid_mv(new.level, "Refusing to perform the requested downgrade because "
                               "it might delete metadata information."), [], dg
    return None, [("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": level}, 0)], dg


def classify_downgrade(image: MetadataImage, target: int, current: Optional[int] = None) -> Downgrade:
    """Whether a metadata.version downgrade is lossless (no level in between changed the
    metadata format) and, from the image, which records and fields a snapshot at
    ``target`` could not carry."""
    from .rewrite import losses_at      # the rewrite knows what each level can carry
    cur = image.metadata_version if current is None else current
    cur = cur if cur is not None else F.MINIMUM.level
    changed = [m.version for m in F.METADATA_VERSIONS
               if target < m.level <= cur and m.metadata_changed]
    return Downgrade(F.metadata_changed(cur, target), changed, losses_at(image, target))
