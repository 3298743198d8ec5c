"""The HTML report, rendered in a real headless browser (Debian's Chromium) with the network
cut off: on the Kafka 4.1.1 broker fixture and on a generated log of many groups.

Set KCODEC_UPDATE_SCREENSHOT=1 to refresh docs/img/report.png from the fixture's report."""
import html.parser
import os
import re
import shutil
import subprocess
import sys

import pytest

from ._shared import REPO, fixtures_dir, require

pytest.importorskip("plotly")
pytest.importorskip("pyarrow")

from kcodec.spark.report import find_storms, local_analysis, render_report, write_report  # noqa: E402

SEGMENTS = fixtures_dir() / "consumer_offsets" / "segments"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")


def _chromium(url, *extra, timeout=120):
    # no network: every host name fails to resolve and any proxy use goes nowhere
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--proxy-server=127.0.0.1:9", "--virtual-time-budget=15000", "--enable-logging=stderr",
           "--v=0", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


class _Page(html.parser.HTMLParser):
    """What a person sees in the rendered DOM: charts (SVG from plotly), the filter's options,
    tables (headers and first cells), rows hidden by the filter."""

    def __init__(self):
        super().__init__()
        self.svgs, self.options, self.headers, self.urls = 0, [], [], []
        self.tables, self.hidden_rows, self.rows = 0, [], []
        self._in = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "main-svg" in (a.get("class") or ""):
            self.svgs += 1
        if tag == "option":
            self.options.append(a.get("value"))
        if tag == "th":
            self._in = "th"
        if tag == "table":
            self.tables += 1
        if tag == "tr" and "data-group" in a:
            self.rows.append(a["data-group"])
            if "display: none" in (a.get("style") or ""):
                self.hidden_rows.append(a["data-group"])
        for k in ("src", "href"):
            v = a.get(k) or ""
            if re.match(r"(https?:)?//", v):
                self.urls.append(v)

    def handle_endtag(self, tag):
        if tag == "th":
            self._in = None

    def handle_data(self, data):
        if self._in == "th":
            self.headers.append(data.strip())


@pytest.fixture(scope="module")
def fixture_report(tmp_path_factory):
    require(SEGMENTS)
    a = local_analysis(str(SEGMENTS), downgrade_to="3.9")
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(a, str(path))
    return a, path


@pytest.fixture(scope="module")
def generated_report(tmp_path_factory):
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import gen_offsets_log
    finally:
        sys.path.pop(0)
    d = tmp_path_factory.mktemp("gen")
    gen_offsets_log.generate(str(d), 1_500_000, seed=3)
    a = local_analysis(str(d))
    path = d / "report.html"
    write_report(a, str(path))
    return a, path


def _static_checks(path):
    text = path.read_text(encoding="utf-8")
    # self-contained: no element loads anything from elsewhere; plotly.js is inside, once
    p = _Page()
    p.feed(text)
    assert p.urls == []
    assert text.count("<script>") >= 2 and "cdn.plot.ly" not in re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    outside = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", outside)
    assert text.count("Plotly.register") <= 1 or text.count("plotly.js v") <= 2
    return text


def test_report_tables_say_protocol_type_and_assignor_apart(fixture_report):
    a, path = fixture_report
    text = _static_checks(path)
    p = _Page()
    p.feed(text)
    for h in ("protocol type", "assignor", "static members (instance ids)", "generation / epoch",
              "joined (client @ host)", "left (client @ host)", "minutes with commits"):
        assert h in p.headers, h
    assert ("members joined" in p.headers) == bool(find_storms(a.group_events))
    assert "Nothing flagged" in text
    assert "Downgrade blockers for Kafka 3.9" in text
    # every group is in the filter, and in the groups table
    names = {g["group_id"] for g in a.groups}
    assert names <= set(p.options)
    assert names <= set(p.rows)
    # the assignors Kafka names server-side appear when such groups have members
    kinds = {g["type"]: g for g in a.groups if g["members"]}
    for kind, name in (("share", "simple"), ("streams", "sticky")):
        if kind in kinds:
            assert f"<td>{name}</td>" in text


@needs_browser
def test_fixture_report_renders_offline_in_chromium(fixture_report, tmp_path):
    a, path = fixture_report
    r = _chromium(path.as_uri(), "--dump-dom")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Uncaught" not in r.stderr, r.stderr[-2000:]
    p = _Page()
    p.feed(r.stdout)
    charts = len(re.findall(r'<div class="chart" id="', r.stdout))
    assert charts >= 3                       # epochs, members, rebalances, commits on this data
    assert p.svgs >= charts                  # each drew SVG in the browser (plotly's main-svg)
    assert "Group epoch over time" in r.stdout and "Offset commits per minute" in r.stdout
    assert {g["group_id"] for g in a.groups} <= set(p.options)
    assert p.tables >= 4 and p.hidden_rows == []
    shot = tmp_path / "report.png"
    r = _chromium(path.as_uri(), f"--screenshot={shot}", "--window-size=1400,1800")
    assert r.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 50_000      # a page with charts, not a blank one
    if os.environ.get("KCODEC_UPDATE_SCREENSHOT"):
        shutil.copy(shot, REPO / "docs" / "img" / "report.png")


