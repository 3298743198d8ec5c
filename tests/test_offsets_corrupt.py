"""Corrupt data never becomes a result with a success signal (issue: operator-grade).

Every batch of every fixture segment is corrupted in turn (one bit flipped in its records,
its CRC left as it was): the batch must contribute nothing to group state, both folds must
agree, the CLI must say so with a non-zero exit, and a downgrade verdict must be "unknown".
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kcodec import log
from kcodec.errors import CorruptRecordError
from kcodec.offsets import check_downgrade, cli as ocli
from kcodec.offsets.state import fold_log

from ._shared import fixtures_dir, require

SEGMENTS = fixtures_dir() / "consumer_offsets" / "segments"


def _segments():
    if not SEGMENTS.exists():
        return []
    return sorted(log.log_files(str(SEGMENTS)))


def _flipped(data: bytes, batch) -> bytes:
    bad = bytearray(data)
    bad[batch.position + 61 + (batch.size - 61) // 2] ^= 0x10     # inside the records
    return bytes(bad)


def _without(data: bytes, batch) -> bytes:
    return data[:batch.position] + data[batch.position + batch.size:]


def _comparable(st):
    return {g: (s.state, s.generation, s.protocol, sorted(s.members), sorted(s.offsets.items()))
            for g, s in st.groups.items()}


@pytest.mark.parametrize("path", _segments(), ids=lambda p: os.path.basename(os.path.dirname(p)))
def test_a_corrupt_batch_contributes_nothing(path):
    data = open(path, "rb").read()
    batches = [b for b in log.iter_batches(data) if b.size > 61 and not b.is_control]
    assert batches
    for b in batches:
        bad = _flipped(data, b)
        fast, slow = fold_log(bad), fold_log(bad, fast=False)
        assert fast.errors and slow.errors and len(fast.errors) == len(slow.errors) == 1
        assert "bad_crc" in fast.errors[0]
        expected = _comparable(fold_log(_without(data, b)))
        assert _comparable(fast) == _comparable(slow) == expected, b.position
        # every other (CRC-valid) batch is still read
        assert [x.position for x in log.iter_batches(bad) if x.error is None] == \
            [x.position for x in log.iter_batches(data) if x.position != b.position]
        with pytest.raises(CorruptRecordError):
            fold_log(bad, errors="raise")
        with pytest.raises(CorruptRecordError):
            fold_log(bad, fast=False, errors="raise")


def _run(argv):
    import io
    from contextlib import redirect_stdout
    buf = io.StringIO()
    with redirect_stdout(buf):
        from kcodec import cli
        rc = cli.main(argv)
    return rc, buf.getvalue()


def _corrupt_copy(tmp_path, cut: bool = False):
    src = require(SEGMENTS)
    biggest = max(_segments(), key=os.path.getsize)
    data = open(biggest, "rb").read()
    b = [x for x in log.iter_batches(data) if x.size > 61][-1]
    bad = data[:b.position + b.size // 2] if cut else _flipped(data, b)
    d = tmp_path / os.path.basename(os.path.dirname(biggest))
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(bad)
    del src
    return d


@pytest.mark.parametrize("cut", [False, True], ids=["bit-flip", "cut-mid-batch"])
def test_cli_never_says_safe_about_a_log_it_could_not_read(tmp_path, cut):
    d = _corrupt_copy(tmp_path, cut)
    rc, out = _run(["offsets", "check-downgrade", "--to", "4.1", str(d)])
    assert rc == ocli.EXIT_CORRUPT and "UNKNOWN" in out and not out.startswith("OK")
    assert check_downgrade(str(d), "4.1").verdict == "unknown"
    assert not check_downgrade(str(d), "4.1").safe
    rc, out = _run(["offsets", "groups", str(d)])
    assert rc == ocli.EXIT_CORRUPT and "not read" in out
    rc, out = _run(["offsets", "groups", "--strict", str(d)])
    assert rc == ocli.EXIT_CORRUPT and out == ""
    rc, _ = _run(["offsets", "check-downgrade", "--strict", "--to", "4.1", str(d)])
    assert rc == ocli.EXIT_CORRUPT


def test_strict_survives_a_closed_pipe(tmp_path):
    d = _corrupt_copy(tmp_path)
    # the corrupt batch is the last one: `head -1` has long gone when it is reached
    cmd = (f"set -o pipefail; {sys.executable} -m kcodec offsets dump --strict {d} | head -1 >/dev/null")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert r.returncode == ocli.EXIT_CORRUPT, r.stderr
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr
    # without --strict a closed pipe just ends the dump
    cmd = f"{sys.executable} -m kcodec offsets dump {d} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}"
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr and r.stdout.strip() in ("0", str(ocli.EXIT_CORRUPT))
