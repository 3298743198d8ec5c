"""Decode ``__consumer_offsets`` records (KIP-915 semantics).

A record's key is ``int16 record type`` + the key struct (version 0); its value is
``int16 value version`` + the value struct, or null (a tombstone: delete the key).
The record type selects the key/value schema (the ``apiKey`` of the 4.1.1
``coordinator-key``/``coordinator-value`` specs of the group coordinator).

Forward compatibility, as Kafka's coordinator behaves since KIP-915:

* an unknown record type is returned as an explicit unknown record
  (:attr:`OffsetsRecord.unknown`, with the type id and the raw bytes), never raised;
* a value version newer than the newest known one is decoded with the newest known
  layout and flagged (:attr:`OffsetsRecord.newer_than_known`);
* unknown tagged fields are kept (``"_unknown_tagged_fields"`` in the value dicts).

The subscription/assignment bytes of classic group members
(``GroupMetadataValue.members[].subscription/assignment``) are decoded for protocol type
``consumer`` (consumer protocol: int16 version prefix, then the body at
``min(prefix, 3)``, trailing bytes ignored, as Kafka's ``ConsumerProtocol`` does).
Other protocol types stay bytes until a decoder is registered with
:func:`register_protocol_decoder`.

Record type 0 is the offset-commit key written by Kafka 0.8.2 (same layout as type 1);
its values are read with ``LegacyOffsetCommitValue`` at version 0 and with
``OffsetCommitValue`` at versions 1-4, as Kafka's pre-4.0 loader read them by value version.
"""
from __future__ import annotations

import base64
import struct
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import kcodec
from kcodec.consumer import protocol as consumer_protocol
from kcodec.errors import DecodeError, KcodecError, as_bytes
from kcodec.framing import INT16_VERSION, Reader, read_framed

__all__ = [
    "OffsetsRecord", "Embedded", "decode_key", "decode_record", "record_types",
    "register_protocol_decoder", "protocol_decoder", "to_json", "unknown_tagged_fields",
    "UNKNOWN_TAGS_KEY",
]

UNKNOWN_TAGS_KEY = "_unknown_tagged_fields"
_FOLDER = "group-coordinator"
_I16 = struct.Struct(">h")


class Embedded(NamedTuple):
    """A decoded embedded protocol payload (a classic member's subscription/assignment)."""
    schema: Optional[str]      # e.g. "ConsumerProtocolSubscription"
    version: Optional[int]     # the int16 version prefix
    parsed_version: Optional[int]  # the schema version it was parsed with
    value: Optional[Dict[str, Any]]
    trailing: bytes            # bytes after the body (ignored, as Kafka does)
    error: Optional[str]       # why it could not be decoded (then value is None)


class OffsetsRecord(NamedTuple):
    """One decoded ``__consumer_offsets`` record."""
    record_type: int                 # the key's int16 prefix
    type_name: Optional[str]         # "OffsetCommit", "GroupMetadata", ... (None: unknown)
    key: Optional[Dict[str, Any]]    # decoded key struct (None: unknown type / undecodable)
    value_version: Optional[int]     # None for a tombstone
    value: Optional[Dict[str, Any]]  # None for a tombstone, an unknown type, or an error
    tombstone: bool
    unknown: bool                    # KIP-915: record type this coordinator does not know
    newer_than_known: bool           # value version above the newest known one
    key_bytes: bytes
    value_bytes: Optional[bytes]
    members: Optional[List[Dict[str, Embedded]]]   # GroupMetadataValue: decoded member
                                                  # "subscription"/"assignment"
    error: Optional[str]             # decoding failed (reported, not raised)

    @property
    def group_id(self) -> Optional[str]:
        """The group the record belongs to (every group-coordinator key starts with it)."""
        if not self.key:
            return None
        return self.key.get("group", self.key.get("groupId"))


# --------------------------------------------------------------------------- schemas

class _TypeInfo(NamedTuple):
    name: str          # record type name without Key/Value
    key: str
    value: str
    value_max: int


_TYPES: Optional[Dict[int, _TypeInfo]] = None


