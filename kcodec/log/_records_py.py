"""The record-batch scanner in pure Python: the same functions, dtypes and results as the
C binding :mod:`kcodec.log._records`, used when the extension is not built or
``KCODEC_NO_EXTENSIONS=1`` (:mod:`kcodec.log._impl` picks one of the two once); tests run
the reader's suite on both."""
from __future__ import annotations

import struct
import zlib
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._dtypes import BATCH_DTYPE, RECORD_DTYPE

__all__ = ["BATCH_DTYPE", "RECORD_DTYPE", "crc32c", "crc32c_portable", "crc32c_hardware", "crc32",
           "scan", "resync", "parse_records", "parse_legacy", "parse_headers", "slices"]

MIN_RECORD_SIZE = 7
MIN_LEGACY_ENTRY = 26

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


def crc32(data: Any, crc: int = 0) -> int:
    return zlib.crc32(bytes(data), crc)


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
        off = (base_offset + od + (1 << 63)) % (1 << 64) - (1 << 63)      # Java's long wraps
        out.append((off, ts, lens[0][0], lens[1][0], hp, lens[0][1], lens[1][1],
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


def _legacy_min(magic: int) -> int:
    return 22 if magic else 14


def _legacy_plausible(b: Any, n: int, p: int, final: bool, max_len: int) -> int:
    magic = b[p + 16]
    size = struct.unpack_from(">i", b, p + 8)[0]
    if size < _legacy_min(magic) or size > max_len:
        return 0
    if n - p < 18:
        return 0 if final else -1
    if (b[p + 17] & 7) > 3:
        return 0
    if 12 + size > n - p:
        return 0 if final else -1
    return int(crc32(b[p + 16:p + 12 + size]) == struct.unpack_from(">I", b, p + 12)[0])


def _plausible(b: Any, n: int, p: int, final: bool, max_len: int) -> int:
    if n - p <= 16:
        return 0 if final else -1
    if b[p + 16] < 2:
        return _legacy_plausible(b, n, p, final, max_len)
    if b[p + 16] != 2:
        return 0
    if n - p < 61:
        return 0 if final else -1
    blen = struct.unpack_from(">i", b, p + 8)[0]
    if blen < 49 or blen > max_len:
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
        if n - p > 16 and b[p + 16] > 2:
            continue
        if _plausible(b, n, p, final, max_batch_length) != 0:
            return p
    return n


def _legacy_message(b: Any, p: int, end: int, bidx: int) -> Tuple[Optional[Tuple[int, ...]], int]:
    """The record of the legacy entry b[p:end], or (None, failing field)."""
    magic, attr = b[p + 16], b[p + 17]
    pos = p + 18
    ts = -1
    if magic == 1:
        ts = struct.unpack_from(">q", b, pos)[0]
        pos += 8
    kv = []
    for fld in (5, 6):
        if end - pos < 4:
            return None, fld
        ln = struct.unpack_from(">i", b, pos)[0]
        pos += 4
        if ln < -1 or (ln > 0 and ln > end - pos):
            return None, fld
        kv.append((pos, ln))
        pos += max(ln, 0)
    if pos != end:
        return None, 10
    off = struct.unpack_from(">q", b, p)[0]
    return (off, ts, kv[0][0], kv[1][0], pos, kv[0][1], kv[1][1], 0, end - p - 12, attr, bidx), 0


def _bad(b: Any, n: int, pos: int, final: bool, max_len: int, bad: int,
         e: Dict[str, Any]) -> Optional[int]:
    """Unreadable bytes from pos: where readable data starts again (None: the window
    cannot tell)."""
    nxt = resync(b, pos + 1, final, max_len)
    if not final and nxt >= n:
        nxt = n - 61 if n > 61 else 0
        if nxt <= pos:
            return None
    if bad == 7 and nxt < n:
        bad = 3
    e.update(status=bad, next_position=nxt)
    return nxt


def _trust_length(b: Any, n: int, pos: int, end: int, final: bool, max_len: int,
                  inside_ok: bool = False) -> int:
    """May the length of the batch / legacy entry b[pos:end], whose CRC fails, be trusted?
    Only when readable data (or the end of the log) follows and, unless ``inside_ok``, no
    run of readable entries inside it ends exactly at ``end`` (1 yes, 0 no, -1 undecidable
    in this window)."""
    pl = (1 if final else -1) if end == n else _plausible(b, n, end, final, max_len)
    if pl <= 0 or inside_ok:
        return pl
    inner = b[:end]
    q = resync(inner, pos + 1, True, max_len)
    if q >= end:
        return 1
    # readable entries running exactly to end were swallowed by garbage; followed by
    # something else (a compression trailer) they are a damaged wrapper's, verbatim
    while q < end and _plausible(inner, end, q, True, max_len) == 1:
        q += 12 + struct.unpack_from(">i", inner, q + 8)[0]
    return 0 if q == end else 1


def _scan_legacy(b: Any, n: int, pos: int, verify_crc: bool, final: bool, max_len: int,
                 e: Dict[str, Any], bidx: int, recs: List[Tuple[int, ...]]) -> Optional[int]:
    magic = b[pos + 16]
    off, size = struct.unpack_from(">qi", b, pos)
    e.update(base_offset=off, batch_length=size, magic=magic)
    bad = 0
    if size < _legacy_min(magic) or size > max_len:
        bad = 4
    elif size + 12 > n - pos:
        if not final:
            return None
        bad = 7
    else:
        total = 12 + size
        crc = struct.unpack_from(">I", b, pos + 12)[0]
        comp = crc32(b[pos + 16:pos + total]) if verify_crc else crc
        e.update(crc=crc, computed_crc=comp, crc_ok=int(comp == crc))
        if comp != crc:
            # a wrapper may hold its inner entries verbatim: its own layout vouches for it
            layout_ok = _legacy_message(b, pos, pos + total, bidx)[0] is not None
            pl = _trust_length(b, n, pos, pos + total, final, max_len, layout_ok)
            if pl < 0:
                return None
            if pl == 0:
                bad = 3
        if not bad:
            attr = b[pos + 17]
            ts = struct.unpack_from(">q", b, pos + 18)[0] if magic else -1
            e.update(attributes=attr & (0x0F if magic else 0x07), base_timestamp=ts,
                     max_timestamp=ts, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                     partition_leader_epoch=-1, next_position=pos + total)
            if attr & 7 == 0:
                rec, fld = _legacy_message(b, pos, pos + total, bidx)
                e["record_count"] = 1
                if rec is None:
                    e.update(status=5, error_field=fld)
                else:
                    recs.append(rec)
                    e["records_parsed"] = 1
            else:
                e["status"] = 1 if attr & 7 <= 3 else 6
                rec, fld = _legacy_message(b, pos, pos + total, bidx)
                if rec is None:
                    e.update(status=5, error_field=fld)
            return pos + total
    return _bad(b, n, pos, final, max_len, bad, e)


def scan(data: Any, verify_crc: bool = True, final: bool = True,
         max_batch_length: int = 1 << 30, max_batches: int = 0,
         pool: Optional[List[Any]] = None) -> Tuple[int, np.ndarray, np.ndarray]:
    # ``pool`` is the C binding's buffer reuse; rows built here are new arrays anyway.
    b = memoryview(data).cast("B")
    n = len(b)
    batches: List[Dict[str, Any]] = []
    recs: List[Tuple[int, ...]] = []
    pos = 0
    while pos < n:
        rem = n - pos
        e: Dict[str, Any] = {"position": pos, "first_record": len(recs)}
        if rem > 16 and b[pos + 16] < 2:
            nxt = _scan_legacy(b, n, pos, verify_crc, final, max_batch_length, e, len(batches),
                               recs)
            if nxt is None:
                break
            batches.append(e)
            pos = nxt
            continue
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
            bad = 4
        elif blen < 49 or blen > max_batch_length:
            bad = 3
        elif blen + 12 > rem:
            if not final:
                break
            bad = 7
        if bad:
            nxt = _bad(b, n, pos, final, max_batch_length, bad, e)
            if nxt is None:
                break
            batches.append(e)
            pos = nxt
            continue
        total = 12 + blen
        if verify_crc:
            e["computed_crc"] = crc32c(b[pos + 21:pos + total])
            e["crc_ok"] = int(e["computed_crc"] == e["crc"])
        else:
            e["computed_crc"], e["crc_ok"] = e["crc"], 1
        if not e["crc_ok"]:
            pl = _trust_length(b, n, pos, pos + total, final, max_batch_length)
            if pl < 0:
                break
            if pl == 0:
                nxt = _bad(b, n, pos, final, max_batch_length, 3, e)
                if nxt is None:
                    break
                batches.append(e)
                pos = nxt
                continue
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


def parse_legacy(data: Any, magic: int, offset: int, timestamp: int, log_append_time: bool,
                 batch_index: int = 0, verify_crc: bool = True) -> Tuple[np.ndarray, int, int, int]:
    b = memoryview(data).cast("B")
    n = len(b)
    out: List[Tuple[int, ...]] = []

    def done(st: int, fld: int, ep: int) -> Tuple[np.ndarray, int, int, int]:
        arr = np.array(out, dtype=RECORD_DTYPE) if out else np.empty(0, RECORD_DTYPE)
        return arr, st, fld, ep

    pos = 0
    while pos < n:
        if n - pos < 26:
            return done(5, 1, pos)
        size = struct.unpack_from(">i", b, pos + 8)[0]
        m = b[pos + 16]
        if m > 1:
            return done(5, 12, pos)
        if size < _legacy_min(m) or size > n - pos - 12:
            return done(5, 10, pos)
        end = pos + 12 + size
        if verify_crc and crc32(b[pos + 16:end]) != struct.unpack_from(">I", b, pos + 12)[0]:
            return done(5, 11, pos)
        if b[pos + 17] & 7:
            return done(5, 2, pos)
        rec, fld = _legacy_message(b, pos, end, batch_index)
        if rec is None:
            return done(5, fld, pos)
        if m == 1 and log_append_time:
            rec = rec[:1] + (timestamp,) + rec[2:]
        out.append(rec)
        pos = end
    if not out:
        return done(5, 1, 0)
    if magic == 1:
        last = out[-1][0]
        base = 0
        if offset != 0:
            if offset < last:
                return done(5, 4, 0)
            base = offset - last
        out = [((r[0] + base + (1 << 63)) % (1 << 64) - (1 << 63),) + r[1:] for r in out]
    return done(0, 0, 0)


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
