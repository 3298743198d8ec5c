"""Read Kafka log segments: record batches (format v2) and their records, and the legacy
message sets (magic 0/1) of segments written before Kafka 0.11, into the same rows.

The scanner (C, or its Python twin) splits a window of the log into flat NumPy arrays of
batch headers and record positions; compressed batches are inflated here and parsed the
same way.  :func:`iter_chunks` hands those arrays out as they are (the fast path for
columnar readers: offsets, KRaft, Spark); :func:`iter_batches`, :func:`iter_records` and
:func:`iter_columns` build Python objects or columns from them.
"""
from __future__ import annotations

import os
import re
import stat
import struct
from typing import Any, BinaryIO, Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from ..errors import ArgumentTypeError, CorruptRecordError, InputPathError
from . import _impl
from .batch import COMPRESSION_NAMES, BatchError, Record, RecordBatch, Source
from .compression import DEFAULT_MAX_INFLATED, decompress

__all__ = ["Chunk", "iter_chunks", "iter_batches", "iter_records", "iter_columns",
           "read_columns", "log_files", "list_log_files", "LogListing", "PARTITION_DIR",
           "topic_source", "OFFSETS_TOPIC", "METADATA_TOPIC",
           "left_out_by_topic",
           "DEFAULT_CHUNK", "DEFAULT_MAX_BATCH"]

_STATUS = {
    1: "compressed", 2: "bad_crc", 3: "bad_length", 4: "bad_magic", 5: "bad_records",
    6: "unknown_compression", 7: "truncated", 8: "record_count_mismatch", 9: "too_many_records",
}
_FIELDS = ["", "length", "attributes", "timestampDelta", "offsetDelta", "key", "value",
           "headers", "header key", "header value", "record size", "crc", "magic"]

DEFAULT_CHUNK = 8 << 20            # bytes read per step
DEFAULT_MAX_BATCH = 1 << 30        # a batchLength above this is taken as corruption


class Limits(NamedTuple):
    """What a batch may claim: its length (larger is taken as corruption) and how far its
    records may inflate (larger is a decompression bomb, reported as a corrupt batch)."""
    max_batch_size: int = DEFAULT_MAX_BATCH
    max_inflated_size: int = DEFAULT_MAX_INFLATED
_MAX_RESYNC_WINDOW = 64 << 20      # widest window used to find the end of a corrupt stretch


# --------------------------------------------------------------------------- sources

_NUM = re.compile(r"(\d+)")


def _natural(s: str) -> List[Any]:
    return [int(t) if t.isdigit() else t for t in _NUM.split(s)]


#: A partition directory, as Kafka names it: ``<topic>-<partition>`` (Kafka's topic
#: characters; see ``Topic.LEGAL_CHARS``).
PARTITION_DIR = re.compile(r"([A-Za-z0-9._-]+)-(\d+)")
# A replica Kafka is deleting, moving to another log dir or found stray
# (``<topic>-<partition>.<id>-delete|future|stray``): a copy, never the partition's log.
_REPLICA_COPY_DIR = re.compile(r"([A-Za-z0-9._-]+)-(\d+)\.[A-Za-z0-9]+-(?:delete|future|stray)")
#: The bootstrap snapshot KRaft keeps in the metadata log dir (``BootstrapDirectory``).
BOOTSTRAP_FILE = "bootstrap.checkpoint"
#: The topics of the group coordinator's and the KRaft controller's logs.
OFFSETS_TOPIC = "__consumer_offsets"
METADATA_TOPIC = "__cluster_metadata"


class LogListing(NamedTuple):
    """What :func:`list_log_files` found: the files to read, and the partition
    directories (relative to the path walked, natural order) of other topics left out."""
    files: List[str]
    left_out: List[str]


def left_out_by_topic(directory: str, file_name: str, topic: Optional[str]) -> Optional[str]:
    """Why a file found walking a directory is not read for ``topic`` (see
    :func:`list_log_files`): the name it is left out under (its partition directory, or
    the file), or None when it is read.  ``directory``: the file's directory relative
    to the path walked (``""`` or ``"."`` for the path itself, always read)."""
    if topic is None:
        return None
    directory = directory.strip("/")
    if directory not in ("", os.curdir):
        name = directory.rsplit("/", 1)[-1]
        m = PARTITION_DIR.fullmatch(name)
        if (m and m.group(1) != topic) or (not m and _REPLICA_COPY_DIR.fullmatch(name)):
            return directory
    if file_name == BOOTSTRAP_FILE and topic != METADATA_TOPIC:
        return f"{directory}/{file_name}" if directory not in ("", os.curdir) else file_name
    return None


