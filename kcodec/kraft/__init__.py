"""kcodec.kraft: KRaft ``__cluster_metadata`` logs and snapshots, the metadata image, and
metadata.version / feature planning (KIP-778)."""
from .records import (CONTROL_MESSAGES, METADATA_FRAME, RECORD_TYPES, LogEntry, MetadataRecord,
                      dump_lines, encode_record, iter_log, read_record, record_type_name, to_json)
from .image import Issue, MetadataImage, replay
