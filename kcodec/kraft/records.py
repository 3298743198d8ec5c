"""``__cluster_metadata`` records: the frame, every metadata record type, KRaft control
records, and reading them from log segments and ``.checkpoint`` snapshots.

A metadata record's value is Kafka's MetadataRecordSerde frame: unsigned varints frame
version (1), API key (the record type), record version, then the record body.  Control
batches carry LeaderChange, SnapshotHeader/Footer, KRaftVersion and Voters records (key:
int16 version + int16 type; value: the message at version 0, which carries its own
``version`` field).

Reading never stops at a record it cannot decode: a type it does not know, a version newer
than the specs (decoded with the newest layout, as Kafka does), or malformed bytes are
returned with ``status`` saying so and the raw bytes kept.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import kcodec
from kcodec._spec import SCHEMA_DIR
from kcodec.errors import CodecError, DecodeError, EncodeError, UnknownMessageError, as_bytes
from kcodec.framing import KraftRecordFrame, Reader, Writer, read_framed

# (kcodec.log, and NumPy with it, only where a function reads a log: ``kraft dump`` of a
# clean log uses this module's tables without them)

__all__ = [
    "METADATA_FRAME", "RECORD_TYPES", "CONTROL_MESSAGES", "MetadataRecord", "LogEntry",
    "record_type_name", "spec_name", "read_record", "encode_record", "iter_log",
    "dump_lines", "to_json",
]


class _MetadataRecordFrame(KraftRecordFrame):
    """The core KRaft frame, with MetadataRecordSerde's own words for frame version 0
    (KRaft's 2.8 preview)."""
    name = "metadata-record"

    def read(self, r: Reader):  # noqa: ANN201 - FrameHeader
        if r.pos < r.end and r.buf[r.pos] == 0:
            raise r.fail("Could not deserialize metadata record with frame version 0. Note that "
                         "upgrades from the preview release of KRaft in 2.8 to newer versions are "
                         "not supported.", "frameVersion")
        return super().read(r)


METADATA_FRAME = _MetadataRecordFrame()

#: API key -> spec name of every ``metadata`` record of the shipped 4.1.1 specs.
RECORD_TYPES: Dict[int, str] = {
    s.api_key: s.name
    for s in (kcodec.spec(f[:-5]) for f in sorted(os.listdir(os.path.join(SCHEMA_DIR, "metadata")))
              if f.endswith(".json"))      # (that folder's specs only: reading all costs more)
    if s.type == "metadata" and s.folder == "metadata" and s.api_key is not None
}

#: control record type -> (the dump's label, spec name)
CONTROL_MESSAGES: Dict[int, Tuple[str, str]] = {
    2: ("LeaderChange:", "LeaderChangeMessage"),
    3: ("SnapshotHeader", "SnapshotHeaderRecord"),
    4: ("SnapshotFooter", "SnapshotFooterRecord"),
    5: ("KRaftVersion", "KRaftVersionRecord"),
    6: ("KRaftVoters", "VotersRecord"),
}

_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def record_type_name(api_key: int) -> str:
    """Kafka's ``MetadataRecordType`` name of an API key (``FEATURE_LEVEL_RECORD``)."""
    name = RECORD_TYPES.get(api_key)
    if name is None:
        return f"UNKNOWN_{api_key}"
    return _SNAKE.sub("_", name).upper()


def spec_name(api_key: int) -> Optional[str]:
    """The spec of a metadata record type, or None when the specs do not have it."""
    return RECORD_TYPES.get(api_key)


class MetadataRecord(NamedTuple):
    """One decoded metadata record value.

    ``status``: ``ok``; ``newer_version`` (decoded with the spec's newest layout);
    ``unknown_type`` (not decoded); ``error`` (bytes that do not decode, ``error`` says why).
    """
    api_key: Optional[int]
    type: Optional[str]          # spec name (``FeatureLevelRecord``), None when unknown
    version: Optional[int]
    value: Optional[dict]
    raw: bytes                   # the whole framed value
    status: str
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "newer_version")