def list_log_files(path: Union[str, "os.PathLike[str]"], *, topic: Optional[str] = None) -> LogListing:
    """The segment and snapshot files under ``path`` (a file or a directory), in
    reading order: directories in natural order (partition 2 before 10), within a
    directory snapshots (``.checkpoint``) before segments (``.log``), by base offset.

    ``topic`` (e.g. ``"__consumer_offsets"``): the topic the caller reads.  Walking a
    directory (a broker's log dir holds every partition it hosts), a file whose
    partition directory below ``path`` is named ``<topic>-<partition>`` is listed only
    for that topic; other topics' partitions, replica copies (``-delete``, ``-future``,
    ``-stray``) and, unless ``topic`` is ``__cluster_metadata``, KRaft's
    ``bootstrap.checkpoint`` go to :attr:`LogListing.left_out`
    (:func:`left_out_by_topic`).  Files directly in ``path`` and in directories not
    named like a partition are read, as with ``topic=None``."""
    p = os.fspath(path)
    if not os.path.isdir(p):
        return LogListing([p], [])
    out: List[Tuple[List[Any], int, str, str]] = []
    left: Dict[str, List[Any]] = {}
    for root, dirs, files in os.walk(p):
        rel = os.path.relpath(root, p)
        rel_posix = rel.replace(os.sep, "/")
        for f in files:
            if f.endswith(".log"):
                kind = 1
            elif f.endswith(".checkpoint"):
                kind = 0
            else:
                continue
            why = left_out_by_topic(rel_posix, f, topic)
            if why is not None:
                left.setdefault(why, _natural(why))
                continue
            out.append((_natural(rel), kind, f, os.path.join(root, f)))
    out.sort(key=lambda t: (t[0], t[1], t[2]))
    return LogListing([t[3] for t in out], sorted(left, key=left.__getitem__))


def log_files(path: Union[str, "os.PathLike[str]"], *, topic: Optional[str] = None) -> List[str]:
    """The files :func:`list_log_files` lists under ``path`` (``topic``: read only that
    topic's partition directories below a directory; None: every file)."""
    return list_log_files(path, topic=topic).files


def topic_source(source: Any, topic: str) -> Any:
    """``source`` (as the readers take it) with each directory in it replaced by the
    files of ``topic`` below it (:func:`log_files`): what a reader of one topic's records
    (``kcodec.offsets``, ``kcodec.kraft``) reads from a broker's log dir, which holds
    every topic.  Files, file objects and bytes are left as they are."""
    if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
        return log_files(source, topic=topic)
    if isinstance(source, (list, tuple)):
        return [topic_source(s, topic) for s in source]
    return source


# --------------------------------------------------------------------------- core reader

class Chunk(NamedTuple):
    """One scanned window of a log (see :func:`iter_chunks`): flat arrays plus the buffers
    they point into.

    ``batches`` has one row per batch (dtype ``BATCH_DTYPE``: ``position`` within ``data``,
    the header fields, ``first_record``/``records_parsed`` into ``records``, ``status``,
    ``crc_ok``); ``records`` one row per record of the uncompressed batches (dtype
    ``RECORD_DTYPE``: ``offset``, ``timestamp``, ``key_pos``/``key_len``,
    ``value_pos``/``value_len`` into ``data`` (length -1 = null), ``headers_pos``,
    ``headers_count``, ``attributes``, ``batch_index``).  Records of compressed batches
    are in ``inflated[batch index] = (decompressed buffer, records)`` with positions into
    that buffer.  ``data`` is only valid until the iterator moves on: copy what you keep.
    The arrays stay valid as long as you hold them (the reader reuses their buffers only
    once no chunk or view of them is left).

    A batch that failed (a key of ``errors``) has no records here: ``records_parsed`` is 0,
    no row of ``records`` and no ``inflated`` entry is its own (unless the chunk was read
    with ``salvage=True``, see :func:`iter_chunks`).
    """
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


