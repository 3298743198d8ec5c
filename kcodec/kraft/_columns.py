"""Growable NumPy columns for the image's large tables (partitions: a million rows must
fit comfortably, so no Python object per partition)."""
from __future__ import annotations

import mmap
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

_MAPPED = 1 << 20       # columns from this size on get their own anonymous mapping
_PRIVATE = getattr(mmap, "MAP_PRIVATE", None)     # (not on Windows: plain arrays there)


def _mapped(size: int, dtype: Any) -> Tuple[np.ndarray, Optional[mmap.mmap]]:
    dt = np.dtype(dtype)
    if size * dt.itemsize < _MAPPED or _PRIVATE is None:
        return np.zeros(size, dt), None
    m = mmap.mmap(-1, size * dt.itemsize, flags=_PRIVATE)
    return np.frombuffer(m, dt, count=size), m


def zeros(size: int, dtype: Any) -> np.ndarray:
    """A zeroed array for a large table.  From 1 MB on it is a private anonymous mapping
    of its own: the kernel supplies zero pages on first write, so a tail never written (or
    written only with zeros, see :meth:`Column.extend`) takes no memory, and a replaced
    array goes back to the system whole instead of leaving a hole in the heap (a million
    partitions grow a dozen such columns side by side)."""
    return _mapped(size, dtype)[0]


class Column:
    """A growable 1-D NumPy array; ``data[n:]`` is always zero."""

    __slots__ = ("data", "n", "_map")

    def __init__(self, dtype: str, capacity: int = 16) -> None:
        self.data, self._map = _mapped(max(capacity, 16), dtype)
        self.n = 0

    def __getstate__(self) -> Tuple[np.ndarray, int]:
        return np.array(self.data[:self.n]), self.n     # a mapping does not pickle

    def __setstate__(self, state: Tuple[np.ndarray, int]) -> None:
        data, self.n = state
        self.data, self._map = _mapped(max(len(data), 16), data.dtype)
        self.data[:self.n] = data

    def reserve(self, extra: int) -> None:
        need = self.n + extra
        if need <= len(self.data):
            return
        size = max(need, 2 * len(self.data))
        dt = self.data.dtype
        if self._map is not None:
            # grow the mapping in place (mremap: nothing copied, the new pages are zero);
            # while someone else holds a view of the column it cannot move: copy then
            self.data = None      # type: ignore[assignment]
            try:
                self._map.resize(size * dt.itemsize)
            except (BufferError, OSError, SystemError, ValueError):
                pass
            finally:
                self.data = np.frombuffer(self._map, dt)
            if len(self.data) >= need:
                return
        new, self._map = _mapped(size, dt)
        if self.data[:self.n].any():        # an all-zero column stays untouched
            new[:self.n] = self.data[:self.n]
        self.data = new

    def extend(self, values: np.ndarray) -> None:
        k = len(values)
        self.reserve(k)
        if values.any():            # zeros are there already: leave those pages unwritten
            self.data[self.n:self.n + k] = values
        self.n += k

    @property
    def view(self) -> np.ndarray:
        return self.data[:self.n]


