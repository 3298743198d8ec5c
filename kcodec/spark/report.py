"""The HTML report of ``kcodec analyze``: one self-contained file an SRE can send around.

What it shows, each part only when the data has it: per-group timelines (epoch and members
over time, with the members and client hosts that joined and left), rebalance storms,
commit rates per group and topic, the groups with protocol type and assignor in separate
columns and their static members, the assignor / rebalance-and-commit / deleted-group
tables the console prints, downgrade blockers for the chosen release, flagged records with
file and position, and KRaft metadata history tables.

Charts are plotly figures sharing one embedded copy of plotly.js: the file opens offline,
zooms, hovers and filters by group (a ``<select>`` that hides the other groups' traces and
table rows).  :func:`write_report` takes :class:`kcodec.spark.analyze.Analysis` or any
object with the same attributes: :func:`local_analysis` builds one in this process, from
segment files, without Spark.
"""
from __future__ import annotations

import dataclasses
import html
import json
import os
import sys
import time
from collections import defaultdict
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from kcodec.cli import plural

__all__ = ["write_report", "render_report", "print_summary", "local_analysis", "LocalAnalysis", "find_storms",
           "commit_rates", "group_rows"]

#: A storm: at least this many rebalances of one group ...
STORM_REBALANCES = 6
#: ... within this many milliseconds.
STORM_WINDOW_MS = 5 * 60_000
_MAX_TABLE_ROWS = 2000


# --------------------------------------------------------------------------- one-process input

@dataclasses.dataclass
class LocalAnalysis:
    """What :func:`write_report` reads, built without Spark (:func:`local_analysis`); the
    attribute names are :class:`kcodec.spark.analyze.Analysis`'s."""
    source: str
    records: int
    flagged: int
    corrupt_batches: int
    groups: List[Dict[str, Any]]
    deleted_groups: List[str]
    aborted_records: int
    unknown_records: Dict[str, int]
    errors: List[str]
    group_events: List[Dict[str, Any]]
    commit_counts: List[Dict[str, Any]]
    flagged_rows: List[Dict[str, Any]]
    downgrade: Optional[List[Dict[str, Any]]] = None
    downgrade_to: Optional[str] = None
    metadata: Optional[Dict[str, List[Dict[str, Any]]]] = None
    out: Optional[str] = None
    seconds: float = 0.0


def local_analysis(source: Any, *, downgrade_to: Optional[str] = None) -> LocalAnalysis:
    """Read ``__consumer_offsets`` segments (files or directories) in this process: the fold
    (:func:`kcodec.offsets.fold_log`'s), the :class:`~kcodec.offsets.timeline.Timeline` and
    the flagged records, as the Spark job computes them."""
    from kcodec.offsets import Folder, check_downgrade, iter_offset_columns
    from kcodec.offsets.timeline import Timeline, group_summary
    from kcodec.spark.analyze import _jsonable
    t0 = time.monotonic()
    folder, timeline = Folder(), Timeline()
    flagged: List[Dict[str, Any]] = []
    corrupt = 0
    for cols in iter_offset_columns(source):
        part = os.path.dirname(cols["file"]) if cols["file"] else None
        for e in cols["errors"]:
            corrupt += 1
            folder.errors.append(str(e))
            flagged.append({"file": e.file, "position": e.position, "offset": None,
                            "reason": f"{e.reason}: {e.message}"})
        for i, rec in cols["other"]:
            why = rec.error or ("unknown record type %d (skipped, KIP-915)" % rec.record_type if rec.unknown
                                else "value version %s is newer than Kafka 4.1.1's" % rec.value_version
                                if rec.newer_than_known else None)
            if why:
                flagged.append({"file": cols["file"], "position": _position(cols, i),
                                "offset": int(cols["offset"][i]), "reason": why})
        folder.add_columns(cols, partition=part)
        timeline.add_columns(cols, partition=part)
    st = folder.state()
    res = timeline.result()
    blockers = None
    if downgrade_to:
        blockers = [_jsonable(f) for f in check_downgrade(source, to=downgrade_to).summary()]
    return LocalAnalysis(
        source=str(source), records=st.records_read, flagged=len(flagged), corrupt_batches=corrupt,
        groups=[group_summary(g) for _, g in sorted(st.groups.items())],
        deleted_groups=sorted(st.deleted_groups), aborted_records=st.aborted_records,
        unknown_records={str(k): v for k, v in st.unknown_records.items()}, errors=list(st.errors),
        group_events=res["group_events"], commit_counts=res["commit_counts"], flagged_rows=flagged,
        downgrade=blockers, downgrade_to=downgrade_to, seconds=time.monotonic() - t0)


