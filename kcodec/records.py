"""Read Kafka log segments: record batches (format v2) and their records.

Sources are a segment file (``00000000000000000000.log``), a snapshot
(``*.checkpoint``, the same batch format), a directory of those (searched
recursively, partitions in numeric order, segments by base offset), raw bytes, a
binary file object, or a list of any of these::

    >>> from kcodec import records
    >>> for batch in records.iter_batches("/var/kafka/__consumer_offsets-0"):
    ...     if batch.error:
    ...         print("corrupt:", batch.error)
    ...     for rec in batch.records:
    ...         ...

Batches are split and CRC-32C-checked in C (``csrc/kc_batch.c``); compressed batches
(gzip, snappy incl. the xerial framing of Kafka's Java client, lz4 frame, zstd) are
decompressed with ``cramjam`` and their records parsed in C as well.  Files are read
in fixed-size chunks, so memory stays flat however long the log is.

A corrupt batch (bad CRC, impossible length, unknown magic or compression, records
that do not parse, a log cut in the middle of a batch) is never dropped silently:
it is yielded with :attr:`RecordBatch.error` set (file, position, reason) and
reading goes on with the next readable batch.  ``errors="raise"`` raises
:class:`~kcodec.errors.CorruptRecordError` instead.
"""
from __future__ import annotations

import os
import re
import struct
from typing import (Any, BinaryIO, Dict, Iterable, Iterator, List, NamedTuple, Optional,
                    Sequence, Tuple, Union)

import numpy as np

from .errors import CorruptRecordError

__all__ = [
    "Record", "RecordBatch", "BatchError", "ControlRecord", "Source",
    "iter_batches", "iter_records", "iter_columns", "read_columns", "log_files",
    "parse_control_record", "decompress", "compress", "encode_batch", "encode_control_batch",
    "COMPRESSION_NAMES", "CONTROL_TYPES",
]

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO,
               Sequence[Any]]

COMPRESSION_NAMES = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
# ControlRecordType (org.apache.kafka.common.record.ControlRecordType)
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
                 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

_STATUS = {
    1: "compressed", 2: "bad_crc", 3: "bad_length", 4: "bad_magic", 5: "bad_records",
    6: "unknown_compression", 7: "truncated", 8: "record_count_mismatch", 9: "too_many_records",
}
_FIELDS = ["", "length", "attributes", "timestampDelta", "offsetDelta", "key", "value",
           "headers", "header key", "header value", "record size"]

DEFAULT_CHUNK = 8 << 20            # bytes read per step
DEFAULT_MAX_BATCH = 1 << 30        # a batchLength above this is taken as corruption
_MAX_RESYNC_WINDOW = 64 << 20      # widest window used to find the end of a corrupt stretch


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
    key = record.key or b""
    if len(key) < 4:
        raise CorruptRecordError(f"control record at offset {record.offset}: key shorter than 4 bytes",
                                 path="key")
    version, ctype = struct.unpack_from(">hh", key)
    name = CONTROL_TYPES.get(ctype, "UNKNOWN")
    vv = ce = None
    if ctype in (0, 1) and record.value is not None and len(record.value) >= 6:
        vv, ce = struct.unpack_from(">hi", record.value)
    return ControlRecord(version, ctype, name, vv, ce)




# --------------------------------------------------------------------------- pure-Python twin