def read_record(data: Any) -> MetadataRecord:
    """Decode one framed metadata record value; never raises on bad bytes."""
    raw = as_bytes(data, "data")
    try:
        f = read_framed(raw, METADATA_FRAME, lambda h: RECORD_TYPES.get(h.api_key),
                        newer="latest")
    except CodecError as e:
        j = _java_framed(raw)
        if j is not None:
            return j
        return MetadataRecord(None, None, None, None, raw, "error", str(e))
    h = f.header
    if f.message is None:
        j = _java_framed(raw)       # a type past 32 bits or negative, as Kafka reads it
        if j is not None:
            return j
        if not (-0x8000 <= h.api_key <= 0x7FFF and -0x8000 <= h.version <= 0x7FFF):
            # past Short.MAX_VALUE: Kafka refuses the frame ("Value for type was too large.")
            return MetadataRecord(None, None, None, None, raw, "error", kafka_read_error(raw))
        return MetadataRecord(h.api_key, None, h.version, None, raw, "unknown_type",
                              f"Unknown metadata id {h.api_key}")
    return MetadataRecord(h.api_key, f.message, h.version, f.value, raw,
                          "newer_version" if f.newer_than_known else "ok")


def encode_record(record_type: Union[str, int], value: dict, version: int) -> bytes:
    """Frame and encode a metadata record (``record_type``: spec name or API key)."""
    if isinstance(record_type, int):
        name = RECORD_TYPES.get(record_type)
        if name is None:
            raise UnknownMessageError(f"Unknown metadata id {record_type}")
    else:
        name = record_type
    s = kcodec.spec(name)
    if s.type != "metadata" or s.folder != "metadata":
        raise EncodeError(f"{name} is not a metadata record")
    w = Writer()
    METADATA_FRAME.write(w, version, api_key=s.api_key)
    w.raw(kcodec.encode(name, value, version))
    return w.getvalue()


def _read_control(key: Optional[bytes], value: Optional[bytes]) -> Tuple[int, Optional[str], Optional[dict], Optional[str]]:
    """(control type, spec name, value, error) of a control record."""
    if key is None or len(key) < 4:
        return -1, None, None, "control record key shorter than 4 bytes"
    ctype = int.from_bytes(key[2:4], "big", signed=True)
    entry = CONTROL_MESSAGES.get(ctype)
    if entry is None or value is None:
        return ctype, None, None, None
    try:
        d = kcodec.read(entry[1], value, 0, trailing="allow")
        return ctype, entry[1], d.value, None
    except CodecError as e:
        return ctype, entry[1], None, str(e)


class LogEntry(NamedTuple):
    """A record of a metadata log or snapshot with its place in it."""
    file: Optional[str]
    batch: Any                   # the record batch (header fields; see kcodec.log)
    offset: int
    timestamp: int
    control_type: Optional[int]  # set for records of control batches
    control: Optional[dict]      # the decoded control message
    record: Optional[MetadataRecord]   # metadata records (None in control batches)
    key: Optional[bytes]
    value: Optional[bytes]
    headers: list


def iter_log(source: Any, **kwargs: Any) -> Iterator[LogEntry]:
    """Every record of a metadata log segment, snapshot, directory or bytes, in order,
    decoded.  A corrupt batch is one entry, none of its records read (the log reader
    withholds them, see :mod:`kcodec.log`): ``batch.error`` set, ``offset`` its base
    offset, ``record`` a :class:`MetadataRecord` with status ``error`` and the batch's
    error as its message."""
    from kcodec import log
    for batch in log.iter_batches(log.topic_source(source, log.METADATA_TOPIC), **kwargs):
        if batch.error is not None:
            yield LogEntry(batch.file, batch, batch.base_offset, batch.base_timestamp, None, None,
                           MetadataRecord(None, None, None, None, b"", "error",
                                          f"corrupt batch: {batch.error}"),
                           None, None, [])
            continue
        ctrl = (batch.attributes & 0x20) != 0
        for rec in batch.records:
            if ctrl:
                ctype, _name, cval, _err = _read_control(rec.key, rec.value)
                yield LogEntry(batch.file, batch, rec.offset, rec.timestamp, ctype, cval, None,
                               rec.key, rec.value, rec.headers)
            else:
                mr = read_record(rec.value) if rec.value is not None else MetadataRecord(
                    None, None, None, None, b"", "error", "null value")
                yield LogEntry(batch.file, batch, rec.offset, rec.timestamp, None, None, mr,
                               rec.key, rec.value, rec.headers)