def _position(cols: Dict[str, Any], i: int) -> Optional[int]:
    for name in ("batch_position", "position"):
        col = cols.get(name)
        if col is not None:
            return int(col[i])
    return None


# --------------------------------------------------------------------------- derived tables

def group_rows(a: Any) -> List[Dict[str, Any]]:
    """``a.groups`` with the columns the report shows, whichever job made them: ``epoch``,
    ``protocol_type`` and ``assignor`` apart (an older row's ``protocol`` is a classic
    group's assignor; otherwise the group's last event names it), ``static_members``."""
    last: Dict[str, Dict[str, Any]] = {}
    last_assignor: Dict[str, str] = {}
    static_seen: Dict[str, set] = defaultdict(set)
    for e in getattr(a, "group_events", None) or []:
        last[e["group_id"]] = e
        if e.get("assignor"):
            last_assignor[e["group_id"]] = e["assignor"]
        static_seen[e["group_id"]].update(m["instance_id"] for m in e["joined"] if m.get("instance_id"))
    out = []
    for g in a.groups:
        r = dict(g)
        r.setdefault("epoch", g.get("generation"))
        if "assignor" not in g:
            ev = last.get(g["group_id"], {})
            r["assignor"] = (g.get("protocol") if g.get("type") == "classic" else None) or ev.get("assignor")
            if g.get("type") != "classic":
                r["protocol_type"] = None
        r.setdefault("static_members", [])
        r.setdefault("client_hosts", [])
        if not r.get("assignor") and g["group_id"] in last_assignor:
            # an Empty group names no assignor: the one it used when it last had members
            r["assignor"] = last_assignor[g["group_id"]] + " (last used)"
        r["static_seen"] = sorted(static_seen.get(g["group_id"], ()))
        out.append(r)
    return out


def find_storms(events: Iterable[Dict[str, Any]], *, window_ms: int = STORM_WINDOW_MS,
                min_rebalances: int = STORM_REBALANCES) -> List[Dict[str, Any]]:
    """Rebalance storms: per group, runs of rebalances (new generations / group epochs) with
    at least ``min_rebalances`` of them within ``window_ms``; overlapping windows merge.
    Each: group, start and end (ms), rebalances, members that joined and left."""
    # per rebalance only what a storm reports (timestamp, epoch, members joined and left):
    # a long history has many, and the events may be parsed one chunk at a time (PackedRows)
    by_group: Dict[str, List[Tuple[int, Any, int, int]]] = defaultdict(list)
    for e in events:
        if e.get("rebalance"):
            by_group[e["group_id"]].append((e["timestamp"], e["epoch"], len(e["joined"]), len(e["left"])))
    storms = []
    for gid, evs in by_group.items():
        evs.sort(key=lambda e: e[0])
        ts = [e[0] for e in evs]
        cur: Optional[List[int]] = None        # [first index, last index]
        for i in range(len(ts)):
            j = i + min_rebalances - 1
            if j < len(ts) and ts[j] - ts[i] <= window_ms:
                if cur is not None and i <= cur[1]:
                    cur[1] = j
                else:
                    if cur is not None:
                        storms.append(_storm(gid, evs, cur))
                    cur = [i, j]
        if cur is not None:
            storms.append(_storm(gid, evs, cur))
    return sorted(storms, key=lambda s: (s["start"], s["group_id"]))


def _storm(gid: str, evs: List[Tuple[int, Any, int, int]], span: List[int]) -> Dict[str, Any]:
    part = evs[span[0]:span[1] + 1]
    return {"group_id": gid, "start": part[0][0], "end": part[-1][0],
            "rebalances": len(part), "epochs": f"{part[0][1]}..{part[-1][1]}",
            "joined": sum(e[2] for e in part), "left": sum(e[3] for e in part)}