def record_types() -> Dict[int, _TypeInfo]:
    """Record type id -> schemas, from the group coordinator's 4.1.1 specs."""
    global _TYPES
    if _TYPES is None:
        out: Dict[int, _TypeInfo] = {}
        # (only the coordinator's folder is parsed: a CLI start-up cost otherwise)
        folder = list(kcodec.specs(_FOLDER))
        values: Dict[int, Any] = {}
        for s in folder:       # by name: the first value spec of a record type, as
            if s.type == "coordinator-value" and s.api_key is not None:   # spec_for_record_type
                values.setdefault(int(s.api_key), s)
        for s in folder:
            if s.type != "coordinator-key" or s.api_key is None or int(s.api_key) not in values:
                continue
            v = values[int(s.api_key)]
            name = s.name[:-3] if s.name.endswith("Key") else s.name
            out[int(s.api_key)] = _TypeInfo(name, s.name, v.name, v.valid_versions.highest)
        _TYPES = out
    return _TYPES


def _value_schema(rtype: int, info: _TypeInfo, version: int) -> str:
    # Type 0 (0.8.2 offset key): versions past the legacy value are OffsetCommitValue.
    if rtype == 0 and version > info.value_max and 1 in record_types():
        oc = record_types()[1]
        if version <= oc.value_max:
            return oc.value
    return info.value


# --------------------------------------------------------------------------- embedded protocols

class ProtocolDecoder(NamedTuple):
    """Decoders of one classic protocol type's member metadata (bytes -> Embedded)."""
    subscription: Callable[[bytes], Embedded]
    assignment: Callable[[bytes], Embedded]


def _consumer_protocol(schema: str, read: Callable[[bytes], Any]) -> Callable[[bytes], Embedded]:
    # consumer.protocol's readers: Kafka's ConsumerProtocol rules (newer prefixes read
    # with the newest layout, trailing bytes ignored); failures are reported, not raised
    def dec(data: bytes) -> Embedded:
        if data is None:
            return Embedded(schema, None, None, None, b"", "null bytes")
        try:
            raw = read(data)
        except KcodecError as e:
            return Embedded(schema, None, None, None, b"", str(e))
        # (tuple.__new__: no Python-level __new__ for the many members of a record)
        return _tuple(Embedded, (raw.schema, raw.version, raw.parsed_version, raw.value,
                                 raw.trailing, None))
    return dec


_tuple = tuple.__new__


# keyed by (protocol type, protocol name); name None applies to every protocol of the type
_PROTOCOLS: Dict[Tuple[str, Optional[str]], ProtocolDecoder] = {
    ("consumer", None): ProtocolDecoder(
        _consumer_protocol("ConsumerProtocolSubscription", consumer_protocol.read_subscription_raw),
        _consumer_protocol("ConsumerProtocolAssignment", consumer_protocol.read_assignment_raw)),
}



def register_protocol_decoder(protocol_type: str, subscription: Callable[[bytes], Embedded],
                              assignment: Callable[[bytes], Embedded], *,
                              protocol_name: Optional[str] = None) -> None:
    """Register decoders for the member metadata of classic protocol type ``protocol_type``
    (e.g. ``"connect"``), or only of its protocol (the group's selected assignor, e.g.
    ``"stream"`` within ``"consumer"``) when ``protocol_name`` is given; that one takes
    precedence over the type's.  They take the raw bytes and return an :class:`Embedded`."""
    _PROTOCOLS[(protocol_type, protocol_name)] = ProtocolDecoder(subscription, assignment)


def protocol_decoder(protocol_type: Optional[str],
                     protocol_name: Optional[str] = None) -> Optional[ProtocolDecoder]:
    """The registered decoder of a protocol type (of its protocol ``protocol_name`` first)."""
    t = protocol_type or ""
    if protocol_name is not None:
        dec = _PROTOCOLS.get((t, protocol_name))
        if dec is not None:
            return dec
    return _PROTOCOLS.get((t, None))


