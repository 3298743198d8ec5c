"""Columnar ``__consumer_offsets`` decoding: the fast path for big logs.

Offset commits (the bulk of any ``__consumer_offsets`` log) are bulk-decoded by the
generic spec engine (:func:`kcodec.arrow.decode_framed`) straight from the segment
buffer: one pass over the keys, each read with the program its int16 record type picks,
and one over their values, each read with the program its int16 version picks, both
reading the record array's key/value fields in place.  Every other record (group
metadata, KIP-848/share/streams records, commits with a topic id or unknown tagged
fields, newer versions, anything that does not decode) goes through
:func:`kcodec.offsets.records.decode_record` and is returned as objects.  Tests check
that both paths agree record for record.
"""
from __future__ import annotations

import gc
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

import kcodec
from kcodec import log as _KR
from .records import _value_schema, decode_record, record_types

try:  # pyarrow is optional: without it every record takes the generic path
    import pyarrow as _pa
    import pyarrow.compute as _pc
    from kcodec import arrow as _KA
    from kcodec.framing import INT16_VERSION
except ImportError:  # pragma: no cover
    _pa = None

__all__ = ["iter_offset_columns", "record_columns", "KIND_COMMIT", "KIND_TOMBSTONE", "KIND_OTHER", "KIND_CONTROL"]

KIND_COMMIT, KIND_TOMBSTONE, KIND_OTHER, KIND_CONTROL = 0, 1, 2, 3
_NUM = ("key_type", "value_version", "partition", "offset", "leader_epoch",
        "commit_timestamp", "expire_timestamp")


