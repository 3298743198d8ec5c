"""Type stubs of the native engine (kcodec/_native.pyx)."""
from typing import Any, Dict, List, Optional, Tuple, Union

from ._program import Program

UNKNOWN_TAGS_KEY: str

def decode(prog: Program, data: Any, pos: int = 0) -> Tuple[Dict[str, Any], int]:
    """Decode one message of ``prog`` from a buffer at ``pos``; returns (value, end)."""

def encode(prog: Program, value: Dict[str, Any]) -> bytes:
    """Encode a value (as ``decode`` returns it; missing keys take defaults)."""

def decode_bulk(prog: Program, values: Any) -> Dict[str, Any]:
    """Decode a list of bytes or a pyarrow (Large)BinaryArray into columns plus
    ``"_ok"`` (numpy bool) and ``"_error"`` (list of None / error text)."""

def decode_columns(prog: Program, values: Any = None, *, data: Any = None,
                   positions: Any = None, lengths: Any = None, skip: int = 0,
                   layout: Optional[List[Any]] = None, take: Any = None, select: Any = None,
                   programs: Optional[List[Optional[Program]]] = None, which: Any = None,
                   prefix: int = 0, keep: Optional[Any] = None, info: bool = False) -> Any:
    """Bulk-decode rows into Arrow-layout buffers per node of ``kcodec._columns.layout``:
    ``(kind, len, validity, values, offsets, data)``; plus ``{row: error text}`` of the
    rows that failed (null rows are not errors).  Rows: ``values`` or record slices
    ``data``/``positions``/``lengths`` (strided arrays read in place; ``take``: row r is
    slice take[r]); ``select``: rows where it is 0 are null rows; ``programs``/``which``:
    row r decodes with ``programs[which[r]]`` into ``prog``'s columns (which < 0 or a
    None program: a null row; ValueError when a program does not fit); ``prefix`` (2 or
    4, no ``which``): row r decodes with ``programs[its big-endian version prefix]``;
    ``keep``: the top-level fields kept.  With ``info`` a third item: ``{"decoded",
    "tagged"}`` and with a prefix ``"versions"``, ``"have"`` (NumPy, one per row)."""

def slice_heads(data: Any, positions: Any, lengths: Any, k: int, *, take: Any = None
                ) -> Tuple[Any, Any]:
    """The first ``k`` (<= 8) bytes of each record slice: ((rows, k) uint8, have int32:
    bytes present, -1 null row, -2 outside the data)."""

def _read_uvarint(data: bytes) -> Tuple[int, int]: ...
def _write_uvarint(v: int) -> bytes: ...
def _read_varint(data: bytes) -> Tuple[int, int]: ...
def _write_varint(v: int) -> bytes: ...
def _read_varlong(data: bytes) -> Tuple[int, int]: ...
def _write_varlong(v: int) -> bytes: ...
