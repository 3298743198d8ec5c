"""Control records: the records of a control batch (``attributes & 0x20``).

Their key is Kafka's ``ControlRecordType`` header (int16 version, int16 type); COMMIT and
ABORT markers carry an ``EndTransactionMarker`` value (int16 version, int32
coordinatorEpoch).  Both are read with :class:`kcodec.framing.Reader`."""
from __future__ import annotations

from typing import NamedTuple, Optional

from ..errors import CorruptRecordError, DecodeError
from ..framing import Reader, Writer
from .batch import Record

__all__ = ["ControlRecord", "parse_control_record", "control_key", "transaction_marker",
           "CONTROL_TYPES"]

# ControlRecordType (org.apache.kafka.common.record.ControlRecordType)
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
                 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


class ControlRecord(NamedTuple):
    """A control record's key (version, type) and, for COMMIT/ABORT, the marker value."""
    version: int
    type: int
    type_name: str
    value_version: Optional[int]
    coordinator_epoch: Optional[int]


def parse_control_record(record: Record) -> ControlRecord:
    """Decode the key (int16 version, int16 type) and, for transaction markers, the
    value (int16 version, int32 coordinatorEpoch) of a record of a control batch."""
    r = Reader(record.key or b"", message="ControlRecordKey")
    try:
        version = r.int16("version")
        ctype = r.int16("type")
    except DecodeError as e:
        raise CorruptRecordError(f"control record at offset {record.offset}: {e.reason}",
                                 path="key." + e.path, offset=e.offset) from None
    vv = ce = None
    if ctype in (0, 1) and record.value is not None and len(record.value) >= 6:
        v = Reader(record.value)
        vv, ce = v.int16(), v.int32()
    return ControlRecord(version, ctype, CONTROL_TYPES.get(ctype, "UNKNOWN"), vv, ce)


def control_key(ctype: int, version: int = 0) -> bytes:
    """The key of a control record of type ``ctype`` (see :data:`CONTROL_TYPES`)."""
    return Writer().int16(version, "version").int16(ctype, "type").getvalue()


def transaction_marker(coordinator_epoch: int, version: int = 0) -> bytes:
    """The value of a COMMIT/ABORT control record (Kafka's ``EndTransactionMarker``)."""
    return Writer().int16(version, "version").int32(coordinator_epoch, "coordinatorEpoch").getvalue()
