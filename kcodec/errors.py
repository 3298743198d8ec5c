"""Exceptions raised by kcodec.

Every error kcodec raises on bad input derives from :class:`KcodecError`::

    KcodecError
    ├── InvalidArgumentError        an argument, or a field of one, kcodec cannot use
    │   │                           (also a ValueError; ``argument`` names it)
    │   └── ArgumentTypeError       ... of the wrong type (also a TypeError)
    ├── InputPathError              a path that cannot be read as asked: missing, a dangling
    │                               link, a FIFO, no segment files (``path``, ``reason``)
    ├── SchemaError                 a spec could not be parsed or compiled
    ├── UnknownMessageError         no spec of that name / API key / record type (also a KeyError)
    └── CodecError                  bytes or values that do not fit a message (also a ValueError)
        ├── DecodeError             bytes that do not decode
        │   └── CorruptRecordError  a corrupt record batch or log segment (``file``, ``position``)
        ├── EncodeError             a value that cannot be written
        └── UnsupportedVersionError a version the message does not have, or a field the
                                    version cannot carry (Kafka's UnsupportedVersionException)

Codec errors carry the message name, version, the path of the field being read or written
(``"topics[2].partitions[0].committedOffset"``) and, when decoding, the byte offset in the
input where reading failed.  Argument errors carry the argument's path
(``"members[1].topics"``, ``"--tasks"``).  ``kcodec.cli`` maps each class to the command
line's exit code (see its module docstring).
"""
from __future__ import annotations

from typing import Optional

__all__ = [
    "KcodecError",
    "SchemaError",
    "UnknownMessageError",
    "CodecError",
    "UnsupportedVersionError",
    "DecodeError",
    "EncodeError",
    "CorruptRecordError",
    "InvalidArgumentError",
    "ArgumentTypeError",
    "InputPathError",
]


def _located(reason: str, where: list) -> str:
    where = [w for w in where if w]
    return f"{reason} ({', '.join(where)})" if where else reason


class KcodecError(Exception):
    """Base class of every kcodec error."""


class SchemaError(KcodecError):
    """A message spec could not be parsed or compiled."""


class UnknownMessageError(KcodecError, KeyError):
    """No message spec with that name, API key or record type."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class CodecError(KcodecError, ValueError):
    """Bytes or a value that do not fit a message at a version.

    ``reason`` is what went wrong; ``message``/``version`` name the message; ``path`` is
    the field (``"members[1].assignment"``); ``offset`` the byte offset where reading
    failed (``None`` when writing)."""

    def __init__(self, reason: str, *, message: Optional[str] = None,
                 version: Optional[int] = None, path: str = "",
                 offset: Optional[int] = None) -> None:
        self.reason = reason
        self.message = message
        self.version = version
        self.path = path
        self.offset = offset
        super().__init__(self._text())

    def _where(self) -> list:
        msg = None
        if self.message is not None:
            msg = f"{self.message} v{self.version}" if self.version is not None else self.message
        return [msg, f"field {self.path}" if self.path else None,
                None if self.offset is None else f"byte offset {self.offset}"]

    def _text(self) -> str:
        return _located(self.reason, self._where())

    def relabel(self, version: int) -> "CodecError":
        """The same error naming another version (the one on the wire)."""
        return _rebuild(type(self), dict(self.__dict__, version=version))

    def __reduce__(self):  # keyword-only arguments: pickle (Spark, multiprocessing) by state
        return (_rebuild, (type(self), self.__dict__.copy()))


def _rebuild(cls: type, state: dict) -> "CodecError":
    err = cls.__new__(cls)
    err.__dict__.update(state)
    Exception.__init__(err, err._text())
    return err


class DecodeError(CodecError):
    """Input bytes do not decode as the given message and version."""


class EncodeError(CodecError):
    """A Python value cannot be encoded as the given message and version."""

    def __init__(self, reason: str, *, message: Optional[str] = None,
                 version: Optional[int] = None, path: str = "") -> None:
        super().__init__(reason, message=message, version=version, path=path)


class UnsupportedVersionError(CodecError):
    """A version outside the message's valid versions was asked for in strict mode (when
    decoding or encoding), or a non-default, non-ignorable field cannot be written at the
    target version."""


class CorruptRecordError(DecodeError):
    """A record batch or log segment is corrupt (bad CRC, bad lengths, a cut batch, a
    decompression bomb, ...).  ``file`` and ``position`` say where the batch starts;
    ``path`` names the part of the batch or record when known (``"key"``)."""

    def __init__(self, reason: str, *, file: Optional[str] = None,
                 position: Optional[int] = None, path: str = "",
                 offset: Optional[int] = None, message: Optional[str] = None,
                 version: Optional[int] = None) -> None:
        self.file = file
        self.position = position
        # the batch's position is where reading failed unless a finer offset is known
        super().__init__(reason, message=message, version=version, path=path,
                         offset=position if offset is None else offset)

    def _where(self) -> list:
        where = super()._where()
        if self.offset == self.position:
            where[-1] = None
        return ([f"file {self.file}" if self.file else None,
                 None if self.position is None else f"position {self.position}"] + where)


class InvalidArgumentError(KcodecError, ValueError):
    """An argument or setting kcodec cannot use (of the wrong shape, out of range, or one
    that would make an algorithm fail to finish): ``argument`` names it, down to the field
    (``"members[1].topics"``, ``"level"``, ``"--tasks"``,
    ``"rack.aware.assignment.traffic_cost"``), ``reason`` says what is wrong.
    A ``ValueError``, so code catching those keeps working."""

    def __init__(self, argument: str, reason: str) -> None:
        self.argument = argument
        self.reason = reason
        super().__init__(f"{argument}: {reason}" if argument else reason)

    def __reduce__(self):
        return (type(self), (self.argument, self.reason))


class ArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument, or a field of one, of the wrong type (a list where an object is
    expected, a string where a level is)."""


