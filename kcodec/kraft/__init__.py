"""kcodec.kraft: KRaft ``__cluster_metadata`` logs and snapshots, the metadata image, and
metadata.version / feature planning (KIP-778).

- :mod:`~kcodec.kraft.records`: the record frame, every metadata record type, control
  records, ``kafka-dump-log --cluster-metadata-decoder`` output.
- :mod:`~kcodec.kraft.image`: :func:`replay` into a columnar :class:`MetadataImage`.
- :mod:`~kcodec.kraft.features`: metadata.version levels and the other features of 4.1.1.
- :mod:`~kcodec.kraft.planner`: UpdateFeatures with the controller's checks and messages.
- :mod:`~kcodec.kraft.rewrite`: snapshots at a lower level, ``bootstrap.checkpoint``.
"""
from . import features
from .image import Issue, MetadataImage, iter_record_columns, replay
from .planner import FeatureUpdate, UpdateResult, classify_downgrade, plan
from .records import (CONTROL_MESSAGES, METADATA_FRAME, RECORD_TYPES, LogEntry, MetadataRecord,
                      dump_lines, encode_record, iter_log, read_record, record_type_name, to_json)
from .rewrite import (Loss, RewriteReport, bootstrap_records, encode_bootstrap, encode_snapshot,
                      rewrite, snapshot_file_name, snapshot_records, write_bootstrap,
                      write_snapshot)

__all__ = [
    "features", "Issue", "MetadataImage", "iter_record_columns", "replay",
    "FeatureUpdate", "UpdateResult", "classify_downgrade", "plan",
    "CONTROL_MESSAGES", "METADATA_FRAME", "RECORD_TYPES", "LogEntry", "MetadataRecord",
    "dump_lines", "encode_record", "iter_log", "read_record", "record_type_name", "to_json",
    "Loss", "RewriteReport", "bootstrap_records", "encode_bootstrap", "encode_snapshot",
    "rewrite", "snapshot_file_name", "snapshot_records", "write_bootstrap", "write_snapshot",
]
