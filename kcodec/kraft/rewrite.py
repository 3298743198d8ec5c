"""Writing images back out: a snapshot of an image at a (lower) metadata.version, as
KIP-778 has the controller do it (records at the versions that level writes, record
types it lacks dropped, fields it cannot carry dropped, everything lost reported), and a
``bootstrap.checkpoint`` for a release, like ``kafka-storage format --release-version``.
"""
from __future__ import annotations

import os
import struct
import time
import uuid as _uuid
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import numpy as np

import kcodec

from . import features as F
from kcodec import log
from kcodec._java import hash_order, java_string_hash, java_string_key, java_uuid_hash
from kcodec.errors import ArgumentTypeError, InputPathError, InvalidArgumentError, expect_type
from ._columns import _starts
from .image import MetadataImage
from .records import encode_record
from kcodec.errors import CorruptRecordError

__all__ = ["Loss", "RewriteReport", "snapshot_records", "losses_at", "encode_snapshot",
           "write_snapshot", "rewrite", "bootstrap_records", "encode_bootstrap",
           "write_bootstrap", "snapshot_file_name"]

_MIGRATING = bytes(16)     # DirectoryId.MIGRATING (the zero UUID): no assignment to lose


class Loss(NamedTuple):
    record: str     # the record type
    field: str      # the field, or "*" when the whole record is dropped
    count: int      # how many records lose it
    reason: str


class RewriteReport(NamedTuple):
    from_level: Optional[int]
    to_level: int
    lossy: bool                 # something in the image could not be written, or the log was damaged
    losses: List[Loss]
    records: int                # records written (control records apart)
    notes: List[str]
    # what of the log replay could not read (corrupt batches, undecodable records): the
    # image lacks what they held, so a snapshot of it is not the cluster's state
    damage: Tuple[str, ...] = ()


def _mv(level: Union[int, str, F.MetadataVersion]) -> F.MetadataVersion:
    return F.metadata_version(level)


def losses_at(image: MetadataImage, level: Union[int, str, F.MetadataVersion]) -> List[Tuple[str, str, int]]:
    """(record, field or "*", count) for what a snapshot of ``image`` at ``level`` loses."""
    return [(l.record, l.field, l.count) for l in _losses(image, _mv(level))]


def _losses(image: MetadataImage, mv: F.MetadataVersion) -> List[Loss]:
    out: List[Loss] = []
    pv = mv.record_version("PartitionRecord")
    p = image.partitions
    n = p.rows
    alive = p.alive.data[:n]
    if pv is not None and pv < 1:
        d = p.directories
        ln = d.length.data[:n].astype(np.int64)
        total = int(ln.sum())
        pos = np.repeat(d.start.data[:n] - _starts(ln), ln) + np.arange(total)
        rowid = np.repeat(np.arange(n), ln)
        zero = p.dir_index.get(_MIGRATING, -1)
        assigned = (d.values.data[pos] != zero) & alive[rowid]
        cnt = int(np.unique(rowid[assigned]).size)
        if cnt:
            out.append(Loss("PartitionRecord", "directories", cnt,
                            f"PartitionRecord v{pv} at {mv.version} has no directory assignments"))
    if pv is not None and pv < 2:
        for attr, field in (("elr", "eligibleLeaderReplicas"), ("last_known_elr", "lastKnownElr")):
            col = getattr(p, attr)
            cnt = int(((col.length.data[:n] > 0) & alive).sum())
            if cnt:
                out.append(Loss("PartitionRecord", field, cnt,
                                f"PartitionRecord v{pv} at {mv.version} has no {field}"))
    bv = mv.record_version("RegisterBrokerRecord")
    for field, need, lost in (("logDirs", 3, lambda b: bool(b.get("logDirs"))),
                              ("isMigratingZkBroker", 2, lambda b: bool(b.get("isMigratingZkBroker"))),
                              ("inControlledShutdown", 1, lambda b: bool(b.get("inControlledShutdown")))):
        if bv < need:
            cnt = sum(1 for b in image.brokers.values() if lost(b))
            if cnt:
                out.append(Loss("RegisterBrokerRecord", field, cnt,
                                f"RegisterBrokerRecord v{bv} at {mv.version} has no {field}"))
    for rec, items in (("RegisterControllerRecord", image.controllers),
                       ("UserScramCredentialRecord", image.scram_credentials),
                       ("DelegationTokenRecord", image.delegation_tokens)):
        if items and mv.record_version(rec) is None:
            out.append(Loss(rec, "*", len(items), f"{mv.version} cannot carry {rec}"))
    if image.zk_migration_state is not None and mv.record_version("ZkMigrationStateRecord") is None:
        out.append(Loss("ZkMigrationStateRecord", "*", 1, f"{mv.version} cannot carry ZkMigrationStateRecord"))
    return out


