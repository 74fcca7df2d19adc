"""report.html's charts as specifications, without a browser (tests/test_report_page.py draws them in one)."""

from __future__ import annotations

import json
import math

from harness.render.vega import AXIS_PAD, forest, shown_interval


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
