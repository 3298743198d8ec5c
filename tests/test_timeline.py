"""kcodec.offsets.timeline against the Kafka 4.1.1 fixture, with every expectation read from
the fixture's ``kafka-dump-log.txt`` (Kafka's own decode), not from group names."""
import json
import re
from collections import Counter, defaultdict

import pytest

from ._shared import fixtures_dir, require

pytest.importorskip("pyarrow")

from kcodec.offsets import fold_log, iter_decoded, iter_offset_columns  # noqa: E402
from kcodec.offsets.timeline import DEFAULT_ASSIGNORS, Timeline, group_summary  # noqa: E402

CO = fixtures_dir() / "consumer_offsets"
SEGMENTS = CO / "segments"
_REC = re.compile(r"^\| offset: (\d+) CreateTime: (\d+) .*?(?:key: (\{.*?\}) payload: (.*)|endTxnMarker: (\w+).*)$")


def oracle():
    """Every record of kafka-dump-log.txt: partition, offset, timestamp, key type and data,
    payload (None: tombstone), transactional, producer id, marker."""
    out, part, batch = [], None, None
    if not (CO / "kafka-dump-log.txt").exists():
        return out
    for line in (CO / "kafka-dump-log.txt").read_text().splitlines():
        if line.startswith("Dumping "):
            part = line.split()[1].split("/")[0]
        elif line.startswith("baseOffset:"):
            batch = {"pid": int(re.search(r"producerId: (-?\d+)", line).group(1)),
                     "txn": "isTransactional: true" in line}
        elif line.startswith("| offset:"):
            m = _REC.match(line)
            r = {"partition": part, "offset": int(m.group(1)), "ts": int(m.group(2)), **batch}
            if m.group(5):
                r["marker"] = m.group(5)
            else:
                key = json.loads(m.group(3))
                r["type"], r["key"] = int(key["type"]), key["data"]
                p = m.group(4)
                r["value"] = None if p == "<DELETE>" else json.loads(p)["data"]
            out.append(r)
    return out


ORACLE = oracle()


def group_of(r):
    return r["key"].get("group", r["key"].get("groupId"))


@pytest.fixture(scope="module")
def timeline():
    require(CO / "kafka-dump-log.txt")
    t = Timeline()
    for cols in iter_offset_columns(SEGMENTS):
        t.add_columns(cols, partition=cols["file"])
    return t.result()


