"""report.html's charts as Vega-Lite specifications, built with Vega-Altair from the page's own data: a
comparison's forest plot beside its blocks, and one kind of work's stacks against the number of clients. Vega,
Vega-Lite and Vega-Embed themselves are inlined from vl-convert's bundle, so the page fetches nothing."""

from __future__ import annotations

import functools
import math
from typing import Any

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


def _data(values: list[dict[str, Any]]) -> Any:
    return alt.Data(values=values)  # type: ignore[no-untyped-call]


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
    chart = alt.hconcat(ratios, drift).resolve_scale(color="independent", y="shared")
    spec: dict[str, Any] = chart.to_dict()
    return spec


# What the "which stack" view can draw against the clients: (the axis's title, the field, its interval's fields).
MEASURES: dict[str, tuple[str, str, tuple[str, str] | None]] = {
    "ratio": ("× the fastest at that level (OK calls/s), 95% CI", "value", ("low", "high")),
    "rate": ("OK calls/s, 95% CI (this run's machine)", "rate", ("rate_low", "rate_high")),
    "p50": ("p50 latency, ms", "p50", None),
    "p99": ("p99 latency, ms", "p99", None),
}


def clients_chart(by_clients: dict[str, list[dict[str, Any]]], measure: str = "ratio") -> dict[str, Any]:
    """One kind of work's stacks against the number of clients, a line a stack (log axis): each stack's rate over
    the fastest's at that level, its own OK calls/s (both with their 95% intervals), or its p50 or p99 latency;
    where the ranking changes with the load, and what the load costs in latency."""
    title, field, bounds = MEASURES[measure]
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
    axis = alt.Scale(type="log", zero=False, nice=False)
    x = alt.X("clients:O", sort=sorted({row["clients"] for row in rows}), title="clients (calls in flight)")
    base = alt.Chart(_data(rows)).encode(x=x, color=alt.Color("stack:N", title=None))
    lines = base.mark_line(point=True).encode(
        y=alt.Y("value:Q", scale=axis, title=title),
        tooltip=["stack:N", "clients:O", alt.Tooltip("value:Q", format=",.2f")],
    )
    bars = base.mark_rule().encode(y=alt.Y("low:Q", scale=axis), y2="high:Q")
    spec: dict[str, Any] = (bars + lines).properties(width=520, height=260).to_dict()
    return spec
