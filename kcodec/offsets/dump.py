"""``kcodec offsets dump``: one JSON line per record of a ``__consumer_offsets`` log.

Two ways to the same lines.  :func:`record_json` builds a record's line from objects
(:func:`kcodec.log.iter_batches` and :func:`~kcodec.offsets.records.decode_record`): the
reference.  :func:`iter_dump` streams them from the columnar path
(:func:`~kcodec.offsets.columns.iter_offset_columns`): offset commits and their
tombstones, the bulk of any such log, are formatted as Arrow string kernels over whole
columns, from a template per (record type, value version) that :func:`record_json` itself
prints for sentinel values, so both ways cannot drift apart; every other row (group
metadata, KIP-848 records, control records, records with headers) takes
:func:`record_json`, and so does any chunk with a corrupt batch.  Tests compare both on
every fixture segment and on generated and corrupted logs.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np

from kcodec import log as _log
from kcodec.log.dump import chunk_batch, chunk_batches

from .records import OffsetsRecord, decode_record, record_types, to_json

try:
    import pyarrow as _pa
    import pyarrow.compute as _pc
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

def _json_strings(arr: Any) -> Any:
    """A string column as JSON string literals: each distinct value escaped once (groups
    and topics repeat throughout a log)."""
    d = _pc.dictionary_encode(arr)
    lits = _pa.array([json.dumps(s, ensure_ascii=False) for s in d.dictionary.to_pylist()],
                     _pa.string())
    return lits.take(d.indices)


def _numbers(a: np.ndarray) -> Any:
    return _pc.cast(_pa.array(a), _pa.string())


def _join(pieces: List[Any]) -> Any:
    return _pc.binary_join_element_wise(*pieces, "")


def _rows_of(ch: Any) -> Tuple[np.ndarray, ...]:
    """The batch index, index within the batch, offset and header count of each row of
    iter_offset_columns' chunk, in its row order (uncompressed records, then each
    compressed batch's, ordered by offset when there are compressed batches)."""
    parts = [ch.records] + [ch.inflated[i][1] for i in sorted(ch.inflated)]
    bi = np.concatenate([p["batch_index"] for p in parts]).astype(np.int64)
    first = ch.batches["first_record"][ch.records["batch_index"]] if len(ch.records) else 0
    within = np.concatenate([np.arange(len(ch.records)) - first]
                            + [np.arange(len(p)) for p in parts[1:]]).astype(np.int64)
    offs = np.concatenate([p["offset"] for p in parts])
    hdr = np.concatenate([p["headers_count"] for p in parts])
    if len(parts) > 1:
        order = np.argsort(offs, kind="stable")
        bi, within, offs, hdr = bi[order], within[order], offs[order], hdr[order]
    return bi, within, offs, hdr


