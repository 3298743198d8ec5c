import os
from pathlib import Path

import pytest

import kcodec
from kcodec import _codec_py, _ext


def pytest_report_header(config):
    from ._shared import vectors_dir
    shared = vectors_dir()
    return [f"kcodec engine: {'native (C)' if kcodec.NATIVE else 'pure Python'}, from {kcodec.__file__}",
            f"shared reference data: {shared if shared.exists() else 'MISSING (' + str(shared) + ')'}"]


def pytest_terminal_summary(terminalreporter):
    # Data-driven tests skip without ../shared: say so where nobody can miss it.
    from ._shared import vectors_dir
    if not vectors_dir().exists():
        terminalreporter.write_sep("!", f"shared reference data MISSING at {vectors_dir()}: "
                                        "the vector and fixture tests were skipped (set KCODEC_SHARED)",
                                   red=True, bold=True)


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
    # wheels/test_installed.sh: the package under test must be the installed one
    if os.environ.get("KCODEC_EXPECT_INSTALLED"):
        from ._shared import REPO
        assert REPO not in Path(kcodec.__file__).resolve().parents, \
            f"testing the source tree ({kcodec.__file__}), not the installed package"
    # Keep the native path honest: a test run must not silently fall back to Python.
    if _ext.ENABLED and os.environ.get("KCODEC_REQUIRE_NATIVE"):
        from kcodec import log as kcodec_log   # (a plain `import kcodec.log` would make kcodec local)
        assert kcodec.NATIVE, "the C extension did not import (KCODEC_REQUIRE_NATIVE is set)"
        assert kcodec_log.NATIVE, "the C batch scanner did not import (KCODEC_REQUIRE_NATIVE is set)"


# --------------------------------------------------------------------------- xdist
# The suite runs on pytest-xdist workers (`-n auto --dist loadgroup`, pyproject's addopts).
# Tests that share an expensive fixture wider than one test must run on one worker, or each
# worker would build it again: every user of a session-scoped fixture of ours (the Spark
# session, its cached DataFrames) goes to that fixture's group, the README/docs examples
# with them (the Spark guide's blocks start the same local session through getOrCreate);
# every user of a module-scoped fixture goes to its module's group.  All other tests are
# spread one by one.

_SHARED_JVM = "spark"


def _wide_fixture_group(item):
    if item.path.name == "test_readme.py":
        return _SHARED_JVM
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    session, module = set(), False
    for name, defs in info.name2fixturedefs.items():
        d = defs[-1]
        if not getattr(d.func, "__module__", "").startswith(__name__.rsplit(".", 1)[0] + "."):
            continue        # pytest's and plugins' own (tmp_path_factory, ...)
        if d.scope == "session":
            session.add(name)
        elif d.scope in ("module", "package", "class"):
            module = True
    if _SHARED_JVM in session:
        return _SHARED_JVM
    if session:
        return "session-" + min(session)
    if module:
        return item.path.name
    return None


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _wide_fixture_group(item)
        if group is not None and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(group))
    # the Spark group is the longest unit of work: handed out first, the other worker takes
    # the rest meanwhile instead of idling at the end (a stable sort: order within is kept)
    if hasattr(config, "workerinput"):         # on xdist's workers, whose order it schedules by
        items.sort(key=lambda it: _wide_fixture_group(it) != _SHARED_JVM)
