"""``kcodec kraft dump``'s fast path (kcodec.kraft._dump) and how it hands over.

* a clean metadata log is dumped without NumPy, pyarrow or kcodec.log: the command
  starts in a fraction of the time they take to import (checked in a fresh interpreter,
  the command as users start it), and ``import kcodec`` imports none of them either;
* windows small enough that the fast path writes the clean start of the Kafka-written
  test log, hands single batches (control batches, records with headers) to the
  reference code and the rest of the file to the general path at the first window that
  is not clean, give Kafka's text byte for byte (with ``--salvage`` too);
* a log whose first batch is larger than the window grows the window.
"""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kcodec import log
from kcodec.kraft import dump_lines, encode_record
from kcodec.kraft import dump as kdump

DATA = Path(__file__).parent / "data" / "dumps" / "kraft"
KRAFT_LOG = DATA / "00000000000000000000.log"

pytestmark = pytest.mark.skipif(kdump._fast is None, reason="kcodec.kraft._dump not built")


def _clean_log(path: Path, batches: int = 3, per_batch: int = 40) -> Path:
    """A clean metadata segment (uncompressed batches, no control records)."""
    out = bytearray()
    offset = 0
    for b in range(batches):
        recs = []
        for i in range(per_batch):
            n = b * per_batch + i
            recs.append((None, encode_record("TopicRecord", {
                "name": f"topic-{n}", "topicId": __import__("uuid").UUID(int=n + 1)}, 0)))
        out += log.encode_batch(recs, base_offset=offset, base_timestamp=1_795_000_000_000 + b)
        offset += per_batch
    path.write_bytes(bytes(out))
    return path


def _kafka_text() -> bytes:
    return gzip.decompress((DATA / "kafka-dump-log.txt.gz").read_bytes())


_PROBE = """
import json, sys
from kcodec.cli import main
sys.argv = ["kcodec", "kraft", "dump", sys.argv[1]]
with open({out!r}, "w") as out:
    sys.stdout = out
    code = main()
    sys.stdout = sys.__stdout__
heavy = sorted(m for m in ("numpy", "pyarrow", "pandas", "kcodec.log", "kcodec.kraft.image")
               if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy}}))
"""


def test_clean_log_dump_imports_neither_numpy_nor_pyarrow(tmp_path):
    seg = _clean_log(tmp_path / "00000000000000000000.log")
    out = tmp_path / "dump.txt"
    r = subprocess.run([sys.executable, "-c", _PROBE.format(out=str(out)), str(seg)],
                       capture_output=True, text=True, check=True)
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res == {"code": 0, "heavy": []}, r.stderr
    want = "".join(line + "\n" for line in dump_lines(seg))
    assert out.read_text() == want


def test_import_kcodec_imports_neither_numpy_nor_pyarrow():
    code = ("import sys, kcodec, kcodec.cli, kcodec.kraft; "
            "print(sorted(m for m in ('numpy', 'pyarrow', 'pandas') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


@pytest.mark.parametrize("chunk", [256, 1000, 4096, 1 << 20])
@pytest.mark.parametrize("block", [700, 1 << 22])
def test_small_windows_hand_over_to_the_general_path(monkeypatch, chunk, block):
    monkeypatch.setattr(kdump, "_CHUNK", chunk)
    got = b"".join(kdump.dump_file(KRAFT_LOG, display_name=KRAFT_LOG.name, block=block))
    assert got == _kafka_text()


@pytest.mark.parametrize("chunk", [256, 4096])
def test_small_windows_salvage_equals_the_reference(monkeypatch, chunk):
    monkeypatch.setattr(kdump, "_CHUNK", chunk)
    errors: list = []
    got = b"".join(kdump.dump_file(KRAFT_LOG, display_name=KRAFT_LOG.name, salvage=True,
                                   errors=errors)).decode()
    ref_errors: list = []
    want = "".join(line + "\n" for line in dump_lines(KRAFT_LOG, display_name=KRAFT_LOG.name,
                                                       salvage=True, errors=ref_errors))
    assert got == want
    assert [str(e) for e in errors] == [str(e) for e in ref_errors] and errors


def test_clean_log_in_windows_smaller_than_a_batch(monkeypatch, tmp_path):
    seg = _clean_log(tmp_path / "00000000000000000000.log", batches=4, per_batch=60)
    monkeypatch.setattr(kdump, "_CHUNK", 128)      # every batch is larger than this
    want = "".join(line + "\n" for line in dump_lines(seg))
    assert b"".join(kdump.dump_file(seg, block=512)).decode() == want
    size = os.path.getsize(seg)
    # a log cut inside its last batch: the general path says how many bytes are left over
    (tmp_path / "cut").mkdir()
    cut = tmp_path / "cut" / "00000000000000000000.log"
    cut.write_bytes(seg.read_bytes()[:size - 10])
    want = "".join(line + "\n" for line in dump_lines(cut))
    assert "invalid bytes at the end" in want
    assert b"".join(kdump.dump_file(cut)).decode() == want