@needs_browser
def test_filter_by_group_in_the_browser(fixture_report):
    a, path = fixture_report
    g = next(e["group_id"] for e in a.group_events if e["rebalance"])
    r = _chromium(path.as_uri() + "#group=" + g, "--dump-dom")
    assert r.returncode == 0
    p = _Page()
    p.feed(r.stdout)
    assert p.hidden_rows and g not in p.hidden_rows
    assert set(p.rows) - {g} == set(p.hidden_rows)


@needs_browser
def test_generated_log_of_many_groups_renders(generated_report):
    a, path = generated_report
    _static_checks(path)
    assert len(a.groups) >= 100
    r = _chromium(path.as_uri(), "--dump-dom")
    assert r.returncode == 0 and "Uncaught" not in r.stderr, r.stderr[-2000:]
    p = _Page()
    p.feed(r.stdout)
    assert p.svgs >= 3
    assert {g["group_id"] for g in a.groups} <= set(p.options)
    assert a.group_events and a.commit_counts
    charts = set(re.findall(r'<div class="chart" id="([^"]+)"', r.stdout))
    assert charts == {"chart-epochs", "chart-members", "chart-rebalances", "chart-commits"}


def test_flagged_records_name_file_and_position(tmp_path):
    """A segment with a damaged batch: the report lists it with its file and byte position."""
    src = require(SEGMENTS) / "__consumer_offsets-0" / "00000000000000000000.log"
    data = bytearray(src.read_bytes())
    data[61 + 20] ^= 0xFF                   # inside the first batch's records: its CRC fails
    bad = tmp_path / "__consumer_offsets-0" / "00000000000000000000.log"
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    a = local_analysis(str(bad.parent))
    assert a.corrupt_batches == 1 and a.flagged_rows[0]["position"] == 0
    text = render_report(a)
    p = _Page()
    p.feed(text)
    assert {"file", "position", "offset", "reason"} <= set(p.headers)
    assert str(bad) in text


def test_no_empty_charts():
    """A log with no group records and no commits gets no charts at all (and no plotly.js)."""
    from kcodec.spark.report import LocalAnalysis
    a = LocalAnalysis("empty", 0, 0, 0, [], [], 0, {}, [], [], [], [])
    text = render_report(a)
    assert 'class="chart"' not in text and "Plotly" not in text.split("<body>")[1]
    assert "Nothing flagged" in text


def test_kraft_metadata_tables_render_generically():
    """``Analysis.metadata`` (table name -> rows) becomes one table per name, columns from the rows."""
    from kcodec.spark.report import LocalAnalysis
    a = LocalAnalysis("m", 0, 0, 0, [], [], 0, {}, [], [], [], [],
                      metadata={"feature levels": [{"offset": 3, "feature": "metadata.version", "level": 27},
                                                   {"offset": 9, "feature": "kraft.version", "level": 1}]})
    text = render_report(a)
    p = _Page()
    p.feed(text)
    assert "KRaft metadata: feature levels" in text
    assert {"offset", "feature", "level"} <= set(p.headers)
    assert "<td>metadata.version</td>" in text and "<td>27</td>" in text


def test_analyze_timeline_stays_packed_and_reads_as_the_timeline_of_each_partition():
    """The fold's timeline leaves each task packed (its rows follow their partition's row)
    and the Analysis reads it back: every partition's group events and commit counts as
    kcodec.offsets.timeline computes them, in the partitions' order, and the storms of
    the rows are the storms of the lists."""
    import pickle

    from kcodec.offsets import iter_offset_columns
    from kcodec.offsets.timeline import Timeline
    from kcodec.spark._fold import PackedRows, fold_partition
    from kcodec.spark._source import _natural
    from kcodec.spark.analyze import _load_fold_rows, _timeline_rows
    require(SEGMENTS)
    dirs = sorted(SEGMENTS.iterdir(), key=lambda d: _natural(d.name))
    rows = [r for d in dirs for r in fold_partition(d.name, [str(f) for f in sorted(d.glob("*.log"))])]
    assert all(isinstance(data, bytes) for t, data in rows if t in ("partitions", "group_events", "commit_counts"))
    parts = _load_fold_rows(rows)["partitions"]
    assert [p["partition"] for p in parts] == [d.name for d in dirs]
    events, counts = _timeline_rows(parts, "group_events"), _timeline_rows(parts, "commit_counts")
    want = {"group_events": [], "commit_counts": []}
    for d in dirs:
        tl = Timeline()
        for cols in iter_offset_columns(str(d)):
            tl.add_columns(cols, partition=d.name)
        for k, v in tl.result().items():
            want[k] += v
    assert want["group_events"] and want["commit_counts"]
    for got, exp in ((events, want["group_events"]), (counts, want["commit_counts"])):
        assert isinstance(got, PackedRows) and len(got) == len(exp) and list(got) == exp and got == exp
        assert got[0] == exp[0] and got[-1] == exp[-1] and got[len(exp) // 2] == exp[len(exp) // 2]
        assert got[1:4] == exp[1:4] and pickle.loads(pickle.dumps(got)) == exp
        with pytest.raises(IndexError):
            got[len(exp)]
    assert find_storms(events) == find_storms(want["group_events"])