def _zero_padding(data: Any, b: Any) -> bool:
    """The unreadable stretch is all zero bytes: the unused tail of a preallocated segment
    (log.preallocate), not corruption of anything written."""
    start, end = int(b["position"]), int(b["next_position"])
    if end - start < 61:      # shorter than a batch header: as likely a cut header
        return False
    return not np.frombuffer(data, np.uint8, end - start, start).any()


def _crc_name(b: Any) -> str:
    return "CRC-32C" if int(b["magic"]) == 2 else "CRC-32"


def _describe(file: Optional[str], b: Any, base: int, data: Any = None) -> Optional[BatchError]:
    st = int(b["status"])
    if st in (3, 4, 7) and data is not None and _zero_padding(data, b):
        return _batch_error(file, b, base, "zero_padding",
                            f"{int(b['next_position']) - int(b['position'])} zero bytes from "
                            f"position {int(b['position']) + base} (a preallocated segment's "
                            "unused tail, or zeroed blocks)")
    if st == 0 or st == 1:
        if not b["crc_ok"]:
            return _batch_error(file, b, base, "bad_crc",
                                f"{_crc_name(b)} mismatch: stored {int(b['crc'])}, "
                                f"computed {int(b['computed_crc'])}")
        return None
    reason = _STATUS.get(st, f"status_{st}")
    if st == 3 and int(b["computed_crc"]) not in (0, int(b["crc"])):   # its CRC was computed
        msg = (f"{'legacy message' if int(b['magic']) in (0, 1) else 'batch'} with a "
               f"{_crc_name(b)} mismatch (stored {int(b['crc'])}, computed "
               f"{int(b['computed_crc'])}) and no readable data where its length ends; "
               "skipped to the next readable batch")
    elif st == 3:
        msg = f"batchLength {int(b['batch_length'])} is impossible here; skipped to the next readable batch"
    elif st == 4:
        if int(b["magic"]) in (0, 1):
            msg = (f"legacy message size {int(b['batch_length'])} is impossible here; skipped to "
                   "the next readable batch")
        else:
            msg = f"magic {int(b['magic'])} is not a record format Kafka wrote"
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
                            f"{_crc_name(b)} mismatch: stored {int(b['crc'])}, computed "
                            f"{int(b['computed_crc'])}; {reason}: {msg}")
    return _batch_error(file, b, base, reason, msg)


def _scan_window(file: Optional[str], base: int, data: Any, verify_crc: bool, final: bool,
                 limits: Limits, pool: List[Any], salvage: bool = False) -> Tuple[int, Chunk]:
    consumed, batches, recs = _impl.records.scan(data, verify_crc, final, limits.max_batch_size,
                                                 pool=pool)
    inflated: Dict[int, Tuple[bytes, np.ndarray]] = {}
    errors: Dict[int, BatchError] = {}
    mv = memoryview(data).cast("B") if len(batches) else None
    # Only batches needing attention (compressed or not clean) cost Python time.
    todo: List[int] = (np.flatnonzero((batches["status"] != 0) | (batches["crc_ok"] == 0)).tolist()
                       if len(batches) else [])
    for i in todo:
        b = batches[i]
        st = int(b["status"])
        if st == 1 and int(b["magic"]) < 2:
            _inflate_legacy(file, base, mv, batches, i, verify_crc, limits, inflated, errors)
            if i in errors:
                continue
        elif st == 1:
            start = int(b["position"]) + 61
            end = int(b["position"]) + 12 + int(b["batch_length"])
            log_append = int(b["max_timestamp"]) if int(b["attributes"]) & 0x08 else None
            try:
                raw = decompress(int(b["attributes"]) & 7, mv[start:end], limits.max_inflated_size)  # type: ignore[index]
            except Exception as e:  # any codec failure is a corrupt batch, reported
                errors[i] = _batch_error(file, b, base, "decompression_failed",
                                         f"{COMPRESSION_NAMES[int(b['attributes']) & 7]}: {e}"
                                         + ("" if b["crc_ok"] else "; CRC-32C mismatch"))
                continue
            r, rst, field, _ = _impl.records.parse_records(
                raw, int(b["record_count"]), int(b["base_offset"]), int(b["base_timestamp"]), i,
                log_append)
            inflated[i] = (raw, r)
            batches[i]["records_parsed"] = len(r)
            if rst:
                batches[i]["status"] = rst if rst != 9 else 5
                batches[i]["error_field"] = field
        err = _describe(file, batches[i], base, data)
        if err is not None:
            errors[i] = err
    if errors and not salvage:
        recs = _withhold(batches, recs, inflated, errors)
    return consumed, Chunk(file, base, data, batches, recs, inflated, errors)


