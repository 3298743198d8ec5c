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
from kcodec import records as _KR
from kcodec.records import _records
from .records import _value_schema, decode_record, record_types

try:  # pyarrow is optional: without it every record takes the generic path
    import pyarrow as _pa
    from kcodec import arrow as _KA
except ImportError:  # pragma: no cover
    _pa = None

__all__ = ["iter_offset_columns", "KIND_COMMIT", "KIND_TOMBSTONE", "KIND_OTHER", "KIND_CONTROL"]

KIND_COMMIT, KIND_TOMBSTONE, KIND_OTHER, KIND_CONTROL = 0, 1, 2, 3
_NUM = ("key_type", "value_version", "partition", "offset", "leader_epoch",
        "commit_timestamp", "expire_timestamp")


def _int16_at(b: np.ndarray, pos: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The big-endian int16 at each position (-1 where fewer than 2 bytes)."""
    ok = length >= 2
    p = np.where(ok, pos, 0)
    if len(b) < 2:
        return np.full(len(pos), -1, np.int16)
    v = ((b[p].astype(np.uint16) << 8) | b[np.minimum(p + 1, len(b) - 1)]).view(np.int16)
    return np.where(ok, v, np.int16(-1))


def _commit_types() -> Dict[int, Any]:
    """Record types whose key is (group, topic, partition) and whose value is an offset
    commit: the columns' kinds 0 and 1."""
    return {t: info for t, info in record_types().items()
            if info.name in ("OffsetCommit", "LegacyOffsetCommit")}


def _ok(batch: Any) -> np.ndarray:
    return batch.column(batch.num_columns - 1).is_null().to_numpy(zero_copy_only=False)


class _Strings:
    """String cells scattered over n rows ("" elsewhere), from several batches' columns."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.parts: List[Any] = []
        self.where = np.full(n, -1, np.int64)
        self.count = 0

    def put(self, col: Any, take: np.ndarray, rows: np.ndarray) -> None:
        self.parts.append(col.take(_pa.array(take)))
        self.where[rows] = np.arange(self.count, self.count + len(rows))
        self.count += len(rows)

    def array(self) -> Any:
        if not self.parts:
            return _pa.array([""] * self.n, _pa.string())
        src = _pa.concat_arrays(self.parts)
        idx = _pa.array(self.where, mask=self.where < 0)
        return src.take(idx).fill_null("")


def _commit_columns(buf: Any, recs: np.ndarray, control: np.ndarray) -> Dict[str, Any]:
    """kind (0 commit, 1 commit tombstone, 2 other) and the commits' columns."""
    n = len(recs)
    b = np.frombuffer(buf, np.uint8)
    kp, kl = recs["key_pos"], recs["key_len"]
    vp, vl = recs["value_pos"], recs["value_len"]
    key_type = _int16_at(b, kp, kl)
    out: Dict[str, Any] = {
        "kind": np.full(n, KIND_OTHER, np.int8), "key_type": key_type,
        "value_version": np.full(n, -1, np.int16), "partition": np.zeros(n, np.int32),
        "offset": np.zeros(n, np.int64), "leader_epoch": np.full(n, -1, np.int32),
        "commit_timestamp": np.zeros(n, np.int64), "expire_timestamp": np.full(n, -1, np.int64),
    }
    if _pa is None:
        out["group"] = out["topic"] = out["metadata"] = [""] * n
        return out
    group, topic, meta = _Strings(n), _Strings(n), _Strings(n)
    kind = out["kind"]
    all_vv = _int16_at(b, vp, vl)
    for rtype, info in _commit_types().items():
        rows = np.flatnonzero(~control & (key_type == rtype))
        if not len(rows):
            continue
        kb = _KA.decode_program(kcodec.program(info.key, 0), _KA.Slices(buf, kp[rows], kl[rows]), skip=2)
        good = _ok(kb)
        rows, keys = rows[good], np.flatnonzero(good)
        out["partition"][rows] = kb.column("partition").fill_null(0).to_numpy(zero_copy_only=False)[keys]
        group.put(kb.column("group"), keys, rows)
        topic.put(kb.column("topic"), keys, rows)
        kind[rows[vl[rows] < 0]] = KIND_TOMBSTONE
        vv = all_vv[rows]
        out["value_version"][rows] = np.where(vl[rows] >= 2, vv, -1)
        for v in np.unique(vv[vl[rows] >= 2]).tolist():
            schema = _value_schema(rtype, info, v) if v >= 0 else None
            if schema is None or v > kcodec.spec(schema).valid_versions.highest:
                continue        # newer than known: the generic path reads it with newer="latest"
            vrows = rows[(vv == v) & (vl[rows] >= 2)]
            vb = _KA.decode_program(kcodec.program(schema, v), _KA.Slices(buf, vp[vrows], vl[vrows]), skip=2)
            good = _ok(vb)
            names = vb.schema.names
            # a topic id or unknown tagged fields: the record keeps them on the generic path
            if "topicId" in names:
                tid = vb.column("topicId").fill_null(bytes(16)).to_pylist()
                good &= np.array([t == bytes(16) for t in tid], bool)
            if _KA.UNKNOWN_TAGS_KEY in names:
                good &= vb.column(_KA.UNKNOWN_TAGS_KEY).fill_null([]).value_lengths().to_numpy(zero_copy_only=False) == 0
            idx = np.flatnonzero(good)
            vrows = vrows[good]
            kind[vrows] = KIND_COMMIT
            for name, key in (("offset", "offset"), ("leaderEpoch", "leader_epoch"),
                              ("commitTimestamp", "commit_timestamp"),
                              ("expireTimestamp", "expire_timestamp")):
                if name in names:
                    out[key][vrows] = vb.column(name).fill_null(0).to_numpy(zero_copy_only=False)[idx]
            meta.put(vb.column("metadata"), idx, vrows)
    # key decoded but value neither a commit nor a tombstone: the generic path's
    out["value_version"][kind == KIND_OTHER] = -1
    out["group"], out["topic"], out["metadata"] = group.array(), topic.array(), meta.array()
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
        keys = _records.slices(buf, sel["key_pos"], sel["key_len"])
        vals = _records.slices(buf, sel["value_pos"], sel["value_len"])
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
    reading has reached.
    """
    verify = kwargs.pop("verify_crc", True)
    chunk = kwargs.pop("chunk_size", _KR.DEFAULT_CHUNK)
    maxb = kwargs.pop("max_batch_size", _KR.DEFAULT_MAX_BATCH)
    if kwargs:
        raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
    for ch in _KR._chunks(source, verify, chunk, maxb):
        parts = [(ch.data, ch.records)] + [ch.inflated[i] for i in sorted(ch.inflated)]
        outs = []
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
            # compressed batches' records come after the window's: restore log order
            order = np.argsort(res["offset"], kind="stable")
            if not np.all(order[:-1] < order[1:]) if len(order) > 1 else False:
                inv = np.empty_like(order)
                inv[order] = np.arange(len(order))
                for k, v in list(res.items()):
                    if k in ("other", "control"):
                        res[k] = sorted(((int(inv[i]), r) for i, r in v), key=lambda t: t[0])
                    elif isinstance(v, np.ndarray):
                        res[k] = v[order]
                    elif _pa is not None and isinstance(v, _pa.Array):
                        res[k] = v.take(_pa.array(order))
                    else:
                        res[k] = [v[j] for j in order.tolist()]
        res["errors"] = [ch.errors[i] for i in sorted(ch.errors)]
        res["file"] = ch.file
        res["end"] = ch.base + (int(ch.batches["next_position"].max()) if len(ch.batches) else 0)
        yield res
