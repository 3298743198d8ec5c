"""Kafka JSON message specs: parsing and the registry.

The specs are Kafka's own files (``kcodec/schemas/<jar folder>/<Name>.json``),
shipped unchanged with their license headers.  Kafka's dialect allows ``//``
and ``/* */`` comments, also after a value, so they are stripped (outside
strings) before ``json.loads``.
"""
from __future__ import annotations

import base64
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .errors import SchemaError, UnknownMessageError

__all__ = [
    "Versions",
    "FieldSpec",
    "StructSpec",
    "MessageSpec",
    "SCHEMA_DIR",
    "spec",
    "specs",
    "spec_for_api_key",
    "spec_for_record_type",
    "strip_comments",
]

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")
MAX_VERSION = 32767


@dataclass(frozen=True)
class Versions:
    """An inclusive version range; ``none`` is the empty range (lowest > highest)."""

    lowest: int
    highest: int

    @classmethod
    def parse(cls, text: Optional[str], default: Optional["Versions"] = None) -> "Versions":
        if text is None or text == "":
            if default is None:
                raise SchemaError("missing version range")
            return default
        text = str(text).strip()
        if text == "none":
            return NONE
        if text.endswith("+"):
            return cls(int(text[:-1]), MAX_VERSION)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        v = int(text)
        return cls(v, v)

    def __contains__(self, version: int) -> bool:
        return self.lowest <= version <= self.highest

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == MAX_VERSION:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


NONE = Versions(0, -1)

_PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64",
               "float64", "uuid", "string", "bytes", "records"}
_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}


def _lower_first(name: str) -> str:
    return name[:1].lower() + name[1:]


def _truthy(v: Any) -> bool:
    # Jackson is lenient: "ignorable": "false" (a string) means false.
    if isinstance(v, str):
        return v.strip().lower() == "true"
    return bool(v)


@dataclass
class FieldSpec:
    name: str
    type: str                      # as written: "int32", "[]Topic", "Topic"
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: Optional[int]
    ignorable: bool
    default_text: Optional[str]    # None = implicit default; "" = JSON null literal
    flexible_override: Optional[Versions]
    about: str = ""
    struct: Optional["StructSpec"] = None   # for struct and []struct types
    json_name: str = ""

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.element_type not in _PRIMITIVES

    def present_in(self, version: int) -> bool:
        return version in self.versions

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable_versions

    def default_value(self, version: int) -> Any:
        """The Python default of this field at ``version`` (Kafka's implicit or custom default)."""
        text = self.default_text
        t = self.type
        if self.is_array:
            if text == "null":
                return None
            return []
        if t in _INT_RANGES:
            if not text:
                return 0
            v = int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text)
            return v
        if t == "bool":
            return bool(text) and text.strip().lower() == "true"
        if t == "float64":
            return float(text) if text else 0.0
        if t == "uuid":
            if not text:
                return uuid.UUID(int=0)
            return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        if t == "string":
            if text == "null":
                return None
            return text or ""
        if t == "bytes":
            return None if text == "null" else b""
        if t == "records":
            return None
        # struct
        if text == "null":
            return None
        assert self.struct is not None
        return self.struct.default_value(version)


@dataclass
class StructSpec:
    name: str
    versions: Versions
    fields: List[FieldSpec]

    def default_value(self, version: int) -> Dict[str, Any]:
        return {f.json_name: f.default_value(version) for f in self.fields if f.present_in(version)}


@dataclass
class MessageSpec:
    name: str
    type: str
    api_key: Optional[int]
    valid_versions: Versions
    flexible_versions: Versions
    struct: StructSpec
    folder: str
    path: str
    common_structs: Dict[str, StructSpec] = field(default_factory=dict)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def fields(self) -> List[FieldSpec]:
        return self.struct.fields

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    @property
    def latest_version(self) -> int:
        return self.valid_versions.highest

    def __repr__(self) -> str:
        return (f"MessageSpec({self.name!r}, type={self.type!r}, api_key={self.api_key}, "
                f"valid={self.valid_versions}, flexible={self.flexible_versions})")


# ---------------------------------------------------------------------------------------------
# Parsing

# a JSON string (escapes included; to the end when unterminated), a // comment (to the end
# of its line), a /* */ comment (to the end when unterminated)
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*(?:.*?\*/|.*)', re.S)


