import os

import pytest

import kcodec
from kcodec import _codec_py


def pytest_report_header(config):
    return f"kcodec engine: {'native (C)' if kcodec.NATIVE else 'pure Python'}"


def _engines():
    engines = [pytest.param(_codec_py, id="py")]
    if kcodec.NATIVE:
        from kcodec import _native
        engines.append(pytest.param(_native, id="c"))
    return engines


ENGINES = _engines()


@pytest.fixture(params=ENGINES)
def engine(request):
    """Each engine in turn: the pure-Python reference and, when built, the C engine."""
    return request.param


def pytest_sessionstart(session):
    # In CI the shared reference data must be there: without it the data-driven tests
    # would parametrize over nothing and pass vacuously.
    if os.environ.get("CI"):
        from ._shared import vectors_dir
        assert vectors_dir().exists(), f"shared data not found at {vectors_dir()} (set KCODEC_SHARED)"
    # Keep the native path honest: a test run must not silently fall back to Python.
    if not os.environ.get("KCODEC_NO_EXTENSIONS") and os.environ.get("KCODEC_REQUIRE_NATIVE"):
        assert kcodec.NATIVE, "the C extension did not import (KCODEC_REQUIRE_NATIVE is set)"
