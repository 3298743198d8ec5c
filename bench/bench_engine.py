"""Speed of the spec engine: single and bulk decode/encode, native (C) vs the pure-Python
reference vs kafka-python 3.0.12's protocol classes where they cover the message.

Run:  python3 -m pytest bench/bench_engine.py --benchmark-only -n 0
Each benchmark reports records/s and MB/s in ``benchmark.extra_info``.
"""
from __future__ import annotations

import random
import uuid
from typing import Any, Callable, Dict, List

import pytest

from kcodec import _codec_py
from kcodec._program import program

_native = pytest.importorskip("kcodec._native")
try:
    import pyarrow as pa
except ImportError:  # bulk over a plain list still runs
    pa = None

BULK_ROWS = 200_000
PY_BULK_ROWS = 5_000       # the reference is slow; it gets fewer rows (rates are per row)


# ------------------------------------------------------------------------------------
# values

def offset_commit(rng: random.Random, version: int) -> Dict[str, Any]:
    v = {"offset": rng.randrange(1 << 40), "metadata": rng.choice(["", "m", "meta-data"]),
         "commitTimestamp": 1_700_000_000_000 + rng.randrange(1 << 30)}
    if version >= 3:
        v["leaderEpoch"] = rng.randrange(1000)
    if version >= 4:
        v["topicId"] = uuid.UUID(int=rng.randrange(1 << 128))
    return v


def group_metadata(rng: random.Random, members: int = 10) -> Dict[str, Any]:
    return {
        "protocolType": "consumer", "generation": rng.randrange(1000), "protocol": "range",
        "leader": "consumer-1-0", "currentStateTimestamp": 1_700_000_000_000,
        "members": [{
            "memberId": f"consumer-1-{i}-{uuid.UUID(int=rng.randrange(1 << 128))}",
            "groupInstanceId": None, "clientId": f"consumer-1-{i}", "clientHost": "/10.0.0.1",
            "rebalanceTimeout": 300000, "sessionTimeout": 45000,
            "subscription": bytes(rng.randrange(256) for _ in range(60)),
            "assignment": bytes(rng.randrange(256) for _ in range(40)),
        } for i in range(members)],
    }


def member_metadata(rng: random.Random) -> Dict[str, Any]:
    return {
        "instanceId": None, "rackId": "rack-a", "clientId": "consumer-1", "clientHost": "/10.0.0.1",
        "subscribedTopicNames": [f"topic-{i}" for i in range(5)], "subscribedTopicRegex": None,
        "rebalanceTimeoutMs": 300000, "serverAssignor": "uniform",
    }


def subscription_v1() -> Dict[str, Any]:
    topics = [f"topic-{i:02d}" for i in range(10)]
    return {"topics": topics, "userData": None,
            "ownedPartitions": [{"topic": t, "partitions": list(range(10))} for t in topics]}


def fetch_response(rng: random.Random, topics: int = 10, partitions: int = 10,
                   record_bytes: int = 10_000) -> Dict[str, Any]:
    return {
        "throttleTimeMs": 0, "errorCode": 0, "sessionId": 1,
        "responses": [{
            "topicId": uuid.UUID(int=rng.randrange(1 << 128)),
            "partitions": [{
                "partitionIndex": p, "errorCode": 0, "highWatermark": 1 << 20,
                "lastStableOffset": 1 << 20, "logStartOffset": 0, "abortedTransactions": [],
                "preferredReadReplica": -1, "records": rng.randbytes(record_bytes),
            } for p in range(partitions)],
        } for _ in range(topics)],
    }


CASES = {
    "OffsetCommitValue-v3": ("OffsetCommitValue", 3, lambda r: offset_commit(r, 3)),
    "OffsetCommitValue-v4": ("OffsetCommitValue", 4, lambda r: offset_commit(r, 4)),
    "GroupMetadataValue-v4": ("GroupMetadataValue", 4, group_metadata),
    "ConsumerGroupMemberMetadataValue-v0": ("ConsumerGroupMemberMetadataValue", 0, member_metadata),
    "ConsumerProtocolSubscription-v1": ("ConsumerProtocolSubscription", 1, lambda r: subscription_v1()),
    "FetchResponse-v16-1MB": ("FetchResponse", 16, fetch_response),
}
ENGINES = {"c": _native, "py": _codec_py}


def _info(benchmark, records: int, nbytes: int) -> None:
    st = benchmark.stats.stats if benchmark.stats else None
    if st is None:
        return
    mean = st.mean
    benchmark.extra_info["records_per_s"] = records / mean
    benchmark.extra_info["MB_per_s"] = nbytes / mean / 1e6
    benchmark.extra_info["us_per_record"] = mean / records * 1e6


