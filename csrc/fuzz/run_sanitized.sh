#!/usr/bin/env bash
# Sustained fuzzing under ASan + UBSan, one command:
#   csrc/fuzz/run_sanitized.sh [SECONDS]       (default 120 per target)
# 1. every C fuzz target (engine + bulk columns, assignors, Streams task assignors, log
#    scanner, JSON-lines writer, KRaft image kernels, java.util.HashMap model, the offsets
#    and kraft dump line writers, Streams userData writers) for SECONDS each, through
#    tests/test_native_fuzz.py, tests/test_streams_fuzz.py, tests/test_offsets_dump.py,
#    tests/test_kraft_fuzz.py, tests/test_javahash.py and tests/test_dump_fuzz.py;
# 2. the package built with KCODEC_SANITIZE=1 in a scratch copy of this tree, and
#    corrupted fixture segments (and legacy twins of them) through both
#    __consumer_offsets folds for SECONDS (csrc/fuzz/fuzz_folds.py).
# Needs a C compiler with -fsanitize=address,undefined, the test dependencies, and the
# shared fixtures (KCODEC_SHARED, default ../shared).  Exits non-zero on any finding.
set -euo pipefail
SECS=${1:-120}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-python3}
CC=${CC:-cc}
export KCODEC_SHARED=${KCODEC_SHARED:-$ROOT/../shared}

echo "== C fuzz targets under ASan + UBSan, ${SECS} s each"
(cd "$ROOT" && KCODEC_FUZZ_SECONDS=$SECS $PY -m pytest -q -p no:cacheprovider \
    tests/test_native_fuzz.py tests/test_streams_fuzz.py tests/test_offsets_dump.py \
    tests/test_kraft_fuzz.py tests/test_javahash.py tests/test_dump_fuzz.py -k "asan or fuzzes_clean")

echo "== the package built with ASan + UBSan, corrupted segments through both folds, ${SECS} s"
BUILD=$(mktemp -d)
trap 'rm -rf "$BUILD"' EXIT
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | \
    xargs -0 tar cf - --ignore-failed-read 2>/dev/null) | tar xf - -C "$BUILD"
find "$BUILD/kcodec" -name '*.so' -delete
(cd "$BUILD" && KCODEC_SANITIZE=1 $PY setup.py -q build_ext --inplace >/dev/null)
ASAN=$($CC -print-file-name=libasan.so)
UBSAN=$($CC -print-file-name=libubsan.so)
# Python itself is not instrumented: leaks are its own, so leak checking is off.
cd "$BUILD"
LD_PRELOAD="$ASAN $UBSAN" \
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
PYTHONPATH="$BUILD" ARROW_DEFAULT_MEMORY_POOL=system \
    $PY csrc/fuzz/fuzz_folds.py --seconds "$SECS"