def _withhold(batches: np.ndarray, recs: np.ndarray, inflated: Dict[int, Tuple[bytes, np.ndarray]],
              errors: Dict[int, BatchError]) -> np.ndarray:
    """Take the records of the failed batches out of a window (their rows, their inflated
    buffers, their ``records_parsed``) so that no reader can hand them out: a batch that
    failed its CRC or did not parse is only its :class:`BatchError`.  Returns the records
    array without them (a copy when any were there; the clean case costs nothing)."""
    bad = np.fromiter(errors, np.int64, len(errors))
    for i in bad.tolist():
        inflated.pop(i, None)
    n_bad = batches["records_parsed"][bad].astype(np.int64)
    if len(recs) and n_bad.any():
        # rows of a batch sit at first_record .. first_record + records_parsed (uncompressed
        # batches; compressed ones hold none here and were dropped above)
        keep = ~np.isin(recs["batch_index"], bad)
        if not keep.all():
            removed = np.zeros(len(batches), np.int64)
            np.add.at(removed, recs["batch_index"][~keep].astype(np.int64), 1)
            batches["first_record"] -= np.cumsum(removed) - removed
            recs = recs[keep]
    batches["records_parsed"][bad] = 0
    return recs


def _legacy_value(mv: Any, pos: int) -> Optional[Tuple[int, int]]:
    """Where the value of the legacy entry at ``pos`` (already parsed by the scanner) is:
    ``(start, end)``, None for a null value."""
    p = pos + 18 + (8 if mv[pos + 16] == 1 else 0)
    (klen,) = struct.unpack_from(">i", mv, p)
    p += 4 + max(klen, 0)
    (vlen,) = struct.unpack_from(">i", mv, p)     # the scanner checked both lengths
    return None if vlen < 0 else (p + 4, p + 4 + vlen)


def _xxh32_short(data: bytes) -> int:
    """XXH32 (seed 0) of fewer than 16 bytes: an LZ4 frame descriptor's checksum."""
    m = 0xFFFFFFFF
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & m
    h = (p5 + len(data)) & m
    i = 0
    while i + 4 <= len(data):
        h = rotl((h + int.from_bytes(data[i:i + 4], "little") * p3) & m, 17) * p4 & m
        i += 4
    for x in data[i:]:
        h = rotl((h + x * p5) & m, 11) * p1 & m
    h ^= h >> 15
    h = h * p2 & m
    h ^= h >> 13
    h = h * p3 & m
    return h ^ (h >> 16)


def _lz4_descriptor_fixed(raw: bytes) -> bytes:
    """Kafka before 0.10 wrote the LZ4 frame descriptor's checksum over the frame magic too
    (KAFKA-3160) and ignores it for magic 0: put the correct one in so the codec reads it."""
    if len(raw) < 7 or raw[:4] != b"\x04\x22\x4d\x18":
        return raw
    flg = raw[4]
    n = 2 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)   # FLG, BD, content size, dict id
    if len(raw) < 5 + n:
        return raw
    hc = (_xxh32_short(raw[4:4 + n]) >> 8) & 0xFF
    return raw[:4 + n] + bytes([hc]) + raw[5 + n:]