def _fast_chunk(ch: Any, cols: Dict[str, Any], sel: Selection, file: Optional[str]) -> Optional[List[Any]]:
    """The chunk's lines as a list of buffers, or None when its rows are not the ones
    expected (then the reference path prints it)."""
    bi, within, offs, hdr = _rows_of(ch)
    if len(offs) != len(cols["offset"]) or not np.array_equal(offs, cols["offset"]):
        return None       # not the rows we think: the reference path decides
    n = len(offs)
    if n == 0:
        return []
    b = ch.batches
    kind = np.asarray(cols["kind"])
    key_type = np.asarray(cols["key_type"])
    vv = np.asarray(cols["value_version"])
    # log order: batch by batch, records in batch order
    logorder = np.lexsort((within, bi))
    # which rows are printed
    want = np.ones(n, bool)
    if sel.first_offset is not None:
        want &= offs >= sel.first_offset
    if sel.last_offset is not None:
        want &= offs <= sel.last_offset
    fast = ((kind == 0) | (kind == 1)) & (hdr == 0)
    if sel.types is not None:
        tsel = np.isin(key_type, [t for t in sel.types if t != CONTROL])
        want &= ~fast | tsel
    # per-batch head pieces (batches are fewer than records)
    fj = json.dumps(file if file is not None else ch.file, ensure_ascii=False)
    bpos = _numbers(b["position"] + ch.base)
    battr = b["attributes"].astype(np.int64)
    head1 = _join([_pa.scalar('{"file": ' + fj + ', "position": '), bpos,
                   _pa.scalar(', "offset": ')])
    ttype = _pa.array(['CreateTime', 'LogAppendTime']).take(_pa.array((battr >> 3) & 1))
    txn = _pa.array(["false", "true"]).take(_pa.array((battr >> 4) & 1))
    head2 = _join([_pa.scalar(', "timestamp_type": "'), ttype, _pa.scalar('", "producer_id": '),
                   _numbers(b["producer_id"]), _pa.scalar(', "producer_epoch": '),
                   _numbers(b["producer_epoch"]), _pa.scalar(', "is_transactional": '), txn,
                   _pa.scalar(', "is_control": false, "partition_leader_epoch": '),
                   _numbers(b["partition_leader_epoch"]), _pa.scalar(", ")])
    combos = np.where(fast & want, kind.astype(np.int64) * (1 << 40)
                      + (key_type.astype(np.int64) & 0xFFFF) * (1 << 20)
                      + (vv.astype(np.int64) & 0xFFFFF), -1)
    strings: Dict[str, Any] = {}
    other = dict(cols["other"])
    batches: Dict[int, Any] = {}
    ordered = bool(np.all(logorder[1:] > logorder[:-1])) if n > 1 else True
    out: List[Any] = []
    for lo in range(0, n, _BLOCK):      # blocks (in log order) keep the working set small
        hi = min(n, lo + _BLOCK)
        rows = np.arange(lo, hi) if ordered else np.sort(logorder[lo:hi])
        parts_lines: List[Any] = []
        parts_pos: List[np.ndarray] = []
        block = combos[rows]
        slow_rows: List[int] = []
        for combo in np.unique(block[block >= 0]).tolist():
            k, rt, v = combo >> 40, (combo >> 20) & 0xFFFF, combo & 0xFFFFF
            rt = rt - 0x10000 if rt >= 0x8000 else rt
            tpl = _template(int(k), int(rt), -1 if k == 1 else int(v))
            idx = rows[block == combo]
            if tpl is None:
                slow_rows += idx.tolist()
                continue
            parts_lines.append(_fast_lines(tpl, idx, bi, offs, cols, head1, head2, strings))
            parts_pos.append(idx)
        slow_rows += rows[~fast[rows] & want[rows]].tolist()
        if slow_rows:
            slow_rows.sort()
            lines = []
            for r in slow_rows:
                i = int(bi[r])
                if i not in batches:
                    batches[i] = chunk_batch(ch, i)
                batch = batches[i]
                rec = batch.records[int(within[r])]
                dec = None
                if not batch.is_control:
                    dec = other.get(r)
                    if dec is None:
                        dec = decode_record(rec.key, rec.value, errors="report")
                if sel.wants(rec.offset, _rtype(batch, dec)):
                    lines.append(_dumps(record_json(batch, rec, dec, file)))
                else:
                    lines.append("")
            parts_lines.append(_pa.array(lines, _pa.string()))
            parts_pos.append(np.asarray(slow_rows, np.int64))
        if parts_lines:
            out += _in_log_order(parts_lines, parts_pos, None if ordered else logorder, lo, hi)
    return out


_BLOCK = 1 << 16


def _fast_lines(tpl: List[Tuple[bool, str]], idx: np.ndarray, bi: np.ndarray, offs: np.ndarray,
                cols: Dict[str, Any], head1: Any, head2: Any, strings: Dict[str, Any]) -> Any:
    """The lines of rows ``idx`` (one template's) as one Arrow string array."""
    pidx = _pa.array(idx)
    bsel = _pa.array(bi[idx])
    pieces = [head1.take(bsel), _numbers(offs[idx]), _pa.scalar(', "timestamp": '),
              _numbers(np.asarray(cols["timestamp"])[idx]), head2.take(bsel)]
    for is_col, t in tpl:
        if not is_col:
            pieces.append(_pa.scalar(t))
        elif t in ("group", "topic", "metadata"):
            if t not in strings:
                strings[t] = _json_strings(cols[t])
            pieces.append(strings[t].take(pidx))
        else:
            pieces.append(_numbers(np.asarray(cols[t])[idx]))
    return _join(pieces)


