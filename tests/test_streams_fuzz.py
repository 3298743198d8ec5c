"""The Streams C kernels on their own: warning-free C99 and short fuzz runs under ASan + UBSan
(csrc/fuzz/fuzz_streams.c, csrc/fuzz/fuzz_streams_rack.c; KCODEC_FUZZ_SECONDS sets the duration)."""
from __future__ import annotations

import pytest

from .test_native_fuzz import CC, CSRC, SANITIZE, SECONDS, _compile, _run_fuzzer, _sanitizer_works

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


@pytest.mark.parametrize("src", ["kc_streams_ha.c", "kc_streams_sticky.c", "kc_streams_rack.c", "kc_mcf.c",
                                 "fuzz/fuzz_streams.c", "fuzz/fuzz_streams_rack.c"])
def test_c99_warning_free(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


def test_fuzz_streams_asan(tmp_path):
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / "fuzz_streams"
    _compile(SANITIZE + [str(p) for p in sorted(CSRC.glob("kc_streams_*.c"))] + [str(CSRC / "kc_mcf.c"), str(CSRC / "kc_javahash.c")]
             + [str(CSRC / "fuzz" / "fuzz_streams.c"), "-lm", "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, [SECONDS, "1071"], tmp_path)


def test_fuzz_streams_rack_asan(tmp_path):
    """The rack-aware optimisers and Kafka's Graph solvers (csrc/fuzz/fuzz_streams_rack.c)."""
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / "fuzz_streams_rack"
    _compile(SANITIZE + [str(p) for p in sorted(CSRC.glob("kc_streams_*.c"))] + [str(CSRC / "kc_mcf.c"), str(CSRC / "kc_javahash.c")]
             + [str(CSRC / "fuzz" / "fuzz_streams_rack.c"), "-lm", "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, [SECONDS, "925"], tmp_path)