def _inflate_legacy(file: Optional[str], base: int, mv: Any, batches: np.ndarray, i: int,
                    verify_crc: bool, limits: Limits, inflated: Dict[int, Tuple[bytes, np.ndarray]],
                    errors: Dict[int, BatchError]) -> None:
    """Inflate a compressed legacy wrapper and parse its inner message set into ``inflated``
    (failures into ``errors``)."""
    b = batches[i]
    magic, attrs = int(b["magic"]), int(b["attributes"])
    codec = attrs & 7
    crc_note = "" if b["crc_ok"] else "; CRC-32 mismatch"
    where = _legacy_value(mv, int(b["position"]))
    if where is None:
        errors[i] = _batch_error(file, b, base, "bad_records",
                                 "compressed legacy message with a null value" + crc_note)
        return
    value = bytes(mv[where[0]:where[1]])
    if codec == 3 and magic == 0:
        value = _lz4_descriptor_fixed(value)
    try:
        raw = decompress(codec, value, limits.max_inflated_size)
    except Exception as e:  # any codec failure is a corrupt batch, reported
        errors[i] = _batch_error(file, b, base, "decompression_failed",
                                 f"{COMPRESSION_NAMES[codec]}: {e}" + crc_note)
        return
    wrapper = int(b["base_offset"])
    r, rst, field, _ = _impl.records.parse_legacy(
        raw, magic, wrapper, int(b["base_timestamp"]), bool(magic == 1 and attrs & 0x08), i,
        verify_crc)
    inflated[i] = (raw, r)
    b["records_parsed"] = b["record_count"] = len(r)
    delta = wrapper - int(r["offset"][0]) if len(r) else -1
    if not rst and 0 <= delta < 1 << 31:
        # Kafka's view of a wrapper: its base offset is the first inner record's, its last
        # offset the wrapper's own (a span no batch can have leaves the wrapper's alone).
        b["base_offset"] = int(r["offset"][0])
        b["last_offset_delta"] = delta
    if rst:
        b["status"] = rst if rst != 9 else 5
        b["error_field"] = field


def _defer_tail_error(ch: Chunk, final: bool, consumed: int) -> Tuple[int, Chunk]:
    """Where unreadable bytes end was decided at a window's edge: leave that stretch
    for the next (wider) window rather than report it in pieces."""
    nb = len(ch.batches)
    if final or not nb or int(ch.batches[nb - 1]["status"]) not in (3, 4, 7):
        return consumed, ch
    ch.errors.pop(nb - 1, None)
    return int(ch.batches[nb - 1]["position"]), ch._replace(batches=ch.batches[:nb - 1])


def _bytes_left(f: BinaryIO) -> Optional[int]:
    """How many bytes ``f`` holds past its position, when it is a regular file."""
    try:
        st = os.fstat(f.fileno())
        return max(st.st_size - f.tell(), 0) if stat.S_ISREG(st.st_mode) else None
    except (AttributeError, OSError, ValueError):
        return None


def _scan_file(f: BinaryIO, name: Optional[str], verify_crc: bool, chunk: int,
               limits: Limits, pool: List[Any], salvage: bool = False) -> Iterator[Chunk]:
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
        consumed, ch = _scan_window(name, base, window, verify_crc, eof, limits, pool, salvage)
        if len(buf) < _MAX_RESYNC_WINDOW:
            consumed, ch = _defer_tail_error(ch, eof, consumed)
        if len(ch.batches):
            yield ch
        ch = None       # its arrays' buffers go back to the pool unless the caller kept them
        window.release()
        if consumed == 0:
            if eof:
                return  # cannot happen: a final scan consumes everything
            # The first batch is larger than the window: grow to hold it, but never past
            # what the file holds (a length beyond it is a cut or hostile batch, which the
            # final scan reports); a stream of unknown size grows as its bytes arrive.
            need = len(buf) * 2
            left = _bytes_left(f)
            if filled >= 12 and left is not None:
                (blen,) = struct.unpack_from(">i", buf, 8)
                if 0 < blen <= limits.max_batch_size:
                    need = max(need, min(blen + 12, filled + left))
            buf.extend(bytes(max(need - len(buf), 1)))
            continue
        rest = filled - consumed
        buf[:rest] = buf[consumed:filled]
        filled = rest
        base += consumed
        if eof and filled == 0:
            return


