"""Write record batches (magic 2) as Kafka's brokers lay them out: for tests, fixtures and
the benchmark generator."""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence, Tuple

from ..framing import Writer
from . import _impl
from .compression import compress
from .control import control_key, transaction_marker

__all__ = ["encode_batch", "encode_control_batch"]


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
