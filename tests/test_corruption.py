"""Corrupt input never becomes a result (issue 20): seeded corrupted copies of the fixture
logs (bit flips inside batches, cuts, garbage) through every domain, on both engines.

The oracle is the log itself, not a list of expected groups: a batch must be read when
no byte its CRC covers changed (its first 8 and bytes 12..15, base offset and partition
leader epoch, are outside the CRC in Kafka's format v2) and it lies before any cut; any
other batch must fail.  Every domain's result on the corrupted copy must then equal its
result on the *filtered* copy: the same files holding only the batches the log reader
read.  That is "every record of every CRC-valid batch is read, nothing of a failed batch
is in any result"; and the run must say so (errors, issues, exit code 3).
"""
from __future__ import annotations

import functools
import os
import random
from pathlib import Path
from typing import Dict, List, Tuple

import numpy as np
import pytest

import kcodec
from kcodec import _codec_py, log
from kcodec.kraft import encode_record, iter_record_columns, replay
from kcodec.log import _impl, _records_py
from kcodec.offsets.state import fold_log

from ._shared import fixtures_dir

FIX = fixtures_dir()
FIXTURES = {
    "offsets": FIX / "consumer_offsets" / "segments",
    "kraft": FIX / "cluster_metadata" / "segments",
    "other": FIX / "other_internal" / "segments",
}
pytestmark = pytest.mark.skipif(not FIXTURES["offsets"].exists(), reason="shared fixtures missing")

SEEDS = range(2)
TWIN_KINDS = ("flip", "mixed")     # the pure-Python twins (slower) run these, first seed
KINDS = ("flip", "cut", "garbage", "mixed")


def _use(engine: str, monkeypatch) -> None:
    """Every native piece (codec engine, batch scanner, KRaft image kernels), or every
    pure-Python twin (what KCODEC_NO_EXTENSIONS=1 runs)."""
    if engine == "py":
        from kcodec.kraft import _image_py, image as image_mod
        monkeypatch.setattr(kcodec, "_engine", _codec_py)
        monkeypatch.setattr(kcodec, "NATIVE", False)
        monkeypatch.setattr(_impl, "records", _records_py)
        monkeypatch.setattr(image_mod, "_kernels", _image_py)
    elif not (kcodec.NATIVE and log.NATIVE):
        pytest.skip("C extensions not built")


@pytest.fixture(params=["c", "py"])
def engines(request, monkeypatch):
    _use(request.param, monkeypatch)
    return request.param


# --------------------------------------------------------------------------- corrupted copies

def _log_files(root: Path) -> Dict[str, bytes]:
    return {os.path.relpath(f, root): Path(f).read_bytes() for f in log.log_files(root)}


class Damage:
    """What was done to one file: changed byte positions and where it was cut."""

    def __init__(self, size: int) -> None:
        self.changed: set = set()
        self.cut = size


