"""Typed Arrow out of the engine: bulk decoding into ``pyarrow.RecordBatch``.

The schema comes from the compiled program (:func:`arrow_type`): one field per field of
the version in wire order (regular fields, then tagged fields by tag), named by Kafka's
JSON field names like :func:`kcodec.decode`'s keys; struct per struct, ``list_`` per
array, nullability per version, uuid as ``binary(16)``, string as ``string()``,
bytes/records as ``binary()``, and ``_unknown_tagged_fields:
list<struct<tag: int32, data: binary>>`` on every flexible struct.

:func:`decode` returns the same batch whichever engine is loaded: the C engine appends
every row straight into Arrow buffers (csrc/kc_columns.c); the pure-Python engine
decodes row by row and fills the same buffers from Python.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow as pa

import kcodec
from . import _codec_py
from ._columns import (N_BOOL, N_FIXED, N_LIST, N_STRUCT, N_VAR, UNKNOWN_TAGS_KEY, Node,
                       layout)
from ._program import (T_BOOL, T_FLOAT64, T_INT8, T_INT16, T_INT32, T_INT64, T_STRING,
                       T_UINT16, T_UINT32, T_UUID, Program)
from .errors import DecodeError
from .framing import INT16_VERSION, Frame, VersionPrefix

__all__ = ["arrow_type", "decode", "decode_program", "decode_programs", "decode_framed",
           "FramedBatch", "fits", "common_layout", "Slices", "ERROR_COLUMN", "to_numpy", "from_numpy"]

ERROR_COLUMN = "_error"

_FIXED = {T_INT8: pa.int8(), T_INT16: pa.int16(), T_UINT16: pa.uint16(), T_INT32: pa.int32(),
          T_UINT32: pa.uint32(), T_INT64: pa.int64(), T_FLOAT64: pa.float64(),
          T_UUID: pa.binary(16), T_BOOL: pa.bool_()}


# NumPy <-> Arrow through the buffers: pyarrow's own conversions (``pa.array`` on NumPy or
# lists, ``Array.to_numpy``) import pandas when it is installed (pyarrow 26), half a second
# at the start of every process that decodes.
_NUMPY = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
          pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
          pa.uint64(): np.uint64, pa.float32(): np.float32, pa.float64(): np.float64}
_ARROW = {np.dtype(v): k for k, v in _NUMPY.items()}


def to_numpy(arr: pa.Array) -> np.ndarray:
    """A null-free boolean or numeric Arrow array as NumPy (numbers zero copy, read-only)."""
    if arr.null_count:
        raise ValueError(f"to_numpy: {arr.null_count} null(s) in a {arr.type} array")
    n, off, buf = len(arr), arr.offset, arr.buffers()[1]
    if pa.types.is_boolean(arr.type):
        if n == 0:
            return np.zeros(0, bool)
        return np.unpackbits(np.frombuffer(buf, np.uint8), bitorder="little")[off:off + n].view(bool)
    dtype = _NUMPY.get(arr.type)
    if dtype is None:
        raise TypeError(f"to_numpy: {arr.type} is not a boolean or numeric type")
    if n == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(buf, dtype)[off:off + n]


def from_numpy(a: Any) -> pa.Array:
    """A one-dimensional boolean or numeric NumPy array as an Arrow array without nulls
    (numbers zero copy when contiguous)."""
    a = np.asarray(a)
    a = np.ascontiguousarray(a, a.dtype.newbyteorder("="))     # Arrow is native-endian
    if a.dtype == np.bool_:
        bits = np.packbits(a, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(a), [None, pa.py_buffer(bits)])
    t = _ARROW.get(a.dtype)
    if t is None or a.ndim != 1:
        raise TypeError(f"from_numpy: {a.dtype} x {a.ndim}d is not a 1-d boolean or numeric array")
    return pa.Array.from_buffers(t, len(a), [None, pa.py_buffer(a)])


class Slices(NamedTuple):
    """Rows as slices of one buffer, e.g. a log segment's record values straight from the
    batch scanner: row i is ``buffer[positions[i]:positions[i] + lengths[i]]``, null when
    ``lengths[i] == -1``; with ``take``, row i is slice ``take[i]``.  Strided arrays (the
    fields of the log reader's record array, ``recs["value_pos"]``) are read in place."""
    buffer: Any
    positions: Any        # int64
    lengths: Any          # int32
    take: Any = None      # int64 slice indices, or None


def _node_type(nodes: List[Node], i: int) -> pa.DataType:
    n = nodes[i]
    if n.kind == N_STRUCT:
        return pa.struct([_node_field(nodes, k) for k in n.kids])
    if n.kind == N_LIST:
        return pa.list_(_node_field(nodes, n.kids[0]))
    if n.kind == N_VAR:
        return pa.string() if n.type == T_STRING else pa.binary()
    return _FIXED[n.type]


def _node_field(nodes: List[Node], i: int) -> pa.Field:
    return pa.field(nodes[i].name, _node_type(nodes, i), nullable=nodes[i].nullable)


def _types(prog: Program) -> Dict[str, Any]:
    d = prog.__dict__
    got = d.get("_kc_arrow")
    if got is None:
        nodes = layout(prog)
        st = _node_type(nodes, 0)
        schema = pa.schema([pa.field(f.name, f.type, nullable=True) for f in st]
                           + [pa.field(ERROR_COLUMN, pa.string())])
        got = d["_kc_arrow"] = {"struct": st, "schema": schema,
                                "types": [_node_type(nodes, i) for i in range(len(nodes))]}
    return got


def arrow_type(name: str, version: int, *, newer: str = "error") -> pa.StructType:
    """The Arrow type of message ``name`` at ``version`` (see the module docstring)."""
    return _types(kcodec.program(name, version, newer=newer))["struct"]


def decode(name: str, values: Any, version: int, *, newer: str = "error",
           skip: int = 0, select: Any = None,
           fields: Optional[Sequence[str]] = None) -> pa.RecordBatch:
    """Decode many values of one message and version into a typed ``RecordBatch``.

    ``values``: a pyarrow ``BinaryArray``/``LargeBinaryArray`` (read in place) or
    ``ChunkedArray`` of them, a list of bytes/None, or :class:`Slices`.  ``skip``: bytes
    before each message (e.g. 2 for the int16 version prefix of coordinator records).
    ``select``: a bool per row; rows where it is False are decoded as null rows (one
    full-length batch whose other rows are null, no gathering).  Columns: the fields of
    :func:`arrow_type`, then ``_error`` (string).  A bad row is
    null in every field and ``_error`` holds the text of the :class:`DecodeError` a single
    :func:`kcodec.decode` of it raises; a null row is null everywhere, ``_error`` too.
    ``fields``: the top-level fields to keep (the others are checked, not returned).
    """
    return decode_program(kcodec.program(name, version, newer=newer), values, skip=skip,
                          select=select, fields=fields)


def decode_program(prog: Program, values: Any, *, skip: int = 0, select: Any = None,
                   fields: Optional[Sequence[str]] = None) -> pa.RecordBatch:
    """:func:`decode` for a compiled program."""
    if skip < 0:
        raise ValueError("skip must be >= 0")
    return _engine_rows(prog, values, skip, select, keep=_keep(prog, fields), info=False)[0]


def _keep(prog: Program, fields: Optional[Sequence[str]]) -> Optional[List[int]]:
    """The indexes of top-level ``fields`` of ``prog`` (None: all of them)."""
    if fields is None:
        return None
    cache = prog.__dict__.setdefault("_kc_keep", {})
    key = fields if isinstance(fields, tuple) else tuple(fields)
    got = cache.get(key)
    if got is None:
        nodes = layout(prog)
        names = [nodes[k].name for k in nodes[0].kids]
        missing = [f for f in key if f not in names]
        if missing:
            raise ValueError(f"{prog.name} v{prog.version} has no field {missing[0]!r}")
        got = cache[key] = sorted({names.index(f) for f in key})
    return list(got)


def _fits(into: List[Node], i: int, nodes: List[Node], j: int) -> bool:
    a, b = into[i], nodes[j]
    if (a.kind, a.type, a.nullable, a.default) != (b.kind, b.type, b.nullable, b.default):
        return False
    if i and a.name != b.name:      # the message's own name aside (e.g. a legacy twin)
        return False
    ak, bk = a.kids, b.kids
    if a.kind == N_STRUCT and len(ak) != len(bk):
        # a version that is not flexible in one that is: it takes the defaults of the
        # tagged fields it does not have, and has no unknown tags (kc_columns_accepts)
        flexible = bool(ak) and into[ak[-1]].name == UNKNOWN_TAGS_KEY
        if not (flexible and b.regular == len(bk) == a.regular):
            return False
        ak = ak[:a.regular]
    return len(ak) == len(bk) and all(_fits(into, x, nodes, y) for x, y in zip(ak, bk))


def fits(prog: Program, into: Program) -> bool:
    """Whether rows of ``prog`` decode into the columns of ``into`` (another version of
    the message, or a message of the same layout): the same fields with the same types,
    nullability and defaults, where
    ``into`` may be flexible and ``prog`` not: its rows then take the defaults of
    ``into``'s tagged fields and have no unknown tags, as Kafka reads a field a version
    does not have."""
    if prog is into:
        return True
    d = into.__dict__.setdefault("_kc_fits", {})
    key = (prog.name, prog.version)
    got = d.get(key)
    if got is None:
        got = d[key] = _fits(layout(into), 0, layout(prog), 0)
    return got


def common_layout(progs: Sequence[Program]) -> Optional[Program]:
    """The last of ``progs`` that every other one :func:`fits` into: the program whose
    columns :func:`decode_programs` and :func:`decode_framed` give them (None: their
    columns differ, they need separate passes)."""
    return next((t for t in reversed(progs) if all(fits(p, t) for p in progs)), None)


def _tree(real: List[Program]) -> Program:
    tree = common_layout(real)
    if tree is None:
        raise ValueError("the programs' columns differ: "
                         + ", ".join(f"{p.name} v{p.version}" for p in real))
    return tree


def decode_programs(progs: Any, values: Any, which: Any, *, skip: int = 0) -> pa.RecordBatch:
    """Rows of several versions of a message in one batch: row i decodes with
    ``progs[which[i]]`` (``which[i] < 0`` or a None program: a null row), one pass over
    the rows.  The columns are those of the last program that every other one
    :func:`fits` into (ValueError when none); ``values``, ``skip`` and the ``_error``
    column as in :func:`decode`.  When each row starts with its version,
    :func:`decode_framed` reads it and picks the program itself."""
    progs = list(progs)
    real = [p for p in progs if p is not None]
    if skip < 0:
        raise ValueError("skip must be >= 0")
    if not real or len(progs) > 127:
        raise ValueError("decode_programs takes 1 to 127 programs")
    tree = _tree(real)
    wh = np.asarray(which).reshape(-1)
    if len(wh) and (wh.max() >= len(progs) or wh.min() < -128):
        raise ValueError(f"which must be < {len(progs)}")
    wh = wh.astype(np.int8, copy=False)
    return _engine_rows(tree, values, skip, None, progs, wh, info=False)[0]


class FramedBatch(NamedTuple):
    """What :func:`decode_framed` returns, row for row."""
    batch: pa.RecordBatch   # the decoded rows; null where ``decoded`` is False
    versions: np.ndarray    # the version prefix (int16; int32 for a 4-byte frame), -1 when
                            # the row has fewer bytes (null, short, outside the buffer)
    have: np.ndarray        # int8: prefix bytes present (at most the frame's), -1 a null
                            # row, -2 a slice outside the buffer
    decoded: np.ndarray     # bool: decoded with its version's program
    tagged: np.ndarray      # int32: the tagged fields (known and unknown) in a decoded
                            # row's top-level tag section (0 on every other row)


_MAX_VERSIONS = 1 << 15


def _by_version(progs: Union[Mapping[int, Any], Sequence[Any]]) -> List[Any]:
    if isinstance(progs, Mapping):
        bad = [v for v in progs if not isinstance(v, int) or not 0 <= v < _MAX_VERSIONS]
        if bad:
            raise ValueError(f"versions must be 0..{_MAX_VERSIONS - 1}, not {bad[0]!r}")
        table: List[Any] = [None] * (max(progs) + 1 if progs else 0)
        for v, p in progs.items():
            table[v] = p
        return table
    table = list(progs)
    if len(table) > _MAX_VERSIONS:
        raise ValueError(f"versions must be 0..{_MAX_VERSIONS - 1}")
    return table


def _frame_layout(frame: Frame) -> Tuple[int, int]:
    """(prefix width, bytes before the message) of a version-prefix frame."""
    if not isinstance(frame, VersionPrefix) or frame.latest_supported_from is not None:
        raise ValueError(f"decode_framed reads int16/int32 version prefixes, not {frame!r}")
    return frame.width, 0 if frame.in_body else frame.width


def decode_framed(progs: Union[Mapping[int, Any], Sequence[Any]], values: Any,
                  frame: Frame = INT16_VERSION, *, select: Any = None,
                  fields: Optional[Sequence[str]] = None) -> FramedBatch:
    """Rows that each start with their version (``frame``: a
    :class:`~kcodec.framing.VersionPrefix`, e.g. ``INT16_VERSION`` of coordinator
    records), each decoded with its version's program in one pass: ``progs`` maps a
    version to a compiled program (a dict, or a list indexed by version; None or a
    version it lacks: the row is not decoded, a null row without error).  The columns
    are those of the last program every other one :func:`fits` into (ValueError when
    none), then ``_error``; ``values`` as in :func:`decode`; ``select``: rows where it is
    False are not decoded (their versions are still read).  ``fields``: the top-level
    fields to keep (the others are checked, not returned).  Returns a
    :class:`FramedBatch`: the batch and, per row, the version read, the prefix bytes
    present, whether it decoded, and its top-level tagged fields.

    >>> import kcodec
    >>> from kcodec.arrow import decode_framed
    >>> from kcodec.framing import INT16_VERSION, write_framed
    >>> rows = [write_framed(INT16_VERSION, "OffsetCommitValue", {"offset": 7}, 3), None,
    ...         b"\\x00\\x09 from a newer broker"]
    >>> progs = {v: kcodec.program("OffsetCommitValue", v) for v in (3, 4)}
    >>> got = decode_framed(progs, rows, INT16_VERSION, fields=["offset"])
    >>> got.batch.column("offset").to_pylist(), got.versions.tolist(), got.decoded.tolist()
    ([7, None, None], [3, -1, 9], [True, False, False])
    """
    table = _by_version(progs)
    real = [p for p in table if p is not None]
    if not real:
        raise ValueError("decode_framed needs at least one program")
    width, skip = _frame_layout(frame)
    tree = _tree(real)
    batch, info = _engine_rows(tree, values, skip, select, table, None, width, _keep(tree, fields))
    return FramedBatch(batch, info["versions"], info["have"], info["decoded"], info["tagged"])


def _engine_rows(prog: Program, values: Any, skip: int, select: Any, progs: Any = None,
                 which: Any = None, prefix: int = 0, keep: Optional[List[int]] = None,
                 info: bool = True) -> Tuple[pa.RecordBatch, Dict[str, Any]]:
    """The batch and the rows' info from the engine that is loaded (same result either way;
    without ``info`` the C engine leaves the info out, a few passes over the rows less)."""
    if not kcodec.NATIVE:
        return _python_rows(prog, values, skip, select, progs, which, prefix, keep)
    return _native_rows(prog, values, skip, select, progs, which, prefix, keep, info)


# ------------------------------------------------------------------------------ C engine

def _schema(prog: Program, keep: Optional[List[int]]) -> pa.Schema:
    types = _types(prog)
    if keep is None:
        return types["schema"]
    subs = types.setdefault("sub", {})
    got = subs.get(tuple(keep))
    if got is None:
        full = types["schema"]
        got = subs[tuple(keep)] = pa.schema([full.field(i) for i in keep] + [full.field(ERROR_COLUMN)])
    return got


def _native_rows(prog: Program, values: Any, skip: int, select: Any,
                 progs: Any = None, which: Any = None, prefix: int = 0,
                 keep: Optional[List[int]] = None,
                 want_info: bool = True) -> Tuple[pa.RecordBatch, Dict[str, Any]]:
    """The batch and the rows' info (kcodec._native.decode_columns; ``{}`` without
    ``want_info``)."""
    nodes = layout(prog)
    if isinstance(values, Slices):
        got = kcodec._engine.decode_columns(
            prog, data=values.buffer, positions=values.positions, lengths=values.lengths,
            take=values.take, skip=skip, layout=nodes, select=select, programs=progs,
            which=which, prefix=prefix, keep=keep, info=want_info)
    else:
        got = kcodec._engine.decode_columns(prog, values, skip=skip, layout=nodes, select=select,
                                            programs=progs, which=which, prefix=prefix,
                                            keep=keep, info=want_info)
    bufs, errors = got[0], got[1]
    info = got[2] if want_info else {}
    n = bufs[0][1]
    if errors:
        col: List[Optional[str]] = [None] * n
        for row, text in errors.items():
            col[row] = text
        error_column = _strings(col)
    else:
        error_column = _no_errors(n)
    return _batch(prog, nodes, bufs, keep, error_column), info


_NO_ERRORS: List[pa.Array] = [pa.nulls(0, pa.string())]


def _no_errors(n: int) -> pa.Array:
    """An all-null ``_error`` column of n rows (the last length asked for is kept: a
    stream of batches mostly has one length)."""
    got = _NO_ERRORS[0]
    if len(got) != n:
        got = _NO_ERRORS[0] = pa.nulls(n, pa.string())
    return got


def _batch(prog: Program, nodes: List[Node], bufs: List[Any], keep: Optional[List[int]],
           error_column: pa.Array) -> pa.RecordBatch:
    """The batch of the top-level columns (``keep``: those only) from either engine's
    buffers, then ``_error``."""
    types = _types(prog)
    tt = types["types"]
    kids = nodes[0].kids if keep is None else [nodes[0].kids[i] for i in keep]
    arrays = []
    for k in kids:      # the flat columns inline: this runs per call, whatever the rows
        kind, n, validity, values, offsets, data = bufs[k]
        if n and (kind == N_FIXED or kind == N_BOOL):
            arrays.append(_from_buffers(tt[k], n, [None if validity is None else _py_buffer(validity),
                                                   _py_buffer(values)]))
        elif n and kind == N_VAR:
            arrays.append(_from_buffers(tt[k], n, [None if validity is None else _py_buffer(validity),
                                                   _py_buffer(offsets), _py_buffer(data)]))
        else:
            arrays.append(_array(nodes, tt, bufs, k, types))
    arrays.append(error_column)
    return pa.RecordBatch.from_arrays(arrays, schema=_schema(prog, keep))


_from_buffers = pa.Array.from_buffers
_py_buffer = pa.py_buffer


def _array(nodes: List[Node], types: List[pa.DataType], bufs: List[Any], i: int,
           cache: Dict[str, Any]) -> pa.Array:
    kind, n, validity, values, offsets, data = bufs[i]
    t = types[i]
    if n == 0:          # e.g. the unknown tagged fields of a batch that has none
        empty = cache.setdefault("empty", {})
        got = empty.get(i)
        if got is None:
            got = empty[i] = _build(nodes, types, bufs, i, cache, kind, n, validity, values,
                                    offsets, data, t)
        return got
    return _build(nodes, types, bufs, i, cache, kind, n, validity, values, offsets, data, t)


def _build(nodes: List[Node], types: List[pa.DataType], bufs: List[Any], i: int,
           cache: Dict[str, Any], kind: int, n: int, validity: Any, values: Any,
           offsets: Any, data: Any, t: pa.DataType) -> pa.Array:
    valid = None if validity is None else _py_buffer(validity)
    if kind == N_FIXED or kind == N_BOOL:
        return _from_buffers(t, n, [valid, _py_buffer(values)])
    if kind == N_VAR:
        return _from_buffers(t, n, [valid, _py_buffer(offsets), _py_buffer(data)])
    if kind == N_STRUCT:
        kids = [_array(nodes, types, bufs, k, cache) for k in nodes[i].kids]
        return _from_buffers(t, n, [valid], children=kids)
    assert kind == N_LIST
    kid = _array(nodes, types, bufs, nodes[i].kids[0], cache)
    return _from_buffers(t, n, [valid, _py_buffer(offsets)], children=[kid])


# ----------------------------------------------------------------------- Python engine

_OUTSIDE = object()     # a slice outside its buffer


def _rows(values: Any, select: Any) -> List[Any]:
    if isinstance(values, Slices):
        mv = memoryview(values.buffer).cast("B")
        pos, lens = np.asarray(values.positions).tolist(), np.asarray(values.lengths).tolist()
        if values.take is not None:
            tk = np.asarray(values.take).tolist()
            pos = [pos[t] if 0 <= t < len(pos) else -1 for t in tk]
            lens = [lens[t] if 0 <= t < len(lens) else 0 for t in tk]
        out = [None if ln < 0 else mv[p:p + ln] if 0 <= p and p + ln <= len(mv) else _OUTSIDE
               for p, ln in zip(pos, lens)]
    elif isinstance(values, (pa.Array, pa.ChunkedArray)):
        out = values.to_pylist()
    else:
        out = list(values)
    if select is not None:
        out = [r if s else None for r, s in zip(out, _selected(select, len(out)))]
    return out


def _head(raw: Any, width: int) -> Tuple[int, int]:
    """(version, prefix bytes present) of one row, as kc_columns_decode_rows reads them."""
    if raw is None:
        return -1, -1
    if raw is _OUTSIDE:
        return -1, -2
    mv = memoryview(raw).cast("B")
    if len(mv) < width:
        return -1, len(mv)
    return int.from_bytes(mv[:width], "big", signed=True), width


def _python_rows(prog: Program, values: Any, skip: int, select: Any,
                 progs: Any = None, which: Any = None, prefix: int = 0,
                 keep: Optional[List[int]] = None) -> Tuple[pa.RecordBatch, Dict[str, Any]]:
    """:func:`_native_rows` row by row with the Python engine."""
    nodes = layout(prog)
    rows: List[Optional[Dict[str, Any]]] = []
    errors: List[Optional[str]] = []
    raws = _rows(values, None if prefix else select)
    info: Dict[str, Any] = {}
    if prefix:
        sel = [True] * len(raws) if select is None else _selected(select, len(raws))
        heads = [_head(raw, prefix) for raw in raws]
        info["versions"] = np.array([v for v, _ in heads], np.int16 if prefix == 2 else np.int32)
        info["have"] = np.array([h for _, h in heads], np.int8)
        row_progs: List[Any] = [progs[v] if s and 0 <= v < len(progs) else None
                                for (v, _), s in zip(heads, sel)]
    elif progs is None:
        row_progs = [prog] * len(raws)
    else:
        if len(which) != len(raws):
            raise ValueError(f"which has {len(which)} entries for {len(raws)} rows")
        row_progs = [progs[w] if w >= 0 else None for w in which.tolist()]
    decoded, tagged = [], []
    for raw, p in zip(raws, row_progs):
        value, err = _decode_row(p, raw, skip) if p is not None else (None, None)
        rows.append(None if value is None else to_arrow_value(nodes, 0, value))
        errors.append(err)
        decoded.append(value is not None)
        tagged.append(_root_tagged(p, raw, skip) if value is not None else 0)
    bufs: List[Any] = [None] * len(nodes)
    _fill(nodes, 0, rows, bufs)
    info["decoded"] = np.array(decoded, bool)
    info["tagged"] = np.array(tagged, np.int32)
    return _batch(prog, nodes, bufs, keep, _strings(errors)), info


# Arrow arrays from Python values through the buffers, like the C engine's: pyarrow's own
# conversion of lists (pa.array) imports pandas (see _NUMPY above).

def _bits(flags: List[bool]) -> bytes:
    return np.packbits(np.array(flags, bool), bitorder="little").tobytes()


def _offsets(lens: List[int]) -> np.ndarray:
    out = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=out[1:])
    if out[-1] > 0x7FFFFFFF:
        raise ValueError(f"a column of {out[-1]} bytes or items is over Arrow's 2 GiB (int32 offsets)")
    return out.astype(np.int32)


