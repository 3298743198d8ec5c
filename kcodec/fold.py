"""Folding a log into state: a table of handlers keyed by record type.

Every compacted coordinator or metadata log (``__consumer_offsets``, Kafka Streams'
changelogs, ``__cluster_metadata``) is folded the same way: the latest record of each key
is applied to the state by the handler of its record type.  :class:`RecordHandlers` is
that table, so a fold reads as one short function per record type::

    >>> from kcodec.fold import RecordHandlers
    >>> handlers = RecordHandlers()
    >>> @handlers.on(0, 1)
    ... def offset_commit(state, value):
    ...     state.append(value)
    >>> state = []
    >>> handlers.dispatch(1, state, "committed"), handlers.dispatch(9, state, "?"), state
    (True, False, ['committed'])
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Tuple

__all__ = ["RecordHandlers"]

Handler = Callable[..., None]


class RecordHandlers:
    """Record type -> handler.  Handlers take whatever the fold passes (state first)."""

    def __init__(self) -> None:
        self._by_type: Dict[int, Handler] = {}

    def register(self, record_type: int, handler: Handler) -> None:
        if record_type in self._by_type:
            raise ValueError(f"record type {record_type} already has a handler")
        self._by_type[record_type] = handler

    def on(self, *record_types: int) -> Callable[[Handler], Handler]:
        """Decorator: register the function for each of ``record_types``."""
        def deco(fn: Handler) -> Handler:
            for t in record_types:
                self.register(t, fn)
            return fn
        return deco

    def dispatch(self, record_type: int, *args: Any) -> bool:
        """Call the handler of ``record_type`` with ``args``; False when there is none."""
        fn = self._by_type.get(record_type)
        if fn is None:
            return False
        fn(*args)
        return True

    def __contains__(self, record_type: object) -> bool:
        return record_type in self._by_type

    def items(self) -> Iterator[Tuple[int, Handler]]:
        return iter(sorted(self._by_type.items()))
