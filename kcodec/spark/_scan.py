"""Task-side reading of Kafka log files for Spark: files opened through ``pyarrow.fs``
(local, S3, HDFS, GCS), split into byte ranges at batch boundaries, scanned by
:func:`kcodec.log.iter_chunks` (the C scanner) and turned into Arrow record batches
straight from the scanner's arrays: no Python object per record.

Nothing here imports PySpark: the functions run inside Spark's Python workers.
"""
from __future__ import annotations

import os
import re
import struct
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow as pa

import kcodec
from kcodec import log as _log

__all__ = ["LOG_SCHEMA", "WIRE_SCHEMA", "FILE_COLUMNS", "Split", "open_input", "arrow_filesystem", "plan_splits",
           "split_batches", "chunk_batches", "topic_partition", "DECODERS", "register_decoder"]

_HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
LOG_SCHEMA = pa.schema([
    ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")), ("timestampType", pa.int32()),
    ("key", pa.binary()), ("value", pa.binary()), ("headers", pa.list_(_HEADER)),
    ("batch_base_offset", pa.int64()), ("producer_id", pa.int64()), ("producer_epoch", pa.int16()),
    ("partition_leader_epoch", pa.int32()), ("is_transactional", pa.bool_()),
    ("is_control", pa.bool_()), ("control_type", pa.string()),
    ("file", pa.string()), ("batch_position", pa.int64()), ("error", pa.string()),
])
_DIR = re.compile(r"^(.+)-(\d+)$")

# What the data source sends the JVM: the columns that are the same on every row of a
# file (``topic``, ``partition``, ``file``) are left out and ``_file``, the file's number
# in the query's file list, stands for them; ``read_log`` puts them back as JVM
# expressions over that number.  A ~90-byte string and an int per row then cross no
# Arrow IPC and are written into each Spark row once instead of twice (Spark copies a
# Python data source's rows into ``UnsafeRow``s twice: after the Arrow batch and in the
# scan's projection).
FILE_COLUMNS = ("topic", "partition", "file")
WIRE_SCHEMA = pa.schema([f for f in LOG_SCHEMA if f.name not in FILE_COLUMNS] + [pa.field("_file", pa.int32())])


def topic_partition(path: str) -> "Tuple[Optional[str], Optional[int]]":
    """(topic, partition) from a segment's ``<topic>-<partition>`` directory name."""
    m = _DIR.match(os.path.basename(os.path.dirname(path.rstrip("/"))))
    return (m.group(1), int(m.group(2))) if m else (None, None)


# --------------------------------------------------------------------------- files

def _local(path: str) -> Optional[str]:
    if "://" not in path and not path.startswith("file:"):
        return path
    u = urlparse(path)
    return unquote(u.path) if u.scheme == "file" else None


def _arrow_fs(path: str) -> Tuple[Any, str]:
    """A ``pyarrow.fs`` filesystem and the path within it (Hadoop's ``s3a``/``gs`` schemes
    mapped to Arrow's); raises when Arrow has no filesystem for the scheme."""
    from pyarrow import fs
    u = urlparse(path)
    scheme = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}.get(u.scheme, u.scheme)
    return fs.FileSystem.from_uri(scheme + path[len(u.scheme):])


def arrow_filesystem(path: str) -> Tuple[Any, str]:
    """A ``pyarrow.fs`` filesystem for ``path`` (local or any scheme Arrow has) and the
    path within it; raises when Arrow has none for its scheme."""
    loc = _local(path)
    if loc is not None:
        from pyarrow import fs
        return fs.LocalFileSystem(), loc
    return _arrow_fs(path)


def readable_by_arrow(path: str) -> bool:
    """Whether tasks can open ``path`` themselves (local or a ``pyarrow.fs`` scheme)."""
    try:
        arrow_filesystem(path)
        return True
    except Exception:
        return False


class _Range:
    """``[start, end)`` of a file as a binary stream with ``readinto`` (what kcodec.log
    reads) and the file's name (what its errors name)."""

    def __init__(self, f: Any, name: str, start: int, end: Optional[int]) -> None:
        self.f = f
        self.name = name
        self.left = None if end is None else end - start
        if start:
            f.seek(start)

    def readinto(self, b: Any) -> int:
        mv = memoryview(b)
        if self.left is not None:
            if self.left <= 0:
                return 0
            mv = mv[:self.left]
        n = self.f.readinto(mv)
        if self.left is not None and n:
            self.left -= n
        return n

    def close(self) -> None:
        self.f.close()


