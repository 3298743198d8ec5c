"""The one-C-call ``__consumer_offsets`` kernel (csrc/kc_ocols.c) against the exact path
(:func:`kcodec.offsets.decode_record`, one record at a time) on the bench's mix of
offset commits and classic consumer groups with members, every version of both values,
and the same rows with bytes flipped, cut and extended: every row, every selection,
projections, Kafka's and Spark's types."""
from __future__ import annotations

import random
import struct

import pytest

pa = pytest.importorskip("pyarrow")

import kcodec  # noqa: E402
from kcodec.consumer import (Assignment, Subscription, TopicPartition, encode_assignment,  # noqa: E402
                             encode_subscription)
from kcodec.offsets import decode_record  # noqa: E402

from .test_spark_functions import _projected  # noqa: E402

K = pytest.importorskip("kcodec.spark._kernels")

SELECTIONS = [None, "all", ["OffsetCommit"], ["GroupMetadata"]]
FIELDS = [None, ["group", "topic", "partition", "OffsetCommitValue.offset", "OffsetCommitValue.commitTimestamp"],
          ["members", "GroupMetadataValue.members.memberId"], ["raw_value", "record_type", "value_version"]]


def _member(i: int, v: int) -> dict:
    return {"memberId": f"m-{i}", "groupInstanceId": None if i % 2 else f"inst-{i}", "clientId": "c",
            "clientHost": "/10.0.0.1", "rebalanceTimeout": 300000, "sessionTimeout": 45000,
            "subscription": encode_subscription(Subscription(["t0", "t1"], owned_partitions=[TopicPartition("t0", i)],
                                                             generation_id=v, rack_id="r" if i else None),
                                                version=i % 4),
            "assignment": encode_assignment(Assignment([TopicPartition("t0", 0), TopicPartition("t1", i)],
                                                       user_data=b"u" * i), version=v % 4)}


def _rows() -> list:
    out = []
    for v in range(5):
        value = {"offset": 40 + v, "leaderEpoch": 3, "metadata": "md" * v, "commitTimestamp": 1700000000000 + v,
                 "expireTimestamp": 1800000000000}
        out.append((struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": f"g{v}", "topic": "t",
                                                                              "partition": v}, 0),
                    struct.pack(">h", v) + kcodec.encode("OffsetCommitValue", value, v)))
    for v in range(5):
        gm = {"protocolType": "consumer" if v != 2 else "connect", "generation": v, "protocol": "range",
              "leader": "m-0", "currentStateTimestamp": 17, "members": [_member(i, v) for i in range(3)]}
        out.append((struct.pack(">h", 2) + kcodec.encode("GroupMetadataKey", {"group": f"cg{v}"}, 0),
                    struct.pack(">h", v) + kcodec.encode("GroupMetadataValue", gm, v)))
    out += [(out[0][0], None), (out[5][0], None), (None, None)]
    return out


def _mutated(rows: list, seed: int = 7) -> list:
    rng = random.Random(seed)
    out = []
    for k, v in rows:
        for _ in range(6):
            kk, vv = k, v
            if vv and rng.random() < 0.8:
                b = bytearray(vv)
                b[rng.randrange(len(b))] = rng.randrange(256)
                if rng.random() < 0.3:
                    b = b[:rng.randrange(len(b) + 1)]
                if rng.random() < 0.2:
                    b += b"\x00"
                vv = bytes(b)
            elif kk:
                b = bytearray(kk)
                b[rng.randrange(len(b))] = rng.randrange(256)
                kk = bytes(b)
            out.append((kk, vv))
    return out


def _expected(pairs, record_types):
    typ = K.offsets_type(record_types)
    # a row null in both key and value is no record: null in every field, no error
    return pa.array([{} if k is None and v is None else K._offsets_row(decode_record(k, v, errors="report"), typ)
                     for k, v in pairs], typ).to_pylist()


@pytest.mark.parametrize("record_types", SELECTIONS, ids=["default", "all", "commits", "groups"])
@pytest.mark.parametrize("spark", [False, True], ids=["kafka", "spark"])
def test_one_call_kernel_equals_the_exact_path(record_types, spark):
    rows = _rows()
    pairs = rows + _mutated(rows)
    keys = pa.array([k for k, _ in pairs], pa.binary())
    vals = pa.array([v for _, v in pairs], pa.large_binary())
    exp = _expected(pairs, record_types)
    for fields in FIELDS:
        if fields and record_types == ["OffsetCommit"] and "members" in fields:
            continue            # no members column in that selection
        if fields and record_types == ["GroupMetadata"] and any(f.startswith("OffsetCommit") for f in fields):
            continue
        got = K.decode_offsets(keys, vals, record_types=record_types, fields=fields, spark=spark)
        got.validate(full=True)
        want = exp if fields is None else _projected(exp, fields)
        assert got.to_pylist() == want, fields
    # the bulk path took the well-formed rows (consumer members' payloads included)
    kernel = K._offsets_kernel(K._selected(record_types), spark, None)
    if kernel is not None:
        _, status = kernel.decode(keys.slice(0, len(rows)), vals.slice(0, len(rows)))
        assert status.tolist() == [1] * (len(rows) - 1) + [2]


