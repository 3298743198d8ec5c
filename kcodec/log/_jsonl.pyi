from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

def write_lines(templates: List[List[Union[str, int]]], columns: List[Dict[str, Any]],
                rows: np.ndarray, row_template: np.ndarray,
                size_hint: int = ..., ends: bool = ...) -> Any: ...

class JsonTexts:
    """Objects' json.dumps(obj, ensure_ascii=False) texts, less ``skip`` bytes, then ``end``."""
    def __init__(self, skip: int = ..., end: str = ...) -> None: ...
    def __len__(self) -> int: ...
    def add(self, obj: Any) -> int: ...
    def column(self) -> Optional[Tuple[np.ndarray, memoryview]]: ...

DUMP_DONE: int
DUMP_FULL: int
DUMP_BATCH: int
DUMP_RECORD: int

class KafkaJson:
    """One program's Kafka JSON writer (csrc/kc_kjson.c): program words, JSON plan, blob."""
    code: np.ndarray
    plan: np.ndarray
    blob: bytes
    def __init__(self, code: Any, plan: Any, blob: bytes) -> None: ...
    def dumps(self, data: Any, pos: int = ...) -> bytes: ...

class KraftDumpTypes:
    """(api key, version) -> (KafkaJson, head) table for kraft_dump_lines."""
    n_keys: int
    n_versions: int
    def __init__(self, entries: Dict[Tuple[int, int], Tuple[KafkaJson, bytes]]) -> None: ...

def kraft_dump_lines(types: KraftDumpTypes, data: Any, batches: np.ndarray, records: np.ndarray,
                     state: np.ndarray, out: bytearray) -> Tuple[int, int]: ...
