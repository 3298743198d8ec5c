"""The KRaft metadata image kernels (csrc/kc_kraft_image.c) on their own: warning-free C99, a
short fuzz run under ASan + UBSan (csrc/fuzz/fuzz_kraft_image.c; KCODEC_FUZZ_SECONDS sets the
duration), and what that fuzzer found, through the Python API."""
from __future__ import annotations

import uuid
import warnings

import pytest

from kcodec import log
from kcodec.kraft import encode_record, replay

from .test_native_fuzz import CC, CSRC, SANITIZE, SECONDS, _compile, _run_fuzzer, _sanitizer_works

needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")


@needs_cc
@pytest.mark.parametrize("src", ["kc_kraft_image.c", "fuzz/fuzz_kraft_image.c"])
def test_c99_warning_free(src, tmp_path):
    _compile(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-I", str(CSRC),
              "-c", str(CSRC / src), "-o", str(tmp_path / "x.o")], tmp_path)


@needs_cc
def test_fuzz_kraft_image_asan(tmp_path):
    """The id index through put / drop / find, the partition index, and partition changes
    against a model of PartitionRegistration.merge."""
    if not _sanitizer_works(tmp_path):
        pytest.skip("the compiler cannot build with -fsanitize=address,undefined here")
    exe = tmp_path / "fuzz_kraft_image"
    _compile(SANITIZE + [str(CSRC / "kc_kraft_image.c"), str(CSRC / "fuzz" / "fuzz_kraft_image.c"),
                         "-o", str(exe)], tmp_path)
    _run_fuzzer(exe, [SECONDS, "3517"], tmp_path)


@pytest.mark.parametrize("twin", [False, True], ids=["kernel", "python-twin"])
def test_epochs_at_int32_max_wrap_as_in_java(twin, monkeypatch):
    # PartitionRegistration.merge bumps the epochs with Java's int + 1: a change to a
    # partition whose epochs are at INT32_MAX leaves them at INT32_MIN (the C kernel used
    # to overflow a signed int there, undefined behaviour)
    from kcodec.kraft import _image_py, image as image_mod
    if twin:
        monkeypatch.setattr(image_mod, "_kernels", _image_py)
    tid, top = uuid.UUID(int=9), 2**31 - 1
    recs = [(None, encode_record("TopicRecord", {"name": "a", "topicId": tid}, 0)),
            (None, encode_record("PartitionRecord", {
                "partitionId": 0, "topicId": tid, "replicas": [1], "isr": [1], "leader": 1,
                "leaderEpoch": top, "partitionEpoch": top}, 0)),
            (None, encode_record("PartitionChangeRecord", {"partitionId": 0, "topicId": tid,
                                                           "leader": 1}, 0))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the twin wraps as Java does, without NumPy's overflow warning
        img = replay(log.encode_batch(recs))
    p = img.partition("a", 0)
    assert img.issues == []
    assert (p["leaderEpoch"], p["partitionEpoch"]) == (-2**31, -2**31)


@pytest.mark.parametrize("twin", [False, True], ids=["kernel", "python-twin"])
def test_negative_partition_ids_of_two_topics_stay_apart(twin, monkeypatch):
    # The partition index keys on (topic index, partition id): a negative id must not
    # sign-extend over the topic's bits, or a/-1 and b/-1 share a key and a change to one
    # lands on the other (Kafka keeps each topic's partitions in a map of its own)
    from kcodec.kraft import _image_py, image as image_mod
    if twin:
        monkeypatch.setattr(image_mod, "_kernels", _image_py)
    ta, tb = uuid.UUID(int=1), uuid.UUID(int=2)

    def part(tid, pid):
        return (None, encode_record("PartitionRecord", {
            "partitionId": pid, "topicId": tid, "replicas": [1, 2], "isr": [1, 2], "leader": 1}, 0))
    recs = [(None, encode_record("TopicRecord", {"name": "a", "topicId": ta}, 0)),
            (None, encode_record("TopicRecord", {"name": "b", "topicId": tb}, 0)),
            part(ta, -1), part(ta, 0), part(tb, -1), part(tb, 0),
            (None, encode_record("PartitionChangeRecord", {"partitionId": -1, "topicId": ta, "leader": 2}, 0))]
    img = replay(log.encode_batch(recs))
    assert img.partition("a", -1)["leader"] == 2
    assert img.partition("b", -1)["leader"] == 1
    assert [img.partition(t, 0)["leader"] for t in "ab"] == [1, 1]
    assert img.partition_count() == 4
    with pytest.raises(KeyError):
        img.partition("a", 2**32 - 1)
