"""The dump writers' C kernels fuzzed on their own, as their bindings drive them, under
ASan + UBSan (KCODEC_FUZZ_SECONDS sets each run's duration, default 5):

* csrc/kc_odump.c + csrc/kc_tjson.c (``offsets dump``'s lines from record bytes) with
  csrc/fuzz/fuzz_odump.c, the package's own record-type table (written below from
  kcodec.offsets.dump's), over corrupted fixture and generated ``__consumer_offsets``
  segments;
* csrc/kc_kjson.c (``kraft dump``'s lines, kcodec.kraft._dump) with
  csrc/fuzz/fuzz_kdump.c, kcodec.kraft.dump's table, over corrupted metadata logs;
* csrc/kc_streams_userdata.c (Streams userData in Java's order) with
  csrc/fuzz/fuzz_userdata.c, its inputs shaped as kcodec/streams/_userdata.pyx passes them;

and what those runs found, through the Python API: the dumps of hostile batches equal
the reference record path's.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from .test_native_fuzz import CC, CSRC, SANITIZE, SECONDS, _compile, _run_fuzzer, _sanitizer_works

pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")

DATA = Path(__file__).parent / "data"


def _hex(b) -> str:
    return bytes(b).hex() or "-"


def _words(w) -> str:
    w = list(w)
    return " ".join([str(len(w))] + [str(int(x)) for x in w])


def _msg_tokens(tj) -> str:
    """One kcodec.offsets._odump.TapeJson: M code plan blob n_embeds (n_versions msg..).."""
    out = ["M", _words(tj.code), _words(tj.plan), _hex(tj.blob), str(len(tj.embeds or []))]
    for versions in tj.embeds or []:
        out.append(str(len(versions)))
        out += [_msg_tokens(v) for v in versions]
    return " ".join(out)


def odump_table() -> str:
    """kcodec.offsets.dump's record-type table (as it hands it to DumpTypes), as tokens
    csrc/fuzz/fuzz_odump.c reads."""
    from types import SimpleNamespace

    from kcodec.offsets import dump
    got = []
    real = dump._odump
    fake = SimpleNamespace(TapeJson=real.TapeJson, DumpTypes=lambda *a: got.append(a) or a)
    saved = dump._odump, dump._TABLES
    try:
        dump._odump, dump._TABLES = fake, {}
        dump._dump_types(frozenset({"range-x"}))       # one protocol handed back
    finally:
        dump._odump, dump._TABLES = saved
    entries, ex_field, ex = got[-1]
    n = max(entries) + 1
    out = [str(n)]
    for rtype in range(n):
        if rtype not in entries or entries[rtype][0] is None:
            out.append("0")
            continue
        key, head, versions = entries[rtype]
        nv = max(list(versions) + [-1]) + 1
        out += ["1", _msg_tokens(key), _hex(head), str(nv)]
        for v in range(nv):
            if v not in versions:
                out.append("0")
                continue
            msg, alt, sw_field, sw_text, vhead = versions[v]
            out += ["1", _msg_tokens(msg)]
            out += ["1", _msg_tokens(alt)] if alt is not None else ["0"]
            out += [str(sw_field), _hex(sw_text), _hex(vhead)]
    out += [str(ex_field), _hex(ex)]
    return "\n".join(out) + "\n"


def odump_corpus() -> str:
    """Segments to corrupt: the fixture's (their first 256 KiB), the operator tests' mixed
    log, and group metadata with members."""
    from kcodec import log

    from .test_offsets_dump import _escapes_log
    from .test_offsets_operator import _mixed_log, _segments
    out = [open(p, "rb").read()[:1 << 18].hex() for p in _segments()]
    out += [_mixed_log().hex(), _escapes_log().hex()]
    # small batches: most mutations then land in a batch the writer reads
    for path in _segments()[:4]:
        for b in list(log.iter_batches(open(path, "rb").read()[:1 << 16]))[:40]:
            if not b.attributes & 0x27 and b.records:
                out.append(log.encode_batch([(r.key, r.value) for r in b.records],
                                            base_offset=b.base_offset).hex())
    return "\n".join(out) + "\n"


def _build(tmp_path, name, sources):
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / name
    _compile(SANITIZE + [str(CSRC / s) for s in sources] + [str(CSRC / "fuzz" / f"{name}.c"), "-o", str(exe)],
             tmp_path)
    return exe


@pytest.mark.parametrize("src", ["fuzz/fuzz_odump.c", "fuzz/fuzz_kdump.c", "fuzz/fuzz_userdata.c"])
def test_fuzz_targets_are_warning_free_c99(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


def test_fuzz_odump_asan(tmp_path):
    pytest.importorskip("kcodec.offsets._odump")
    (tmp_path / "tables.txt").write_text(odump_table())
    (tmp_path / "corpus.txt").write_text(odump_corpus())
    exe = _build(tmp_path, "fuzz_odump", ["kc_odump.c", "kc_tjson.c", "kc_engine.c", "kc_batch.c",
                                          "kc_crc32c.c"])
    _run_fuzzer(exe, ["tables.txt", "corpus.txt", SECONDS, "2411"], tmp_path)


def test_fuzz_userdata_asan(tmp_path):
    exe = _build(tmp_path, "fuzz_userdata", ["kc_streams_userdata.c", "kc_javahash.c"])
    _run_fuzzer(exe, [SECONDS, "925"], tmp_path)


def kdump_table() -> str:
    """kcodec.kraft.dump's (api key, version) table as csrc/fuzz/fuzz_kdump.c reads it."""
    from kcodec.kraft import dump as kdump
    entries = kdump._entries()
    n_keys = max(k for k, _ in entries) + 1
    n_ver = max(v for _, v in entries) + 1
    out = [f"{n_keys} {n_ver} {len(entries)}"]
    for (key, ver), (prog, plan, blob, head) in sorted(entries.items()):
        out.append(" ".join([str(key), str(ver), _words(memoryview(prog.code).cast("B").cast("i")),
                             _words(plan), _hex(blob), _hex(head)]))
    return "\n".join(out) + "\n"


