"""The charts as specifications, without a browser (tests/test_report_page.py draws the page's in one): the page's
forest plot, and the shapes the markdown charts share, rendered to PNG by vl-convert."""

from __future__ import annotations

import json
import math

from harness.render.vega import (
    AXIS_PAD,
    Axis,
    Dash,
    bars,
    clients_layers,
    forest,
    lines,
    png,
    shown_interval,
    side_by_side,
)


def test_an_interval_past_the_axis_stops_at_its_edge_with_an_arrow() -> None:
    assert shown_interval({"low": 0.1, "high": None, "value": 1.2}, 0.5, 2.0) == {
        "low": 0.5,
        "high": 2.0,
        "value": 1.2,
        "past_low": True,
        "past_high": True,
    }
    inside = shown_interval({"low": 0.9, "high": 1.1, "value": 1.0}, 0.5, 2.0)
    assert (inside["low"], inside["high"], inside["past_low"], inside["past_high"]) == (0.9, 1.1, False, False)

    labels = [
        {"label": "a", "value": 1.2, "low": 0.1, "high": None, "verdict": "unresolved", "control": False},
        {"label": "b", "value": 0.9, "low": 0.85, "high": 0.95, "verdict": "slower", "control": False},
    ]
    rounds = [{"label": "a", "block": 1, "ratio": 1.4, "apart": 1.1}, {"label": "b", "block": 1, "ratio": 0.8}]
    spec = json.dumps(forest({"tie": 0.05, "labels": labels, "rounds": rounds, "reference": "ref"}))
    assert '"triangle-right"' in spec and '"triangle-left"' in spec
    low, high = 0.8 / AXIS_PAD, 1.4 * AXIS_PAD  # the axis: the blocks' ratios, padded
    assert str(low) in spec and str(high) in spec
    assert math.isfinite(high)


def layers(chart: object) -> list[dict[str, object]]:
    spec = chart.to_dict()  # type: ignore[attr-defined]
    return list(spec.get("layer", [spec]))


def test_lines_draw_a_series_a_colour_in_its_order_dashes_by_their_field_and_bounds_as_rules() -> None:
    rows = [
        {"stack": stack, "wire": wire, "size": size, "rate": 10.0 * size, "low": 9.0 * size, "high": 11.0 * size}
        for stack in ("zeta", "alpha")
        for wire in ("plaintext", "TLS")
        for size in (1, 1024)
    ]
    chart = lines(
        rows,
        Axis("size", "bytes", log=True, base=2),
        Axis("rate", "MB/s"),
        "stack",
        dash=Dash("wire", "plaintext", "TLS"),
        bounds=True,
    )
    spans, drawn = layers(chart)
    assert spans["mark"] == {"type": "rule"} and spans["encoding"]["y2"] == {"field": "high"}  # type: ignore[index]
    encoding = drawn["encoding"]
    assert encoding["color"]["sort"] == ["zeta", "alpha"]  # type: ignore[index]
    assert encoding["strokeDash"]["scale"] == {"domain": ["plaintext", "TLS"], "range": [[1, 0], [5, 3]]}  # type: ignore[index]
    assert encoding["x"]["scale"] == {"type": "log", "base": 2, "nice": False}  # type: ignore[index]
    assert png(chart, "a title").startswith(b"\x89PNG")


def test_bars_on_a_log_axis_rise_from_the_power_of_ten_below_the_lowest() -> None:
    rows = [{"stack": "a", "way": "shared", "rate": 3.5}, {"stack": "a", "way": "per call", "rate": 4200.0}]
    (drawn,) = layers(bars(rows, Axis("stack", ""), Axis("rate", "calls/s", log=True), "way"))
    assert drawn["encoding"]["y2"] == {"datum": 1}  # type: ignore[index]
    (linear,) = layers(bars(rows, Axis("stack", ""), Axis("rate", "calls/s"), "way"))
    assert "y2" not in linear["encoding"]  # type: ignore[operator]


def test_a_chart_with_nothing_measured_renders_a_panel_that_says_so() -> None:
    """Every cell of a scenario failed or was skipped (a --target that serves hello alone): its chart still draws."""
    rate, level = Axis("rate", "OK calls/s", log=True), Axis("level", "clients")
    empty = side_by_side(lines([], level, rate, "server", title="s3-unary"), bars([], level, rate, "way"))
    assert png(side_by_side(empty, clients_layers({"2": []}, "rate")), "a title").startswith(b"\x89PNG")
