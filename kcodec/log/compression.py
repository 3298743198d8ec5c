"""Batch compression as Kafka's producers write it: gzip, snappy (raw, or the xerial
framing of Kafka's Java client), lz4 frame and zstd, all through ``cramjam``
(a dependency of kcodec: real ``__consumer_offsets`` logs are compressed)."""
from __future__ import annotations

from typing import Any

from ..errors import CorruptRecordError
from ..framing import Reader, Writer

__all__ = ["compress", "decompress", "DEFAULT_MAX_INFLATED"]

# Java's SnappyOutputStream: 8-byte magic, int32 version, int32 compatible version, then
# blocks of int32 length + raw snappy
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_BLOCK = 32 << 10


def _cramjam() -> Any:
    try:
        import cramjam
    except ImportError as e:  # pragma: no cover - cramjam is a dependency: a broken install
        raise CorruptRecordError("compressed batches need the 'cramjam' package, a dependency "
                                 "of kcodec missing from this install (pip install cramjam)") from e
    return cramjam


# How far a batch may inflate.  Kafka itself sets no such limit, but nothing Kafka writes
# comes near it (a batch is at most max.message.bytes, 1 MiB by default, compressed), while
# a 66 KB zstd batch of zeros inflates to 4 GiB: the cap keeps a bomb from taking the memory.
DEFAULT_MAX_INFLATED = 256 << 20
_FIRST_GUESS = 64 << 10


def decompress(codec: int, data: Any, max_size: int = DEFAULT_MAX_INFLATED) -> bytes:
    """Decompress a batch's records section as Kafka's producers write it.

    The output never takes more than ``max_size`` bytes of memory: the codecs write into
    buffers of bounded size (snappy states its length up front), so a decompression bomb
    raises :class:`~kcodec.errors.CorruptRecordError` instead of exhausting memory."""
    cramjam = _cramjam()
    raw = bytes(data)
    if codec == 1:
        return _bounded(cramjam, cramjam.gzip, raw, max_size, "gzip")
    if codec == 2:
        if not raw.startswith(_XERIAL_MAGIC):
            return _snappy_block(cramjam, raw, max_size)
        r = Reader(raw, 16, message="xerial snappy")
        out = bytearray()
        while r.remaining:
            n = r.int32("block length")
            block = r.raw(n, "block")
            if cramjam.snappy.decompress_raw_len(block) > max_size - len(out):
                raise _too_big("snappy", max_size)
            out += _snappy_block(cramjam, block, max_size)
        return bytes(out)
    if codec == 3:
        return _bounded(cramjam, cramjam.lz4, raw, max_size, "lz4")
    if codec == 4:
        return _bounded(cramjam, cramjam.zstd, raw, max_size, "zstd")
    raise ValueError(f"unknown compression codec {codec}")


def _too_big(name: str, max_size: int) -> CorruptRecordError:
    return CorruptRecordError(f"{name} records inflate past {max_size} bytes (max_inflated_size)")


def _snappy_block(cramjam: Any, raw: bytes, max_size: int) -> bytes:
    n = cramjam.snappy.decompress_raw_len(raw)      # snappy states its length first
    if n > max_size:
        raise _too_big("snappy", max_size)
    out = bytearray(n)
    got = cramjam.snappy.decompress_raw_into(raw, out)
    del out[got:]
    return bytes(out)


def _bounded(cramjam: Any, codec: Any, raw: bytes, max_size: int, name: str) -> bytes:
    """Decompress into a buffer that grows fourfold up to ``max_size``: the codec refuses to
    write past a full buffer, so no attempt takes more memory than its buffer."""
    size = min(max_size, max(_FIRST_GUESS, 4 * len(raw)))
    while True:
        out = bytearray(size)
        try:
            got = codec.decompress_into(raw, out)
        except cramjam.DecompressionError as e:
            if "whole buffer" not in str(e):
                raise                              # a corrupt stream, not a full buffer
            if size >= max_size:
                raise _too_big(name, max_size) from None
            size = min(max_size, size * 4)
            continue
        del out[got:]
        return bytes(out)


def compress(codec: int, data: bytes) -> bytes:
    """Compress a records section as Kafka's Java producer does (snappy: xerial framing)."""
    if codec == 0:
        return data
    cramjam = _cramjam()
    if codec == 1:
        return bytes(cramjam.gzip.compress(data))
    if codec == 2:
        w = Writer().raw(_XERIAL_MAGIC).int32(1).int32(1)
        for i in range(0, len(data), _XERIAL_BLOCK):
            w.bytes32(bytes(cramjam.snappy.compress_raw(data[i:i + _XERIAL_BLOCK])))
        return w.getvalue()
    if codec == 3:
        return bytes(cramjam.lz4.compress(data))
    if codec == 4:
        return bytes(cramjam.zstd.compress(data))
    raise ValueError(f"unknown compression codec {codec}")

