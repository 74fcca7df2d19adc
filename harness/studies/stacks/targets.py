"""The stacks study's benchmark targets, measured on a finished run, and how its page lists them."""

from __future__ import annotations

from typing import Any

from harness.plan.matrix import S3_LATENCY_MS
from harness.render.summaries import (
    spread,
)
from harness.results.records import StudyRun
from harness.results.run_meta import Target
from harness.studies.stacks.tables import (
    grouped,
    ways_of_connecting,
)

# The values this report judges by, recorded in every run.
SETTINGS: dict[str, Any] = {
    "time_target_seconds": 28 * 60,  # the brief's matrix in blocks, within make bench's 30 minutes
    "cpu_bound_share": 0.90,  # server CPU at this share of its cores or more: CPU-bound
    "pays_off": 1.10,  # async over sync at or above this ratio "pays off"; at or below its inverse it costs
    "baseline": "sync-w10",  # the stack the side-by-side tables divide by
    # The efficiency targets: [scenario, concurrency, least efficiency].
    "efficiency_targets": [["hello-wait", 50, 0.90], [f"s3-unary-{S3_LATENCY_MS}ms", 50, 0.80]],
}


def targets_lines(run: StudyRun) -> list[str]:
    """The run's targets as the study's page lists them: each met or not, with the figure that decides it."""
    targets = {name: target.to_json() for name, target in run.targets.items()}
    if not targets:
        return []
    thresholds = run.thresholds
    wall, zero = targets["wall_time"], targets["zero_non_ok"]
    hello = targets["hello_repeats_within_10_percent"]
    mark = {True: "met", False: "**not met**"}
    worst = max(hello["spread_by_cell"].items(), key=lambda item: item[1], default=None)
    lines = [
        f"Targets of run `{run.run_id}`:",
        "",
        f"- Full default matrix within {wall['target_seconds'] // 60:.0f} minutes: "
        f"{wall['measured_seconds'] / 60:.1f} min, "
        + (mark[wall["met"]] if wall["applies"] else "not a full default run"),
        f"- Zero non-OK responses in every cell: {mark[zero['met']]}"
        + (f" (cells: {', '.join(zero['cells_with_non_ok_or_failed'])})" if not zero["met"] else ""),
        f"- hello repeats within {thresholds.noise:.0%} of their median: {mark[hello['met']]}"
        + (f" (widest: {worst[0]} at {worst[1]:.1%})" if worst else " (no hello cell with repeats)"),
        *[
            f"- {key}: every variant at {target['least']:.0%} or more of its bound: {mark[target['met']]} ("
            + ", ".join(f"{name} {value:.0%}" for name, value in target["by_server"].items())
            + ")"
            for key, target in _efficiency_cells(targets.get("efficiency", {})).items()
        ],
    ]
    if "driver_not_busy" in targets:
        busy = targets["driver_not_busy"]
        lines.append(
            f"- The load driver never above {thresholds.driver_busy:.0%} of its CPUs: {mark[busy['met']]} "
            f"(highest: {busy['highest']:.0%})"
        )
    return [*lines, ""]


def _efficiency_cells(raw: dict[str, Any]) -> dict[str, Any]:
    """The efficiency target's cells: a group of its own in runs before schema 3, under "cells" since."""
    cells = raw.get("cells", raw)
    return {key: value for key, value in cells.items() if isinstance(value, dict)}


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """The study's benchmark targets, measured on a finished run: zero non-OK responses gates the run; the
    others are reported."""
    summaries = [s for levels in grouped(run).values() for level in levels.values() for s in level.values()]
    others = [
        s
        for way in ways_of_connecting(run)
        for levels in grouped(run, way).values()
        for level in levels.values()
        for s in level.values()
    ]
    with_errors = [
        s.result.record.key
        for s in summaries + others
        if s.result.record.status == "failed" or any(report.non_ok for report in s.reports)
    ]
    hello = {
        f"{s.result.record.server}/c{s.result.record.concurrency}": round(spread([r.ok_rps for r in s.reports]), 4)
        for s in summaries
        if s.result.record.scenario == "hello" and len(s.reports) > 1
    }
    efficiency: dict[str, Any] = {}
    for scenario, level, least in run.settings["efficiency_targets"]:
        measured = {
            s.result.record.server: round(b.efficiency, 3)
            for s in summaries
            if (s.result.record.scenario, s.result.record.concurrency) == (scenario, level)
            and (b := s.bounds) is not None
        }
        if measured:
            efficiency[f"{scenario}/c{level}"] = {
                "least": least,
                "by_server": measured,
                "met": all(value >= least for value in measured.values()),
            }
    driver = [s.driver_cpu for s in summaries + others if s.driver_cpu is not None]
    limit = run.settings["time_target_seconds"]
    return {
        "wall_time": Target(
            wall_seconds <= limit,
            {"target_seconds": limit, "measured_seconds": round(wall_seconds, 1), "applies": full_matrix},
        ),
        "zero_non_ok": Target(not with_errors, {"cells_with_non_ok_or_failed": with_errors}, gate=True),
        "hello_repeats_within_10_percent": Target(
            all(value <= run.thresholds.noise for value in hello.values()), {"spread_by_cell": hello}
        ),
        "efficiency": Target(all(each["met"] for each in efficiency.values()), {"cells": efficiency}),
        "driver_not_busy": Target(
            not any(s.driver_busy for s in summaries + others), {"highest": round(max(driver, default=0.0), 3)}
        ),
    }
