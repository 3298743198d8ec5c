"""Inputs for StreamsUserDataVectors.java: SubscriptionInfo/AssignmentInfo constructor
inputs for versions 1-11 (few and many tasks/topics, colliding hashes, resized tables,
treeified bins) and raw java.util.HashMap fills.  Writes JSON lines to stdout.

    python bench/java/gen_streams_cases.py > /tmp/cases.jsonl
    java -cp "/tmp/jcls:/work/kafka-jars/*" StreamsUserDataVectors < /tmp/cases.jsonl > /tmp/out.jsonl
    python bench/java/gen_streams_cases.py --merge /tmp/cases.jsonl /tmp/out.jsonl  # -> tests/data/java
"""
import gzip
import hashlib
import json
import random
import sys
import uuid

rnd = random.Random(22)
cases = []


def add(kind, **kw):
    kw["id"] = f"{kind}-{len(cases)}"
    kw["kind"] = kind
    cases.append(kw)


def colliding_tasks(h, n):
    # TaskId hash = 961 + 31*sub + part (unnamed): equal for (s, h - 31*s)
    return [[s, h - 31 * s, None] for s in range(n) if h - 31 * s >= 0]


def task_sets():
    yield []
    yield [[0, 0, None]]
    yield [[s, p, None] for s in range(3) for p in range(4)]
    yield [[s, p, None] for s in range(2) for p in range(7)]            # 14 tasks: one resize
    yield [[rnd.randrange(50), rnd.randrange(300), None] for _ in range(400)]
    yield [[s, p, None] for s in range(30) for p in range(40)]          # 1200 tasks
    # many tasks sharing one hash: treeified bins (table >= 64) and resizes forced by bins
    yield colliding_tasks(300, 12)
    yield [[s, p, None] for s in range(5) for p in range(20)] + colliding_tasks(700, 20)
    yield colliding_tasks(500, 17) + [[s, p, None] for s in range(8) for p in range(9)] \
        + colliding_tasks(900, 25)
    # subtopologies sharing a HashMap bin (0, 16, 32, ...) and many subtopologies
    yield [[16 * k, p, None] for k in range(10) for p in range(3)]
    yield [[64 * k, p, None] for k in range(12) for p in range(2)] + [[s, 0, None] for s in range(1, 60)]
    yield [[rnd.randrange(2000), rnd.randrange(8), None] for _ in range(300)]


def dedupe(ts):
    seen, out = set(), []
    for t in ts:
        k = tuple(t[:3])
        if k not in seen:
            seen.add(k)
            out.append(t)
    return out


for v in range(1, 12):
    for ts in task_sets():
        ts = dedupe(ts)
        rnd.shuffle(ts)
        if v >= 10 and ts and rnd.random() < 0.5:
            ts = [[a, b, rnd.choice(["", "topo-a", "Aa", "BB"]) or None] for a, b, _ in ts]
            ts = dedupe(ts)
        tasks = []
        for t in ts:
            if v < 7:
                off = rnd.choice([-2, -2, -3, 5])
            else:
                off = rnd.choice([-2, 0, 17, 1 << 40])
            tasks.append(t + [off])
        add("sub", version=v, latest=11, process_id=str(uuid.UUID(int=rnd.getrandbits(128))),
            endpoint=rnd.choice([None, "localhost:8080", "h\u00e9te:1"]), tasks=tasks,
            unique=rnd.randrange(128) if v >= 8 else 0, error=rnd.choice([0, 1]) if v >= 9 else 0,
            tags=[["zone", "eu-1"], ["az", "b"]] if v >= 11 else [])


def topic_names(n, style):
    if style == "plain":
        return [f"topic-{i}" for i in range(n)]
    if style == "collide":          # "Aa" and "BB" hash alike: whole families of equal hashes
        import itertools
        return ["".join(p) + "-t" for p in itertools.islice(itertools.product(["Aa", "BB"], repeat=6), n)]
    return ["".join(rnd.choice("abcxyz-_.\u00e9") for _ in range(rnd.randrange(1, 12))) + str(i) for i in range(n)]


