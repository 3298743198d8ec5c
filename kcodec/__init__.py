"""kcodec: fast, exact codecs for Apache Kafka's coordination metadata.

One engine, driven by Kafka's own JSON message specs (4.1.1, shipped as package data),
decodes and encodes any message at any version::

    >>> import kcodec
    >>> value = kcodec.decode("OffsetCommitValue", data, version=4)
    >>> kcodec.encode("OffsetCommitValue", value, version=4) == data
    True

The C engine is used when the extension is built; ``KCODEC_NO_EXTENSIONS=1`` selects
the pure-Python reference engine (same results, slower).
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Union

from . import _codec_py, _ext, _numbers
from ._kjson import from_kafka_json as _from_kjson, to_kafka_json as _to_kjson, uuid_from_kafka, uuid_to_kafka
from ._program import Program, program as _program
from ._spec import MessageSpec, Versions, spec, spec_for_api_key, spec_for_record_type, specs
from .errors import (ArgumentTypeError, CodecError, CorruptRecordError, DecodeError, EncodeError,
                     KcodecError, SchemaError, UnknownMessageError, UnsupportedVersionError,
                     not_bytes_like)

__version__ = "0.1.0"

__all__ = [
    "decode", "read", "encode", "decode_bulk", "to_kafka_json", "from_kafka_json",
    "Decoded", "spec", "specs", "spec_for_api_key", "spec_for_record_type", "program",
    "MessageSpec", "Versions", "uuid_to_kafka", "uuid_from_kafka", "NATIVE",
    "read_framed", "write_framed", "KcodecError", "CodecError", "DecodeError", "EncodeError", "SchemaError", "UnknownMessageError",
    "UnsupportedVersionError", "CorruptRecordError", "UNKNOWN_TAGS_KEY", "slice_heads",
]

UNKNOWN_TAGS_KEY = _codec_py.UNKNOWN_TAGS_KEY

# the C engine when built (and not switched off, see kcodec._ext), else the reference engine
_engine: Any = _ext.load("kcodec._native") or _codec_py
NATIVE = _engine is not _codec_py


class Decoded(NamedTuple):
    """The result of :func:`read`."""
    value: Dict[str, Any]
    version: int               # the version asked for
    newer_than_known: bool     # decoded with the newest known layout (``newer="latest"``)
    size: int                  # bytes consumed
    trailing: bytes            # bytes after the message (only with ``trailing="allow"``)


def program(name: str, version: int, *, newer: str = "error") -> Program:
    """The compiled program of message ``name`` at ``version``.

    ``newer="error"`` rejects versions outside the spec's valid versions;
    ``newer="latest"`` accepts versions above the newest known one and uses the layout
    of the open-ended fields, as Kafka's generated code does.  Versions are int16 on the
    wire: anything outside 0..32767 is refused either way.
    """
    if type(version) is not int:
        version = _as_version(version)
    key = (name, version, newer)
    try:
        prog = _CHECKED.get(key)
    except TypeError:   # an unhashable name (a list, a bytearray)
        raise _name_error(name) from None
    if prog is not None:
        return prog
    if newer not in ("error", "latest"):
        raise ValueError("newer must be 'error' or 'latest'")
    if not isinstance(name, str):
        raise _name_error(name)
    s = spec(name)
    vv = s.valid_versions
    if not 0 <= version <= 0x7FFF or version < vv.lowest or vv.empty \
            or (version > vv.highest and newer != "latest"):
        raise UnsupportedVersionError(
            f"{s.name} version {version} is outside its valid versions {vv}"
            + ("" if newer == "latest" or version < vv.lowest or version > 0x7FFF
               else _NEWER_HINT))
    # Every version above the newest known reads with one layout: one program for all of
    # them, so a log full of odd versions cannot grow the caches.
    prog = _program(s.name, min(version, vv.highest + 1))
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[key] = prog
    return prog


# (the command line words it as its --newer option)
_NEWER_HINT = " (pass newer='latest' to decode it with the newest layout)"

_CHECKED: Dict[Any, Program] = {}   # (name, version, newer) -> program: one dict hit per call
_CHECKED_MAX = 8192


def _as_version(version: Any) -> int:
    if isinstance(version, bool) or not _numbers.is_integral(version):
        raise ArgumentTypeError("version", f"expected an int, got {type(version).__name__} "
                                           f"{version!r:.40}")
    return int(version)


def _name_error(name: Any) -> ArgumentTypeError:
    return ArgumentTypeError("name", f"expected a message name (a str such as "
                                     f"'OffsetCommitValue'), got {type(name).__name__}")


def _check_trailing(trailing: str) -> None:
    if trailing != "error" and trailing != "allow":
        raise ValueError(f"trailing must be 'error' or 'allow', got {trailing!r}")


def _decode(prog: Program, data: Any, offset: int, version: int) -> Any:
    try:
        return _engine.decode(prog, data, offset)
    except DecodeError as e:
        if prog.version != version:   # the shared newest-layout program: name the wire version
            raise e.relabel(version) from None
        raise
    except TypeError:
        # the engine takes any buffer; only on its refusal is the type looked at
        err = not_bytes_like(data, "data")
        if err is not None:
            raise err from None
        raise


def read(name: str, data: Any, version: int, *, newer: str = "error",
         trailing: str = "error", offset: int = 0) -> Decoded:
    """Decode one message body and report how it went (see :class:`Decoded`).

    ``trailing="error"`` (default) raises :class:`DecodeError` when bytes remain after the
    message; ``trailing="allow"`` returns them in ``Decoded.trailing``.
    """
    prog, value, end, rest = _read_body(name, data, version, newer, trailing, offset)
    # (tuple.__new__: no Python-level NamedTuple __new__ on this per-record path)
    return tuple.__new__(Decoded, (value, version, prog.newer_than_known, end - offset, rest))


def _read_body(name: str, data: Any, version: int, newer: str, trailing: str,
               offset: int) -> Any:
    """:func:`read` as ``(program, value, end, trailing bytes)``: the framing layer reads
    many small bodies per record and builds its own result."""
    if trailing != "error" and trailing != "allow":
        _check_trailing(trailing)
    try:
        prog = _CHECKED.get((name, version, newer)) if type(version) is int else None
    except TypeError:   # an unhashable name
        raise _name_error(name) from None
    if prog is None:
        prog = program(name, version, newer=newer)
    value, end = _decode(prog, data, offset, version)
    n = len(data) if type(data) is bytes else memoryview(data).nbytes
    rest = b""
    if end != n:
        if trailing != "allow":
            raise DecodeError(f"{n - end} trailing bytes after the message",
                              message=prog.name, version=version, offset=end)
        rest = data[end:] if type(data) is bytes else bytes(memoryview(data).cast("B")[end:])
    return prog, value, end, rest


def decode(name: str, data: Any, version: int, *, newer: str = "error",
           trailing: str = "error") -> Dict[str, Any]:
    """Decode a message body (no framing) of the spec ``name`` at ``version`` to a dict.

    Value mapping: struct -> dict keyed by Kafka's JSON field names (every field of the
    version; tagged fields absent on the wire at their default), ints -> int, bool, float64
    -> float, string -> str, bytes/records -> bytes, uuid -> uuid.UUID, arrays -> list,
    null -> None, unknown tagged fields -> ``"_unknown_tagged_fields": [(tag, bytes)]``.
    """
    prog = program(name, version, newer=newer)
    value, end = _decode(prog, data, 0, version)
    if trailing != "allow":
        _check_trailing(trailing)
        n = memoryview(data).nbytes
        if end != n:
            raise DecodeError(f"{n - end} trailing bytes after the message",
                              message=prog.name, version=version, offset=end)
    return value


def encode(name: str, value: Dict[str, Any], version: int, *, newer: str = "error") -> bytes:
    """Encode ``value`` as message ``name`` at ``version``; missing fields take their default."""
    return _engine.encode(program(name, version, newer=newer), value)


def to_kafka_json(name: str, value: Dict[str, Any], version: int) -> Dict[str, Any]:
    """Kafka's JsonConverter form of a decoded value (bytes base64, uuid base64url,
    tagged fields at their default omitted, unknown tagged fields dropped)."""
    return _to_kjson(program(name, version, newer="latest"), value)


def from_kafka_json(name: str, obj: Dict[str, Any], version: int) -> Dict[str, Any]:
    """The inverse of :func:`to_kafka_json`: a value ready for :func:`encode`."""
    return _from_kjson(program(name, version, newer="latest"), obj)


def decode_bulk(name: str, values: Any, version: int, *, newer: str = "error",
                arrow: bool = False) -> Any:
    """Decode many values of one message and version into columns.

    ``values`` is a list of bytes or a pyarrow ``BinaryArray``/``LargeBinaryArray``.
    Returns ``{field: column}`` for the top-level fields (NumPy arrays for numbers and
    bools, pyarrow arrays for strings, bytes and uuids, lists for nested fields), plus
    ``"_ok"`` (bool per row) and ``"_error"`` (None or the reason, per row): a bad value
    flags its row instead of raising.  ``arrow=True``: the typed ``pyarrow.RecordBatch``
    of :func:`kcodec.arrow.decode` instead.
    """
    prog = program(name, version, newer=newer)
    if arrow:
        from .arrow import decode_program
        return decode_program(prog, values)
    bulk = getattr(_engine, "decode_bulk", None)
    try:
        if bulk is None:
            return _decode_bulk_py(prog, values)
        return bulk(prog, values)
    except TypeError:
        err = _bulk_type_error(values)
        if err is not None:
            raise err from None
        raise


def _bulk_type_error(values: Any) -> Optional[ArgumentTypeError]:
    """Why ``values`` is no list of values (looked at only once the engine refused it)."""
    if not_bytes_like(values, "values") is None:
        # one bytes-like object: iterating it would give its ints, one per "row"
        return ArgumentTypeError("values", f"expected a list of bytes-like values (or a pyarrow "
                                           f"BinaryArray), got one {type(values).__name__}: pass "
                                           f"[data] to decode a single value")
    if hasattr(values, "to_pylist"):
        return None
    try:
        if isinstance(values, (str, dict)):
            raise TypeError(values)
        items = list(values)
    except TypeError:
        return ArgumentTypeError("values", f"expected a list of bytes-like values (or a pyarrow "
                                           f"BinaryArray), got {type(values).__name__}")
    for i, v in enumerate(items):
        if v is not None:
            err = not_bytes_like(v, f"values[{i}]")
            if err is not None:
                return err
    return None


def _decode_bulk_py(prog: Program, values: Any) -> Dict[str, Any]:
    """Reference bulk decode: one Python object per value, then transposed."""
    if hasattr(values, "to_pylist"):
        values = values.to_pylist()
    keys = prog.top.keys
    cols: Dict[str, List[Any]] = {k: [] for k in keys}
    ok: List[bool] = []
    err: List[Optional[str]] = []
    for raw in values:
        try:
            if raw is None:
                raise DecodeError("null value", message=prog.name, version=prog.version)
            v, end = _codec_py.decode(prog, raw, 0)
            if end != len(raw):
                raise DecodeError(f"{len(raw) - end} trailing bytes after the message",
                                  message=prog.name, version=prog.version, offset=end)
        except DecodeError as e:
            ok.append(False)
            err.append(str(e))
            for k in keys:
                cols[k].append(None)
            continue
        ok.append(True)
        err.append(None)
        for k in keys:
            cols[k].append(v[k])
    out: Dict[str, Any] = dict(cols)
    out["_ok"] = ok
    out["_error"] = err
    return out


def slice_heads(buffer: Any, positions: Any, lengths: Any, k: int, *, take: Any = None) -> Any:
    """The first ``k`` (<= 8) bytes of each record slice ``buffer[positions[i]:
    positions[i] + lengths[i]]``, as ``(heads, have)`` NumPy arrays: see
    :func:`kcodec._columns.slice_heads` (NumPy is imported on first use, not by
    ``import kcodec``)."""
    from ._columns import slice_heads as impl
    return impl(buffer, positions, lengths, k, take=take)


from .framing import read_framed, write_framed  # noqa: E402  (uses read/encode above)
