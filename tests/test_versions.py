"""kcodec.versions: Kafka release and KIP-778 metadata.version names, ordered."""
from __future__ import annotations

import pytest

from kcodec.offsets import downgrade
from kcodec.versions import metadata_version, metadata_versions, parse_version


def test_parse_and_order():
    names = ["0.10.1", "2.1", "3.7-IV0", "3.7-IV4", "3.7", "3.7.1", "3.8-IV0", "4.1-IV1", "4.1.1"]
    vs = [parse_version(n) for n in names]
    assert vs == sorted(vs) and len(set(vs)) == len(vs)
    assert parse_version("3.7") == parse_version("3.7.0") and str(parse_version("3.7.0")) == "3.7"
    assert str(parse_version("4.1-IV1")) == "4.1-IV1" and parse_version("4.1-IV1").release == (4, 1, 0)
    for bad in ("", "3", "x.y", "3.7.1-IV2", "3.7-IVx", "3.7-iv1"):
        with pytest.raises(ValueError):
            parse_version(bad)


def test_metadata_versions_are_kafkas():
    levels = metadata_versions()
    assert [m.feature_level for m in levels] == list(range(7, 30))
    assert metadata_version(7).version == parse_version("3.3-IV3")
    assert metadata_version("3.7-IV4").feature_level == 19
    assert metadata_version("3.7").name == "IBP_3_7_IV4"        # fromVersionString: latest production
    assert metadata_version("4.1.1").name == "IBP_4_1_IV1"
    assert metadata_version("IBP_3_7_IV4").feature_level == 19
    assert metadata_version("3.5-IV2").did_metadata_change
    for bad in (6, "3.2-IV0", "5.0", "4.2", "IBP_9_9_IV9"):   # 4.2: only testing levels
        with pytest.raises(ValueError):
            metadata_version(bad)


def test_downgrade_reads_metadata_version_names():
    assert downgrade.parse_version("3.7-IV4") == downgrade.parse_version("3.7") == (3, 7, 0)
