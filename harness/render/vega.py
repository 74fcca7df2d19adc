"""Every chart as a Vega-Lite specification, built with Vega-Altair: report.html draws them in the browser (a
comparison's forest plot beside its blocks, one kind of work's stacks against the number of clients), and the
markdown pages embed the same specifications rendered to PNG by vl-convert (`png`), with the study charts' shared
shapes (`lines`, `bars`). Vega, Vega-Lite and Vega-Embed themselves are inlined from vl-convert's bundle, so the
page fetches nothing."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

import altair as alt
import vl_convert

VERDICT_COLOURS = {"faster": "#1b9e77", "tie": "#7570b3", "slower": "#d95f02", "unresolved": "#999999"}
DRIFT_SPAN = 1.2  # the drift panel's colours saturate at a block 20% off its label's whole ratio
EMBED = "window.vegaEmbed = vegaEmbed;"  # the bundle's snippet: Vega-Embed for the page's own script


@functools.cache
def vega_scripts() -> str:
    """Vega, Vega-Lite and Vega-Embed in one script, from vl-convert's bundle: about 2 s to build, so built once
    a process."""
    return vl_convert.javascript_bundle(EMBED)


def _data(values: Sequence[dict[str, Any]]) -> Any:
    """A chart's data inline, each float to five significant digits (what a chart can show; the page stays small)."""
    rounded = [{key: _short(value) for key, value in each.items()} for each in values]
    return alt.Data(values=rounded)  # type: ignore[no-untyped-call]


def _short(value: Any) -> Any:
    return float(f"{value:.5g}") if isinstance(value, float) and math.isfinite(value) else value


def png(chart: Any, title: str) -> bytes:
    """An Altair chart as PNG, titled with its run: the same bytes every time."""
    return bytes(vl_convert.vegalite_to_png({**chart.to_dict(), "title": {"text": title, "fontSize": 11}}, scale=1))


def side_by_side(*charts: Any) -> Any:
    """Charts in one row, their colours shared."""
    return alt.hconcat(*charts)


def grid(charts: Sequence[Any], columns: int) -> Any:
    """Charts in rows of `columns`."""
    return alt.concat(*charts, columns=columns)


class Axis(NamedTuple):
    """A chart's axis: its field in the rows, its title, and whether its scale is logarithmic (and in what base)."""

    field: str
    title: str
    log: bool = False
    base: int = 10
    ticks: Sequence[float] = ()  # where its ticks go, if not where Vega puts them
    labels: str = ""  # a Vega expression for each tick's label, of `datum.value`

    def scale(self, nice: bool = False) -> Any:
        return alt.Scale(type="log", base=self.base, nice=nice) if self.log else alt.Scale(zero=True)

    def encoding(self, channel: Any, kind: str = "Q", nice: bool = False) -> Any:
        axis = alt.Axis(values=list(self.ticks) or alt.Undefined, labelExpr=self.labels or alt.Undefined)
        return channel(f"{self.field}:{kind}", scale=self.scale(nice), title=self.title, axis=axis)


BYTES = (  # a tick's label in bytes, KiB or MiB
    "datum.value >= 1048576 ? datum.value / 1048576 + ' MiB'"
    " : datum.value >= 1024 ? datum.value / 1024 + ' KiB' : datum.value + ' B'"
)


class Dash(NamedTuple):
    """Lines told apart by dashes as well as colour: `field`'s value `dashed` draws dashed, `solid` solid."""

    field: str
    solid: str
    dashed: str


SERIES_COLOURS: Final = "tableau20"  # twenty colours: a chart's series stay apart past ten


def _series(rows: Sequence[dict[str, Any]], field: str) -> Any:
    """The colour of each of `field`'s values, in their order in the rows."""
    order = list(dict.fromkeys(row[field] for row in rows))
    legend = alt.Legend(labelLimit=400)  # a series' whole name
    return alt.Color(f"{field}:N", sort=order, title=None, scale=alt.Scale(scheme=SERIES_COLOURS), legend=legend)