def test_commit_counts_are_read_committed_commits_per_minute(timeline):
    want, held = Counter(), defaultdict(Counter)
    for r in ORACLE:
        if "marker" in r:
            h = held.pop((r["partition"], r["pid"]), Counter())
            if r["marker"] == "COMMIT":
                want.update(h)
        elif r["type"] in (0, 1) and r["value"] is not None:
            k = (r["key"]["group"], r["key"]["topic"], r["ts"] // 60000)
            (held[(r["partition"], r["pid"])] if r["txn"] else want)[k] += 1
    got = {(c["group_id"], c["topic"], c["minute"]): c["count"] for c in timeline["commit_counts"]}
    assert got == dict(want)
    assert any(r.get("marker") == "ABORT" for r in ORACLE)      # the fixture has aborted commits


def test_classic_events_follow_each_group_metadata_record(timeline):
    want = defaultdict(list)
    last = {}
    for r in ORACLE:
        if r.get("type") != 2:
            continue
        g, v = group_of(r), r["value"]
        if v is None:
            snap = ("Dead", None)
        else:
            snap = ("Stable" if v["members"] else "Empty", v["generation"],
                    tuple(sorted(m["memberId"] for m in v["members"])))
        if last.get(g, (None,))[1:] == snap[1:] and snap[0] != "Dead":
            continue
        last[g] = snap
        want[g].append((r["ts"], snap[0], None if v is None else v["generation"], len(v["members"]) if v else 0,
                        sorted((m["memberId"], m["clientHost"], m["groupInstanceId"]) for m in v["members"]) if v else []))
    got = defaultdict(list)
    for e in timeline["group_events"]:
        if e["kind"] == "classic":
            got[e["group_id"]].append(e)
    assert set(got) == set(want)
    for g, evs in want.items():
        assert [(e["timestamp"], e["state"], e["members"]) for e in got[g]] == \
            [(ts, st, n) for ts, st, _, n, _ in evs], g
        assert [e["epoch"] for e in got[g] if e["state"] != "Dead"] == [gen for _, st, gen, _, _ in evs if st != "Dead"]
        # who joined is who the record lists that the previous one did not
        members = set()
        for e, (_, _, _, _, now) in zip(got[g], evs):
            ids = {m for m, _, _ in now}
            assert {j["member_id"] for j in e["joined"]} == ids - members
            assert {j["member_id"] for j in e["left"]} == members - ids
            hosts = {m: (h, i) for m, h, i in now}
            for j in e["joined"]:
                assert (j["client_host"], j["instance_id"]) == hosts[j["member_id"]]
            members = ids


@pytest.mark.parametrize("kind,epoch_type,member_type", [("consumer", 3, 5), ("share", 11, 10), ("streams", 17, 19)])
def test_modern_group_events_match_epoch_and_member_records(timeline, kind, epoch_type, member_type):
    epochs, joined, left, live = defaultdict(set), defaultdict(set), defaultdict(set), defaultdict(set)
    for r in ORACLE:
        if r.get("type") == epoch_type and r["value"] is not None:
            epochs[group_of(r)].add(r["value"]["epoch"])
        elif r.get("type") == member_type:
            g, mid = group_of(r), r["key"]["memberId"]
            if r["value"] is None:
                left[g].add(mid)
                live[g].discard(mid)
            else:
                joined[g].add(mid)
                live[g].add(mid)
    assert epochs, f"the fixture has {kind} groups"
    evs = defaultdict(list)
    for e in timeline["group_events"]:
        if e["kind"] == kind:
            evs[e["group_id"]].append(e)
    assert set(evs) == set(epochs)
    for g, es in evs.items():
        assert {e["epoch"] for e in es} == epochs[g], g          # every new epoch is an event
        assert {j["member_id"] for e in es for j in e["joined"]} == joined[g]
        assert {j["member_id"] for e in es for j in e["left"]} == left[g]
        assert es[-1]["members"] == len(live[g])
        assert [e["timestamp"] for e in es] == sorted(e["timestamp"] for e in es)


def test_deleted_group_ends_dead(timeline):
    dead = {group_of(r) for r in ORACLE if r.get("type") == 2 and r["value"] is None}
    assert dead
    last = {}
    for e in timeline["group_events"]:
        last[e["group_id"]] = e
    for g in dead:
        assert last[g]["state"] == "Dead" and last[g]["members"] == 0


def test_record_path_gives_the_same_timeline(timeline):
    t = Timeline()
    from kcodec.log import parse_control_record
    for batch, rec, dec in iter_decoded(SEGMENTS):
        if rec is None:
            continue
        part = batch.file
        if batch.is_control:
            t.add(None, partition=part, offset=rec.offset, timestamp=rec.timestamp,
                  producer_id=batch.producer_id, control=parse_control_record(rec).type_name)
        else:
            t.add(dec, partition=part, offset=rec.offset, timestamp=rec.timestamp,
                  transactional=batch.is_transactional, producer_id=batch.producer_id)
    assert t.result() == timeline
    assert json.loads(json.dumps(timeline)) == timeline


def test_group_summary_separates_protocol_type_and_assignor(timeline):
    st = fold_log(SEGMENTS)
    last_classic, assignors, static = {}, defaultdict(set), defaultdict(set)
    for r in ORACLE:
        if r.get("type") == 2 and r["value"] is not None:
            last_classic[group_of(r)] = r["value"]
        if r.get("type") == 5 and r["value"] is not None:
            assignors[group_of(r)].add(r["value"].get("serverAssignor") or DEFAULT_ASSIGNORS["consumer"])
    for gid, g in st.groups.items():
        s = group_summary(g)
        if g.type == "classic" and gid in last_classic:
            v = last_classic[gid]
            assert s["protocol_type"] == v["protocolType"]
            assert s["assignor"] == (v["protocol"] or None)
            static[gid] = {m["groupInstanceId"] for m in v["members"] if m["groupInstanceId"]}
            assert set(s["static_members"]) == static[gid]
        elif g.type == "consumer" and g.members:
            assert s["protocol_type"] is None
            assert set(s["assignor"].split(",")) <= assignors[gid]
        elif g.type in ("share", "streams") and g.members:
            assert s["assignor"] == DEFAULT_ASSIGNORS[g.type]
    # static members: the fixture's java-static group had some (it ends Empty); the timeline
    # names their instance ids where they joined
    static_ids = {m["groupInstanceId"] for r in ORACLE if r.get("type") == 2 and r["value"]
                  for m in r["value"]["members"] if m["groupInstanceId"]}
    assert static_ids
    assert static_ids == {j["instance_id"] for e in timeline["group_events"] for j in e["joined"]
                          if j["instance_id"] and e["kind"] == "classic"}
    assert any(r.get("type") == 5 and r["value"] and not r["value"].get("serverAssignor") for r in ORACLE) \
        == any("uniform" in (e["assignor"] or "") for e in timeline["group_events"] if e["kind"] == "consumer")
