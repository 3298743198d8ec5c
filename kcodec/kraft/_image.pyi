from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

def frame_heads(values: List[Optional[bytes]]) -> Tuple[np.ndarray, np.ndarray]: ...
def extract(code: Any, values: List[bytes], rows: np.ndarray, skip: int,
            roles: Sequence[Tuple[int, int, int, int]]
            ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, List[np.ndarray], np.ndarray, np.ndarray, int]: ...