class _PyRecords:
    """The same functions as the C binding ``kcodec._records``, in Python: used when the
    extension is not built or ``KCODEC_NO_EXTENSIONS=1``; tests run both."""

    BATCH_DTYPE = np.dtype([
        ("position", "<i8"), ("base_offset", "<i8"), ("base_timestamp", "<i8"),
        ("max_timestamp", "<i8"), ("producer_id", "<i8"), ("first_record", "<i8"),
        ("next_position", "<i8"),
        ("crc", "<u4"), ("computed_crc", "<u4"), ("batch_length", "<i4"),
        ("partition_leader_epoch", "<i4"), ("last_offset_delta", "<i4"), ("base_sequence", "<i4"),
        ("record_count", "<i4"), ("records_parsed", "<i4"),
        ("attributes", "<i2"), ("producer_epoch", "<i2"),
        ("magic", "i1"), ("crc_ok", "i1"), ("status", "i1"), ("error_field", "i1"),
    ])
    RECORD_DTYPE = np.dtype([
        ("offset", "<i8"), ("timestamp", "<i8"), ("key_pos", "<i8"), ("value_pos", "<i8"),
        ("headers_pos", "<i8"), ("key_len", "<i4"), ("value_len", "<i4"),
        ("headers_count", "<i4"), ("size", "<i4"), ("attributes", "<i4"), ("batch_index", "<i4"),
    ])
    _TABLE: List[int] = []

    @classmethod
    def _table(cls) -> List[int]:
        if not cls._TABLE:
            for n in range(256):
                c = n
                for _ in range(8):
                    c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
                cls._TABLE.append(c)
        return cls._TABLE

    @classmethod
    def crc32c(cls, data: Any, crc: int = 0) -> int:
        t = cls._table()
        c = crc ^ 0xFFFFFFFF
        for b in bytes(data):
            c = t[(c ^ b) & 0xFF] ^ (c >> 8)
        return c ^ 0xFFFFFFFF

    crc32c_portable = crc32c

    @staticmethod
    def crc32c_hardware() -> bool:
        return False

    @staticmethod
    def _varint(b: Any, pos: int, end: int, limit: int) -> Tuple[Optional[int], int]:
        v = 0
        for i in range(limit):
            if pos + i >= end:
                return None, pos
            x = b[pos + i]
            v |= (x & 0x7F) << (7 * i)
            if not x & 0x80:
                return (v >> 1) ^ -(v & 1), pos + i + 1
        return None, pos

    @classmethod
    def _parse(cls, b: Any, start: int, end: int, count: int, base_offset: int, base_ts: int,
               bidx: int, max_recs: int) -> Tuple[List[Tuple[int, ...]], int, int, int]:
        out: List[Tuple[int, ...]] = []
        pos = start
        vi = cls._varint
        while pos < end and (count < 0 or len(out) < count):
            if len(out) >= max_recs:
                return out, 9, 0, pos
            size, p = vi(b, pos, end, 5)
            if size is None:
                return out, 5, 1, pos
            if size < 0 or size > end - p:
                return out, 5, 10, pos
            rec_start, rend = pos, p + size
            pos = p
            if pos >= rend:
                return out, 5, 2, pos
            attr = b[pos]
            pos += 1
            td, pos2 = vi(b, pos, rend, 10)
            if td is None:
                return out, 5, 3, pos
            pos = pos2
            od, pos2 = vi(b, pos, rend, 5)
            if od is None:
                return out, 5, 4, pos
            pos = pos2
            lens = []
            for fld in (5, 6):
                ln, pos2 = vi(b, pos, rend, 5)
                if ln is None or ln < -1 or (ln > 0 and ln > rend - pos2):
                    return out, 5, fld, pos
                lens.append((pos2, ln))
                pos = pos2 + max(ln, 0)
            hc, pos2 = vi(b, pos, rend, 5)
            if hc is None or hc < 0 or hc > rend - pos2:
                return out, 5, 7, pos
            pos = hp = pos2
            for _ in range(hc):
                hl, pos2 = vi(b, pos, rend, 5)
                if hl is None or hl < 0 or hl > rend - pos2:
                    return out, 5, 8, pos
                pos = pos2 + hl
                hl, pos2 = vi(b, pos, rend, 5)
                if hl is None or hl < -1 or (hl > 0 and hl > rend - pos2):
                    return out, 5, 9, pos
                pos = pos2 + max(hl, 0)
            if pos != rend:
                return out, 5, 10, rec_start
            ts = (base_ts + td + (1 << 63)) % (1 << 64) - (1 << 63)
            out.append((base_offset + od, ts, lens[0][0], lens[1][0], hp, lens[0][1], lens[1][1],
                        hc, size, attr, bidx))
        if count >= 0 and (len(out) != count or pos != end):
            return out, 8, 0, pos
        return out, 0, 0, 0

    @classmethod
    def _header(cls, b: Any, p: int) -> Dict[str, int]:
        f = struct.unpack_from(">qiibIhiqqqhii", b, p)
        return dict(base_offset=f[0], batch_length=f[1], partition_leader_epoch=f[2], magic=f[3],
                    crc=f[4], attributes=f[5], last_offset_delta=f[6], base_timestamp=f[7],
                    max_timestamp=f[8], producer_id=f[9], producer_epoch=f[10],
                    base_sequence=f[11], record_count=f[12])

    @classmethod
    def _plausible(cls, b: Any, n: int, p: int, final: bool, max_len: int) -> int:
        if n - p < 61:
            return 0 if final else -1
        blen = struct.unpack_from(">i", b, p + 8)[0]
        if b[p + 16] != 2 or blen < 49 or blen > max_len:
            return 0
        if (struct.unpack_from(">h", b, p + 21)[0] & 7) > 4:
            return 0
        if 12 + blen > n - p:
            return 0 if final else -1
        return int(cls.crc32c(b[p + 21:p + 12 + blen]) == struct.unpack_from(">I", b, p + 17)[0])

    @classmethod
    def resync(cls, data: Any, start: int, final: bool = True, max_batch_length: int = 1 << 30) -> int:
        b = memoryview(data).cast("B")
        n = len(b)
        for p in range(start, n):
            if n - p > 16 and b[p + 16] != 2:
                continue
            if cls._plausible(b, n, p, final, max_batch_length) != 0:
                return p
        return n

    @classmethod
    def scan(cls, data: Any, verify_crc: bool = True, final: bool = True,
             max_batch_length: int = 1 << 30, max_batches: int = 0) -> Tuple[int, np.ndarray, np.ndarray]:
        b = memoryview(data).cast("B")
        n = len(b)
        batches: List[Dict[str, Any]] = []
        recs: List[Tuple[int, ...]] = []
        pos = 0
        while pos < n:
            rem = n - pos
            e: Dict[str, Any] = {"position": pos, "first_record": len(recs)}
            if rem < 61:
                if not final:
                    break
                if rem >= 12:
                    e["base_offset"], e["batch_length"] = struct.unpack_from(">qi", b, pos)
                if rem > 16:
                    e["magic"] = struct.unpack_from(">b", b, pos + 16)[0]
                e.update(status=7, next_position=n)
                batches.append(e)
                pos = n
                break
            e.update(cls._header(b, pos))
            blen = e["batch_length"]
            bad = 0
            if e["magic"] != 2:
                if e["magic"] in (0, 1) and 14 <= blen <= max_batch_length:
                    if blen + 12 > rem:
                        if not final:
                            break
                        bad = 7
                    else:
                        e.update(status=4, next_position=pos + 12 + blen)
                        batches.append(e)
                        pos += 12 + blen
                        continue
                else:
                    bad = 4
            elif blen < 49 or blen > max_batch_length:
                bad = 3
            elif blen + 12 > rem:
                if not final:
                    break
                bad = 7
            if bad:
                nxt = cls.resync(b, pos + 1, final, max_batch_length)
                if not final and nxt >= n:
                    nxt = n - 61 if n > 61 else 0
                    if nxt <= pos:
                        break
                if bad == 7 and nxt < n:
                    bad = 3
                e.update(status=bad, next_position=nxt)
                batches.append(e)
                pos = nxt
                continue
            total = 12 + blen
            if verify_crc:
                e["computed_crc"] = cls.crc32c(b[pos + 21:pos + total])
                e["crc_ok"] = int(e["computed_crc"] == e["crc"])
            else:
                e["computed_crc"], e["crc_ok"] = e["crc"], 1
            e["next_position"] = pos + total
            codec = e["attributes"] & 7
            if codec == 0:
                got, st, fld, _ = cls._parse(b, pos + 61, pos + total, e["record_count"],
                                             e["base_offset"], e["base_timestamp"], len(batches),
                                             1 << 62)
                if e["attributes"] & 0x08:
                    got = [r[:1] + (e["max_timestamp"],) + r[2:] for r in got]
                recs += got
                e.update(records_parsed=len(got), status=st, error_field=fld)
                if e["record_count"] < 0 and st == 0:
                    e["status"] = 8
            else:
                e["status"] = 1 if codec <= 4 else 6
            batches.append(e)
            pos += total
        barr = np.zeros(len(batches), cls.BATCH_DTYPE)
        for i, e in enumerate(batches):
            for k, v in e.items():
                barr[i][k] = v
        return pos, barr, np.array(recs, dtype=cls.RECORD_DTYPE) if recs else np.empty(0, cls.RECORD_DTYPE)

    @classmethod
    def parse_records(cls, data: Any, count: int, base_offset: int, base_timestamp: int,
                      batch_index: int = 0, log_append_time: Optional[int] = None) -> Tuple[np.ndarray, int, int, int]:
        b = memoryview(data).cast("B")
        if len(b) == 0:
            return np.empty(0, cls.RECORD_DTYPE), (0 if count == 0 else 8), 0, 0
        got, st, fld, ep = cls._parse(b, 0, len(b), count, base_offset, base_timestamp,
                                      batch_index, 1 << 62)
        arr = np.array(got, dtype=cls.RECORD_DTYPE) if got else np.empty(0, cls.RECORD_DTYPE)
        if log_append_time is not None:
            arr["timestamp"] = log_append_time
        return arr, st, fld, ep

    @classmethod
    def parse_headers(cls, data: Any, pos: int, count: int) -> List[Tuple[str, Optional[bytes]]]:
        b = memoryview(data).cast("B")
        out: List[Tuple[str, Optional[bytes]]] = []
        n = len(b)
        for _ in range(max(count, 0)):
            kl, pos = cls._varint(b, pos, n, 5)
            if kl is None or kl < 0 or kl > n - pos:
                raise ValueError("record headers do not parse")
            k = bytes(b[pos:pos + kl]).decode("utf-8", "surrogateescape")
            pos += kl
            vl, pos = cls._varint(b, pos, n, 5)
            if vl is None or vl < -1 or vl > n - pos:
                raise ValueError("record headers do not parse")
            out.append((k, None if vl < 0 else bytes(b[pos:pos + vl])))
            pos += max(vl, 0)
        return out

    @staticmethod
    def slices(data: Any, pos: Any, length: Any) -> List[Optional[bytes]]:
        b = memoryview(data).cast("B")
        return [None if ln < 0 else bytes(b[p:p + ln]) for p, ln in zip(pos.tolist(), length.tolist())]


