"""Columnar ``__consumer_offsets`` decoding: the fast path for big logs.

Offset commits (the bulk of any ``__consumer_offsets`` log) are bulk-decoded by the
generic spec engine (:func:`kcodec.arrow.decode_program`) straight from the segment
buffer: the record type and value version of every record are read vectorised, then the
keys and each value version's values go through the column decoder as record slices
(skipping the int16 version prefix).  Every other record (group metadata,
KIP-848/share/streams records, commits with a topic id or unknown tagged fields, newer
versions, anything that does not decode) goes through
:func:`kcodec.offsets.records.decode_record` and is returned as objects.  Tests check
that both paths agree record for record.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

import kcodec
from kcodec import log as _KR
from .records import _value_schema, decode_record, record_types

try:  # pyarrow is optional: without it every record takes the generic path
    import pyarrow as _pa
    import pyarrow.compute as _pc
    from kcodec import arrow as _KA
except ImportError:  # pragma: no cover
    _pa = None

__all__ = ["iter_offset_columns", "KIND_COMMIT", "KIND_TOMBSTONE", "KIND_OTHER", "KIND_CONTROL"]

KIND_COMMIT, KIND_TOMBSTONE, KIND_OTHER, KIND_CONTROL = 0, 1, 2, 3
_NUM = ("key_type", "value_version", "partition", "offset", "leader_epoch",
        "commit_timestamp", "expire_timestamp")


def _int16_at(buf: Any, pos: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The big-endian int16 at the start of each slice (-1 where fewer than 2 bytes), read
    in place (strided fields of the record array included)."""
    heads, have = kcodec.slice_heads(buf, pos, length, 2)
    v = heads.view(">i2").reshape(-1)
    return np.where(have == 2, v, np.int16(-1)).astype(np.int16, copy=False)


def _commit_types() -> Dict[int, Any]:
    """Record types whose key is (group, topic, partition) and whose value is an offset
    commit: the columns' kinds 0 and 1."""
    return {t: info for t, info in record_types().items()
            if info.name in ("OffsetCommit", "LegacyOffsetCommit")}


def _ok(batch: Any) -> np.ndarray:
    err = batch.column(batch.num_columns - 1)
    if err.null_count == len(err):
        return np.ones(len(err), bool)
    return _KA.to_numpy(err.is_null())


def _values(col: Any, dtype: Any, width: int = 1) -> np.ndarray:
    """A fixed-width column's values, zero copy (error rows hold 0)."""
    return np.frombuffer(col.buffers()[1], dtype)[col.offset * width:(col.offset + len(col)) * width]


def _empty_strings(n: int) -> Any:
    """n empty strings (no nulls), built from buffers (see kcodec.arrow.from_numpy)."""
    return _pa.Array.from_buffers(_pa.string(), n, [None, _pa.py_buffer(np.zeros(n + 1, np.int32)),
                                                    _pa.py_buffer(b"")])


def _text(col: Any) -> Any:
    """A string column with its nulls (rows that are not commits) read as ""."""
    return _pa.Array.from_buffers(_pa.string(), len(col), [None] + col.buffers()[1:], offset=col.offset)


def _merge(cur: Any, col: Any, mask: np.ndarray) -> Any:
    """String column `col` where `mask`, `cur` elsewhere (`cur` None: "" elsewhere)."""
    col = _text(col)
    if cur is None:
        return col
    return _pc.if_else(_KA.from_numpy(mask), col, cur)


_NUMBERS = (("offset", "offset"), ("leaderEpoch", "leader_epoch"),
            ("commitTimestamp", "commit_timestamp"), ("expireTimestamp", "expire_timestamp"))


def _plain_commits(vb: Any, good: np.ndarray) -> np.ndarray:
    """Rows without a topic id or unknown tagged fields: the others keep them on the
    generic path."""
    names = vb.schema.names
    if "topicId" in names:
        ids = _values(vb.column("topicId"), np.uint64, 2).reshape(-1, 2)
        good &= (ids[:, 0] | ids[:, 1]) == 0
    if _KA.UNKNOWN_TAGS_KEY in names:
        col = vb.column(_KA.UNKNOWN_TAGS_KEY)
        off = np.frombuffer(col.buffers()[1], np.int32)[col.offset:col.offset + len(col) + 1]
        good &= off[1:] == off[:-1]
    return good


