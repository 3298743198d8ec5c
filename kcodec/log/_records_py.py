"""The record-batch scanner in pure Python: the same functions, dtypes and results as the
C binding :mod:`kcodec.log._records`, used when the extension is not built or
``KCODEC_NO_EXTENSIONS=1`` (:mod:`kcodec.log._impl` picks one of the two once); tests run
the reader's suite on both."""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._dtypes import BATCH_DTYPE, RECORD_DTYPE

__all__ = ["BATCH_DTYPE", "RECORD_DTYPE", "crc32c", "crc32c_portable", "crc32c_hardware", "scan",
           "resync", "parse_records", "parse_headers", "slices"]

_TABLE: List[int] = []


def _table() -> List[int]:
    if not _TABLE:
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            _TABLE.append(c)
    return _TABLE


def crc32c(data: Any, crc: int = 0) -> int:
    t = _table()
    c = crc ^ 0xFFFFFFFF
    for b in bytes(data):
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


crc32c_portable = crc32c


def crc32c_hardware() -> bool:
    return False


def _varint(b: Any, pos: int, end: int, limit: int) -> Tuple[Optional[int], int]:
    v = 0
    for i in range(limit):
        if pos + i >= end:
            return None, pos
        x = b[pos + i]
        v |= (x & 0x7F) << (7 * i)
        if not x & 0x80:
            return (v >> 1) ^ -(v & 1), pos + i + 1
    return None, pos


def _parse(b: Any, start: int, end: int, count: int, base_offset: int, base_ts: int,
           bidx: int, max_recs: int) -> Tuple[List[Tuple[int, ...]], int, int, int]:
    out: List[Tuple[int, ...]] = []
    pos = start
    vi = _varint
    while pos < end and (count < 0 or len(out) < count):
        if len(out) >= max_recs:
            return out, 9, 0, pos
        size, p = vi(b, pos, end, 5)
        if size is None:
            return out, 5, 1, pos
        if size < 0 or size > end - p:
            return out, 5, 10, pos
        rec_start, rend = pos, p + size
        pos = p
        if pos >= rend:
            return out, 5, 2, pos
        attr = b[pos]
        pos += 1
        td, pos2 = vi(b, pos, rend, 10)
        if td is None:
            return out, 5, 3, pos
        pos = pos2
        od, pos2 = vi(b, pos, rend, 5)
        if od is None:
            return out, 5, 4, pos
        pos = pos2
        lens = []
        for fld in (5, 6):
            ln, pos2 = vi(b, pos, rend, 5)
            if ln is None or ln < -1 or (ln > 0 and ln > rend - pos2):
                return out, 5, fld, pos
            lens.append((pos2, ln))
            pos = pos2 + max(ln, 0)
        hc, pos2 = vi(b, pos, rend, 5)
        if hc is None or hc < 0 or hc > rend - pos2:
            return out, 5, 7, pos
        pos = hp = pos2
        for _ in range(hc):
            hl, pos2 = vi(b, pos, rend, 5)
            if hl is None or hl < 0 or hl > rend - pos2:
                return out, 5, 8, pos
            pos = pos2 + hl
            hl, pos2 = vi(b, pos, rend, 5)
            if hl is None or hl < -1 or (hl > 0 and hl > rend - pos2):
                return out, 5, 9, pos
            pos = pos2 + max(hl, 0)
        if pos != rend:
            return out, 5, 10, rec_start
        ts = (base_ts + td + (1 << 63)) % (1 << 64) - (1 << 63)
        out.append((base_offset + od, ts, lens[0][0], lens[1][0], hp, lens[0][1], lens[1][1],
                    hc, size, attr, bidx))
    if count >= 0 and (len(out) != count or pos != end):
        return out, 8, 0, pos
    return out, 0, 0, 0


def _header(b: Any, p: int) -> Dict[str, int]:
    f = struct.unpack_from(">qiibIhiqqqhii", b, p)
    return dict(base_offset=f[0], batch_length=f[1], partition_leader_epoch=f[2], magic=f[3],
                crc=f[4], attributes=f[5], last_offset_delta=f[6], base_timestamp=f[7],
                max_timestamp=f[8], producer_id=f[9], producer_epoch=f[10],
                base_sequence=f[11], record_count=f[12])


def _plausible(b: Any, n: int, p: int, final: bool, max_len: int) -> int:
    if n - p < 61:
        return 0 if final else -1
    blen = struct.unpack_from(">i", b, p + 8)[0]
    if b[p + 16] != 2 or blen < 49 or blen > max_len:
        return 0
    if (struct.unpack_from(">h", b, p + 21)[0] & 7) > 4:
        return 0
    if 12 + blen > n - p:
        return 0 if final else -1
    return int(crc32c(b[p + 21:p + 12 + blen]) == struct.unpack_from(">I", b, p + 17)[0])


def resync(data: Any, start: int, final: bool = True, max_batch_length: int = 1 << 30) -> int:
    b = memoryview(data).cast("B")
    n = len(b)
    for p in range(start, n):
        if n - p > 16 and b[p + 16] != 2:
            continue
        if _plausible(b, n, p, final, max_batch_length) != 0:
            return p
    return n