def _in_log_order(parts_lines: List[Any], parts_pos: List[np.ndarray], logorder: Optional[np.ndarray],
                  lo: int, hi: int) -> List[Any]:
    """Rows ``lo:hi``'s lines (``parts_pos``: the row numbers of ``parts_lines``) as buffers in
    log order.  When each part's rows are in log order already (no compressed batch
    reordered them) those are runs of each part's data buffer, no copy; otherwise one take
    over all lines."""
    if logorder is None:     # rows are in log order
        ranks = [p - lo for p in parts_pos]
    else:
        rank = np.empty(len(logorder), np.int64)
        rank[logorder] = np.arange(len(logorder))
        ranks = [rank[p] - lo for p in parts_pos]
    n = hi - lo
    if all(len(r) < 2 or bool(np.all(r[1:] > r[:-1])) for r in ranks):
        owner = np.full(n, -1, np.int64)
        local = np.zeros(n, np.int64)
        for k, r in enumerate(ranks):
            owner[r] = k
            local[r] = np.arange(len(r))
        printed = owner >= 0
        owner, local = owner[printed], local[printed]
        if not len(owner):
            return []
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        ends = np.r_[starts[1:], len(owner)]
        views = []
        for a, b in zip(starts.tolist(), ends.tolist()):
            arr = parts_lines[int(owner[a])]
            views.append(_string_bytes(arr.slice(int(local[a]), int(local[b - 1]) + 1 - int(local[a]))))
        return views
    order = np.argsort(np.concatenate(ranks), kind="stable")
    return [_string_bytes(_pa.concat_arrays(parts_lines).take(_pa.array(order)))]


def _string_bytes(arr: Any) -> bytes:
    """The concatenated values of a string array (its data buffer's used span)."""
    if len(arr) == 0:
        return b""
    offsets = np.frombuffer(arr.buffers()[1], np.int64 if arr.type == _pa.large_string() else np.int32)
    start, end = int(offsets[arr.offset]), int(offsets[arr.offset + len(arr)])
    data = arr.buffers()[2]
    return memoryview(data)[start:end] if data is not None else b""  # type: ignore[return-value]


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
              columnar: bool = True, strict: bool = False, **kwargs: Any) -> Iterator[Tuple[List[Any], int, int, Any]]:
    """Yield ``(pieces, corrupt batches, end position, first error)`` per chunk of ``source``
    (one segment file or bytes): the chunk's dump lines as pieces to write in order
    (``str``, or UTF-8 buffers from the columnar path), how many of its batches were
    corrupt, how far reading got, and the first corrupt batch's
    :class:`~kcodec.log.BatchError` (None).  ``file`` replaces the file name in the lines
    (e.g. ``-`` for stdin); ``columnar=False`` takes the reference path throughout;
    ``strict=True`` ends at the first corrupt batch (its chunk's lines stop before it)."""
    from .columns import iter_offset_columns
    chunks = _log.iter_chunks(source, **kwargs)
    if not columnar or _pa is None:
        for ch in chunks:
            text, bad = _slow_chunk(ch, selection, file, strict)
            yield [text], bad, ch.base + int(ch.batches["next_position"].max()), \
                (ch.errors[min(ch.errors)] if ch.errors else None)
            if strict and ch.errors:
                return
        return
    for ch, cols in zip(chunks, iter_offset_columns(source, **kwargs)):
        end = ch.base + int(ch.batches["next_position"].max())
        text: Any = None
        if not ch.errors and cols["end"] == end:
            text = _fast_chunk(ch, cols, selection, file)
        if text is None:
            text, bad = _slow_chunk(ch, selection, file, strict)
            yield [text], bad, end, (ch.errors[min(ch.errors)] if ch.errors else None)
            if strict and ch.errors:
                return
        else:
            yield text, 0, end, None
