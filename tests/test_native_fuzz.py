"""The C kernels on their own: warning-free C99, and short fuzz runs under ASan + UBSan.

Builds csrc/kc_engine.c and csrc/kc_columns.c with csrc/fuzz/fuzz_engine.c (a standalone mutation driver, also a
libFuzzer target) and runs it for a few seconds over the shared vectors, truncated and
mutated, against real programs dumped from kcodec._program; and the assignors
(csrc/kc_assign_*.c) with csrc/fuzz/fuzz_assign.c over random groups; and the log scanner
(csrc/kc_batch.c, csrc/kc_crc32c.c) with csrc/fuzz/fuzz_batch.c over corrupted copies of
fixture segments, record batches and legacy message sets.  KCODEC_FUZZ_SECONDS sets each
run's duration (default 5).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kcodec._program import program

from ._shared import read_jsonl, vectors_dir

REPO = Path(__file__).resolve().parent.parent
CSRC = REPO / "csrc"
CC = os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang") or shutil.which("cc")

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


def _compile(args, cwd):
    r = subprocess.run([CC] + args, cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip() == "", r.stderr     # no warnings either


@pytest.mark.parametrize("src", ["kc_engine.c", "kc_columns.c", "kc_batch.c", "fuzz/fuzz_engine.c", "kc_assign_common.c", "kc_assign_range.c",
                                 "kc_assign_sticky.c", "fuzz/fuzz_assign.c",
                                 "kc_crc32c.c", "fuzz/fuzz_batch.c"])
def test_c99_warning_free(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


def _sanitizer_works(tmp_path) -> bool:
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    r = subprocess.run([CC, "-fsanitize=address,undefined", str(probe), "-o", str(tmp_path / "probe")],
                       capture_output=True)
    return r.returncode == 0 and subprocess.run([str(tmp_path / "probe")]).returncode == 0


SANITIZE = ["-std=c99", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer", "-I", str(CSRC)]
SANITIZER_ENV = dict(ASAN_OPTIONS="detect_leaks=1:abort_on_error=1", UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
SECONDS = os.environ.get("KCODEC_FUZZ_SECONDS", "5")


def _run_fuzzer(exe, args, cwd):
    r = subprocess.run([str(exe)] + args, cwd=cwd, capture_output=True, text=True,
                       env=dict(os.environ, **SANITIZER_ENV), timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    assert "no crash" in r.stdout


def test_fuzz_engine_asan(tmp_path):
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    records = (read_jsonl(vectors_dir() / "messages.jsonl")
               + read_jsonl(vectors_dir() / "unknown_tags.jsonl"))
    progs = {}
    corpus = []
    for rec in records:
        key = (rec["schema"], rec["version"])
        if key not in progs:
            progs[key] = len(progs)
        corpus.append(f"{progs[key]} {rec['hex']}")
    if not progs:                       # no vectors: a few programs, random input only
        for key in [("OffsetCommitValue", 4), ("ConsumerProtocolSubscription", 3),
                    ("GroupMetadataValue", 4), ("FetchResponse", 16)]:
            progs[key] = len(progs)
    lines = [" ".join(str(w) for w in program(*key).code) for key in progs]
    (tmp_path / "programs.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "corpus.txt").write_text("\n".join(corpus) + "\n")
    exe = tmp_path / "fuzz_engine"
    _compile(SANITIZE + [str(CSRC / "kc_engine.c"), str(CSRC / "kc_columns.c"),
                         str(CSRC / "fuzz" / "fuzz_engine.c"), "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, ["programs.txt", "corpus.txt", SECONDS, "12345"], tmp_path)


def test_fuzz_assign_asan(tmp_path):
    """Random groups (claims of unknown partitions, stale and tied generations, racks)
    through all four assignors: valid results, cooperative safety, no memory error."""
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / "fuzz_assign"
    _compile(SANITIZE + [str(p) for p in sorted(CSRC.glob("kc_assign_*.c"))]
             + [str(CSRC / "fuzz" / "fuzz_assign.c"), "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, [SECONDS, "4242"], tmp_path)


def batch_corpus() -> str:
    """Log bytes for the scanner's fuzzer, one hex segment a line: the fixture segments
    (their first 64 KiB), record batches, and legacy message sets of every codec."""
    from kcodec import log
    from ._shared import fixtures_dir
    out = []
    seg = fixtures_dir() / "consumer_offsets" / "segments"
    if seg.exists():
        out += [open(p, "rb").read()[:1 << 16].hex() for p in log.log_files(str(seg))]
    recs = [(b"k%d" % i, b"v" * i) for i in range(5)]
    out.append((log.encode_batch(recs) + log.encode_control_batch(True, base_offset=5,
                                                                   producer_id=1, producer_epoch=0)).hex())
    try:
        import cramjam  # noqa: F401
        codecs = [0, 1, 2, 3]
    except ImportError:
        codecs = [0]
    for magic in (0, 1):
        for codec in codecs:
            out.append(log.encode_message_set(recs, magic=magic, compression=codec,
                                              timestamps=[5] * 5).hex())
    return "\n".join(out) + "\n"


def test_fuzz_batch_asan(tmp_path):
    """Corrupted segments (flips, garbage shaped like legacy entries, cuts, zeroed
    stretches, splices) through every scanner entry point the binding calls."""
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    (tmp_path / "corpus.txt").write_text(batch_corpus())
    exe = tmp_path / "fuzz_batch"
    _compile(SANITIZE + [str(CSRC / "kc_batch.c"), str(CSRC / "kc_crc32c.c"),
                         str(CSRC / "fuzz" / "fuzz_batch.c"), "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, ["corpus.txt", SECONDS, "20261123"], tmp_path)
