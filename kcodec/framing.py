"""Framing: the bytes around a message body, and the primitives to read and write them.

Kafka rarely stores a message body bare.  ``__consumer_offsets`` keys and values, the
consumer protocol and the StickyAssignor user data start with an int16 version;
``__cluster_metadata`` records start with unsigned varints (frame version, API key,
record version); Kafka Streams' rebalance metadata starts with int32 versions that are
also fields of the body.  Every domain reads those headers through this module, so the
rules (negative versions, versions newer than the specs, error offsets relative to the
whole framed buffer) are written once::

    >>> import kcodec
    >>> from kcodec.framing import INT16_VERSION, read_framed, write_framed
    >>> data = write_framed(INT16_VERSION, "OffsetCommitValue", {"offset": 7}, 3)
    >>> f = read_framed(data, INT16_VERSION, "OffsetCommitValue")
    >>> (f.version, f.value["offset"], f.size == len(data))
    (3, 7, True)

:class:`Reader` and :class:`Writer` are the primitives (big-endian ints, Kafka's
varints, int16/int32-length strings and bytes, Java's modified UTF-8, UUIDs) for the few
layouts Kafka writes by hand; every error they raise is a :class:`DecodeError` naming the
field path and the byte offset in the caller's buffer.
"""
from __future__ import annotations

import re
import struct
import uuid as _uuid
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple, Union

from .errors import DecodeError, EncodeError, not_bytes_like

__all__ = [
    "Reader", "Writer", "Frame", "FrameHeader", "Framed", "VersionPrefix", "KraftRecordFrame",
    "INT16_VERSION", "KRAFT_RECORD", "read_framed", "write_framed",
]

_I8, _I16, _I32, _I64 = struct.Struct(">b"), struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_U16, _U32 = struct.Struct(">H"), struct.Struct(">I")


class Reader:
    """A bounds-checked big-endian reader over ``data[offset:]``.

    Positions (``pos``, error offsets) are in ``data``'s coordinates.  ``message`` and
    ``version`` only label errors."""

    __slots__ = ("buf", "pos", "end", "message", "version")

    def __init__(self, data: Any, offset: int = 0, *, message: Optional[str] = None,
                 version: Optional[int] = None) -> None:
        try:
            mv = data if isinstance(data, memoryview) else memoryview(data)
        except TypeError:
            raise not_bytes_like(data, "data") or TypeError(data) from None
        self.buf = mv.cast("B") if mv.format != "B" or mv.ndim != 1 else mv
        self.pos = offset
        self.end = self.buf.nbytes
        self.message = message
        self.version = version

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def fail(self, reason: str, path: str = "", offset: Optional[int] = None) -> DecodeError:
        """The error to raise for ``reason`` at the current position (or ``offset``)."""
        return DecodeError(reason, message=self.message, version=self.version, path=path,
                           offset=self.pos if offset is None else offset)

    def need(self, n: int, path: str = "") -> None:
        if n > self.end - self.pos:
            raise self.fail(f"needs {n} bytes, {self.end - self.pos} left", path)

    def _fixed(self, st: struct.Struct, path: str) -> int:
        if st.size > self.end - self.pos:
            raise self.fail(f"needs {st.size} bytes, {self.end - self.pos} left", path)
        v = st.unpack_from(self.buf, self.pos)[0]
        self.pos += st.size
        return v

    def int8(self, path: str = "") -> int:
        return self._fixed(_I8, path)

    def int16(self, path: str = "") -> int:
        return self._fixed(_I16, path)

    def int32(self, path: str = "") -> int:
        return self._fixed(_I32, path)

    def int64(self, path: str = "") -> int:
        return self._fixed(_I64, path)

    def uint16(self, path: str = "") -> int:
        return self._fixed(_U16, path)

    def uint32(self, path: str = "") -> int:
        return self._fixed(_U32, path)

    def uvarint(self, path: str = "", *, max_bytes: int = 5) -> int:
        """Kafka's unsigned varint (5 bytes at most; ``max_bytes=10`` for a varlong)."""
        start, value, shift = self.pos, 0, 0
        for i in range(max_bytes):
            if self.pos >= self.end:
                raise self.fail("truncated varint", path, start)
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
        raise self.fail("varint is too long", path, start)

    def varint(self, path: str = "") -> int:
        """Zig-zag varint (int32)."""
        v = self.uvarint(path)
        return (v >> 1) ^ -(v & 1)

    def varlong(self, path: str = "") -> int:
        """Zig-zag varlong (int64)."""
        v = self.uvarint(path, max_bytes=10)
        return (v >> 1) ^ -(v & 1)

    def raw(self, n: int, path: str = "") -> bytes:
        if n < 0:
            raise self.fail(f"invalid length {n}", path)
        self.need(n, path)
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def rest(self) -> bytes:
        """Every byte left (the reader is then at the end)."""
        return self.raw(self.end - self.pos)

    def bytes32(self, path: str = "", *, nullable: bool = True) -> Optional[bytes]:
        """int32 length (-1 = null) then the bytes."""
        start = self.pos
        n = self.int32(path)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise self.fail(f"invalid length {n}", path, start)
        return self.raw(n, path)

    def string16(self, path: str = "", *, nullable: bool = True) -> Optional[str]:
        """Kafka's string: int16 length (-1 = null), UTF-8."""
        start = self.pos
        n = self.int16(path)
        if n < 0:
            if n == -1 and nullable:
                return None
            raise self.fail(f"string had invalid length {n}", path, start)
        data = self.raw(n, path)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.fail("string is not valid UTF-8", path, start + 2 + e.start) from None

    def java_utf(self, path: str = "") -> str:
        """Java's ``DataInput.readUTF``: uint16 byte length, then modified UTF-8 (NUL as
        C0 80, characters beyond the BMP as two 3-byte surrogates)."""
        start = self.pos
        n = self.uint16(path)
        data = self.raw(n, path)
        if any(b >= 0xF0 for b in data):   # 4-byte forms are not modified UTF-8
            raise self.fail("malformed modified UTF-8", path, start + 2)
        try:
            text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        except UnicodeError:
            raise self.fail("malformed modified UTF-8", path, start + 2) from None
        try:   # pair up surrogates the way Java's UTF-16 strings hold them
            return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
        except UnicodeError:   # a lone surrogate, which Java's readUTF accepts: kept as is
            return text

    def uuid(self, path: str = "") -> _uuid.UUID:
        return _uuid.UUID(bytes=self.raw(16, path))