def decode_members(value: Dict[str, Any]) -> Optional[List[Dict[str, Embedded]]]:
    """The decoded member metadata of a decoded ``GroupMetadataValue``: per member its
    ``subscription`` and ``assignment`` as :class:`Embedded`, through the decoder registered
    for the group's protocol type and protocol; None when none is registered."""
    dec = protocol_decoder(value.get("protocolType"), value.get("protocol"))
    if dec is None:
        return None
    sub, asg = dec
    return [{"subscription": sub(m.get("subscription")), "assignment": asg(m.get("assignment"))}
            for m in value.get("members") or []]


# --------------------------------------------------------------------------- decoding

def _record_type(key: Optional[bytes]) -> int:
    """The key's int16 record type (:class:`DecodeError` when the key is too short)."""
    if type(key) is bytes and len(key) >= 2:
        return _I16.unpack_from(key)[0]
    return Reader(key or b"", message="CoordinatorRecordKey").int16("type")


def _peek_version(value: Optional[bytes]) -> Optional[int]:
    """The value's int16 version, or None (a tombstone or fewer than two bytes)."""
    return None if value is None or len(value) < 2 else Reader(value).int16()


def decode_key(key: bytes) -> Tuple[int, Optional[_TypeInfo], Optional[Dict[str, Any]]]:
    """``(record_type, type info or None if unknown, key dict or None if unknown)``.

    Raises :class:`DecodeError` when the key is too short to hold a record type or its
    body does not decode.
    """
    rtype = _record_type(key)
    info = record_types().get(rtype)
    if info is None:
        return rtype, None, None
    # Keys are written at version 0 of their spec; trailing bytes are an error.
    return rtype, info, kcodec.read(info.key, key, 0, offset=2).value


def decode_record(key: bytes, value: Optional[bytes], *, errors: str = "raise") -> OffsetsRecord:
    """Decode one ``__consumer_offsets`` key/value pair (value None = tombstone).

    ``key``/``value`` are the record's bytes as a Kafka consumer (or Spark's Kafka
    source) delivers them.  Unknown record types never raise.  Malformed bytes raise
    :class:`DecodeError` with ``errors="raise"``; with ``errors="report"`` the record
    comes back with :attr:`OffsetsRecord.error` set.
    """
    key = as_bytes(key, "key") if key is not None else key
    value = as_bytes(value, "value") if value is not None else None
    tomb = value is None
    try:
        rtype, info, k = decode_key(key)
    except DecodeError as e:
        if errors == "raise":
            raise
        try:
            rt = _record_type(key)
        except DecodeError:
            rt = -1
        return OffsetsRecord(rt, None, None, None, None, tomb, False, False, key or b"", value,
                             None, f"key: {e}")
    if info is None:
        return OffsetsRecord(rtype, None, None, _peek_version(value), None, tomb, True, False, key,
                             value, None, None)
    if tomb:
        return OffsetsRecord(rtype, info.name, k, None, None, True, False, False, key, None, None, None)
    try:
        # KIP-915: a value version above the newest known is read with the newest layout
        f = read_framed(value, INT16_VERSION, lambda h: _value_schema(rtype, info, h.version),
                        newer="latest")
    except DecodeError as e:
        if errors == "raise":
            raise
        return OffsetsRecord(rtype, info.name, k, _peek_version(value), None, False, False, False,
                             key, value, None, f"value: {e}")
    members = decode_members(f.value) if info.value == "GroupMetadataValue" else None  # type: ignore[arg-type]
    return _tuple(OffsetsRecord, (rtype, info.name, k, f.version, f.value, False, False,
                                  f.newer_than_known, key, value, members, None))


# --------------------------------------------------------------------------- JSON

