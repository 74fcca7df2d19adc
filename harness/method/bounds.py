"""What a cell could physically reach, and how close it came.

- Wait bound (Little's law): calls in progress / time per call = min(concurrency, slots) / latency,
  where slots are a thread-pool server's workers (times processes), unbounded for an event loop, and
  latency is one call's time alone at concurrency 1 (the emulated wait plus its own service time).
- CPU bound: server CPUs / CPU seconds per call, from the server's CPU time over the measured runs.
- The lower of the two binds; efficiency = OK requests/sec / that bound.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from harness.results.records import CellResult


def wait_bound(concurrency: int, slots: int | None, latency_seconds: float) -> float:
    """Little's law: the most calls per second min(concurrency, slots) callers can complete."""
    if latency_seconds <= 0:
        return math.inf
    in_progress = concurrency if slots is None else min(concurrency, slots)
    return in_progress / latency_seconds


AT_BOUND = 0.85  # a rate from this share of its wait bound to its inverse serves at the bound: its latency the wait


def at_wait_bound(rate: float, bound: float) -> bool:
    """Whether a rate sits at its wait bound (Little's law): within 15% of it (AT_BOUND), its calls taking about the
    wait and no more, so that rates there tie by construction and what differs is what each call costs. A rate far
    above the bound was not waiting as its scenario says."""
    return math.isfinite(bound) and bound > 0 and AT_BOUND * bound <= rate <= bound / AT_BOUND


def waits_alone(latency_seconds: float, wait_seconds: float) -> bool:
    """Whether calls that take this long (their median) spend about their wait and no more: at least the wait, at
    most the wait over AT_BOUND. The same test as at_wait_bound read from the latency, which a short slice does
    not bias: a slice of ten waves of calls counts its first wave's wait and its last wave's tail in its wall
    time, so its rate reads a few percent under Little's bound even where every call took the wait alone."""
    return wait_seconds > 0 and wait_seconds <= latency_seconds <= wait_seconds / AT_BOUND


def cpu_bound(server_cpus: int, cpu_seconds: float, calls: int) -> float:
    """The most calls per second the server's CPUs allow at the CPU cost measured per call."""
    if calls <= 0 or cpu_seconds <= 0:
        return math.inf
    return server_cpus / (cpu_seconds / calls)


@dataclass(frozen=True)
class Bounds:
    """Both bounds of a cell, the one that binds, and the measured throughput against it."""

    wait: float
    cpu: float
    achieved: float

    @property
    def binding(self) -> str:
        return "wait" if self.wait <= self.cpu else "CPU"

    @property
    def bound(self) -> float:
        return min(self.wait, self.cpu)

    @property
    def efficiency(self) -> float:
        return self.achieved / self.bound if math.isfinite(self.bound) and self.bound > 0 else 0.0


def cell_bounds(result: CellResult, server_cpus: int, slots: int | None) -> Bounds | None:
    """A measured cell's bounds, from its files: None without a probe (calls alone) or measured runs.

    server_cpus: the CPUs the server under test had; slots: calls the server can serve at once (thread-pool
    workers), None for an event loop.
    """
    if result.probe is None or not result.reports or result.record.status != "ok":
        return None
    per_call = [
        repeat.resources.cpu_seconds / report.ok
        for repeat, report in zip(result.record.repeats, result.reports, strict=True)
        if report.ok
    ]
    return Bounds(
        wait=wait_bound(result.record.concurrency, slots, result.probe.average),
        cpu=cpu_bound(server_cpus, statistics.median(per_call), 1) if per_call else math.inf,
        achieved=statistics.median(report.ok_rps for report in result.reports),
    )
