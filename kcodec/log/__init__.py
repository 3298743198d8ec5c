"""Read and write Kafka log segments: record batches (format v2) and their records, and
the legacy message sets (magic 0/1, before Kafka 0.11) read into the same rows.

Sources are a segment file (``00000000000000000000.log``), a snapshot
(``*.checkpoint``, the same batch format), a directory of those (searched
recursively, partitions in numeric order, segments by base offset), raw bytes, a
binary file object, or a list of any of these::

    >>> from kcodec import log
    >>> for batch in log.iter_batches("/var/kafka/__consumer_offsets-0"):
    ...     if batch.error:
    ...         print("corrupt:", batch.error)
    ...     for rec in batch.records:
    ...         ...

Batches are split and CRC-32C-checked in C (``csrc/kc_batch.c`` through
:mod:`kcodec.log._records`; :mod:`kcodec.log._records_py` is its pure-Python twin);
compressed batches (gzip, snappy incl. the xerial framing of Kafka's Java client, lz4
frame, zstd) are decompressed with ``cramjam`` and their records parsed in C as well.
Files are read in fixed-size chunks, so memory stays flat however long the log is.
:func:`iter_chunks` hands out the scanner's arrays per chunk for columnar readers.

A corrupt batch (bad CRC, impossible length, unknown magic or compression, records
that do not parse or are fewer or more than its header says, a decompression failure
or bomb, a log cut in the middle of a batch) is never dropped silently and never
read: it is yielded with :attr:`RecordBatch.error` set (file, position, reason) and
no records, in ``Chunk.errors`` / the ``errors`` list of the columnar readers, and
reading goes on with the next readable batch.  No reader hands out a record of a
failed batch, on either engine; only a forensic tool that passes ``salvage=True``
gets the records that could be read from one, each flagged (its batch's ``.error``,
or the ``damaged`` column).  ``errors="raise"`` raises
:class:`~kcodec.errors.CorruptRecordError` instead.

Modules: :mod:`~kcodec.log.batch` (the data model), :mod:`~kcodec.log.reader`
(chunked scanning), :mod:`~kcodec.log.compression`, :mod:`~kcodec.log.control`
(control records), :mod:`~kcodec.log.writer` (encoding batches).
"""
from __future__ import annotations

from typing import Any, List, Optional

from . import _impl
from ._dtypes import BATCH_DTYPE, RECORD_DTYPE
from ._impl import NATIVE
from .batch import COMPRESSION_NAMES, BatchError, Record, RecordBatch, Source
from .compression import DEFAULT_MAX_INFLATED, compress, decompress
from .control import CONTROL_TYPES, ControlRecord, parse_control_record
from .reader import (DEFAULT_CHUNK, DEFAULT_MAX_BATCH, METADATA_TOPIC, OFFSETS_TOPIC, PARTITION_DIR, Chunk,
                     Limits, LogListing, iter_batches, iter_chunks, iter_columns, iter_records,
                     left_out_by_topic, list_log_files, log_files, read_columns, topic_source)
from .writer import encode_batch, encode_control_batch, encode_message_set


def slices(buffer: Any, positions: Any, lengths: Any) -> List[Optional[bytes]]:
    """The byte ranges ``buffer[p:p + n]`` of a chunk's records (``n < 0``: None), e.g. the
    keys or values of :attr:`Chunk.records` rows, as bytes: the scanner's gatherer."""
    return _impl.records.slices(buffer, positions, lengths)

__all__ = [
    "Record", "RecordBatch", "BatchError", "ControlRecord", "Source", "Chunk",
    "iter_batches", "iter_records", "iter_columns", "read_columns", "iter_chunks", "log_files",
    "list_log_files", "left_out_by_topic", "LogListing", "PARTITION_DIR", "slices", "topic_source",
    "OFFSETS_TOPIC", "METADATA_TOPIC",
    "parse_control_record", "decompress", "compress", "encode_batch", "encode_control_batch",
    "encode_message_set",
    "BATCH_DTYPE", "RECORD_DTYPE", "COMPRESSION_NAMES", "CONTROL_TYPES", "DEFAULT_CHUNK", "DEFAULT_MAX_BATCH", "DEFAULT_MAX_INFLATED", "Limits", "NATIVE",
]
