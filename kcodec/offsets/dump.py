"""``kcodec offsets dump``: one JSON line per record of a ``__consumer_offsets`` log.

Two ways to the same lines.  :func:`record_json` builds a record's line from objects
(:func:`kcodec.log.iter_batches` and :func:`~kcodec.offsets.records.decode_record`): the
reference.  :func:`iter_dump` streams them from the columnar path
(:func:`~kcodec.offsets.columns.iter_offset_columns`): the text is written by a generic
C kernel (:func:`kcodec.log._jsonl.write_lines`, csrc/kc_jsonl.c) straight from the
columns.  Offset commits and their tombstones, the bulk of any such log, follow a
template per (record type, value version) that :func:`record_json` itself prints for
sentinel values, so both ways cannot drift apart; each batch's header fields are written
once per batch; records the columns hold as objects (group metadata, KIP-848 records)
get their tail from :func:`~kcodec.offsets.records.to_json`; control records and records
with headers take :func:`record_json`, and so does any chunk with a corrupt batch (the
text of both written by :class:`kcodec.log._jsonl.JsonTexts`, json.dumps' bytes).  Tests
compare both on every fixture segment, legacy segments, and generated and corrupted logs.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np

from kcodec import _ext, log as _log
from kcodec.log.dump import chunk_batch, chunk_batches

from .columns import KIND_OTHER
from .records import OffsetsRecord, decode_record, record_types, to_json

# the JSON-lines writer (csrc/kc_jsonl.c); without it (or pyarrow) every line takes record_json
_jsonl = _ext.load("kcodec.log._jsonl")
try:
    import pyarrow as _pa
except ImportError:  # pragma: no cover - without pyarrow every line takes record_json
    _pa = None

__all__ = ["Selection", "record_json", "error_json", "iter_dump", "parse_record_types"]

CONTROL = "control"


class Selection(NamedTuple):
    """Which records ``dump`` prints: record types (``None``: all; ``control``: control
    records) and an inclusive offset range.  Unreadable batches are always printed."""
    types: Optional[FrozenSet[Any]] = None
    first_offset: Optional[int] = None
    last_offset: Optional[int] = None

    def wants(self, offset: int, rtype: Any) -> bool:
        if self.first_offset is not None and offset < self.first_offset:
            return False
        if self.last_offset is not None and offset > self.last_offset:
            return False
        return self.types is None or rtype in self.types


def parse_record_types(names: List[str]) -> FrozenSet[Any]:
    """``OffsetCommit``/``GroupMetadata``/... (or their numeric type ids, unknown ones
    included) and ``control``, as a :class:`Selection`'s ``types``."""
    by_name = {i.name.lower(): t for t, i in record_types().items()}
    out: set = set()
    for n in names:
        for part in n.split(","):
            p = part.strip()
            if p.lower() == CONTROL:
                out.add(CONTROL)
            elif p.lower() in by_name:
                out.add(by_name[p.lower()])
            elif re.fullmatch(r"-?\d+", p) and -32768 <= int(p) <= 32767:
                out.add(int(p))
            else:
                valid = ", ".join(sorted(i.name for i in record_types().values()))
                raise ValueError(f"unknown record type {p!r} (valid: {valid}, control, "
                                 f"or a numeric type id)")
    return frozenset(out)


# --------------------------------------------------------------------------- the reference lines

def error_json(batch: Any, file: Optional[str] = None) -> Dict[str, Any]:
    """The line of a corrupt batch none of whose records could be read."""
    e = batch.error
    return {"file": batch.file if file is None else file, "position": batch.position,
            "error": {"reason": e.reason, "message": e.message, "skipped_to": e.skipped_to}}


