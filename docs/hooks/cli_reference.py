"""MkDocs hook: the CLI reference, generated from kcodec's own argparse parsers at build time.

A page containing ``<!-- kcodec-cli -->`` gets, in its place, one section per command and
subcommand with the ``--help`` text argparse prints (so the reference cannot drift from
the parsers)."""
from __future__ import annotations

import argparse
import os
from typing import Any, Iterator, List, Tuple

MARKER = "<!-- kcodec-cli -->"


def _walk(parser: argparse.ArgumentParser, path: List[str]) -> Iterator[Tuple[List[str], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if sub is not parser:
                    yield from _walk(sub, path + [name])


def reference() -> str:
    from kcodec.cli import build_parser
    os.environ["COLUMNS"] = "100"          # argparse wraps at the terminal's width
    out = []
    seen = set()
    for path, p in _walk(build_parser(), ["kcodec"]):
        if id(p) in seen:                  # aliases share a parser
            continue
        seen.add(id(p))
        level = "#" * min(len(path) + 1, 4)
        out.append(f"{level} `{' '.join(path)}`\n\n```text\n{p.format_help().rstrip()}\n```\n")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, reference())
    return markdown
