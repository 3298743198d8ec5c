"""Every ```python block of the README runs as written."""
import re

import pytest

from ._shared import REPO

BLOCKS = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example(code):
    exec(compile(code, "README.md", "exec"), {})