NATIVE_RECORDS = False
_records: Any = _PyRecords
if not os.environ.get("KCODEC_NO_EXTENSIONS"):
    try:
        from . import _records  # type: ignore[no-redef]
        NATIVE_RECORDS = True
    except ImportError:  # not built: the Python twin serves
        _records = _PyRecords


# --------------------------------------------------------------------------- decompression

_XERIAL_MAGIC = b"\x82SNAPPY\x00"


def decompress(codec: int, data: Any) -> bytes:
    """Decompress a batch's records section as Kafka's producers write it."""
    try:
        import cramjam
    except ImportError as e:  # pragma: no cover - cramjam is a declared extra
        raise CorruptRecordError(f"{COMPRESSION_NAMES.get(codec)} batch needs the 'cramjam' "
                                 "package (pip install kcodec[compression])") from e
    raw = bytes(data)
    if codec == 1:
        return bytes(cramjam.gzip.decompress(raw))
    if codec == 2:
        if raw.startswith(_XERIAL_MAGIC):
            # Java client's SnappyOutputStream: 8-byte magic, int32 version, int32
            # compatible version, then blocks of int32 length + raw snappy.
            out = bytearray()
            pos = 16
            while pos < len(raw):
                if pos + 4 > len(raw):
                    raise ValueError("xerial snappy block length cut short")
                (n,) = struct.unpack_from(">i", raw, pos)
                pos += 4
                if n < 0 or pos + n > len(raw):
                    raise ValueError("xerial snappy block length out of range")
                out += bytes(cramjam.snappy.decompress_raw(raw[pos:pos + n]))
                pos += n
            return bytes(out)
        return bytes(cramjam.snappy.decompress_raw(raw))
    if codec == 3:
        return bytes(cramjam.lz4.decompress(raw))
    if codec == 4:
        return bytes(cramjam.zstd.decompress(raw))
    raise ValueError(f"unknown compression codec {codec}")


