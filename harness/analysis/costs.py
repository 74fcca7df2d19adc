"""What a cell's calls cost the server over its block windows: CPU milliseconds per OK call, and OK calls per busy
core with its interval."""

from __future__ import annotations

from harness.method.verdicts import Interval, interval
from harness.results.records import CellResult


def block_ms_per_call(cell: CellResult) -> float | None:
    """The median over a cell's round windows of the server's CPU milliseconds per OK call."""
    costs = sorted(
        repeat.resources.cpu_seconds * 1000 / report.ok
        for repeat, report in zip(cell.record.repeats, cell.reports, strict=True)
        if repeat.role == "round" and repeat.resources.sampled and report.ok
    )
    return costs[len(costs) // 2] if costs else None


def block_calls_per_core(cell: CellResult) -> Interval | None:
    """OK calls per second of one busy server core (OK calls over the server's CPU seconds) over a cell's round
    windows, with its 95% interval; None where no window was sampled."""
    found = [
        report.ok / repeat.resources.cpu_seconds
        for repeat, report in zip(cell.record.repeats, cell.reports, strict=True)
        if repeat.role == "round" and repeat.resources.sampled and repeat.resources.cpu_seconds > 0 and report.ok
    ]
    return interval(found) if found else None
