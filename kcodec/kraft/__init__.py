"""kcodec.kraft: KRaft ``__cluster_metadata`` logs and snapshots, the metadata image, and
metadata.version / feature planning (KIP-778).

- :mod:`~kcodec.kraft.records`: the record frame, every metadata record type, control
  records, ``kafka-dump-log --cluster-metadata-decoder`` output.
- :mod:`~kcodec.kraft.image`: :func:`replay` into a columnar :class:`MetadataImage`.
- :mod:`~kcodec.kraft.features`: metadata.version levels and the other features of 4.1.1.
- :mod:`~kcodec.kraft.planner`: UpdateFeatures with the controller's checks and messages.
- :mod:`~kcodec.kraft.rewrite`: snapshots at a lower level, ``bootstrap.checkpoint``.
"""
from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # what the names are (for type checkers and the API docs)
    from . import features
    from .image import Issue, MetadataImage, iter_record_columns, replay
    from .planner import FeatureUpdate, UpdateResult, classify_downgrade, plan
    from .records import (CONTROL_MESSAGES, METADATA_FRAME, RECORD_TYPES, LogEntry,
                          MetadataRecord, dump_lines, encode_record, iter_log, read_record,
                          record_type_name, to_json)
    from .rewrite import (Loss, RewriteReport, bootstrap_records, encode_bootstrap,
                          encode_snapshot, rewrite, snapshot_file_name, snapshot_records,
                          write_bootstrap, write_snapshot)

# Names load from their module on first use (PEP 562): ``kcodec kraft dump`` and
# ``import kcodec.kraft.records`` do not pay for the image's NumPy columns.
_WHERE = {
    "features": None,
    "Issue": "image", "MetadataImage": "image", "iter_record_columns": "image", "replay": "image",
    "FeatureUpdate": "planner", "UpdateResult": "planner", "classify_downgrade": "planner",
    "plan": "planner",
    "CONTROL_MESSAGES": "records", "METADATA_FRAME": "records", "RECORD_TYPES": "records",
    "LogEntry": "records", "MetadataRecord": "records", "dump_lines": "records",
    "encode_record": "records", "iter_log": "records", "read_record": "records",
    "record_type_name": "records", "to_json": "records",
    "Loss": "rewrite", "RewriteReport": "rewrite", "bootstrap_records": "rewrite",
    "encode_bootstrap": "rewrite", "encode_snapshot": "rewrite",
    "snapshot_file_name": "rewrite", "snapshot_records": "rewrite",
    "write_bootstrap": "rewrite", "write_snapshot": "rewrite",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name, "")
    if where == "":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    mod = importlib.import_module(f"{__name__}.{where or name}")
    value = mod if where is None else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_WHERE))


class _Package(types.ModuleType):
    """``kcodec.kraft.rewrite`` is the function (as it always was), although a submodule
    has that name: importing the submodule sets the package's attribute, which is ignored."""

    @property
    def rewrite(self) -> Any:
        from .rewrite import rewrite
        return rewrite

    @rewrite.setter
    def rewrite(self, value: Any) -> None:
        pass


sys.modules[__name__].__class__ = _Package


__all__ = [
    "features", "Issue", "MetadataImage", "iter_record_columns", "replay",
    "FeatureUpdate", "UpdateResult", "classify_downgrade", "plan",
    "CONTROL_MESSAGES", "METADATA_FRAME", "RECORD_TYPES", "LogEntry", "MetadataRecord",
    "dump_lines", "encode_record", "iter_log", "read_record", "record_type_name", "to_json",
    "Loss", "RewriteReport", "bootstrap_records", "encode_bootstrap", "encode_snapshot",
    "rewrite", "snapshot_file_name", "snapshot_records", "write_bootstrap", "write_snapshot",
]