def _strip(name: str, value: dict, version: int) -> dict:
    """Only the fields ``name`` has at ``version`` (the others are reported as losses)."""
    spec = kcodec.spec(name)
    keep = {}
    for f in spec.fields:
        key = f.name[0].lower() + f.name[1:]
        if key in value and version in f.versions:
            keep[key] = value[key]
    return keep


def _image_map_order(keys: List[Any], hashes: List[int], compare: Optional[List[Any]] = None) -> List[Any]:
    """The order Kafka's image iterates a map its deltas rebuild on every change as
    ``new HashMap<>(previous.size())`` filled from the previous map (FeaturesDelta,
    ClusterDelta, ConfigurationDelta) from their changes (a default HashMap): the fixed
    point of re-inserting a map's own order into a HashMap sized by its count."""
    # first filled from a delta's changes: a default HashMap of the keys
    order = hash_order(hashes, compare)
    for _ in range(3):
        nxt = [order[i] for i in hash_order([hashes[j] for j in order],
                                            None if compare is None else [compare[j] for j in order],
                                            initial_capacity=len(keys))]
        if nxt == order:
            break
        order = nxt
    return [keys[i] for i in order]


def _by_name(names: List[str]) -> List[str]:
    return _image_map_order(names, [java_string_hash(n) for n in names], [java_string_key(n) for n in names])


def _by_int(ids: List[int]) -> List[int]:
    return _image_map_order(ids, ids, ids)


def _registration(name: str, value: dict, version: int) -> dict:
    # Broker/ControllerRegistration keep listeners and supported features in default
    # HashMaps keyed by name: toRecord writes them in those maps' order
    out = _strip(name, value, version)
    for key in ("endPoints", "features"):
        items = out.get(key)
        if items:
            names = [i["name"] for i in items]
            out[key] = [items[i] for i in hash_order([java_string_hash(n) for n in names],
                                                     [java_string_key(n) for n in names])]
    return out


def _topic_order(image: MetadataImage) -> List[str]:
    # TopicsImage.topicsById is an ImmutableMap (PCollections HashTreePMap): iterated by the
    # key's hashCode ascending (a persistent int-keyed tree), here Uuid.hashCode
    t = image.topics
    names = list(t.by_name)
    keys = []
    for n in names:
        u = t.ids[t.by_name[n]]
        keys.append((java_uuid_hash(u if isinstance(u, _uuid.UUID) else _uuid.UUID(bytes=bytes(u))), n))
    return [n for _, n in sorted(keys, key=lambda k: k[0])]


def snapshot_records(image: MetadataImage, level: Union[int, str, F.MetadataVersion, None] = None
                     ) -> Iterator[Tuple[str, dict, int]]:
    """The records of a snapshot of ``image`` at ``level`` (default: its own
    metadata.version), in MetadataImage.write's order: features, cluster, topics,
    configs, quotas, producer ids, ACLs, SCRAM, delegation tokens; within them in the
    iteration order of Kafka's image maps (see :func:`_image_map_order`, :func:`_topic_order`),
    except the config resources (a HashMap keyed by ConfigResource, whose hash includes an
    enum's identity hash code: no two JVMs agree), which come by type and name."""
    mv = _mv(level if level is not None else (image.metadata_version or F.MINIMUM.level))
    yield ("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": mv.level}, 0)
    for name in _by_name(list(image.features)):
        yield ("FeatureLevelRecord", {"name": name, "featureLevel": image.features[name]}, 0)
    bv = mv.record_version("RegisterBrokerRecord")
    for bid in _by_int(list(image.brokers)):
        yield ("RegisterBrokerRecord", _registration("RegisterBrokerRecord", image.brokers[bid], bv), bv)
    cv = mv.record_version("RegisterControllerRecord")
    if cv is not None:
        for cid in _by_int(list(image.controllers)):
            yield ("RegisterControllerRecord", _registration("RegisterControllerRecord", image.controllers[cid], cv), cv)
    pv = mv.record_version("PartitionRecord")
    t = image.topics
    for name in _topic_order(image):
        idx = t.by_name[name]
        yield ("TopicRecord", {"name": name, "topicId": t.ids[idx]}, 0)
        for row in image._topic_rows(idx):
            d = image.partitions.row(row)
            d["topicId"] = t.ids[idx]
            if pv >= 2:
                # PartitionRegistration.toRecord: an empty ELR / last known ELR is null (the
                # tagged field is left out)
                for f in ("eligibleLeaderReplicas", "lastKnownElr"):
                    if not d.get(f):
                        d[f] = None
            yield ("PartitionRecord", _strip("PartitionRecord", d, pv), pv)
    for (rtype, rname) in sorted(image.configs):
        data = image.configs[(rtype, rname)]
        for k in _by_name(list(data)):
            yield ("ConfigRecord", {"resourceType": rtype, "resourceName": rname, "name": k, "value": data[k]}, 0)
    for entity in sorted(image.client_quotas, key=str):
        for k, v in sorted(image.client_quotas[entity].items()):
            yield ("ClientQuotaRecord", {"entity": [{"entityType": a, "entityName": b} for a, b in entity],
                                         "key": k, "value": v, "remove": False}, 0)
    if image.producer_ids is not None:
        # ProducerIdsImage.write: only the next producer id; broker id and epoch are -1
        yield ("ProducerIdsRecord", {"brokerId": -1, "brokerEpoch": -1,
                                     "nextProducerId": image.producer_ids["nextProducerId"]}, 0)
    for acl in image.acls.values():
        yield ("AccessControlEntryRecord", dict(acl), 0)
    if mv.record_version("UserScramCredentialRecord") is not None:
        for key in sorted(image.scram_credentials):
            yield ("UserScramCredentialRecord", dict(image.scram_credentials[key]), 0)
    if mv.record_version("DelegationTokenRecord") is not None:
        for key in sorted(image.delegation_tokens):
            yield ("DelegationTokenRecord", dict(image.delegation_tokens[key]), 0)


