"""Pure-Python twin of :mod:`kcodec.kraft._image` (csrc/kc_kraft_image.c): the same id
index (hash, linear probing, deletion by backward shift), partition look-up and change
application, for installs without the compiled extensions (``KCODEC_NO_EXTENSIONS=1``)."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

_M64 = (1 << 64) - 1
_LISTS = 7


def _check_slots(slots: np.ndarray) -> None:
    cap = len(slots)
    if cap < 1 or cap & (cap - 1):
        raise ValueError("the id index needs a power-of-two number of slots")


def _hash(b: bytes) -> int:
    a, c = int.from_bytes(b[:8], "little"), int.from_bytes(b[8:16], "little")
    h = a ^ ((c * 0x9E3779B97F4A7C15) & _M64)
    h ^= h >> 32
    h = (h * 0xD6E8FEB86659FD93) & _M64
    return h ^ (h >> 32)


def ids_find(keys: np.ndarray, slots: np.ndarray, ids: np.ndarray) -> np.ndarray:
    if keys.shape[1:] != (16,) or ids.shape[1:] != (16,):
        raise ValueError("ids are 16 bytes")
    _check_slots(slots)
    out = np.full(len(ids), -1, np.int32)
    if not len(keys):
        return out
    mask = len(slots) - 1
    for i in range(len(ids)):
        b = ids[i].tobytes()
        s = _hash(b) & mask
        while slots[s] >= 0:
            if keys[slots[s]].tobytes() == b:
                out[i] = slots[s]
                break
            s = (s + 1) & mask
    return out


def ids_put(keys: np.ndarray, slots: np.ndarray, rows: np.ndarray) -> None:
    if keys.shape[1:] != (16,):
        raise ValueError("ids are 16 bytes")
    _check_slots(slots)
    if ((rows < 0) | (rows >= len(keys))).any():
        raise IndexError("row outside the key table")
    if int((slots >= 0).sum()) + len(rows) >= len(slots):
        raise ValueError("id index too small")
    mask = len(slots) - 1
    for r in rows.tolist():
        b = keys[r].tobytes()
        s = _hash(b) & mask
        while slots[s] >= 0 and keys[slots[s]].tobytes() != b:
            s = (s + 1) & mask
        slots[s] = r


def ids_drop(keys: np.ndarray, slots: np.ndarray, row: int) -> bool:
    _check_slots(slots)
    if not 0 <= row < len(keys):
        raise IndexError(f"row {row} outside the key table")
    mask = len(slots) - 1
    s = _hash(keys[row].tobytes()) & mask
    while slots[s] != row:
        if slots[s] < 0:
            return False
        s = (s + 1) & mask
    hole = j = s
    while True:
        j = (j + 1) & mask
        r = int(slots[j])
        if r < 0:
            break
        home = _hash(keys[r].tobytes()) & mask
        stays = (hole < home <= j) if hole <= j else (hole < home or home <= j)
        if not stays:
            slots[hole] = r
            hole = j
    slots[hole] = -1
    return True


def partition_keys(topic: Any, partition: Any) -> np.ndarray:
    """The partition index's keys, as the C kernel builds them: the topic index in the high
    32 bits, the partition id's 32 bits below (masked, so that a negative id cannot spill
    into the topic's bits and alias another topic's partition)."""
    return (np.asarray(topic, np.int64) << 32) | (np.asarray(partition, np.int64) & 0xFFFFFFFF)


def parts_find(keys: np.ndarray, rows: np.ndarray, topic_start: np.ndarray, topic: np.ndarray,
               partition: np.ndarray) -> np.ndarray:
    if len(partition) != len(topic) or len(rows) != len(keys):
        raise ValueError("arrays of unequal length")
    want = partition_keys(topic, partition)
    pos = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
    out = np.full(len(topic), -1, np.int64)
    if len(keys):
        hit = (keys[pos] == want) & (topic >= 0)
        out[hit] = rows[pos[hit]]
    return out


def _next_epoch(epoch: Any) -> int:
    """Java's ``int + 1``: INT32_MAX wraps to INT32_MIN."""
    return (int(epoch) + 1 + 2**31) % 2**32 - 2**31


def apply_changes(rows: np.ndarray, leader: np.ndarray, lrs: np.ndarray,
                  lists: Sequence[Optional[Tuple[np.ndarray, Optional[np.ndarray], int, np.ndarray]]],
                  leader_col: np.ndarray, leader_epoch_col: np.ndarray,
                  partition_epoch_col: np.ndarray, lrs_col: np.ndarray,
                  cols: Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]]) -> List[int]:
    if len(lists) != _LISTS or len(cols) != _LISTS:
        raise ValueError("one entry per list field")
    nrows = len(partition_epoch_col)
    if len(rows) and int(rows.max()) >= nrows:
        raise IndexError("partition row outside the columns")
    used = [int(c[4]) for c in cols]
    present: List[Any] = []
    for k, lin in enumerate(lists):
        if lin is None:
            present.append(None)
            continue
        off, valid, voff, _vals = lin
        if len(off) < len(rows) + 1 or int(off[len(rows)]) - int(off[0]) > len(cols[k][3]) - used[k]:
            raise ValueError("list offsets or room for the values")
        ok = (np.ones(len(rows), bool) if valid is None
              else np.unpackbits(valid, bitorder="little")[voff:voff + len(rows)].view(bool))
        present.append(ok)
    for i, r in enumerate(rows.tolist()):
        if r < 0:
            continue
        partition_epoch_col[r] = _next_epoch(partition_epoch_col[r])
        if leader[i] != -2:
            leader_col[r] = leader[i]
            leader_epoch_col[r] = _next_epoch(leader_epoch_col[r])
        if lrs[i] != -1:
            lrs_col[r] = lrs[i]
        for k, lin in enumerate(lists):
            if lin is None or not present[k][i]:
                continue
            off, _v, _o, vals = lin
            a, b = int(off[i]), int(off[i + 1])
            start, length, null, values, _n = cols[k]
            values[used[k]:used[k] + b - a] = vals[a:b]
            start[r], length[r], null[r] = used[k], b - a, 0
            used[k] += b - a
    return used