def _corrupt(rng: random.Random, files: Dict[str, bytes], kind: str
             ) -> Tuple[Dict[str, bytes], Dict[str, Damage]]:
    out = dict(files)
    damage: Dict[str, Damage] = {}
    names = sorted(n for n, d in files.items() if d)
    for name in rng.sample(names, min(len(names), rng.randint(1, 3))):
        data = bytearray(out[name])
        d = damage[name] = Damage(len(data))
        k = kind if kind != "mixed" else rng.choice(("flip", "cut", "garbage"))
        if k == "flip":
            for _ in range(rng.randint(1, 3)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif k == "cut":
            d.cut = rng.randrange(1, len(data))
            data = data[:d.cut]
        else:
            if rng.random() < 0.25:              # garbage after the last batch
                data += rng.randbytes(rng.randint(1, 200))
            else:
                p = rng.randrange(len(data))
                n = min(rng.randint(1, 64), len(data) - p)
                data[p:p + n] = rng.randbytes(n)
        n = min(len(data), len(files[name]))
        d.changed = set(np.flatnonzero(np.frombuffer(bytes(data[:n]), np.uint8)
                                       != np.frombuffer(files[name][:n], np.uint8)).tolist())
        out[name] = bytes(data)
    return out, damage


_OUTSIDE_CRC = frozenset(range(8)) | frozenset(range(12, 16))


@functools.lru_cache(maxsize=None)
def _original(fixture: str) -> Dict[str, Dict[int, Tuple[int, list]]]:
    """Per file of the fixture: batch position -> (size, records), as read intact."""
    out = {}
    for name, data in _log_files(FIXTURES[fixture]).items():
        bs = list(log.iter_batches(data))
        assert all(b.ok and b.magic == 2 for b in bs) and sum(b.size for b in bs) == len(data)
        out[name] = {b.position: (b.size, b.records) for b in bs}
    return out


def _expected_ok(batches: Dict[int, Tuple[int, list]], dmg: Damage) -> List[int]:
    """Positions of the batches that must still read: before the cut, no byte under the
    CRC changed (base offset and leader epoch are outside it)."""
    ok = []
    for pos, (size, _recs) in batches.items():
        if pos + size > dmg.cut:
            continue
        if {p - pos for p in dmg.changed if pos <= p < pos + size} <= _OUTSIDE_CRC:
            ok.append(pos)
    return ok


def _write(root: Path, files: Dict[str, bytes]) -> Path:
    for name, data in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


@functools.lru_cache(maxsize=None)
def _corrupted(fixture: str, seed: int, kind: str):
    orig = _log_files(FIXTURES[fixture])
    files, damage = _corrupt(random.Random(f"{fixture}/{seed}/{kind}"), orig, kind)
    batches = _original(fixture)
    ok = {n: _expected_ok(batches[n], damage[n]) if n in damage else list(batches[n])
          for n in files}
    # the oracle's copy: only the batches that must read, from the corrupted bytes
    filtered = {n: b"".join(files[n][p:p + batches[n][p][0]] for p in ok[n]) for n in files}
    return files, damage, ok, filtered


class Case:
    """A corrupted copy of a fixture (``bad``) and, on disk next to it, the same files
    holding only the batches that must read (``good``)."""

    def __init__(self, tmp: Path, fixture: str, seed: int, kind: str) -> None:
        self.orig = _original(fixture)
        self.files, self.damage, self.ok, filtered = _corrupted(fixture, seed, kind)
        self.bad = _write(tmp / "bad", self.files)
        self.good = _write(tmp / "good", filtered)
        # what the reader under test reports (checked against the bytes in test_log_...)
        self.failed = [b.error for b in log.iter_batches(self.bad) if not b.ok]

    def norm(self, text: str) -> str:
        return text.replace(str(self.bad), "ROOT").replace(str(self.good), "ROOT")


def _case_ids(fixtures, every: int = 1):
    """(engine, fixture, seed, kind) cases; ``every``: one seed in so many."""
    return [pytest.param(e, f, s, k, id=f"{e}-{f}-{k}-{s}")
            for e in ("c", "py") for f in fixtures for k in KINDS for s in SEEDS
            if s % every == 0 and (e == "c" or (s == 0 and k in TWIN_KINDS))]


# --------------------------------------------------------------------------- the log reader

@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("offsets", "kraft", "other")))
def test_log_reads_every_valid_batch_and_nothing_of_a_failed_one(engine, monkeypatch, tmp_path, fixture, seed, kind):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    for name in case.damage:
        data, dmg = case.files[name], case.damage[name]
        got = list(log.iter_batches(data))
        assert [b.position for b in got if b.ok] == case.ok[name], name
        # a failure is reported exactly when some bytes are not in a batch that read
        assert any(not b.ok for b in got) == (len(data) > sum(b.size for b in got if b.ok)), name
        for b in got:
            if not b.ok:
                assert b.records == [] and b.error.reason
            elif not any(b.position <= p < b.position + b.size for p in dmg.changed):
                assert b.records == case.orig[name][b.position][1]     # untouched: as it was
    # every reader over the corrupted directory = the same reader over the filtered one
    def rows(root):
        n = len(str(root))
        return [(b.file[n:], r.offset, r.key, r.value, r.headers) for b, r in log.iter_records(root)]
    assert rows(case.bad) == rows(case.good)
    cb, cg = log.read_columns(case.bad, with_headers=True), log.read_columns(case.good, with_headers=True)
    for k in ("offset", "timestamp", "key", "value", "headers", "batch_base_offset"):
        assert np.array_equal(np.asarray(cb[k], object), np.asarray(cg[k], object)), k
    assert len(cb["errors"]) == len(case.failed) and not cg["errors"]
    # the chunk arrays: no row, no inflated buffer, no count of a failed batch
    for ch in log.iter_chunks(case.bad, chunk_size=1 << 12):
        for i in ch.errors:
            assert int(ch.batches["records_parsed"][i]) == 0 and i not in ch.inflated
        assert not np.isin(ch.records["batch_index"], list(ch.errors)).any()
        for i in range(len(ch.batches)):
            n, first = int(ch.batches["records_parsed"][i]), int(ch.batches["first_record"][i])
            if i not in ch.inflated and n:
                assert (ch.records["batch_index"][first:first + n] == i).all()
    # salvage: a forensic opt-in, every salvaged row flagged
    sal = log.read_columns(case.bad, salvage=True)
    assert len(sal["offset"]) >= len(cb["offset"])
    assert int((~sal["damaged"]).sum()) == len(cb["offset"])
    assert np.array_equal(sal["offset"][~sal["damaged"]], cb["offset"])


