"""Read and reason about ``__consumer_offsets``: decode records (KIP-915 semantics),
fold them into group state, and check a downgrade.

    >>> from kcodec import offsets
    >>> rec = offsets.decode_record(key_bytes, value_bytes)
    >>> state = offsets.fold_log("/var/kafka-logs/__consumer_offsets-12")
    >>> offsets.check_downgrade("/var/kafka-logs", to="3.9").safe
"""
from __future__ import annotations

from typing import Any

from .records import (Embedded, OffsetsRecord, decode_key, decode_record, iter_decoded,
                      protocol_decoder, decode_members, record_types, register_protocol_decoder, to_json,
                      unknown_tagged_fields)
from .state import CommittedOffset, Folder, GroupState, Member, OffsetsState, fold, fold_log
from .downgrade import DowngradeReport, check as _check

__all__ = [
    "OffsetsRecord", "Embedded", "decode_key", "decode_record", "iter_decoded", "record_types",
    "register_protocol_decoder", "protocol_decoder", "decode_members", "to_json", "unknown_tagged_fields",
    "CommittedOffset", "Member", "GroupState", "OffsetsState", "Folder", "fold", "fold_log",
    "DowngradeReport", "check_downgrade", "iter_offset_columns",
]


def __getattr__(name: str) -> Any:
    # the columnar reader imports pyarrow: only when asked for (``offsets dump`` needs none)
    if name == "iter_offset_columns":
        from .columns import iter_offset_columns
        return iter_offset_columns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check_downgrade(source: Any, to: str, **kwargs: Any) -> DowngradeReport:
    """Check a ``__consumer_offsets`` log (files, directories, bytes) against Kafka ``to``."""
    return _check(iter_decoded(source, **kwargs), to)