def record_json(batch: Any, rec: Any, dec: Optional[OffsetsRecord],
                file: Optional[str] = None) -> Dict[str, Any]:
    """One record's line: where it is, its batch's header fields, then
    :func:`~kcodec.offsets.records.to_json` (``dec``) or the control record (``dec`` None)."""
    line: Dict[str, Any] = {
        "file": batch.file if file is None else file, "position": batch.position,
        "offset": rec.offset, "timestamp": rec.timestamp, "timestamp_type": batch.timestamp_type,
        "producer_id": batch.producer_id, "producer_epoch": batch.producer_epoch,
        "is_transactional": batch.is_transactional, "is_control": batch.is_control,
        "partition_leader_epoch": batch.partition_leader_epoch}
    if rec.headers:
        line["headers"] = [[k, None if v is None else v.hex()] for k, v in rec.headers]
    if batch.error is not None:
        line["batch_error"] = {"reason": batch.error.reason, "message": batch.error.message}
    if dec is None:
        try:
            c = _log.parse_control_record(rec)
            line["control"] = {"type": c.type_name, "version": c.version,
                               "coordinatorEpoch": c.coordinator_epoch}
        except Exception as e:
            line["control"] = {"error": str(e)}
    else:
        line.update(to_json(dec))
    return line


def _dumps(d: Dict[str, Any]) -> str:
    return json.dumps(d, ensure_ascii=False) + "\n"


def _rtype(batch: Any, dec: Optional[OffsetsRecord]) -> Any:
    return CONTROL if dec is None else dec.record_type


def _batch_lines(batch: Any, sel: Selection, file: Optional[str]) -> Tuple[List[str], int]:
    """A batch's lines the reference way, and 1 if it is corrupt."""
    if not batch.records:
        return ([_dumps(error_json(batch, file))], 1) if batch.error is not None else ([], 0)
    out = []
    for rec in batch.records:
        dec = None if batch.is_control else decode_record(rec.key, rec.value, errors="report")
        if sel.wants(rec.offset, _rtype(batch, dec)):
            out.append(_dumps(record_json(batch, rec, dec, file)))
    return out, int(batch.error is not None)


# --------------------------------------------------------------------------- templates

_G, _T, _M = "\u2603G\u2603", "\u2603T\u2603", "\u2603M\u2603"
_SENTINELS = {   # column -> a value no real record of the template's shape holds here
    "partition": 2000000007, "commit_offset": 9000000000000000001,
    "leader_epoch": 2000000002, "commit_timestamp": 9000000000000000003,
    "expire_timestamp": 9000000000000000004,
}
_VALUE_FIELDS = {"offset": "commit_offset", "leaderEpoch": "leader_epoch",
                 "commitTimestamp": "commit_timestamp", "expireTimestamp": "expire_timestamp",
                 "metadata": "metadata"}
_TOKENS = {json.dumps(_G, ensure_ascii=False): "group", json.dumps(_T, ensure_ascii=False): "topic",
           json.dumps(_M, ensure_ascii=False): "metadata"}
_TOKENS.update({str(v): k for k, v in _SENTINELS.items()})
_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in _TOKENS) + ")")
_TEMPLATES: Dict[Tuple[int, int, int], Optional[List[Tuple[bool, str]]]] = {}


def _template(kind: int, rtype: int, version: int) -> Optional[List[Tuple[bool, str]]]:
    """The tail of a commit (kind 0) or commit tombstone (kind 1) line, from ``"type_name"``
    on, as ``[(is_column, text or column name)]``; None when the record's value has a field
    the columns do not carry (its rows then take record_json)."""
    k = (kind, rtype, version)
    if k in _TEMPLATES:
        return _TEMPLATES[k]
    import kcodec
    from .records import _value_schema
    info = record_types()[rtype]
    key = rtype.to_bytes(2, "big", signed=True) + kcodec.encode(
        info.key, {"group": _G, "topic": _T, "partition": _SENTINELS["partition"]}, 0)
    if kind == 1:
        dec = decode_record(key, None)
    else:
        schema = _value_schema(rtype, info, version)
        names = [f.name for f in kcodec.spec(schema).fields
                 if f.versions.lowest <= version <= f.versions.highest]
        value = {n: (_M if n == "metadata" else _SENTINELS[_VALUE_FIELDS[n]])
                 for n in names if n in _VALUE_FIELDS}
        dec = decode_record(key, version.to_bytes(2, "big") + kcodec.encode(schema, value, version))
        extra = set(dec.value or {}) - set(_VALUE_FIELDS) - {"topicId"}
        if extra or dec.error:
            _TEMPLATES[k] = None
            return None
    text = json.dumps(to_json(dec), ensure_ascii=False)[1:]   # drop "{": it follows the head
    tpl: List[Tuple[bool, str]] = []
    for i, part in enumerate(_SPLIT.split(text)):
        if part:
            tpl.append((i % 2 == 1, _TOKENS[part] if i % 2 else part))
    tpl.append((False, "\n"))
    _TEMPLATES[k] = tpl
    return tpl