def scan(data: Any, verify_crc: bool = True, final: bool = True,
         max_batch_length: int = 1 << 30, max_batches: int = 0) -> Tuple[int, np.ndarray, np.ndarray]:
    b = memoryview(data).cast("B")
    n = len(b)
    batches: List[Dict[str, Any]] = []
    recs: List[Tuple[int, ...]] = []
    pos = 0
    while pos < n:
        rem = n - pos
        e: Dict[str, Any] = {"position": pos, "first_record": len(recs)}
        if rem < 61:
            if not final:
                break
            if rem >= 12:
                e["base_offset"], e["batch_length"] = struct.unpack_from(">qi", b, pos)
            if rem > 16:
                e["magic"] = struct.unpack_from(">b", b, pos + 16)[0]
            e.update(status=7, next_position=n)
            batches.append(e)
            pos = n
            break
        e.update(_header(b, pos))
        blen = e["batch_length"]
        bad = 0
        if e["magic"] != 2:
            if e["magic"] in (0, 1) and 14 <= blen <= max_batch_length:
                if blen + 12 > rem:
                    if not final:
                        break
                    bad = 7
                else:
                    e.update(status=4, next_position=pos + 12 + blen)
                    batches.append(e)
                    pos += 12 + blen
                    continue
            else:
                bad = 4
        elif blen < 49 or blen > max_batch_length:
            bad = 3
        elif blen + 12 > rem:
            if not final:
                break
            bad = 7
        if bad:
            nxt = resync(b, pos + 1, final, max_batch_length)
            if not final and nxt >= n:
                nxt = n - 61 if n > 61 else 0
                if nxt <= pos:
                    break
            if bad == 7 and nxt < n:
                bad = 3
            e.update(status=bad, next_position=nxt)
            batches.append(e)
            pos = nxt
            continue
        total = 12 + blen
        if verify_crc:
            e["computed_crc"] = crc32c(b[pos + 21:pos + total])
            e["crc_ok"] = int(e["computed_crc"] == e["crc"])
        else:
            e["computed_crc"], e["crc_ok"] = e["crc"], 1
        e["next_position"] = pos + total
        codec = e["attributes"] & 7
        if codec == 0:
            got, st, fld, _ = _parse(b, pos + 61, pos + total, e["record_count"],
                                         e["base_offset"], e["base_timestamp"], len(batches),
                                         1 << 62)
            if e["attributes"] & 0x08:
                got = [r[:1] + (e["max_timestamp"],) + r[2:] for r in got]
            recs += got
            e.update(records_parsed=len(got), status=st, error_field=fld)
            if e["record_count"] < 0 and st == 0:
                e["status"] = 8
        else:
            e["status"] = 1 if codec <= 4 else 6
        batches.append(e)
        pos += total
    barr = np.zeros(len(batches), BATCH_DTYPE)
    for i, e in enumerate(batches):
        for k, v in e.items():
            barr[i][k] = v
    return pos, barr, np.array(recs, dtype=RECORD_DTYPE) if recs else np.empty(0, RECORD_DTYPE)


def parse_records(data: Any, count: int, base_offset: int, base_timestamp: int,
                  batch_index: int = 0, log_append_time: Optional[int] = None) -> Tuple[np.ndarray, int, int, int]:
    b = memoryview(data).cast("B")
    if len(b) == 0:
        return np.empty(0, RECORD_DTYPE), (0 if count == 0 else 8), 0, 0
    got, st, fld, ep = _parse(b, 0, len(b), count, base_offset, base_timestamp,
                                  batch_index, 1 << 62)
    arr = np.array(got, dtype=RECORD_DTYPE) if got else np.empty(0, RECORD_DTYPE)
    if log_append_time is not None:
        arr["timestamp"] = log_append_time
    return arr, st, fld, ep


def parse_headers(data: Any, pos: int, count: int) -> List[Tuple[str, Optional[bytes]]]:
    b = memoryview(data).cast("B")
    out: List[Tuple[str, Optional[bytes]]] = []
    n = len(b)
    for _ in range(max(count, 0)):
        kl, pos = _varint(b, pos, n, 5)
        if kl is None or kl < 0 or kl > n - pos:
            raise ValueError("record headers do not parse")
        k = bytes(b[pos:pos + kl]).decode("utf-8", "surrogateescape")
        pos += kl
        vl, pos = _varint(b, pos, n, 5)
        if vl is None or vl < -1 or vl > n - pos:
            raise ValueError("record headers do not parse")
        out.append((k, None if vl < 0 else bytes(b[pos:pos + vl])))
        pos += max(vl, 0)
    return out


def slices(data: Any, pos: Any, length: Any) -> List[Optional[bytes]]:
    b = memoryview(data).cast("B")
    return [None if ln < 0 else bytes(b[p:p + ln]) for p, ln in zip(pos.tolist(), length.tolist())]
