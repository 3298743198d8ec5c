"""``kcodec kraft dump``: the lines ``kafka-dump-log.sh --cluster-metadata-decoder`` prints.

Two ways to the same text.  :func:`kcodec.kraft.records.dump_lines` builds each line from
objects (the reference).  :func:`write_dump` goes through the log reader's windows
(:func:`kcodec.log.iter_chunks`) and has csrc/kc_kjson.c write the lines of uncompressed,
valid, non-control batches straight from the bytes: the batch line from the header
fields, and for each record its ``| offset: ...`` line and payload, the record decoded by
the spec engine onto a tape and printed as Kafka's JsonConverter + Jackson print it, by a
plan compiled here from the same program (:func:`kjson_plan`).  Whatever the C side does
not take (control batches, compressed or corrupt batches, records with headers, unknown
types or versions, records that do not decode) it hands back, batch or record, to the
reference code, in place: the text is the same either way, and tests compare both on
every fixture and on logs Kafka's own tool dumped.
"""
from __future__ import annotations

import io
import json
import os
import re
import uuid
from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

import kcodec
from kcodec import _ext, log
from kcodec._program import (F_TAGGED, T_ARRAY, T_BOOL, T_BYTES, T_FLOAT64, T_INT8, T_INT16,
                             T_INT32, T_INT64, T_RECORDS, T_STRING, T_STRUCT, T_UINT16, T_UINT32,
                             T_UUID, Program)
from kcodec.log import dump as log_dump

from .records import (RECORD_TYPES, MetadataRecord, _control_text, _payload, read_record,
                      record_type_name)

__all__ = ["kjson_plan", "write_dump", "dump_file"]

# the writer (csrc/kc_kjson.c); without it every line takes the reference path
_jsonl = _ext.load("kcodec.log._jsonl")

_MAGIC = 0x4B4A0001
_D_NONE, _D_INT, _D_NULL, _D_EMPTY, _D_STR, _D_UUID_ZERO = range(6)
_INTS = (T_BOOL, T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64)
_REFS = (T_STRING, T_BYTES, T_RECORDS, T_UUID, T_ARRAY, T_STRUCT)


def _default_words(f: Any, blob: bytearray) -> Tuple[int, int, int]:
    """How the writer tells a tagged field at its default (Kafka leaves it out of the JSON):
    ``(kind, d0, d1)``; ValueError for a default it cannot compare (the program then
    takes the reference path)."""
    d, t = f.default, f.type
    if t in _INTS and type(d) in (bool, int) and (type(d) is bool) == (t == T_BOOL):
        v = int(d) & 0xFFFFFFFFFFFFFFFF
        lo, hi = v & 0xFFFFFFFF, v >> 32
        return _D_INT, lo - (1 << 32) if lo >= 1 << 31 else lo, hi - (1 << 32) if hi >= 1 << 31 else hi
    if d is None and t in _REFS:
        return _D_NULL, 0, 0
    if t == T_STRING and type(d) is str:
        b = d.encode()
        at = len(blob)
        blob += b
        return _D_STR, at, len(b)
    if (t in (T_BYTES, T_RECORDS) and type(d) is bytes and not d) or (t == T_ARRAY and d == []):
        return _D_EMPTY, 0, 0
    if t == T_UUID and isinstance(d, uuid.UUID) and d.int == 0:
        return _D_UUID_ZERO, 0, 0
    raise ValueError(f"tagged field {f.name}: default {d!r} of type {t}")


def kjson_plan(prog: Program) -> Tuple[np.ndarray, bytes]:
    """The JSON plan of a program (csrc/kc_kjson.h): for each struct, its fields in the
    schema's order with their keys, where the tape has them, and the tagged fields'
    defaults.  ValueError when the writer cannot print the message exactly (float64
    fields, defaults it cannot compare): then the reference path prints it."""
    blob = bytearray()
    blocks: List[List[int]] = []
    for sp in prog.structs:
        words = [len(sp.ordered)]
        regular = {id(f): i for i, f in enumerate(sp.fields)}
        for f in sp.ordered:
            if f.type == T_FLOAT64 or (f.type == T_ARRAY and (f.arg & 0xFF) == T_FLOAT64):
                raise ValueError(f"{sp.name}.{f.name}: float64")
            key = (json.dumps(f.name, ensure_ascii=False) + ":").encode()
            at = len(blob)
            blob += key
            if f.flags & F_TAGGED:
                kind, d0, d1 = _default_words(f, blob)
                words += [at, len(key), -1 - sp.tag_index[f.tag], kind, d0, d1]
            else:
                words += [at, len(key), regular[id(f)], _D_NONE, 0, 0]
        blocks.append(words)
    n = len(blocks)
    plan = [_MAGIC, n] + [0] * n
    for i, words in enumerate(blocks):
        plan[2 + i] = len(plan)
        plan += words
    return np.array(plan, np.int32), bytes(blob)


_TYPES: Any = None