# --------------------------------------------------------------------------- the columnar path

_BLOCK = 1 << 13      # rows per write_lines call: a few MB of text, reused memory

# A line of the columnar path is the batch's head up to "offset", the offset, the
# timestamp, the batch's head from "timestamp_type" on (both heads written once per
# batch), then a tail: a template's columns, or text from Python (group metadata and
# other records decoded as objects), or the whole line from record_json.
_BATCH_COLS = ("position", "timestamp_type", "producer_id", "producer_epoch",
               "is_transactional", "partition_leader_epoch")
_B = {name: i for i, name in enumerate(_BATCH_COLS)}
_HEAD2 = [', "timestamp_type": "', _B["timestamp_type"], '", "producer_id": ', _B["producer_id"],
          ', "producer_epoch": ', _B["producer_epoch"], ', "is_transactional": ',
          _B["is_transactional"], ', "is_control": false, "partition_leader_epoch": ',
          _B["partition_leader_epoch"], ", "]
_COLS = ("head1", "offset", "timestamp", "head2", "group", "topic", "metadata", "partition",
         "commit_offset", "leader_epoch", "commit_timestamp", "expire_timestamp", "tail", "line")
_C = {name: i for i, name in enumerate(_COLS)}
_HEAD = [_C["head1"], _C["offset"], ', "timestamp": ', _C["timestamp"], _C["head2"]]


def _strings(arr: Any) -> Optional[Dict[str, Any]]:
    """An Arrow string column as write_lines' JSON strings (None: not a plain string array)."""
    if arr.type != _pa.string():
        return None
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], np.int32)[arr.offset:arr.offset + len(arr) + 1]
    return {"strings": (offs, bufs[2] if bufs[2] is not None else b"",
                        bufs[0] if arr.null_count else None, arr.offset)}


def _texts(text: Any, ends: np.ndarray) -> Dict[str, Any]:
    """write_lines' text and row ends as a raw text column."""
    offs = np.zeros(len(ends) + 1, np.int32)
    offs[1:] = ends
    return {"raw": (offs, text)}


