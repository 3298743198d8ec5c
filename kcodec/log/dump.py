"""kafka-dump-log's text lines for record batches and records, for any topic's log.

:func:`batch_line` is the line ``kafka-dump-log.sh --files SEGMENT`` prints per batch
(``baseOffset: 0 lastOffset: 1 count: 2 ... crc: 469719597 isvalid: true``) and
:func:`record_line` the ``| offset: ...`` line it prints per record with
``--print-data-log``, before any decoded key/payload, which is the topic's business
(offsets, KRaft).  :func:`chunk_batches` turns a :class:`~kcodec.log.Chunk` of
:func:`~kcodec.log.iter_chunks` into the :class:`~kcodec.log.RecordBatch` objects
:func:`~kcodec.log.iter_batches` would give for it, for readers that go columnar and
fall back to objects where a chunk needs it.
"""
from __future__ import annotations

from typing import Any, List, Optional

from .batch import Record, RecordBatch
from .reader import Chunk, _batch_of

__all__ = ["batch_line", "record_line", "chunk_batch", "chunk_batches"]

_TS_TYPE = ("CreateTime", "LogAppendTime")


def _jbool(v: Any) -> str:
    return "true" if v else "false"


def _jint(v: int) -> int:
    """``v`` as a Java int (32-bit two's complement)."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def _jlong(v: int) -> int:
    """``v`` as a Java long (64-bit two's complement)."""
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def _next_sequence(seq: int, increment: int) -> int:
    """Kafka's DefaultRecordBatch.incrementSequence, in Java's int arithmetic: sequences
    wrap from Integer.MAX_VALUE to 0, not to Integer.MIN_VALUE, and a hostile increment
    (a negative lastOffsetDelta) wraps as Java's does."""
    if seq > _jint(0x7FFFFFFF - increment):
        return _jint(increment - (0x7FFFFFFF - seq) - 1)
    return _jint(seq + increment)


def batch_line(batch: RecordBatch, position: Optional[int] = None) -> str:
    """kafka-dump-log's line for one batch (``position``: what to show as its position;
    default the batch's own).  ``lastSequence`` wraps to 0 past Integer.MAX_VALUE, as Kafka's does.
    A legacy message (magic 0/1) has no v2 header: Kafka's ``printBatchLevel`` shows its
    (last) offset instead, and magic 0 carries no timestamp (``NoTimestampType: -1``)."""
    if batch.magic < 2:
        return ("offset: %d position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d "
                "isvalid: %s" % (
                    _jlong(batch.base_offset + batch.last_offset_delta),
                    batch.position if position is None else position,
                    "NoTimestampType" if batch.magic == 0 else _TS_TYPE[(batch.attributes >> 3) & 1],
                    -1 if batch.magic == 0 else batch.max_timestamp,
                    batch.batch_length + 12, batch.magic, batch.compression_name, batch.crc,
                    _jbool(batch.crc_ok)))
    last_seq = (-1 if batch.base_sequence == -1
                else _next_sequence(batch.base_sequence, batch.last_offset_delta))
    horizon = (f"OptionalLong[{batch.base_timestamp}]" if batch.attributes & 0x40
               else "OptionalLong.empty")
    return ("baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d "
            "producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %s "
            "isControl: %s deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d "
            "compresscodec: %s crc: %d isvalid: %s" % (
                batch.base_offset, _jlong(batch.base_offset + batch.last_offset_delta),
                batch.record_count, batch.base_sequence, last_seq, batch.producer_id,
                batch.producer_epoch, batch.partition_leader_epoch,
                _jbool(batch.attributes & 0x10), _jbool(batch.attributes & 0x20), horizon,
                batch.position if position is None else position,
                _TS_TYPE[(batch.attributes >> 3) & 1], batch.max_timestamp,
                batch.batch_length + 12, batch.magic, batch.compression_name, batch.crc,
                _jbool(batch.crc_ok)))


def record_line(batch: RecordBatch, rec: Record) -> str:
    """kafka-dump-log's ``| offset: ...`` line for one record, up to ``headerKeys``."""
    # DefaultRecord: a sequence only under a base sequence >= 0, incremented by the
    # record's offset delta
    seq = (-1 if batch.base_sequence < 0
           else _next_sequence(batch.base_sequence, _jint(rec.offset - batch.base_offset)))
    return ("| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]" % (
        rec.offset, _TS_TYPE[(batch.attributes >> 3) & 1], rec.timestamp,
        -1 if rec.key is None else len(rec.key), -1 if rec.value is None else len(rec.value),
        seq, ",".join(k for k, _ in rec.headers)))


def chunk_batches(ch: Chunk) -> List[RecordBatch]:
    """The chunk's batches as :func:`~kcodec.log.iter_batches` yields them (corrupt ones
    with ``.error`` and, unless the chunk was read with ``salvage=True``, no records)."""
    return [_batch_of(ch, i, "report") for i in range(len(ch.batches))]


def chunk_batch(ch: Chunk, i: int) -> RecordBatch:
    """Batch ``i`` of the chunk (its row in ``ch.batches``) as a :class:`RecordBatch`."""
    return _batch_of(ch, i, "report")