# --------------------------------------------------------------------------- offsets

def _offsets_state(case: Case, root: Path, fast: bool):
    st = fold_log(root, fast=fast)
    errors = st.errors
    st.errors = []
    return case.norm(repr(st)), errors


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "slow"])
@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("offsets",)))
def test_offsets_fold(engine, monkeypatch, tmp_path, fixture, seed, kind, fast):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    got, errors = _offsets_state(case, case.bad, fast)
    want, want_errors = _offsets_state(case, case.good, fast)
    assert got == want
    assert not want_errors
    assert len(errors) == len(case.failed)
    for e in case.failed:      # each failed batch named, with its file and position
        assert any(f"@{e.position}: {e.reason}" in x for x in errors)


def _cli(argv: List[str], capsys) -> Tuple[int, str, str]:
    from kcodec.cli import main
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("offsets",), 2))
def test_offsets_groups_cli(engine, monkeypatch, tmp_path, capsys, fixture, seed, kind):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    code, out, err = _cli(["offsets", "groups", "--verbose", str(case.bad)], capsys)
    gcode, gout, _ = _cli(["offsets", "groups", "--verbose", str(case.good)], capsys)
    assert gcode == 0
    assert code == (3 if case.failed else 0)
    kept = [l for l in out.splitlines() if not l.startswith("error: ") and "corrupt batch" not in l]
    assert case.norm("\n".join(kept)) == case.norm(gout.rstrip("\n"))
    assert sum(l.startswith("error: ") for l in out.splitlines()) == len(case.failed)
    # check-downgrade: no verdict passed off as safe on a damaged log
    code, out, _ = _cli(["offsets", "check-downgrade", "--to", "4.0", str(case.bad)], capsys)
    if case.failed:
        assert code != 0 and not out.startswith("OK")


# --------------------------------------------------------------------------- KRaft

def _image_state(case: Case, img) -> str:
    s = img.summary()
    s.pop("issues"), s.pop("corrupt_batches")
    topics = {t: img.topic(t) for t in img.topic_names()}
    return case.norm(repr((s, topics, img.brokers, img.controllers, img.configs, img.features,
                           img.producer_ids, img.acls, img.record_counts)))


@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("kraft",)))
def test_kraft_replay(engine, monkeypatch, tmp_path, fixture, seed, kind):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    img, ref = replay(case.bad), replay(case.good)
    assert _image_state(case, img) == _image_state(case, ref)
    assert not ref.damaged and not ref.batch_errors
    assert [str(e) for e in img.batch_errors] == [str(e) for e in _errors_of(case.bad)]
    assert img.damaged == bool(case.failed)
    assert len([i for i in img.issues if i.kind == "error" and i.api_key is None]) >= len(case.failed)


def _errors_of(root: Path):
    return [b.error for b in log.iter_batches(root) if not b.ok]


def _columns(source) -> Tuple[list, list]:
    it = iter_record_columns(source)
    rows = []
    for name, ver, batch in it:
        d = batch.to_pydict()
        rows += [(name, ver, o, e) for o, e in zip(d["offset"], d["_error"])]
    return sorted(rows, key=repr), it.errors


@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("kraft",), 2))
def test_kraft_iter_record_columns(engine, monkeypatch, tmp_path, fixture, seed, kind):
    _use(engine, monkeypatch)
    pytest.importorskip("pyarrow")
    case = Case(tmp_path, fixture, seed, kind)
    got, errors = _columns(case.bad)
    want, none = _columns(case.good)
    assert got == want and not none
    assert [str(e) for e in errors] == [str(e) for e in _errors_of(case.bad)]


@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("kraft",), 2))
def test_kraft_dump_cli(engine, monkeypatch, tmp_path, capsys, fixture, seed, kind):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    code, out, err = _cli(["kraft", "dump", str(case.bad)], capsys)
    gcode, gout, _ = _cli(["kraft", "dump", str(case.good)], capsys)
    assert gcode == 0 and code == (3 if case.failed else 0)
    records = sorted(l for l in out.splitlines() if l.startswith("| offset:"))
    assert records == sorted(l for l in gout.splitlines() if l.startswith("| offset:"))
    assert err.count("corrupt batch") == len([e for e in case.failed])


