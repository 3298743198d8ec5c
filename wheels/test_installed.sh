#!/usr/bin/env bash
# Run the test suite against the INSTALLED wheel, not the source tree: the wheel goes into
# a clean virtualenv, and the tests run from a copy of the repository without kcodec/, so
# a wheel that lacks a module, an extension or a data file fails here.
# Usage: wheels/test_installed.sh [pytest args...]   (default: the whole suite, quiet)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WHEEL="$(ls -1 "$REPO"/wheelhouse/kcodec-*.whl 2>/dev/null | head -n1 || true)"
[ -n "$WHEEL" ] || WHEEL="$(ls -1 "$REPO"/dist/kcodec-*.whl | head -n1)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install -q --upgrade pip
"$TMP/venv/bin/python" -m pip install -q "${WHEEL}[test]"
# everything the tests read from the checkout, but not the package itself
mkdir -p "$TMP/repo"
(cd "$REPO" && git ls-files -z -- tests bench csrc README.md pyproject.toml \
   | xargs -0 -I{} cp --parents {} "$TMP/repo/")
export KCODEC_SHARED="${KCODEC_SHARED:-$REPO/../shared}"
export KCODEC_EXPECT_INSTALLED=1 KCODEC_REQUIRE_NATIVE=1
cd "$TMP/repo"
if [ "$#" -eq 0 ]; then set -- -q; fi
"$TMP/venv/bin/python" -m pytest -p no:randomly -p no:cacheprovider "$@"