def test_every_row_decodes_as_a_slice_and_failfast_names_the_first_bad_row():
    rows = _rows()
    pairs = rows + _mutated(rows, seed=11)
    keys = pa.array([k for k, _ in pairs], pa.binary())
    vals = pa.array([v for _, v in pairs], pa.binary())
    exp = _expected(pairs, None)
    assert K.decode_offsets(keys.slice(5, 77), vals.slice(5, 77), spark=True).to_pylist() == exp[5:82]
    bad = next(i for i, r in enumerate(exp) if r["_error"])
    with pytest.raises(K.FailFastError, match=f"row {bad} of the batch"):
        K.decode_offsets(keys, vals, mode=K.FAILFAST)
    assert K.decode_offsets(keys.slice(0, 0), vals.slice(0, 0)).to_pylist() == []


def test_a_fresh_worker_decoding_good_rows_does_not_import_pandas():
    # pyarrow imports pandas on its first pa.array() call (~0.4 CPU s and ~50 MB per Spark
    # Python worker); the column function's path builds every array from buffers instead
    import subprocess
    import sys
    code = """
import sys, struct
import numpy as np, pyarrow as pa
import kcodec
from kcodec.spark import _kernels as K
def col(items):   # as Spark hands a batch over: built from buffers
    offs = np.zeros(len(items) + 1, np.int32)
    offs[1:] = np.cumsum([len(x) for x in items])
    return pa.Array.from_buffers(pa.binary(), len(items), [None, pa.py_buffer(offs), pa.py_buffer(b"".join(items))])
key = struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 0}, 0)
value = struct.pack(">h", 3) + kcodec.encode("OffsetCommitValue", {"offset": 1, "leaderEpoch": 0, "metadata": "",
                                                                   "commitTimestamp": 2}, 3)
for fields in (None, ["group", "OffsetCommitValue.offset"]):
    out = K.decode_offsets(col([key] * 3), col([value] * 3), spark=True, fields=fields)
    assert out.field("_error").null_count == 3
print("pandas" in sys.modules)
"""
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["False"]


def _tagged_and_edge_rows() -> list:
    """Offset commits the flat programs leave to the generic decoder (tag sections with
    entries, overlong counts, bad UTF-8, nulls, short and trailing bytes) and strings
    around the copy's word sizes."""
    key = struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": "g", "topic": "t", "partition": 3}, 0)
    value = struct.pack(">h", 4) + kcodec.encode("OffsetCommitValue", {"offset": 5, "leaderEpoch": 2, "metadata": "m",
                                                                       "commitTimestamp": 9}, 4)
    body = value[:-1]
    tags = [b"\x00", b"\x01\x00\x10" + bytes(range(16)), b"\x01\x05\x02ab", b"\x02\x00\x10" + bytes(16) + b"\x07\x00",
            b"\x80\x00", b"\x01\x00\x0f" + bytes(15), b"\x01", b"", b"\x00\x00"]
    out = [(key, body + t) for t in tags]
    for g in ["", "é", "ü" * 40, "x" * 300, "\u20ac" * 3, "a" * 7, "a" * 8, "a" * 16, "a" * 17]:
        out.append((struct.pack(">h", 1) + kcodec.encode("OffsetCommitKey", {"group": g, "topic": g, "partition": 1}, 0),
                    value))
    head = struct.pack(">h", 1)
    out += [(head + b"\x00\x02\xc3\x28\x00\x01t\x00\x00\x00\x01", value),       # bad UTF-8
            (head + b"\xff\xff\x00\x01t\x00\x00\x00\x01", value),               # null group
            (head + b"\x00\x01g\x00\x01t\x00\x00\x00", value),                  # short
            (head + b"\x00\x01g\x00\x01t\x00\x00\x00\x01\x00", value),          # trailing byte
            (key, value[:-3]), (key, value + b"\x00")]
    return out


@pytest.mark.parametrize("spark", [False, True], ids=["kafka", "spark"])
def test_flat_programs_equal_the_generic_decoder(spark):
    """Keys and offset commits decode the flat way (kc_flat_build): to the same columns and
    statuses as the generic column decoder on good rows, mutated rows and every row the
    flat way declines; as a slice and from large_binary too."""
    rows = _rows() + _tagged_and_edge_rows()
    pairs = rows + _mutated(rows, seed=3) + _mutated(rows, seed=5)
    keys = pa.array([k for k, _ in pairs], pa.binary())
    vals = pa.array([v for _, v in pairs], pa.binary())
    inputs = [(keys, vals), (keys.slice(3, len(keys) - 5), vals.slice(3, len(vals) - 5)),
              (keys.cast(pa.large_binary()), vals.cast(pa.large_binary()))]
    for record_types in (None, ["OffsetCommit"]):
        for fields in FIELDS[:2] + [["OffsetCommitValue"], ["group", "OffsetCommitValue.topicId"]]:
            if record_types and fields and "members" in fields:
                continue
            fo = K.fields_option(fields)
            names = K._selected(record_types)
            flat, generic = K._offsets_kernel(names, spark, fo), K._offsets_kernel(names, spark, fo, False)
            if flat is None:
                pytest.skip("no native engine")
            assert flat.n_flat > 0 and generic.n_flat == 0
            for k, v in inputs:
                (a, sa), (b, sb) = flat.decode(k, v), generic.decode(k, v)
                a.validate(full=True)
                assert sa.tolist() == sb.tolist() and a.equals(b), (record_types, fields)
                assert a.to_pylist() == b.to_pylist()
    # and the rows the flat way declines still equal the exact path
    edge = _tagged_and_edge_rows()
    ek, ev = pa.array([k for k, _ in edge], pa.binary()), pa.array([v for _, v in edge], pa.binary())
    assert K.decode_offsets(ek, ev, spark=spark).to_pylist() == _expected(edge, None)
