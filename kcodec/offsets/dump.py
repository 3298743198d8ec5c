"""``kcodec offsets dump``: one JSON line per record of a ``__consumer_offsets`` log.

Two ways to the same lines.  :func:`record_json` builds a record's line from objects
(:func:`kcodec.log.iter_batches` and :func:`~kcodec.offsets.records.decode_record`): the
reference.  :func:`iter_dump` has C write them straight from the record bytes
(csrc/kc_odump.c through :mod:`kcodec.offsets._odump`): each record's key and value are
decoded by the spec engine onto a tape and printed as :func:`record_json` +
``json.dumps`` print them (csrc/kc_tjson.c, by plans compiled here from the same programs,
:func:`kcodec._tjson.tjson_plan`), a classic group member's subscription and assignment
decoded with the consumer protocol as :func:`~kcodec.offsets.records.decode_members`
does.  Whatever C does not print (control batches, records with headers, unknown record
types, newer value versions, records that do not decode or hold unknown tagged fields,
group metadata when other protocol decoders are registered) it hands back, batch or
record, to the reference code, in place; a chunk with a corrupt batch takes the reference
path whole.  Tests compare both on every fixture segment, legacy segments, and generated
and corrupted logs.
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Tuple

import numpy as np

from kcodec import _ext, log as _log
from kcodec._tjson import tjson_plan
from kcodec.log.dump import chunk_batch, chunk_batches

from .records import _PROTOCOLS, OffsetsRecord, decode_record, record_types, to_json

# the line writer (csrc/kc_odump.c); without it every line takes record_json
_odump = _ext.load("kcodec.offsets._odump")

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


# --------------------------------------------------------------------------- the C path

_BLOCK = 1 << 13      # lines of about 512 bytes per piece written (~4 MB, reused memory)

_MEMBERS_EMBEDDED = ("subscription", "assignment")   # consumer protocol, in that order
_CONSUMER_DECODER = _PROTOCOLS.get(("consumer", None))
_TABLES: Dict[Optional[FrozenSet[str]], Any] = {}


def _protocol_overrides() -> Optional[FrozenSet[str]]:
    """The consumer protocols (group's protocol names) other decoders are registered for:
    C hands their groups' metadata back; None when C cannot decode members as
    decode_members would at all (kcodec's consumer-protocol decoder replaced, or decoders
    of other protocol types registered)."""
    if _PROTOCOLS.get(("consumer", None)) is not _CONSUMER_DECODER:
        return None
    if any(t != "consumer" for t, _ in _PROTOCOLS):
        return None
    names = frozenset(n for t, n in _PROTOCOLS if n is not None)
    if any(len(n.encode()) > 255 for n in names):
        return None
    return names


def _writer(prog: Any, embeds: Optional[Dict[Tuple[str, str], int]] = None,
            tables: Optional[List[List[Any]]] = None) -> Any:
    plan, blob = tjson_plan(prog, "py", embeds)
    return _odump.TapeJson(np.frombuffer(prog.code, np.int32), plan, blob, tables)


def _embedded_versions(name: str) -> List[Any]:
    """The writers of an embedded message at each int16 prefix up to its newest (a higher
    one is read with the newest, as consumer_protocol reads it)."""
    import kcodec
    vv = kcodec.spec(name).valid_versions
    if vv.lowest != 0:
        raise ValueError(f"{name}: versions from {vv.lowest}")
    return [_writer(kcodec.program(name, v)) for v in range(vv.highest + 1)]


def _value_entry(rtype: int, info: Any, version: int, members: bool) -> Optional[Tuple[Any, ...]]:
    """The C table's entry of a value version (None: its records take Python)."""
    import kcodec
    from .records import _value_schema
    schema = _value_schema(rtype, info, version)
    vv = kcodec.spec(schema).valid_versions
    if not vv.lowest <= version <= vv.highest:
        return None
    prog = kcodec.program(schema, version)
    head = ('}, "payload": {"version": "%d", "data": ' % version).encode()
    try:
        plain = _writer(prog)
        if info.value != "GroupMetadataValue":
            return plain, None, -1, b"", head
        if not members:
            return None
        # members' subscription/assignment decoded when protocolType is "consumer"
        embeds = {(sp.name, f.name): _MEMBERS_EMBEDDED.index(f.name) for sp in prog.structs[1:]
                  for f in sp.ordered if f.name in _MEMBERS_EMBEDDED}
        field = [f.name for f in prog.top.fields].index("protocolType")
        alt = _writer(prog, embeds, [_embedded_versions("ConsumerProtocolSubscription"),
                                     _embedded_versions("ConsumerProtocolAssignment")])
        return plain, alt, field, b"consumer", head
    except ValueError:        # a message the C writer cannot print exactly
        return None


def _dump_types(overrides: Optional[FrozenSet[str]]) -> Any:
    """The record-type table of csrc/kc_odump.c: every group-coordinator record type with
    its key, and each value version the specs know (group metadata unless ``overrides``
    is None; the groups of the protocols it names are handed back)."""
    table = _TABLES.get(overrides)
    if table is None:
        import kcodec
        members = overrides is not None
        entries: Dict[int, Any] = {}
        fields = set()
        for rtype, info in record_types().items():
            if rtype < 0:
                continue
            head = ('"type_name": %s, "key": {"type": "%d", "data": '
                    % (json.dumps(info.name, ensure_ascii=False), rtype)).encode()
            try:
                key = _writer(kcodec.program(info.key, 0))
            except ValueError:
                continue
            top = kcodec.spec(info.value).valid_versions.highest
            if rtype == 0 and 1 in record_types():   # 0.8.2 keys: OffsetCommitValue past v0
                top = max(top, kcodec.spec(record_types()[1].value).valid_versions.highest)
            versions = {}
            for v in range(top + 1):
                e = _value_entry(rtype, info, v, members)
                if e is not None:
                    versions[v] = e
                    if e[1] is not None:
                        fields.add([f.name for f in kcodec.program(info.value, v).top.fields].index("protocol"))
            entries[rtype] = (key, head, versions)
        if len(fields) > 1:        # "protocol" must sit at one place for the hand-back test
            return _dump_types(None)
        ex = b"".join(bytes([len(n.encode())]) + n.encode() for n in sorted(overrides or ()))
        table = _TABLES[overrides] = _odump.DumpTypes(entries, fields.pop() if fields else -1, ex)
    return table


def _selection_words(sel: Selection) -> Tuple[int, int, Any]:
    """kc_odump's selection: the offset range and a bit per int16 record type (None: all)."""
    lo = -(1 << 63) if sel.first_offset is None else max(sel.first_offset, -(1 << 63))
    hi = (1 << 63) - 1 if sel.last_offset is None else min(sel.last_offset, (1 << 63) - 1)
    bits = None
    if sel.types is not None:
        wanted = np.zeros(1 << 16, bool)
        for t in sel.types:
            if type(t) is int and -32768 <= t <= 32767:
                wanted[t & 0xFFFF] = True
        bits = np.packbits(wanted, bitorder="little")
    return lo, hi, bits


class _Writer:
    """One dump's C writer state: its table, selection, the line head and the buffer the
    pieces are written in (reused: a piece is valid until the next one is taken)."""

    def __init__(self, sel: Selection, file: Optional[str], ch_file: Optional[str]) -> None:
        self.sel = sel
        self.file = file
        self.types = _dump_types(_protocol_overrides())
        self.words = _selection_words(sel)
        self.buf = bytearray(512 * max(_BLOCK, 1))
        self.heads: Dict[Optional[str], bytes] = {}

    def head(self, name: Optional[str]) -> bytes:
        h = self.heads.get(name)
        if h is None:
            h = self.heads[name] = ('{"file": %s, "position": '
                                    % json.dumps(name, ensure_ascii=False)).encode()
        return h

    def chunk(self, ch: Any) -> Iterator[Any]:
        """The chunk's lines (a chunk without corrupt batches), in log order."""
        head = self.head(self.file if self.file is not None else ch.file)
        return self._part(ch, head, ch.data, ch.batches, ch.records, None)

    def _part(self, ch: Any, head: bytes, data: Any, batches: Any, records: Any,
              index: Optional[int]) -> Iterator[Any]:
        state = np.array([0, -1], np.int64)
        held: Optional[Tuple[int, Any]] = None
        sel, file = self.sel, self.file
        while True:
            rc, n = _odump.dump_lines(self.types, self.words, head, ch.base, data, batches,
                                      records, state, self.buf)
            if n:
                yield memoryview(self.buf)[:n]   # (written over by the next call)
            if rc == _odump.DONE:
                return
            if rc == _odump.FULL:
                if n == 0:                       # one line longer than the buffer
                    self.buf = bytearray(2 * len(self.buf))
                continue
            i = int(state[0]) if index is None else index
            if rc == _odump.RECORD:              # a record C does not print: the reference
                if held is None or held[0] != i:
                    held = (i, chunk_batch(ch, i))
                batch = held[1]
                rec = batch.records[int(state[1])]
                dec = decode_record(rec.key, rec.value, errors="report")
                if sel.wants(rec.offset, dec.record_type):
                    yield _dumps(record_json(batch, rec, dec, file)).encode()
                state[1] += 1
                continue
            if index is None and i in ch.inflated:     # a compressed batch's records
                buf, recs = ch.inflated[i]
                one = batches[i:i + 1].copy()
                one["first_record"], one["records_parsed"], one["status"] = 0, len(recs), 0
                yield from self._part(ch, head, buf, one, recs, i)
            else:                                # control, or not plainly readable
                lines, _bad = _batch_lines(chunk_batch(ch, i), sel, file)
                if lines:
                    yield "".join(lines).encode()
            state[0] += 1
            state[1] = -1


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
    (``str``, or UTF-8 bytes-like buffers, an iterable that writes them as it is consumed,
    a few MB at a time; a buffer is valid until the next piece is taken, and the pieces
    until the next chunk: copy what you keep), how many of its batches were corrupt, how
    far reading got, and the first corrupt batch's :class:`~kcodec.log.BatchError`
    (None).  ``file`` replaces the file name in the lines (e.g. ``-`` for stdin);
    ``columnar=False`` takes the reference path throughout (the name stays from the
    columns this path was once built on); ``strict=True`` ends at the first corrupt batch
    (its chunk's lines stop before it)."""
    writer = _Writer(selection, file, None) if columnar and _odump is not None else None
    for ch in _log.iter_chunks(_log.topic_source(source, _log.OFFSETS_TOPIC), **kwargs):
        end = ch.base + int(ch.batches["next_position"].max())
        if writer is not None and not ch.errors:
            yield writer.chunk(ch), 0, end, None
            continue
        text, bad = _slow_chunk(ch, selection, file, strict)
        yield [text], bad, end, (ch.errors[min(ch.errors)] if ch.errors else None)
        if strict and ch.errors:
            return
