"""The Streams userData writers in C (csrc/kc_streams_userdata.c through
kcodec/streams/_userdata.pyx) fed what callers can hand the binding: host maps with
ports and partitions past int32, bools, hosts and topics with NUL, surrogates, non-ASCII
and colliding String.hashCodes, topics shared between maps, given dictionaries with
repeated, negative or missing entries; task sets with colliding TaskId hash codes,
named tasks, offset sums of other types, TaskId-like tuples.  The binding hands back
bytes equal to the pure-Python encoder's or declines (None: Python decides, errors
included); never other bytes."""
from __future__ import annotations

import random

import pytest

from kcodec.streams import protocol as P

_ud = P._ud
pytestmark = pytest.mark.skipif(_ud is None, reason="kcodec.streams._userdata not built")

# "Aa" and "BB" share a String.hashCode, as do their concatenations
_TOPICS = ["t", "Aa", "BB", "AaAa", "BBBB", "AaBB", "BBAa", "é", "\x00x", "t\ud800", "z" * 300, ""]
_HOSTS = ["h", "host-1", "ü", "\x00", "a" * 70000, "h\udfff"]


def _int(rnd, small=100):
    return rnd.choice([rnd.randrange(small), rnd.randrange(small), 2**31 - 1, -2**31, 2**31, -2**31 - 1,
                       True, 2**63])


def _maps(rnd, n_maps):
    out = []
    for _ in range(n_maps):
        m = {}
        for _ in range(rnd.randrange(4)):
            port = _int(rnd, 65536) if rnd.random() < 0.15 else rnd.randrange(65536)
            host = rnd.choice(_HOSTS) if rnd.random() < 0.2 else rnd.choice(_HOSTS[:3])
            tps = []
            for _ in range(rnd.randrange(6)):
                part = _int(rnd) if rnd.random() < 0.1 else rnd.randrange(8)
                topic = rnd.choice(_TOPICS) if rnd.random() < 0.3 else rnd.choice(_TOPICS[:6])
                tps.append(P.TopicPartition(topic, part))
            m[P.HostInfo(host, port)] = tps
        out.append(m)
    return out


def _python(fn, *a):
    try:
        return fn(*a)
    except Exception as e:      # noqa: BLE001 - the reference's answer, errors included
        return e


def test_host_sections_equal_the_python_encoder():
    rnd = random.Random(925)
    fast = declined = 0
    for _ in range(1500):
        v = rnd.choice([2, 3, 4, 5, 6, 7, 11])
        maps = _maps(rnd, 2 if v >= 6 else 1)
        given = None
        if v >= 5 and rnd.random() < 0.3:
            topics = sorted({tp.topic for m in maps for tps in m.values() for tp in tps})
            given = [(rnd.choice([i, i, -1, 2**31]) if rnd.random() < 0.2 else i, t)
                     for i, t in enumerate(topics) if rnd.random() < 0.95]
            if given and rnd.random() < 0.2:
                given.append((rnd.randrange(9), given[0][1]))      # a topic twice: the last wins
        a = P.AssignmentInfo(v, partitions_by_host=maps[0],
                             standby_partitions_by_host=maps[1] if len(maps) > 1 else {},
                             topic_dictionary=given)
        want = _python(P._host_section_py, a)
        try:
            got = _ud.host_section(maps, v >= 5, given)
        except (ValueError, OverflowError) as e:
            got = e
        if got is None:
            declined += 1
            continue
        fast += 1
        assert isinstance(want, bytes) and got == want, (v, maps, given, got, want)
    assert fast > 300 and declined > 50


def test_task_sets_equal_the_python_encoder(monkeypatch):
    rnd = random.Random(848)
    fast = 0
    for _ in range(800):
        v = rnd.randrange(1, 7)
        sums = {}
        shape = rnd.randrange(4)
        for k in range(rnd.randrange(40)):
            if shape == 0:
                t = P.TaskId(k // 8, k % 8)
            elif shape == 1:        # 31 * (31 * (31 + s) + q): one hash code for all
                t = P.TaskId(k, -31 * k + rnd.randrange(2))
            elif shape == 2:
                t = P.TaskId(_int(rnd), _int(rnd))
            else:
                t = P.TaskId(rnd.randrange(3), rnd.randrange(3), rnd.choice([None, None, "named"]))
            sums[t] = rnd.choice([P.LATEST_OFFSET, 0, 5, 2**63, -2.0, True])
        info = P.SubscriptionInfo(v, task_offset_sums=sums)
        got = _python(P.encode_subscription, info)
        fast += isinstance(got, bytes)
        monkeypatch.setattr(P, "_ud", None)
        want = _python(P.encode_subscription, info)
        monkeypatch.setattr(P, "_ud", _ud)
        if isinstance(want, bytes):
            assert got == want, (v, sums)
        else:
            assert type(got) is type(want) and str(got) == str(want), (v, sums, got, want)
    assert fast > 300
