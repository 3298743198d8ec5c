"""Exceptions raised by kcodec.

Every error kcodec raises on bad input derives from :class:`KcodecError`.
Decoding errors carry the message name, version, the path of the field being
read (``"Topics[2].Partitions[0].CommittedOffset"``) and the byte offset in
the input where reading failed.
"""
from __future__ import annotations

from typing import Optional

__all__ = [
    "KcodecError",
    "SchemaError",
    "UnknownMessageError",
    "UnsupportedVersionError",
    "DecodeError",
    "EncodeError",
    "CorruptRecordError",
]


def _located(reason: str, message: Optional[str], version: Optional[int], path: str,
             offset: Optional[int]) -> str:
    """``reason (Message vN, field a.b[2], byte offset K)``: where a codec error happened."""
    where = []
    if message is not None:
        where.append(f"{message} v{version}" if version is not None else message)
    if path:
        where.append(f"field {path}")
    if offset is not None:
        where.append(f"byte offset {offset}")
    return f"{reason} ({', '.join(where)})" if where else reason


class KcodecError(Exception):
    """Base class of every kcodec error."""


class SchemaError(KcodecError):
    """A message spec could not be parsed or compiled."""


class UnknownMessageError(KcodecError, KeyError):
    """No message spec with that name, API key or record type."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class DecodeError(KcodecError, ValueError):
    """Input bytes do not decode as the given message and version."""

    def __init__(
        self,
        reason: str,
        *,
        message: Optional[str] = None,
        version: Optional[int] = None,
        path: str = "",
        offset: Optional[int] = None,
    ) -> None:
        self.reason = reason
        self.message = message
        self.version = version
        self.path = path
        self.offset = offset
        super().__init__(_located(reason, message, version, path, offset))


class EncodeError(KcodecError, ValueError):
    """A Python value cannot be encoded as the given message and version."""

    def __init__(self, reason: str, *, message: Optional[str] = None,
                 version: Optional[int] = None, path: str = "") -> None:
        self.reason = reason
        self.message = message
        self.version = version
        self.path = path
        super().__init__(_located(reason, message, version, path, None))


class UnsupportedVersionError(EncodeError):
    """A version outside the message's valid versions was asked for in strict mode,
    or a non-default, non-ignorable field cannot be written at the target version."""


class CorruptRecordError(DecodeError):
    """A record batch or log segment is corrupt (bad CRC, bad lengths, ...)."""
