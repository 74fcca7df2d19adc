"""A study's plan half as data: its axes, the cells they expand to, its driver and its measurement.
Measure-side: it imports the measuring modules, which a report never needs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.matrix import SHARED, Cell, Scenario, ServerVariant, cell_name
from harness.measure import CellContext
from harness.options import RunOptions
from harness.processes import Child
from harness.results import CellRecord


@dataclass(frozen=True)
class Axis:
    """One dimension a study varies, its default values, and the run-all option that sets it."""

    name: str
    values: tuple[str, ...]
    option: str


@dataclass(frozen=True)
class Comparison:
    """Server variants set against a reference on one workload, measured in interleaved rounds."""

    scenario: Scenario
    concurrency: int
    reference: ServerVariant
    alternatives: tuple[ServerVariant, ...]
    connections: str = SHARED

    @property
    def workload(self) -> str:
        """scenario/c<N>[+connections]: what every alternative serves."""
        return f"{self.scenario.name}/{cell_name(self.concurrency, self.connections)}"

    def cell(self, server: ServerVariant) -> Cell:
        return Cell(server, self.scenario, self.concurrency, self.connections)

    @property
    def cells(self) -> list[Cell]:
        """The reference's cell, then each alternative's."""
        return [self.cell(server) for server in (self.reference, *self.alternatives)]


def no_comparisons(options: RunOptions) -> list[Comparison]:
    """A study measured cell by cell."""
    return []


@dataclass(frozen=True)
class StudyPlan:
    """What a study measures and how: the cells its axes expand to, the driver, the measurement of one cell."""

    name: str
    axes: tuple[Axis, ...]
    driver: str  # a key of harness.drivers.registry.DRIVERS
    repeats: int  # measured runs per cell unless --repeats says otherwise
    cells: Callable[[RunOptions], list[Cell]]
    # Measures one cell on a running server: (cell, target, server process, context, probe file) -> record.
    measure: Callable[[Cell, str, Child | None, CellContext, str], CellRecord]
    # Servers keep their own counters (GC pauses, loop lag, context switches) for each measured run.
    diagnostics: bool = False
    # Drivers that cross-check the study's own on some cells (their versions are recorded with the run's).
    checkers: tuple[str, ...] = ()
    # The comparisons these options ask for, measured in interleaved rounds (harness.rounds) instead of cell by
    # cell; none: every cell is measured on its own (the full matrix, and studies not yet moved to rounds).
    comparisons: Callable[[RunOptions], list[Comparison]] = no_comparisons

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