class ListColumn:
    """One int32 list per row, Arrow-style: ``start``/``length`` per row into an
    append-only value buffer.  Replacing a row's list appends the new list and repoints
    the row; :meth:`compact` drops the superseded values."""

    __slots__ = ("start", "length", "values", "null")

    def __init__(self, capacity: int = 16) -> None:
        self.start = Column("int64", capacity)
        self.length = Column("int32", capacity)
        self.null = Column("bool", capacity)
        self.values = Column("int32", capacity * 3)

    def __len__(self) -> int:
        return self.start.n

    def _append_values(self, lists: Sequence[Optional[Sequence[int]]]):
        lengths = np.fromiter((0 if x is None else len(x) for x in lists), np.int32, len(lists))
        flat = np.fromiter((v for x in lists if x for v in x), np.int32, int(lengths.sum()))
        base = self.values.n
        self.values.extend(flat)
        starts = base + np.concatenate(([0], np.cumsum(lengths[:-1], dtype=np.int64))) \
            if len(lengths) else np.zeros(0, np.int64)
        nulls = np.fromiter((x is None for x in lists), bool, len(lists))
        return starts, lengths, nulls

    def append_rows(self, lists: Sequence[Optional[Sequence[int]]]) -> None:
        starts, lengths, nulls = self._append_values(lists)
        self.start.extend(starts)
        self.length.extend(lengths)
        self.null.extend(nulls)

    def set_rows(self, rows: np.ndarray, lists: Sequence[Optional[Sequence[int]]]) -> None:
        """Row ``rows[i]`` becomes ``lists[i]`` (later entries win for repeated rows)."""
        starts, lengths, nulls = self._append_values(lists)
        self.start.data[rows] = starts
        self.length.data[rows] = lengths
        self.null.data[rows] = nulls

    def append_flat(self, flat: np.ndarray, lengths: np.ndarray) -> None:
        """Append rows whose lists are consecutive in ``flat`` (``lengths`` < 0: null)."""
        ln = np.maximum(lengths, 0).astype(np.int32)
        base = self.values.n
        self.values.extend(flat[:int(ln.sum())])
        self.start.extend(base + _starts(ln))
        self.length.extend(ln)
        self.null.extend(lengths < 0)

    def set_flat(self, rows: np.ndarray, flat: np.ndarray, starts: np.ndarray,
                 lengths: np.ndarray) -> None:
        """Row ``rows[i]`` becomes ``flat[starts[i]:starts[i] + lengths[i]]`` (< 0: null)."""
        ln = np.maximum(lengths, 0).astype(np.int64)
        total = int(ln.sum())
        base = self.values.n
        if total:
            pos = np.repeat(starts - _starts(ln), ln) + np.arange(total)
            self.values.extend(flat[pos])
        self.start.data[rows] = base + _starts(ln)
        self.length.data[rows] = ln
        self.null.data[rows] = lengths < 0

    def get(self, row: int) -> Optional[List[int]]:
        if self.null.data[row]:
            return None
        s = int(self.start.data[row])
        return self.values.data[s:s + int(self.length.data[row])].tolist()

    def nbytes(self) -> int:
        return sum(c.data.nbytes for c in (self.start, self.length, self.null, self.values))

    def compact(self, rows: Optional[np.ndarray] = None) -> "ListColumn":
        """A copy holding only ``rows`` (default: all), superseded values dropped."""
        idx = np.arange(len(self)) if rows is None else rows
        out = ListColumn(len(idx))
        lengths = self.length.data[idx]
        starts = self.start.data[idx]
        total = int(lengths.sum())
        out.values.reserve(total)
        if total:
            # gather every kept list in one pass: position of each value in the old buffer
            rep = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths[:-1], dtype=np.int64))),
                            lengths)
            out.values.data[:total] = self.values.data[rep + np.arange(total)]
        out.values.n = total
        out.start.extend(np.concatenate(([0], np.cumsum(lengths[:-1], dtype=np.int64)))
                         if len(idx) else np.zeros(0, np.int64))
        out.length.extend(lengths)
        out.null.extend(self.null.data[idx])
        return out


def _starts(lengths: np.ndarray) -> np.ndarray:
    """Exclusive prefix sums: where each list starts when laid end to end."""
    out = np.zeros(len(lengths), np.int64)
    if len(lengths) > 1:
        np.cumsum(lengths[:-1], out=out[1:])
    return out


def last_per_key(keys: np.ndarray) -> np.ndarray:
    """Indexes of the last occurrence of each distinct key (in key order)."""
    rev = keys[::-1]
    _, first = np.unique(rev, return_index=True)
    return len(keys) - 1 - first


def iter_lists(col: ListColumn, rows: Iterable[int]):
    for r in rows:
        yield col.get(r)
