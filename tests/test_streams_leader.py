"""The Streams leader end to end: subscription bytes in, assignment bytes out."""
from __future__ import annotations

import uuid

from kcodec.consumer import Subscription, decode_assignment, encode_subscription as enc_consumer
from kcodec.streams import AssignorError, SubscriptionInfo, TaskId, decode_assignment as decode_info, encode_subscription
from kcodec.streams.assignors import AssignmentConfigs
from kcodec.streams.leader import JavaPriorityQueue, Topology, assign_group, assign_tasks_to_threads


def _subs(members, version=11, latest=11, sums=None):
    return {m: enc_consumer(Subscription(["in"], encode_subscription(
        SubscriptionInfo(version, latest, pid, f"h{pid.int}:1", (sums or {}).get(m, {})))))
        for m, pid in members.items()}


def test_every_partition_once_and_host_maps():
    topo = Topology.single_topic("in", 12, end_offset_sum=100)
    members = {f"c{i}-{j}": uuid.UUID(int=i + 1) for i in range(3) for j in range(2)}
    res = assign_group(_subs(members), topo, AssignmentConfigs(num_standby_replicas=1))
    seen = []
    for m, data in res.encoded():
        a = decode_assignment(data)
        info = decode_info(a.user_data)
        assert info.version == 11 and info.commonly_supported_version == 11
        assert [tp.partition for tp in a.partitions] == [t.partition for t in info.active_tasks]
        assert len(info.partitions_by_host) == 3 and len(info.standby_partitions_by_host) == 3
        assert not set(info.active_tasks) & set(info.standby_tasks)
        seen += a.partitions
    assert sorted(tp.partition for tp in seen) == list(range(12))


def test_lowest_version_is_used_for_everyone():
    topo = Topology.single_topic("in", 4)
    subs = _subs({"a": uuid.UUID(int=1)}, 7, 11)
    subs.update(_subs({"b": uuid.UUID(int=2)}))
    res = assign_group(subs, topo)
    assert {i.version for i in res.infos.values()} == {7}


def test_future_member_gets_tasks_and_probes():
    topo = Topology.single_topic("in", 4)
    subs = _subs({"a": uuid.UUID(int=1)})
    subs["f"] = enc_consumer(Subscription(["in"], bytes.fromhex("0000000c0000000c")))
    res = assign_group(subs, topo)
    assert res.versions.version_probing
    assert res.infos["f"].version == 11 and res.infos["f"].active_tasks


def test_error_assignment_when_future_meets_v2():
    subs = _subs({"a": uuid.UUID(int=1)}, 2, -1)
    subs["f"] = enc_consumer(Subscription(["in"], bytes.fromhex("0000000c0000000c")))
    res = assign_group(subs, Topology.single_topic("in", 2))
    assert all(i.error_code == AssignorError.ASSIGNMENT_ERROR and not i.active_tasks for i in res.infos.values())


def test_threads_share_evenly_and_previous_owner_keeps_its_task():
    tasks = [TaskId(0, p) for p in range(5)]
    load = {}
    out = assign_tasks_to_threads(tasks, True, ["t1", "t2"], {"t2": [TaskId(0, 0)]}, load)
    assert TaskId(0, 0) in out["t2"] and sorted(len(v) for v in out.values()) == [2, 3]
    assert load == {"t1": len(out["t1"]), "t2": len(out["t2"])}


def test_java_priority_queue_layout():
    q = JavaPriorityQueue([TaskId(0, p) for p in (5, 3, 8, 1, 4)])
    assert q.poll() == TaskId(0, 1)
    q.remove(TaskId(0, 4))
    assert [q.poll().partition for _ in range(3)] == [3, 5, 8]


def test_sticky_and_fallback_leaders_keep_owned_tasks():
    topo = Topology.single_topic("in", 6, end_offset_sum=100)
    members = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}
    # a owned every partition (offset sums say running); b is new
    subs = _subs(members, sums={"a": {TaskId(0, p): -2 for p in range(6)}})
    for assignor, a_keeps in (("sticky", 3), ("fallback", 6)):
        res = assign_group(subs, topo, assignor=assignor)
        assert len(res.infos["a"].active_tasks) == a_keeps
        assert sorted(res.infos["a"].active_tasks + res.infos["b"].active_tasks) == [TaskId(0, p) for p in range(6)]
        # the fallback asks for a follow-up rebalance, the sticky assignor never does
        assert (res.followup_rebalance_ms is not None) == (assignor == "fallback")


