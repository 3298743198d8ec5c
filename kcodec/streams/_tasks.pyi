from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

ROLE_NONE: int
ROLE_ACTIVE: int
ROLE_STANDBY: int
ROLE_WARMUP: int

def ha_assign(stateful: npt.ArrayLike, capacity: npt.ArrayLike, lag: npt.ArrayLike,
              num_standby_replicas: int, max_warmup_replicas: int,
              acceptable_recovery_lag: int, client_tag: Optional[npt.ArrayLike] = ...,
              n_tag_values: Optional[npt.ArrayLike] = ..., move_allowed: Optional[npt.ArrayLike] = ...,
              pending_order: Optional[npt.ArrayLike] = ...) -> Tuple[np.ndarray, int, int]: ...

def sticky_assign(capacity: npt.ArrayLike, client_hash: npt.ArrayLike, prev_active: npt.ArrayLike,
                  prev_active_order: npt.ArrayLike, standby_offsets: npt.ArrayLike,
                  standby_clients: npt.ArrayLike, unassigned_order: npt.ArrayLike,
                  stateful_order: npt.ArrayLike, num_standby_replicas: int,
                  must_preserve_active: bool, jdk19: bool = ...) -> np.ndarray: ...

def standby_assign(stateful: npt.ArrayLike, capacity: npt.ArrayLike, role: npt.ArrayLike,
                   num_standby_replicas: int, client_tag: Optional[npt.ArrayLike] = ...,
                   n_tag_values: Optional[npt.ArrayLike] = ..., move_allowed: Optional[npt.ArrayLike] = ...,
                   pending_order: Optional[npt.ArrayLike] = ...) -> np.ndarray: ...
