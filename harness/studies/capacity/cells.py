"""The capacity study's cells read from a run: each stack's rate search, its steps, where it met the SLO
(its capacity), its saturation and its pressure at the knee. Report-side: reads only the run's files."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from math import inf
from typing import Any

from harness.method.verdicts import Interval, interval
from harness.render.summaries import driver_share, ms, rate
from harness.results.histogram import Latencies
from harness.results.load import LoadReport
from harness.results.records import CellResult, Repeat, StudyRun, loop_lag_ms
from harness.results.run_meta import RunMeta
from harness.studies.capacity import (
    held,
    p99,
    settled,
)


@dataclass(frozen=True)
class Pressure:
    """What the server went through in one run: its CPU and the counters it kept about itself."""

    offered: float
    cpu_share: float  # of the server's cores
    cpu_ms_per_call: float
    gc_ms_per_second: float | None  # None: the server kept no counters
    lag_ms: float | None  # mean lateness of the loop's wake-ups; None for a thread pool
    late_50ms_share: float | None  # share of wake-ups 50 ms or more late
    switches_per_call: float | None

    @classmethod
    def of(cls, repeat: Repeat, report: LoadReport, cpus: int) -> Pressure | None:
        usage, counters = repeat.resources, repeat.server_counters or {}
        if not usage.sampled or usage.wall_seconds <= 0 or report.ok == 0:
            return None
        checks = counters.get("lag_checks", 0)
        switches = counters.get("voluntary_switches", 0) + counters.get("involuntary_switches", 0)
        return cls(
            offered=report.offered_rps or 0.0,
            cpu_share=usage.cpu_seconds / (usage.wall_seconds * cpus),
            cpu_ms_per_call=1000 * usage.cpu_seconds / report.ok,
            gc_ms_per_second=1000 * counters["gc_seconds"] / usage.wall_seconds if counters else None,
            lag_ms=loop_lag_ms(counters),
            late_50ms_share=counters["late_50ms"] / checks if checks else None,
            switches_per_call=switches / report.ok if counters else None,
        )


@dataclass(frozen=True)
class CapacityCell:
    """One stack on one scenario, read back from its runs."""

    result: CellResult
    meta: RunMeta
    settings: dict[str, Any]  # the values the run judges by (SETTINGS, as the run recorded them)
    slots: int | None = None  # calls the server serves at once: thread-pool workers; None for an event loop

    def _runs(self, role: str) -> list[tuple[Repeat, LoadReport]]:
        pairs = zip(self.result.record.repeats, self.result.reports, strict=True)
        return [(repeat, report) for repeat, report in pairs if repeat.role == role]

    @property
    def name(self) -> str:
        return self.result.record.server

    @property
    def failed(self) -> bool:
        return self.result.record.status != "ok"

    @property
    def slo(self) -> float | None:
        slo = self.settings["slo_seconds"].get(self.result.record.scenario)
        return float(slo) if slo is not None else None

    @property
    def all_steps(self) -> list[tuple[Repeat, LoadReport]]:
        """Every SLO search's steps, in the order tried."""
        return self._runs("step")

    @property
    def steps(self) -> list[tuple[Repeat, LoadReport]]:
        """The first SLO search's steps, in the order tried (the capacity, knee and tables read it)."""
        return [pair for pair in self.all_steps if (pair[0].block or 1) == 1]

    @cached_property
    def searches(self) -> list[tuple[float, float]]:
        """Each SLO search's (capacity, failed at), in the order searched (runs before repeated searches: one)."""
        numbers = sorted({repeat.block or 1 for repeat, _ in self.all_steps})
        return [bracket(self, [p for p in self.all_steps if (p[0].block or 1) == number]) for number in numbers]

    @property
    def over_searches(self) -> Interval | None:
        """The capacity over its searches: their geometric mean with its t-interval; None with fewer than two."""
        found = self.capacities
        return interval(found) if len(found) > 1 else None

    @property
    def central(self) -> float:
        """The capacity to rank by: over its searches where it has several, else the first search's held rate."""
        found = self.over_searches
        return found.value if found else self.capacity

    @property
    def capacities(self) -> list[float]:
        """Each search's capacity, the geometric middle of its bracket (held to failed; the rate held where no
        rate above it failed): the values the capacity's interval is over. None held: not counted."""
        return [math.sqrt(held * failed) if failed != inf else held for held, failed in self.searches if held]

    @property
    def saturation_steps(self) -> list[tuple[Repeat, LoadReport]]:
        """The saturation search's steps (none in runs before it)."""
        return self._runs("saturation")

    def holds(self, report: LoadReport) -> bool:
        slo = self.slo
        return slo is not None and held(report, slo)

    @cached_property
    def verdicts(self) -> dict[float, bool]:
        """Each offered rate of the first SLO search, held or failed, as its steps settled it."""
        return verdicts_of(self, self.steps)

    @property
    def capacity(self) -> float:
        """The highest rate the first search held (0 when none was)."""
        return self.searches[0][0] if self.searches else 0.0

    @property
    def failed_at(self) -> float:
        """The lowest rate the first search failed above the capacity (inf when none was): capacity lies below it."""
        return self.searches[0][1] if self.searches else inf

    @property
    def at_capacity(self) -> tuple[Repeat, LoadReport] | None:
        """The held step at the capacity with the highest p99."""
        capacity = self.capacity
        found = [pair for pair in self.steps if pair[1].offered_rps == capacity and self.holds(pair[1])]
        return max(found, key=lambda pair: p99(pair[1]) or 0.0, default=None)

    @property
    def knee(self) -> tuple[Repeat, LoadReport] | None:
        """The first failing step at the lowest rate failed above the capacity: where the SLO gave way."""
        failed_at = self.failed_at
        found = [pair for pair in self.steps if pair[1].offered_rps == failed_at and not self.holds(pair[1])]
        return found[0] if found else None

    @property
    def saturation(self) -> float:
        """The highest OK rate any open-loop step delivered, at any latency."""
        return max((report.ok_rps for _, report in self.all_steps + self.saturation_steps), default=0.0)

    @property
    def capacity_text(self) -> str:
        """The capacity as the interval its steps settled: "2,100 to 2,200" (held to failed)."""
        if not self.capacity:
            low = min((report.offered_rps or 0.0 for _, report in self.steps), default=0.0)
            return f"below {rate(low)}"
        return rate(self.capacity) + ("" if self.failed_at == inf else f" to {rate(self.failed_at)}")

    @property
    def low_load(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("low-load")
        return runs[0] if runs and runs[0][1].ok else None

    def pressure(self, pair: tuple[Repeat, LoadReport] | None) -> Pressure | None:
        return Pressure.of(*pair, self.meta.server_cpus) if pair else None

    def reason(self) -> str:
        """Why the SLO gave way below the CPU bound, from the knee against low load, in one clause."""
        knee, low = self.pressure(self.knee), self.pressure(self.low_load)
        if knee is None or low is None:
            return "no step failed above the capacity, so there is no knee to read"
        wait_bound = self.wait_bound
        if wait_bound is not None and self.capacity >= self.settings["wait_bound_share"] * wait_bound:
            return (
                f"its {self.slots} worker thread{'s each' if self.slots != 1 else ''} held a call for "
                f"{ms(self.low_load_latency)} at low load, so it finishes at most {rate(wait_bound)} calls/s "
                "(the wait bound) "
                f"whatever its core does: at {rate(knee.offered)} calls/s the core was {knee.cpu_share:.0%} busy"
            )
        cost = knee.cpu_ms_per_call / low.cpu_ms_per_call if low.cpu_ms_per_call else 0.0
        parts = [f"at {rate(knee.offered)} calls/s the server used {knee.cpu_share:.0%} of its core"]
        if knee.cpu_share >= self.settings["saturated"]:
            parts.append(f"and a call cost {cost:.2f}x its low-load CPU")
            switches, usual = knee.switches_per_call, low.switches_per_call
            if switches and usual and switches >= self.settings["hand_offs"] * usual:
                parts.append(
                    f"with {switches:.1f} context switches per call against {usual:.1f} at low load (thread hand-offs)"
                )
        else:
            parts.append("so something other than the CPU held the tail")
        if knee.lag_ms is not None and knee.late_50ms_share is not None:
            parts.append(
                f"the loop woke {knee.lag_ms:.1f} ms late on average, "
                f"{knee.late_50ms_share:.0%} of wake-ups by 50 ms or more"
            )
        if knee.gc_ms_per_second is not None:
            parts.append(f"GC took {knee.gc_ms_per_second:.1f} ms per second")
        return ", ".join(parts)

    @property
    def low_load_latency(self) -> float | None:
        """One call's median latency at low load, in seconds."""
        low = self.low_load
        return Latencies([low[1].histogram]).percentile(50) if low and low[1].histogram else None

    @property
    def wait_bound(self) -> float | None:
        """A thread pool's workers over one call's median latency at low load; None for an event loop."""
        alone = self.low_load_latency
        return self.slots / alone if self.slots is not None and alone else None

    @property
    def cpu_bound(self) -> float | None:
        """One server CPU's worth of calls at the CPU cost per call measured at low load."""
        low = self.low_load
        if low is None or low[0].resources.cpu_seconds <= 0:
            return None
        repeat, report = low
        return self.meta.server_cpus / (repeat.resources.cpu_seconds / report.ok)

    @property
    def closed(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("closed-loop")
        return runs[0] if runs else None

    @property
    def driver_busy(self) -> bool:
        busy = self.meta.judged_by.driver_busy
        return any((driver_share(repeat, self.meta) or 0.0) > busy for repeat in self.result.record.repeats)


def verdicts_of(cell: CapacityCell, steps: list[tuple[Repeat, LoadReport]]) -> dict[float, bool]:
    """Each offered rate of one search, held or failed, as its steps settled it."""
    outcomes: dict[float, list[bool]] = {}
    for _, report in steps:
        outcomes.setdefault(report.offered_rps or 0.0, []).append(cell.holds(report))
    return {offered: settled(found) for offered, found in outcomes.items()}


def bracket(cell: CapacityCell, steps: list[tuple[Repeat, LoadReport]]) -> tuple[float, float]:
    """One search's capacity: the highest rate held (0 when none was) and the lowest failed above it (inf when none
    was)."""
    found = verdicts_of(cell, steps)
    held = max((offered for offered, ok in found.items() if ok), default=0.0)
    return held, min((offered for offered, ok in found.items() if not ok and offered > held), default=inf)


def by_scenario(run: StudyRun) -> dict[str, list[CapacityCell]]:
    """scenario -> its stacks, in the run's matrix order."""
    grouped: dict[str, list[CapacityCell]] = {}
    for cell in run.cells:
        slots = run.matrix.get("server_slots", {}).get(cell.record.server)
        grouped.setdefault(cell.record.scenario, []).append(CapacityCell(cell, run.meta, run.settings, slots))
    order = list(run.matrix["servers"])
    for stacks in grouped.values():
        stacks.sort(key=lambda each: order.index(each.name) if each.name in order else len(order))
    return grouped
