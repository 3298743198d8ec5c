"""Where kcodec decides whether to use its compiled extensions (one place for every binding).

``KCODEC_NO_EXTENSIONS=1`` in the environment (read once, at import) makes every module
use its pure-Python twin: the reference engine, the Python record-batch scanner.  Modules
ask :func:`load` for their binding and fall back when it returns ``None``::

    >>> from kcodec import _ext
    >>> scanner = _ext.load("kcodec.log._records")   # None: not built, or switched off
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Optional

__all__ = ["ENABLED", "load"]

# False when KCODEC_NO_EXTENSIONS is set: no binding is even tried.
ENABLED = not os.environ.get("KCODEC_NO_EXTENSIONS")


def load(name: str) -> Optional[ModuleType]:
    """The compiled module ``name`` (e.g. ``"kcodec._native"``), or ``None`` when
    extensions are switched off or that one is not built."""
    if not ENABLED:
        return None
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        # "not built" means fall back; a binding whose own dependency is missing must surface
        if e.name not in (name, None):
            raise
        return None
    except ImportError:   # built but unusable here (e.g. a big-endian host): the twin serves
        return None