def kdump_corpus() -> str:
    """Metadata logs to corrupt: the Kafka-written test log and the fixture's segments and
    snapshots (their first 256 KiB), and small batches cut from them."""
    from kcodec import log

    from ._shared import fixtures_dir
    paths = [DATA / "dumps" / "kraft" / "00000000000000000000.log"]
    meta = fixtures_dir() / "cluster_metadata"
    if meta.exists():
        paths += sorted(p for p in meta.rglob("*") if p.suffix in (".log", ".checkpoint"))
    out = []
    for p in paths:
        data = p.read_bytes()[:1 << 18]
        out.append(data.hex())
        for b in list(log.iter_batches(data))[:60]:
            if not b.attributes & 0x27 and b.records:
                out.append(log.encode_batch([(r.key, r.value) for r in b.records],
                                            base_offset=b.base_offset).hex())
    return "\n".join(out) + "\n"


def test_fuzz_kdump_asan(tmp_path):
    pytest.importorskip("kcodec.kraft._dump")
    (tmp_path / "tables.txt").write_text(kdump_table())
    (tmp_path / "corpus.txt").write_text(kdump_corpus())
    exe = _build(tmp_path, "fuzz_kdump", ["kc_kjson.c", "kc_tjson.c", "kc_engine.c", "kc_batch.c", "kc_crc32c.c"])
    _run_fuzzer(exe, ["tables.txt", "corpus.txt", SECONDS, "4111"], tmp_path)


# ------------------------------------------------------------------ what the runs found

HOSTILE = DATA / "dumps" / "kraft_hostile"


def test_hostile_sequences_and_offsets_print_kafkas_text(tmp_path):
    """Batch headers no producer writes (base sequences below -1, a negative
    lastOffsetDelta, offsets past Long.MAX_VALUE): Kafka's tool prints sequences in Java's
    int arithmetic (a record has one only under a base sequence >= 0) and offsets as
    wrapped longs.  The C writer printed base + delta unwrapped (signed overflow, UB) and
    sequences off Java's; the reference path did too, and its pure-Python scanner raised
    OverflowError.  All three paths now print Kafka's text byte for byte."""
    from kcodec.kraft import dump as kdump
    from kcodec.kraft import dump_lines
    log_path = HOSTILE / "00000000000000000000.log"
    want = (HOSTILE / "kafka-dump-log.txt").read_text()
    name = log_path.name
    assert "".join(line + "\n" for line in dump_lines(log_path, display_name=name)) == want
    assert b"".join(kdump.dump_file(log_path, display_name=name)).decode() == want
    head = "Dumping %s\nLog starting offset: 0\n" % name
    general = b"".join(bytes(p) for p in kdump._general_pieces(str(log_path), 1 << 22, None, False, 0))
    assert head + general.decode() == want