def _var(vals: List[Any]) -> Tuple[np.ndarray, bytes]:
    """(offsets, data) of strings/bytes (None: empty)."""
    parts = [b"" if v is None else v.encode("utf-8") if isinstance(v, str) else bytes(v)
             for v in vals]
    return _offsets([len(p) for p in parts]), b"".join(parts)


def _fill(nodes: List[Node], i: int, vals: List[Any], bufs: List[Any]) -> None:
    """``bufs[j]`` for node ``i`` and its subtree, as ``decode_columns`` gives them (kind,
    rows, validity, values, offsets, data), from the rows' values in the Python form of
    the column (:func:`to_arrow_value`; None: null, and null in every field below)."""
    n = nodes[i]
    valid = _bits([v is not None for v in vals]) if None in vals else None
    values = offsets = data = None
    if n.kind == N_STRUCT:
        for k in n.kids:
            name = nodes[k].name
            _fill(nodes, k, [None if v is None else v[name] for v in vals], bufs)
    elif n.kind == N_LIST:
        offsets = _offsets([0 if v is None else len(v) for v in vals])
        _fill(nodes, n.kids[0], [x for v in vals if v is not None for x in v], bufs)
    elif n.kind == N_VAR:
        offsets, data = _var(vals)
    elif n.kind == N_BOOL:
        values = _bits([bool(v) for v in vals])
    elif n.type == T_UUID:
        values = b"".join(bytes(16) if v is None else bytes(v) for v in vals)
    else:
        values = np.array([0 if v is None else v for v in vals], _NUMPY[_FIXED[n.type]])
    bufs[i] = (n.kind, len(vals), valid, values, offsets, data)