# --------------------------------------------------------------------------- sources

_NUM = re.compile(r"(\d+)")


def _natural(s: str) -> List[Any]:
    return [int(t) if t.isdigit() else t for t in _NUM.split(s)]


def log_files(path: Union[str, "os.PathLike[str]"]) -> List[str]:
    """The segment and snapshot files under ``path`` (a file or a directory), in
    reading order: directories in natural order (partition 2 before 10), within a
    directory snapshots (``.checkpoint``) before segments (``.log``), by base offset."""
    p = os.fspath(path)
    if not os.path.isdir(p):
        return [p]
    out: List[Tuple[List[Any], int, str, str]] = []
    for root, dirs, files in os.walk(p):
        for f in files:
            if f.endswith(".log"):
                kind = 1
            elif f.endswith(".checkpoint"):
                kind = 0
            else:
                continue
            rel = os.path.relpath(root, p)
            out.append((_natural(rel), kind, f, os.path.join(root, f)))
    out.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t[3] for t in out]


# --------------------------------------------------------------------------- core reader

class _Chunk(NamedTuple):
    """The raw result of scanning one window: arrays plus the buffers they point into."""
    file: Optional[str]
    base: int                        # file position of the window start
    data: Any                        # the window
    batches: np.ndarray
    records: np.ndarray
    # batch index -> (decompressed buffer, its records) for compressed batches
    inflated: Dict[int, Tuple[bytes, np.ndarray]]
    errors: Dict[int, BatchError]    # batch index -> error


