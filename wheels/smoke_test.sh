#!/usr/bin/env bash
# Install the built wheel into a clean virtualenv (away from the source tree) and decode
# a fixture with it: proves the wheel carries the C engine and the spec files.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WHEEL="$(ls -1 "$REPO"/wheelhouse/kcodec-*.whl 2>/dev/null | head -n1 || true)"
[ -n "$WHEEL" ] || WHEEL="$(ls -1 "$REPO"/dist/kcodec-*.whl | head -n1)"
TMP="$(mktemp -d)"
python3 -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install -q "$WHEEL"
cd "$TMP"
"$TMP/venv/bin/kcodec" decode >/dev/null
"$TMP/venv/bin/python" - <<'PY'
import kcodec
assert kcodec.NATIVE, "the wheel's C engine did not import"
v = kcodec.decode("OffsetCommitValue", bytes.fromhex("000000000000000affffffff01000001a202d8c8cf00"), 4)
assert v["offset"] == 10 and v["leaderEpoch"] == -1, v
# the C record-batch parser and the C assignors are in the wheel too
from kcodec.consumer import _assign  # noqa: F401
from kcodec.log import _records  # noqa: F401
import kcodec.log
assert kcodec.log.NATIVE, "the wheel's record-batch scanner did not import"
from kcodec.consumer import Member, assign, decode_assignment
r = assign("cooperative-sticky", [Member("a", ["t"]), Member("b", ["t"])], {"t": 4})
assert decode_assignment(r.encoded()["a"]).partitions == r.assignment()["a"], r.assignment()
print("wheel smoke test ok:", kcodec.__file__)
PY
rm -rf "$TMP"