def host_maps(topics, nhosts, per_host):
    hosts, standby = [], []
    for h in range(nhosts):
        tps = [[rnd.choice(topics), rnd.randrange(64)] for _ in range(per_host)]
        tps = [list(x) for x in dict.fromkeys(map(tuple, tps))]
        hosts.append([f"host-{h}", 9000 + h, tps])
        stps = [[rnd.choice(topics + ["only-standby-" + str(h)]), rnd.randrange(64)] for _ in range(per_host // 2)]
        stps = [list(x) for x in dict.fromkeys(map(tuple, stps))]
        standby.append([f"host-{h}", 9000 + h, stps])
    return hosts, standby


for v in range(1, 12):
    for n_topics, style, nhosts, per_host in ((0, "plain", 0, 0), (1, "plain", 1, 3), (5, "plain", 3, 10),
                                              (40, "random", 6, 80), (64, "collide", 4, 150),
                                              (300, "random", 8, 120), (20, "collide", 3, 40)):
        topics = topic_names(n_topics, style) or ["t"]
        hosts, standby = host_maps(topics, nhosts, per_host)
        active = [[rnd.randrange(5), rnd.randrange(20), None] for _ in range(rnd.randrange(30))]
        st = dedupe([[rnd.randrange(5), rnd.randrange(20), None] for _ in range(rnd.randrange(10))])
        if v >= 10:
            active = [[a, b, rnd.choice([None, "topo"])] for a, b, _ in active]
        sb = [[t, [[rnd.choice(topics), rnd.randrange(8)] for _ in range(rnd.randrange(1, 4))]] for t in st]
        for _, tps in sb:
            tps[:] = [list(x) for x in dict.fromkeys(map(tuple, tps))]
        add("asg", version=v, common=rnd.choice([v, 11]), active=active, standby=sb, hosts=hosts,
            standby_hosts=standby, error=rnd.choice([0, 0, 3]), next=rnd.choice([(1 << 63) - 1, 12345]))

# raw HashMap fills: Integer keys (hash = value) crafted to share bins, and Strings
for op in ("put", "cia"):
    for keys in ([5, 21, 37, 1, 17], list(range(0, 16 * 20, 16)), list(range(0, 64 * 30, 64)) + list(range(1, 70)),
                 [rnd.randrange(1 << 31) for _ in range(500)],
                 list(range(0, 128 * 12, 128)) + list(range(3, 200, 7)) + list(range(64, 64 * 40, 128)),
                 [k * 1024 for k in range(40)] + [-(k << 16) for k in range(1, 30)]):
        keys = list(dict.fromkeys(keys))
        rnd.shuffle(keys)
        add("map", op=op, strings=False, keys=keys)
    for n in (3, 100, 64):
        keys = topic_names(n, "collide") if n == 64 else topic_names(n, "random")
        add("map", op=op, strings=True, keys=keys)

def _jhash(s):
    h = 0
    b = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xFFFFFFFF
    return h


def tp_ties(c):
    """Whether Kafka's HashSet<TopicPartition> gets a treeified bin of equal hashes: TopicPartition
    is not Comparable, so Java orders such keys by identity hash codes, which differ from run to
    run; the topic numbering is then not reproducible (Kafka's own bytes vary)."""
    from collections import Counter
    maps = [c["hosts"]] + ([c["standby_hosts"]] if c["version"] >= 6 else [])
    tps = {(t, p) for m in maps for _, _, ps in m for t, p in ps}
    n = Counter((31 * (31 + p) + _jhash(t)) & 0xFFFFFFFF for t, p in tps)
    return bool(n) and max(n.values()) > 8


if len(sys.argv) > 1 and sys.argv[1] == "--merge":
    ins = [json.loads(l) for l in open(sys.argv[2])]
    outs = {o["id"]: o for o in map(json.loads, open(sys.argv[3]))}
    with gzip.open("tests/data/java/streams_userdata.jsonl.gz", "wt", encoding="utf-8") as f:
        for c in ins:
            o = outs[c["id"]]
            e = {k: v for k, v in o.items() if k != "id"}
            if c["kind"] == "asg" and c["version"] >= 5 and tp_ties(c):
                c["tp_ties"] = True
            elif len(e.get("hex", "")) > 4096:     # large outputs: their length and digest
                raw = bytes.fromhex(e.pop("hex"))
                e.update(len=len(raw), sha256=hashlib.sha256(raw).hexdigest())
            c["expected"] = e
            f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")
else:
    for c in cases:
        print(json.dumps(c, ensure_ascii=False))
