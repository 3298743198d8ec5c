"""Batch compression as Kafka's producers write it: gzip, snappy (raw, or the xerial
framing of Kafka's Java client), lz4 frame and zstd, all through ``cramjam``
(``pip install kcodec[compression]``)."""
from __future__ import annotations

from typing import Any

from ..errors import CorruptRecordError
from ..framing import Reader, Writer

__all__ = ["compress", "decompress"]

# Java's SnappyOutputStream: 8-byte magic, int32 version, int32 compatible version, then
# blocks of int32 length + raw snappy
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_BLOCK = 32 << 10


def _cramjam() -> Any:
    try:
        import cramjam
    except ImportError as e:  # pragma: no cover - cramjam is a declared extra
        raise CorruptRecordError("compressed batches need the 'cramjam' package "
                                 "(pip install kcodec[compression])") from e
    return cramjam


def decompress(codec: int, data: Any) -> bytes:
    """Decompress a batch's records section as Kafka's producers write it."""
    cramjam = _cramjam()
    raw = bytes(data)
    if codec == 1:
        return bytes(cramjam.gzip.decompress(raw))
    if codec == 2:
        if not raw.startswith(_XERIAL_MAGIC):
            return bytes(cramjam.snappy.decompress_raw(raw))
        r = Reader(raw, 16, message="xerial snappy")
        out = bytearray()
        while r.remaining:
            n = r.int32("block length")
            out += cramjam.snappy.decompress_raw(r.raw(n, "block"))
        return bytes(out)
    if codec == 3:
        return bytes(cramjam.lz4.decompress(raw))
    if codec == 4:
        return bytes(cramjam.zstd.decompress(raw))
    raise ValueError(f"unknown compression codec {codec}")


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