def _keep_strings(m: "re.Match[str]") -> str:
    t = m.group(0)
    return t if t[0] == '"' else ""


def strip_comments(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments that are outside JSON strings."""
    return _STRING_OR_COMMENT.sub(_keep_strings, text)


_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")


def _parse_field(d: Dict[str, Any], parent_versions: Versions, structs: Dict[str, StructSpec],
                 pending: List[Tuple[FieldSpec, Dict[str, Any]]], ctx: str) -> FieldSpec:
    name = d["name"]
    if not _NAME_RE.match(name):
        raise SchemaError(f"{ctx}: invalid field name {name!r}")
    tagged = Versions.parse(d.get("taggedVersions"), NONE)
    versions = Versions.parse(d.get("versions"), tagged if not tagged.empty else None)
    default = d.get("default", None)
    if "default" in d and default is None:
        default_text: Optional[str] = ""      # JSON null literal = "no default" (A.1)
    elif default is None:
        default_text = None
    elif isinstance(default, bool):
        default_text = "true" if default else "false"
    else:
        default_text = str(default)
    flex = d.get("flexibleVersions")
    f = FieldSpec(
        name=name,
        type=d["type"],
        versions=versions,
        nullable_versions=Versions.parse(d.get("nullableVersions"), NONE),
        tagged_versions=tagged,
        tag=int(d["tag"]) if d.get("tag") is not None else None,
        ignorable=_truthy(d.get("ignorable", False)),
        default_text=default_text,
        flexible_override=Versions.parse(flex) if flex is not None else None,
        about=d.get("about", ""),
        json_name=_lower_first(name),
    )
    if f.tag is not None and f.tagged_versions.empty:
        raise SchemaError(f"{ctx}.{name}: tag without taggedVersions")
    if f.is_struct:
        sname = f.element_type
        if "fields" in d:
            if sname in structs:
                raise SchemaError(f"{ctx}: struct {sname} defined twice")
            st = StructSpec(sname, versions, [])
            structs[sname] = st
            st.fields = [_parse_field(x, versions, structs, pending, f"{ctx}.{name}") for x in d["fields"]]
            f.struct = st
        else:
            pending.append((f, d))
    return f


def _parse_message(text: str, path: str, folder: str) -> MessageSpec:
    try:
        d = json.loads(strip_comments(text))
    except ValueError as e:
        raise SchemaError(f"{path}: {e}") from None
    name = d["name"]
    valid = Versions.parse(d.get("validVersions"))
    flexible = Versions.parse(d.get("flexibleVersions"), NONE)  # "none"-valid removed APIs omit it
    structs: Dict[str, StructSpec] = {}
    pending: List[Tuple[FieldSpec, Dict[str, Any]]] = []
    common: Dict[str, StructSpec] = {}
    for cs in d.get("commonStructs", []) or []:
        st = StructSpec(cs["name"], Versions.parse(cs.get("versions"), Versions(0, MAX_VERSION)), [])
        structs[cs["name"]] = st
        common[cs["name"]] = st
    for cs in d.get("commonStructs", []) or []:
        st = structs[cs["name"]]
        st.fields = [_parse_field(x, st.versions, structs, pending, cs["name"]) for x in cs["fields"]]
    top = StructSpec(name, valid, [])
    top.fields = [_parse_field(x, valid, structs, pending, name) for x in d.get("fields", [])]
    for f, fd in pending:
        st = structs.get(f.element_type)
        if st is None:
            raise SchemaError(f"{path}: unknown struct type {f.element_type!r} of field {f.name}")
        f.struct = st
    api_key = d.get("apiKey")
    return MessageSpec(
        name=name, type=d.get("type", "data"), api_key=int(api_key) if api_key is not None else None,
        valid_versions=valid, flexible_versions=flexible, struct=top, folder=folder, path=path,
        common_structs=common, raw=d,
    )


# ---------------------------------------------------------------------------------------------
# Registry

class _Registry:
    def __init__(self, root: str) -> None:
        self.root = root
        self._files: Optional[Dict[str, Tuple[str, str]]] = None
        self._specs: Dict[str, MessageSpec] = {}
        self._by_key: Optional[Dict[Tuple[int, str], List[str]]] = None

    def _index(self) -> Dict[str, Tuple[str, str]]:
        if self._files is None:
            files: Dict[str, Tuple[str, str]] = {}
            for folder in sorted(os.listdir(self.root)):
                fdir = os.path.join(self.root, folder)
                if not os.path.isdir(fdir):
                    continue
                for fn in sorted(os.listdir(fdir)):
                    if fn.endswith(".json"):
                        files[fn[:-5]] = (os.path.join(fdir, fn), folder)
            self._files = files
        return self._files

    def names(self) -> List[str]:
        return sorted(self._index())

    def get(self, name: str) -> MessageSpec:
        s = self._specs.get(name)
        if s is not None:
            return s
        entry = self._index().get(name)
        if entry is None:
            # A few spec names differ from their file names (ZkMigrationStateRecord
            # lives in ZkMigrationRecord.json): look through the parsed specs.
            for fname in self.names():
                if fname not in self._specs:
                    self.get(fname)
            for s in list(self._specs.values()):
                if s.name == name:
                    self._specs[name] = s
                    return s
            raise UnknownMessageError(f"no Kafka message spec named {name!r}")
        path, folder = entry
        with open(path, encoding="utf-8") as f:
            s = _parse_message(f.read(), path, folder)
        self._specs[name] = s
        # a spec named apart from its file is found by its own name too, without the
        # look through every file below
        self._specs.setdefault(s.name, s)
        return s

    def by_key(self) -> Dict[Tuple[int, str], List[str]]:
        if self._by_key is None:
            idx: Dict[Tuple[int, str], List[str]] = {}
            for n in self.names():
                s = self.get(n)
                if s.api_key is not None:
                    idx.setdefault((s.api_key, s.type), []).append(n)
            self._by_key = idx
        return self._by_key


_REGISTRY = _Registry(SCHEMA_DIR)


def spec(name: str) -> MessageSpec:
    """The spec of the message named ``name`` (the spec file's name, e.g. ``"OffsetCommitValue"``)."""
    return _REGISTRY.get(name)


def specs(folder: Optional[str] = None) -> Iterator[MessageSpec]:
    """Every shipped spec, by name (only those of ``folder``, e.g. ``group-coordinator``:
    the others are not even parsed)."""
    index = _REGISTRY._index()
    for n in _REGISTRY.names():
        if folder is None or index[n][1] == folder:
            yield _REGISTRY.get(n)


def spec_for_api_key(api_key: int, type: str = "request", folder: Optional[str] = None) -> MessageSpec:
    """The spec with this ``apiKey`` and ``type`` (``request``, ``response``, ``metadata``,
    ``coordinator-key``, ``coordinator-value``).

    Some numbering spaces overlap across folders (``metadata`` API keys 0-3 exist both for
    KRaft's ``__cluster_metadata`` records and for tiered storage's remote log metadata):
    then ``folder`` (``metadata``, ``storage``, ...) must say which, and a look-up that
    would have to guess raises :class:`UnknownMessageError`."""
    names = _REGISTRY.by_key().get((int(api_key), type), [])
    if folder is not None:
        names = [n for n in names if _REGISTRY.get(n).folder == folder]
    if not names:
        raise UnknownMessageError(f"no {type} spec with apiKey {api_key}"
                                  + (f" in {folder}" if folder else ""))
    if len(names) > 1:
        folders = sorted({_REGISTRY.get(n).folder for n in names})
        raise UnknownMessageError(f"apiKey {api_key} of type {type} is ambiguous: specs "
                                  f"{', '.join(sorted(names))}; pass folder= one of {folders}")
    return _REGISTRY.get(names[0])


def spec_for_record_type(record_type: int, kind: str = "value", folder: Optional[str] = None) -> MessageSpec:
    """The coordinator record spec (``kind`` ``key`` or ``value``) of a record type.

    Record types are the ``apiKey`` of ``coordinator-key``/``coordinator-value`` specs; give
    ``folder`` (``group-coordinator``, ``share-coordinator``, ``transaction-coordinator``) to
    choose the coordinator log, whose numbering spaces overlap (default: ``__consumer_offsets``).
    """
    t = "coordinator-" + kind
    names = _REGISTRY.by_key().get((int(record_type), t), [])
    names = [n for n in names if _REGISTRY.get(n).folder == (folder or "group-coordinator")]
    if not names:
        raise UnknownMessageError(f"no {t} spec with record type {record_type}"
                                  + (f" in {folder}" if folder else ""))
    return _REGISTRY.get(names[0])