class Writer:
    """The inverse of :class:`Reader`: appends big-endian primitives; :meth:`getvalue`."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list = []

    def getvalue(self) -> bytes:
        return b"".join(self.parts)

    def _fixed(self, st: struct.Struct, v: int, path: str) -> "Writer":
        try:
            self.parts.append(st.pack(v))
        except (struct.error, TypeError):
            raise EncodeError(f"{v!r} does not fit {st.format[1:]}", path=path) from None
        return self

    def int8(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_I8, v, path)

    def int16(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_I16, v, path)

    def int32(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_I32, v, path)

    def int64(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_I64, v, path)

    def uint16(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_U16, v, path)

    def uint32(self, v: int, path: str = "") -> "Writer":
        return self._fixed(_U32, v, path)

    def uvarint(self, v: int, path: str = "", *, max_bits: int = 32) -> "Writer":
        if not isinstance(v, int) or v < 0 or v >> max_bits:
            raise EncodeError(f"{v!r} does not fit an unsigned varint", path=path)
        out = bytearray()
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
        self.parts.append(bytes(out))
        return self

    def varint(self, v: int, path: str = "") -> "Writer":
        if not isinstance(v, int) or not -(1 << 31) <= v < (1 << 31):
            raise EncodeError(f"{v!r} does not fit a varint", path=path)
        return self.uvarint(((v << 1) ^ (v >> 31)) & 0xFFFFFFFF, path)

    def varlong(self, v: int, path: str = "") -> "Writer":
        if not isinstance(v, int) or not -(1 << 63) <= v < (1 << 63):
            raise EncodeError(f"{v!r} does not fit a varlong", path=path)
        return self.uvarint(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1), path, max_bits=64)

    def raw(self, data: bytes) -> "Writer":
        self.parts.append(bytes(data))
        return self

    def bytes32(self, data: Optional[bytes], path: str = "") -> "Writer":
        if data is None:
            return self.int32(-1, path)
        return self.int32(len(data), path).raw(data)

    def string16(self, s: Optional[str], path: str = "") -> "Writer":
        if s is None:
            return self.int16(-1, path)
        b = s.encode("utf-8")
        if len(b) > 0x7FFF:
            raise EncodeError(f"string is {len(b)} bytes, longer than 32767", path=path)
        return self.int16(len(b), path).raw(b)

    def java_utf(self, s: str, path: str = "") -> "Writer":
        """Java's ``DataOutput.writeUTF`` (modified UTF-8, at most 65535 bytes)."""
        # characters beyond the BMP become surrogate pairs, each written as 3 bytes
        split = _ASTRAL.sub(_surrogates, s)
        b = split.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")
        if len(b) > 0xFFFF:
            raise EncodeError(f"encoded string too long: {len(b)} bytes", path=path)
        return self.uint16(len(b), path).raw(b)

    def uuid(self, u: _uuid.UUID, path: str = "") -> "Writer":
        return self.raw(u.bytes)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _surrogates(m: "re.Match[str]") -> str:
    c = ord(m.group()) - 0x10000
    return chr(0xD800 + (c >> 10)) + chr(0xDC00 + (c & 0x3FF))