def snapshot_file_name(end_offset: int, epoch: int) -> str:
    """Kafka's snapshot file name: ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``."""
    return f"{end_offset:020d}-{epoch:010d}.checkpoint"


def _control_batch(ctype: int, spec: str, value: dict, *, offset: int, timestamp: int,
                   epoch: int) -> bytes:
    key = struct.pack(">hh", 0, ctype)
    return log.encode_batch([(key, kcodec.encode(spec, value, 0))], base_offset=offset,
                            base_timestamp=timestamp, control=True, partition_leader_epoch=epoch)


def encode_snapshot(records: List[Tuple[str, dict, int]], *, timestamps: Tuple[int, int, int] = None,
                    epoch: int = 0, last_contained_timestamp: int = 0,
                    max_batch_records: int = 2000) -> bytes:
    """A snapshot file's bytes: SnapshotHeader, the records in batches, SnapshotFooter
    (the layout of Kafka's RecordsSnapshotWriter)."""
    if timestamps is None:
        now = int(time.time() * 1000)
        timestamps = (now, now, now)
    out = [_control_batch(3, "SnapshotHeaderRecord",
                          {"version": 0, "lastContainedLogTimestamp": last_contained_timestamp},
                          offset=0, timestamp=timestamps[0], epoch=epoch)]
    off = 1
    for i in range(0, len(records), max_batch_records):
        chunk = records[i:i + max_batch_records]
        out.append(log.encode_batch([(None, encode_record(n, v, ver)) for n, v, ver in chunk],
                                    base_offset=off, base_timestamp=timestamps[1],
                                    partition_leader_epoch=epoch))
        off += len(chunk)
    out.append(_control_batch(4, "SnapshotFooterRecord", {"version": 0}, offset=off,
                              timestamp=timestamps[2], epoch=epoch))
    return b"".join(out)


def rewrite(image: MetadataImage, to: Union[int, str, F.MetadataVersion]) -> Tuple[List[Tuple[str, dict, int]], RewriteReport]:
    """The records of a snapshot of ``image`` at metadata.version ``to`` and what that
    loses."""
    F.check_image_level(image.metadata_version)
    mv = _mv(to)
    losses = _losses(image, mv)
    notes = []
    for name, lvl in sorted(image.features.items()):
        try:
            why = F.validate_level(name, lvl, dict(image.features, **{"metadata.version": mv.level}))
        except ValueError:
            why = None
        if why:
            notes.append(f"{name}={lvl} kept, but {why}")
    recs = list(snapshot_records(image, mv))
    dmg = tuple(image.damage())
    return recs, RewriteReport(image.metadata_version, mv.level, bool(losses) or bool(dmg), losses,
                               len(recs), notes, dmg)