def _prepared(case: str):
    name, version, make = CASES[case]
    prog = program(name, version)
    value = make(random.Random(1))
    return prog, value, _native.encode(prog, value)


# ------------------------------------------------------------------------------------
# single records

@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("case", list(CASES))
def test_decode_single(benchmark, case, engine):
    prog, value, data = _prepared(case)
    eng = ENGINES[engine]
    benchmark.group = f"decode {case}"
    got = benchmark(eng.decode, prog, data, 0)
    assert got[1] == len(data)
    _info(benchmark, 1, len(data))


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("case", list(CASES))
def test_encode_single(benchmark, case, engine):
    prog, value, data = _prepared(case)
    eng = ENGINES[engine]
    benchmark.group = f"encode {case}"
    assert benchmark(eng.encode, prog, value) == data
    _info(benchmark, 1, len(data))


# kafka-python 3.0.12 covers the consumer subscription and FetchResponse

def _kafka_python(case: str):
    try:
        if case.startswith("ConsumerProtocolSubscription"):
            from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as cls
            return lambda data, v: cls.decode(data, version=v, header=False), \
                lambda obj, v: obj.encode(version=v, header=False)
        if case.startswith("FetchResponse"):
            from kafka.protocol.consumer.fetch import FetchResponse as cls
            return lambda data, v: cls.decode(data, version=v, header=False), \
                lambda obj, v: obj.encode(version=v, header=False)
    except ImportError:
        pass
    return None


KP_CASES = ["ConsumerProtocolSubscription-v1", "FetchResponse-v16-1MB"]


@pytest.mark.parametrize("case", KP_CASES)
def test_decode_single_kafka_python(benchmark, case):
    kp = _kafka_python(case)
    if kp is None:
        pytest.skip("kafka-python 3.0.12 not installed")
    prog, value, data = _prepared(case)
    decode, _ = kp
    benchmark.group = f"decode {case}"
    benchmark(decode, data, prog.version)
    _info(benchmark, 1, len(data))


@pytest.mark.parametrize("case", KP_CASES)
def test_encode_single_kafka_python(benchmark, case):
    kp = _kafka_python(case)
    if kp is None:
        pytest.skip("kafka-python 3.0.12 not installed")
    prog, value, data = _prepared(case)
    decode, encode = kp
    obj = decode(data, prog.version)
    benchmark.group = f"encode {case}"
    out = benchmark(encode, obj, prog.version)
    _info(benchmark, 1, len(out))


# ------------------------------------------------------------------------------------
# bulk

BULK_CASES = ["OffsetCommitValue-v3", "OffsetCommitValue-v4", "GroupMetadataValue-v4",
              "ConsumerGroupMemberMetadataValue-v0"]


def _rows(case: str, n: int) -> List[bytes]:
    name, version, make = CASES[case]
    prog = program(name, version)
    rng = random.Random(2)
    distinct = [_native.encode(prog, make(rng)) for _ in range(min(n, 1000))]
    return [distinct[i % len(distinct)] for i in range(n)]


@pytest.mark.parametrize("source", ["arrow", "list"])
@pytest.mark.parametrize("case", BULK_CASES)
def test_decode_bulk_native(benchmark, case, source):
    name, version, _ = CASES[case]
    prog = program(name, version)
    rows = _rows(case, BULK_ROWS)
    if source == "arrow":
        if pa is None:
            pytest.skip("pyarrow not installed")
        values: Any = pa.array(rows, pa.binary())
    else:
        values = rows
    benchmark.group = f"bulk {case}"
    out = benchmark.pedantic(_native.decode_bulk, args=(prog, values), rounds=5, iterations=1,
                             warmup_rounds=1)
    assert out["_ok"].all()
    _info(benchmark, len(rows), sum(map(len, rows)))


@pytest.mark.parametrize("case", BULK_CASES)
def test_decode_bulk_python_reference(benchmark, case):
    import kcodec
    name, version, _ = CASES[case]
    prog = program(name, version)
    rows = _rows(case, PY_BULK_ROWS)
    benchmark.group = f"bulk {case}"
    out = benchmark.pedantic(kcodec._decode_bulk_py, args=(prog, rows), rounds=2, iterations=1)
    assert all(out["_ok"])
    _info(benchmark, len(rows), sum(map(len, rows)))


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("case", BULK_CASES)
def test_encode_many(benchmark, case, engine):
    """Encoding has no columnar input: a loop of single encodes, per record."""
    name, version, make = CASES[case]
    prog = program(name, version)
    rng = random.Random(3)
    n = 5_000
    values = [make(rng) for _ in range(n)]
    enc: Callable = ENGINES[engine].encode
    benchmark.group = f"encode-many {case}"
    out = benchmark.pedantic(lambda: [enc(prog, v) for v in values], rounds=3, iterations=1)
    _info(benchmark, n, sum(map(len, out)))
