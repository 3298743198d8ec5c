from typing import Iterable, Optional

import numpy as np

NO_RANK: int

def hash_order(hash_codes: np.ndarray, ranks: Optional[np.ndarray] = ..., initial_capacity: int = ...,
               compute_if_absent: bool = ...) -> np.ndarray: ...
def string_hash(s: str) -> int: ...
def string_hashes(strings: Iterable[str]) -> np.ndarray: ...