def test_client_tags_from_subscriptions_place_standbys():
    topo = Topology.single_topic("in", 2, end_offset_sum=100)
    zones = {1: "a", 2: "a", 3: "b"}
    subs = {f"c{n}": enc_consumer(Subscription(["in"], encode_subscription(SubscriptionInfo(
        11, 11, uuid.UUID(int=n), f"h{n}:1", client_tags={"zone": z})))) for n, z in zones.items()}
    cfg = AssignmentConfigs(num_standby_replicas=1, rack_aware_assignment_tags=("zone",))
    res = assign_group(subs, topo, cfg)
    zone_of = {uuid.UUID(int=n): z for n, z in zones.items()}
    for t in (TaskId(0, 0), TaskId(0, 1)):
        (a,) = [p for p, ts in res.tasks.active.items() if t in ts]
        (s,) = [p for p, ts in res.tasks.standby.items() if t in ts]
        assert zone_of[a] != zone_of[s]


def _two_topic_topology(n):
    from kcodec.consumer import TopicPartition
    parts = {TaskId(0, p): [TopicPartition("b", p), TopicPartition("a", p)] for p in range(n)}
    return Topology(parts, set(parts), {t: 100 for t in parts})


def test_cooperative_hand_over_withholds_whole_tasks_and_the_new_owner_asks_at_once():
    """StreamsPartitionAssignor.populateActiveTaskAndPartitionsLists: a task with a partition
    another member still owns is left out whole; the member meant to get it (not the owner)
    sets nextRebalanceTime 0 and keeps it as a standby when its client had its state."""
    topo = _two_topic_topology(4)
    x, y = uuid.UUID(int=1), uuid.UUID(int=2)
    owned = [(tp.topic, tp.partition) for ps in topo.partitions.values() for tp in ps]
    subs = {"x": enc_consumer(Subscription(["a", "b"], encode_subscription(
                SubscriptionInfo(11, 11, x, "hx:1", {t: -2 for t in topo.partitions})), owned_partitions=owned)),
            "y": enc_consumer(Subscription(["a", "b"], encode_subscription(
                SubscriptionInfo(11, 11, y, "hy:1", {TaskId(0, 1): 100}))))}
    res = assign_group(subs, topo)
    meant_for_y = res.tasks.active[y]
    assert meant_for_y, "the scenario must move a task to the new member"
    got = {m: (decode_assignment(d), decode_info(decode_assignment(d).user_data)) for m, d in res.encoded()}
    a_y, info_y = got["y"]
    assert a_y.partitions == [] and info_y.active_tasks == []        # every moved task withheld whole
    assert info_y.next_rebalance_ms == 0                              # the new owner asks at once
    assert TaskId(0, 1) in meant_for_y and TaskId(0, 1) in info_y.standby_tasks   # its prior standby kept
    a_x, info_x = got["x"]
    assert info_x.next_rebalance_ms != 0                              # the owner just revokes
    assert not set(info_x.active_tasks) & set(meant_for_y)
    # partitions in topic/partition order, the active task of each alongside
    keys = [(tp.topic, tp.partition) for tp in a_x.partitions]
    assert keys == sorted(keys) and len(keys) == 2 * len(set(info_x.active_tasks))
    assert all(tp in topo.partitions[t] for tp, t in zip(a_x.partitions, info_x.active_tasks))
    # eager: nothing is withheld
    res = assign_group(subs, topo, cooperative=False)
    assert res.infos["y"].active_tasks and res.infos["y"].next_rebalance_ms != 0


def test_probing_deadline_goes_to_the_leaders_client():
    topo = Topology.single_topic("in", 6, end_offset_sum=1_000_000)
    members = {"a1": uuid.UUID(int=1), "a2": uuid.UUID(int=1), "b1": uuid.UUID(int=2)}
    sums = {"a1": {TaskId(0, p): -2 for p in range(6)}}
    subs = _subs(members, sums=sums)
    for leader, expect in ((None, "a1"), ("b1", "b1"), ("a2", "a1")):
        res = assign_group(subs, topo, now_ms=1000, leader=leader, cooperative=False)
        assert res.followup_rebalance_ms is not None
        got = [m for m, i in res.infos.items() if i.next_rebalance_ms == res.followup_rebalance_ms]
        assert got == [expect]