def lines(
    rows: Sequence[dict[str, Any]],
    x: Axis,
    y: Axis,
    series: str,
    *,
    title: str = "",
    dash: Dash | None = None,
    bounds: bool = False,
    points: bool = True,
    width: int = 380,
    height: int = 260,
) -> Any:
    """One line per value of `series` (its colour), `y` against `x`, each row a point (unless not `points`); with
    `bounds`, each point's 95% interval drawn as a rule from its row's `low` to its `high`. No rows: a panel that
    says so."""
    if not rows:
        return nothing(title, width, height)
    base = alt.Chart(_data(rows), title=title or alt.Undefined).encode(x=x.encoding(alt.X), color=_series(rows, series))
    strokes = {}
    if dash is not None:
        dashes = alt.Scale(domain=[dash.solid, dash.dashed], range=[[1, 0], [5, 3]])
        legend = alt.Legend(symbolType="stroke", symbolStrokeColor="black", symbolStrokeWidth=2, symbolSize=200)
        strokes = {"strokeDash": alt.StrokeDash(f"{dash.field}:N", scale=dashes, title=None, legend=legend)}
    drawn = base.mark_line(point=points, strokeWidth=2 if points else 1).encode(
        y=y.encoding(alt.Y),
        tooltip=[f"{series}:N", f"{x.field}:Q", alt.Tooltip(f"{y.field}:Q", format=",.4g")],
        **strokes,
    )
    if bounds:
        drawn = base.mark_rule().encode(y=alt.Y("low:Q", scale=y.scale()), y2="high:Q", **strokes) + drawn
    return drawn.properties(width=width, height=height)


def nothing(title: str, width: int = 380, height: int = 260) -> Any:
    """A panel with nothing to draw (every cell failed or was skipped), saying so."""
    said = _data([{"said": "nothing measured to draw"}])
    return (
        alt.Chart(said, title=title or alt.Undefined)
        .mark_text()
        .encode(text="said:N")
        .properties(width=width, height=height)
    )


def shaded(spans: Sequence[dict[str, Any]], x: Axis, named: bool = False) -> Any:
    """Each span's stretch of `x`, from its `start` to its `end`, shaded red; `named`, its `name` written beside."""
    base = alt.Chart(_data(spans)).encode(x=alt.X("start:Q", scale=x.scale(), title=x.title))
    drawn = base.mark_rect(color="red", opacity=0.12).encode(x2="end:Q", tooltip=["name:N"])
    if named:
        drawn += base.mark_text(angle=270, align="right", baseline="bottom", dx=-4, y=2, fontSize=8).encode(
            text="name:N"
        )
    return drawn


def one_above_another(*charts: Any) -> Any:
    """Charts in one column, their colours each their own."""
    return alt.vconcat(*charts).resolve_scale(color="independent")


def bars(rows: Sequence[dict[str, Any]], x: Axis, y: Axis, group: str, *, title: str = "", width: int = 380) -> Any:
    """Bars of `y` for each value of `x` (a category), side by side by `group` (its colour); on a logarithmic `y`,
    each bar rises from the power of its base at or below the lowest value (a log axis has no zero). No rows: a
    panel that says so."""
    if not rows:
        return nothing(title, width)
    lowest = min((row[y.field] for row in rows if row[y.field] > 0), default=None)
    bottom = {"y2": alt.datum(y.base ** math.floor(math.log(lowest, y.base)))} if y.log and lowest else {}
    return (
        alt.Chart(_data(rows), title=title or alt.Undefined)
        .mark_bar()
        .encode(
            x=alt.X(f"{x.field}:N", sort=list(dict.fromkeys(row[x.field] for row in rows)), title=x.title),
            xOffset=alt.XOffset(f"{group}:N", sort=list(dict.fromkeys(row[group] for row in rows))),
            y=y.encoding(alt.Y, nice=True),  # a bar's top inside the axis
            **bottom,
            color=_series(rows, group),
            tooltip=[f"{x.field}:N", f"{group}:N", alt.Tooltip(f"{y.field}:Q", format=",.4g")],
        )
        .properties(width=width, height=260)
    )


