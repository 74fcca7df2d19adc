"""A cell's runs reduced to what tables show, and the formatting every study's tables share.

Percentiles pool every OK call of a cell's runs (their HdrHistograms); p99 is shown only where a cell
holds at least 100 calls and p99.9 where it holds at least 1,000.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from harness.method.bounds import Bounds, cell_bounds
from harness.render.table import Figure
from harness.results.histogram import Latencies
from harness.results.load import LoadReport
from harness.results.records import CellResult, Repeat, StudyRun
from harness.results.run_meta import RunMeta, Thresholds

MIB = 1024 * 1024
# (percentile, calls a cell needs before it is shown)
SHOWN_PERCENTILES: tuple[tuple[float, int], ...] = ((50, 1), (90, 10), (99, 100), (99.9, 1000))
TOO_FEW = "—"
TOO_FEW_NOTE = "— : too few calls for this percentile (p99 needs 100 calls in the cell, p99.9 needs 1,000)."


def spread(values: Sequence[float]) -> float:
    """How far the farthest value lies from the median, as a fraction of the median."""
    if not values:
        return 0.0
    middle = statistics.median(values)
    return max(abs(value - middle) for value in values) / middle if middle else 0.0


def driver_share(repeat: Repeat, meta: RunMeta) -> float | None:
    """The driver's CPU over one run as a share of the CPUs it had; None where it was not measured."""
    seconds, wall = repeat.driver_cpu_seconds, repeat.resources.wall_seconds
    return None if seconds is None or wall <= 0 else seconds / (wall * meta.driver_cpus)


def not_ok_mark(reports: Sequence[LoadReport]) -> str:
    """What stands beside a figure whose runs had calls that were not OK: how many of how many, their share and
    statuses ("**40 of 150 calls not OK (27%): Unavailable**"); "" when every call was OK."""
    count = sum(report.count for report in reports)
    codes = sum((Counter(report.status_codes) for report in reports), Counter())
    failed = count - codes.get("OK", 0)
    if not failed:
        return ""
    others = sorted(code for code in codes if code != "OK")
    statuses = others[0] if len(others) == 1 else ", ".join(f"{code} {codes[code]:,}" for code in others)
    share = f"{failed / count:.0%}" if failed / count >= 0.01 else "under 1%"
    return f" **{failed:,} of {count:,} calls not OK ({share}): {statuses}**"


@dataclass(frozen=True)
class CellSummary:
    """A cell's repeats reduced to what the tables show: medians, pooled percentiles, flags."""

    result: CellResult
    meta: RunMeta
    slots: int | None = None  # the server's serving slots, for the wait bound

    @cached_property
    def bounds(self) -> Bounds | None:
        return cell_bounds(self.result, self.meta.server_cpus, self.slots)

    @property
    def failed(self) -> bool:
        return self.result.record.status != "ok" or not self.result.reports

    @property
    def reports(self) -> list[Any]:
        return list(self.result.reports)

    @property
    def ok_rps(self) -> float:
        return _median([report.ok_rps for report in self.result.reports])

    @property
    def ok_rps_range(self) -> tuple[float, float]:
        rates = [report.ok_rps for report in self.result.reports] or [0.0]
        return min(rates), max(rates)

    @property
    def spread(self) -> float:
        return spread([report.ok_rps for report in self.result.reports])

    @property
    def thresholds(self) -> Thresholds:
        return self.meta.judged_by

    @property
    def noisy(self) -> bool:
        return self.spread > self.thresholds.noise

    @cached_property
    def latencies(self) -> Latencies | None:
        """Every OK call of the cell's runs, pooled; None for runs stored before histograms were kept."""
        histograms = [report.histogram for report in self.result.reports]
        return Latencies(histograms) if histograms and all(histograms) else None

    @property
    def ok_calls(self) -> int:
        return sum(report.ok for report in self.result.reports)

    def percentile(self, p: float) -> float | None:
        """The pooled latency at percentile p in seconds; None where the cell holds too few calls to show it."""
        needed = next((calls for shown, calls in SHOWN_PERCENTILES if shown == p), 1)
        if self.ok_calls < needed:
            return None
        if self.latencies is not None:
            return self.latencies.percentile(p)
        # Older runs kept ghz's own percentiles per run: their median.
        values = [report.percentiles[int(p)] for report in self.result.reports if int(p) in report.percentiles]
        return statistics.median(values) if values and p == int(p) else None

    @property
    def sampled(self) -> bool:
        """False for a server the harness did not start: its CPU and memory are unknown."""
        return all(repeat.resources.sampled for repeat in self.result.record.repeats)

    @property
    def cpu_average(self) -> float:
        return _median([repeat.resources.average_cpu_percent for repeat in self.result.record.repeats])

    @property
    def cpu_peak(self) -> float:
        return max((repeat.resources.peak_cpu_percent for repeat in self.result.record.repeats), default=0.0)

    @property
    def rss_peak(self) -> int:
        return max((repeat.resources.peak_rss_bytes for repeat in self.result.record.repeats), default=0)

    @property
    def driver_cpu(self) -> float | None:
        """The driver's CPU as a share of the CPUs it had, highest over the runs; None if not measured."""
        shares = [
            share for repeat in self.result.record.repeats if (share := driver_share(repeat, self.meta)) is not None
        ]
        return max(shares) if shares else None

    @property
    def driver_busy(self) -> bool:
        return (self.driver_cpu or 0.0) > self.thresholds.driver_busy

    @property
    def short(self) -> bool:
        """Some run ended with fewer OK calls than it asked for."""
        return any(
            report.ok < repeat.requests
            for report, repeat in zip(self.result.reports, self.result.record.repeats, strict=True)
        )

    @property
    def flags(self) -> list[str]:
        """What a reader must know before trusting the cell's figures."""
        return [
            flag
            for flag, raised in (
                ("noisy", self.noisy),
                ("short", self.short),
                ("driver-busy", self.driver_busy),
            )
            if raised
        ]

    def status_counts(self) -> Counter[str]:
        """Responses by status code, added up over the runs."""
        return sum((Counter(report.status_codes) for report in self.result.reports), Counter())