@pytest.mark.parametrize("engine,fixture,seed,kind", _case_ids(("kraft",), 2))
def test_features_commands(engine, monkeypatch, tmp_path, capsys, fixture, seed, kind):
    _use(engine, monkeypatch)
    case = Case(tmp_path, fixture, seed, kind)
    damaged = replay(case.bad).damaged
    code, out, err = _cli(["features", "describe", str(case.bad)], capsys)
    gcode, gout, _ = _cli(["features", "describe", str(case.good)], capsys)
    assert gcode == 0
    if damaged:
        assert code == 3 and out == "" and "damaged" in err
    else:
        assert code == 0 and case.norm(out) == case.norm(gout)
    snap = tmp_path / "snap.checkpoint"
    code, out, err = _cli(["features", "rewrite", "--to", "3.9-IV0", str(case.bad), str(snap)], capsys)
    if damaged:
        assert code == 3 and not snap.exists() and "lossless" not in out and "damaged" in err
    else:
        assert code == 0 and snap.exists()
    code, out, err = _cli(["features", "upgrade", "--dry-run", "--feature", "group.version=1",
                           str(case.bad)], capsys)
    if damaged:
        assert code == 3 and out == "" and "damaged" in err


# --------------------------------------------------------------------------- the issue's reproducers

def _flipped_group_version() -> bytes:
    v = encode_record("FeatureLevelRecord", {"name": "group.version", "featureLevel": 1}, 0)
    s = bytearray(log.encode_batch([(None, v)]))
    s[bytes(s).rfind(v) + len(v) - 3] ^= 1
    return bytes(s)


def test_replay_never_applies_a_failed_batch(engines):
    img = replay(_flipped_group_version())
    assert "group.version" not in img.features          # was {'group.version': 257}
    assert img.damaged and [e.reason for e in img.batch_errors] == ["bad_crc"]
    assert any(i.kind == "error" and "bad_crc" in i.message for i in img.issues)


def test_iter_record_columns_never_returns_a_failed_batch(engines):
    pytest.importorskip("pyarrow")
    cols = iter_record_columns(_flipped_group_version())
    assert list(cols) == []
    assert [e.reason for e in cols.errors] == ["bad_crc"]


def test_log_readers_withhold_a_failed_batch_and_salvage_flags_it(engines):
    data = log.encode_batch([(b"k", b"v")]) + _flipped_group_version() \
        + log.encode_batch([(b"k2", b"v2")], base_offset=5)
    assert [len(b.records) for b in log.iter_batches(data)] == [1, 0, 1]
    assert [r.key for _, r in log.iter_records(data)] == [b"k", b"k2"]
    cols = log.read_columns(data)
    assert cols["key"] == [b"k", b"k2"] and [e.reason for e in cols["errors"]] == ["bad_crc"]
    sal = log.read_columns(data, salvage=True)
    assert sal["damaged"].tolist() == [False, True, False]
    assert [b.error is not None for b in log.iter_batches(data, salvage=True)
            for _ in b.records] == [False, True, False]


def _write_kraft(tmp_path: Path, data: bytes) -> Path:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(data)
    return d


def test_features_rewrite_refuses_a_damaged_log(engines, tmp_path, capsys):
    good = log.encode_batch([(None, encode_record("FeatureLevelRecord",
                                                  {"name": "metadata.version", "featureLevel": 27}, 0))])
    d = _write_kraft(tmp_path, good + _flipped_group_version())
    out_file = tmp_path / "snap.checkpoint"
    code, out, err = _cli(["features", "rewrite", "--to", "3.9-IV0", str(d), str(out_file)], capsys)
    assert code == 3 and not out_file.exists()
    assert "lossless" not in out and "damaged" in err and "bad_crc" in err
    code, out, err = _cli(["features", "describe", str(d)], capsys)
    assert code == 3 and out == "" and "damaged" in err
    code, out, err = _cli(["features", "upgrade", "--dry-run", "--feature", "group.version=1", str(d)], capsys)
    assert code == 3 and out == "" and "damaged" in err
    # the library refuses too, unless told the damage is accepted
    from kcodec.errors import CorruptRecordError
    from kcodec.kraft import write_snapshot
    img = replay(d)
    with pytest.raises(CorruptRecordError, match="damaged"):
        write_snapshot(img, out_file, to="3.9-IV0")
    assert not out_file.exists()
    rep = write_snapshot(img, out_file, to="3.9-IV0", allow_damaged=True)
    assert rep.lossy and rep.damage and "bad_crc" in rep.damage[0]


