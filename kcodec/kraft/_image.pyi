from typing import Any, List, Sequence, Tuple

import numpy as np

def extract(code: Any, data: Any, starts: np.ndarray, ends: np.ndarray,
            roles: Sequence[Tuple[int, int, int, int]]
            ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, List[np.ndarray], np.ndarray, np.ndarray, int]: ...
