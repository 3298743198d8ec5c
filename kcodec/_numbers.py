"""Which Python values count as Kafka integers and floats (both engines ask here).

Python ints, and NumPy integers such as the columns ``decode_bulk`` returns; never bools
(``True`` is an int in Python, but not an integer field value), whether Python's or
NumPy's."""
from __future__ import annotations

import numbers
import sys
from typing import Any


def is_bool(v: Any) -> bool:
    if type(v) is bool:
        return True
    # a NumPy bool exists only once NumPy is imported: `import kcodec` does not import it
    np = sys.modules.get("numpy")
    return np is not None and isinstance(v, np.bool_)


def is_integral(v: Any) -> bool:
    return isinstance(v, numbers.Integral) and not is_bool(v)


def is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not is_bool(v)
