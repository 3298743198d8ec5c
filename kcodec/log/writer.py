"""Write record batches (magic 2) as Kafka's brokers lay them out, and the legacy message
sets (magic 0/1) of Kafka before 0.11: for tests, fixtures and the benchmark generator."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence, Tuple

from ..framing import Writer
from . import _impl
from .compression import compress
from .control import control_key, transaction_marker

__all__ = ["encode_batch", "encode_control_batch", "encode_message_set"]


def _record(i: int, ts_delta: int, key: Optional[bytes], value: Optional[bytes],
            headers: Sequence[Tuple[str, Optional[bytes]]]) -> bytes:
    """One ``DefaultRecord`` body (without its length)."""
    w = Writer().int8(0, "attributes").varlong(ts_delta, "timestampDelta").varint(i, "offsetDelta")
    for x, path in ((key, "key"), (value, "value")):
        if x is None:
            w.varint(-1, path)
        else:
            w.varint(len(x), path).raw(x)
    w.varint(len(headers), "headers")
    for hk, hv in headers:
        kb = hk.encode()
        w.varint(len(kb), "headerKey").raw(kb)
        if hv is None:
            w.varint(-1, "headerValue")
        else:
            w.varint(len(hv), "headerValue").raw(hv)
    return w.getvalue()


def encode_batch(records: Iterable[Tuple[Optional[bytes], Optional[bytes]]] | Iterable[Any], *,
                 base_offset: int = 0, base_timestamp: int = 0, partition_leader_epoch: int = 0,
                 compression: int = 0, transactional: bool = False, control: bool = False,
                 producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                 log_append_time: bool = False, timestamps: Optional[Sequence[int]] = None,
                 headers: Optional[Sequence[Sequence[Tuple[str, Optional[bytes]]]]] = None) -> bytes:
    """Encode one record batch (magic 2) holding ``records`` = ``[(key, value), ...]``.

    Used for tests and the benchmark generator; Kafka's brokers write the same layout.
    """
    recs = list(records)
    ts = list(timestamps) if timestamps is not None else [base_timestamp] * len(recs)
    body = Writer()
    for i, (k, v) in enumerate(recs):
        rec = _record(i, ts[i] - base_timestamp, k, v, headers[i] if headers is not None else ())
        body.varint(len(rec), "length").raw(rec)
    attrs = compression | (0x08 if log_append_time else 0) | (0x10 if transactional else 0) \
        | (0x20 if control else 0)
    # everything the CRC covers: attributes to the end
    tail = (Writer().int16(attrs, "attributes").int32(max(len(recs) - 1, 0), "lastOffsetDelta")
            .int64(base_timestamp, "baseTimestamp")
            .int64(max(ts) if ts else base_timestamp, "maxTimestamp")
            .int64(producer_id, "producerId").int16(producer_epoch, "producerEpoch")
            .int32(base_sequence, "baseSequence").int32(len(recs), "recordCount")
            .raw(compress(compression, body.getvalue())).getvalue())
    return (Writer().int64(base_offset, "baseOffset").int32(len(tail) + 9, "batchLength")
            .int32(partition_leader_epoch, "partitionLeaderEpoch").int8(2, "magic")
            .uint32(_impl.records.crc32c(tail), "crc").raw(tail).getvalue())


def encode_control_batch(commit: bool, *, base_offset: int, producer_id: int, producer_epoch: int,
                         coordinator_epoch: int = 0, timestamp: int = 0,
                         partition_leader_epoch: int = 0) -> bytes:
    """A transaction marker batch (COMMIT or ABORT) as the broker writes it."""
    return encode_batch([(control_key(1 if commit else 0), transaction_marker(coordinator_epoch))],
                        base_offset=base_offset, base_timestamp=timestamp,
                        partition_leader_epoch=partition_leader_epoch, transactional=True,
                        control=True, producer_id=producer_id, producer_epoch=producer_epoch)


# --------------------------------------------------------------------------- legacy (magic 0/1)

def _legacy_entry(offset: int, magic: int, attributes: int, timestamp: int,
                  key: Optional[bytes], value: Optional[bytes]) -> bytes:
    """One message set entry: offset, size, then the message (crc, magic, attributes,
    [timestamp], key, value); the CRC-32 covers magic to the end."""
    w = Writer().int8(magic, "magic").int8(attributes, "attributes")
    if magic == 1:
        w.int64(timestamp, "timestamp")
    for x, path in ((key, "key"), (value, "value")):
        if x is None:
            w.int32(-1, path)
        else:
            w.int32(len(x), path).raw(x)
    body = w.getvalue()
    return (Writer().int64(offset, "offset").int32(len(body) + 4, "size")
            .uint32(_impl.records.crc32(body), "crc").raw(body).getvalue())


def _xxh32_hc(data: bytes) -> int:
    from .reader import _xxh32_short
    return (_xxh32_short(data) >> 8) & 0xFF


def _kafka_lz4(data: bytes, broken_checksum: bool) -> bytes:
    """An LZ4 frame as Kafka's own block output stream writes it: FLG 0x60 (version 1,
    independent blocks, no checksums, no content size), BD 0x40 (64 KiB blocks), blocks
    stored raw when they do not shrink, an end mark.  Before 0.10 the descriptor checksum
    covered the frame magic too (KAFKA-3160); magic 0 messages keep that."""
    import cramjam
    head = b"\x04\x22\x4d\x18\x60\x40"
    out = bytearray(head + bytes([_xxh32_hc(head if broken_checksum else head[4:])]))
    for i in range(0, len(data), 64 << 10):
        block = data[i:i + (64 << 10)]
        c = bytes(cramjam.lz4.compress_block(block, store_size=False))
        if len(c) >= len(block):
            out += (len(block) | 0x80000000).to_bytes(4, "little") + block
        else:
            out += len(c).to_bytes(4, "little") + c
    out += bytes(4)
    return bytes(out)


def encode_message_set(records: Iterable[Tuple[Optional[bytes], Optional[bytes]]], *,
                       magic: int = 1, base_offset: int = 0, compression: int = 0,
                       timestamps: Optional[Sequence[int]] = None,
                       log_append_time: Optional[int] = None) -> bytes:
    """Encode ``records`` = ``[(key, value), ...]`` as a legacy message set (``magic`` 0 or
    1), as brokers before Kafka 0.11 wrote it.

    Uncompressed: one entry per record, offsets from ``base_offset``.  ``compression`` 1-3
    (gzip, snappy, lz4): one wrapper entry whose value is the compressed inner message set;
    inner offsets are absolute for magic 0 and relative (0, 1, ...) for magic 1, the wrapper
    taking the last record's offset.  ``timestamps`` (magic 1) stamp the records (default
    -1); a wrapper carries the largest.  ``log_append_time`` (magic 1) sets the timestamp
    type to LogAppendTime with that time, on each entry or on the wrapper.
    """
    if magic not in (0, 1):
        raise ValueError("a legacy message set has magic 0 or 1")
    if compression not in (0, 1, 2, 3):
        raise ValueError("legacy messages are uncompressed, gzip, snappy or lz4 (0-3)")
    recs = list(records)
    if not recs:
        return b""
    ts = list(timestamps) if timestamps is not None else [-1] * len(recs)
    lat = 0x08 if (magic == 1 and log_append_time is not None) else 0
    if compression == 0:
        return b"".join(_legacy_entry(base_offset + i, magic, lat,
                                      log_append_time if lat else ts[i], k, v)
                        for i, (k, v) in enumerate(recs))
    inner = b"".join(_legacy_entry(i if magic == 1 else base_offset + i, magic, 0, ts[i], k, v)
                     for i, (k, v) in enumerate(recs))
    if compression == 3:
        packed = _kafka_lz4(inner, broken_checksum=magic == 0)
    else:
        packed = compress(compression, inner)
    wrapper_ts = log_append_time if lat else max(ts)
    return _legacy_entry(base_offset + len(recs) - 1, magic, compression | lat, wrapper_ts, None,
                         packed)