def _strings(texts: List[Optional[str]]) -> pa.Array:
    """A string array of ``texts`` (None: null)."""
    offsets, data = _var(texts)
    valid = None if None not in texts else pa.py_buffer(_bits([t is not None for t in texts]))
    return pa.Array.from_buffers(pa.string(), len(texts),
                                 [valid, pa.py_buffer(offsets), pa.py_buffer(data)])


def _selected(select: Any, n: int) -> List[bool]:
    sel = np.asarray(select).reshape(-1)
    if len(sel) != n:
        raise ValueError(f"select has {len(sel)} entries for {n} rows")
    return (sel != 0).tolist()


def _root_tagged(prog: Program, raw: Any, skip: int) -> int:
    """The tagged fields in the tag section of a decoded row's top-level struct (its
    regular fields read again to find it)."""
    sp = prog.structs[0]
    if not sp.flexible:
        return 0
    mv = memoryview(raw).cast("B")[skip:]
    r = _codec_py._Reader(mv, 0, len(mv))
    for f in sp.fields:
        _codec_py._read_value(r, prog, f.type, f.flags, f.arg, f.name, 0, False)
    return r.uvarint()


def _decode_row(prog: Program, raw: Any, skip: int) -> Any:
    """(value, None), (None, error text), or (None, None) for a null row."""
    if raw is None:
        return None, None
    if raw is _OUTSIDE:
        return None, str(DecodeError("record slice outside the buffer", message=prog.name,
                                     version=prog.version))
    mv = memoryview(raw).cast("B")
    if len(mv) < skip:
        return None, str(DecodeError(f"needs {skip} bytes of prefix, {len(mv)} left",
                                     message=prog.name, version=prog.version, offset=0))
    mv = mv[skip:]
    try:
        value, end = _codec_py.decode(prog, mv, 0)
    except DecodeError as e:
        return None, str(e)
    if end != len(mv):
        return None, str(DecodeError(f"{len(mv) - end} trailing bytes after the message",
                                     message=prog.name, version=prog.version, offset=end))
    return value, None


