"""The record-batch reader's pure-Python twin (used without the C extension or with
KCODEC_NO_EXTENSIONS=1) must behave like the C scanner: the same tests, run on it."""
from __future__ import annotations

import pytest

from kcodec import log as KR
from kcodec.log import _impl, _records_py

from .test_records import *  # noqa: F401,F403  (collected again here, on the twin)
from .test_offsets import (test_columnar_fold_equals_record_fold,  # noqa: F401
                           test_columnar_fold_on_fixture, test_segment_records_match_kafka_dump_log,
                           oracle)


@pytest.fixture(autouse=True)
def _python_twin(monkeypatch):
    monkeypatch.setattr(_impl, "records", _records_py)
    yield


def test_twin_is_active():
    assert _impl.records is _records_py


def test_twin_matches_c_scanner():
    if not KR.NATIVE:
        pytest.skip("C extension not built")
    from kcodec.log import _records as C
    data = b"".join(KR.encode_batch([(b"k%d" % j, b"v" * j) for j in range(j + 1)],
                                    base_offset=10 * j, base_timestamp=j) for j in range(6))
    data = data[:-7]
    for final in (True, False):
        c = C.scan(data, True, final)
        p = _records_py.scan(data, True, final)
        assert c[0] == p[0]
        assert c[1].tobytes() == p[1].tobytes()
        assert c[2].tobytes() == p[2].tobytes()