def commit_rates(counts: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Per group and topic: commits, the minutes with commits, the peak and mean per such
    minute, first and last minute."""
    acc: Dict[tuple, List[Any]] = {}
    for c in counts:
        k = (c["group_id"], c["topic"])
        r = acc.setdefault(k, [0, 0, 0, c["minute"], c["minute"]])
        r[0] += c["count"]
        r[1] += 1
        r[2] = max(r[2], c["count"])
        r[3] = min(r[3], c["minute"])
        r[4] = max(r[4], c["minute"])
    return [{"group_id": g, "topic": t, "commits": n, "minutes": m, "peak_per_minute": p,
             "mean_per_minute": round(n / m, 1), "first": lo * 60_000, "last": hi * 60_000}
            for (g, t), (n, m, p, lo, hi) in sorted(acc.items(), key=lambda kv: (-kv[1][0], kv[0]))]


def _assignor_rows(groups: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Assignors in use: per assignor and where it runs (a classic group's members, or the
    coordinator for consumer, share and streams groups), the groups using it."""
    n: Dict[tuple, int] = defaultdict(int)
    for g in groups:
        where = "client (classic group)" if g.get("type") == "classic" else f"server ({g.get('type')} group)"
        for name in (g.get("assignor") or "").replace(" (last used)", "").split(","):
            if name:
                n[(name, where)] += 1
    return [{"assignor": k[0], "runs on": k[1], "groups": v}
            for k, v in sorted(n.items(), key=lambda kv: (-kv[1], kv[0]))]


# --------------------------------------------------------------------------- HTML pieces

_e = html.escape


def _utc(ms: Optional[int]) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _iso(ms: int) -> str:
    # plotly reads naive ISO strings as they are: the axis is labelled UTC
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, (list, tuple)):
        return _e(", ".join(str(x) for x in v)) if v else "-"
    if isinstance(v, dict):
        return _e(json.dumps(v, default=str))
    if isinstance(v, bool):
        return "yes" if v else "no"
    return _e(str(v))


def _table(rows: Sequence[Dict[str, Any]], columns: Optional[Sequence[str]] = None, *,
           headers: Optional[Dict[str, str]] = None, group_key: Optional[str] = None,
           fmt: Optional[Dict[str, Any]] = None, row_class: Any = None) -> str:
    if not rows:
        return ""
    if columns is None:
        columns = list(dict.fromkeys(k for r in rows for k in r))
    headers = headers or {}
    fmt = fmt or {}
    head = "".join(f"<th>{_e(headers.get(c, c.replace('_', ' ')))}</th>" for c in columns)
    body = []
    for r in rows[:_MAX_TABLE_ROWS]:
        attrs = ""
        if group_key and r.get(group_key) is not None:
            attrs += f' data-group="{_e(str(r[group_key]))}"'
        cls = row_class(r) if row_class else None
        if cls:
            attrs += f' class="{cls}"'
        cells = "".join(f"<td>{fmt[c](r.get(c)) if c in fmt else _cell(r.get(c))}</td>" for c in columns)
        body.append(f"<tr{attrs}>{cells}</tr>")
    more = (f'<p class="note">first {_MAX_TABLE_ROWS:,} of {len(rows):,} rows (all of them are in the '
            f"Parquet tables)</p>" if len(rows) > _MAX_TABLE_ROWS else "")
    return f'<table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{more}'


def _who(ms: List[Dict[str, Any]]) -> str:
    return "<br>".join(_e(f"{m.get('client_id') or '?'} @ {m.get('client_host') or '?'}"
                          + (f" (static: {m['instance_id']})" if m.get("instance_id") else "")
                          + f" [{m['member_id']}]") for m in ms) or "-"


def _section(anchor: str, title: str, body: str, intro: str = "") -> Optional[str]:
    if not body:
        return None
    p = f'<p class="intro">{intro}</p>' if intro else ""
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{p}{body}</section>'


# --------------------------------------------------------------------------- charts