def _absent(nodes: List[Node], i: int) -> Any:
    """A node's default (Node.default) in the Python form of its Arrow column."""
    n = nodes[i]
    null, num, raw = n.default
    if null:
        return None
    if n.kind == N_STRUCT:
        return {nodes[k].name: _absent(nodes, k) for k in n.kids}
    if n.kind == N_LIST:
        return []
    if n.kind == N_BOOL:
        return bool(num)
    if n.type == T_UUID:
        return raw or bytes(16)
    if n.type == T_FLOAT64:
        return float(np.int64(num).view(np.float64))
    if n.kind == N_VAR:
        raw = raw or b""
        return raw.decode("utf-8") if n.type == T_STRING else raw
    return num


def to_arrow_value(nodes: List[Node], i: int, value: Any) -> Any:
    """A value as :func:`kcodec.decode` returns it, in the Python form of the Arrow column
    (what ``.to_pylist()`` gives): uuid -> 16 bytes, unknown tagged fields -> a list of
    ``{"tag": ..., "data": ...}`` (empty when none) on every flexible struct."""
    n = nodes[i]
    if value is None:
        return None
    if n.kind == N_STRUCT:
        out = {}
        for k in n.kids:
            name = nodes[k].name
            if name == UNKNOWN_TAGS_KEY and nodes[k].kind == N_LIST:
                out[name] = [{"tag": t, "data": d} for t, d in value.get(name, ())]
            elif name in value:
                out[name] = to_arrow_value(nodes, k, value[name])
            else:       # a tagged field an older version lacks (decode_programs)
                out[name] = _absent(nodes, k)
        return out
    if n.kind == N_LIST:
        return [to_arrow_value(nodes, n.kids[0], v) for v in value]
    if n.type == T_UUID:
        return value.bytes
    return value
