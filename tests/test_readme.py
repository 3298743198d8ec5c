"""Every ```python block of the README and of the docs runs as written; a block followed by
``<!-- output -->`` and a ```text block prints exactly that text."""
import contextlib
import io
import os
import re

import pytest

from ._shared import REPO

_BLOCK = re.compile(r"```python\n(.*?)```(?:\s*<!-- output -->\s*```text\n(.*?)```)?", re.S)


def _pages():
    yield REPO / "README.md"
    docs = REPO / "docs"
    if docs.is_dir():
        yield from sorted(p for p in docs.rglob("*.md") if "hooks" not in p.parts)


BLOCKS = [(page.relative_to(REPO).as_posix(), i, code, out)
          for page in _pages()
          for i, (code, out) in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8")))]


def test_pages_have_examples():
    pages = {p for p, _, _, _ in BLOCKS}
    assert "README.md" in pages
    if (REPO / "docs").is_dir():        # wheels/test_installed.sh copies the README, not docs/
        assert any(p.startswith("docs/guides/") for p in pages)


@pytest.mark.parametrize("page,i,code,out", BLOCKS, ids=[f"{p}:{i}" for p, i, _, _ in BLOCKS])
def test_example(page, i, code, out, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"{page} block {i}", "exec"), {"__name__": "__example__"})
    if out:
        got = [line.rstrip() for line in buf.getvalue().rstrip().splitlines()]
        assert got == [line.rstrip() for line in out.rstrip().splitlines()], f"{page} block {i}: output differs"
