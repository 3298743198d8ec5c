from typing import Tuple

import numpy as np
import numpy.typing as npt

ROLE_NONE: int
ROLE_ACTIVE: int
ROLE_STANDBY: int
ROLE_WARMUP: int

def ha_assign(stateful: npt.ArrayLike, capacity: npt.ArrayLike, lag: npt.ArrayLike,
              num_standby_replicas: int, max_warmup_replicas: int,
              acceptable_recovery_lag: int) -> Tuple[np.ndarray, int, int]: ...