def _batch_error(file: Optional[str], b: Any, base: int, reason: str, message: str) -> BatchError:
    return BatchError(file, int(b["position"]) + base, reason, message,
                      int(b["next_position"]) + base)


def _describe(file: Optional[str], b: Any, base: int) -> Optional[BatchError]:
    st = int(b["status"])
    if st == 0 or st == 1:
        if not b["crc_ok"]:
            return _batch_error(file, b, base, "bad_crc",
                                f"CRC-32C mismatch: stored {int(b['crc'])}, "
                                f"computed {int(b['computed_crc'])}")
        return None
    reason = _STATUS.get(st, f"status_{st}")
    if st == 3:
        msg = f"batchLength {int(b['batch_length'])} is impossible here; skipped to the next readable batch"
    elif st == 4:
        msg = f"magic {int(b['magic'])} is not record batch format v2"
        if int(b["magic"]) in (0, 1):
            msg += " (legacy message set, skipped)"
    elif st == 5:
        msg = f"record {int(b['records_parsed'])} does not parse (field {_FIELDS[int(b['error_field'])]})"
    elif st == 6:
        msg = f"unknown compression codec {int(b['attributes']) & 7}"
    elif st == 7:
        msg = "the log ends inside this batch"
    elif st == 8:
        msg = (f"header says {int(b['record_count'])} records, the records section holds "
               f"{int(b['records_parsed'])}" + ("" if b["records_parsed"] != b["record_count"]
                                                else " and more bytes"))
    else:
        msg = reason
    if not b["crc_ok"] and st in (5, 8):
        # The CRC is the cause: the records are damaged bytes.
        return _batch_error(file, b, base, "bad_crc",
                            f"CRC-32C mismatch: stored {int(b['crc'])}, computed "
                            f"{int(b['computed_crc'])}; {reason}: {msg}")
    return _batch_error(file, b, base, reason, msg)


def _scan_window(file: Optional[str], base: int, data: Any, verify_crc: bool, final: bool,
                 max_batch: int) -> Tuple[int, _Chunk]:
    consumed, batches, recs = _records.scan(data, verify_crc, final, max_batch)
    inflated: Dict[int, Tuple[bytes, np.ndarray]] = {}
    errors: Dict[int, BatchError] = {}
    mv = memoryview(data).cast("B") if len(batches) else None
    # Only batches needing attention (compressed or not clean) cost Python time.
    todo: List[int] = (np.flatnonzero((batches["status"] != 0) | (batches["crc_ok"] == 0)).tolist()
                       if len(batches) else [])
    for i in todo:
        b = batches[i]
        st = int(b["status"])
        if st == 1:
            start = int(b["position"]) + 61
            end = int(b["position"]) + 12 + int(b["batch_length"])
            log_append = int(b["max_timestamp"]) if int(b["attributes"]) & 0x08 else None
            try:
                raw = decompress(int(b["attributes"]) & 7, mv[start:end])  # type: ignore[index]
            except Exception as e:  # any codec failure is a corrupt batch, reported
                errors[i] = _batch_error(file, b, base, "decompression_failed",
                                         f"{COMPRESSION_NAMES[int(b['attributes']) & 7]}: {e}"
                                         + ("" if b["crc_ok"] else "; CRC-32C mismatch"))
                continue
            r, rst, field, _ = _records.parse_records(
                raw, int(b["record_count"]), int(b["base_offset"]), int(b["base_timestamp"]), i,
                log_append)
            inflated[i] = (raw, r)
            batches[i]["records_parsed"] = len(r)
            if rst:
                batches[i]["status"] = rst if rst != 9 else 5
                batches[i]["error_field"] = field
        err = _describe(file, batches[i], base)
        if err is not None:
            errors[i] = err
    return consumed, _Chunk(file, base, data, batches, recs, inflated, errors)


