from typing import List, Optional, Sequence, Tuple

import numpy as np

def ids_find(keys: np.ndarray, slots: np.ndarray, ids: np.ndarray) -> np.ndarray: ...
def ids_put(keys: np.ndarray, slots: np.ndarray, rows: np.ndarray) -> None: ...
def ids_drop(keys: np.ndarray, slots: np.ndarray, row: int) -> bool: ...
def parts_find(keys: np.ndarray, rows: np.ndarray, topic_start: np.ndarray, topic: np.ndarray,
               partition: np.ndarray) -> np.ndarray: ...
def apply_changes(
    rows: np.ndarray,
    leader: np.ndarray,
    lrs: np.ndarray,
    lists: Sequence[Optional[Tuple[np.ndarray, Optional[np.ndarray], int, np.ndarray]]],
    leader_col: np.ndarray,
    leader_epoch_col: np.ndarray,
    partition_epoch_col: np.ndarray,
    lrs_col: np.ndarray,
    cols: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]],
) -> List[int]: ...
