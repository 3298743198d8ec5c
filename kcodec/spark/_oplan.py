"""The plan of :func:`kcodec.spark._kernels.decode_offsets`' one C call per batch
(csrc/kc_ocols.c through kcodec.spark._ocols), built once per (selected record types,
fields, Spark types or Kafka's).

It holds, as int32 words for C: the union trees (one for every key type's fields, one per
value schema holding all of its versions' fields, one per consumer-protocol body), each
program's field map into its tree (the engine's own programs: nothing here decodes), and
the export program that lays the trees' columns and the driver's own out as the result
type, projected to ``fields``.  Nodes no result field needs are decoded and checked but
not kept.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import pyarrow as pa

import kcodec
from kcodec._columns import N_LIST, N_STRUCT, UNKNOWN_TAGS_KEY, Node, layout
from kcodec._program import T_STRUCT, T_UINT16, T_UINT32, T_UUID

# keep in sync with csrc/kc_ocols.h
OP_TREE, OP_STRUCT, OP_COL = 1, 2, 3
CONV = {T_UINT16: 1, T_UINT32: 2, T_UUID: 3}
(C_RECORD_TYPE, C_VALUE_VERSION, C_TOMBSTONE, C_FALSE, C_RAW_VALUE, C_NULL_STRING, C_MEMBERS,
 C_SUB_VERSION, C_ASG_VERSION, C_EMPTY_BINARY, C_NULL_STRING_M) = range(1, 12)
_DRIVER = {"record_type": C_RECORD_TYPE, "value_version": C_VALUE_VERSION, "tombstone": C_TOMBSTONE,
           "unknown": C_FALSE, "newer_than_known": C_FALSE, "raw_value": C_RAW_VALUE,
           "_error": C_NULL_STRING}
PROTOCOL_VERSIONS = 4           # consumer protocol v0..v3 in the bulk path


class Unfit(Exception):
    """The programs' fields do not share columns (the plan cannot be built)."""


class _Tree:
    """A union tree: nodes in pre-order (kind, type, name, kids, default)."""

    def __init__(self) -> None:
        self.nodes: List[Node] = []

    def add(self, src: Node, name: str) -> int:
        self.nodes.append(Node(src.kind, src.type, name, True, (), src.default))
        return len(self.nodes) - 1

    def union(self, srcs: List[Tuple[List[Node], int]], name: str,
              rename: Optional[Callable[[str], str]] = None) -> int:
        """The node of ``name`` holding the values of every source node ``(layout, i)``
        (newest first: its field order, then fields only older ones have, as
        :func:`kcodec.spark._types.union_type` orders them)."""
        first = srcs[0][0][srcs[0][1]]
        for lay, i in srcs:
            if (lay[i].kind, lay[i].type) != (first.kind, first.type):
                raise Unfit(f"{name}: types differ")
        idx = self.add(first, name)
        kids: List[int] = []
        if first.kind == N_STRUCT:
            order: List[str] = []
            by: Dict[str, List[Tuple[List[Node], int]]] = {}
            for lay, i in srcs:
                for k in lay[i].kids:
                    nm = rename(lay[k].name) if rename else lay[k].name
                    if nm not in by:
                        by[nm] = []
                        order.append(nm)
                    by[nm].append((lay, k))
            kids = [self.union(by[nm], nm) for nm in order]
        elif first.kind == N_LIST:
            kids = [self.union([(lay, lay[i].kids[0]) for lay, i in srcs], "item")]
        self.nodes[idx] = self.nodes[idx]._replace(kids=tuple(kids))
        return idx

    def kid(self, u: int, name: str) -> int:
        for k in self.nodes[u].kids:
            if self.nodes[k].name == name:
                return k
        raise Unfit(f"no field {name!r} under {self.nodes[u].name!r}")

    def spec(self) -> List[int]:
        out: List[int] = []
        for n in self.nodes:
            out += [n.kind, n.type, 0, len(n.kids), *n.kids]
        return out

    def field_map(self, lay: List[Node], rename: Optional[Callable[[str], str]] = None,
                  skip: frozenset = frozenset()) -> List[int]:
        """The program's field map (csrc/kc_columns.h) into this tree; kids in ``skip``
        (nodes that keep nothing) are left out of the missing lists."""
        words = [-1] * len(self.nodes)

        def walk(u: int, i: int, top: bool) -> None:
            U, P = self.nodes[u], lay[i]
            if P.kind == N_STRUCT:
                slot = {self.nodes[k].name: s for s, k in enumerate(U.kids)}
                slots = [slot[rename(lay[k].name) if top and rename else lay[k].name] for k in P.kids]
                used = set(slots)
                missing = [-1 - s if self.nodes[k].name == UNKNOWN_TAGS_KEY and self.nodes[k].kind == N_LIST else s
                               for s, k in enumerate(U.kids) if s not in used and k not in skip]
                words[u] = len(words)
                words.extend([len(missing)] + missing + slots)
                for k, s in zip(P.kids, slots):
                    walk(U.kids[s], k, False)
            elif P.kind == N_LIST:
                walk(U.kids[0], P.kids[0], False)

        walk(0, 0, True)
        return words


