"""The one place tests find the shared reference data.

``$KCODEC_SHARED`` when set, else ``../shared`` next to the repository.
Data-driven tests parametrize over whatever the files hold, so the same tests
run unchanged on another corpus of the same layout.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator, List

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    env = os.environ.get("KCODEC_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def shared_path(*parts: str) -> Path:
    return shared_dir().joinpath(*parts)


def vectors_dir() -> Path:
    return shared_path("vectors", "kafka-4.1.1")


def fixtures_dir() -> Path:
    return shared_path("fixtures", "kafka-4.1.1")


def read_jsonl(path: Path) -> List[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def iter_jsonl(path: Path) -> Iterator[dict]:
    yield from read_jsonl(path)


def require(path: Path) -> Path:
    """Skip the calling test when a piece of shared data is absent."""
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    return path


def run_without_pandas(code: str) -> None:
    """Run ``code`` in a fresh interpreter in which importing pandas fails the run.
    pyarrow imports pandas (when installed) at its first ``pa.array`` / ``to_numpy``
    call: half a second per process, which kcodec's bulk paths avoid."""
    import subprocess
    import sys
    guard = ("import sys\n"
             "class _NoPandas:\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name == 'pandas':\n"
             "            raise AssertionError('pandas imported')\n"
             "sys.meta_path.insert(0, _NoPandas())\n")
    out = subprocess.run([sys.executable, "-c", guard + code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