def rule(value: float, label: str, colour: str = "red") -> Any:
    """A dashed horizontal line at `value`, named in its tooltip (a target such as an SLO)."""
    return (
        alt.Chart(_data([{"value": value, "label": label}]))
        .mark_rule(color=colour, strokeDash=[4, 3])
        .encode(y="value:Q", tooltip=["label:N"])
    )


AXIS_PAD = 1.15  # a forest plot's axis reaches this far past its outermost ratio


def shown_interval(label: dict[str, Any], edge_low: float, edge_high: float) -> dict[str, Any]:
    """A label's interval as the plot draws it: cut at the axis's edges, each cut end marked to get an arrow (an
    unbounded high end is cut too)."""
    high = label["high"] if label["high"] is not None else math.inf
    return {
        **label,
        "low": max(label["low"], edge_low),
        "high": min(high, edge_high),
        "past_low": label["low"] < edge_low,
        "past_high": high > edge_high,
    }


def forest(view: dict[str, Any]) -> dict[str, Any]:
    """A comparison's chart (`forest_layers`) as its specification."""
    spec: dict[str, Any] = forest_layers(view).to_dict()
    return spec


def forest_layers(view: dict[str, Any], title: str = "") -> Any:
    """A comparison's chart. Left: each label's ratio to the reference with its 95% interval on a log axis, the tie
    band shaded, the A/A control a square, each block's ratio a grey dot on its label's row. Right: each block's
    ratio over its label's whole ratio, in block order (blue below, orange above), so drift and outliers show."""
    tie = view["tie"]
    order = [each["label"] for each in sorted(view["labels"], key=lambda each: -each["value"])]
    # The axis spans the ratios, the blocks and the tie band; an interval that runs past it stops at its edge with
    # an arrow (an interval of two blocks can span 0.1 to 10, and would squeeze every other row to a point).
    seen = [each["value"] for each in view["labels"]] + [each["ratio"] for each in view["rounds"]] + [1 - tie, 1 + tie]
    edge_low, edge_high = min(seen) / AXIS_PAD, max(seen) * AXIS_PAD
    labels = _data([shown_interval(each, edge_low, edge_high) for each in view["labels"]])
    axis = alt.Scale(type="log", zero=False, nice=False, domain=[edge_low, edge_high], clamp=True)
    y = alt.Y("label:N", sort=order, title=None)
    verdicts = alt.Scale(domain=list(VERDICT_COLOURS), range=list(VERDICT_COLOURS.values()))
    band = (
        alt.Chart(_data([{"low": 1 - tie, "high": 1 + tie}]))
        .mark_rect(color="#bbbbbb", opacity=0.3)
        .encode(x=alt.X("low:Q", scale=axis), x2="high:Q")
    )
    one = alt.Chart(_data([{"one": 1}])).mark_rule(color="#666666").encode(x="one:Q")
    blocks = _data(view["rounds"])
    base = alt.Chart(labels).encode(y=y)
    spans = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", scale=axis, title=f"× {view['reference']} (OK calls/s), 95% CI"),
        x2="high:Q",
        color=alt.Color("verdict:N", scale=verdicts, legend=alt.Legend(orient="bottom", title=None)),
    )
    each_block = (
        alt.Chart(blocks)
        .mark_tick(color="#999999", opacity=0.6, thickness=1, size=10)
        .encode(x="ratio:Q", y=y, tooltip=["label:N", "block:O", alt.Tooltip("ratio:Q", format=".2f")])
    )
    marks = base.mark_point(size=70, filled=True).encode(
        x="value:Q",
        color=alt.Color("verdict:N", scale=verdicts),
        shape=alt.Shape("control:N", scale=alt.Scale(domain=[False, True], range=["circle", "square"]), legend=None),
        tooltip=["label:N", "text:N", "verdict:N", "blocks:Q"],
    )
    past = [
        base.transform_filter(f"datum.{side}")
        .mark_point(shape=shape, filled=True, size=60)
        .encode(x=alt.X(f"{end}:Q", scale=axis), color=alt.Color("verdict:N", scale=verdicts))
        for side, end, shape in (("past_low", "low", "triangle-left"), ("past_high", "high", "triangle-right"))
    ]
    ratios = (band + one + each_block + spans + marks + past[0] + past[1]).properties(width=340, height=alt.Step(22))
    drift = (
        alt.Chart(blocks)
        .mark_square(size=60)
        .encode(
            x=alt.X("block:O", title="block"),
            y=alt.Y("label:N", sort=order, title=None, axis=None),
            tooltip=["label:N", "block:O", alt.Tooltip("ratio:Q", format=".2f"), alt.Tooltip("apart:Q", format=".2f")],
            color=alt.Color(
                "apart:Q",
                scale=alt.Scale(type="log", scheme="blueorange", domain=[1 / DRIFT_SPAN, DRIFT_SPAN], clamp=True),
                legend=alt.Legend(orient="bottom", title="block / whole", format=".2f"),
            ),
        )
        .properties(height=alt.Step(22))
    )
    return alt.hconcat(ratios, drift, title=title or alt.Undefined).resolve_scale(color="independent", y="shared")


