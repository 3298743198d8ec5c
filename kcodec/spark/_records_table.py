"""The ``records`` table of ``kcodec analyze --out``, written by the tasks that read it.

Each task scans its byte ranges with kcodec's C reader, decodes the records in the same
pass (what ``read_log(decode="offsets")`` gives) and writes its Parquet file with
pyarrow.  Nothing crosses into the JVM: a Python data source's rows would be copied
into Spark's rows twice and written by Spark's Parquet writer, which costs several times
the scan and the decode together on a big history.  The files are the table Spark's
writer would give (same columns, names and types; one ``part-NNNNN.parquet`` per task
and ``_SUCCESS``).

No PySpark here: this runs in Spark's Python workers.
"""
from __future__ import annotations

import posixpath
from typing import Any, Dict, Iterator, List, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from ._scan import Split, arrow_filesystem, decode_batch, split_batches

__all__ = ["LOG_COLUMNS", "records_table_schema", "write_records_part", "write_records_task"]

_OPTIONS: Dict[str, Any] = {"record_types": "all"}
# the records table's log columns: (its name, read_log's column)
LOG_COLUMNS = (("log_topic", "topic"), ("log_partition", "partition"), ("log_offset", "offset"),
                ("timestamp", "timestamp"), ("producer_id", "producer_id"),
                ("is_transactional", "is_transactional"))
_READ = [src for _, src in LOG_COLUMNS] + ["key", "value", "is_control", "error"]     # what the table needs


def _type_names() -> Tuple[pa.Array, pa.Array]:
    from kcodec.offsets import record_types
    ids = sorted(record_types())
    return pa.array(ids, pa.int16()), pa.array([record_types()[i].name for i in ids], pa.string())


def _nullable(t: pa.DataType) -> pa.DataType:
    """``t`` with every nested field nullable.  A field Kafka requires is null in the
    child arrays under a null parent, which Parquet's writer refuses for a required
    field; Spark reads every Parquet column as nullable anyway."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _nullable(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _nullable(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _nullable(t.item_type))
    return t


def _table(b: pa.RecordBatch, names: Tuple[pa.Array, pa.Array]) -> pa.RecordBatch:
    """One decoded batch of data records as ``records`` rows: the log columns, the
    decoded fields, ``type_name``."""
    dec = b.column("decoded")
    cols = [b.column(src) for _, src in LOG_COLUMNS] + list(dec.flatten())
    fields = [pa.field(dst, b.schema.field(src).type) for dst, src in LOG_COLUMNS]
    for f in dec.type:
        t = _nullable(f.type)
        fields.append(pa.field(f.name, t))
        if t != f.type:
            cols[len(fields) - 1] = cols[len(fields) - 1].view(t)     # same buffers
    rt = dec.field("record_type")
    cols.append(names[1].take(pc.index_in(rt, value_set=names[0])))
    fields.append(pa.field("type_name", pa.string()))
    return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))


def _data_records(b: pa.RecordBatch) -> pa.RecordBatch:
    """The rows of ``b`` that are records (not control records, not corrupt-batch rows),
    left out before decoding (a filter of the raw rows is cheaper than of decoded ones)."""
    keep = pc.and_(b.column("error").is_null(), pc.invert(b.column("is_control").fill_null(True)))
    b = b.select(_READ)
    return b if pc.all(keep).as_py() else b.filter(keep)


def records_table_schema() -> pa.Schema:
    """The ``records`` table's Arrow schema (what every part file holds)."""
    from ._scan import LOG_SCHEMA, decoded_schema
    empty = pa.RecordBatch.from_pylist([], schema=decoded_schema("offsets", _OPTIONS, pa.schema(
        [LOG_SCHEMA.field(c) for c in _READ])))
    return _table(empty, _type_names()).schema


def write_records_part(out: str, index: int, splits: List[List[Any]]) -> int:
    """Scan, decode and write ``splits`` (``[path, start, end, ...]`` each) as
    ``out/part-<index>.parquet``; the rows written."""
    import pyarrow.parquet as pq
    fs, base = arrow_filesystem(out)
    names = _type_names()
    schema = records_table_schema()
    rows = 0
    with fs.open_output_stream(posixpath.join(base, f"part-{index:05d}.parquet")) as f:
        with pq.ParquetWriter(f, schema, compression="snappy") as w:
            for path, start, end, *_ in splits:
                for b in split_batches(Split(path, start, end)):
                    t = _table(decode_batch(_data_records(b), "offsets", _OPTIONS), names)
                    if len(t):
                        w.write_batch(t)
                        rows += len(t)
    return rows


def write_records_task(out: str) -> Any:
    """For ``mapPartitionsWithIndex``: each Spark partition holds one list of splits."""
    def run(index: int, parts: Iterator[List[List[Any]]]) -> Iterator[int]:
        for splits in parts:
            yield write_records_part(out, index, splits)
    return run
