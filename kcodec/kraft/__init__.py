"""kcodec.kraft: KRaft ``__cluster_metadata`` logs and snapshots, the metadata image, and
metadata.version / feature planning (KIP-778)."""
from .records import (CONTROL_MESSAGES, METADATA_FRAME, RECORD_TYPES, LogEntry, MetadataRecord,
                      dump_lines, encode_record, iter_log, read_record, record_type_name, to_json)
from .image import Issue, MetadataImage, iter_record_columns, replay
from . import features
from .planner import FeatureUpdate, UpdateResult, classify_downgrade, plan
from .rewrite import (RewriteReport, bootstrap_records, encode_bootstrap, encode_snapshot, rewrite,
                      snapshot_records, write_bootstrap, write_snapshot)
