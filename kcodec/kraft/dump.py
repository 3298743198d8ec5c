"""``kcodec kraft dump``: the lines ``kafka-dump-log.sh --cluster-metadata-decoder`` prints.

Two ways to the same text.  :func:`kcodec.kraft.records.dump_lines` builds each line from
objects (the reference).  :func:`write_dump` reads the log in windows, has the C
scanner (csrc/kc_batch.c) split them and csrc/kc_kjson.c write the lines of uncompressed,
valid, non-control batches straight from the bytes: the batch line from the header
fields, and for each record its ``| offset: ...`` line and payload, the record decoded by
the spec engine onto a tape and printed as Kafka's JsonConverter + Jackson print it, by a
plan compiled here from the same program (:func:`kjson_plan`).  Whatever the C side does
not take (control batches, compressed or corrupt batches, records with headers, unknown
types or versions, records that do not decode) it hands back, batch or record, to the
reference code, in place: the text is the same either way, and tests compare both on
every fixture and on logs Kafka's own tool dumped.

A clean log (every batch whole, CRC-checked, uncompressed) goes through
:mod:`kcodec.kraft._dump`, which needs neither NumPy nor :mod:`kcodec.log`: the
command then starts in a fraction of the time those take to import.  From the first
window holding a batch that is not clean, the general path (:func:`kcodec.log.iter_chunks`,
corrupt and compressed batches, ``--salvage``) writes the rest.
"""
from __future__ import annotations

import io
import os
import re
from array import array
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Tuple, Union

import kcodec
from kcodec import _ext
from kcodec._program import Program
from kcodec._tjson import tjson_plan

from .records import DECODED, RECORD_TYPES, record_type_name

# (kcodec.log and NumPy are imported only when a log needs the general path: a dump of a
# clean log starts in a fraction of the time they take to import)

__all__ = ["kjson_plan", "write_dump", "dump_file"]

# the line writer's binding (csrc/kc_batch.c + kc_kjson.c + kc_tjson.c, no NumPy): the
# fast path's scanner and both paths' writer; without it every line takes the reference
# path
_fast = _ext.load("kcodec.kraft._dump")


def kjson_plan(prog: Program) -> Tuple["array[int]", bytes]:
    """The JSON plan of a program for the tape writer in Kafka's compact style
    (csrc/kc_tjson.h, :func:`kcodec._tjson.tjson_plan`): for each struct, its fields in
    the schema's order with their keys, where the tape has them, and the tagged fields'
    defaults.  ValueError when the writer cannot print the message exactly (float64
    fields, defaults it cannot compare): then the reference path prints it."""
    return tjson_plan(prog, "compact")


_ENTRIES: Optional[Dict[Tuple[int, int], Tuple[Program, Any, bytes, bytes]]] = None


def _entries() -> Dict[Tuple[int, int], Tuple[Program, Any, bytes, bytes]]:
    """Every metadata record type at every version the specs know, that the writer can
    print: ``(api key, version) -> (program, plan, blob, head)``."""
    global _ENTRIES
    if _ENTRIES is None:
        entries = {}
        for key, name in RECORD_TYPES.items():
            s = kcodec.spec(name)
            for ver in range(s.valid_versions.lowest, s.valid_versions.highest + 1):
                prog = kcodec.program(name, ver)
                try:
                    plan, blob = kjson_plan(prog)
                except ValueError:
                    continue
                head = ' payload: {"type":"%s","version":%d,"data":' % (record_type_name(key), ver)
                entries[(key, ver)] = (prog, plan, blob, head.encode())
        _ENTRIES = entries
    return _ENTRIES


_FAST_TYPES: Any = None


def _fast_types() -> Any:
    """The writer's table (kcodec.kraft._dump), for both paths."""
    global _FAST_TYPES
    if _FAST_TYPES is None:
        _FAST_TYPES = _fast.Types({k: (prog.code, plan, blob, head)
                                   for k, (prog, plan, blob, head) in _entries().items()})
    return _FAST_TYPES


def _headers(path: str, display_name: Optional[str]) -> List[str]:
    base = os.path.basename(path)
    out = [f"Dumping {display_name if display_name is not None else path}"]
    if base.endswith(".log") and base.split(".")[0].isdigit():
        # (Kafka's tool dies with a NumberFormatException on other names: none printed here)
        out.append(f"Log starting offset: {int(base.split('.')[0])}")
    elif base.endswith(".checkpoint"):
        if base == "bootstrap.checkpoint":
            out.append("KRaft bootstrap snapshot")
        else:
            m = re.match(r"(\d+)-(\d+)\.checkpoint$", base)
            if m:
                out.append(f"Snapshot end offset: {int(m.group(1))}, epoch: {int(m.group(2))}")
    return out


