from typing import Any, Dict, List, Union

import numpy as np

def write_lines(templates: List[List[Union[str, int]]], columns: List[Dict[str, Any]],
                rows: np.ndarray, row_template: np.ndarray,
                size_hint: int = ...) -> memoryview: ...