@pytest.mark.parametrize("what", ["garbage", "empty_dir", "empty_file"])
def test_features_rewrite_of_what_is_not_a_log(engines, tmp_path, capsys, what):
    if what == "garbage":
        src = tmp_path / "00000000000000000000.log"
        src.write_bytes(random.Random(1).randbytes(3000))
    elif what == "empty_dir":
        src = tmp_path / "empty"
        src.mkdir()
    else:
        src = tmp_path / "00000000000000000000.log"
        src.write_bytes(b"")
    out_file = tmp_path / "snap.checkpoint"
    code, out, err = _cli(["features", "rewrite", "--to", "3.9-IV0", str(src), str(out_file)], capsys)
    # random bytes are not a log (the exit-code contract: a usage or path error, 1)
    assert code == 1 and not out_file.exists()
    assert "Wrote" not in out and "lossless" not in out and err


def test_kraft_dump_says_a_batch_failed(engines, tmp_path, capsys):
    d = _write_kraft(tmp_path, _flipped_group_version())
    code, out, err = _cli(["kraft", "dump", str(d)], capsys)
    assert code == 3 and "isvalid: false" in out and "| offset:" not in out
    assert "bad_crc" in err
    # --salvage: Kafka's forensic view (the records after the isvalid: false line), still exit 3
    code, out, err = _cli(["kraft", "dump", "--salvage", str(d)], capsys)
    assert code == 3 and "isvalid: false" in out and '"featureLevel":257' in out


def test_iter_log_reports_a_failed_batch_as_an_entry(engines):
    from kcodec.kraft import iter_log
    entries = list(iter_log(_flipped_group_version()))
    assert len(entries) == 1 and entries[0].batch.error is not None
    assert entries[0].record.status == "error" and "bad_crc" in entries[0].record.error
    assert entries[0].value is None


def test_to_kafka_message_never_encodes_a_null_or_failed_row():
    pa = pytest.importorskip("pyarrow")
    from kcodec.spark import _kernels as K
    good = kcodec.encode("OffsetCommitValue", {"offset": 7, "leaderEpoch": 1, "metadata": "",
                                               "commitTimestamp": 5}, 3)
    dec = K.decode_message(pa.array([good, None, b"\x00"], pa.binary()), "OffsetCommitValue", 3)
    assert dec[1].as_py() is None                      # a null value is a null row
    assert dec[2].as_py()["_error"]                    # a failed one says why
    out = K.encode_message(dec, "OffsetCommitValue", 3, mode=K.PERMISSIVE).to_pylist()
    assert out[0] == {"value": good, "_error": None}
    assert out[1]["value"] is None and "null" in out[1]["_error"]         # was a default message
    assert out[2]["value"] is None and "failed decode" in out[2]["_error"]
    for rows in ([dec[1].as_py()], [dec[2].as_py()]):
        with pytest.raises(K.FailFastError, match="row 0"):
            K.encode_message(pa.array(rows, dec.type), "OffsetCommitValue", 3)
    assert K.encode_message(dec.slice(0, 1), "OffsetCommitValue", 3).to_pylist() == [good]


def test_without_extensions_as_users_start_it(tmp_path, capsys, monkeypatch):
    """The command as a user runs it with KCODEC_NO_EXTENSIONS=1 (every twin, fresh
    process) says what the in-process run says about the same corrupted copy."""
    import subprocess
    import sys
    case = Case(tmp_path, "offsets", 0, "flip")
    assert case.failed
    env = dict(os.environ, KCODEC_NO_EXTENSIONS="1")
    r = subprocess.run([sys.executable, "-m", "kcodec.cli", "offsets", "groups", "--verbose", str(case.bad)],
                       capture_output=True, text=True, env=env, timeout=300)
    code, out, _ = _cli(["offsets", "groups", "--verbose", str(case.bad)], capsys)
    assert r.returncode == code == 3 and r.stdout == out and "Traceback" not in r.stderr


def test_a_fifo_among_segments_is_refused_not_waited_on(tmp_path):
    # opening a FIFO blocks until a writer comes: the log layer refuses it before open()
    import os
    from kcodec import log
    from kcodec.errors import InputPathError
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    os.mkfifo(d / "00000000000000000000.log")
    with pytest.raises(InputPathError, match="not a regular file"):
        list(log.iter_batches(str(tmp_path)))
