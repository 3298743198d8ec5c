"""The bulk decoder's row sources: record slices read in place from the log reader's
record array (strided fields), ``take`` and ``select``, and ``slice_heads``; the same
results on both engines (the Python engine runs when ``KCODEC_NO_EXTENSIONS=1``)."""
from __future__ import annotations

import numpy as np
import pytest

import kcodec
from kcodec import slice_heads

pa = pytest.importorskip("pyarrow")
from kcodec import arrow  # noqa: E402

KEY = "OffsetCommitKey"
REC = np.dtype([("key_pos", "<i8"), ("pad", "<i4"), ("key_len", "<i4"), ("other", "<i8")])


def _log_like(keys):
    """A buffer of version-prefixed keys and a record array pointing into it."""
    buf = bytearray(b"\xff" * 3)
    recs = np.zeros(len(keys), REC)
    for i, k in enumerate(keys):
        if k is None:
            recs[i] = (0, 0, -1, 0)
            continue
        raw = b"\x00\x01" + kcodec.encode(KEY, k, 0)
        recs[i] = (len(buf), 0, len(raw), 0)
        buf += raw
    return bytes(buf), recs


KEYS = [{"group": f"g{i}", "topic": "t" * i, "partition": i} for i in range(5)]


def test_strided_fields_read_in_place():
    buf, recs = _log_like(KEYS + [None])
    assert recs["key_pos"].strides[0] == REC.itemsize
    got = arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"]), 0, skip=2)
    rows = got.to_pylist()
    assert [r["group"] for r in rows] == [k["group"] for k in KEYS] + [None]
    assert [r["partition"] for r in rows[:5]] == list(range(5))
    assert rows[5]["_error"] is None            # a null row is not an error


def test_select_makes_null_rows_in_place():
    buf, recs = _log_like(KEYS)
    sel = np.array([True, False, False, True, False])
    got = arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"]), 0, skip=2,
                       select=sel).to_pylist()
    assert [r["group"] for r in got] == ["g0", None, None, "g3", None]
    assert [r["_error"] for r in got] == [None] * 5
    with pytest.raises(ValueError):
        arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"]), 0, skip=2,
                     select=sel[:2])


def test_select_on_a_binary_array():
    vals = [kcodec.encode(KEY, k, 0) for k in KEYS]
    got = arrow.decode(KEY, pa.array(vals, pa.binary()), 0, select=[1, 0, 1, 0, 1]).to_pylist()
    assert [r["partition"] for r in got] == [0, None, 2, None, 4]


def test_take_rows_out_of_order_and_bad_entries():
    buf, recs = _log_like(KEYS)
    take = np.array([4, 0, 9, 2], np.int64)           # 9: no such slice
    got = arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"], take=take), 0,
                       skip=2).to_pylist()
    assert [r["partition"] for r in got] == [4, 0, None, 2]
    assert got[2]["_error"] and "outside the buffer" in got[2]["_error"]
    assert got[0]["_error"] is None


def test_slice_outside_the_buffer_is_a_bad_row():
    buf, recs = _log_like(KEYS[:2])
    recs["key_len"][1] = len(buf)
    got = arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"]), 0, skip=2).to_pylist()
    assert got[0]["_error"] is None and got[1]["group"] is None
    assert "outside the buffer" in got[1]["_error"]


def test_slice_heads():
    buf, recs = _log_like(KEYS[:3] + [None])
    recs = np.concatenate([recs, np.array([(len(buf) - 1, 0, 1, 0), (len(buf), 0, 5, 0)], REC)])
    heads, have = slice_heads(buf, recs["key_pos"], recs["key_len"], 3)
    assert heads.shape == (6, 3)
    assert have.tolist() == [3, 3, 3, -1, 1, -2]
    assert heads[:3, :2].tolist() == [[0, 1]] * 3
    assert heads[4].tolist() == [buf[-1], 0, 0]
    assert heads[3].tolist() == [0, 0, 0]
    h2, v2 = slice_heads(buf, recs["key_pos"], recs["key_len"], 2, take=[1, 7])
    assert v2.tolist() == [2, -2] and h2[0].tolist() == [0, 1]
    with pytest.raises(ValueError):
        slice_heads(buf, recs["key_pos"], recs["key_len"], 9)


def test_both_engines_agree_on_a_row_source():
    """The Python engine's rows for the same source: decoded one by one."""
    buf, recs = _log_like(KEYS + [None])
    sel = np.array([1, 1, 0, 1, 1, 1], bool)
    native = arrow.decode(KEY, arrow.Slices(buf, recs["key_pos"], recs["key_len"], take=[5, 3, 1, 0, 2, 4]),
                          0, skip=2, select=sel)
    prog = kcodec.program(KEY, 0)
    py = arrow._python_rows(prog, arrow.Slices(buf, recs["key_pos"], recs["key_len"],
                                               take=[5, 3, 1, 0, 2, 4]), 2, sel)[0]
    assert native.equals(py)