def flag_notes(thresholds: Thresholds) -> dict[str, str]:
    """What each flag means, with the thresholds the run judged by."""
    return {
        "noisy": f"**noisy**: the cell's runs stray more than {thresholds.noise:.0%} from their median.",
        "short": "**short**: a run ended with fewer OK calls than it asked for.",
        "driver-busy": f"**driver-busy**: the load driver used more than {thresholds.driver_busy:.0%} of its CPUs; "
        "it may have been the limit.",
    }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def seconds(value: float) -> str:
    return f"{value:.2f} s"


def ms(value: float | None) -> str:
    return TOO_FEW if value is None else f"{value * 1000:.2f} ms"


def rate_figure(value: float | None, unit: str = "calls/s") -> Figure:
    """A rate as a table's figure ("—" for none)."""
    return Figure(value, "—" if value is None else rate(value), unit=unit)


def number_figure(value: float | None, form: str, unit: str = "", scale: float = 1.0) -> Figure:
    """A plain number as a table's figure, drawn in `form` ("—" for none); its value is `scale` times it, in
    `unit` (a share drawn "78%" is 78 in "%")."""
    return Figure(None if value is None else value * scale, or_dash(value, form), unit=unit)


def ms_figure(value: float | None) -> Figure:
    """A latency in seconds as a table's figure in milliseconds."""
    return Figure(None if value is None else value * 1000, ms(value), unit="ms")


def shares_figure(shares: Sequence[float], unit: str = "of a core") -> Figure:
    """Shares (0.78 is 78%) as a table's figure: the highest, with the lowest to highest as its range (drawn
    "78%" to "93%" with a dash between); none as "—"."""
    if not shares:
        return Figure(None, "—")
    low, high = min(shares), max(shares)
    text = f"{high:.0%}" if len(shares) == 1 else f"{low:.0%}–{high:.0%}"
    return Figure(high * 100, text, low * 100, high * 100, f"% {unit}")


def rate(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def or_dash(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


def percent(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0%}"


def chart_title(run: Any, what: str) -> str:
    """A chart's title: what it shows, its run and machine, and uncommitted code if so."""
    return f"{what}: run {run.run_id}, {run.cpu_model}" + (" (uncommitted code)" if run.uncommitted else "")


def percentile_label(p: float) -> str:
    return f"p{p:g}"


def trouble(run: StudyRun) -> str:
    """The answer's word on what failed: failed cells and cells with calls that were not OK, named; or ""."""
    parts = []
    failed = [c.record.key for c in run.cells if c.record.status == "failed"]
    if failed:
        parts.append(f"{len(failed)} cells failed (listed under the tables): {', '.join(failed)}.")
    marked = [
        f"{c.record.key}{mark}" for c in run.cells if c.record.status != "failed" and (mark := not_ok_mark(c.reports))
    ]
    if marked:
        parts.append(f"Cells with calls that were not OK (their figures count OK calls only): {'; '.join(marked)}.")
    return " ".join(parts)