def _b64(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else base64.b64encode(b).decode("ascii")


_CONTAINERS = (dict, list)


def _any_unknown_tags(value: Any) -> bool:
    # the usual answer is no: find it without building paths (every record dumped asks)
    todo = [value]
    pop, push = todo.pop, todo.append
    while todo:
        v = pop()
        if isinstance(v, dict):
            if v.get(UNKNOWN_TAGS_KEY):
                return True
            items: Any = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        for x in items:
            if isinstance(x, _CONTAINERS):
                push(x)
    return False


def unknown_tagged_fields(value: Any, path: str = "") -> List[Tuple[str, int, bytes]]:
    """Every unknown tagged field in a decoded value: ``(path, tag, payload)``."""
    if not path and not _any_unknown_tags(value):
        return []
    out: List[Tuple[str, int, bytes]] = []
    if isinstance(value, dict):
        for tag, data in value.get(UNKNOWN_TAGS_KEY) or []:
            out.append((path, int(tag), bytes(data)))
        for k, v in value.items():
            if k != UNKNOWN_TAGS_KEY and isinstance(v, (dict, list)):
                out += unknown_tagged_fields(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                out += unknown_tagged_fields(v, f"{path}[{i}]")
    return out


def _embedded_json(e: Embedded, raw: Optional[bytes]) -> Any:
    if e.value is None or e.schema is None:
        return _b64(raw)   # as kafka-dump-log: keep the bytes when they do not decode
    return kcodec.to_kafka_json(e.schema, e.value, e.parsed_version)  # type: ignore[arg-type]


def to_json(rec: OffsetsRecord) -> Dict[str, Any]:
    """The record as kafka-dump-log's offsets decoder shows it (``key``: ``{"type", "data"}``,
    ``payload``: ``{"version", "data"}`` or None for a tombstone; Kafka's JSON conventions)
    plus what it leaves out: ``type_name``, ``unknown``, ``newer_than_known``,
    ``unknown_tagged_fields`` and ``error``."""
    out: Dict[str, Any] = {"type_name": rec.type_name}
    if rec.key is not None and rec.type_name is not None:
        info = record_types()[rec.record_type]
        out["key"] = {"type": str(rec.record_type), "data": kcodec.to_kafka_json(info.key, rec.key, 0)}
    else:
        out["key"] = {"type": str(rec.record_type), "raw": _b64(rec.key_bytes)}
    if rec.tombstone:
        out["payload"] = None
    elif rec.value is not None:
        schema = _value_schema(rec.record_type, record_types()[rec.record_type], rec.value_version)  # type: ignore[arg-type]
        data = kcodec.to_kafka_json(schema, rec.value, rec.value_version)  # type: ignore[arg-type]
        if rec.members is not None:
            for m, emb, raw in zip(data.get("members") or [], rec.members, rec.value.get("members") or []):
                m["subscription"] = _embedded_json(emb["subscription"], raw.get("subscription"))
                m["assignment"] = _embedded_json(emb["assignment"], raw.get("assignment"))
        out["payload"] = {"version": str(rec.value_version), "data": data}
        utf = unknown_tagged_fields(rec.value)
        if utf:
            out["unknown_tagged_fields"] = [{"path": p, "tag": t, "data": _b64(d)} for p, t, d in utf]
    else:
        out["payload"] = {"version": None if rec.value_version is None else str(rec.value_version),
                          "raw": _b64(rec.value_bytes)}
    if rec.unknown:
        out["unknown"] = True
    if rec.newer_than_known:
        out["newer_than_known"] = True
    if rec.error:
        out["error"] = rec.error
    return out


def iter_decoded(source: Any, **kwargs: Any) -> Iterator[Tuple[Any, Any, Optional[OffsetsRecord]]]:
    """``(batch, record, decoded)`` for every record of a log (see :mod:`kcodec.log`);
    ``decoded`` is None for control records.  A corrupt batch is one ``(batch, None, None)``
    with ``batch.error`` set (none of its records is read); undecodable records carry
    ``error``."""
    from kcodec import log as _recs
    for batch in _recs.iter_batches(_recs.topic_source(source, _recs.OFFSETS_TOPIC), **kwargs):
        if not batch.records:
            yield batch, None, None
            continue
        for rec in batch.records:
            if batch.is_control:
                yield batch, rec, None
            else:
                yield batch, rec, decode_record(rec.key, rec.value, errors="report")  # type: ignore[arg-type]
