"""Columnar ``__consumer_offsets`` decoding: the fast path for big logs.

Offset commits (the bulk of any ``__consumer_offsets`` log) are split and decoded in C
(:func:`kcodec.log._records.offset_commit_columns`) straight from the segment buffer into
columns; every other record (group metadata, KIP-848/share/streams records, offset
commits with tagged fields or newer versions, non-ASCII names) goes through the generic
spec engine (:func:`kcodec.offsets.records.decode_record`) and is returned as objects.
Tests check that both paths agree record for record.
"""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from kcodec import log as _KR
from kcodec.log._impl import records as _records
from .records import decode_record

try:  # pyarrow is optional: strings come back as Arrow arrays when it is there
    import pyarrow as _pa
except ImportError:  # pragma: no cover
    _pa = None

__all__ = ["iter_offset_columns", "KIND_COMMIT", "KIND_TOMBSTONE", "KIND_OTHER", "KIND_CONTROL"]

KIND_COMMIT, KIND_TOMBSTONE, KIND_OTHER, KIND_CONTROL = 0, 1, 2, 3
_NUM = ("key_type", "value_version", "partition", "offset", "leader_epoch",
        "commit_timestamp", "expire_timestamp")


def _strings(pair: Tuple[np.ndarray, np.ndarray], n: int) -> Any:
    offs, data = pair
    if _pa is not None:
        return _pa.StringArray.from_buffers(n, _pa.py_buffer(offs), _pa.py_buffer(data))
    b = data.tobytes()
    o = offs.tolist()
    return [b[o[i]:o[i + 1]].decode("ascii") for i in range(n)]


def _decode_part(buf: Any, recs: np.ndarray, control: np.ndarray) -> Tuple[Dict[str, Any], List[Tuple[int, Any]]]:
    cols = _records.offset_commit_columns(buf, recs)
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
        for i in idx.tolist():
            r = recs[i]
            kp, kl, vp, vl = int(r["key_pos"]), int(r["key_len"]), int(r["value_pos"]), int(r["value_len"])
            key = bytes(mv[kp:kp + kl]) if kl >= 0 else None
            val = bytes(mv[vp:vp + vl]) if vl >= 0 else None
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
    for ch in _KR.iter_chunks(source, verify_crc=verify, chunk_size=chunk, max_batch_size=maxb):
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
                "group": _strings(cols["group"], n), "topic": _strings(cols["topic"], n),
                "metadata": _strings(cols["metadata"], n),
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
                    res[k].append(_strings(cols[k], n))
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
