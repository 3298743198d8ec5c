"""Downgrade check (KIP-915): what would a coordinator of an older Kafka do with this log?

For every record the check asks whether a group coordinator of the target version

* **skips** it: the record type is unknown to it and it ignores unknown types (Kafka
  3.5+, KIP-915; the state it carried is lost), or, before 4.0, a consumer group record
  that only the (not default) new group coordinator reads;
* **fails** to load the partition: an unknown record type before 3.5, a value version
  newer than it knows before 4.0 (the Scala loader checks the version range), or a
  record type it knew only as early access with a different layout;
* **loses fields**: it decodes the record but cannot see some of its data (tagged
  fields added after it, unknown tagged fields, or a newer value version read with its
  older layout from 4.0 on, where the Java loader decodes any version).

History the check is based on (Kafka releases; each table entry below cites the release tag
and file of apache/kafka it was read from):

=====  ==================================================================  ============
type   record (key/value)                                                  first known
=====  ==================================================================  ============
0      offset commit, key v0 (0.8.2 layout)                                0.8.2
1      OffsetCommitKey / OffsetCommitValue                                 0.9.0
2      GroupMetadataKey / GroupMetadataValue                               0.9.0
3-8    consumer group (KIP-848): metadata, partition metadata, member,     3.7.0 early access,
       target assignment metadata/member, current member assignment        layouts final in 3.8.0
9      ShareGroupPartitionMetadata (KIP-932)                               4.0.0 only
10-14  share group (KIP-932): member, metadata, target assignment          4.0.0 early access,
       metadata/member, current member assignment                          11 differs in 4.1.0
15     ShareGroupStatePartitionMetadata                                    4.0.0, differs in 4.1.0
16     ConsumerGroupRegularExpression (KIP-848 regex)                      4.0.0
17-23  streams group (KIP-1071): metadata, partition metadata, member,     4.1.0 early access
       target assignment metadata/member, current assignment, topology
=====  ==================================================================  ============

Value versions:

=========================  ===  ====================================================  =======
value                      ver  change                                                release
=========================  ===  ====================================================  =======
OffsetCommitValue          0    offset, metadata, commitTimestamp                     0.8.2
OffsetCommitValue          1    + expireTimestamp                                     0.9.0
OffsetCommitValue          2    - expireTimestamp (KIP-211)                           2.1.0
OffsetCommitValue          3    + leaderEpoch (KIP-320)                               2.1.0
OffsetCommitValue          4    flexible (KIP-915)                                    3.5.0
GroupMetadataValue         0    protocolType, generation, protocol, leader, members   0.9.0
GroupMetadataValue         1    + member rebalanceTimeout (KIP-62)                    0.10.1
GroupMetadataValue         2    + currentStateTimestamp (KIP-211)                     2.1.0
GroupMetadataValue         3    + member groupInstanceId (KIP-345)                    2.3.0
GroupMetadataValue         4    flexible (KIP-915)                                    3.5.0
=========================  ===  ====================================================  =======

Tagged fields (readable, but invisible to older coordinators):
OffsetCommitValue tag 0 ``topicId`` (4.1.0), ConsumerGroupMetadataValue tag 0
``metadataHash`` (4.1.0, KIP-1101), ConsumerGroupMemberMetadataValue tag 0
``classicMemberMetadata`` (3.8.0, online classic <-> consumer migration).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Tuple

from kcodec import versions as _versions
from kcodec.framing import Writer

from .records import OffsetsRecord, unknown_tagged_fields

__all__ = ["parse_version", "check", "DowngradeReport", "Finding", "KNOWN_VERSIONS",
           "RECORD_TYPES_SINCE", "RECORD_TYPES_UNTIL", "VALUE_VERSIONS_SINCE", "TAGGED_SINCE"]

Version = Tuple[int, int, int]


def parse_version(s: str) -> Version:
    """``"3.9"`` / ``"3.9.1"`` / ``"0.10.1"`` / ``"3.7-IV4"`` -> the release as a comparable
    tuple (a metadata.version name gives its release line; see :mod:`kcodec.versions`)."""
    return _versions.parse_version(s).release


def parse_target(s: str) -> Version:
    """A downgrade target: a release from the oldest to the newest this module knows."""
    valid = (f"a release from {KNOWN_VERSIONS[0]} to {KNOWN_VERSIONS[-1]} "
             f"(e.g. {', '.join(KNOWN_VERSIONS[-4:])})")
    try:
        v = parse_version(s)
    except ValueError:
        raise ValueError(f"not a Kafka version: {s!r}; the target must be {valid}") from None
    lo, hi = parse_version(KNOWN_VERSIONS[0]), parse_version(KNOWN_VERSIONS[-1])
    if not lo <= v[:2] + (0,) <= hi:
        raise ValueError(f"no facts for Kafka {s}: the target must be {valid}")
    return v


# Every boundary below was read from apache/kafka at the release tag named in its comment
# (the git tags 0.8.2.0 ... 3.9.0-rc3, the 3.9.0 release candidate; "trunk@2024-10-25" is
# trunk after the 3.9 branch and before the 4.0 one; 4.1.1 is /work/shared's schema copy).
# GMM = core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala,
# MSG = group-coordinator/src/main/resources/common/message/ (core/... before 3.5).

# record type -> (first release that knows it, first release whose layout matches 4.1)
RECORD_TYPES_SINCE: Dict[int, Tuple[Version, Version]] = {
    # 0.8.2.0: kafka/server/OffsetManager.scala, OFFSET_SCHEMAS has key/value schema 0 only
    0: ((0, 8, 2), (0, 8, 2)),
    # 0.9.0.0: kafka/coordinator/GroupMetadataManager.scala MESSAGE_TYPE_SCHEMAS 0, 1, 2
    1: ((0, 9, 0), (0, 9, 0)),
    2: ((0, 9, 0), (0, 9, 0)),
    # 3.5.0: MSG ConsumerGroup*Key.json (types 3-8) exist, but GMM.readMessageKey still makes
    # them UnknownKey and the Java coordinator is not wired in; 3.6.0 has it behind the
    # internal group.coordinator.new.enable; 3.7.0 is the public early access
    # (group.coordinator.rebalance.protocols=classic,consumer).  3.7.0 -> 3.8.0: MSG
    # ConsumerGroupMemberMetadataValue.json swaps Assignors for tagged ClassicMemberMetadata,
    # ConsumerGroupPartitionMetadataValue drops Epoch, ConsumerGroupTargetAssignmentMemberValue
    # drops Error/MetadataVersion/MetadataBytes, ConsumerGroupCurrentMemberAssignmentValue
    # turns TargetMemberEpoch into State and drops four fields.  3.8.0 == 3.9.0-rc3 == 4.1.1
    # for all six values but ConsumerGroupMetadataValue's tagged MetadataHash (TAGGED_SINCE).
    3: ((3, 7, 0), (3, 8, 0)), 4: ((3, 7, 0), (3, 8, 0)), 5: ((3, 7, 0), (3, 8, 0)),
    6: ((3, 7, 0), (3, 8, 0)), 7: ((3, 7, 0), (3, 8, 0)), 8: ((3, 7, 0), (3, 8, 0)),
    # 3.9.0-rc3: MSG ShareGroup{PartitionMetadata,MemberMetadata,Metadata}Key.json (9-11)
    # exist, but CoordinatorRecordSerde.apiMessageKeyFor knows only 0-8 (UnknownRecordType-
    # Exception: skipped).  trunk@2024-10-25 (KAFKA-17247, #16786): types 9-15 read by
    # GroupCoordinatorRecordSerde and 9-14 replayed by GroupCoordinatorShard; it is 4.0.0's
    # base.  4.1.1 has no type 9 any more (see RECORD_TYPES_UNTIL).
    9: ((4, 0, 0), (4, 0, 0)),
    # trunk@2024-10-25 ShareGroup{MemberMetadata,TargetAssignmentMetadata,TargetAssignment-
    # Member,CurrentMemberAssignment}Value.json == 4.1.1 field for field
    10: ((4, 0, 0), (4, 0, 0)), 12: ((4, 0, 0), (4, 0, 0)),
    13: ((4, 0, 0), (4, 0, 0)), 14: ((4, 0, 0), (4, 0, 0)),
    # 4.1.1: MSG ShareGroupMetadataValue.json has a non-tagged MetadataHash after Epoch that
    # trunk@2024-10-25 lacks
    11: ((4, 0, 0), (4, 1, 0)),
    # trunk@2024-10-25: MSG ShareGroupStatePartitionMetadataKey.json validVersions 15, read by
    # the serde but not replayed (GroupCoordinatorShard.replay throws "unknown record type");
    # 4.1.1 puts a non-tagged InitializingTopics first (KAFKA-18827, #19339, 2025-04)
    15: ((4, 0, 0), (4, 1, 0)),
    # not in trunk@2024-10-25; 4.0.0 from KIP-848's regex support (not read at a 4.0 tag)
    16: ((4, 0, 0), (4, 0, 0)),
    # 4.1.1: MSG StreamsGroup*.json, "in development" (KIP-1071 early access in 4.1)
    17: ((4, 1, 0), (4, 1, 0)), 18: ((4, 1, 0), (4, 1, 0)), 19: ((4, 1, 0), (4, 1, 0)),
    20: ((4, 1, 0), (4, 1, 0)), 21: ((4, 1, 0), (4, 1, 0)), 22: ((4, 1, 0), (4, 1, 0)),
    23: ((4, 1, 0), (4, 1, 0)),
}

# record type -> first release that no longer knows it (it skips it, KIP-915)
RECORD_TYPES_UNTIL: Dict[int, Version] = {
    # 4.1.1: MSG has no ShareGroupPartitionMetadataKey.json; apiKey 9 is free
    9: (4, 1, 0),
}

# record types kept only by the Java group coordinator, which before 4.0 runs only when
# enabled: GMM.readMessageKey of 3.5.0-3.9.0-rc3 makes them UnknownKey (skipped), and
# 3.7.0/3.8.0/3.9.0-rc3 KafkaConfig.isNewGroupCoordinatorEnabled is
# group.coordinator.new.enable (default false) || group.coordinator.rebalance.protocols
# (default [classic]) contains consumer.
JAVA_COORDINATOR_ONLY = frozenset(range(3, 9))   # later types are unknown before 4.0 anyway

# (record type, value version) -> first release that reads it
VALUE_VERSIONS_SINCE: Dict[Tuple[int, int], Version] = {
    # 0.8.2.0 OffsetManager value schema 0; 0.9.0.0 GMM OFFSET_VALUE_SCHEMAS 0-1;
    # 2.0.0 still 0-1, 2.1.0 GMM OFFSET_VALUE_SCHEMAS 0-3; 3.4.0 MSG OffsetCommitValue.json
    # validVersions 0-3, 3.5.0 0-4 (flexibleVersions 4+)
    (0, 0): (0, 8, 2), (0, 1): (0, 9, 0), (0, 2): (2, 1, 0), (0, 3): (2, 1, 0), (0, 4): (3, 5, 0),
    (1, 0): (0, 9, 0), (1, 1): (0, 9, 0), (1, 2): (2, 1, 0), (1, 3): (2, 1, 0), (1, 4): (3, 5, 0),
    # 0.9.0.0 and 0.10.0.0 GMM GROUP_VALUE_SCHEMAS 0; 0.10.1.0 0-1; 2.0.0 0-1, 2.1.0 0-2;
    # 2.2.0 0-2, 2.3.0 0-3; 3.4.0 MSG GroupMetadataValue.json 0-3, 3.5.0 0-4 (flexible 4+)
    (2, 0): (0, 9, 0), (2, 1): (0, 10, 1), (2, 2): (2, 1, 0), (2, 3): (2, 3, 0), (2, 4): (3, 5, 0),
}

# (record type, tag) -> first release that knows the tagged field
TAGGED_SINCE: Dict[Tuple[int, int], Version] = {
    # 3.9.0-rc3 MSG OffsetCommitValue.json has no tagged field; 4.1.1 has topicId tag 0
    # (KAFKA-19141, #19683, 2025-05, after 4.0.0)
    (1, 0): (4, 1, 0),
    # 4.1.1 MSG ConsumerGroupMetadataValue.json: "The MetadataHash is added in 4.1 (KIP-1101)";
    # absent at 3.9.0-rc3 and trunk@2024-10-25
    (3, 0): (4, 1, 0),
    # 3.8.0 MSG ConsumerGroupMemberMetadataValue.json adds ClassicMemberMetadata (tag 0);
    # 3.7.0 has a non-tagged Assignors array instead
    (5, 0): (3, 8, 0),
}

# 3.4.0 GMM.readMessageKey throws IllegalStateException("Unknown group metadata message
# version"); 3.5.0 returns UnknownKey, which the load logs and ignores
KIP_915 = (3, 5, 0)
# Before 4.0 the default loader is GMM: readOffsetMessageValue / readGroupMessageValue throw
# "Unknown offset/group metadata message version" outside LOWEST..HIGHEST_SUPPORTED_VERSION
# (3.5.0-3.9.0-rc3).  The Java loader (CoordinatorRecordSerde.readMessage -> the generated
# read(), whose version check is always true for a top-level message; 3.9.0-rc3
# generator/.../MessageDataGenerator.generateClassReader) reads any version.  That GMM is
# gone in 4.0 is taken from the 4.0 upgrade notes, not read at a 4.0 tag.
JAVA_LOADER = (4, 0, 0)

KNOWN_VERSIONS = ["0.9", "0.10.1", "2.1", "2.3", "3.5", "3.7", "3.8", "3.9", "4.0", "4.1"]


def _vs(v: Version) -> str:
    return ".".join(str(x) for x in v)


@dataclass
class Finding:
    outcome: str                 # "skip", "fail", "lose_fields"
    record_type: int
    type_name: Optional[str]
    value_version: Optional[int]
    reason: str
    count: int = 0
    first_position: Optional[str] = None
    tombstone: bool = False      # the records are tombstones (no value)


@dataclass
class DowngradeReport:
    target: str
    records: int = 0
    findings: Dict[Tuple[str, int, Optional[int], str, bool], Finding] = field(default_factory=dict)
    errors: List[str] = field(default_factory=list)   # corrupt batches: the log was not fully read

    @property
    def complete(self) -> bool:
        """Every batch of the log was read; without that no verdict is "safe"."""
        return not self.errors

    @property
    def safe(self) -> bool:
        """The whole log was read, and no record would make the load fail or be skipped,
        and no data would be lost."""
        return self.complete and not self.findings

    @property
    def fails(self) -> bool:
        return any(f.outcome == "fail" for f in self.findings.values())

    @property
    def verdict(self) -> str:
        """``"fails"`` (the load would fail), ``"lossy"`` (records skipped or fields lost),
        ``"unknown"`` (nothing found, but corrupt batches were not read) or ``"safe"``."""
        if self.fails:
            return "fails"
        if self.findings:
            return "lossy"
        return "safe" if self.complete else "unknown"

    def note(self, dec: Any, target: "Version", count: int, pos: Optional[str]) -> None:
        """Classify ``count`` records like ``dec`` (the first of them at ``pos``)."""
        for outcome, reason in classify(dec, target):
            k = (outcome, dec.record_type, dec.value_version, reason, bool(dec.tombstone))
            f = self.findings.get(k)
            if f is None:
                f = self.findings[k] = Finding(outcome, dec.record_type, dec.type_name,
                                               dec.value_version, reason, 0, pos,
                                               bool(dec.tombstone))
            f.count += count

    def summary(self) -> List[Finding]:
        order = {"fail": 0, "skip": 1, "lose_fields": 2}
        return sorted(self.findings.values(), key=lambda f: (order[f.outcome], f.record_type,
                                                             f.value_version or 0))


def classify(rec: OffsetsRecord, target: Version) -> List[Tuple[str, str]]:
    """``[(outcome, reason)]`` for one record at the target version (empty: fine)."""
    out: List[Tuple[str, str]] = []
    t = rec.record_type
    since = RECORD_TYPES_SINCE.get(t)
    until = RECORD_TYPES_UNTIL.get(t)
    if since is None or target < since[0] or (until is not None and target >= until):
        known = ("unknown to every release we know" if since is None
                 else f"introduced in {_vs(since[0])}" if target < since[0]
                 else f"dropped in {_vs(until)}")  # type: ignore[arg-type]
        if target < KIP_915:
            out.append(("fail", f"record type {t} is {known}; before 3.5 an unknown type fails the load"))
        else:
            out.append(("skip", f"record type {t} is {known}; skipped (KIP-915), its state is lost"))
        return out
    if target < since[1]:
        note = ("; only with the new group coordinator enabled, the default one skips it"
                if t in JAVA_COORDINATOR_ONLY and target < JAVA_LOADER else "")
        out.append(("fail", f"record type {t} was early access before {_vs(since[1])} "
                            f"with a different layout{note}"))
        return out
    if t in JAVA_COORDINATOR_ONLY and target < JAVA_LOADER:
        out.append(("skip", f"record type {t} is read only by the new group coordinator before 4.0; "
                            "the default one skips it (enable group.coordinator.rebalance.protocols"
                            "=classic,consumer to keep it)"))
        return out
    if rec.tombstone or rec.value_version is None:
        return out
    vv = rec.value_version
    vsince = VALUE_VERSIONS_SINCE.get((t, vv))
    if vsince is None:
        # Newer record types have only value v0; anything else is newer than all we know.
        vsince = since[0] if vv == 0 and (t, 0) not in VALUE_VERSIONS_SINCE else None
    if vsince is None or target < vsince:
        when = f"introduced in {_vs(vsince)}" if vsince else "newer than any known release"
        if target < JAVA_LOADER:
            out.append(("fail", f"value version {vv} is {when}; the loader rejects it"))
        else:
            out.append(("lose_fields", f"value version {vv} is {when}; read with the older layout"))
    if rec.value is not None:
        for path, tag, _ in unknown_tagged_fields(rec.value):
            out.append(("lose_fields", f"unknown tagged field {tag} at {path or 'top level'}"))
        for (tt, tag), tsince in TAGGED_SINCE.items():
            if tt == t and target < tsince and _has_tag(rec, tag):
                out.append(("lose_fields", f"tagged field {tag} added in {_vs(tsince)}"))
    return out


def _has_tag(rec: OffsetsRecord, tag: int) -> bool:
    """Whether the record's value carries known tagged field ``tag`` on the wire
    (the top-level tagged section of a flexible value)."""
    import kcodec
    v = rec.value or {}
    info_name = None
    try:
        from .records import record_types
        info_name = record_types()[rec.record_type].value
        prog = kcodec.program(info_name, rec.value_version, newer="latest")  # type: ignore[arg-type]
    except Exception:
        return False
    for f in getattr(prog.top, "tagged", []) or []:
        if getattr(f, "tag", None) == tag:
            name = getattr(f, "key", None) or getattr(f, "name", None)
            default = getattr(f, "default", None)
            return name in v and v[name] != default
    return False


def check(records: Iterable[Tuple[Any, Any, Optional[OffsetsRecord]]], to: str) -> DowngradeReport:
    """Check ``(batch, record, decoded)`` triples (see ``iter_decoded``) against ``to``."""
    target = parse_target(to)
    rep = DowngradeReport(to)
    for batch, rec, dec in records:
        if batch is not None and batch.error is not None:
            if rec is None or rec is batch.records[0]:
                rep.errors.append(str(batch.error))
            continue          # a corrupt batch's records are not trusted
        if dec is None:
            continue
        rep.records += 1
        pos = f"{batch.file}@offset {rec.offset}" if batch is not None and rec is not None else None
        rep.note(dec, target, 1, pos)
    return rep


def check_columns(chunks: Iterable[Dict[str, Any]], to: str) -> DowngradeReport:
    """:func:`check` over :func:`kcodec.offsets.columns.iter_offset_columns` chunks: offset
    commits are classified once per (key type, value version, tombstone) group, the rest
    record by record.  Same report as :func:`check`."""
    import numpy as np
    from .records import OffsetsRecord as _OR
    target = parse_target(to)
    rep = DowngradeReport(to)

    for cols in chunks:
        rep.errors.extend(str(e) for e in cols["errors"])
        kind = cols["kind"]
        offs = cols["offset"]
        commits = np.flatnonzero(kind <= 1)
        if len(commits):
            kt = cols["key_type"][commits].astype(np.int64)
            vv = np.where(kind[commits] == 1, -1, cols["value_version"][commits]).astype(np.int64)
            combo = (kt << 20) | (vv & 0xFFFFF)
            uniq, first, counts = np.unique(combo, return_index=True, return_counts=True)
            for u, fi, c in zip(uniq.tolist(), first.tolist(), counts.tolist()):
                t, v = u >> 20, u & 0xFFFFF
                tomb = v == 0xFFFFF
                dec = _OR(t, "OffsetCommit", {}, None if tomb else v, None if tomb else {}, tomb,
                          False, False, Writer().int16(t).getvalue(), None, None, None)
                rep.note(dec, target, c, f"{cols['file']}@offset {int(offs[commits[fi]])}")
            rep.records += len(commits)
        for i, dec in cols["other"]:
            rep.records += 1
            rep.note(dec, target, 1, f"{cols['file']}@offset {int(offs[i])}")
    return rep