def _int16_at(buf: Any, pos: np.ndarray, length: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The big-endian int16 at the start of each slice (-1 where fewer than 2 bytes), read
    in place (strided fields of the record array included), and per slice the bytes read
    (2; 0 or 1 when shorter; -1 a null slice)."""
    heads, have = kcodec.slice_heads(buf, pos, length, 2)
    v = heads.view(">i2").reshape(-1).astype(np.int16)
    np.copyto(v, -1, where=have != 2)
    return v, have


def _commit_types() -> Dict[int, Any]:
    """Record types whose key is (group, topic, partition) and whose value is an offset
    commit: the columns' kinds 0 and 1."""
    return {t: info for t, info in record_types().items()
            if info.name in ("OffsetCommit", "LegacyOffsetCommit")}


def _values(col: Any, dtype: Any, width: int = 1) -> np.ndarray:
    """A fixed-width column's values, zero copy (null rows hold 0)."""
    return np.frombuffer(col.buffers()[1], dtype)[col.offset * width:(col.offset + len(col)) * width]


def _empty_strings(n: int) -> Any:
    """n empty strings (no nulls), built from buffers (see kcodec.arrow.from_numpy)."""
    return _pa.Array.from_buffers(_pa.string(), n, [None, _pa.py_buffer(np.zeros(n + 1, np.int32)),
                                                    _pa.py_buffer(b"")])


def _text(col: Any) -> Any:
    """A string column with its nulls (rows that are not commits) read as ""."""
    return _pa.Array.from_buffers(_pa.string(), len(col), [None] + col.buffers()[1:], offset=col.offset)


def _no_text(col: Any) -> bool:
    """A string column without a byte of text (all empty or null)."""
    off = np.frombuffer(col.buffers()[1], np.int32)
    return len(col) == 0 or off[col.offset] == off[col.offset + len(col)]


def _merge(cur: Any, col: Any, mask: np.ndarray) -> Any:
    """String column `col` where `mask`, `cur` elsewhere (`cur` None: "" elsewhere); `cur`
    is "" on the rows of `mask`."""
    col = _text(col)
    if cur is None or _no_text(cur):
        return col
    if _no_text(col):       # e.g. commit metadata, nearly always empty
        return cur
    return _pc.if_else(_KA.from_numpy(mask), col, cur)


def _blank(col: Any, mask: np.ndarray) -> Any:
    """`col` with "" on the rows of `mask`."""
    return _pc.if_else(_KA.from_numpy(mask), "", col) if mask.any() and not _no_text(col) else col


# value columns: (field, output column, its value on rows that are not commits, dtype)
_NUMBERS = (("offset", "offset", 0, np.int64), ("leaderEpoch", "leader_epoch", -1, np.int32),
            ("commitTimestamp", "commit_timestamp", 0, np.int64),
            ("expireTimestamp", "expire_timestamp", -1, np.int64))


Table = Dict[int, Any]      # version (or record type) -> program


def _groups(table: Table) -> List[Table]:
    """A {version: program} table split into tables whose programs share columns
    (:func:`kcodec.arrow.fits`), the newest version's first: one pass each."""
    out: List[Table] = []
    for v in sorted(table, reverse=True):
        p = table[v]
        for g in out:
            if _KA.common_layout(list(g.values()) + [p]) is not None:
                g[v] = p
                break
        else:
            out.append({v: p})
    return out


def _same(a: Any, b: Any) -> bool:
    return a is b or (_KA.fits(a, b) and _KA.fits(b, a))


_PROGRAMS: Any = None


def _programs() -> Tuple[List[Table], List[Tuple[Tuple[int, ...], List[Tuple[Table, List[str]]]]]]:
    """The key program of each commit record type (in tables sharing columns), and the
    value programs by version: per set of record types that read their values alike
    (usually all of them), its tables of programs sharing columns (:func:`_groups`)
    with the fields read from them.  Versions above a value's newest are left out: the
    generic path reads them with ``newer="latest"``."""
    global _PROGRAMS
    if _PROGRAMS is None:
        types = _commit_types()
        keys = {t: kcodec.program(info.key, 0) for t, info in types.items()}
        tables: Dict[int, Table] = {}
        for t, info in types.items():
            top = max(kcodec.spec(_value_schema(t, info, v)).valid_versions.highest
                      for v in range(info.value_max + 2))
            tables[t] = {}
            for v in range(top + 1):
                schema = _value_schema(t, info, v)
                if v <= kcodec.spec(schema).valid_versions.highest:
                    tables[t][v] = kcodec.program(schema, v)
        sets: List[Tuple[List[int], Table]] = []
        for t, table in tables.items():
            for ts, tab in sets:
                if set(tab) == set(table) and all(_same(tab[v], table[v]) for v in tab):
                    ts.append(t)
                    break
            else:
                sets.append(([t], table))
        _PROGRAMS = (_groups(keys), [(tuple(ts), [(g, _fields(g)) for g in _groups(tab)])
                                     for ts, tab in sets])
    return _PROGRAMS


def _fields(table: Table) -> List[str]:
    """The value fields the columns take from a table's batch (not the topic id nor the
    unknown tags: a row with tagged fields is checked apart, :func:`_tagged_plain`)."""
    tree = _KA.common_layout([table[v] for v in sorted(table)])
    names = {f.name for f in _KA.arrow_type(tree.name, tree.version)}
    return [f for f, *_ in _NUMBERS if f in names] + ["metadata"]


def _tagged_plain(buf: Any, vp: np.ndarray, vl: np.ndarray, table: Table,
                  rows: np.ndarray) -> np.ndarray:
    """Of values with top-level tagged fields (rows: their indices), those without a
    topic id or unknown tagged fields: the others keep them on the generic path."""
    b = _KA.decode_framed(table, _KA.Slices(buf, vp, vl, rows), INT16_VERSION).batch
    good = np.ones(len(rows), bool)
    names = b.schema.names
    if "topicId" in names:
        ids = _values(b.column("topicId"), np.uint64, 2).reshape(-1, 2)
        good &= (ids[:, 0] | ids[:, 1]) == 0
    if _KA.UNKNOWN_TAGS_KEY in names:
        col = b.column(_KA.UNKNOWN_TAGS_KEY)
        off = np.frombuffer(col.buffers()[1], np.int32)[col.offset:col.offset + len(col) + 1]
        good &= off[1:] == off[:-1]
    return good


def _number(cur: Any, col: Any, mine: np.ndarray, clean: bool, default: int, dtype: Any) -> np.ndarray:
    """`cur` (None: `default` everywhere) with `col`'s values on the rows of `mine`;
    `clean`: `col` is null (0) on every other row."""
    vals = _values(col, dtype)
    if cur is None:
        return vals if clean and default == 0 else np.where(mine, vals, dtype(default))
    if not cur.flags.writeable:
        cur = cur.copy()
    np.copyto(cur, vals, where=mine)
    return cur


def _numbers_filled(out: Dict[str, Any], n: int) -> Dict[str, Any]:
    """`out` with the number columns no pass wrote, at their values for rows that are not
    commits."""
    for _, key, default, dtype in _NUMBERS + ((None, "partition", 0, np.int32),):
        if key not in out:
            out[key] = np.full(n, default, dtype)
    return out


def _commit_columns(buf: Any, recs: np.ndarray, control: np.ndarray) -> Dict[str, Any]:
    """kind (0 commit, 1 commit tombstone, 2 other) and the commits' columns.

    The keys take one pass of the column decoder (:func:`kcodec.arrow.decode_framed`,
    each key read with its record type's program), the values of those that decoded
    another (each read with its version's program; a second only when a log mixes
    versions whose columns differ), each reading the record array's key/value fields in
    place over all the chunk's rows, the rows it does not decode null: the columns come
    out full length in row order, with no gathering of positions nor scattering of
    results."""
    n = len(recs)
    kp, kl = recs["key_pos"], recs["key_len"]
    vp, vl = recs["value_pos"], recs["value_len"]
    if _pa is None:
        return _numbers_filled({"kind": np.full(n, KIND_OTHER, np.int8),
                                "key_type": _int16_at(buf, kp, kl)[0],
                                "value_version": np.full(n, -1, np.int16),
                                "group": [""] * n, "topic": [""] * n, "metadata": [""] * n}, n)
    keys, values = _programs()
    ntypes = sum(len(g) for g in keys)
    out: Dict[str, Any] = {}
    group = topic = meta = None
    key_type: Any = None
    keyed = np.zeros(n, bool)
    for g in keys:
        kf = _KA.decode_framed(g, _KA.Slices(buf, kp, kl), INT16_VERSION, select=~control & ~keyed)
        key_type = kf.versions
        kb = kf.batch
        out["partition"] = _number(out.get("partition"), kb.column("partition"), kf.decoded,
                                   True, 0, np.int32)
        group = _merge(group, kb.column("group"), kf.decoded)
        topic = _merge(topic, kb.column("topic"), kf.decoded)
        keyed |= kf.decoded
    out["key_type"] = key_type
    commit = np.zeros(n, bool)
    unplain = None              # values decoded but left to the generic path
    vv = have = None
    if keyed.any():
        for types, tables in values:
            mine = keyed if len(types) == ntypes else keyed & np.isin(key_type, types)
            left = mine
            for table, fields in tables:
                if vv is not None:      # a version of this table among the rows left?
                    if not left.any() or not np.isin(vv[left], list(table)).any():
                        continue
                vf = _KA.decode_framed(table, _KA.Slices(buf, vp, vl), INT16_VERSION, select=left,
                                       fields=fields)
                vv, have = vf.versions, vf.have
                done = vf.decoded
                plain = done
                tagged = np.flatnonzero(vf.tagged)
                if len(tagged):
                    plain = done.copy()
                    plain[tagged] = _tagged_plain(buf, vp, vl, table, tagged)
                    bad = done & ~plain
                    unplain = bad if unplain is None else unplain | bad
                clean = not len(tagged) or bool(plain[tagged].all())
                vb = vf.batch
                for name, key, default, dtype in _NUMBERS:
                    if name in fields:
                        out[key] = _number(out.get(key), vb.column(name), plain, clean, default, dtype)
                meta = _merge(meta, vb.column("metadata"), plain)
                commit |= plain
                left = left & ~done
    kind = np.full(n, KIND_OTHER, np.int8)
    if have is not None:
        tomb = keyed & (have == -1)
        np.copyto(kind, KIND_TOMBSTONE, where=tomb)
        np.copyto(kind, KIND_COMMIT, where=commit)
        out["value_version"] = np.where(commit, vv, np.int16(-1))
    else:
        tomb = np.zeros(n, bool)
        out["value_version"] = np.full(n, -1, np.int16)
    out["kind"] = kind
    _numbers_filled(out, n)
    empty = _empty_strings(n) if group is None or meta is None else None
    # a key whose value takes the generic path (kind 2): "" as on every other row
    if group is not None:
        stray = keyed & ~commit & ~tomb
        group, topic = _blank(group, stray), _blank(topic, stray)
    if meta is not None and unplain is not None:
        meta = _blank(meta, unplain)
    out["group"] = group if group is not None else empty
    out["topic"] = topic if topic is not None else empty
    out["metadata"] = meta if meta is not None else empty
    return out


def _decode_part(buf: Any, recs: np.ndarray, control: np.ndarray) -> Tuple[Dict[str, Any], List[Tuple[int, Any]]]:
    cols = _commit_columns(buf, recs, control)
    kind = cols["kind"]
    kind[control] = KIND_CONTROL
    others: List[Tuple[int, Any]] = []
    mv = memoryview(buf).cast("B")
    ctl: List[Tuple[int, str]] = []
    for i in np.flatnonzero(control).tolist():
        r = recs[i]
        kp, kl = int(r["key_pos"]), int(r["key_len"])
        if kl >= 4:
            ctl.append((i, _KR.CONTROL_TYPES.get(int.from_bytes(mv[kp + 2:kp + 4], "big", signed=True),
                                                 "UNKNOWN")))
    cols["control"] = ctl
    idx = np.flatnonzero(kind == KIND_OTHER)
    if len(idx):
        sel = recs[idx]
        keys = _KR.slices(buf, sel["key_pos"], sel["key_len"])
        vals = _KR.slices(buf, sel["value_pos"], sel["value_len"])
        # many new, acyclic dicts and lists: keep the cyclic GC from rescanning everything
        # alive each few hundred of them (a tenth of the pass's CPU)
        gc_was = gc.isenabled()
        gc.disable()
        try:
            for i, key, val in zip(idx.tolist(), keys, vals):
                others.append((i, decode_record(key, val, errors="report")))  # type: ignore[arg-type]
        finally:
            if gc_was:
                gc.enable()
    return cols, others


def iter_offset_columns(source: Any, **kwargs: Any) -> Iterator[Dict[str, Any]]:
    """Yield one dict of columns per chunk of the log (log order within a chunk):

    ``offset``, ``timestamp``, ``batch_producer_id``, ``batch_attributes`` (per record);
    ``kind`` (0 offset commit, 1 offset-commit tombstone, 2 other record, 3 control
    record); ``control``: ``[(row, "COMMIT"/"ABORT"/...)]`` for kind 3; for kinds 0/1: ``group``, ``topic`` (Arrow string arrays, "" on other
    rows), ``partition``, ``key_type``; for kind 0 also ``commit_offset``,
    ``leader_epoch`` (-1 = none), ``metadata``, ``commit_timestamp``,
    ``expire_timestamp`` (-1 = none), ``value_version``; ``other``: ``[(row, OffsetsRecord)]``
    for kind 2; ``errors``: the chunk's corrupt batches; ``file``; ``end``: the file position
    reading has reached; ``chunk``: the :class:`~kcodec.log.Chunk` the columns come from.
    """
    verify = kwargs.pop("verify_crc", True)
    chunk = kwargs.pop("chunk_size", _KR.DEFAULT_CHUNK)
    maxb = kwargs.pop("max_batch_size", _KR.DEFAULT_MAX_BATCH)
    maxi = kwargs.pop("max_inflated_size", _KR.DEFAULT_MAX_INFLATED)
    if kwargs:
        raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
    # a broker's log dir holds every topic: the group coordinator's partitions only
    source = _KR.topic_source(source, _KR.OFFSETS_TOPIC)
    for ch in _KR.iter_chunks(source, verify_crc=verify, chunk_size=chunk, max_batch_size=maxb,
                              max_inflated_size=maxi):
        parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
        outs = []
        # (a corrupt batch's records are not in the chunk: kcodec.log withholds them)
        for buf, recs in parts:
            battr = ch.batches["attributes"][recs["batch_index"]] if len(recs) else np.empty(0, np.int16)
            control = (battr & 0x20) != 0
            cols, others = _decode_part(buf, recs, control)
            outs.append((recs, cols, others))
        # one part in the common case (no compressed batches): no copying
        if len(outs) == 1:
            recs, cols, others = outs[0]
            n = len(recs)
            res: Dict[str, Any] = {
                "offset": recs["offset"], "timestamp": recs["timestamp"],
                "batch_producer_id": ch.batches["producer_id"][recs["batch_index"]],
                "batch_attributes": ch.batches["attributes"][recs["batch_index"]],
                "kind": cols["kind"],
                "group": cols["group"], "topic": cols["topic"],
                "metadata": cols["metadata"],
                "commit_offset": cols["offset"], "other": others, "control": cols["control"],
            }
            for k in _NUM:
                if k != "offset":
                    res[k] = cols[k]
        else:
            res = {"offset": [], "timestamp": [], "batch_producer_id": [], "batch_attributes": [],
                   "kind": [], "group": [], "topic": [], "metadata": [], "commit_offset": [],
                   "other": [], "control": []}
            for k in _NUM:
                if k != "offset":
                    res[k] = []
            base = 0
            for recs, cols, others in outs:
                n = len(recs)
                res["offset"].append(recs["offset"])
                res["timestamp"].append(recs["timestamp"])
                res["batch_producer_id"].append(ch.batches["producer_id"][recs["batch_index"]])
                res["batch_attributes"].append(ch.batches["attributes"][recs["batch_index"]])
                res["kind"].append(cols["kind"])
                res["commit_offset"].append(cols["offset"])
                for k in ("group", "topic", "metadata"):
                    res[k].append(cols[k])
                for k in _NUM:
                    if k != "offset":
                        res[k].append(cols[k])
                res["other"] += [(i + base, r) for i, r in others]
                res["control"] += [(i + base, c) for i, c in cols["control"]]
                base += n
            for k, v in list(res.items()):
                if k in ("other", "control"):
                    continue
                if k in ("group", "topic", "metadata"):
                    res[k] = (_pa.concat_arrays(v) if _pa is not None else [x for p in v for x in p])
                else:
                    res[k] = np.concatenate(v)
            # compressed batches' records come after the window's: restore log order (by
            # batch, not by offset: offsets are not under the CRC and may run backwards)
            order = np.argsort(np.concatenate([recs["batch_index"] for recs, _, _ in outs]),
                               kind="stable")
            if not np.all(order[:-1] < order[1:]) if len(order) > 1 else False:
                inv = np.empty_like(order)
                inv[order] = np.arange(len(order))
                for k, v in list(res.items()):
                    if k in ("other", "control"):
                        res[k] = sorted(((int(inv[i]), r) for i, r in v), key=lambda t: t[0])
                    elif isinstance(v, np.ndarray):
                        res[k] = v[order]
                    elif _pa is not None and isinstance(v, _pa.Array):
                        res[k] = v.take(_KA.from_numpy(order))
                    else:
                        res[k] = [v[j] for j in order.tolist()]
        res["errors"] = [ch.errors[i] for i in sorted(ch.errors)]
        res["file"] = ch.file
        res["chunk"] = ch
        res["end"] = ch.base + (int(ch.batches["next_position"].max()) if len(ch.batches) else 0)
        yield res


_TRANSACTIONAL, _CONTROL = 0x10, 0x20     # batch attribute bits


def record_columns(key: Any, value: Any, offset: Any, timestamp: Any, *, producer_id: Any = None,
                   transactional: Any = None, control_type: Any = None) -> Dict[str, Any]:
    """The columns :func:`iter_offset_columns` gives for one chunk, from records that are
    already out of their batches: ``__consumer_offsets`` rows read by Spark's Kafka source or
    a dump of it, one source partition in offset order.  ``key``/``value``: binary Arrow
    arrays or lists of bytes (None for null); ``offset``, ``timestamp`` (ms): integers per
    row; ``producer_id``, ``transactional`` (bool), ``control_type`` ("COMMIT"/"ABORT" on
    control records, None elsewhere): per row, or None when the rows carry none.  The keys
    and values go through the same bulk decoder as a segment's, so
    :meth:`kcodec.offsets.Folder.add_columns` folds them as it folds the log."""
    if _pa is None:         # pragma: no cover
        raise ImportError("record_columns needs pyarrow")
    n = len(key)
    if len(value) != n:
        raise ValueError(f"key and value differ in length ({n} and {len(value)})")
    kv = _pa.concat_arrays([_as_large_binary(key), _as_large_binary(value)])
    ends = np.frombuffer(kv.buffers()[1], np.int64, 2 * n + 1)
    lens = np.diff(ends)
    if (lens > 0x7FFFFFFF).any():
        raise ValueError("a key or value over 2 GiB")
    if kv.null_count:
        lens[np.asarray(kv.is_null(), bool)] = -1
    recs = np.zeros(n, _KR.RECORD_DTYPE)
    recs["offset"] = _ints(offset, n, 0)
    recs["timestamp"] = _ints(timestamp, n, -1)
    recs["key_pos"], recs["key_len"] = ends[:n], lens[:n]
    recs["value_pos"], recs["value_len"] = ends[n:2 * n], lens[n:]
    types = None if control_type is None else _pa.array(control_type, _pa.string())
    control = np.zeros(n, bool) if types is None else np.asarray(types.is_valid(), bool)
    buf = kv.buffers()[2] or _pa.py_buffer(b"")
    cols, others = _decode_part(buf, recs, control)
    if types is not None:        # a dump says which control record it was
        cols["control"] = [(i, types[i].as_py()) for i in np.flatnonzero(control).tolist()]
    attrs = np.where(control, np.int16(_CONTROL), np.int16(0))
    if transactional is not None:
        attrs |= np.where(np.asarray(_pa.array(transactional, _pa.bool_()).fill_null(False), bool),
                          np.int16(_TRANSACTIONAL), np.int16(0))
    res: Dict[str, Any] = {
        "offset": recs["offset"], "timestamp": recs["timestamp"],
        "batch_producer_id": _ints(producer_id, n, -1), "batch_attributes": attrs.astype(np.int16),
        "kind": cols["kind"], "group": cols["group"], "topic": cols["topic"],
        "metadata": cols["metadata"], "commit_offset": cols["offset"], "other": others,
        "control": cols["control"], "errors": [], "file": None, "chunk": None, "end": 0}
    for k in _NUM:
        if k != "offset":
            res[k] = cols[k]
    return res


def _as_large_binary(col: Any) -> Any:
    if not isinstance(col, (_pa.Array, _pa.ChunkedArray)):
        col = _pa.array(col, _pa.large_binary())
    if isinstance(col, _pa.ChunkedArray):
        col = col.combine_chunks()
    return col if col.type == _pa.large_binary() else col.cast(_pa.large_binary())


def _ints(col: Any, n: int, default: int) -> np.ndarray:
    if col is None:
        return np.full(n, default, np.int64)
    a = _pa.array(col, _pa.int64()) if not isinstance(col, _pa.Array) else col.cast(_pa.int64())
    return np.asarray(a.fill_null(default), np.int64)