def open_input(path: str, start: int = 0, end: Optional[int] = None) -> _Range:
    """Bytes ``[start, end)`` of ``path`` (``end`` None: to the end) for kcodec.log."""
    loc = _local(path)
    if loc is not None:
        f: Any = open(loc, "rb", buffering=0)
    else:
        fs, p = _arrow_fs(path)
        f = fs.open_input_file(p)
    return _Range(f, path, start, end)


# --------------------------------------------------------------------------- splits

class Split(NamedTuple):
    """Bytes ``[start, end)`` of one file (``end`` None: to its end), starting and ending
    at batch boundaries."""
    path: str
    start: int
    end: Optional[int]


def _index_positions(path: str) -> Optional[List[int]]:
    """Batch start positions from the segment's offset index (``.index``; Kafka writes an
    entry every ``index.interval.bytes``), or None when there is none."""
    if not path.endswith(".log"):
        return None
    ipath = path[:-4] + ".index"
    try:
        r = open_input(ipath)
    except Exception:
        return None
    try:
        data = bytearray()
        buf = bytearray(1 << 20)
        while True:
            n = r.readinto(buf)
            if not n:
                break
            data += buf[:n]
    finally:
        r.close()
    a = np.frombuffer(bytes(data[:len(data) // 8 * 8]), ">i4").reshape(-1, 2)
    pos = a[:, 1].astype(np.int64)
    # a preallocated index ends in zero entries; positions only grow
    keep = np.concatenate([[True], pos[1:] > pos[:-1]]) if len(pos) else np.zeros(0, bool)
    stop = np.flatnonzero(~keep)
    pos = pos[:stop[0]] if len(stop) else pos
    return pos[pos > 0].tolist()


def _walk_positions(path: str, every: int, size: int) -> List[int]:
    """Batch starts about ``every`` bytes apart, by reading each batch header's length
    (12 bytes a batch; the batches themselves are not read)."""
    loc = _local(path)
    if loc is not None:
        f: Any = open(loc, "rb")
    else:
        fs, p = _arrow_fs(path)
        f = fs.open_input_file(p)
    out: List[int] = []
    try:
        pos = 0
        nxt = every
        while pos + 12 <= size:
            f.seek(pos + 8)
            head = f.read(4)
            if len(head) < 4:
                break
            (blen,) = struct.unpack(">i", head)
            if blen <= 0 or blen > _log.DEFAULT_MAX_BATCH:
                break           # corrupt from here on: the range reading it reports it
            pos += 12 + blen
            if pos >= nxt and pos < size:
                out.append(pos)
                nxt = pos + every
    finally:
        f.close()
    return out


def plan_splits(files: List[Tuple[str, int]], split_bytes: int) -> List[Split]:
    """Each ``(path, size)`` cut into ranges of about ``split_bytes`` at batch boundaries
    (from the ``.index`` file when there is one, else a walk over the batch headers)."""
    out: List[Split] = []
    for path, size in files:
        if size <= split_bytes or split_bytes <= 0:
            out.append(Split(path, 0, None))
            continue
        idx = _index_positions(path)
        if idx:
            cuts: List[int] = []
            want = split_bytes
            for p in idx:
                if p >= want:
                    cuts.append(p)
                    want = p + split_bytes
        else:
            cuts = _walk_positions(path, split_bytes, size)
        bounds = [0] + cuts
        out += [Split(path, s, e) for s, e in zip(bounds, cuts + [None])]  # type: ignore[list-item]
    return out


# --------------------------------------------------------------------------- Arrow from the scanner

def _binary(buf: Any, pos: np.ndarray, length: np.ndarray) -> pa.Array:
    """The slices ``buf[pos:pos + length]`` (length < 0: null) as a binary array, gathered
    by NumPy."""
    n = len(pos)
    pos = np.asarray(pos, np.int64)
    length = np.asarray(length)
    valid = length >= 0
    lens = np.where(valid, length, 0).astype(np.int64)
    offs = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=offs[1:])
    total = int(offs[-1])
    if total:
        src = np.frombuffer(buf, np.uint8)
        some = lens > 0
        starts = pos[some]
        ends = starts + lens[some]
        if (starts[1:] >= ends[:-1]).all():
            # the scanner's records lie in buffer order, so the slices are sorted and
            # disjoint: mark their bytes (+1 at a start, -1 at an end) and keep those, one
            # byte of mask per byte of the buffer instead of an index per byte copied
            mark = np.zeros(len(src) + 1, np.int8)
            mark[starts] += 1
            mark[ends] -= 1
            data = pa.py_buffer(src[np.cumsum(mark[:-1], dtype=np.int8).view(bool)])
        else:
            idx = np.arange(total, dtype=np.int64)
            idx += np.repeat(pos - offs[:-1], lens)
            data = pa.py_buffer(src[idx])
    else:
        data = pa.py_buffer(b"")
    nulls = n - int(valid.sum())
    bits = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    typ = pa.binary() if total < (1 << 31) else pa.large_binary()
    arr = pa.Array.from_buffers(typ, n, [bits, pa.py_buffer(offs.astype(np.int32 if typ == pa.binary() else np.int64)),
                                         data], null_count=nulls)
    return arr


def _headers(buf: Any, recs: np.ndarray) -> pa.Array:
    counts = recs["headers_count"].astype(np.int32)
    offs = np.zeros(len(recs) + 1, np.int32)
    np.cumsum(counts, out=offs[1:])
    rows = np.flatnonzero(counts)
    keys: List[Any] = []
    vals: List[Any] = []
    for i in rows.tolist():         # records with headers only (none in Kafka's internal topics)
        for k, v in _log._impl.records.parse_headers(buf, int(recs["headers_pos"][i]), int(counts[i])):
            keys.append(k)
            vals.append(v)
    child = pa.StructArray.from_arrays([pa.array(keys, pa.string()), pa.array(vals, pa.binary())],
                                       fields=list(_HEADER))
    return pa.ListArray.from_arrays(pa.array(offs), child, type=pa.list_(_HEADER))


_CONTROL_NAMES = dict(_log.CONTROL_TYPES)


def _control_types(buf: Any, recs: np.ndarray, ctl: np.ndarray) -> pa.Array:
    n = len(recs)
    if not ctl.any():
        return pa.nulls(n, pa.string())
    heads, have = kcodec.slice_heads(buf, recs["key_pos"], recs["key_len"], 4)
    t = heads[:, 2:4].copy().view(">i2").reshape(-1).astype(np.int32)
    names = np.full(n, None, object)
    rows = np.flatnonzero(ctl)
    names[rows] = [_CONTROL_NAMES.get(int(x), "UNKNOWN") if h >= 4 else "UNKNOWN"
                   for x, h in zip(t[rows].tolist(), have[rows].tolist())]
    return pa.array(names, pa.string())


def _const(v: Any, n: int, typ: pa.DataType) -> pa.Array:
    return pa.repeat(pa.scalar(v, typ), n)


def _part_batch(ch: Any, buf: Any, recs: np.ndarray, topic: Optional[str], partition: Optional[int],
                path: str, shift: int, file_id: Optional[int] = None) -> pa.RecordBatch:
    n = len(recs)
    b = ch.batches
    bi = recs["batch_index"]
    battr = b["attributes"][bi].astype(np.int16)
    ctl = (battr & 0x20) != 0
    from kcodec.arrow import from_numpy
    ts = from_numpy(np.ascontiguousarray(recs["timestamp"], np.int64) * 1000)
    cols = [
        from_numpy(np.ascontiguousarray(recs["offset"], np.int64)),
        ts.view(pa.timestamp("us", tz="UTC")),
        from_numpy(((battr & 0x08) != 0).astype(np.int32)),
        _binary(buf, recs["key_pos"], recs["key_len"]), _binary(buf, recs["value_pos"], recs["value_len"]),
        _headers(buf, recs),
        from_numpy(b["base_offset"][bi].astype(np.int64)), from_numpy(b["producer_id"][bi].astype(np.int64)),
        from_numpy(b["producer_epoch"][bi].astype(np.int16)),
        from_numpy(b["partition_leader_epoch"][bi].astype(np.int32)),
        from_numpy((battr & 0x10) != 0), from_numpy(ctl), _control_types(buf, recs, ctl),
        from_numpy(b["position"][bi].astype(np.int64) + (ch.base + shift)),
        pa.nulls(n, pa.string()),
    ]
    return _with_file(cols, n, topic, partition, path, file_id)


_WIRE_TYPES = [f.type for f in WIRE_SCHEMA][:-1]


def _with_file(cols: List[pa.Array], n: int, topic: Optional[str], partition: Optional[int], path: str,
               file_id: Optional[int]) -> pa.RecordBatch:
    """The batch of :data:`WIRE_SCHEMA` columns ``cols`` (without ``_file``): with ``_file``
    (``file_id`` given) or as :data:`LOG_SCHEMA` (the file's constant columns filled in)."""
    cols = [c if c.type == t else c.cast(t) for c, t in zip(cols, _WIRE_TYPES)]
    if file_id is not None:
        return pa.RecordBatch.from_arrays(cols + [_const(file_id, n, pa.int32())], schema=WIRE_SCHEMA)
    const = {"topic": _const(topic, n, pa.string()), "partition": _const(partition, n, pa.int32()),
             "file": _const(path, n, pa.string())}
    it = iter(cols)
    return pa.RecordBatch.from_arrays([const[f.name] if f.name in const else next(it) for f in LOG_SCHEMA],
                                      schema=LOG_SCHEMA)


def _error_batch(errs: List[Any], topic: Optional[str], partition: Optional[int], path: str,
                 shift: int, file_id: Optional[int] = None) -> pa.RecordBatch:
    m = len(errs)
    e: Dict[str, Any] = {f.name: pa.nulls(m, f.type) for f in WIRE_SCHEMA}
    e["batch_position"] = pa.array([x.position + shift for x in errs], pa.int64())
    e["error"] = pa.array([f"{x.reason}: {x.message} (skipped to {x.skipped_to + shift})" for x in errs],
                          pa.string())
    return _with_file([e[f.name] for f in WIRE_SCHEMA][:-1], m, topic, partition, path, file_id)


def chunk_batches(ch: Any, topic: Optional[str], partition: Optional[int], path: str,
                  shift: int = 0, file_id: Optional[int] = None) -> Iterator[pa.RecordBatch]:
    """One :class:`kcodec.log.Chunk` as record batches of :data:`LOG_SCHEMA` (with
    ``file_id``: of :data:`WIRE_SCHEMA`) in log order; the records of a corrupt batch are
    never rows: the batch is one row with ``error`` set (file and position)."""
    corrupt = None
    if ch.errors:
        corrupt = np.zeros(len(ch.batches), bool)
        corrupt[list(ch.errors)] = True
    parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
    out = []
    for buf, recs in parts:
        if corrupt is not None and len(recs):
            recs = recs[~corrupt[recs["batch_index"]]]
        if len(recs):
            out.append((recs["batch_index"], _part_batch(ch, buf, recs, topic, partition, path, shift, file_id)))
    if len(out) == 1:
        yield out[0][1]
    elif out:
        # compressed batches' records come after the window's: put them back in log order
        order = np.argsort(np.concatenate([bi for bi, _ in out]), kind="stable")
        t = pa.Table.from_batches([b for _, b in out]).take(pa.array(order))
        yield from t.combine_chunks().to_batches()
    if ch.errors:
        yield _error_batch([ch.errors[i] for i in sorted(ch.errors)], topic, partition, path, shift, file_id)


def split_batches(split: Split, *, chunk_size: int = _log.DEFAULT_CHUNK,
                  file_id: Optional[int] = None) -> Iterator[pa.RecordBatch]:
    """The rows of one :class:`Split` as Arrow batches of :data:`LOG_SCHEMA` (with
    ``file_id``: of :data:`WIRE_SCHEMA`, what the data source sends)."""
    topic, partition = topic_partition(split.path)
    src = open_input(split.path, split.start, split.end)
    try:
        for ch in _log.iter_chunks(src, chunk_size=chunk_size):
            yield from chunk_batches(ch, topic, partition, split.path, split.start, file_id)
    finally:
        src.close()


def bytes_batches(data: Any, path: str) -> Iterator[pa.RecordBatch]:
    """The rows of a whole file's bytes (the path for filesystems only Hadoop reads)."""
    topic, partition = topic_partition(path)
    for ch in _log.iter_chunks(data):
        yield from chunk_batches(ch, topic, partition, path, 0)


# --------------------------------------------------------------------------- decoders

class Decoder(NamedTuple):
    """A ``read_log(decode=...)`` kernel: the column it adds, its Arrow type (Spark's
    types) given the options, and the kernel (key, value, options) -> that column."""
    column: str
    arrow_type: Callable[[Dict[str, Any]], pa.DataType]
    kernel: Callable[[pa.Array, pa.Array, Dict[str, Any]], pa.Array]


def _offsets_options(opts: Dict[str, Any]) -> Tuple[str, Any, Any]:
    """``mode``, ``record_types`` and ``fields`` from :func:`~kcodec.spark.from_consumer_offsets`'
    options (unknown ones refused)."""
    from . import _kernels as K
    mode, rest = K.check_mode(dict(opts))
    rts = K._selected(rest.pop("record_types", None))
    fields = K.fields_option(rest.pop("fields", None))
    if rest:
        raise ValueError(f"unknown options: {sorted(rest)}")
    return mode, rts, fields


def _offsets_type(opts: Dict[str, Any]) -> pa.DataType:
    from . import _kernels as K
    from ._types import spark_arrow_type
    _, rts, fields = _offsets_options(opts)
    return spark_arrow_type(K.project_type(K.offsets_type(rts), fields), nullable_top=True)


def _offsets_kernel(key: pa.Array, value: pa.Array, opts: Dict[str, Any]) -> pa.Array:
    from . import _kernels as K
    mode, rts, fields = _offsets_options(opts)
    return K.decode_offsets(key, value, mode=mode, record_types=rts, fields=fields, spark=True)


DECODERS: Dict[str, Decoder] = {"offsets": Decoder("decoded", _offsets_type, _offsets_kernel)}


def register_decoder(name: str, decoder: Decoder) -> None:
    """Add a ``read_log(decode=name)`` kernel (e.g. ``"metadata"`` for ``__cluster_metadata``)."""
    DECODERS[name] = decoder


def decoded_schema(decode: Optional[str], opts: Dict[str, Any], base: pa.Schema = LOG_SCHEMA) -> pa.Schema:
    """``base`` (:data:`LOG_SCHEMA` or :data:`WIRE_SCHEMA`) with the decoder's column."""
    if decode is None:
        return base
    d = DECODERS[decode]
    return base.append(pa.field(d.column, d.arrow_type(opts)))


def _null_rows(arr: pa.Array, keep: np.ndarray) -> pa.Array:
    """``arr`` with the rows where ``keep`` is False null, its values' buffers shared."""
    if arr.offset:
        arr = pa.concat_arrays([arr])       # a bitmap of our own starts at bit 0
    valid = keep & arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else keep
    bits = pa.py_buffer(np.packbits(valid, bitorder="little"))
    nulls = len(arr) - int(valid.sum())
    if pa.types.is_struct(arr.type):        # the children as they are, only the struct's bitmap new
        return pa.Array.from_buffers(arr.type, len(arr), [bits], null_count=nulls,
                                     children=[arr.field(i) for i in range(arr.type.num_fields)])
    return pa.Array.from_buffers(arr.type, len(arr), [bits] + arr.buffers()[1:], null_count=nulls)


def decode_batch(b: pa.RecordBatch, decode: Optional[str], opts: Dict[str, Any]) -> pa.RecordBatch:
    """``b`` with the decoder's column: decoded on the data rows, null on control records
    and corrupt-batch rows."""
    if decode is None:
        return b
    d = DECODERS[decode]
    typ = d.arrow_type(opts)
    data = np.logical_not(b.column("is_control").fill_null(True).to_numpy(zero_copy_only=False))
    data &= b.column("error").is_null().to_numpy(zero_copy_only=False)
    if data.all():
        col = d.kernel(b.column("key"), b.column("value"), opts)
    elif not data.any():
        col = pa.nulls(len(b), typ)
    else:
        # the whole batch in one call, with the key and value of the other rows (control
        # records, corrupt-batch rows) nulled in place (a row null in both is not decoded),
        # and their results nulled: no copy of the batch's rows to leave them out
        col = _null_rows(d.kernel(_null_rows(b.column("key"), data), _null_rows(b.column("value"), data), opts),
                         data)
    if col.type != typ:
        col = col.cast(typ)
    return pa.RecordBatch.from_arrays(list(b.columns) + [col],
                                      schema=b.schema.append(pa.field(d.column, typ)))
