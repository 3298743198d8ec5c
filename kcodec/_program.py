"""Compile a (message spec, version) into the flat program the engines execute.

The same program drives the C interpreter (``csrc/kc_engine.c``) and the pure-Python
reference (``kcodec/_codec_py.py``).  Its layout is documented in ``csrc/kc_engine.h``;
in short, an ``int32`` array::

    [MAGIC, n_structs, off_0, ..., off_{n-1}, struct_0 ..., struct_1 ..., ...]
    struct: [flags, n_fields, n_tagged, n_bad_tags,
             n_fields x (type, flags, arg),
             n_tagged x (tag, type, flags, arg),
             n_bad_tags x tag]

Struct 0 is the message itself.  Each struct is compiled once per program: the version
is the same for the whole message, so a struct name maps to one layout.

Programs are cached per (message name, version).  Versions above the newest known one
compile with the layout of the open-ended (``N+``) fields, as Kafka's generated code does.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ._spec import FieldSpec, MessageSpec, StructSpec, spec as _get_spec
from .errors import SchemaError

__all__ = ["Program", "StructPlan", "FieldPlan", "compile_program", "program"]

MAGIC = 0x4B430001

# Field types (keep in sync with csrc/kc_engine.h)
T_BOOL, T_INT8, T_INT16, T_UINT16, T_INT32, T_UINT32, T_INT64, T_FLOAT64, T_UUID = range(1, 10)
T_STRING, T_BYTES, T_RECORDS, T_STRUCT, T_ARRAY = range(10, 15)

F_NULLABLE = 1   # null allowed in this version
F_COMPACT = 2    # flexible (uvarint length+1) encoding of lengths
F_TAGGED = 4     # lives in the tagged-field section

TYPE_CODES = {
    "bool": T_BOOL, "int8": T_INT8, "int16": T_INT16, "uint16": T_UINT16, "int32": T_INT32,
    "uint32": T_UINT32, "int64": T_INT64, "float64": T_FLOAT64, "uuid": T_UUID,
    "string": T_STRING, "bytes": T_BYTES, "records": T_RECORDS,
}
TYPE_NAMES = {v: k for k, v in TYPE_CODES.items()}
TYPE_NAMES[T_STRUCT] = "struct"
TYPE_NAMES[T_ARRAY] = "array"

INT_RANGES = {
    T_INT8: (-(1 << 7), (1 << 7) - 1),
    T_INT16: (-(1 << 15), (1 << 15) - 1),
    T_UINT16: (0, (1 << 16) - 1),
    T_INT32: (-(1 << 31), (1 << 31) - 1),
    T_UINT32: (0, (1 << 32) - 1),
    T_INT64: (-(1 << 63), (1 << 63) - 1),
}
FIXED_SIZES = {T_BOOL: 1, T_INT8: 1, T_INT16: 2, T_UINT16: 2, T_INT32: 4, T_UINT32: 4,
               T_INT64: 8, T_FLOAT64: 8, T_UUID: 16}


@dataclass
class FieldPlan:
    """One field of a struct at one version."""
    name: str                 # Python/JSON key (lower-camel, as Kafka's JSON)
    type: int                 # T_*
    flags: int                # F_*
    arg: int                  # struct index, or elem type | struct index << 8 for arrays
    tag: int = -1
    elem_type: int = 0        # arrays: element type
    struct: int = -1          # struct index for T_STRUCT or arrays of structs
    default: Any = None
    ignorable: bool = False
    spec: Optional[FieldSpec] = None

    @property
    def nullable(self) -> bool:
        return bool(self.flags & F_NULLABLE)

    @property
    def compact(self) -> bool:
        return bool(self.flags & F_COMPACT)

    @property
    def tagged(self) -> bool:
        return bool(self.flags & F_TAGGED)


@dataclass
class StructPlan:
    name: str
    flexible: bool
    fields: List[FieldPlan]                 # regular fields, wire order
    tagged: List[FieldPlan]                 # tagged fields of this version, ascending tag
    bad_tags: List[int]                     # tags defined, but not tagged in this version
    absent: List[FieldSpec] = field(default_factory=list)   # fields not in this version
    keys: Tuple[str, ...] = ()              # names of all fields of this version, schema order
    tag_index: Dict[int, int] = field(default_factory=dict)
    ordered: Tuple[FieldPlan, ...] = ()     # the plans of ``keys``, same order (JSON writers)

    def reserved_tag(self, tag: int) -> Optional[str]:
        """Why ``tag`` cannot be written as an unknown tagged field here, or None.

        Kafka's writer refuses a raw tag equal to a tag the version defines ("Attempted to
        use tag N as an undefined tag"); a tag the struct defines only in other versions
        would make the message undecodable at this one."""
        if tag in self.tag_index:
            return f"Attempted to use tag {tag} as an undefined tag: it is {self.tagged[self.tag_index[tag]].name}"
        if tag in self.bad_tags:
            return f"tag {tag} is defined by {self.name} but is not valid for this version"
        return None

    def default_value(self) -> Dict[str, Any]:
        d = {f.name: _copy_default(f.default) for f in self.fields}
        for f in self.tagged:
            d[f.name] = _copy_default(f.default)
        return d


def is_default_value(d: Any, v: Any) -> bool:
    """Whether ``v`` equals the default ``d`` as Kafka compares them (a tagged field at its
    default is not written): no bool/int mixing, bytes-likes as bytes, an empty tuple as an
    empty list.  Both engines ask here."""
    if type(v) is not type(d):
        if isinstance(d, bool) or isinstance(v, bool):
            return False
        if not (isinstance(d, (int, float)) and isinstance(v, (int, float))):
            if isinstance(d, bytes) and isinstance(v, (bytearray, memoryview)):
                return bytes(v) == d
            if isinstance(d, list) and isinstance(v, tuple):
                return len(v) == 0 and len(d) == 0
            return False
    return bool(v == d)


def _copy_default(v: Any) -> Any:
    if isinstance(v, list):
        return []
    if isinstance(v, dict):
        return {k: _copy_default(x) for k, x in v.items()}
    return v


@dataclass
class Program:
    """A compiled (message, version): the int32 code and the Python-side plans."""
    message: MessageSpec
    version: int
    newer_than_known: bool
    code: array
    structs: List[StructPlan]

    @property
    def name(self) -> str:
        return self.message.name

    @property
    def top(self) -> StructPlan:
        return self.structs[0]


class _Compiler:
    def __init__(self, msg: MessageSpec, version: int) -> None:
        self.msg = msg
        self.version = version
        self.flexible = version in msg.flexible_versions
        self.index: Dict[str, int] = {}
        self.structs: List[Optional[StructPlan]] = []

    def struct_index(self, st: StructSpec) -> int:
        idx = self.index.get(st.name)
        if idx is None:
            idx = len(self.structs)
            self.index[st.name] = idx
            self.structs.append(None)       # reserve: structs may nest
            self.structs[idx] = self.compile_struct(st)
        return idx

    def field_plan(self, f: FieldSpec, tagged: bool) -> FieldPlan:
        v = self.version
        flags = 0
        if f.nullable_in(v):
            flags |= F_NULLABLE
        flexible = self.flexible
        if f.flexible_override is not None:
            flexible = v in f.flexible_override
        if flexible:
            flags |= F_COMPACT
        if tagged:
            flags |= F_TAGGED
        et = f.element_type
        sidx = -1
        if f.is_struct:
            if f.struct is None:
                raise SchemaError(f"{self.msg.name}.{f.name}: unresolved struct {et}")
            sidx = self.struct_index(f.struct)
            etype = T_STRUCT
        else:
            etype = TYPE_CODES[et]
        if f.is_array:
            typ, arg = T_ARRAY, etype | (max(sidx, 0) << 8)
        elif etype == T_STRUCT:
            typ, arg = T_STRUCT, sidx
        else:
            typ, arg = etype, 0
        if f.nullable_in(v) and typ in FIXED_SIZES:
            raise SchemaError(f"{self.msg.name}.{f.name}: type {f.type} cannot be nullable")
        return FieldPlan(
            name=f.json_name, type=typ, flags=flags, arg=arg, tag=f.tag if tagged else -1,
            elem_type=etype if typ == T_ARRAY else 0, struct=sidx,
            default=f.default_value(v), ignorable=f.ignorable, spec=f,
        )

    def compile_struct(self, st: StructSpec) -> StructPlan:
        v = self.version
        regular: List[FieldPlan] = []
        tagged: List[FieldPlan] = []
        bad: List[int] = []
        absent: List[FieldSpec] = []
        for f in st.fields:
            if f.tagged_in(v) and self.flexible:
                tagged.append(self.field_plan(f, True))
            elif f.present_in(v) and (f.tagged_versions.empty or v not in f.tagged_versions):
                regular.append(self.field_plan(f, False))
                if f.tag is not None:
                    bad.append(f.tag)
            else:
                absent.append(f)
                if f.tag is not None:
                    bad.append(f.tag)
        by_name = {p.name: p for p in regular + tagged}
        ordered = tuple(by_name[f.json_name] for f in st.fields if f.json_name in by_name)
        tagged.sort(key=lambda p: p.tag)
        return StructPlan(
            name=st.name, flexible=self.flexible, fields=regular, tagged=tagged,
            bad_tags=sorted(set(bad)), absent=absent, keys=tuple(p.name for p in ordered),
            tag_index={p.tag: i for i, p in enumerate(tagged)}, ordered=ordered,
        )

    def run(self) -> Tuple[array, List[StructPlan]]:
        self.struct_index(self.msg.struct)
        plans: List[StructPlan] = [s for s in self.structs if s is not None]
        code = array("i", [MAGIC - (1 << 32) if MAGIC >= (1 << 31) else MAGIC, len(plans)])
        offsets_at = len(code)
        code.extend([0] * len(plans))
        for i, sp in enumerate(plans):
            code[offsets_at + i] = len(code)
            code.extend([1 if sp.flexible else 0, len(sp.fields), len(sp.tagged), len(sp.bad_tags)])
            for p in sp.fields:
                code.extend([p.type, p.flags, p.arg])
            for p in sp.tagged:
                code.extend([p.tag, p.type, p.flags, p.arg])
            code.extend(sp.bad_tags)
        return code, plans


_CACHE: Dict[Tuple[str, int], Program] = {}


def compile_program(msg: MessageSpec, version: int) -> Program:
    code, plans = _Compiler(msg, version).run()
    return Program(msg, version, version > msg.valid_versions.highest, code, plans)


def program(name: str, version: int) -> Program:
    """The cached program of message ``name`` at ``version`` (no range check here)."""
    key = (name, version)
    p = _CACHE.get(key)
    if p is None:
        p = compile_program(_get_spec(name), version)
        _CACHE[key] = p
    return p