def _chunks(source: Source, verify_crc: bool, chunk: int, limits: Limits,
            pool: Optional[List[Any]] = None, salvage: bool = False) -> Iterator[Chunk]:
    # The scanner's output buffers, reused from window to window while no chunk holds them.
    pool = [] if pool is None else pool
    if isinstance(source, (bytes, bytearray, memoryview)):
        mv = memoryview(source).cast("B")
        off = 0
        while off < len(mv):
            # windows of `chunk` bytes (a batch longer than that gets a window of its own)
            end = min(len(mv), off + max(chunk, 1))
            final = end == len(mv)
            consumed, ch = _scan_window(None, off, mv[off:end], verify_crc, final, limits, pool,
                                        salvage)
            consumed, ch = _defer_tail_error(ch, final, consumed)
            if len(ch.batches):
                yield ch
            ch = None
            if consumed == 0:
                if final:
                    break
                end = len(mv)
                consumed, ch = _scan_window(None, off, mv[off:end], verify_crc, True, limits,
                                            pool, salvage)
                if len(ch.batches):
                    yield ch
                ch = None
                if consumed == 0:
                    break
            off += consumed
        return
    if isinstance(source, (str, os.PathLike)):
        for path in log_files(source):
            _check_regular(path)
            with open(path, "rb", buffering=0) as f:
                yield from _scan_file(f, path, verify_crc, chunk, limits, pool,  # type: ignore[arg-type]
                                      salvage)
        return
    if hasattr(source, "readinto"):
        yield from _scan_file(source, getattr(source, "name", None), verify_crc, chunk, limits,  # type: ignore[arg-type]
                              pool, salvage)
        return
    if isinstance(source, (list, tuple)):
        for s in source:
            yield from _chunks(s, verify_crc, chunk, limits, pool, salvage)
        return
    raise ArgumentTypeError("source", f"cannot read records from {type(source).__name__}: expected "
                                      "a path, a binary file, bytes-like data or a list of those")


