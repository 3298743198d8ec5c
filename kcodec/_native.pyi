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
                   layout: Optional[List[Any]] = None
                   ) -> Tuple[List[Tuple[int, int, Any, Any, Any, Any]], List[Optional[str]]]:
    """Bulk-decode rows into Arrow-layout buffers per node of ``kcodec._columns.layout``:
    ``(kind, len, validity, values, offsets, data)``; plus each row's error text (None for
    good and null rows).  Rows: ``values`` or record slices ``data``/``positions``/``lengths``."""

def _read_uvarint(data: bytes) -> Tuple[int, int]: ...
def _write_uvarint(v: int) -> bytes: ...
def _read_varint(data: bytes) -> Tuple[int, int]: ...
def _write_varint(v: int) -> bytes: ...
def _read_varlong(data: bytes) -> Tuple[int, int]: ...
def _write_varlong(v: int) -> bytes: ...