def test_frame_varints_read_as_kafkas_serde_reads_them():
    """MetadataRecordSerde frames whose varints hold bits past 32 in a fifth byte (Kafka
    drops them), a type that is a negative int (Kafka cuts it to a short), or values past
    Short.MAX_VALUE (Kafka refuses): the C writer printed the first kind as Kafka does
    and the reference path said "Failed to deserialize"; a negative type went to the
    reference path and failed there too.  kcodec.kraft.read_record now reads a frame
    as Kafka's serde does, and every path prints Kafka's text."""
    from kcodec.kraft import dump as kdump
    from kcodec.kraft import dump_lines, read_record
    log_path = HOSTILE / "frames" / "00000000000000000000.log"
    want = (HOSTILE / "frames" / "kafka-dump-log.txt").read_text()
    name = log_path.name
    assert "".join(line + "\n" for line in dump_lines(log_path, display_name=name)) == want
    assert b"".join(kdump.dump_file(log_path, display_name=name)).decode() == want
    general = b"".join(bytes(p) for p in kdump._general_pieces(str(log_path), 1 << 22, None, False, 0))
    assert "Dumping %s\nLog starting offset: 0\n" % name + general.decode() == want
    from kcodec import log
    recs = [r for b in log.iter_batches(str(log_path)) for r in b.records]
    got = [(m.type, m.status) for m in map(read_record, (r.value for r in recs))]
    assert got[:5] == [("TopicRecord", "ok")] * 5 and all(s not in ("ok", "newer_version") for _, s in got[5:])


def test_hostile_offsets_in_the_pure_python_scanner():
    """The pure-Python scanner (no extensions) wraps offsets as Java's longs do, as the C
    one does, instead of raising OverflowError."""
    from kcodec.log import _records_py
    data = (HOSTILE / "00000000000000000000.log").read_bytes()
    _pos, _batches, recs = _records_py.scan(data)
    assert recs["offset"][-3:].tolist() == [2**63 - 2, 2**63 - 1, -2**63]


def _edge_headers(data: bytes, rnd) -> bytes:
    """``data``'s v2 batches with header fields set to edge values (offsets, epochs,
    sequences, timestamps, producer ids at their types' limits; timestamp type,
    transactional and delete-horizon bits flipped), CRCs made right again."""
    import struct

    from kcodec.log._records_py import crc32c
    b = bytearray(data)
    edges64 = [0, -1, -2, 2**63 - 1, -2**63, 2**63 - 2, 2**31 - 1, 1 << 32]
    edges32 = [0, -1, -2, 2**31 - 1, -2**31, 2**31 - 2, 32767]
    pos = 0
    while pos + 61 <= len(b):
        blen = struct.unpack_from(">i", b, pos + 8)[0]
        if blen < 49 or pos + 12 + blen > len(b) or b[pos + 16] != 2:
            break
        for _ in range(rnd.randint(0, 3)):
            f = rnd.randrange(9)
            if f == 0:
                struct.pack_into(">q", b, pos, rnd.choice(edges64))
            elif f == 1:
                struct.pack_into(">i", b, pos + 12, rnd.choice(edges32))
            elif f == 2:
                b[pos + 22] ^= rnd.choice([0x08, 0x10, 0x40])
            elif f == 3:
                struct.pack_into(">i", b, pos + 23, rnd.choice(edges32))
            elif f in (4, 5):
                struct.pack_into(">q", b, pos + 27 + 8 * (f - 4), rnd.choice(edges64))
            elif f == 6:
                struct.pack_into(">q", b, pos + 43, rnd.choice(edges64))
            elif f == 7:
                struct.pack_into(">h", b, pos + 51, rnd.choice([0, -1, 32767, -32768]))
            else:
                struct.pack_into(">i", b, pos + 53, rnd.choice(edges32))
        struct.pack_into(">I", b, pos + 17, crc32c(bytes(b[pos + 21:pos + 12 + blen])))
        pos += 12 + blen
    return bytes(b)


def test_edge_batch_headers_print_the_reference_text(tmp_path):
    """Both dumps on logs whose batch headers hold edge values: the C writers print what
    the reference record paths print (offsets dump: record_json; kraft dump: the
    reference lines, which follow Kafka's tool)."""
    import random

    from kcodec.kraft import dump as kdump
    from kcodec.kraft import dump_lines

    from .test_offsets_dump import _dump, _escapes_log
    from .test_offsets_operator import _mixed_log
    rnd = random.Random(24)
    for k in range(12):
        data = _edge_headers(_mixed_log() if k % 2 else _escapes_log(), rnd)
        assert _dump(data, True) == _dump(data, False)
    src = (DATA / "dumps" / "kraft" / "00000000000000000000.log").read_bytes()
    for k in range(12):
        seg = tmp_path / str(k) / "00000000000000000000.log"
        seg.parent.mkdir()
        seg.write_bytes(_edge_headers(src, rnd))
        want = "".join(line + "\n" for line in dump_lines(seg))
        assert b"".join(kdump.dump_file(seg)).decode() == want