def _check_regular(path: str) -> None:
    """A segment is a regular file: opening a FIFO would block until a writer comes (a
    hang), and a device never ends; both are refused before ``open``."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputPathError(path, "no such file (or a dangling symbolic link)") from None
    if not stat.S_ISREG(mode):
        raise InputPathError(path, "not a regular file (a FIFO, socket or device): not read")


def iter_chunks(source: Source, *, verify_crc: bool = True, chunk_size: int = DEFAULT_CHUNK,
                max_batch_size: int = DEFAULT_MAX_BATCH,
                max_inflated_size: int = DEFAULT_MAX_INFLATED,
                salvage: bool = False) -> Iterator[Chunk]:
    """Yield the scanner's arrays for each window of ``source`` (see :class:`Chunk`), in
    log order: the fast path for readers that decode records themselves, in bulk.

    Corrupt batches are in ``Chunk.errors`` (batch index -> :class:`BatchError`); nothing
    is raised for them, and none of their records is in the chunk (``records_parsed`` 0,
    no rows in ``records``, no ``inflated`` entry).  ``salvage=True`` (forensic tools
    only) leaves the records that could be read in: every row whose ``batch_index`` is a
    key of ``Chunk.errors`` then comes from a failed batch."""
    return _chunks(source, verify_crc, chunk_size, Limits(max_batch_size, max_inflated_size),
                   salvage=salvage)


def _records_of(ch: Chunk, i: int) -> List[Record]:
    b = ch.batches[i]
    if i in ch.inflated:
        buf, recs = ch.inflated[i]
    else:
        n = int(b["records_parsed"])
        first = int(b["first_record"])
        buf, recs = ch.data, ch.records[first:first + n]
    if not len(recs):
        return []
    keys = _impl.records.slices(buf, recs["key_pos"], recs["key_len"])
    vals = _impl.records.slices(buf, recs["value_pos"], recs["value_len"])
    out = []
    hc = recs["headers_count"].tolist()
    hp = recs["headers_pos"].tolist()
    for j, (off, ts, attr, size) in enumerate(zip(recs["offset"].tolist(), recs["timestamp"].tolist(),
                                                  recs["attributes"].tolist(), recs["size"].tolist())):
        headers = _impl.records.parse_headers(buf, hp[j], hc[j]) if hc[j] else []
        out.append(Record(off, ts, keys[j], vals[j], headers, attr, size))
    return out


def _batch_of(ch: Chunk, i: int, errors: str) -> RecordBatch:
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
                 max_batch_size: int = DEFAULT_MAX_BATCH,
                 max_inflated_size: int = DEFAULT_MAX_INFLATED,
                 salvage: bool = False) -> Iterator[RecordBatch]:
    """Yield every record batch of ``source`` in log order, records included.

    ``errors="report"`` (default) yields a corrupt batch with ``.error`` set and no
    records, and goes on; ``"raise"`` raises :class:`CorruptRecordError` at the first one.
    ``salvage=True`` (forensic tools only) gives a corrupt batch the records that could
    be read from it: they come with their batch, whose ``.error`` is set.
    """
    _check_errors_arg(errors)
    for ch in _chunks(source, verify_crc, chunk_size, Limits(max_batch_size, max_inflated_size),
                      salvage=salvage):
        for i in range(len(ch.batches)):
            yield _batch_of(ch, i, errors)


def iter_records(source: Source, **kwargs: Any) -> Iterator[Tuple[RecordBatch, Record]]:
    """Yield ``(batch, record)`` for every record (control records included) of the batches
    that read cleanly (keywords as :func:`iter_batches`; with ``salvage=True`` a record of a
    failed batch comes with that batch, whose ``.error`` is set)."""
    for batch in iter_batches(source, **kwargs):
        for rec in batch.records:
            yield batch, rec


_BATCH_COLS = ("base_offset", "partition_leader_epoch", "producer_id", "producer_epoch",
               "attributes", "position")


def iter_columns(source: Source, *, verify_crc: bool = True, errors: str = "report",
                 chunk_size: int = DEFAULT_CHUNK, max_batch_size: int = DEFAULT_MAX_BATCH,
                 max_inflated_size: int = DEFAULT_MAX_INFLATED,
                 with_headers: bool = False, salvage: bool = False) -> Iterator[Dict[str, Any]]:
    """Columnar reading: one dict of columns per chunk of the log.

    Columns (one row per record): ``offset``, ``timestamp``, ``attributes`` (record),
    ``key``/``value`` (lists of bytes or None), ``headers_count``, ``batch_base_offset``,
    ``batch_partition_leader_epoch``, ``batch_producer_id``, ``batch_producer_epoch``,
    ``batch_attributes``, ``batch_position`` (NumPy arrays), ``file`` (str or None);
    ``headers`` (list of lists) with ``with_headers=True``.  Also ``"errors"``: the
    :class:`BatchError` of this chunk's corrupt batches, none of whose records is in the
    columns.  ``salvage=True`` (forensic tools only) puts the records that could be read
    from corrupt batches in too and adds a ``damaged`` column (bool array), True on each
    of those rows.
    """
    _check_errors_arg(errors)
    for ch in _chunks(source, verify_crc, chunk_size, Limits(max_batch_size, max_inflated_size),
                      salvage=salvage):
        if errors == "raise" and ch.errors:
            e = next(iter(ch.errors.values()))
            raise CorruptRecordError(e.reason + ": " + e.message, file=e.file,
                                     position=e.position)
        parts_r = [ch.records]
        keys = _impl.records.slices(ch.data, ch.records["key_pos"], ch.records["key_len"])
        vals = _impl.records.slices(ch.data, ch.records["value_pos"], ch.records["value_len"])
        hdrs: List[Any] = []
        if with_headers:
            hdrs = [(_impl.records.parse_headers(ch.data, p, c) if c else [])
                    for p, c in zip(ch.records["headers_pos"].tolist(),
                                    ch.records["headers_count"].tolist())]
        for i in sorted(ch.inflated):
            raw, r = ch.inflated[i]
            parts_r.append(r)
            keys += _impl.records.slices(raw, r["key_pos"], r["key_len"])
            vals += _impl.records.slices(raw, r["value_pos"], r["value_len"])
            if with_headers:
                hdrs += [(_impl.records.parse_headers(raw, p, c) if c else [])
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
        if salvage:
            cols["damaged"] = (np.isin(bi, np.fromiter(ch.errors, np.int64, len(ch.errors)))
                               if ch.errors else np.zeros(len(bi), bool))
        cols["errors"] = [ch.errors[i] for i in sorted(ch.errors)]
        yield cols


def read_columns(source: Source, **kwargs: Any) -> Dict[str, Any]:
    """All of :func:`iter_columns` concatenated (``file`` becomes a per-row list; keywords
    as :func:`iter_columns`).  Loads the whole log: prefer :func:`iter_columns` for big logs."""
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
