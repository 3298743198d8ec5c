"""Columnar ``__consumer_offsets`` decoding: the fast path for big logs.

Offset commits (the bulk of any ``__consumer_offsets`` log) are bulk-decoded by the
generic spec engine (:func:`kcodec.arrow.decode_programs`) straight from the segment
buffer: the record type and value version of every record are read vectorised, then the
keys, and the values of every known version, go through the column decoder in one pass
each as record slices (skipping the int16 version prefix).  Every other record (group metadata,
KIP-848/share/streams records, commits with a topic id or unknown tagged fields, newer
versions, anything that does not decode) goes through
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
except ImportError:  # pragma: no cover
    _pa = None

__all__ = ["iter_offset_columns", "KIND_COMMIT", "KIND_TOMBSTONE", "KIND_OTHER", "KIND_CONTROL"]

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


def _shared(progs: List[Any]) -> bool:
    return any(all(_KA.fits(q, t) for q in progs) for t in progs)


def _decode_by(buf: Any, pos: np.ndarray, length: np.ndarray, progs: List[Any],
               which: np.ndarray) -> List[Tuple[Any, np.ndarray]]:
    """Row r decoded with progs[which[r]] (-1: not decoded), skipping the int16 prefix:
    per group of programs that share columns (versions of one message, usually all of
    them: one pass) its full-length batch and the rows it decoded."""
    groups: List[List[int]] = []
    for i, p in enumerate(progs):
        for g in groups:
            if _shared([progs[j] for j in g] + [p]):
                g.append(i)
                break
        else:
            groups.append([i])
    out = []
    for g in groups:
        b = _KA.decode_programs([p if j in g else None for j, p in enumerate(progs)],
                                _KA.Slices(buf, pos, length), which, skip=2)
        if len(g) == len(progs):
            rows = which >= 0
        else:
            mine = np.zeros(len(progs) + 1, bool)   # which -1 reads the last entry
            mine[g] = True
            rows = mine[which]
        out.append((b, rows & _ok(b)))
    return out


def _commit_columns(buf: Any, recs: np.ndarray, control: np.ndarray) -> Dict[str, Any]:
    """kind (0 commit, 1 commit tombstone, 2 other) and the commits' columns.

    The keys of every commit record type take one pass of the column decoder and the
    values of every known version another (:func:`kcodec.arrow.decode_programs`), each
    reading the record array's key/value fields in place and running over all the
    chunk's rows, the rows it is not for null: its columns come out full length in row
    order, with no gathering of positions nor scattering of results."""
    n = len(recs)
    kp, kl = recs["key_pos"], recs["key_len"]
    vp, vl = recs["value_pos"], recs["value_len"]
    key_type = _int16_at(buf, kp, kl)[0]
    out: Dict[str, Any] = {
        "kind": np.full(n, KIND_OTHER, np.int8), "key_type": key_type,
        "value_version": np.full(n, -1, np.int16), "partition": np.zeros(n, np.int32),
        "offset": np.zeros(n, np.int64), "leader_epoch": np.full(n, -1, np.int32),
        "commit_timestamp": np.zeros(n, np.int64), "expire_timestamp": np.full(n, -1, np.int64),
    }
    if _pa is None:
        out["group"] = out["topic"] = out["metadata"] = [""] * n
        return out
    types = _commit_types()
    data = ~control
    kwhich = np.full(n, -1, np.int8)
    for i, rtype in enumerate(types):
        np.copyto(kwhich, i, where=data & (key_type == rtype))
    group = topic = meta = None
    keyed = np.zeros(n, bool)
    if (kwhich >= 0).any():
        kprogs = [kcodec.program(info.key, 0) for info in types.values()]
        for kb, rows in _decode_by(buf, kp, kl, kprogs, kwhich):
            keyed |= rows
            np.copyto(out["partition"], _values(kb.column("partition"), np.int32), where=rows)
            group = _merge(group, kb.column("group"), rows)
            topic = _merge(topic, kb.column("topic"), rows)
    kind = out["kind"]
    commit = np.zeros(n, bool)
    unplain = np.zeros(n, bool)     # values decoded but left to the generic path
    if keyed.any():
        vv, have = _int16_at(buf, vp, vl)
        np.copyto(kind, KIND_TOMBSTONE, where=keyed & (have == -1))
        has = keyed & (have == 2)
        vprogs: List[Any] = []
        vwhich = np.full(n, -1, np.int8)
        for i, (rtype, info) in enumerate(types.items()):
            mine = has & (kwhich == i)
            seen = np.bincount(vv[mine].view(np.uint16), minlength=1)   # cheaper than np.unique
            for v in np.flatnonzero(seen).astype(np.uint16).view(np.int16).tolist():
                schema = _value_schema(rtype, info, v) if v >= 0 else None
                if schema is None or v > kcodec.spec(schema).valid_versions.highest:
                    continue    # newer than known: the generic path reads it with newer="latest"
                prog = kcodec.program(schema, v)
                j = next((j for j, p in enumerate(vprogs) if p is prog), len(vprogs))
                if j == len(vprogs):
                    vprogs.append(prog)
                np.copyto(vwhich, j, where=mine & (vv == v))
        for vb, rows in _decode_by(buf, vp, vl, vprogs, vwhich):
            plain = _plain_commits(vb, rows.copy())
            unplain |= rows & ~plain
            commit |= plain
            names = vb.schema.names
            for name, key in _NUMBERS:
                if name in names:
                    np.copyto(out[key], _values(vb.column(name), out[key].dtype), where=plain)
            meta = _merge(meta, vb.column("metadata"), plain)
        np.copyto(kind, KIND_COMMIT, where=commit)
        np.copyto(out["value_version"], vv, where=commit)
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
