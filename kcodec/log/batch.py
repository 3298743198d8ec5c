"""The record batch data model: what the reader yields (Kafka's ``DefaultRecordBatch`` and
``DefaultRecord``, magic 2) and how a corrupt stretch of a log is reported."""
from __future__ import annotations

import os
from typing import Any, BinaryIO, List, NamedTuple, Optional, Sequence, Tuple, Union

__all__ = ["Record", "RecordBatch", "BatchError", "Source", "COMPRESSION_NAMES"]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO,
               Sequence[Any]]

COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class BatchError(NamedTuple):
    """Why a batch (or a stretch of unreadable bytes) could not be read."""
    file: Optional[str]
    position: int          # byte position in the file (or input) where it starts
    reason: str            # bad_crc, bad_length, bad_magic, bad_records, unknown_compression,
                           # truncated, record_count_mismatch, decompression_failed
    message: str
    skipped_to: int        # position where reading went on

    def __str__(self) -> str:
        where = f"{self.file}@{self.position}" if self.file else f"position {self.position}"
        return f"{where}: {self.reason}: {self.message}"


class Record(NamedTuple):
    """One record of a batch (Kafka's ``DefaultRecord``)."""
    offset: int
    timestamp: int
    key: Optional[bytes]
    value: Optional[bytes]           # None = tombstone
    headers: List[Tuple[str, Optional[bytes]]]
    attributes: int
    size: int                        # the record's length prefix


class RecordBatch(NamedTuple):
    """A record batch header, its records and, when it is corrupt, the error."""
    file: Optional[str]
    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    crc_ok: bool
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    records: List[Record]
    error: Optional[BatchError]

    @property
    def compression(self) -> int:
        return self.attributes & 0x07

    @property
    def compression_name(self) -> str:
        return COMPRESSION_NAMES.get(self.compression, f"unknown({self.compression})")

    @property
    def timestamp_type(self) -> str:
        return "LogAppendTime" if self.attributes & 0x08 else "CreateTime"

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & 0x40)

    @property
    def delete_horizon_ms(self) -> Optional[int]:
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        """Bytes the batch takes in the log."""
        return self.batch_length + 12

    @property
    def ok(self) -> bool:
        return self.error is None
