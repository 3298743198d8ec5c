from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

ROLE_NONE: int
ROLE_ACTIVE: int
ROLE_STANDBY: int
ROLE_WARMUP: int

class RackInput:
    n_clients: int
    n_tasks: int
    def __init__(self, n_clients: int, n_tasks: int, strategy: int, client_rack: npt.ArrayLike, n_racks: int,
                 source_miss: npt.ArrayLike, changelog_miss: Optional[npt.ArrayLike],
                 group: Optional[npt.ArrayLike], n_groups: int, traffic_cost: int, non_overlap_cost: int,
                 pid_order: Optional[npt.ArrayLike] = ..., tag_off: Optional[npt.ArrayLike] = ...,
                 tag_ids: Optional[npt.ArrayLike] = ..., n_tag_ids: int = ..., exact: bool = ...) -> None: ...

def rack_optimize_active(rack: RackInput, role: npt.ArrayLike, in_list: npt.ArrayLike, traffic_cost: int,
                         non_overlap_cost: int) -> Tuple[np.ndarray, int]: ...

def rack_optimize_standby(rack: RackInput, role: npt.ArrayLike, traffic_cost: int,
                          non_overlap_cost: int) -> Tuple[np.ndarray, int]: ...

def min_cost_flow(edges: npt.ArrayLike, source: Optional[int] = ...,
                  sink: Optional[int] = ...) -> Tuple[np.ndarray, int]: ...

def max_flow(edges: npt.ArrayLike, source: int, sink: int) -> Tuple[np.ndarray, int]: ...

def ha_assign(stateful: npt.ArrayLike, capacity: npt.ArrayLike, lag: npt.ArrayLike,
              num_standby_replicas: int, max_warmup_replicas: int,
              acceptable_recovery_lag: int, client_tag: Optional[npt.ArrayLike] = ...,
              n_tag_values: Optional[npt.ArrayLike] = ..., move_allowed: Optional[npt.ArrayLike] = ...,
              pending_order: Optional[npt.ArrayLike] = ...,
              rack: Optional[RackInput] = ...) -> Tuple[np.ndarray, int, int]: ...

def sticky_assign(capacity: npt.ArrayLike, client_hash: npt.ArrayLike, prev_active: npt.ArrayLike,
                  prev_active_order: npt.ArrayLike, standby_offsets: npt.ArrayLike,
                  standby_clients: npt.ArrayLike, unassigned_order: npt.ArrayLike,
                  stateful_order: npt.ArrayLike, num_standby_replicas: int,
                  must_preserve_active: bool, jdk19: bool = ...,
                  rack: Optional[RackInput] = ...) -> np.ndarray: ...

def standby_assign(stateful: npt.ArrayLike, capacity: npt.ArrayLike, role: npt.ArrayLike,
                   num_standby_replicas: int, client_tag: Optional[npt.ArrayLike] = ...,
                   n_tag_values: Optional[npt.ArrayLike] = ..., move_allowed: Optional[npt.ArrayLike] = ...,
                   pending_order: Optional[npt.ArrayLike] = ...,
                   rack: Optional[RackInput] = ...) -> np.ndarray: ...