def _defer_tail_error(ch: _Chunk, final: bool, consumed: int) -> Tuple[int, _Chunk]:
    """Where unreadable bytes end was decided at a window's edge: leave that stretch
    for the next (wider) window rather than report it in pieces."""
    nb = len(ch.batches)
    if final or not nb or int(ch.batches[nb - 1]["status"]) not in (3, 4, 7):
        return consumed, ch
    ch.errors.pop(nb - 1, None)
    return int(ch.batches[nb - 1]["position"]), ch._replace(batches=ch.batches[:nb - 1])


def _scan_file(f: BinaryIO, name: Optional[str], verify_crc: bool, chunk: int,
               max_batch: int) -> Iterator[_Chunk]:
    buf = bytearray(chunk)
    filled = 0
    base = 0
    eof = False
    while True:
        while not eof and filled < len(buf):
            n = f.readinto(memoryview(buf)[filled:])  # type: ignore[attr-defined]
            if not n:
                eof = True
                break
            filled += n
        if filled == 0:
            return
        window = memoryview(buf)[:filled]
        consumed, ch = _scan_window(name, base, window, verify_crc, eof, max_batch)
        if len(buf) < _MAX_RESYNC_WINDOW:
            consumed, ch = _defer_tail_error(ch, eof, consumed)
        if len(ch.batches):
            yield ch
        window.release()
        if consumed == 0:
            if eof:
                return  # cannot happen: a final scan consumes everything
            # The first batch is larger than the window: grow to hold it.
            need = len(buf) * 2
            if filled >= 12:
                (blen,) = struct.unpack_from(">i", buf, 8)
                if 0 < blen <= max_batch:
                    need = max(need, blen + 12)
            buf.extend(bytes(need - len(buf)))
            continue
        rest = filled - consumed
        buf[:rest] = buf[consumed:filled]
        filled = rest
        base += consumed
        if eof and filled == 0:
            return


def _chunks(source: Source, verify_crc: bool, chunk: int, max_batch: int) -> Iterator[_Chunk]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        mv = memoryview(source).cast("B")
        off = 0
        while off < len(mv):
            # windows of `chunk` bytes (a batch longer than that gets a window of its own)
            end = min(len(mv), off + max(chunk, 1))
            final = end == len(mv)
            consumed, ch = _scan_window(None, off, mv[off:end], verify_crc, final, max_batch)
            consumed, ch = _defer_tail_error(ch, final, consumed)
            if len(ch.batches):
                yield ch
            if consumed == 0:
                if final:
                    break
                end = len(mv)
                consumed, ch = _scan_window(None, off, mv[off:end], verify_crc, True, max_batch)
                if len(ch.batches):
                    yield ch
                if consumed == 0:
                    break
            off += consumed
        return
    if isinstance(source, (str, os.PathLike)):
        for path in log_files(source):
            with open(path, "rb", buffering=0) as f:
                yield from _scan_file(f, path, verify_crc, chunk, max_batch)  # type: ignore[arg-type]
        return
    if hasattr(source, "readinto"):
        yield from _scan_file(source, getattr(source, "name", None), verify_crc, chunk, max_batch)  # type: ignore[arg-type]
        return
    if isinstance(source, (list, tuple)):
        for s in source:
            yield from _chunks(s, verify_crc, chunk, max_batch)
        return
    raise TypeError(f"cannot read records from {type(source).__name__}")


def _records_of(ch: _Chunk, i: int) -> List[Record]:
    b = ch.batches[i]
    if i in ch.inflated:
        buf, recs = ch.inflated[i]
    else:
        n = int(b["records_parsed"])
        first = int(b["first_record"])
        buf, recs = ch.data, ch.records[first:first + n]
    if not len(recs):
        return []
    keys = _records.slices(buf, recs["key_pos"], recs["key_len"])
    vals = _records.slices(buf, recs["value_pos"], recs["value_len"])
    out = []
    hc = recs["headers_count"].tolist()
    hp = recs["headers_pos"].tolist()
    for j, (off, ts, attr, size) in enumerate(zip(recs["offset"].tolist(), recs["timestamp"].tolist(),
                                                  recs["attributes"].tolist(), recs["size"].tolist())):
        headers = _records.parse_headers(buf, hp[j], hc[j]) if hc[j] else []
        out.append(Record(off, ts, keys[j], vals[j], headers, attr, size))
    return out


