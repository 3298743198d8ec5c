"""``offsets dump``'s columnar path against the record path, and the JSON-lines writer
under it (csrc/kc_jsonl.c through kcodec.log._jsonl) against Python's json.dumps.

The record path (objects, ``record_json``, ``json.dumps``) is the reference: the columnar
path must print the same bytes for every selection, on logs with every kind of row, on
the fixture segments and on legacy (magic 0/1) twins of them.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from kcodec import log
from kcodec.offsets.dump import Selection, iter_dump, parse_record_types

from ._shared import require
from .test_legacy import _twin_dirs
from .test_native_fuzz import (CC, CSRC, SANITIZE, _compile, _run_fuzzer, _sanitizer_works,
                               SECONDS)
from .test_offsets_operator import SEGMENTS, _mixed_log, _rec, _segments

_jsonl = pytest.importorskip("kcodec.log._jsonl")
write_lines = _jsonl.write_lines


# --------------------------------------------------------------------------- the writer

def _strings(values):
    """An Arrow-layout string column: int32 offsets, UTF-8 data, validity bits."""
    enc = [b"" if v is None else v.encode() for v in values]
    offs = np.zeros(len(enc) + 1, np.int32)
    np.cumsum([len(x) for x in enc], out=offs[1:])
    bits = np.packbits(np.array([v is not None for v in values]), bitorder="little")
    return {"strings": (offs, b"".join(enc), bits, 0)}


def _text(out):
    return bytes(out).decode("utf-8")


def test_strings_are_escaped_as_json_dumps_does():
    rnd = random.Random(3)
    alphabet = [chr(c) for c in range(0x80)] + ["\u00e9", "\u2028", "\u2029", "\ufeff", "\u2603",
                                                 "\U0001f600", "\x7f", "\x85"]
    values = ["", "plain", 'q"\\/', None] + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
                                             for _ in range(300)]
    n = len(values)
    out = write_lines([['{"s": ', 0, "}\n"]], [_strings(values)], np.arange(n), np.zeros(n, np.int32),
                      size_hint=1)
    assert _text(out) == "".join(json.dumps({"s": v}, ensure_ascii=False) + "\n" for v in values)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8])
def test_numbers_nulls_codes_and_take(dtype):
    info = np.iinfo(dtype)
    vals = np.array([0, 1, -1, 9, 10, 99, 100, info.min, info.max, info.max - 1, info.min + 1], dtype)
    n = len(vals)
    valid = np.ones(n + 3, bool)
    valid[3 + 4] = False                           # bit offset 3: entry 4 is null
    bits = np.packbits(valid, bitorder="little")
    take = np.arange(n)[::-1].copy()               # row r shows entry n-1-r of the codes
    cols = [{"values": vals, "valid": bits, "bit_offset": 3},
            {"codes": (np.arange(n) % 2).astype(np.uint8), "names": ["false", "true"], "take": take}]
    tpl = np.where(np.arange(n) == 2, -1, np.where(np.arange(n) == 5, 1, 0)).astype(np.int32)
    rows = np.arange(n)[::-1]
    out, ends = write_lines([["[", 0, ", ", 1, "]\n"], ["other\n"]], cols, rows, tpl, size_hint=1,
                            ends=True)
    want = []
    for r in rows:
        if r == 2:
            want.append("")
        elif r == 5:
            want.append("other\n")
        else:
            want.append(json.dumps([None if r == 4 else int(vals[r]), bool((n - 1 - r) % 2)]) + "\n")
    assert _text(out) == "".join(want)
    assert ends.tolist() == np.cumsum([len(w) for w in want]).tolist()


def test_raw_text_and_growth():
    lines = ["x" * k + "\n" for k in range(0, 5000, 97)]
    enc = [s.encode() for s in lines]
    offs = np.zeros(len(enc) + 1, np.int32)
    np.cumsum([len(x) for x in enc], out=offs[1:])
    n = len(lines)
    out = write_lines([[0]], [{"raw": (offs, b"".join(enc))}], np.arange(n), np.zeros(n, np.int32),
                      size_hint=1)
    assert _text(out) == "".join(lines)


@pytest.mark.parametrize("case", ["row", "take", "offsets", "template", "column", "code", "bitmap"])
def test_bad_input_is_a_clear_error(case):
    vals = np.arange(4, dtype=np.int64)
    offs, data = np.array([0, 1, 2, 3, 4], np.int32), b"abcd"
    cols = [{"values": vals}, {"strings": (offs, data, None, 0)},
            {"codes": np.array([0, 1, 1, 0], np.uint8), "names": ["a", "b"]}]
    tpls = [[0, ",", 1, ",", 2, "\n"]]
    rows, rt = np.arange(4), np.zeros(4, np.int32)
    if case == "row":
        rows = np.array([0, 4])
    elif case == "take":
        cols[0]["take"] = np.array([0, 1, 2, 7])
    elif case == "offsets":
        cols[1] = {"strings": (np.array([0, 1, 9, 3, 4], np.int32), data, None, 0)}
    elif case == "template":
        rt = np.array([0, 0, 1, 0], np.int32)
    elif case == "column":
        tpls = [[0, 5]]
    elif case == "code":
        cols[2]["codes"] = np.array([0, 2, 1, 0], np.uint8)
    else:
        cols[0]["valid"], cols[0]["bit_offset"] = np.zeros(1, np.uint8), 5
    with pytest.raises(ValueError):
        write_lines(tpls, cols, rows, rt)


class _Str(str):
    pass


def _json_objects():
    """Values json.dumps takes: those the C writer does (exact dicts with str keys, lists,
    tuples, str, int of any size, bool, None) and those it leaves to json.dumps."""
    rnd = random.Random(5)
    alphabet = [chr(c) for c in range(0x80)] + ["\u00e9", "\u2028", "\U0001f600", "\x7f"]

    def word():
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))

    def value(depth):
        pick = rnd.randrange(10 if depth < 4 else 6)
        if pick == 0:
            return word()
        if pick == 1:
            return rnd.choice([0, -1, 1, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**30, rnd.getrandbits(64) - 2**63])
        if pick == 2:
            return rnd.choice([None, True, False])
        if pick in (3, 4, 5):
            return rnd.randrange(-10**6, 10**6)
        if pick in (6, 7):
            return {word(): value(depth + 1) for _ in range(rnd.randint(0, 5))}
        if pick == 8:
            return [value(depth + 1) for _ in range(rnd.randint(0, 5))]
        return tuple(value(depth + 1) for _ in range(rnd.randint(0, 3)))

    objs = [value(0) for _ in range(400)]
    deep: list = []
    for i in range(300):        # past the C writer's depth: json.dumps writes it
        deep = [i, {"k": deep}] if i % 2 else [deep]
    objs += [{}, [], "", {"a": 1.5, "b": float("nan")}, {1: 2, None: 3, True: 4}, _Str("sub"),
             {"x": _Str("s")}, {"k": [1, {"n": 2**80}]}, deep, [float("-inf")]]
    return objs


@pytest.mark.parametrize("skip,end", [(0, ""), (1, "\n"), (3, "\r\n")])
def test_json_texts_are_json_dumps_bytes(skip, end):
    objs = _json_objects()
    texts = _jsonl.JsonTexts(skip, end)
    assert [texts.add(o) for o in objs] == list(range(len(objs))) and len(texts) == len(objs)
    offs, data = texts.column()
    data = bytes(data)
    assert offs.dtype == np.int32 and len(offs) == len(objs) + 1 and offs[0] == 0
    for i, o in enumerate(objs):
        assert data[offs[i]:offs[i + 1]] == json.dumps(o, ensure_ascii=False).encode()[skip:] + end.encode(), o
    empty = _jsonl.JsonTexts()
    offs, data = empty.column()
    assert list(offs) == [0] and bytes(data) == b""


def test_json_texts_fail_as_json_dumps_does():
    loop: list = []
    loop.append(loop)
    for bad, err in (({"s": "\ud800"}, UnicodeEncodeError), ({"k": "\udfff"}, UnicodeEncodeError),
                     (loop, ValueError), ({"x": object()}, TypeError), ({(1, 2): 1}, TypeError)):
        with pytest.raises(err):
            _jsonl.JsonTexts().add(bad)


def test_kernel_is_c99_and_fuzzes_clean(tmp_path):
    """Warning-free C99, then the fuzz target under ASan + UBSan."""
    for src in ("kc_jsonl.c", "fuzz/fuzz_jsonl.c"):
        _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
                  "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)
    if not _sanitizer_works(tmp_path):
        pytest.skip(f"{CC} cannot build with -fsanitize=address,undefined")
    exe = tmp_path / "fuzz_jsonl"
    _compile(SANITIZE + [str(CSRC / "kc_jsonl.c"), str(CSRC / "fuzz" / "fuzz_jsonl.c"), "-o", str(exe)],
             tmp_path)
    _run_fuzzer(exe, [SECONDS, "2718"], tmp_path)


# --------------------------------------------------------------------------- the dump

def _dump(source, columnar, sel=Selection(), **kw):
    out = []
    for pieces, _bad, _end, _err in iter_dump(source, sel, columnar=columnar, **kw):
        out += [p if isinstance(p, str) else bytes(p).decode("utf-8") for p in pieces]
    return "".join(out)


_SELECTIONS = [
    Selection(),
    Selection(parse_record_types(["OffsetCommit"])),
    Selection(parse_record_types(["GroupMetadata,control"])),
    Selection(parse_record_types(["LegacyOffsetCommit", "32512"])),
    Selection(parse_record_types(["ConsumerGroupMetadata"])),
    Selection(None, 3, 9),
    Selection(None, 7, None),
    Selection(parse_record_types(["OffsetCommit"]), None, 4),
    Selection(frozenset(), None, None),
]


def _escapes_log():
    """Commits and tombstones whose group, topic and metadata need every kind of JSON
    escape, at each value version, with group metadata between them."""
    from kcodec.log import encode_batch
    names = ['g"q', "t\\b", "c\x01\x1f\x7f", "u\u2028\u00e9\U0001f600", "n\n\r\t\b\f", ""]
    recs = []
    for i, s in enumerate(names):
        v = i % 5
        recs.append(_rec(1, "OffsetCommitKey", {"group": s, "topic": s[::-1], "partition": i},
                         "OffsetCommitValue", {"offset": (1 << 62) + i, "metadata": s * 2,
                                               "commitTimestamp": -1, "expireTimestamp": -1,
                                               "leaderEpoch": -1 if i % 2 else 2**31 - 1}, v))
        recs.append(_rec(1, "OffsetCommitKey", {"group": s, "topic": "t", "partition": -i}))
        recs.append(_rec(2, "GroupMetadataKey", {"group": s}, "GroupMetadataValue",
                         {"protocolType": s, "generation": i, "protocol": None, "leader": None,
                          "currentStateTimestamp": -1, "members": []}, 3))
    import kcodec
    bad_utf8 = b"\x00\x01" + b"\x00\x02\xff\xfe" + b"\x00\x01t" + b"\x00\x00\x00\x00"   # group not UTF-8
    recs.append((bad_utf8, b"\x00\x01" + kcodec.encode("OffsetCommitValue", {"offset": 1}, 1)))
    data = b""
    for i in range(0, len(recs), 4):
        data += encode_batch(recs[i:i + 4], base_offset=i, base_timestamp=-1 + i,
                             producer_id=-1 if i % 8 else 2**63 - 1, producer_epoch=-1 if i % 8 else 32767,
                             partition_leader_epoch=-1 if i % 8 else 2**31 - 1)
    return data


def _sel_id(sel) -> str:
    # sets sorted: an id must not depend on the hash seed (each xdist worker has its own)
    return repr(tuple(sorted(map(str, x)) if isinstance(x, (set, frozenset)) else x for x in sel))


@pytest.mark.parametrize("sel", _SELECTIONS, ids=_sel_id)
def test_selections_print_the_record_paths_lines(sel):
    for data in (_mixed_log(), _escapes_log()):
        ref = _dump(data, False, sel)
        assert _dump(data, True, sel) == ref
        assert _dump(data, True, sel, chunk_size=257) == ref


def test_escapes_and_extremes_print_the_record_paths_lines():
    data = _escapes_log()
    ref = _dump(data, False)
    assert "\\u0001\\u001f\x7f" in ref and "\u2028" in ref and '"payload": null' in ref
    assert ref.count("\n") == sum(len(b.records) for b in log.iter_batches(data))
    assert _dump(data, True) == ref
    assert _dump(data, True, file="-") == _dump(data, False, file="-")


def test_fixture_segments_with_selections():
    require(SEGMENTS)
    for path in _segments():
        for sel in (_SELECTIONS[1], _SELECTIONS[2], _SELECTIONS[5]):
            assert _dump(path, True, sel) == _dump(path, False, sel), (path, sel)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_segments(tmp_path, magic):
    _v2, old = _twin_dirs(tmp_path, magic)
    files = log.log_files(str(old))
    assert files
    for f in files:
        ref = _dump(f, False)
        assert _dump(f, True) == ref
        assert _dump(f, True, _SELECTIONS[1]) == _dump(f, False, _SELECTIONS[1])


def test_without_extensions_the_record_path_prints_the_same(tmp_path):
    f = tmp_path / "00000000000000000000.log"
    f.write_bytes(_mixed_log())
    outs = []
    for env in ({}, {"KCODEC_NO_EXTENSIONS": "1"}):
        r = subprocess.run([sys.executable, "-m", "kcodec", "offsets", "dump", str(f)], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, **env))
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") > 10


def test_mutated_records_print_the_record_paths_lines():
    """Keys and values with bytes flipped, cut or grown (lengths inside them pointing
    anywhere, embedded member metadata broken, bad UTF-8, surrogates, unknown tagged
    fields): the C writer prints a record only as the reference does, and hands back the
    rest (CRC-valid batches: the records reach the writer)."""
    import kcodec
    from kcodec.consumer import Assignment, Subscription, encode_assignment, encode_subscription
    from kcodec.log import encode_batch
    rnd = random.Random(11)
    sub = encode_subscription(Subscription(["t", "u"], b"ud", [("t", 0)]))
    asg = encode_assignment(Assignment([("t", 0), ("t", 1)], b""))
    member = {"memberId": "m1", "groupInstanceId": None, "clientId": "c", "clientHost": "/h",
              "rebalanceTimeout": 1, "sessionTimeout": 2, "subscription": sub, "assignment": asg}
    seeds = [_rec(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 3},
                  "OffsetCommitValue", {"offset": 5, "metadata": "m", "commitTimestamp": 1}, v)
             for v in (1, 3, 4)]
    seeds.append(_rec(2, "GroupMetadataKey", {"group": "g"}, "GroupMetadataValue",
                      {"protocolType": "consumer", "generation": 3, "protocol": "range",
                       "leader": "m1", "currentStateTimestamp": 9, "members": [member, member]}, 3))
    seeds.append(_rec(1, "OffsetCommitKey", {"group": "g", "topic": "t", "partition": 3}))
    recs = []
    for _ in range(1500):
        key, value = rnd.choice(seeds)
        which = rnd.random()
        b = bytearray(value if (which < 0.8 and value is not None) else key)
        op = rnd.randrange(4)
        if op == 0 and b:
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        elif op == 1 and b:
            del b[rnd.randrange(len(b)):]
        elif op == 2:
            at = rnd.randrange(len(b) + 1)
            b[at:at] = bytes(rnd.choice([[0xED, 0xA0, 0x80], [0xFF], [0x7F, 0xFF, 0xFF, 0xFF], [0x01, 0x00]]))
        else:
            for _ in range(rnd.randint(1, 4)):
                if b:
                    b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        recs.append((key, bytes(b)) if which < 0.8 and value is not None else (bytes(b), value))
    data = b"".join(encode_batch(recs[i:i + 10], base_offset=i) for i in range(0, len(recs), 10))
    ref = _dump(data, False)
    assert ref.count("\n") == len(recs) and '"error"' in ref and '"assignedPartitions"' in ref
    assert _dump(data, True) == ref


def test_a_registered_protocol_decoder_is_honoured(monkeypatch):
    """Group metadata takes the reference path while other protocol decoders are
    registered (C knows only the consumer protocol's)."""
    from kcodec.offsets import records
    monkeypatch.setattr(records, "_PROTOCOLS", dict(records._PROTOCOLS))
    monkeypatch.setattr("kcodec.offsets.dump._PROTOCOLS", records._PROTOCOLS)
    data = _mixed_log()
    plain = _dump(data, True)

    def failing(data):
        return records.Embedded("X", None, None, None, b"", "not this protocol")
    records.register_protocol_decoder("consumer", failing, failing, protocol_name="range")
    ref = _dump(data, False)
    assert ref != plain and _dump(data, True) == ref


@pytest.mark.parametrize("src", ["kc_tjson.c", "kc_odump.c"])
def test_line_writer_kernels_are_warning_free_c99(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


def test_flat_messages_written_straight_from_bytes_as_from_the_tape():
    """kc_tjson_direct (a flat message's JSON straight from its bytes) gives the tape
    writer's text, or leaves the message to it, on every group-coordinator key and value
    that is flat and on byte-mutated, cut and lengthened copies of them."""
    import kcodec
    from kcodec._program import T_BOOL, T_STRING
    from kcodec.offsets.dump import _writer
    from kcodec.offsets.records import record_types
    _odump = pytest.importorskip("kcodec.offsets._odump")
    rnd = random.Random(11)
    texts = ["", "g", "group-00138", "x" * 16, "y" * 17, "caf\u00e9", 'q"\\', "\x01tab\t", "\u2603" * 6]
    checked = direct = 0
    for info in record_types().values():
        for name in (info.key, info.value):
            spec = kcodec.spec(name)
            for v in range(spec.valid_versions.lowest, spec.valid_versions.highest + 1):
                prog = kcodec.program(name, v)
                try:
                    w = _writer(prog)
                except ValueError:        # not the C writer's (the reference prints it)
                    continue
                if not w.flat:
                    continue
                for _ in range(60):
                    value = {}
                    for f in prog.top.fields:
                        value[f.name] = (rnd.choice(texts) if f.type == T_STRING else
                                         rnd.choice([True, False]) if f.type == T_BOOL else
                                         rnd.choice([0, 1, -1, 99, 100, 127, -128]))
                    try:
                        data = bytearray(kcodec.encode(name, value, v))
                    except Exception:
                        continue
                    variants = [bytes(data), bytes(data[:-1]), bytes(data) + b"\x00"]
                    for _ in range(8):
                        m = bytearray(data)
                        if m:
                            m[rnd.randrange(len(m))] = rnd.randrange(256)
                        variants.append(bytes(m))
                    for b in variants:
                        # as in a window: more bytes after the message (the short-string
                        # path reads 16 at a time), and none
                        got = w.direct(b + b"\x00\x09topic" + bytes(16), 0, len(b))
                        assert w.direct(b) == got
                        try:
                            want = w.dumps(b)
                        except Exception:
                            want = None
                        checked += 1
                        if got is not None:
                            direct += 1
                            assert got == want, (name, v, b.hex())
    assert checked > 1000 and direct > 500
