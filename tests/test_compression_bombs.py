"""Decompression is bounded: a batch that inflates past max_inflated_size is a corrupt
batch (reported, or CorruptRecordError), never an abort or an unbounded allocation."""
import os
import subprocess
import sys
import textwrap

import pytest

cramjam = pytest.importorskip("cramjam")

from kcodec import log  # noqa: E402
from kcodec.errors import CorruptRecordError  # noqa: E402
from kcodec.log import compression  # noqa: E402

ZEROS = 8 << 20


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_bomb_is_refused_and_honest_data_is_not(codec):
    bomb = compression.compress(codec, b"\0" * ZEROS)
    assert compression.decompress(codec, bomb) == b"\0" * ZEROS
    with pytest.raises(CorruptRecordError, match="inflate past 1048576 bytes"):
        compression.decompress(codec, bomb, max_size=1 << 20)
    raw_snappy = bytes(cramjam.snappy.compress_raw(b"\0" * ZEROS))   # not xerial-framed
    with pytest.raises(CorruptRecordError):
        compression.decompress(2, raw_snappy, max_size=ZEROS - 1)


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_bomb_in_a_log_is_a_reported_batch_and_its_neighbours_are_read(codec):
    honest = log.encode_batch([(b"k", b"v")], base_offset=0)
    bomb = log.encode_batch([(b"k", b"\0" * ZEROS)], base_offset=1, compression=codec)
    after = log.encode_batch([(b"k", b"w")], base_offset=2)
    batches = list(log.iter_batches(honest + bomb + after, max_inflated_size=1 << 20))
    assert [b.error is None for b in batches] == [True, False, True]
    assert batches[1].error.reason == "decompression_failed" and "inflate past" in batches[1].error.message
    assert [r.value for b in (batches[0], batches[2]) for r in b.records] == [b"v", b"w"]
    with pytest.raises(CorruptRecordError):
        list(log.iter_batches(bomb, max_inflated_size=1 << 20, errors="raise"))
    (chunk,) = log.iter_chunks(bomb, max_inflated_size=1 << 20)
    assert chunk.errors and not chunk.inflated


def test_zstd_bomb_under_a_memory_limit_does_not_abort(tmp_path):
    # 4 GiB of zeros in ~130 KB of zstd: read under a 1.5 GiB address-space limit.
    bomb_file = tmp_path / "bomb.log"
    comp = cramjam.zstd.Compressor()
    chunk = b"\0" * (64 << 20)
    for _ in range(64):
        comp.compress(chunk)
    records = bytes(comp.finish())
    # a hand-made batch whose records section is the bomb (its record count is a lie too)
    honest = log.encode_batch([(None, b"x")], base_offset=0, compression=4)
    head = bytearray(honest[:61])
    import struct
    from kcodec.log import _records_py
    struct.pack_into(">i", head, 8, 49 + len(records))
    body = bytes(head[21:]) + records
    struct.pack_into(">I", head, 17, _records_py.crc32c(body))
    bomb_file.write_bytes(bytes(head[:21]) + body)
    code = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        from kcodec import log
        (b,) = log.iter_batches({str(bomb_file)!r})
        assert b.error is not None and b.error.reason == "decompression_failed", b.error
        print("refused:", b.error.message)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "inflate past" in out.stdout