def _program(name: str, v: int) -> Optional[Any]:
    try:
        return kcodec.program(name, v)
    except Exception:           # a version the spec lacks: the exact path says why
        return None


class Plan:
    """What :class:`kcodec.spark._ocols.OffsetsKernel` takes (see its __init__)."""

    def __init__(self, typ: pa.StructType, spark: bool, members: bool, full_names: frozenset,
                 result_name: Callable[[str], str]) -> None:
        from kcodec.offsets import record_types
        types = record_types()
        self.trees: List[_Tree] = []
        self.export: List[int] = []
        self.spark = spark
        n_types = max(types) + 1
        keyed = [(rt, info) for rt, info in sorted(types.items()) if rt != 0]
        # tree 0: every key type's fields, group/topic/partition at the top as the result names them
        kt = _Tree()
        klays = [(layout(kcodec.program(info.key, 0)), 0) for _, info in keyed]
        root = Node(N_STRUCT, T_STRUCT, "key", True, (), (False, 0, None))
        kt.nodes.append(root)
        order: List[str] = []
        by: Dict[str, List[Tuple[List[Node], int]]] = {}
        for lay, _ in klays:
            for k in lay[0].kids:
                nm = result_name(lay[k].name)
                if nm not in by:
                    by[nm] = []
                    order.append(nm)
                by[nm].append((lay, k))
        kt.nodes[0] = root._replace(kids=tuple(kt.union(by[nm], nm) for nm in order))
        self.trees.append(kt)
        self.keys: List[Any] = [None] * n_types
        for (rt, info), (lay, _) in zip(keyed, klays):
            self.keys[rt] = (kcodec.program(info.key, 0).code, lay, result_name, 0)
        # a tree per value schema, of all its versions
        self.n_versions = max(info.value_max for _, info in keyed) + 1
        self.values: List[Any] = [None] * (n_types * self.n_versions)
        self.value_tree = [0] * n_types
        self.raw = [0] * n_types
        by_schema: Dict[str, int] = {}
        for rt, info in sorted(types.items()):      # type 0's tree stays null: its rows take the exact path
            if info.value not in by_schema:
                progs = [(v, _program(info.value, v)) for v in range(info.value_max, -1, -1)]
                progs = [(v, p) for v, p in progs if p is not None]
                vt = _Tree()
                vt.union([(layout(p), 0) for _, p in progs], info.value)
                by_schema[info.value] = len(self.trees)
                self.trees.append(vt)
            t = by_schema[info.value]
            vt = self.trees[t]
            self.value_tree[rt] = t
            if rt == 0:
                continue
            self.raw[rt] = int(info.value not in full_names)
            for v in range(info.value_max + 1):
                p = _program(info.value, v)
                if p is not None:
                    self.values[rt * self.n_versions + v] = (p.code, layout(p), None, t)
        self.by_schema = by_schema
        # the members' embedded consumer protocol: a body tree each for subscriptions, assignments
        self.members: Optional[Tuple[int, ...]] = None
        self.protocol: List[Any] = []
        self.need: List[set] = [set() for _ in self.trees]
        if members:
            gm = next(rt for rt, info in keyed if info.value == "GroupMetadataValue")
            t = by_schema["GroupMetadataValue"]
            vt = self.trees[t]
            ml = vt.kid(0, "members")
            item = vt.nodes[ml].kids[0]
            self.members = (gm, vt.kid(0, "protocolType"), ml, vt.kid(item, "subscription"),
                            vt.kid(item, "assignment"))
            self.need[t] |= set(self.members[1:]) | {item}
            bodies = []
            for schema in ("ConsumerProtocolSubscription", "ConsumerProtocolAssignment"):
                progs = [kcodec.program(schema, v) for v in range(PROTOCOL_VERSIONS - 1, -1, -1)]
                bt = _Tree()
                bt.union([(layout(p), 0) for p in progs], schema)
                bodies.append((len(self.trees), bt, progs[::-1]))
                self.trees.append(bt)
                self.need.append(set())
            for v in range(PROTOCOL_VERSIONS):
                self.protocol.append(tuple((progs[v].code, layout(progs[v]), None, t)
                                           for t, bt, progs in bodies))
            self.sub_tree, self.asg_tree = bodies[0][0], bodies[1][0]
        self._export_result(typ)

    # ------------------------------------------------------------------ export

    def _entry(self, op: int, a: int, b: int, c: int, n_children: int) -> None:
        self.export += [op, a, b, c, n_children]

    def _tree_entry(self, t: int, u: int, atype: pa.DataType) -> None:
        tree = self.trees[t]
        node = tree.nodes[u]
        self.need[t].add(u)
        if node.kind == N_STRUCT:
            fields = list(atype)
            self._entry(OP_TREE, t, u, 0, len(fields))
            for f in fields:
                self._tree_entry(t, tree.kid(u, f.name), f.type)
        elif node.kind == N_LIST:
            self._entry(OP_TREE, t, u, 0, 1)
            self._tree_entry(t, node.kids[0], atype.value_type)
        else:
            self._entry(OP_TREE, t, u, CONV.get(node.type, 0) if self.spark else 0, 0)

    def _embedded(self, atype: pa.StructType, body_tree: int, version: int) -> None:
        fields = list(atype)
        self._entry(OP_STRUCT, 1, -1, 0, len(fields))
        for f in fields:
            if f.name in ("version", "parsed_version"):
                self._entry(OP_COL, version, 0, 0, 0)
            elif f.name == "value":
                self._tree_entry(body_tree, 0, f.type)
            elif f.name == "trailing":
                self._entry(OP_COL, C_EMPTY_BINARY, 0, 0, 0)
            elif f.name == "error":
                self._entry(OP_COL, C_NULL_STRING_M, 0, 0, 0)
            else:
                raise Unfit(f"embedded field {f.name!r}")

    def _export_result(self, typ: pa.StructType) -> None:
        fields = list(typ)
        self._entry(OP_STRUCT, 0, -1, 0, len(fields))
        kt = self.trees[0]
        for f in fields:
            if f.name in _DRIVER:
                self._entry(OP_COL, _DRIVER[f.name], 0, 0, 0)
            elif f.name in ("group", "topic", "partition"):
                self._tree_entry(0, kt.kid(0, f.name), f.type)
            elif f.name == "key":
                self._entry(OP_STRUCT, 0, 0, 0, f.type.num_fields)
                for g in f.type:
                    self._tree_entry(0, kt.kid(0, g.name), g.type)
            elif f.name in self.by_schema:
                self._tree_entry(self.by_schema[f.name], 0, f.type)
            elif f.name == "members":
                if self.members is None:
                    raise Unfit("members without a plan for them")
                item = f.type.value_type
                self._entry(OP_COL, C_MEMBERS, 0, 0, 1)
                self._entry(OP_STRUCT, 1, -1, 0, item.num_fields)
                for g in item:
                    if g.name == "subscription":
                        self._embedded(g.type, self.sub_tree, C_SUB_VERSION)
                    elif g.name == "assignment":
                        self._embedded(g.type, self.asg_tree, C_ASG_VERSION)
                    else:
                        raise Unfit(f"members field {g.name!r}")
            else:
                raise Unfit(f"result field {f.name!r}")

    def tree_args(self) -> List[Tuple[List[int], List[Any], frozenset]]:
        """Per tree: its node words, defaults and the nodes not kept (no result field under them)."""
        out = []
        for t, tree in enumerate(self.trees):
            need = set(self.need[t]) | {0}
            parent = {k: u for u, n in enumerate(tree.nodes) for k in n.kids}
            for u in list(need):
                while u in parent and parent[u] not in need:
                    u = parent[u]
                    need.add(u)
            skip = frozenset(u for u in range(len(tree.nodes)) if u not in need)
            out.append((tree.spec(), [n.default for n in tree.nodes], skip))
        return out

    def kernel(self, typ: pa.StructType, flat: bool = True) -> Any:
        """The plan's :class:`kcodec.spark._ocols.OffsetsKernel` (``flat=False``: every
        program through the generic column decoder, as a reference for the flat one)."""
        from ._ocols import OffsetsKernel
        trees = self.tree_args()

        def mapped(e: Any) -> Any:
            if e is None:
                return None
            code, lay, rename, t = e
            return code, self.trees[t].field_map(lay, rename, trees[t][2]), t
        return OffsetsKernel(trees, [mapped(e) for e in self.keys], [mapped(e) for e in self.values],
                             self.n_versions, self.value_tree, self.raw, self.members,
                             [None if e is None else tuple(mapped(x) for x in e) for e in self.protocol],
                             PROTOCOL_VERSIONS, self.export, typ, flat)
