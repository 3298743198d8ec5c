"""The KRaft metadata image kernels (csrc/kc_kraft_image.c): edge cases through the Python API."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

from kcodec import log
from kcodec.kraft import encode_record, replay

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
    with np.errstate(over="ignore"):
        img = replay(log.encode_batch(recs))
    p = img.partition("a", 0)
    assert img.issues == []
    assert (p["leaderEpoch"], p["partitionEpoch"]) == (-2**31, -2**31)