def _batch_of(ch: _Chunk, i: int, errors: str) -> RecordBatch:
    b = ch.batches[i]
    err = ch.errors.get(i)
    if err is not None and errors == "raise":
        raise CorruptRecordError(err.reason + ": " + err.message, file=err.file,
                                 position=err.position)
    return RecordBatch(
        ch.file, int(b["position"]) + ch.base, int(b["base_offset"]), int(b["batch_length"]),
        int(b["partition_leader_epoch"]), int(b["magic"]), int(b["crc"]), bool(b["crc_ok"]),
        int(b["attributes"]), int(b["last_offset_delta"]), int(b["base_timestamp"]),
        int(b["max_timestamp"]), int(b["producer_id"]), int(b["producer_epoch"]),
        int(b["base_sequence"]), int(b["record_count"]), _records_of(ch, i), err)


def _check_errors_arg(errors: str) -> None:
    if errors not in ("report", "raise"):
        raise ValueError("errors must be 'report' or 'raise'")


def iter_batches(source: Source, *, verify_crc: bool = True, errors: str = "report",
                 chunk_size: int = DEFAULT_CHUNK,
                 max_batch_size: int = DEFAULT_MAX_BATCH) -> Iterator[RecordBatch]:
    """Yield every record batch of ``source`` in log order, records included.

    ``errors="report"`` (default) yields a corrupt batch with ``.error`` set (and the
    records that could be read, if any) and goes on; ``"raise"`` raises
    :class:`CorruptRecordError` at the first one.
    """
    _check_errors_arg(errors)
    for ch in _chunks(source, verify_crc, chunk_size, max_batch_size):
        for i in range(len(ch.batches)):
            yield _batch_of(ch, i, errors)


def iter_records(source: Source, **kwargs: Any) -> Iterator[Tuple[RecordBatch, Record]]:
    """Yield ``(batch, record)`` for every record (control records included)."""
    for batch in iter_batches(source, **kwargs):
        for rec in batch.records:
            yield batch, rec


_BATCH_COLS = ("base_offset", "partition_leader_epoch", "producer_id", "producer_epoch",
               "attributes", "position")


def iter_columns(source: Source, *, verify_crc: bool = True, errors: str = "report",
                 chunk_size: int = DEFAULT_CHUNK, max_batch_size: int = DEFAULT_MAX_BATCH,
                 with_headers: bool = False) -> Iterator[Dict[str, Any]]:
    """Columnar reading: one dict of columns per chunk of the log.

    Columns (one row per record): ``offset``, ``timestamp``, ``attributes`` (record),
    ``key``/``value`` (lists of bytes or None), ``headers_count``, ``batch_base_offset``,
    ``batch_partition_leader_epoch``, ``batch_producer_id``, ``batch_producer_epoch``,
    ``batch_attributes``, ``batch_position`` (NumPy arrays), ``file`` (str or None);
    ``headers`` (list of lists) with ``with_headers=True``.  Also ``"errors"``: the
    :class:`BatchError` of this chunk's corrupt batches (their readable records are
    still in the columns).
    """
    _check_errors_arg(errors)
    for ch in _chunks(source, verify_crc, chunk_size, max_batch_size):
        if errors == "raise" and ch.errors:
            e = next(iter(ch.errors.values()))
            raise CorruptRecordError(e.reason + ": " + e.message, file=e.file,
                                     position=e.position)
        parts_r = [ch.records]
        keys = _records.slices(ch.data, ch.records["key_pos"], ch.records["key_len"])
        vals = _records.slices(ch.data, ch.records["value_pos"], ch.records["value_len"])
        hdrs: List[Any] = []
        if with_headers:
            hdrs = [(_records.parse_headers(ch.data, p, c) if c else [])
                    for p, c in zip(ch.records["headers_pos"].tolist(),
                                    ch.records["headers_count"].tolist())]
        for i in sorted(ch.inflated):
            raw, r = ch.inflated[i]
            parts_r.append(r)
            keys += _records.slices(raw, r["key_pos"], r["key_len"])
            vals += _records.slices(raw, r["value_pos"], r["value_len"])
            if with_headers:
                hdrs += [(_records.parse_headers(raw, p, c) if c else [])
                         for p, c in zip(r["headers_pos"].tolist(), r["headers_count"].tolist())]
        recs = np.concatenate(parts_r) if len(parts_r) > 1 else ch.records
        if len(parts_r) > 1:
            # Compressed batches' records were appended after the others: restore log order.
            order = np.argsort(recs["batch_index"], kind="stable")
            recs = recs[order]
            ol = order.tolist()
            keys = [keys[j] for j in ol]
            vals = [vals[j] for j in ol]
            if with_headers:
                hdrs = [hdrs[j] for j in ol]
        bi = recs["batch_index"]
        cols: Dict[str, Any] = {
            "offset": recs["offset"], "timestamp": recs["timestamp"],
            "attributes": recs["attributes"], "key": keys, "value": vals,
            "headers_count": recs["headers_count"], "file": ch.file,
        }
        for c in _BATCH_COLS:
            col = ch.batches[c][bi]
            if c == "position":
                col = col + ch.base
            cols["batch_" + c] = col
        if with_headers:
            cols["headers"] = hdrs
        cols["errors"] = [ch.errors[i] for i in sorted(ch.errors)]
        yield cols


