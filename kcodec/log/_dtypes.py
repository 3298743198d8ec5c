"""The scanner's array layouts, shared by the C binding (which checks them against its C
structs, ``kc_batch`` and ``kc_record`` in ``csrc/kc_batch.h``) and the Python twin."""
import numpy as np

__all__ = ["BATCH_DTYPE", "RECORD_DTYPE"]

BATCH_DTYPE = np.dtype([
    ("position", "<i8"), ("base_offset", "<i8"), ("base_timestamp", "<i8"),
    ("max_timestamp", "<i8"), ("producer_id", "<i8"), ("first_record", "<i8"),
    ("next_position", "<i8"),
    ("crc", "<u4"), ("computed_crc", "<u4"), ("batch_length", "<i4"),
    ("partition_leader_epoch", "<i4"), ("last_offset_delta", "<i4"), ("base_sequence", "<i4"),
    ("record_count", "<i4"), ("records_parsed", "<i4"),
    ("attributes", "<i2"), ("producer_epoch", "<i2"),
    ("magic", "i1"), ("crc_ok", "i1"), ("status", "i1"), ("error_field", "i1"),
])
RECORD_DTYPE = np.dtype([
    ("offset", "<i8"), ("timestamp", "<i8"), ("key_pos", "<i8"), ("value_pos", "<i8"),
    ("headers_pos", "<i8"), ("key_len", "<i4"), ("value_len", "<i4"),
    ("headers_count", "<i4"), ("size", "<i4"), ("attributes", "<i4"), ("batch_index", "<i4"),
])