def _fix_crcs(b: bytearray) -> None:
    import struct

    from kcodec.log._records_py import crc32c
    pos = 0
    while pos + 61 <= len(b):
        blen = struct.unpack_from(">i", b, pos + 8)[0]
        if blen < 49 or pos + 12 + blen > len(b):
            return
        if b[pos + 16] == 2:
            struct.pack_into(">I", b, pos + 17, crc32c(bytes(b[pos + 21:pos + 12 + blen])))
        pos += 12 + blen


def test_fixture_records_mutated_in_place_print_the_record_paths_lines():
    """The broker-written segments (every record type the fixture cluster wrote, KIP-848
    ones included) with keys and values mutated in place as fuzz_odump mutates them
    (bytes, version and type prefixes, lengths and counts made absurd), CRCs made right:
    the C writer prints what the record path prints."""
    import random

    from kcodec import log

    from .test_offsets_dump import _dump
    from .test_offsets_operator import _segments
    segs = _segments()
    if not segs:
        pytest.skip("no fixture segments")
    rnd = random.Random(2411)
    checked = 0
    for path in segs:
        data = open(path, "rb").read()[:1 << 16]
        ch = next(iter(log.iter_chunks(data)), None)
        if ch is None or not len(ch.records):
            continue
        spans = [(int(r["key_pos"]), int(r["key_len"])) for r in ch.records if r["key_len"] > 0]
        spans += [(int(r["value_pos"]), int(r["value_len"])) for r in ch.records if r["value_len"] > 0]
        for _ in range(6):
            b = bytearray(data)
            for _ in range(rnd.randint(1, 4)):
                at, n = rnd.choice(spans)
                op = rnd.randrange(5)
                if op == 0:
                    b[at + rnd.randrange(n)] ^= 1 << rnd.randrange(8)
                elif op == 1:
                    b[at + rnd.randrange(n)] = rnd.randrange(256)
                elif op == 2 and n >= 2:
                    b[at:at + 2] = rnd.choice([b"\x00\x00", b"\x00\x05", b"\x00\x0b", b"\x7f\xff", b"\xff\xfe"])
                elif op == 3 and n >= 4:
                    k = at + 2 + rnd.randrange(n - 3)
                    b[k:k + 2] = rnd.choice([b"\x7f\xff", b"\xff\xff", b"\x00\x00", b"\x80\x01"])
                else:
                    b[at + rnd.randrange(n)] = rnd.choice([0x00, 0x01, 0x7f, 0x80, 0xff])
            _fix_crcs(b)
            mutated = bytes(b)
            assert _dump(mutated, True) == _dump(mutated, False), path
            checked += 1
    assert checked >= 6


def test_a_hostile_batch_length_allocates_no_more_than_the_file(tmp_path, monkeypatch):
    """A segment whose first batch claims nearly 1 GiB (within the batch-size limit) in a
    file of 64 KiB: the readers grew their window to the claimed length before reading
    (1 GB resident for `kraft dump` and `offsets dump` of a 9 MiB file); they now grow
    only to what the file holds, and the batch is reported cut, as Kafka's tool does."""
    import struct
    import tracemalloc

    from kcodec import log
    from kcodec.kraft import dump as kdump
    from kcodec.kraft import dump_lines
    src = (DATA / "dumps" / "kraft" / "00000000000000000000.log").read_bytes()
    b = bytearray(src[:61])
    struct.pack_into(">i", b, 8, (1 << 30) - 100)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(bytes(b) + bytes(range(256)) * 256)
    monkeypatch.setattr(kdump, "_CHUNK", 4096)
    tracemalloc.start()
    try:
        text = b"".join(kdump.dump_file(seg)).decode()
        batches = list(log.iter_batches(str(seg), chunk_size=4096))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak          # (the fixed buffers; was about 1 GiB)
    assert text == "".join(line + "\n" for line in dump_lines(seg))
    assert "invalid bytes at the end" in text
    assert batches[0].error is not None and batches[0].error.reason == "truncated"


def test_frame_varints_through_the_spark_kernel():
    """kcodec.spark's decode_metadata on the same frames: row for row what read_record
    gives (a type past Short.MAX_VALUE raised pyarrow's ArrowInvalid: 65538 does not fit
    the int16 record-type column)."""
    pa = pytest.importorskip("pyarrow")
    from kcodec import log
    from kcodec.kraft import read_record
    from kcodec.spark import _kernels as K
    vals = [r.value for b in log.iter_batches(str(HOSTILE / "frames" / "00000000000000000000.log"))
            for r in b.records]
    got = K.decode_metadata(pa.array(vals, pa.binary()))
    full = K._metadata_out(K._metadata_selected(None), False, None).full
    want = pa.array([K._metadata_row(read_record(v), full) for v in vals], type=got.type)
    assert got.to_pylist() == want.to_pylist()
    assert [r[K.ERROR] for r in got.to_pylist()][5] == "Value for type was too large."