def _types() -> Any:
    """The writer's table: every metadata record type at every version the specs know."""
    global _TYPES
    if _TYPES is None:
        entries: Dict[Tuple[int, int], Any] = {}
        for key, name in RECORD_TYPES.items():
            s = kcodec.spec(name)
            for ver in range(s.valid_versions.lowest, s.valid_versions.highest + 1):
                prog = kcodec.program(name, ver)
                try:
                    plan, blob = kjson_plan(prog)
                except ValueError:
                    continue
                head = ' payload: {"type":"%s","version":%d,"data":' % (record_type_name(key), ver)
                entries[(key, ver)] = (_jsonl.KafkaJson(np.frombuffer(prog.code, np.int32), plan, blob),
                                       head.encode())
        _TYPES = _jsonl.KraftDumpTypes(entries)
    return _TYPES


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


def _record_text(batch: Any, rec: Any) -> str:
    """One record's line the reference way (records.dump_lines' words)."""
    line = log_dump.record_line(batch, rec)
    if batch.attributes & 0x20:
        return line + _control_text(rec) + "\n"
    mr = read_record(rec.value) if rec.value is not None else MetadataRecord(
        None, None, None, None, b"", "error", "null value")
    return line + " payload: " + _payload(mr, rec.offset) + "\n"


def _file_pieces(path: str, display_name: Optional[str], block: int,
                 errors: Optional[List[Any]] = None, salvage: bool = False) -> Iterator[Any]:
    """The dump's text of one file, in pieces of about ``block`` bytes or less (bytes, or
    a memoryview valid until the next piece is asked for).  A corrupt batch's line says
    ``isvalid: false``; its records follow only with ``salvage`` (then the text is
    exactly Kafka's tool's); ``errors`` collects each one's BatchError."""
    yield ("\n".join(_headers(path, display_name)) + "\n").encode()
    size = os.path.getsize(path)
    valid = 0
    types = _types()
    buf = bytearray(block)
    state = np.zeros(3, np.int64)
    for ch in log.iter_chunks(path, salvage=salvage):
        if errors is not None:
            errors.extend(ch.errors[i] for i in sorted(ch.errors))
        state[0], state[1], state[2] = 0, -1, valid
        batch: Any = None
        while True:
            rc, n = _jsonl.kraft_dump_lines(types, ch.data, ch.batches, ch.records, state, buf)
            if n:
                yield memoryview(buf)[:n]         # (buf is written again after this)
            if rc == _jsonl.DUMP_DONE:
                break
            if rc == _jsonl.DUMP_FULL:
                if n == 0:                     # one line longer than the buffer
                    buf = bytearray(2 * len(buf))
                continue
            i = int(state[0])
            if batch is None or batch[0] != i:
                batch = (i, log_dump.chunk_batch(ch, i))
            b = batch[1]
            if rc == _jsonl.DUMP_RECORD:
                yield _record_text(b, b.records[int(state[1])]).encode()
                state[1] += 1
                continue
            # the whole batch the reference way (compressed, control, corrupt)
            if b.error is not None and b.error.reason == "truncated":
                valid = int(state[2])
                if size > valid:
                    yield f"Found {size - valid} invalid bytes at the end of {os.path.basename(path)}\n".encode()
                return
            pieces = [log_dump.batch_line(b, position=int(state[2])) + "\n"]
            pieces += [_record_text(b, rec) for rec in b.records]
            yield "".join(pieces).encode()
            state[0] += 1
            state[1] = -1
            state[2] += b.batch_length + 12
        valid = int(state[2])
    if size > valid:
        yield f"Found {size - valid} invalid bytes at the end of {os.path.basename(path)}\n".encode()


def dump_file(path: Union[str, "os.PathLike[str]"], *, display_name: Optional[str] = None,
              block: int = 1 << 22, errors: Optional[List[Any]] = None,
              salvage: bool = False) -> Iterator[bytes]:
    """The text (UTF-8, in pieces) ``kafka-dump-log.sh --cluster-metadata-decoder --files
    PATH`` prints for one segment or snapshot file (``display_name`` replaces the path in
    "Dumping ..."), the same as :func:`kcodec.kraft.records.dump_lines` joined."""
    path = os.fspath(path)
    if _jsonl is None:
        from .records import dump_lines
        text = "".join(line + "\n" for line in dump_lines(path, display_name=display_name,
                                                            errors=errors, salvage=salvage))
        return iter([text.encode()])
    return (bytes(piece) for piece in _file_pieces(path, display_name, block, errors, salvage))


def write_dump(path: Union[str, "os.PathLike[str]"], out: Any, *,
               display_name: Optional[str] = None, errors: Optional[List[Any]] = None,
               salvage: bool = False) -> None:
    """Write :func:`dump_file`'s text to ``out``: a binary stream, or a text stream
    (one with a ``buffer`` gets the bytes, after what it holds is flushed)."""
    raw: Optional[BinaryIO] = getattr(out, "buffer", None)
    if raw is not None:
        out.flush()
    path = os.fspath(path)
    pieces = (_file_pieces(path, display_name, 1 << 22, errors, salvage) if _jsonl is not None
              else dump_file(path, display_name=display_name, errors=errors, salvage=salvage))
    for piece in pieces:
        if raw is not None:
            raw.write(piece)
        elif isinstance(out, io.TextIOBase):
            out.write(str(piece, "utf-8"))
        else:
            out.write(piece)
    if raw is not None:
        raw.flush()
