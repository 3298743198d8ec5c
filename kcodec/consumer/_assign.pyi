from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

STRATEGIES: Tuple[str, ...]

def assign(
    strategy: str,
    n_members: int,
    part_count: npt.ArrayLike,
    sub_off: npt.ArrayLike,
    sub_topic: npt.ArrayLike,
    own_off: Optional[npt.ArrayLike] = ...,
    own_topic: Optional[npt.ArrayLike] = ...,
    own_part: Optional[npt.ArrayLike] = ...,
    generation: Optional[npt.ArrayLike] = ...,
    member_rack: Optional[npt.ArrayLike] = ...,
    n_racks: int = ...,
    prack_off: Optional[npt.ArrayLike] = ...,
    prack: Optional[npt.ArrayLike] = ...,
    prefer_rack_aware: bool = ...,
    visit_order: Optional[npt.ArrayLike] = ...,
) -> Tuple[np.ndarray, np.ndarray, Dict[str, Any]]: ...

def intern_pairs(lists: List[Any], index: Dict[Any, int], pairs: bool) -> Tuple[np.ndarray, ...]: ...
def intern_racks(per_topic: List[Any], counts: npt.ArrayLike, index: Dict[str, int],
                 names: Optional[List[str]] = ...) -> Tuple[np.ndarray, np.ndarray]: ...
