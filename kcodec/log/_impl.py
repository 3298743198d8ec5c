"""The record-batch scanner in use, picked once: the C binding :mod:`kcodec.log._records`
when it is built (and extensions are not switched off, see :mod:`kcodec._ext`), else its
pure-Python twin :mod:`kcodec.log._records_py`.  Callers look ``records`` up at call time,
so tests can swap in the twin."""
from __future__ import annotations

from typing import Any

from .. import _ext
from . import _records_py

records: Any = _ext.load("kcodec.log._records") or _records_py
NATIVE = records is not _records_py