def read_columns(source: Source, **kwargs: Any) -> Dict[str, Any]:
    """All of :func:`iter_columns` concatenated (``file`` becomes a per-row list).
    Loads the whole log: prefer :func:`iter_columns` for big logs."""
    parts = list(iter_columns(source, **kwargs))
    out: Dict[str, Any] = {}
    if not parts:
        return {"offset": np.empty(0, np.int64), "timestamp": np.empty(0, np.int64),
                "key": [], "value": [], "file": [], "errors": []}
    for k, v in parts[0].items():
        if k == "errors":
            out[k] = [e for p in parts for e in p[k]]
        elif k == "file":
            out[k] = [p["file"] for p in parts for _ in range(len(p["offset"]))]
        elif isinstance(v, np.ndarray):
            out[k] = np.concatenate([p[k] for p in parts])
        else:
            out[k] = [x for p in parts for x in p[k]]
    return out


# --------------------------------------------------------------------------- writing

def _zz(n: int, out: bytearray) -> None:
    """Append a zig-zag varint (varlong) to out."""
    v = (n << 1) ^ (n >> 63)
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def compress(codec: int, data: bytes) -> bytes:
    """Compress a records section as Kafka's Java producer does (snappy: xerial framing)."""
    import cramjam
    if codec == 0:
        return data
    if codec == 1:
        return bytes(cramjam.gzip.compress(data))
    if codec == 2:
        out = bytearray(_XERIAL_MAGIC + struct.pack(">ii", 1, 1))
        for i in range(0, len(data), 32 << 10):
            blk = bytes(cramjam.snappy.compress_raw(data[i:i + (32 << 10)]))
            out += struct.pack(">i", len(blk)) + blk
        return bytes(out)
    if codec == 3:
        return bytes(cramjam.lz4.compress(data))
    if codec == 4:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")


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
    body = bytearray()
    ts = list(timestamps) if timestamps is not None else [base_timestamp] * len(recs)
    for i, (k, v) in enumerate(recs):
        r = bytearray([0])
        _zz(ts[i] - base_timestamp, r)
        _zz(i, r)
        for x in (k, v):
            if x is None:
                _zz(-1, r)
            else:
                _zz(len(x), r)
                r += x
        hs = headers[i] if headers is not None else []
        _zz(len(hs), r)
        for hk, hv in hs:
            kb = hk.encode()
            _zz(len(kb), r)
            r += kb
            if hv is None:
                _zz(-1, r)
            else:
                _zz(len(hv), r)
                r += hv
        _zz(len(r), body)
        body += r
    payload = compress(compression, bytes(body))
    attrs = compression | (0x08 if log_append_time else 0) | (0x10 if transactional else 0) \
        | (0x20 if control else 0)
    max_ts = max(ts) if ts else base_timestamp
    tail = struct.pack(">hiqqqhii", attrs, max(len(recs) - 1, 0), base_timestamp, max_ts,
                       producer_id, producer_epoch, base_sequence, len(recs)) + payload
    crc = _records.crc32c(tail)
    head = struct.pack(">qiibI", base_offset, len(tail) + 9, partition_leader_epoch, 2, crc)
    return head + tail


def encode_control_batch(commit: bool, *, base_offset: int, producer_id: int, producer_epoch: int,
                         coordinator_epoch: int = 0, timestamp: int = 0,
                         partition_leader_epoch: int = 0) -> bytes:
    """A transaction marker batch (COMMIT or ABORT) as the broker writes it."""
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return encode_batch([(key, value)], base_offset=base_offset, base_timestamp=timestamp,
                        partition_leader_epoch=partition_leader_epoch, transactional=True,
                        control=True, producer_id=producer_id, producer_epoch=producer_epoch)