# --------------------------------------------------------------------------- frames

class FrameHeader(NamedTuple):
    """What a frame says about the body that follows it."""
    version: int                          # the message version on the wire
    size: int                             # header bytes: the body starts here
    api_key: Optional[int] = None         # KRaft records: the record type
    frame_version: Optional[int] = None   # KRaft records: the frame layout version
    latest_supported: Optional[int] = None  # Streams: the sender's newest version


class Frame:
    """A header layout: :meth:`read` it from a :class:`Reader`, :meth:`write` it."""
    name = "frame"

    def read(self, r: Reader) -> FrameHeader:  # pragma: no cover - interface
        raise NotImplementedError

    def write(self, w: Writer, version: int, **fields: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<frame {self.name}>"


class VersionPrefix(Frame):
    """An int16 or int32 version.  ``in_body``: the version is also the body's first
    field (read, not consumed; Streams).  ``latest_supported_from``: from that version
    on, a second int of the same width carries the sender's latest supported version."""

    def __init__(self, name: str, width: int = 2, *, in_body: bool = False,
                 latest_supported_from: Optional[int] = None) -> None:
        if width not in (2, 4):
            raise ValueError("width must be 2 or 4")
        self.name, self.width, self.in_body = name, width, in_body
        self.latest_supported_from = latest_supported_from

    def read(self, r: Reader) -> FrameHeader:
        start = r.pos
        get = r.int16 if self.width == 2 else r.int32
        version = get("version")
        if version < 0:
            raise r.fail(f"unsupported version {version}", "version", start)
        latest = None
        if self.latest_supported_from is not None and version >= self.latest_supported_from:
            latest = get("latestSupportedVersion")
        size = r.pos - start
        if self.in_body:
            r.pos = start
            size = 0
        return FrameHeader(version, size, latest_supported=latest)

    def write(self, w: Writer, version: int, **fields: Any) -> None:
        if self.in_body:
            return
        put = w.int16 if self.width == 2 else w.int32
        put(version, "version")
        if self.latest_supported_from is not None and version >= self.latest_supported_from:
            put(fields.get("latest_supported", version), "latestSupportedVersion")


class KraftRecordFrame(Frame):
    """``__cluster_metadata`` record framing (Kafka's AbstractApiMessageSerde, behind
    MetadataRecordSerde): unsigned varints frame version (1, the only one Kafka reads),
    API key (the record type), record version."""
    name = "kraft-record"
    FRAME_VERSION = 1

    def read(self, r: Reader) -> FrameHeader:
        start = r.pos
        fv = r.uvarint("frameVersion")
        if fv != self.FRAME_VERSION:
            raise r.fail(f"unknown frame version {fv}", "frameVersion", start)
        key = r.uvarint("apiKey")
        at = r.pos
        version = r.uvarint("version")
        if version > 0x7FFF:
            raise r.fail(f"record version {version} does not fit int16", "version", at)
        return FrameHeader(version, r.pos - start, api_key=key, frame_version=fv)

    def write(self, w: Writer, version: int, **fields: Any) -> None:
        w.uvarint(self.FRAME_VERSION, "frameVersion")
        w.uvarint(fields["api_key"], "apiKey")
        w.uvarint(version, "version", max_bits=15)


INT16_VERSION = VersionPrefix("int16-version", 2)
KRAFT_RECORD = KraftRecordFrame()


class Framed(NamedTuple):
    """The result of :func:`read_framed`."""
    header: FrameHeader
    message: Optional[str]     # the spec the body was read as (None: header only)
    version: int               # the version on the wire
    parsed_version: int        # the layout the body was read with
    value: Optional[dict]      # the decoded body (None: header only)
    newer_than_known: bool     # the wire version is above the spec's newest
    size: int                  # bytes consumed: header + body
    trailing: bytes            # bytes after the body (``trailing="allow"``)


MessageChoice = Union[None, str, Callable[[FrameHeader], Optional[str]]]


_READ_BODY: Optional[Callable[..., Any]] = None


def _engine_read_body() -> Callable[..., Any]:
    """kcodec's body reader, looked up once: kcodec imports this module, so not at import time."""
    global _READ_BODY
    if _READ_BODY is None:
        from . import _read_body
        _READ_BODY = _read_body
    return _READ_BODY


def read_framed(data: Any, frame: Frame = INT16_VERSION, message: MessageChoice = None, *,
                newer: str = "error", trailing: str = "error", offset: int = 0) -> Framed:
    """Read a frame header from ``data[offset:]`` and, when ``message`` is given (a spec
    name, or a function of the header returning one), the body after it.

    ``newer="latest"`` reads a body whose version is above the spec's newest with the
    newest layout (Kafka's rule for coordinator records and the consumer protocol);
    ``"error"`` raises :class:`~kcodec.errors.UnsupportedVersionError`.  Byte offsets
    in errors are offsets in ``data``.
    """
    if frame is INT16_VERSION and message is not None and type(data) is bytes:
        f = _read_int16_framed(data, message, newer, trailing, offset)
        if f is not None:
            return f
    r = Reader(data, offset, message=message if isinstance(message, str) else None)
    header = frame.read(r)
    name = message(header) if callable(message) else message
    if name is None:
        return Framed(header, None, header.version, header.version, None, False,
                      header.size, b"")
    prog, value, end, rest = (_READ_BODY or _engine_read_body())(
        name, r.buf, header.version, newer, trailing, offset + header.size)
    ntk = prog.newer_than_known
    parsed = _parsed_version(name, header.version) if ntk else header.version
    return Framed(header, name, header.version, parsed, value, ntk, end - offset, rest)


_PARSED: Dict[Tuple[str, int], int] = {}   # (message, wire version above the newest) -> newest


def _parsed_version(name: str, version: int) -> int:
    """The layout a body of ``name`` at ``version`` is read with (newer: the newest)."""
    parsed = _PARSED.get((name, version))
    if parsed is None:
        from . import spec
        parsed = min(version, spec(name).valid_versions.highest)
        if len(_PARSED) >= 4096:
            _PARSED.clear()
        _PARSED[(name, version)] = parsed
    return parsed


def _read_int16_framed(data: bytes, message: MessageChoice, newer: str, trailing: str,
                       offset: int) -> Optional[Framed]:
    """The common case of :func:`read_framed` (an int16 version then a body, in bytes)
    without a :class:`Reader`: many small embedded payloads per record come this way.
    None when the header is not plainly readable; the general path then words the error."""
    if offset < 0 or len(data) - offset < 2:
        return None
    version = _I16.unpack_from(data, offset)[0]
    if version < 0:
        return None
    header = _INT16_HEADERS[version] if version < 64 else _tuple(FrameHeader, (version, 2, None, None, None))
    name = message if isinstance(message, str) else message(header)  # type: ignore[operator]
    if name is None:
        return Framed(header, None, version, version, None, False, 2, b"")
    prog, value, end, rest = (_READ_BODY or _engine_read_body())(name, data, version, newer, trailing,
                                                                 offset + 2)
    newer_than_known = prog.newer_than_known
    parsed = _parsed_version(name, version) if newer_than_known else version
    return _tuple(Framed, (header, name, version, parsed, value, newer_than_known, end - offset, rest))


_tuple = tuple.__new__   # a NamedTuple from a full tuple without its Python-level __new__
_INT16_HEADERS = [FrameHeader(v, 2) for v in range(64)]   # every version Kafka writes, shared



def write_framed(frame: Frame, message: str, value: dict, version: int, **header: Any) -> bytes:
    """The frame header for ``version`` (and ``header`` fields, e.g. ``api_key``) followed
    by ``value`` encoded as ``message`` at ``version``."""
    from . import encode

    w = Writer()
    frame.write(w, version, **header)
    w.raw(encode(message, value, version))
    return w.getvalue()
