"""What kcodec emulates of Java: string order, ``String.hashCode`` and ``HashMap``
iteration order.  Kafka's assignors (consumer, and Kafka Streams') iterate Java
collections, so every domain that must reproduce their choices byte for byte takes these
from here::

    >>> from kcodec._java import java_string_key, java_hashmap_order
    >>> sorted(["\\uff5e", "\\U0001f600"], key=java_string_key)   # UTF-16 order, not code points
    ['😀', '～']
    >>> java_hashmap_order(["b", "a", "c"]).tolist()
    [1, 0, 2]
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import _ext

# the compiled HashMap model and String.hashCode (csrc/kc_javahash.c); None: the Python twin
_jh = _ext.load("kcodec._javahash")

__all__ = ["java_string_key", "java_string_hash", "string_hashes", "java_hashmap_capacity", "java_hashmap_order",
           "int32", "java_long_hash", "java_uuid_hash", "java_objects_hash", "task_id_hash",
           "topic_partition_hash", "topic_partition_hashes", "topic_partition_columns", "distinct_first",
           "task_set_order",
           "spread", "table_size_for", "copy_capacity", "JavaHashMap",
           "hash_order", "hash_order_py", "timeline_hash_order"]


def java_string_key(s: str) -> bytes:
    """Sort key giving Java's ``String.compareTo`` order (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as a signed int32."""
    if _jh is not None:
        return _jh.string_hash(s)
    b = java_string_key(s)
    h = 0
    for i in range(0, len(b), 2):
        h = (31 * h + (b[i] << 8 | b[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >> 31 else h


def string_hashes(strings: Sequence[str]) -> np.ndarray:
    """:func:`java_string_hash` of each string, as an int32 array."""
    if _jh is not None:
        return _jh.string_hashes(strings)
    return np.array([java_string_hash(s) for s in strings], dtype=np.int64).astype(np.int32)


def java_hashmap_capacity(n: int) -> int:
    """The table size of a ``java.util.HashMap`` (default capacity 16, load factor 0.75)
    after ``n`` insertions."""
    cap = 16
    while n > cap * 3 // 4:
        cap *= 2
    return cap


def java_hashmap_order(keys: Sequence[str]) -> np.ndarray:
    """Indexes of ``keys`` in the order a ``java.util.HashMap`` built by inserting them (in
    the given order, default capacity and load factor) iterates them: by bucket
    (``(h ^ h >>> 16) & (capacity - 1)``), then insertion order."""
    n = len(keys)
    enc = [java_string_key(k) for k in keys]
    units = np.frombuffer(b"".join(enc), dtype=">u2").astype(np.uint32)
    lens = np.fromiter((len(b) >> 1 for b in enc), np.int64, n)
    ends = np.cumsum(lens)
    # hashCode = sum of unit[i] * 31**(L-1-i), mod 2**32 (uint32 arithmetic wraps)
    powers = np.ones(int(lens.max()) if n else 1, np.uint32)
    for i in range(1, len(powers)):
        powers[i] = np.uint32((int(powers[i - 1]) * 31) & 0xFFFFFFFF)
    terms = units * powers[np.repeat(ends, lens) - 1 - np.arange(len(units))]
    h = np.zeros(n, np.uint32)
    nonempty = lens > 0
    if len(units):
        h[nonempty] = np.add.reduceat(terms, (ends - lens)[nonempty], dtype=np.uint32)
    buckets = (h ^ (h >> np.uint32(16))) & np.uint32(java_hashmap_capacity(n) - 1)
    return np.argsort(buckets, kind="stable").astype(np.int32)


# --------------------------------------------------------------------------- hash codes

def int32(x: int) -> int:
    """``x`` wrapped to a Java ``int``."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def java_long_hash(v: int) -> int:
    """``Long.hashCode``: ``(int) (v ^ (v >>> 32))``."""
    v &= 0xFFFFFFFFFFFFFFFF
    return int32(v ^ (v >> 32))


def java_uuid_hash(u: Any) -> int:
    """``java.util.UUID.hashCode`` (and Kafka's ``ProcessId``): ``Long.hashCode(msb ^ lsb)``."""
    i = u.int if hasattr(u, "int") else int(u)
    return java_long_hash((i >> 64) ^ (i & 0xFFFFFFFFFFFFFFFF))


def java_objects_hash(*hashes: int) -> int:
    """``Objects.hash(a, b, ...)`` given each argument's ``hashCode`` (0 for null)."""
    h = 1
    for x in hashes:
        h = 31 * h + x
    return int32(h)


def task_id_hash(subtopology: int, partition: int, topology_name: Optional[str] = None) -> int:
    """Kafka Streams' ``TaskId.hashCode``: ``Objects.hash(subtopology, partition, topologyName)``."""
    return java_objects_hash(subtopology, partition,
                             0 if topology_name is None else java_string_hash(topology_name))


def topic_partition_hash(topic: str, partition: int) -> int:
    """``org.apache.kafka.common.TopicPartition.hashCode``: ``31 * (31 + partition) + topic.hashCode()``."""
    return int32(31 * (31 + partition) + java_string_hash(topic))


def topic_partition_hashes(topic_hashes: Any, partitions: Any) -> np.ndarray:
    """:func:`topic_partition_hash` of many partitions at once (their topics' ``hashCode``s), int32."""
    p = np.asarray(partitions, dtype=np.int64)
    return ((31 * (31 + p) + np.asarray(topic_hashes, dtype=np.int64))
            & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


def topic_partition_columns(groups: Iterable[Iterable[Tuple[str, int]]]) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """The ``(topic, partition)`` pairs of ``groups`` (iterables of ``TopicPartition``) as
    columns: distinct topics in first-seen order, and each pair's topic index and partition
    (int64 arrays).  Raises OverflowError for a partition beyond int64."""
    if _jh is not None:
        return _jh.topic_partition_columns(groups)
    num: Dict[str, int] = {}
    ti: List[int] = []
    pa: List[int] = []
    for g in groups:
        for topic, partition in g:
            ti.append(num.setdefault(topic, len(num)))
            pa.append(partition)
    return list(num), np.array(ti, dtype=np.int64), np.array(pa, dtype=np.int64)


def task_set_order(tasks: List[Any]) -> List[Any]:
    """Kafka Streams ``TaskId``s (distinct) in the order of a ``HashSet<TaskId>`` they were
    added to (``TaskId.hashCode``, ``compareTo`` in treeified bins)."""
    if _jh is not None:
        out = _jh.task_set_order(tasks)
        if out is not None:
            return out
    return [tasks[i] for i in hash_order([task_id_hash(*t) for t in tasks],
                                         [(t[2] is not None, t[2] or "", t[0], t[1]) for t in tasks])]


def distinct_first(keys: np.ndarray) -> np.ndarray:
    """Indexes of the first occurrence of each distinct value of the int64 array ``keys``,
    ascending: the keys a ``HashSet`` keeps when they are added in order."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    if _jh is not None:
        return _jh.distinct(keys)
    first = np.unique(keys, return_index=True)[1]
    first.sort()
    return first.astype(np.int32)


def spread(h: int) -> int:
    """``HashMap.hash``: the hash code with its high half folded in, ``h ^ (h >>> 16)``, as int."""
    u = h & 0xFFFFFFFF
    return int32(u ^ (u >> 16))


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``cap`` (1 for 0)."""
    n = 1
    while n < cap:
        n <<= 1
    return n


def copy_capacity(n: int) -> int:
    """Initial capacity ``new HashSet<>(collection)`` passes to its map (JDK 17)."""
    return max(int(n / 0.75) + 1, 16)


# --------------------------------------------------------------------------- java.util.HashMap

_TREEIFY, _UNTREEIFY, _MIN_TREEIFY_CAP = 8, 6, 64


class _Node:
    __slots__ = ("hash", "key", "ck", "next", "tree", "parent", "left", "right", "prev", "red")

    def __init__(self, h: int, key: Any, ck: Any, nxt: "Optional[_Node]") -> None:
        self.hash, self.key, self.ck, self.next = h, key, ck, nxt
        self.tree = False
        self.parent = self.left = self.right = self.prev = None
        self.red = False


def _rotate(root: _Node, p: _Node, side: str) -> _Node:
    """TreeNode.rotateLeft (side "right": p's right child takes p's place) and, mirrored,
    rotateRight (side "left")."""
    other = "left" if side == "right" else "right"
    c = getattr(p, side)
    if p is not None and c is not None:
        inner = getattr(c, other)
        setattr(p, side, inner)
        if inner is not None:
            inner.parent = p
        pp = c.parent = p.parent
        if pp is None:
            root = c
            c.red = False
        elif getattr(pp, other) is p:
            setattr(pp, other, c)
        else:
            setattr(pp, side, c)
        setattr(c, other, p)
        p.parent = c
    return root


def _rotate_left(root: _Node, p: _Node) -> _Node:
    return _rotate(root, p, "right")


def _rotate_right(root: _Node, p: _Node) -> _Node:
    return _rotate(root, p, "left")


def _balance_insertion(root: _Node, x: _Node) -> _Node:
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        # the two cases mirror each other: ``left`` says on which side of its grandparent
        # the parent hangs
        left = xp is xpp.left
        uncle = xpp.right if left else xpp.left
        if uncle is not None and uncle.red:
            uncle.red = False
            xp.red = False
            xpp.red = True
            x = xpp
        else:
            if x is (xp.right if left else xp.left):
                x = xp
                root = _rotate_left(root, x) if left else _rotate_right(root, x)
                xp = x.parent
                xpp = None if xp is None else xp.parent
            if xp is not None:
                xp.red = False
                if xpp is not None:
                    xpp.red = True
                    root = _rotate_right(root, xpp) if left else _rotate_left(root, xpp)


def _direction(h: int, ck: Any, p: _Node) -> int:
    # TreeNode's order: hash (signed), then compareTo where the key class is Comparable; Java
    # breaks the remaining ties by identity hash codes (not reproducible): we put the newer
    # key first, the outcome of the common case (identityHashCode is mostly increasing)
    if p.hash > h:
        return -1
    if p.hash < h:
        return 1
    if ck is not None and p.ck is not None:
        if ck < p.ck:
            return -1
        if p.ck < ck:
            return 1
    return -1


class JavaHashMap:
    """A model of ``java.util.HashMap`` (JDK 17) that keeps exactly what decides iteration
    order: the table size and its resizes, each bin's linked order, and treeified bins (a
    red-black tree whose root is moved to the front of the bin's ``next`` list, new nodes
    linked right after their tree parent).  Keys are given with their ``hashCode`` and,
    for Comparable key classes, a Python key ordering as ``compareTo`` does.

    ``put`` is ``HashMap.put`` / ``HashSet.add``; ``compute_if_absent`` is
    ``HashMap.computeIfAbsent`` (which resizes lazily and links new keys at the head of
    their bin).  Iterate with :meth:`keys`."""

    def __init__(self, initial_capacity: Optional[int] = None) -> None:
        self.table: Optional[List[Optional[_Node]]] = None
        self.size = 0
        # as Java: an explicit initial capacity is parked in threshold until the first resize
        self.threshold = 0 if initial_capacity is None else table_size_for(initial_capacity)
        self._index: Dict[Any, _Node] = {}

    # --- resize / treeify (HashMap.resize, treeifyBin, TreeNode.split/treeify/untreeify)
    def _resize(self) -> List[Optional[_Node]]:
        old = self.table
        old_cap = 0 if old is None else len(old)
        old_thr = self.threshold
        new_thr = 0
        if old_cap > 0:
            new_cap = old_cap << 1
            if old_cap >= 16:
                new_thr = old_thr << 1
        elif old_thr > 0:
            new_cap = old_thr
        else:
            new_cap, new_thr = 16, 12
        if new_thr == 0:
            new_thr = int(new_cap * 0.75)
        self.threshold = new_thr
        tab: List[Optional[_Node]] = [None] * new_cap
        self.table = tab
        if old is not None:
            for j, e in enumerate(old):
                if e is None:
                    continue
                if e.next is None:
                    tab[e.hash & (new_cap - 1)] = e
                elif e.tree:
                    self._split(tab, e, j, old_cap)
                else:
                    lo: List[_Node] = []
                    hi: List[_Node] = []
                    while e is not None:
                        (hi if e.hash & old_cap else lo).append(e)
                        e = e.next
                    for part, at in ((lo, j), (hi, j + old_cap)):
                        if part:
                            for a, b in zip(part, part[1:]):
                                a.next = b
                            part[-1].next = None
                            tab[at] = part[0]
        return tab

    def _split(self, tab: List[Optional[_Node]], b: _Node, index: int, bit: int) -> None:
        lo: List[_Node] = []
        hi: List[_Node] = []
        e: Optional[_Node] = b
        while e is not None:
            (hi if e.hash & bit else lo).append(e)
            e = e.next
        for part, other, at in ((lo, hi, index), (hi, lo, index + bit)):
            if not part:
                continue
            prev = None
            for n in part:
                n.prev = prev
                if prev is not None:
                    prev.next = n
                prev = n
            part[-1].next = None
            if len(part) <= _UNTREEIFY:
                for n in part:       # untreeify: plain nodes, same order
                    n.tree = False
                    n.parent = n.left = n.right = n.prev = None
                tab[at] = part[0]
            else:
                tab[at] = part[0]
                if other:            # else the tree moved whole and keeps its shape
                    self._treeify(tab, part[0])

    def _treeify(self, tab: List[Optional[_Node]], first: _Node) -> None:
        root: Optional[_Node] = None
        x: Optional[_Node] = first
        while x is not None:
            nxt = x.next
            x.left = x.right = None
            if root is None:
                x.parent = None
                x.red = False
                root = x
            else:
                p = root
                while True:
                    d = _direction(x.hash, x.ck, p)
                    xp = p
                    p = p.left if d <= 0 else p.right
                    if p is None:
                        x.parent = xp
                        if d <= 0:
                            xp.left = x
                        else:
                            xp.right = x
                        root = _balance_insertion(root, x)
                        break
            x = nxt
        self._move_root_to_front(tab, root)

    @staticmethod
    def _move_root_to_front(tab: List[Optional[_Node]], root: Optional[_Node]) -> None:
        if root is None:
            return
        i = root.hash & (len(tab) - 1)
        first = tab[i]
        if root is not first:
            tab[i] = root
            rp, rn = root.prev, root.next
            if rn is not None:
                rn.prev = rp
            if rp is not None:
                rp.next = rn
            if first is not None:
                first.prev = root
            root.next = first
            root.prev = None

    def _treeify_bin(self, tab: List[Optional[_Node]], h: int) -> None:
        n = len(tab)
        if n < _MIN_TREEIFY_CAP:
            self._resize()
            return
        e = tab[(n - 1) & h]
        prev = None
        while e is not None:
            e.tree = True
            e.prev = prev
            e.parent = e.left = e.right = None
            prev = e
            e = e.next
        if tab[(n - 1) & h] is not None:
            self._treeify(tab, tab[(n - 1) & h])

    def _put_tree(self, tab: List[Optional[_Node]], root: _Node, h: int, key: Any, ck: Any) -> _Node:
        p = root
        while True:
            d = _direction(h, ck, p)
            xp = p
            p = p.left if d <= 0 else p.right
            if p is None:
                xpn = xp.next
                x = _Node(h, key, ck, xpn)
                x.tree = True
                if d <= 0:
                    xp.left = x
                else:
                    xp.right = x
                xp.next = x
                x.parent = x.prev = xp
                if xpn is not None:
                    xpn.prev = x
                self._move_root_to_front(tab, _balance_insertion(root, x))
                return x

    # --- the public operations
    def put(self, key: Any, hash_code: int, compare_key: Any = None) -> bool:
        """``HashMap.put`` (``HashSet.add``) of a key absent or present; True when added."""
        if key in self._index:
            return False
        self._index[key] = self._put_new(key, spread(hash_code), compare_key)
        return True

    def _put_new(self, key: Any, h: int, compare_key: Any) -> _Node:
        # putVal of a key known to be absent, ``h`` already spread
        tab = self.table
        if tab is None or not tab:
            tab = self._resize()
        n = len(tab)
        i = (n - 1) & h
        p = tab[i]
        if p is None:
            node = tab[i] = _Node(h, key, compare_key, None)
        elif p.tree:
            node = self._put_tree(tab, p, h, key, compare_key)
        else:
            bin_count = 0
            while p.next is not None:
                p = p.next
                bin_count += 1
            node = p.next = _Node(h, key, compare_key, None)
            if bin_count >= _TREEIFY - 1:
                self._treeify_bin(tab, h)
        self.size += 1
        if self.size > self.threshold:
            self._resize()
        return node

    def compute_if_absent(self, key: Any, hash_code: int, compare_key: Any = None) -> bool:
        """``HashMap.computeIfAbsent`` adding ``key`` when absent; True when added."""
        if key in self._index:
            return False
        h = spread(hash_code)
        tab = self.table
        if self.size > self.threshold or tab is None or not tab:
            tab = self._resize()
        n = len(tab)
        i = (n - 1) & h
        first = tab[i]
        if first is not None and first.tree:
            node = self._put_tree(tab, first, h, key, compare_key)
        else:
            bin_count = 0
            e = first
            while e is not None:
                bin_count += 1
                e = e.next
            node = tab[i] = _Node(h, key, compare_key, first)
            if bin_count >= _TREEIFY - 1:
                self._treeify_bin(tab, h)
        self._index[key] = node
        self.size += 1
        return True

    @property
    def capacity(self) -> int:
        return 0 if self.table is None else len(self.table)

    def keys(self) -> List[Any]:
        """Keys in the map's iteration order (``keySet()``, ``entrySet()``, ``values()``)."""
        out: List[Any] = []
        for e in self.table or ():
            while e is not None:
                out.append(e.key)
                e = e.next
        return out


def _plain_order(spread_hashes: np.ndarray, capacity: int) -> Optional[np.ndarray]:
    """Iteration order of ``put``s into a default ``HashMap`` when no bin ever reached
    treeify size (checked at every table size the map passes through), else None."""
    n = len(spread_hashes)
    cap = max(capacity, 1)
    while True:
        thr = int(cap * 0.75)
        held = min(n, thr + 1)           # the put that crosses the threshold lands first
        if held and np.bincount(spread_hashes[:held] & np.uint32(cap - 1)).max() > _TREEIFY:
            return None
        if n <= thr:
            return np.argsort(spread_hashes & np.uint32(cap - 1), kind="stable")
        cap <<= 1


def _tie_ranks(h: np.ndarray, compare_keys: Any) -> Optional[np.ndarray]:
    """``compare_keys`` as int32 ranks for the compiled model (equal keys, equal ranks;
    ``NO_RANK`` for None).  A TreeNode compares keys only when their hashes are equal, so only
    keys sharing a hash code are ranked (None when no two do)."""
    if compare_keys is None or len(h) < 2:
        return None
    srt = np.argsort(h, kind="stable")
    eq = h[srt][1:] == h[srt][:-1]
    if not eq.any():
        return None
    tied = np.zeros(len(h), dtype=bool)
    tied[1:] = eq
    tied[:-1] |= eq
    idx = srt[tied]
    ranks = np.full(len(h), _jh.NO_RANK, dtype=np.int64)
    if isinstance(compare_keys, np.ndarray):
        ranks[idx] = np.unique(compare_keys[idx], return_inverse=True)[1]
        return ranks
    pairs = [(compare_keys[i], i) for i in idx.tolist() if compare_keys[i] is not None]
    pairs.sort(key=lambda kv: kv[0])
    r = 0
    for j, (k, i) in enumerate(pairs):
        if j and pairs[j - 1][0] < k:
            r += 1
        ranks[i] = r
    return ranks


def hash_order(hash_codes: Sequence[int], compare_keys: Optional[Sequence[Any]] = None, *,
               initial_capacity: Optional[int] = None, compute_if_absent: bool = False,
               array: bool = False) -> Any:
    """Indexes of distinct keys (given by ``hashCode``, in insertion order) in the iteration
    order of the ``java.util.HashMap``/``HashSet`` they were added to.

    ``compare_keys``: Python keys ordering as the key class's ``compareTo`` (None when the
    class is not Comparable; a NumPy array of numbers also serves); used only by treeified
    bins.  ``compute_if_absent``: the keys were added with ``computeIfAbsent`` (new keys at
    the head of their bin, lazy resize).  A list, or with ``array`` an int32 array.  Runs the compiled model (csrc/kc_javahash.c) when
    built, else :func:`hash_order_py`."""
    if _jh is not None and (initial_capacity is None or 0 <= initial_capacity <= 1 << 30):
        h = hash_codes if isinstance(hash_codes, np.ndarray) and hash_codes.dtype == np.int32 \
            else np.asarray(hash_codes, dtype=np.int64).astype(np.int32)
        out = _jh.hash_order(h, _tie_ranks(h, compare_keys), -1 if initial_capacity is None else initial_capacity,
                             compute_if_absent)
        return out if array else out.tolist()
    order = hash_order_py(hash_codes, compare_keys, initial_capacity=initial_capacity,
                          compute_if_absent=compute_if_absent)
    return np.array(order, dtype=np.int32) if array else order


def hash_order_py(hash_codes: Sequence[int], compare_keys: Optional[Sequence[Any]] = None, *,
                  initial_capacity: Optional[int] = None, compute_if_absent: bool = False) -> List[int]:
    """:func:`hash_order` run by the pure-Python model (:class:`JavaHashMap`)."""
    if isinstance(hash_codes, np.ndarray):
        hash_codes = hash_codes.tolist()
    if isinstance(compare_keys, np.ndarray):
        compare_keys = compare_keys.tolist()
    n = len(hash_codes)
    if not compute_if_absent and n and (initial_capacity is None or initial_capacity >= 16):
        h = np.asarray(hash_codes, dtype=np.int64).astype(np.uint32)
        order = _plain_order(h ^ (h >> np.uint32(16)), 16 if initial_capacity is None
                             else table_size_for(initial_capacity))
        if order is not None:
            return order.tolist()
    m = JavaHashMap(initial_capacity)
    if compute_if_absent:
        for i, hc in enumerate(hash_codes):
            m.compute_if_absent(i, hc, None if compare_keys is None else compare_keys[i])
    else:                       # distinct keys: no membership check
        for i, hc in enumerate(hash_codes):
            m._put_new(i, spread(hc), None if compare_keys is None else compare_keys[i])
    return m.keys()


# --------------------------------------------------------------------------- Kafka's timeline tables

def timeline_hash_order(hash_codes: Sequence[int]) -> List[int]:
    """Indexes of distinct keys (by ``hashCode``, in insertion order, none removed) in the
    iteration order of Kafka's ``TimelineHashMap`` / ``TimelineHashSet`` (``BaseHashTable``:
    Fibonacci hashing into a power-of-two table that doubles when ``(size + 1) * 0.75``
    exceeds it, colliding keys kept in arrays in insertion order; iterated slot by slot, a
    slot's keys last first, as its iterator pops them)."""
    def slot(h: int, n: int) -> int:
        log2size = n.bit_length()          # 32 - numberOfLeadingZeros(n)
        return ((h * -7046029254386353131) & 0xFFFFFFFFFFFFFFFF) >> (65 - log2size)

    table: List[List[int]] = [[], []]
    for i, hc in enumerate(hash_codes):
        if (i + 1) * 0.75 > len(table):
            old = table
            table = [[] for _ in range(2 * len(old))]
            for bucket in old:
                for j in bucket:
                    table[slot(int32(hash_codes[j]), len(table))].append(j)
        table[slot(int32(hc), len(table))].append(i)
    return [j for bucket in table for j in reversed(bucket)]