def _record_text(batch: Any, rec: Any, undecoded: Optional[List[int]] = None) -> str:
    """One record's line the reference way (records.dump_lines' words); the offset of a
    record whose payload does not decode goes to ``undecoded``."""
    from kcodec.log import dump as log_dump
    from .records import MetadataRecord, _control_text, _payload, read_record
    line = log_dump.record_line(batch, rec)
    if batch.attributes & 0x20:
        return line + _control_text(rec) + "\n"
    mr = read_record(rec.value) if rec.value is not None else MetadataRecord(
        None, None, None, None, b"", "error", "null value")
    if undecoded is not None and mr.status not in DECODED:
        undecoded.append(rec.offset)
    return line + " payload: " + _payload(mr, rec.offset) + "\n"


def _batch_text(b: Any, position: int, undecoded: Optional[List[int]] = None) -> str:
    """A whole batch the reference way: its line (at ``position``) and its records'."""
    from kcodec.log import dump as log_dump
    pieces = [log_dump.batch_line(b, position=position) + "\n"]
    pieces += [_record_text(b, rec, undecoded) for rec in b.records]
    return "".join(pieces)


_CHUNK = 8 << 20        # bytes read per window, as kcodec.log's reader reads them


def _fast_pieces(path: str, block: int, undecoded: Optional[List[int]] = None) -> Iterator[Any]:
    """The dump's text of ``path`` after its header lines, through kcodec.kraft._dump,
    as far as the log is clean.  Returns (as a generator's value) None when the file was
    written whole, else the file position of the first window holding a batch that is not
    clean: nothing from there on was written, the general path goes on from it."""
    d = _fast.Dumper(_fast_types())
    out = bytearray(block)
    buf = bytearray(_CHUNK)
    filled = base = 0
    eof = False
    held: Any = None            # (window position, the batch read the reference way)
    with open(path, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        while True:
            while not eof and filled < len(buf):
                n = f.readinto(memoryview(buf)[filled:])
                if not n:
                    eof = True
                    break
                filled += n
            if filled == 0:
                return None
            window = memoryview(buf)[:filled]
            consumed = d.scan(window, eof)
            if consumed < 0:
                return base
            if consumed == 0:
                window.release()
                if eof:
                    return base
                # the first batch is larger than the window: grow to hold it
                need = 2 * len(buf)
                if filled >= 12:
                    blen = int.from_bytes(buf[8:12], "big", signed=True)
                    if 0 < blen <= d.max_batch_length:
                        need = max(need, blen + 12)
                # never past what the file holds from here: a length beyond it is a cut
                # (or hostile) batch, which the final scan then reports
                need = min(need, max(size - base, filled + 1))
                buf.extend(bytes(need - len(buf)))
                continue
            d.start(base)
            while True:
                rc, n = d.lines(window, out)
                if n:
                    yield memoryview(out)[:n]     # (out is written again after this)
                if rc == _fast.DONE:
                    break
                if rc == _fast.FULL:
                    if n == 0:                   # one line longer than the buffer
                        out = bytearray(2 * len(out))
                    continue
                # a control batch, a record with headers, an unknown type: the reference
                # way, from the batch's own bytes (clean: the same batch the scanner read)
                at, size, rec, position = d.pending()
                if held is None or held[0] != base + at:
                    held = (base + at, _read_batch(window[at:at + size]))
                b = held[1]
                text = (_batch_text(b, position, undecoded) if rec < 0
                        else _record_text(b, b.records[rec], undecoded))
                yield text.encode()
                d.skip()
            window.release()
            rest = filled - consumed
            buf[:rest] = buf[consumed:filled]
            filled = rest
            base += consumed
            if eof and filled == 0:
                return None


def _read_batch(data: Any) -> Any:
    """The RecordBatch of one clean batch's bytes."""
    from kcodec import log
    return next(iter(log.iter_batches(bytes(data))))


def _file_pieces(path: str, display_name: Optional[str], block: int,
                 errors: Optional[List[Any]] = None, salvage: bool = False,
                 undecoded: Optional[List[int]] = None) -> Iterator[Any]:
    """The dump's text of one file, in pieces of about ``block`` bytes or less (bytes, or
    a memoryview valid until the next piece is asked for).  A corrupt batch's line says
    ``isvalid: false``; its records follow only with ``salvage`` (then the text is
    exactly Kafka's tool's); ``errors`` collects each one's BatchError."""
    yield ("\n".join(_headers(path, display_name)) + "\n").encode()
    start = 0
    if _fast is not None:
        start = yield from _fast_pieces(path, block, undecoded)
        if start is None:
            return
    yield from _general_pieces(path, block, errors, salvage, start, display_name, undecoded)


def _general_pieces(path: str, block: int, errors: Optional[List[Any]], salvage: bool,
                    start: int, display_name: Optional[str] = None,
                    undecoded: Optional[List[int]] = None) -> Iterator[Any]:
    """The dump's text from file position ``start`` (a batch's, or 0) on, through
    kcodec.log's reader: compressed, corrupt and cut batches included."""
    import numpy as np
    from kcodec import log
    from kcodec.log import dump as log_dump
    size = os.path.getsize(path)
    shown = os.path.basename(display_name or path)     # Kafka names the file (- for stdin)
    valid = start
    types = _fast_types()
    buf = bytearray(block)
    state = np.zeros(3, np.int64)
    for ch in log.iter_chunks(path, salvage=salvage):
        first = 0
        if start:
            # the batches before ``start`` were written by the fast path (all clean)
            first = int(np.searchsorted(ch.batches["position"] + ch.base, start))
            if first == len(ch.batches):
                continue
            start = 0
        if errors is not None:
            errors.extend(ch.errors[i] for i in sorted(ch.errors) if i >= first)
        state[0], state[1], state[2] = first, -1, valid
        batch: Any = None
        while True:
            rc, n = _fast.dump_lines(types, ch.data, ch.batches, ch.records, state, buf)
            if n:
                yield memoryview(buf)[:n]         # (buf is written again after this)
            if rc == _fast.DONE:
                break
            if rc == _fast.FULL:
                if n == 0:                     # one line longer than the buffer
                    buf = bytearray(2 * len(buf))
                continue
            i = int(state[0])
            if batch is None or batch[0] != i:
                batch = (i, log_dump.chunk_batch(ch, i))
            b = batch[1]
            if rc == _fast.RECORD:
                yield _record_text(b, b.records[int(state[1])], undecoded).encode()
                state[1] += 1
                continue
            # the whole batch the reference way (compressed, control, corrupt)
            if b.error is not None and b.error.reason == "truncated":
                valid = int(state[2])
                if size > valid:
                    yield f"Found {size - valid} invalid bytes at the end of {shown}\n".encode()
                return
            yield _batch_text(b, int(state[2]), undecoded).encode()
            state[0] += 1
            state[1] = -1
            state[2] += b.batch_length + 12
        valid = int(state[2])
    if size > valid:
        yield f"Found {size - valid} invalid bytes at the end of {shown}\n".encode()


def dump_file(path: Union[str, "os.PathLike[str]"], *, display_name: Optional[str] = None,
              block: int = 1 << 22, errors: Optional[List[Any]] = None,
              salvage: bool = False, undecoded: Optional[List[int]] = None) -> Iterator[bytes]:
    """The text (UTF-8, in pieces) ``kafka-dump-log.sh --cluster-metadata-decoder --files
    PATH`` prints for one segment or snapshot file (``display_name`` replaces the path in
    "Dumping ..."), the same as :func:`kcodec.kraft.records.dump_lines` joined.
    ``undecoded``, a list, collects the offset of each record whose payload line says
    ``Error at OFFSET, skipping.`` (it did not decode)."""
    path = os.fspath(path)
    if _fast is None:
        from .records import dump_lines
        text = "".join(line + "\n" for line in dump_lines(path, display_name=display_name,
                                                            errors=errors, salvage=salvage,
                                                            undecoded=undecoded))
        return iter([text.encode()])
    return (bytes(piece) for piece in _file_pieces(path, display_name, block, errors, salvage,
                                                   undecoded))


def write_dump(path: Union[str, "os.PathLike[str]"], out: Any, *,
               display_name: Optional[str] = None, errors: Optional[List[Any]] = None,
               salvage: bool = False, undecoded: Optional[List[int]] = None) -> None:
    """Write :func:`dump_file`'s text to ``out``: a binary stream, or a text stream
    (one with a ``buffer`` gets the bytes, after what it holds is flushed); ``errors``
    and ``undecoded`` as for :func:`dump_file`."""
    raw: Optional[BinaryIO] = getattr(out, "buffer", None)
    if raw is not None:
        out.flush()
    path = os.fspath(path)
    pieces = (_file_pieces(path, display_name, 1 << 22, errors, salvage, undecoded) if _fast is not None
              else dump_file(path, display_name=display_name, errors=errors, salvage=salvage,
                             undecoded=undecoded))
    for piece in pieces:
        if raw is not None:
            raw.write(piece)
        elif isinstance(out, io.TextIOBase):
            out.write(str(piece, "utf-8"))
        else:
            out.write(piece)
    if raw is not None:
        raw.flush()