def _figures(a: Any, groups: List[str], storms: List[Dict[str, Any]]) -> List[tuple]:
    """(anchor, title, figure) for each chart the data supports."""
    import plotly.graph_objects as go
    events = getattr(a, "group_events", None) or []
    counts = getattr(a, "commit_counts", None) or []
    from plotly.colors import qualitative
    palette = qualitative.Dark24 + qualitative.Light24
    color = {g: palette[i % len(palette)] for i, g in enumerate(groups)}
    time_axis = dict(title="time (UTC)", type="date", tickformat="%H:%M:%S<br>%Y-%m-%d",
                     hoverformat="%Y-%m-%d %H:%M:%S.%L UTC")
    out = []

    def layout(fig: Any, title: str, ytitle: str, **kw: Any) -> None:
        fig.update_layout(title=None, xaxis=time_axis, yaxis=dict(title=ytitle, rangemode="tozero", **kw),
                          margin=dict(l=60, r=20, t=30, b=60), height=420, hovermode="closest",
                          legend=dict(title="group", itemclick="toggleothers"), template="plotly_white")

    def storm_shapes(fig: Any) -> None:
        for s in storms:
            fig.add_vrect(x0=_iso(s["start"] - 5_000), x1=_iso(s["end"] + 5_000), fillcolor="#d62728",
                          opacity=0.12, line_width=0, layer="below")

    by_group: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for e in events:
        by_group[e["group_id"]].append(e)
    if any(e["epoch"] is not None for e in events):
        fig = go.Figure()
        for g in groups:
            evs = [e for e in by_group.get(g, []) if e["epoch"] is not None]
            if not evs:
                continue
            fig.add_trace(go.Scatter(
                x=[_iso(e["timestamp"]) for e in evs], y=[e["epoch"] for e in evs], name=g, meta=g,
                mode="lines+markers", line=dict(shape="hv", color=color[g]),
                marker=dict(size=[11 if e["rebalance"] else 6 for e in evs],
                            symbol=["diamond" if e["rebalance"] else "circle" for e in evs]),
                customdata=[[e["state"], e["members"], e["kind"], _who(e["joined"]), _who(e["left"])]
                            for e in evs],
                hovertemplate=("<b>%{meta}</b> (%{customdata[2]})<br>%{x}<br>epoch %{y}, %{customdata[0]}, "
                               "%{customdata[1]} members<br>joined: %{customdata[3]}<br>left: %{customdata[4]}"
                               "<extra></extra>")))
        layout(fig, "Group epoch over time", "generation / group epoch")
        storm_shapes(fig)
        out.append(("chart-epochs", "Group epoch over time (rebalances as diamonds, storms shaded red)", fig))
    if any(e["members"] for e in events):
        fig = go.Figure()
        for g in groups:
            evs = by_group.get(g, [])
            if not any(e["members"] for e in evs):
                continue
            fig.add_trace(go.Scatter(
                x=[_iso(e["timestamp"]) for e in evs], y=[e["members"] for e in evs], name=g, meta=g,
                mode="lines+markers", line=dict(shape="hv", color=color[g]),
                customdata=[[e["state"], e["epoch"], _who(e["joined"]), _who(e["left"])] for e in evs],
                hovertemplate=("<b>%{meta}</b><br>%{x}<br>%{y} members, %{customdata[0]}, epoch %{customdata[1]}"
                               "<br>joined: %{customdata[2]}<br>left: %{customdata[3]}<extra></extra>")))
        layout(fig, "Members over time", "members", dtick=1 if max(e["members"] for e in events) <= 10 else None)
        storm_shapes(fig)
        out.append(("chart-members", "Members over time (with who joined and left)", fig))
    def per_minute(per: Dict[str, Dict[int, int]], what: str, anchor: str, title: str) -> None:
        """A stacked bar per group and minute."""
        if not per:
            return
        fig = go.Figure()
        for g in groups:
            if g in per:
                mins = sorted(per[g])
                fig.add_trace(go.Bar(x=[_iso(m * 60_000) for m in mins], y=[per[g][m] for m in mins], name=g,
                                     meta=g, marker_color=color[g], xperiod=60_000, xperiodalignment="start",
                                     hovertemplate=f"<b>%{{meta}}</b><br>%{{x}}<br>%{{y}} {what}<extra></extra>"))
        layout(fig, title, f"{what} per minute")
        fig.update_layout(barmode="stack", bargap=0.05)
        out.append((anchor, f"{title}, by group", fig))

    rebal: Dict[str, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for e in events:
        if e.get("rebalance"):
            rebal[e["group_id"]][e["timestamp"] // 60_000] += 1
    per_minute(rebal, "rebalances", "chart-rebalances", "Rebalances per minute")
    commits: Dict[str, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for c in counts:
        commits[c["group_id"]][c["minute"]] += c["count"]
    per_minute(commits, "offset commits", "chart-commits", "Offset commits per minute")
    return out


def _plotly_js() -> str:
    from plotly.offline import get_plotlyjs
    # a literal "</script" in the bundle would end the element early
    return get_plotlyjs().replace("</script", "<\\/script")


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222}
header{background:#1d3557;color:#fff;padding:1em 2em}header h1{margin:0 0 .3em 0;font-size:1.5em}
header p{margin:.2em 0}main{padding:0 2em 3em 2em;max-width:110em}
nav{position:sticky;top:0;background:#f1f4f8;padding:.6em 2em;border-bottom:1px solid #ccd;z-index:10}
nav a{margin-right:1em;color:#1d3557}nav select{margin-left:.5em;font-size:1em}
.cards{display:flex;flex-wrap:wrap;gap:1em;margin:1em 0}
.card{background:#f6f8fb;border:1px solid #dde;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.5em}.card.bad b{color:#c0392b}
table{border-collapse:collapse;margin:.5em 0 1.5em 0;font-size:.9em}
th{background:#eef1f6;text-align:left}td,th{border:1px solid #d5d9e0;padding:3px 8px;vertical-align:top}
tr.storm td{background:#fdecea}tr.dead td{color:#888}.note,.intro{color:#555}
h2{margin-top:1.6em;border-bottom:2px solid #1d3557;padding-bottom:.2em}
.chart{border:1px solid #e3e6ea;border-radius:6px;margin:1em 0;padding:.3em}
.chart h3{margin:.3em .5em;font-size:1.05em}
"""

_JS = """
function kcodecFilter(g){
  document.querySelectorAll('tr[data-group]').forEach(function(tr){
    tr.style.display = (!g || tr.getAttribute('data-group') === g) ? '' : 'none';});
  document.querySelectorAll('.chart .plotly-graph-div').forEach(function(div){
    if (!div.data) return;
    Plotly.restyle(div, {visible: div.data.map(function(t){ return !g || t.meta === g; })});});
  document.getElementById('filter-state').textContent = g ? ('showing ' + g + ' only') : '';
  if (history.replaceState) history.replaceState(null, '', g ? '#group=' + encodeURIComponent(g) : '#');
}
// a link to the report with #group=NAME opens filtered on that group
window.addEventListener('load', function(){
  var m = /^#group=(.+)$/.exec(location.hash);
  if (!m) return;
  var g = decodeURIComponent(m[1]), sel = document.getElementById('group-filter');
  sel.value = g;
  kcodecFilter(g);
});
"""


def render_report(a: Any) -> str:
    """The report as one HTML document (a string)."""
    events = getattr(a, "group_events", None) or []
    counts = getattr(a, "commit_counts", None) or []
    groups = group_rows(a)
    names = sorted({g["group_id"] for g in groups} | {e["group_id"] for e in events}
                   | {c["group_id"] for c in counts})
    storms = find_storms(events)
    storm_groups = {s["group_id"] for s in storms}
    figs = _figures(a, names, storms)
    config = {"displaylogo": False, "responsive": True, "scrollZoom": False,
              "toImageButtonOptions": {"format": "png", "scale": 2}}
    charts = "".join(
        f'<div class="chart" id="{anchor}"><h3>{_e(title)}</h3>'
        f'{fig.to_html(full_html=False, include_plotlyjs=False, config=config, div_id=anchor + "-plot")}</div>'
        for anchor, title, fig in figs)

    sections: List[Optional[str]] = []
    lo = min((e["timestamp"] for e in events), default=None)
    hi = max((e["timestamp"] for e in events), default=None)
    if counts:
        lo = min([x for x in (lo, min(c["minute"] for c in counts) * 60_000) if x is not None])
        hi = max([x for x in (hi, max(c["minute"] for c in counts) * 60_000 + 59_999) if x is not None])
    flagged_rows = getattr(a, "flagged_rows", None)
    cards = [("records", f"{a.records:,}", False), ("groups", f"{len(groups):,}", False),
             ("rebalances", f"{sum(1 for e in events if e.get('rebalance')):,}", False),
             ("rebalance storms", f"{len(storms):,}", bool(storms)),
             ("offset commits", f"{sum(c['count'] for c in counts):,}", False),
             ("flagged records", f"{a.flagged:,}", bool(a.flagged)),
             ("corrupt batches", f"{a.corrupt_batches:,}", bool(a.corrupt_batches))]
    cards_html = "".join(f'<div class="card{" bad" if bad else ""}"><b>{v}</b>{_e(k)}</div>' for k, v, bad in cards)
    sections.append(f'<section id="overview"><div class="cards">{cards_html}</div></section>')
    sections.append(_section("charts", "Timelines", charts,
                             "Zoom by dragging, double-click to reset; hover a point for the state and who "
                             "joined or left; click a legend entry to show that group alone."))
    sections.append(_section("storms", "Rebalance storms", _table(
        storms, ["group_id", "start", "end", "rebalances", "epochs", "joined", "left"], group_key="group_id",
        headers={"group_id": "group", "joined": "members joined", "left": "members left"},
        fmt={"start": _utc, "end": _utc}),
        f"At least {STORM_REBALANCES} rebalances of one group within {STORM_WINDOW_MS // 60_000} minutes."))
    sections.append(_section("groups", "Groups", _table(
        groups, ["group_id", "type", "state", "epoch", "protocol_type", "assignor", "members", "static_members",
                 "static_seen", "client_hosts", "offsets"], group_key="group_id",
        headers={"group_id": "group", "epoch": "generation / epoch", "static_members": "static members "
                 "(instance ids)", "static_seen": "static members seen in the log",
                 "offsets": "committed offsets"},
        row_class=lambda r: "storm" if r["group_id"] in storm_groups else "dead" if r.get("state") == "Dead"
        else None),
        "Protocol type: what a classic group's members run (consumer, connect, ...). Assignor: a classic "
        "group's client-side assignor, or the server-side assignor of consumer (KIP-848), share and streams "
        "groups as Kafka names it (members naming none get the broker's default: uniform, simple, sticky)."))
    changes = [dict(e, joined_who=e["joined"], left_who=e["left"]) for e in events if e["joined"] or e["left"]
               or e["state"] == "Dead"]
    sections.append(_section("members", "Member changes", _table(
        changes, ["timestamp", "group_id", "kind", "epoch", "state", "members", "joined_who", "left_who"],
        group_key="group_id", headers={"group_id": "group", "joined_who": "joined (client @ host)",
                                       "left_who": "left (client @ host)", "timestamp": "time"},
        fmt={"timestamp": _utc, "joined_who": _who, "left_who": _who},
        row_class=lambda r: "storm" if r["group_id"] in storm_groups and r.get("rebalance") else None)))
    sections.append(_section("commits", "Commit rates per group and topic", _table(
        commit_rates(counts), ["group_id", "topic", "commits", "minutes", "peak_per_minute", "mean_per_minute",
                               "first", "last"], group_key="group_id",
        headers={"group_id": "group", "minutes": "minutes with commits", "first": "first minute",
                 "last": "last minute"}, fmt={"first": _utc, "last": _utc}),
        "Offset commits as a read_committed reader sees them (aborted transactional commits not counted)."))
    asg_rows = _assignor_rows(groups)
    if not asg_rows:
        asg_rows = list(getattr(a, "assignors", None) or [])
    sections.append(_section("assignors", "Assignors in use", _table(asg_rows)))
    reb = {r["bucket"]: r["count"] for r in getattr(a, "rebalances", None) or []}
    com = {r["bucket"]: r["count"] for r in getattr(a, "commits", None) or []}
    if reb or com:
        bucket = getattr(a, "bucket_seconds", 60)
        rows = [{"from (UTC)": _utc(b * 1000), "rebalances": reb.get(b, 0), "commits": com.get(b, 0)}
                for b in sorted(set(reb) | set(com))]
        sections.append(_section("buckets", f"Rebalances and commits per {bucket} s", _table(rows)))
    if a.deleted_groups:
        sections.append(_section("deleted", "Deleted groups", _table(
            [{"group": g} for g in a.deleted_groups], group_key="group"),
            "Groups whose records were all tombstoned (what remains is what the fold shows)."))
    if a.downgrade is not None:
        to = getattr(a, "downgrade_to", None)
        title = f"Downgrade blockers for Kafka {to}" if to else "Downgrade blockers"
        body = _table(a.downgrade) or "<p>No blockers: every record loads on that release.</p>"
        sections.append(_section("downgrade", title, body))
    if flagged_rows is None:
        flagged_rows = [{"reason": e} for e in a.errors]
    extra = []
    if getattr(a, "aborted_records", 0):
        extra.append(f"{a.aborted_records:,} records of aborted transactions (not applied).")
    if getattr(a, "unknown_records", None):
        extra.append("Unknown record types (skipped, KIP-915): "
                     + ", ".join(f"type {k}: {v}" for k, v in a.unknown_records.items()) + ".")
    body = (_table(flagged_rows, ["file", "position", "offset", "reason"]) if flagged_rows
            else "<p>Nothing flagged: every batch and record decoded.</p>")
    body += "".join(f'<p class="note">{_e(x)}</p>' for x in extra)
    sections.append(_section("flagged", "Flagged records", body))
    for name, rows in (getattr(a, "metadata", None) or {}).items():
        sections.append(_section("kraft-" + "".join(ch if ch.isalnum() else "-" for ch in name),
                                 f"KRaft metadata: {name}", _table(list(rows))))

    links = "".join(f'<a href="#{anchor}">{_e(label)}</a>' for anchor, label in (
        ("charts", "timelines"), ("storms", "storms"), ("groups", "groups"), ("members", "member changes"),
        ("commits", "commit rates"), ("downgrade", "downgrade"), ("flagged", "flagged"))
        if any(s and s.startswith(f'<section id="{anchor}"') for s in sections))
    options = "".join(f'<option value="{_e(g)}">{_e(g)}</option>' for g in names)
    span = f"{_utc(lo)} to {_utc(hi)}" if lo is not None else "no timestamps"
    plotly_js = f"<script>{_plotly_js()}</script>" if figs else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>kcodec analyze: {_e(str(a.source))}</title><style>{_CSS}</style>{plotly_js}<script>{_JS}</script></head>
<body><header><h1>kcodec analyze</h1><p>{_e(str(a.source))}</p>
<p>{a.records:,} records, {len(groups):,} groups, {span}</p></header>
<nav>{links}<label>group <select id="group-filter" onchange="kcodecFilter(this.value)">
<option value="">all groups</option>{options}</select></label> <span id="filter-state"></span></nav>
<main>{"".join(s for s in sections if s)}</main></body></html>
"""


def write_report(a: Any, path: str) -> None:
    """Write :func:`render_report` to ``path`` (one self-contained HTML file: plotly.js is
    embedded once, nothing is fetched when it opens)."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_report(a))


def print_summary(a: Any, console: Any = None) -> None:
    """The console summary (rich tables): :func:`kcodec.spark.analyze.print_summary`'s, with
    the groups' protocol type and assignor in separate columns, their static members, and
    the rebalance storms; same signature."""
    from rich.console import Console
    from rich.table import Table
    # piped to a file or a log: wide enough that no group name is cut (a terminal keeps its width)
    c = console or Console(width=None if sys.stdout.isatty() else 160)
    groups = group_rows(a)
    events = getattr(a, "group_events", None) or []
    c.print(f"[bold]kcodec analyze[/bold] {a.source}: {a.records:,} record{'' if a.records == 1 else 's'}, "
            f"{plural(len(groups), 'group')}, "
            f"{plural(a.flagged, 'record')} flagged, {plural(a.corrupt_batches, 'corrupt batch', 'corrupt batches')} "
            f"({a.seconds:.1f} s)")
    t = Table(title="Groups", caption="assignor*: the one an Empty group used when it last had members")
    cols = ("group", "type", "state", "epoch", "protocol type", "assignor", "members", "static members", "offsets")
    # the columns that name a group are never cut; the others give way on a narrow console
    keep = {"group": max([len(g["group_id"]) for g in groups] + [5]), "type": 8, "state": 11,
            "assignor": max([len((g.get("assignor") or "").replace(" (last used)", "*")) for g in groups] + [8])}
    for col in cols:
        t.add_column(col, justify="right" if col in ("epoch", "members", "offsets") else "left",
                     no_wrap=col in keep, min_width=min(keep.get(col, 0), 48) or None)
    for g in groups:
        t.add_row(g["group_id"], g["type"], g["state"], "-" if g["epoch"] is None else str(g["epoch"]),
                  g.get("protocol_type") or "-", (g.get("assignor") or "-").replace(" (last used)", "*"),
                  str(g["members"]),
                  ", ".join(g["static_members"] or g["static_seen"]) or "-", str(g["offsets"]))
    c.print(t)
    storms = find_storms(events)
    if storms:
        t = Table(title=f"Rebalance storms (at least {STORM_REBALANCES} rebalances within "
                        f"{STORM_WINDOW_MS // 60_000} minutes)")
        for col in ("group", "from (UTC)", "to (UTC)", "rebalances", "joined", "left"):
            t.add_column(col)
        for s in storms:
            t.add_row(s["group_id"], _utc(s["start"]), _utc(s["end"]), str(s["rebalances"]), str(s["joined"]),
                      str(s["left"]))
        c.print(t)
    t = Table(title="Assignors in use")
    for col in ("assignor", "runs on", "groups"):
        t.add_column(col, justify="right" if col == "groups" else "left")
    for r in _assignor_rows(groups):
        t.add_row(r["assignor"], r["runs on"], str(r["groups"]))
    c.print(t)
    by_state = getattr(a, "by_state", None) or []
    if by_state:
        t = Table(title="Groups by state and protocol type")
        for col in ("type", "state", "protocol type", "groups"):
            t.add_column(col, justify="right" if col == "groups" else "left")
        for r in by_state:
            t.add_row(r["type"], r["state"], r["protocol_type"] or "-", str(r["count"]))
        c.print(t)
    reb = {r["bucket"]: r["count"] for r in getattr(a, "rebalances", None) or []}
    com = {r["bucket"]: r["count"] for r in getattr(a, "commits", None) or []}
    if reb or com:
        t = Table(title=f"Rebalances and commits per {a.bucket_seconds} s")
        for col in ("from (UTC)", "rebalances", "commits"):
            t.add_column(col, justify="left" if col.startswith("from") else "right")
        for b in sorted(set(reb) | set(com)):
            t.add_row(_utc(b * 1000), str(reb.get(b, 0)), str(com.get(b, 0)))
        c.print(t)
    if a.deleted_groups:
        c.print("deleted groups: " + ", ".join(a.deleted_groups))
    if getattr(a, "unknown_records", None):
        c.print("unknown record types (kept as data, KIP-915): "
                + ", ".join(f"{k}: {v}" for k, v in a.unknown_records.items()))
    if getattr(a, "aborted_records", 0):
        c.print(f"records of aborted transactions: {a.aborted_records}")
    for e in (getattr(a, "errors", None) or [])[:20]:
        c.print(f"[red]flagged:[/red] {e}")
    if a.downgrade is not None:
        if not a.downgrade:
            c.print("downgrade: no blockers")
        for f in a.downgrade[:20]:
            c.print(f"downgrade blocker: {f.get('outcome')} {f.get('type_name')} x{f.get('count')}: {f.get('reason')}")
    if getattr(a, "metadata", None):
        from .metadata import print_metadata_history
        c.print(f"[bold]KRaft metadata history[/bold] ({a.metadata_source})")
        print_metadata_history(a.metadata, c)
    if getattr(a, "out", None):
        c.print(f"Parquet tables in {a.out}: records, committed_offsets, groups, members, flagged, partitions")
