"""A study: one question, declared as data. The run loop, the report and the tests read only this shape."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.matrix import Cell
from harness.measure import CellContext
from harness.options import RunOptions
from harness.processes import Child
from harness.results import CellRecord, StudyRun


@dataclass(frozen=True)
class Axis:
    """One dimension a study varies, its default values, and the run-all option that sets it."""

    name: str
    values: tuple[str, ...]
    option: str


@dataclass(frozen=True)
class Study:
    """A question, its axes, the cells they expand to, its driver, and how its results are told."""

    name: str
    question: str
    follows: str  # the seed study or reference it follows
    axes: tuple[Axis, ...]
    driver: str  # a key of harness.drivers.DRIVERS
    repeats: int  # measured runs per cell unless --repeats says otherwise
    cells: Callable[[RunOptions], list[Cell]]
    # Measures one cell on a running server: (cell, target, server process, context, probe file) -> record.
    measure: Callable[[Cell, str, Child | None, CellContext, str], CellRecord]
    # Files under results/<study>/ (relative path -> content), rendered from one run's files.
    render: Callable[[StudyRun], dict[str, bytes]]
    # The study's section of results/README.md, from its newest run per CPU model (newest first).
    section: Callable[[Sequence[StudyRun]], str]
    # The short answer, with the figures that carry it, from the same runs.
    answer: Callable[[Sequence[StudyRun]], str]
    # Benchmark targets measured on a finished run, recorded in run.json.
    targets: Callable[[StudyRun, float, bool], dict[str, Any]]
    default: bool = True  # run-all runs it when no --study is given
    # Servers keep their own counters (GC pauses, loop lag, context switches) for each measured run.
    diagnostics: bool = False

    def is_default_matrix(self, options: RunOptions) -> bool:
        """True when options expand to the study's full default cells, repeats and sizing."""
        default = RunOptions(options.out_dir, available_cpus=options.available_cpus)
        same_sizing = (options.repeats, options.requests, options.warmup_requests) == (None, None, None)
        same_backends = all(
            getattr(options, name) == getattr(default, name)
            for name in ("objects", "latency_bucket_objects", "s3_latency_ms", "mongo_latency_ms", "jitter_ms")
        )
        keys = [cell.key for cell in self.cells(options)]
        return same_sizing and same_backends and keys == [cell.key for cell in self.cells(default)]


def run_targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Any]:
    """The targets every study without a time budget of its own records: no failed cell, and its wall time."""
    failed = [cell.record.key for cell in run.cells if cell.record.status == "failed"]
    return {
        "no_failed_cell": {"cells": failed, "met": not failed},
        "wall_time": {"measured_seconds": round(wall_seconds, 1), "applies": full_matrix, "met": True},
    }