# --------------------------------------------------------------------------- JSON / dump

def to_json(name: str, value: dict, version: int) -> str:
    """Kafka's JsonConverter text of a value (Jackson's compact form)."""
    return json.dumps(kcodec.to_kafka_json(name, value, version), separators=(",", ":"),
                      ensure_ascii=False)


_CTRL_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def _jackson(text: str) -> str:
    """json.dumps' text as Jackson writes it: control characters as ``\\u001F`` (upper-case
    hex), the only difference for the values a converter gives (floats aside)."""
    if "\\u00" not in text:
        return text
    return _CTRL_ESCAPE.sub(lambda m: m.group(1) + "\\u00" + m.group(2).upper(), text)


def _short(raw: bytes, pos: int, entity: str) -> Tuple[int, int]:
    """AbstractApiMessageSerde.unsignedIntToShort: Java's readUnsignedVarint (at most 5
    bytes, an int), then the check against Short.MAX_VALUE; MetadataParseException's text."""
    v, shift = 0, 0
    while True:
        if pos >= len(raw) or shift > 28:
            raise ValueError(f"Error while reading {entity}")
        b = raw[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    v = (v & 0xFFFFFFFF) - (1 << 32) if v & 0x80000000 else v & 0xFFFFFFFF
    if v > 0x7FFF:
        raise ValueError(f"Value for {entity} was too large.")
    return (v + 0x8000) % 0x10000 - 0x8000, pos


def _java_framed(raw: bytes) -> Optional[MetadataRecord]:
    """A frame the strict reader refuses but Kafka's MetadataRecordSerde reads: its
    readUnsignedVarint drops what a fifth byte holds past 32 bits (and a negative int passes
    the Short.MAX_VALUE check, then is cut to a short), so such a frame names a record type
    and version as Kafka sees them.  None when Kafka cannot read it either."""
    try:
        fv, pos = _short(raw, 0, "frame version")
        key, pos = _short(raw, pos, "type") if fv == 1 else (None, pos)
        ver, pos = _short(raw, pos, "version") if fv == 1 else (None, pos)
    except ValueError:
        return None
    name = RECORD_TYPES.get(key) if key is not None and ver is not None and ver >= 0 else None
    if name is None:
        return None
    try:
        d = kcodec.read(name, raw, ver, newer="latest", trailing="allow", offset=pos)
    except (CodecError, ValueError):
        return None
    if d.trailing:
        return None
    return MetadataRecord(key, name, ver, d.value, raw, "newer_version" if d.newer_than_known else "ok")


def kafka_read_error(raw: Optional[bytes]) -> str:
    """What Kafka's MetadataRecordSerde says of a value it cannot read (the dump prints it
    after ``Error at OFFSET, skipping.``)."""
    raw = raw or b""
    try:
        fv, pos = _short(raw, 0, "frame version")
        if fv == 0:
            return ("Could not deserialize metadata record with frame version 0. Note that upgrades "
                    "from the preview release of KRaft in 2.8 to newer versions are not supported.")
        if fv != 1:
            return (f"Could not deserialize metadata record due to unknown frame version {fv}"
                    "(only frame version 1 is supported)")
        key, pos = _short(raw, pos, "type")
        ver, pos = _short(raw, pos, "version")
    except ValueError as e:
        return str(e)
    name = RECORD_TYPES.get(key)
    if name is None:
        return f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {key}"
    try:
        d = kcodec.read(name, raw, ver, newer="latest", trailing="allow", offset=pos)
    except (CodecError, ValueError):
        return f"Failed to deserialize record with type {key}"
    if d.trailing:
        return f"Found {len(d.trailing)} byte(s) of garbage after {key}"
    return f"Failed to deserialize record with type {key}"


#: The statuses of a record whose payload decodes (the dump prints its JSON).
DECODED = ("ok", "newer_version")


def _payload(mr: MetadataRecord, offset: int) -> str:
    if mr.status in DECODED:
        data = _jackson(to_json(mr.type, mr.value, mr.version))   # type: ignore[arg-type]
        return ('{"type":"%s","version":%d,"data":%s}'
                % (record_type_name(mr.api_key), mr.version, data))   # type: ignore[arg-type]
    return f"Error at {offset}, skipping. {kafka_read_error(mr.raw)}"


def dump_lines(path: Union[str, "os.PathLike[str]"], *, display_name: Optional[str] = None,
               errors: Optional[List[Any]] = None, salvage: bool = False,
               undecoded: Optional[List[int]] = None) -> Iterator[str]:
    """The lines ``kafka-dump-log.sh --cluster-metadata-decoder --files PATH`` prints for
    one segment or snapshot file (``display_name`` replaces the path in "Dumping ...").
    A corrupt batch's line says ``isvalid: false`` and none of its records follows (damaged
    bytes, see :mod:`kcodec.log`), unless ``salvage``: then the records that could be read
    follow, exactly as Kafka's tool prints them (a forensic view); ``errors``, a list,
    collects each one's :class:`kcodec.log.BatchError`; ``undecoded``, a list, the offset
    of each record whose payload does not decode (``Error at OFFSET, skipping.``)."""
    path = os.fspath(path)
    base = os.path.basename(path)
    yield f"Dumping {display_name if display_name is not None else path}"
    if base.endswith(".log"):
        if base.split(".")[0].isdigit():    # a segment renamed by hand has no base offset to show
            yield f"Log starting offset: {int(base.split('.')[0])}"
    elif base.endswith(".checkpoint"):
        if base == "bootstrap.checkpoint":
            yield "KRaft bootstrap snapshot"
        else:
            m = re.match(r"(\d+)-(\d+)\.checkpoint$", base)
            if m:
                yield f"Snapshot end offset: {int(m.group(1))}, epoch: {int(m.group(2))}"
    valid = 0
    size = os.path.getsize(path)
    from kcodec import log
    from kcodec.log import dump as log_dump
    for batch in log.iter_batches(path, salvage=salvage):
        if batch.error is not None and errors is not None:
            errors.append(batch.error)
        if batch.error is not None and batch.error.reason == "truncated":
            break
        ctrl = (batch.attributes & 0x20) != 0
        yield log_dump.batch_line(batch, position=valid)
        for rec in batch.records:
            line = log_dump.record_line(batch, rec)
            if ctrl:
                line += _control_text(rec)
            else:
                mr = read_record(rec.value) if rec.value is not None else MetadataRecord(
                    None, None, None, None, b"", "error", "null value")
                if undecoded is not None and mr.status not in DECODED:
                    undecoded.append(rec.offset)
                line += " payload: " + _payload(mr, rec.offset)
            yield line
        valid += batch.batch_length + 12
    if size > valid:
        # (Kafka names the file; a display name, such as - for stdin, stands for it)
        yield f"Found {size - valid} invalid bytes at the end of {os.path.basename(display_name or path)}"


def _control_text(rec: Any) -> str:
    from kcodec import log
    ctype, name, value, err = _read_control(rec.key, rec.value)
    if ctype in (0, 1):
        v = rec.value or b""
        epoch = int.from_bytes(v[2:6], "big", signed=True) if len(v) >= 6 else -1
        return f" endTxnMarker: {'COMMIT' if ctype == 1 else 'ABORT'} coordinatorEpoch: {epoch}"
    if name is not None and value is not None:
        label = CONTROL_MESSAGES[ctype][0]
        return f" {label} {_jackson(to_json(name, value, 0))}"
    if err is not None:
        return f" controlType: {log.CONTROL_TYPES.get(ctype, 'UNKNOWN')}({ctype}) error: {err}"
    return f" controlType: {log.CONTROL_TYPES.get(ctype, 'UNKNOWN')}({ctype})"
