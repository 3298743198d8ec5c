"""Which Python values count as Kafka integers and floats (both engines ask here).

Python ints, and NumPy integers such as the columns ``decode_bulk`` returns; never bools
(``True`` is an int in Python, but not an integer field value), whether Python's or
NumPy's."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as _np


def is_bool(v: Any) -> bool:
    return type(v) is bool or isinstance(v, _np.bool_)


def is_integral(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not is_bool(v)


def is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not is_bool(v)