# What the "which stack" view can draw against the clients: (the axis's title, the field, its interval's fields).
MEASURES: dict[str, tuple[str, str, tuple[str, str] | None]] = {
    "ratio": ("× the fastest at that level (OK calls/s), 95% CI", "value", ("low", "high")),
    "rate": ("OK calls/s, 95% CI (this run's machine)", "rate", ("rate_low", "rate_high")),
    "p50": ("p50 latency, ms", "p50", None),
    "p99": ("p99 latency, ms (its blocks' geometric mean, 95% CI)", "p99_blocks", ("p99_low", "p99_high")),
}


def clients_chart(by_clients: dict[str, list[dict[str, Any]]], measure: str = "ratio") -> dict[str, Any]:
    """One kind of work's stacks against the number of clients, a line a stack (log axis): each stack's rate over
    the fastest's at that level, its own OK calls/s (both with their 95% intervals), or its p50 or p99 latency;
    where the ranking changes with the load, and what the load costs in latency."""
    spec: dict[str, Any] = clients_layers(by_clients, measure).to_dict()
    return spec


def clients_layers(by_clients: dict[str, list[dict[str, Any]]], measure: str, title: str = "") -> Any:
    """`clients_chart` as Altair's chart, to be set beside others."""
    axis_title, field, bounds = MEASURES[measure]
    rows = [
        {
            "clients": int(level),
            "stack": each["stack"],
            "value": each[field],
            "low": each.get(bounds[0]) or each[field] if bounds else each[field],
            "high": each.get(bounds[1]) or each[field] if bounds else each[field],
        }
        for level, ranked in by_clients.items()
        for each in ranked
        if each.get(field) is not None
    ]
    if not rows:
        return nothing(title, 520)
    axis = alt.Scale(type="log", zero=False, nice=False)
    x = alt.X("clients:O", sort=sorted({row["clients"] for row in rows}), title="clients (calls in flight)")
    base = alt.Chart(_data(rows), title=title or alt.Undefined).encode(x=x, color=alt.Color("stack:N", title=None))
    drawn = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", scale=axis, title=axis_title),
        tooltip=["stack:N", "clients:O", alt.Tooltip("value:Q", format=",.2f")],
    )
    spans = base.mark_rule().encode(y=alt.Y("low:Q", scale=axis), y2="high:Q")
    return (spans + drawn).properties(width=520, height=260)