def write_snapshot(image: MetadataImage, out: Union[str, "os.PathLike[str]"], *,
                   to: Union[int, str, F.MetadataVersion, None] = None, epoch: Optional[int] = None,
                   timestamps: Tuple[int, int, int] = None,
                   allow_damaged: bool = False) -> RewriteReport:
    """Write a snapshot of ``image`` (at ``to``, default its own level) to the file
    ``out``, or into the directory ``out`` under Kafka's snapshot file name
    (``<end offset>-<epoch>.checkpoint``).  ``epoch``: the snapshot's leader epoch, by
    default the one of the last batch the image was replayed from
    (:attr:`MetadataImage.last_epoch`; 0 when none was read).

    An image replayed from a damaged log (:attr:`MetadataImage.damaged`) lacks what the
    damaged part held: it raises :class:`~kcodec.errors.CorruptRecordError` (naming the
    first damage) and writes nothing, unless ``allow_damaged=True`` (the report then lists
    the damage and says lossy)."""
    if image.damaged and not allow_damaged:
        dmg = image.damage()
        first = image.batch_errors[0] if image.batch_errors else None
        raise CorruptRecordError(
            f"the log is damaged ({len(dmg)} unreadable part(s), first: {dmg[0]}): a snapshot "
            "of what could be read would not be the cluster's state",
            file=first.file if first else None, position=first.position if first else None)
    if epoch is None:
        epoch = max(image.last_epoch, 0)
    recs, report = rewrite(image, to if to is not None else (image.metadata_version or F.MINIMUM.level))
    data = encode_snapshot(recs, timestamps=timestamps, epoch=epoch)
    path = os.fspath(out)
    if os.path.isdir(path):
        path = os.path.join(path, snapshot_file_name(max(image.last_offset + 1, 0), epoch))
    _write_atomically(path, data)
    return report


def bootstrap_records(release: Union[int, str, F.MetadataVersion],
                      features: Optional[Dict[str, int]] = None) -> List[Tuple[str, dict, int]]:
    """The records ``kafka-storage format --release-version`` puts in
    ``bootstrap.checkpoint``: metadata.version, then every feature at its default level
    for that release (overridden by ``features``) when above 0, by name; kraft.version
    is not among them (it lives in the KRaftVersion control record)."""
    mv = _mv(release)
    levels = F.default_levels(mv)
    if features:
        levels.update(_checked_features(features, mv))
    recs = [("FeatureLevelRecord", {"name": "metadata.version", "featureLevel": mv.level}, 0)]
    for name in sorted(levels):
        if name != "kraft.version" and levels[name] > 0:
            recs.append(("FeatureLevelRecord", {"name": name, "featureLevel": levels[name]}, 0))
    return recs


def encode_bootstrap(release: Union[int, str, F.MetadataVersion], *,
                     features: Optional[Dict[str, int]] = None,
                     timestamps: Tuple[int, int, int] = None) -> bytes:
    return encode_snapshot(bootstrap_records(release, features), timestamps=timestamps)


def _checked_features(features: Dict[str, int], mv: F.MetadataVersion) -> Dict[str, int]:
    """``features`` if every name is a feature Kafka 4.1.1 knows at a level it defines and
    whose dependencies the bootstrap meets (Feature.validateVersion, as kafka-storage format
    checks them), else an InvalidArgumentError naming the feature."""
    if not isinstance(features, dict):
        raise ArgumentTypeError("features", f"expected a dict of NAME: LEVEL, got {type(features).__name__}")
    for name, level in features.items():
        if name == F.FEATURE_NAME:
            raise InvalidArgumentError(f"features[{name!r}]", "metadata.version is the release "
                                       "version, not a feature override")
        if name not in F.FEATURES:
            raise InvalidArgumentError(f"features[{name!r}]", f"unknown feature (known: "
                                       f"{', '.join(sorted(F.FEATURES))})")
        expect_type(level, int, f"features[{name!r}]", "an integer level")
        if level != 0:
            try:
                F.feature(name).level(level)
            except ValueError as e:
                known = ", ".join(str(x.level) for x in F.feature(name).levels)
                raise InvalidArgumentError(f"features[{name!r}]", f"{e} (levels: {known})") from None
    proposed = dict(F.default_levels(mv), **features, **{F.FEATURE_NAME: mv.level})
    for name, level in features.items():
        why = F.validate_level(name, level, proposed) if level else None
        if why:
            raise InvalidArgumentError(f"features[{name!r}]", why)
    return features


def write_bootstrap(directory: Union[str, "os.PathLike[str]"], release: Union[int, str, F.MetadataVersion], *,
                    features: Optional[Dict[str, int]] = None) -> str:
    """Write ``bootstrap.checkpoint`` for ``release`` into ``directory`` (created when
    missing); its path.  Everything is validated and encoded first, then written to a
    temporary file in ``directory``, synced and renamed over the old file: a rejected
    release or feature, or a crash, leaves an existing checkpoint as it was."""
    data = encode_bootstrap(release, features=features)
    directory = os.fspath(directory)
    if os.path.lexists(directory) and not os.path.isdir(directory):
        raise InputPathError(directory, "not a directory")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "bootstrap.checkpoint")
    _write_atomically(path, data)
    return path


def _write_atomically(path: str, data: bytes) -> None:
    """``data`` to ``path`` through a synced temporary file in the same directory and a
    rename, so readers see the old file or the new one, never a cut one."""
    import tempfile
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        raise InputPathError(parent, "no such directory to write into")
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp",
                               dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:   # the rename itself is durable once the directory is synced
        dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