def expect_type(value: object, types: "type | tuple", argument: str, what: str) -> object:
    """``value`` if it is an instance of ``types`` (``bool`` is never taken for ``int``),
    else an :class:`ArgumentTypeError` naming ``argument`` and ``what`` was expected."""
    ok = isinstance(value, types)
    if ok and isinstance(value, bool) and not (types is bool or
                                              (isinstance(types, tuple) and bool in types)):
        ok = False
    if not ok:
        raise ArgumentTypeError(argument, f"expected {what}, got {_type_name(value)}")
    return value


def not_bytes_like(value: object, argument: str) -> "ArgumentTypeError | None":
    """The :class:`ArgumentTypeError` for ``value`` where bytes belong, or None when it is
    bytes-like (bytes, bytearray, memoryview, or another object with the buffer protocol:
    an ``array.array``, a NumPy array, an ``mmap``). Decoders call it only once the engine
    has refused the object, so the check costs nothing on the hot path."""
    try:
        memoryview(value)           # type: ignore[arg-type]
        return None
    except TypeError:
        pass
    hint = "; bytes.fromhex(s) reads a hex string" if isinstance(value, str) else ""
    got = "None" if value is None else type(value).__name__
    return ArgumentTypeError(argument, f"expected a bytes-like object (bytes, bytearray or "
                                       f"memoryview), got {got}{hint}")


def as_bytes(value: object, argument: str) -> bytes:
    """``value`` as ``bytes`` (bytes as is, other bytes-like objects copied). Anything else
    is an :class:`ArgumentTypeError` naming ``argument``: ``bytes(x)`` would turn an int N
    into N zero bytes and a list of ints into their bytes."""
    if type(value) is bytes:
        return value
    err = not_bytes_like(value, argument)
    if err is not None:
        raise err
    return memoryview(value).tobytes()  # type: ignore[arg-type]


def _type_name(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "an integer", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


class InputPathError(KcodecError):
    """A path that cannot be read as asked (missing, a dangling symbolic link, a FIFO or
    device where a segment is expected, a directory without segment files); ``path`` and
    ``reason`` say which and why."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")

    def __reduce__(self):
        return (type(self), (self.path, self.reason))