def _batch_heads(ch: Any, file: Optional[str]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Each batch's line head up to ``"offset": `` and from ``"timestamp_type"`` on."""
    write_lines = _jsonl.write_lines
    b = ch.batches
    nb = len(b)
    battr = b["attributes"].astype(np.int64)
    columns = [
        {"values": b["position"].astype(np.int64) + ch.base},
        {"codes": ((battr >> 3) & 1).astype(np.uint8), "names": ["CreateTime", "LogAppendTime"]},
        {"values": b["producer_id"].astype(np.int64)},
        {"values": b["producer_epoch"].astype(np.int16)},
        {"codes": ((battr >> 4) & 1).astype(np.uint8), "names": ["false", "true"]},
        {"values": b["partition_leader_epoch"].astype(np.int32)},
    ]
    fj = json.dumps(file if file is not None else ch.file, ensure_ascii=False)
    rows, tpl = np.arange(nb), np.zeros(nb, np.int32)
    head1 = ['{"file": ' + fj + ', "position": ', _B["position"], ', "offset": ']
    return (_texts(*write_lines([head1], columns, rows, tpl, size_hint=(len(fj) + 48) * nb, ends=True)),
            _texts(*write_lines([_HEAD2], columns, rows, tpl, size_hint=160 * nb, ends=True)))


def _rows_of(ch: Any) -> Tuple[Any, ...]:
    """The batch index (int64), index within the batch (None: the row number less its
    batch's first record), offset and header count of each row of iter_offset_columns'
    chunk, in its row order (uncompressed records, then each compressed batch's, ordered
    by offset when there are compressed batches)."""
    recs = ch.records
    if not ch.inflated:        # the common case: no copies but the batch index
        return recs["batch_index"].astype(np.int64), None, recs["offset"], recs["headers_count"]
    parts = [recs] + [ch.inflated[i][1] for i in sorted(ch.inflated)]
    bi = np.concatenate([p["batch_index"] for p in parts]).astype(np.int64)
    first = ch.batches["first_record"][recs["batch_index"]] if len(recs) else 0
    within = np.concatenate([np.arange(len(recs)) - first]
                            + [np.arange(len(p)) for p in parts[1:]]).astype(np.int64)
    offs = np.concatenate([p["offset"] for p in parts])
    hdr = np.concatenate([p["headers_count"] for p in parts])
    order = np.argsort(offs, kind="stable")
    bi, within, offs, hdr = bi[order], within[order], offs[order], hdr[order]
    return bi, within, offs, hdr


def _fast_chunk(ch: Any, cols: Dict[str, Any], sel: Selection, file: Optional[str]) -> Optional[Iterable[Any]]:
    """The chunk's lines as an iterable of UTF-8 buffers, or None when its rows are not the ones
    expected (then the reference path prints it)."""
    write_lines = _jsonl.write_lines
    bi, within, offs, hdr = _rows_of(ch)
    coffs = cols["offset"]
    if len(offs) != len(coffs) or not np.array_equal(offs, coffs):
        return None       # not the rows we think: the reference path decides
    n = len(offs)
    if n == 0:
        return ()
    strings = [_strings(cols[k]) for k in ("group", "topic", "metadata")]
    if any(x is None for x in strings):
        return None
    kind = np.asarray(cols["kind"])
    key_type = np.asarray(cols["key_type"])
    vv = np.asarray(cols["value_version"])
    # log order: batch by batch, records in batch order (the row order unless compressed
    # batches were inflated after the others)
    logorder = np.lexsort((within, bi)) if within is not None else None
    fast = (kind <= 1) & (kind >= 0) & (hdr == 0)
    if sel.first_offset is not None or sel.last_offset is not None:
        want = np.ones(n, bool)
        if sel.first_offset is not None:
            want &= coffs >= sel.first_offset
        if sel.last_offset is not None:
            want &= coffs <= sel.last_offset
        printed = fast & want
    else:
        want, printed = None, fast
    if sel.types is not None:
        printed = printed & np.isin(key_type, [t for t in sel.types if t != CONTROL])
    # one template per (kind, record type, value version) among the printed fast rows;
    # they come in runs: each run's template is looked up once
    change = (printed[1:] != printed[:-1]) | (kind[1:] != kind[:-1]) \
        | (key_type[1:] != key_type[:-1]) | (vv[1:] != vv[:-1])
    starts = np.flatnonzero(np.r_[True, change])
    templates: List[List[Any]] = [[_C["line"]], _HEAD + [_C["tail"]]]   # 0: record_json's, 1: a tail
    combo = (kind[starts].astype(np.int64) << 40) | ((key_type[starts].astype(np.int64) & 0xFFFF) << 20) \
        | (vv[starts].astype(np.int64) & 0xFFFFF)
    combo[~printed[starts]] = -1
    distinct, inverse = np.unique(combo, return_inverse=True)
    tpl_of = np.full(len(distinct), -1, np.int32)     # -1: not printed by a template
    for j, c in enumerate(distinct.tolist()):
        if c < 0:
            continue
        k, rt, v = c >> 40, (c >> 20) & 0xFFFF, c & 0xFFFFF
        rt = rt - 0x10000 if rt >= 0x8000 else rt
        tpl = _template(int(k), int(rt), -1 if k == 1 else int(v))
        if tpl is not None:
            tpl_of[j] = len(templates)
            templates.append(_HEAD + [_C[t] if is_col else t for is_col, t in tpl])
    run_tpl = tpl_of[inverse.reshape(-1)]
    row_tpl = np.repeat(run_tpl, np.diff(np.r_[starts, n]))
    # rows no template prints: records decoded as objects (group metadata, ...) take
    # their tail from to_json; control records, records with headers and the rest the
    # whole line from record_json
    slow = (row_tpl < 0) & ((~fast | printed) if want is None else (want & (~fast | printed)))
    slot = np.zeros(n, np.int64)
    tails = _jsonl.JsonTexts(1, "\n")     # "{" dropped: the tail follows the line's head
    lines = _jsonl.JsonTexts(0, "\n")
    if slow.any():
        other = dict(cols["other"])
        batches: Dict[int, Any] = {}
        first = ch.batches["first_record"]
        for r in np.flatnonzero(slow).tolist():
            dec = other.get(r) if kind[r] == KIND_OTHER and hdr[r] == 0 else None
            if dec is not None:
                if sel.types is None or dec.record_type in sel.types:
                    slot[r] = tails.add(to_json(dec))
                    row_tpl[r] = 1
                continue
            i = int(bi[r])
            if i not in batches:
                batches[i] = chunk_batch(ch, i)
            batch = batches[i]
            rec = batch.records[int(within[r]) if within is not None else r - int(first[i])]
            if not batch.is_control:
                dec = other.get(r)
                if dec is None:
                    dec = decode_record(rec.key, rec.value, errors="report")
            if sel.wants(rec.offset, _rtype(batch, dec)):
                slot[r] = lines.add(record_json(batch, rec, dec, file))
                row_tpl[r] = 0
    tails_col, lines_col = tails.column(), lines.column()
    if tails_col is None or lines_col is None:
        return None
    head1, head2 = _batch_heads(ch, file)
    columns: List[Dict[str, Any]] = [
        dict(head1, take=bi),
        {"values": np.ascontiguousarray(coffs, np.int64)},
        {"values": np.ascontiguousarray(cols["timestamp"], np.int64)},
        dict(head2, take=bi),
        *strings,
        {"values": np.ascontiguousarray(cols["partition"], np.int32)},
        {"values": np.ascontiguousarray(cols["commit_offset"], np.int64)},
        {"values": np.ascontiguousarray(cols["leader_epoch"], np.int32)},
        {"values": np.ascontiguousarray(cols["commit_timestamp"], np.int64)},
        {"values": np.ascontiguousarray(cols["expire_timestamp"], np.int64)},
        {"raw": tails_col, "take": slot},
        {"raw": lines_col, "take": slot},
    ]
    order = np.flatnonzero(row_tpl >= 0) if logorder is None else logorder[row_tpl[logorder] >= 0]
    # written a block at a time as the caller takes them: a few MB alive at once
    return (write_lines(templates, columns, order[lo:lo + _BLOCK], row_tpl, size_hint=600 * _BLOCK)
            for lo in range(0, len(order), _BLOCK))


def _slow_chunk(ch: Any, sel: Selection, file: Optional[str], strict: bool = False) -> Tuple[str, int]:
    out: List[str] = []
    bad = 0
    for batch in chunk_batches(ch):
        if strict and batch.error is not None:
            return "".join(out), 1        # --strict: nothing from the first corrupt batch on
        lines, b = _batch_lines(batch, sel, file)
        out += lines
        bad += b
    return "".join(out), bad


def iter_dump(source: Any, selection: Selection = Selection(), *, file: Optional[str] = None,
              columnar: bool = True, strict: bool = False, **kwargs: Any) -> Iterator[Tuple[Iterable[Any], int, int, Any]]:
    """Yield ``(pieces, corrupt batches, end position, first error)`` per chunk of ``source``
    (one segment file or bytes): the chunk's dump lines as pieces to write in order
    (``str``, or UTF-8 buffers from the columnar path, an iterable that formats them as it
    is consumed, a few MB at a time), how many of its batches were
    corrupt, how far reading got, and the first corrupt batch's
    :class:`~kcodec.log.BatchError` (None).  ``file`` replaces the file name in the lines
    (e.g. ``-`` for stdin); ``columnar=False`` takes the reference path throughout;
    ``strict=True`` ends at the first corrupt batch (its chunk's lines stop before it)."""
    from .columns import iter_offset_columns
    if not columnar or _pa is None or _jsonl is None:
        chunks: Iterable[Tuple[Any, Any]] = ((ch, None) for ch in _log.iter_chunks(source, **kwargs))
    else:
        chunks = ((cols["chunk"], cols) for cols in iter_offset_columns(source, **kwargs))
    for ch, cols in chunks:
        end = ch.base + int(ch.batches["next_position"].max())
        text: Any = None
        if cols is not None and not ch.errors and cols["end"] == end:
            text = _fast_chunk(ch, cols, selection, file)
        if text is None:
            text, bad = _slow_chunk(ch, selection, file, strict)
            yield [text], bad, end, (ch.errors[min(ch.errors)] if ch.errors else None)
            if strict and ch.errors:
                return
        else:
            yield text, 0, end, None