def _commit_columns(buf: Any, recs: np.ndarray, control: np.ndarray) -> Dict[str, Any]:
    """kind (0 commit, 1 commit tombstone, 2 other) and the commits' columns.

    Every decode reads the record array's key/value fields in place and runs over all
    the chunk's rows, the rows it is not for selected out (null rows): its columns come
    out full length in row order, with no gathering of positions nor scattering of
    results."""
    n = len(recs)
    kp, kl = recs["key_pos"], recs["key_len"]
    vp, vl = recs["value_pos"], recs["value_len"]
    key_type = _int16_at(buf, kp, kl)
    out: Dict[str, Any] = {
        "kind": np.full(n, KIND_OTHER, np.int8), "key_type": key_type,
        "value_version": np.full(n, -1, np.int16), "partition": np.zeros(n, np.int32),
        "offset": np.zeros(n, np.int64), "leader_epoch": np.full(n, -1, np.int32),
        "commit_timestamp": np.zeros(n, np.int64), "expire_timestamp": np.full(n, -1, np.int64),
    }
    if _pa is None:
        out["group"] = out["topic"] = out["metadata"] = [""] * n
        return out
    group = topic = meta = None
    kind = out["kind"]
    keyed = np.zeros(n, bool)
    unplain = np.zeros(n, bool)     # values decoded but left to the generic path
    data = ~control
    vv = None
    for rtype, info in _commit_types().items():
        mine = data & (key_type == rtype)
        if not mine.any():
            continue
        kb = _KA.decode_program(kcodec.program(info.key, 0), _KA.Slices(buf, kp, kl), skip=2,
                                select=mine)
        mine &= _ok(kb)
        keyed |= mine
        np.copyto(out["partition"], _values(kb.column("partition"), np.int32), where=mine)
        group, topic = _merge(group, kb.column("group"), mine), _merge(topic, kb.column("topic"), mine)
        kind[mine & (vl < 0)] = KIND_TOMBSTONE
        has = mine & (vl >= 2)
        if vv is None:
            vv = _int16_at(buf, vp, vl)
        for v in np.unique(vv[has]).tolist():
            schema = _value_schema(rtype, info, v) if v >= 0 else None
            if schema is None or v > kcodec.spec(schema).valid_versions.highest:
                continue        # newer than known: the generic path reads it with newer="latest"
            these = has & (vv == v)
            vb = _KA.decode_program(kcodec.program(schema, v), _KA.Slices(buf, vp, vl), skip=2,
                                    select=these)
            plain = these & _plain_commits(vb, _ok(vb))
            unplain |= these & ~plain
            these = plain
            kind[these] = KIND_COMMIT
            out["value_version"][these] = v
            names = vb.schema.names
            for name, key in _NUMBERS:
                if name in names:
                    np.copyto(out[key], _values(vb.column(name), out[key].dtype), where=these)
            meta = _merge(meta, vb.column("metadata"), these)
    empty = _empty_strings(n) if group is None or meta is None else None
    # a key whose value takes the generic path (kind 2): "" as on every other row
    stray = keyed & (kind == KIND_OTHER)
    if group is not None and stray.any():
        blank = _KA.from_numpy(stray)
        group = _pc.if_else(blank, "", group)
        topic = _pc.if_else(blank, "", topic)
    if meta is not None and unplain.any():
        meta = _pc.if_else(_KA.from_numpy(unplain), "", meta)
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
        for i, key, val in zip(idx.tolist(), keys, vals):
            others.append((i, decode_record(key, val, errors="report")))  # type: ignore[arg-type]
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
    for ch in _KR.iter_chunks(source, verify_crc=verify, chunk_size=chunk, max_batch_size=maxb,
                              max_inflated_size=maxi):
        parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
        outs = []
        corrupt = None
        if ch.errors:         # a corrupt batch's records are damaged bytes: none reach a result
            corrupt = np.zeros(len(ch.batches), bool)
            corrupt[list(ch.errors)] = True
        for buf, recs in parts:
            if corrupt is not None and len(recs):
                recs = recs[~corrupt[recs["batch_index"]]]
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
