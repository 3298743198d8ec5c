"""Cluster states x UpdateFeatures requests for FeatureUpdateVectors.java (Kafka 4.1.1's
FeatureControlManager / ConfigurationControlManager.updateFeatures), including the
scenarios of Kafka's FeatureControlManagerTest.  JSON lines on stdout; --merge writes
tests/data/java/kraft_updates.jsonl.gz (inputs + Java's outputs)."""
import gzip
import json
import sys

T = {"UNKNOWN": 0, "UPGRADE": 1, "SAFE_DOWNGRADE": 2, "UNSAFE_DOWNGRADE": 3}
# a 4.1.1 node's default supported ranges (QuorumFeatures.defaultSupportedFeatureMap(false))
DEFAULT = {"metadata.version": [7, 27], "kraft.version": [0, 1], "transaction.version": [0, 2],
           "group.version": [0, 1], "eligible.leader.replicas.version": [0, 1],
           "share.version": [0, 1]}


def state(name, mv, features, kraft=1, brokers=(1, 2, 3), controllers=(3000,), quorum=(3000,),
          node_id=3000, local=None, unstable=False, broker_ranges=None, controller_ranges=None,
          configs=(), static_min_isr=None):
    br = {str(b): dict(DEFAULT, **(broker_ranges or {}).get(b, {})) for b in brokers}
    cr = {str(c): dict(DEFAULT, **(controller_ranges or {}).get(c, {})) for c in controllers}
    return dict(state=name, mv=mv, features=features, kraft=kraft, node_id=node_id,
                quorum=list(quorum), local=local, unstable=unstable, brokers=br, controllers=cr,
                configs=[list(c) for c in configs], static_min_isr=static_min_isr)


STATES = [
    state("4.1-full", 27, {"group.version": 1, "transaction.version": 2,
                           "eligible.leader.replicas.version": 1, "share.version": 1}),
    state("3.9-no-elr", 21, {"transaction.version": 0 or 1, "group.version": 1},
          configs=[("1", "min.insync.replicas", "2"), ("2", "log.retention.ms", "5")]),
    state("4.0-old-broker", 25, {"transaction.version": 2, "group.version": 1},
          broker_ranges={2: {"metadata.version": [7, 21], "group.version": [0, 0]}}),
    state("4.1-elr-off-broker-min-isr", 27, {"group.version": 1},
          configs=[("5", "min.insync.replicas", "3"), ("1", "min.insync.replicas", "2"),
                   ("17", "min.insync.replicas", "2"), ("2", "num.io.threads", "4")],
          static_min_isr="2"),
    state("4.1-cluster-min-isr", 27, {"transaction.version": 1},
          configs=[("", "min.insync.replicas", "2"), ("3", "min.insync.replicas", "1")]),
    state("3.6-no-controller-registration", 14, {}, kraft=0, controllers=(), quorum=(3000, 3001, 3002),
          brokers=(0, 1)),
    state("3.3-minimum", 7, {}, kraft=0, controllers=(), brokers=(1,)),
    state("4.1-weak-controller", 27, {"group.version": 1}, controllers=(3000, 3001),
          quorum=(3000, 3001, 3002),
          controller_ranges={3001: {"transaction.version": [0, 1], "metadata.version": [7, 26]}}),
]

U = lambda f, lvl, t="UPGRADE": [f, lvl, T[t]]
MV = "metadata.version"
ELR = "eligible.leader.replicas.version"
REQUESTS = [
    [U(MV, 27)], [U(MV, 26, "SAFE_DOWNGRADE")], [U(MV, 21, "SAFE_DOWNGRADE")],
    [U(MV, 21, "UNSAFE_DOWNGRADE")], [U(MV, 23, "SAFE_DOWNGRADE")], [U(MV, 28)],
    [U(MV, 6, "SAFE_DOWNGRADE")], [U(MV, 3, "UNSAFE_DOWNGRADE")], [U(MV, 9999)], [U(MV, 21)],
    [U(MV, 27, "SAFE_DOWNGRADE")], [U(MV, 0, "UNSAFE_DOWNGRADE")],
    [U(ELR, 1)], [U(ELR, 0, "SAFE_DOWNGRADE")], [U(ELR, 1), U(MV, 27)],
    [U(MV, 21, "SAFE_DOWNGRADE"), U(ELR, 0, "SAFE_DOWNGRADE")],
    [U("group.version", 0, "SAFE_DOWNGRADE")], [U("group.version", 0)], [U("transaction.version", 2)],
    [U("transaction.version", 3)], [U("share.version", 1)], [U("streams.version", 1)],
    [U("kraft.version", 1)], [U("kraft.version", 0, "SAFE_DOWNGRADE")], [U("foo.bar", 1)],
    [U("foo.bar", 0, "SAFE_DOWNGRADE")], [U("group.version", 1, "UNKNOWN")], [U("group.version", -1)],
    [U("transaction.version", 2), U("group.version", 1)],
    [U(MV, 4, "SAFE_DOWNGRADE"), U("group.version", 1)],
    [U("streams.version", 1), U("group.version", 0, "SAFE_DOWNGRADE")],
    [U(ELR, 1), U("group.version", 1), U("transaction.version", 2), U("streams.version", 1)],
]
VALIDATE_ONLY = [[U(ELR, 1)], [U(MV, 21, "SAFE_DOWNGRADE")]]

cases = []
for s in STATES:
    for req in REQUESTS:
        cases.append(dict(s, id=f"{s['state']}/{len(cases)}", updates=req, validate_only=False))
    for req in VALIDATE_ONLY:
        cases.append(dict(s, id=f"{s['state']}/{len(cases)}", updates=req, validate_only=True))

if len(sys.argv) > 1 and sys.argv[1] == "--merge":
    outs = {o["id"]: o for o in map(json.loads, open(sys.argv[3]))}
    with gzip.open("tests/data/java/kraft_updates.jsonl.gz", "wt", encoding="utf-8") as f:
        for c in map(json.loads, open(sys.argv[2])):
            c["expected"] = {k: v for k, v in outs[c["id"]].items() if k != "id"}
            f.write(json.dumps(c, separators=(",", ":")) + "\n")
else:
    for c in cases:
        print(json.dumps(c))
