"""Downgrade check (KIP-915): what would a coordinator of an older Kafka do with this log?

For every record the check asks whether a group coordinator of the target version

* **skips** it: the record type is unknown to it and it ignores unknown types (Kafka
  3.5+, KIP-915; the state it carried is lost);
* **fails** to load the partition: an unknown record type before 3.5, a value version
  newer than it knows before 4.0 (the Scala loader checks the version range), or a
  record type it knew only as early access with a different layout;
* **loses fields**: it decodes the record but cannot see some of its data (tagged
  fields added after it, unknown tagged fields, or a newer value version read with its
  older layout from 4.0 on, where the Java loader decodes any version).

History the check is based on (Kafka releases, from the KIPs and the schemas' history):

=====  ==================================================================  ============
type   record (key/value)                                                  first known
=====  ==================================================================  ============
0      offset commit, key v0 (0.8.2 layout)                                0.8.2
1      OffsetCommitKey / OffsetCommitValue                                 0.9.0
2      GroupMetadataKey / GroupMetadataValue                               0.9.0
3-8    consumer group (KIP-848): metadata, partition metadata, member,     3.7.0 early access,
       target assignment metadata/member, current member assignment        layouts final in 4.0.0
9-14   share group (KIP-932): partition metadata, member, metadata,        4.0.0 early access,
       target assignment metadata/member, current member assignment        layouts of 4.1.0 differ
15     ShareGroupStatePartitionMetadata                                    4.1.0
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
           "RECORD_TYPES_SINCE", "VALUE_VERSIONS_SINCE", "TAGGED_SINCE"]

Version = Tuple[int, int, int]


def parse_version(s: str) -> Version:
    """``"3.9"`` / ``"3.9.1"`` / ``"0.10.1"`` / ``"3.7-IV4"`` -> the release as a comparable
    tuple (a metadata.version name gives its release line; see :mod:`kcodec.versions`)."""
    return _versions.parse_version(s).release


# record type -> (first release that knows it, first release whose layout matches 4.1)
RECORD_TYPES_SINCE: Dict[int, Tuple[Version, Version]] = {
    0: ((0, 8, 2), (0, 8, 2)),
    1: ((0, 9, 0), (0, 9, 0)),
    2: ((0, 9, 0), (0, 9, 0)),
    3: ((3, 7, 0), (4, 0, 0)), 4: ((3, 7, 0), (4, 0, 0)), 5: ((3, 7, 0), (4, 0, 0)),
    6: ((3, 7, 0), (4, 0, 0)), 7: ((3, 7, 0), (4, 0, 0)), 8: ((3, 7, 0), (4, 0, 0)),
    9: ((4, 0, 0), (4, 0, 0)),
    10: ((4, 0, 0), (4, 1, 0)), 11: ((4, 0, 0), (4, 1, 0)), 12: ((4, 0, 0), (4, 1, 0)),
    13: ((4, 0, 0), (4, 1, 0)), 14: ((4, 0, 0), (4, 1, 0)),
    15: ((4, 1, 0), (4, 1, 0)),
    16: ((4, 0, 0), (4, 0, 0)),
    17: ((4, 1, 0), (4, 1, 0)), 18: ((4, 1, 0), (4, 1, 0)), 19: ((4, 1, 0), (4, 1, 0)),
    20: ((4, 1, 0), (4, 1, 0)), 21: ((4, 1, 0), (4, 1, 0)), 22: ((4, 1, 0), (4, 1, 0)),
    23: ((4, 1, 0), (4, 1, 0)),
}

# (record type, value version) -> first release that reads it
VALUE_VERSIONS_SINCE: Dict[Tuple[int, int], Version] = {
    (0, 0): (0, 8, 2), (0, 1): (0, 9, 0), (0, 2): (2, 1, 0), (0, 3): (2, 1, 0), (0, 4): (3, 5, 0),
    (1, 0): (0, 9, 0), (1, 1): (0, 9, 0), (1, 2): (2, 1, 0), (1, 3): (2, 1, 0), (1, 4): (3, 5, 0),
    (2, 0): (0, 9, 0), (2, 1): (0, 10, 1), (2, 2): (2, 1, 0), (2, 3): (2, 3, 0), (2, 4): (3, 5, 0),
}

# (record type, tag) -> first release that knows the tagged field
TAGGED_SINCE: Dict[Tuple[int, int], Version] = {
    (1, 0): (4, 1, 0),
    (3, 0): (4, 1, 0),
    (5, 0): (3, 8, 0),
}

KIP_915 = (3, 5, 0)          # unknown record types skipped from here on
JAVA_LOADER = (4, 0, 0)      # no value-version range check from here on

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


@dataclass
class DowngradeReport:
    target: str
    records: int = 0
    findings: Dict[Tuple[str, int, Optional[int], str], Finding] = field(default_factory=dict)

    @property
    def safe(self) -> bool:
        """No record would make the load fail or be skipped, and no data would be lost."""
        return not self.findings

    @property
    def fails(self) -> bool:
        return any(f.outcome == "fail" for f in self.findings.values())

    def summary(self) -> List[Finding]:
        order = {"fail": 0, "skip": 1, "lose_fields": 2}
        return sorted(self.findings.values(), key=lambda f: (order[f.outcome], f.record_type,
                                                             f.value_version or 0))


def classify(rec: OffsetsRecord, target: Version) -> List[Tuple[str, str]]:
    """``[(outcome, reason)]`` for one record at the target version (empty: fine)."""
    out: List[Tuple[str, str]] = []
    t = rec.record_type
    since = RECORD_TYPES_SINCE.get(t)
    if since is None or target < since[0]:
        known = "unknown to every release we know" if since is None else f"introduced in {_vs(since[0])}"
        if target < KIP_915:
            out.append(("fail", f"record type {t} is {known}; before 3.5 an unknown type fails the load"))
        else:
            out.append(("skip", f"record type {t} is {known}; skipped (KIP-915), its state is lost"))
        return out
    if target < since[1]:
        out.append(("fail", f"record type {t} was early access before {_vs(since[1])} with a different layout"))
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
    target = parse_version(to)
    rep = DowngradeReport(to)
    for batch, rec, dec in records:
        if dec is None:
            continue
        rep.records += 1
        for outcome, reason in classify(dec, target):
            k = (outcome, dec.record_type, dec.value_version, reason)
            f = rep.findings.get(k)
            if f is None:
                pos = f"{batch.file}@offset {rec.offset}" if batch is not None and rec is not None else None
                f = rep.findings[k] = Finding(outcome, dec.record_type, dec.type_name,
                                              dec.value_version, reason, 0, pos)
            f.count += 1
    return rep


def check_columns(chunks: Iterable[Dict[str, Any]], to: str) -> DowngradeReport:
    """:func:`check` over :func:`kcodec.offsets.columns.iter_offset_columns` chunks: offset
    commits are classified once per (key type, value version, tombstone) group, the rest
    record by record.  Same report as :func:`check`."""
    import numpy as np
    from .records import OffsetsRecord as _OR
    target = parse_version(to)
    rep = DowngradeReport(to)

    def note(dec: Any, count: int, pos: str) -> None:
        for outcome, reason in classify(dec, target):
            k = (outcome, dec.record_type, dec.value_version, reason)
            f = rep.findings.get(k)
            if f is None:
                f = rep.findings[k] = Finding(outcome, dec.record_type, dec.type_name,
                                              dec.value_version, reason, 0, pos)
            f.count += count

    for cols in chunks:
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
                note(dec, c, f"{cols['file']}@offset {int(offs[commits[fi]])}")
            rep.records += len(commits)
        for i, dec in cols["other"]:
            rep.records += 1
            note(dec, 1, f"{cols['file']}@offset {int(offs[i])}")
    return rep
