"""A study's plan half as data: its axes, the cells they expand to, its driver and its measurement.
Measure-side: it imports the measuring modules, which a report never needs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from harness.method.contest import LEAST_BLOCKS
from harness.method.verdicts import BLOCKS, Method
from harness.plan.matrix import SHARED, SLOW_SLICE_CALLS, Cell, Scenario, cell_name
from harness.plan.options import RunOptions
from harness.plan.servers import ServerVariant
from harness.results.records import CellRecord
from harness.run.measure import CellContext
from harness.run.processes import Child

SLOW_CALLS_PER_SECOND = 8.0  # about what a stack serves of a slow scenario on one core (for estimates only)


@dataclass(frozen=True)
class Axis:
    """One dimension a study varies, its default values, and the run-all option that sets it."""

    name: str
    values: tuple[str, ...]
    option: str


@dataclass(frozen=True)
class Comparison:
    """Alternatives set against a reference on one workload, measured in interleaved rounds. Each alternative is
    a labelled cell: server variants on one scenario, fetch patterns or call shapes on one stack, or ways of
    connecting to one server."""

    workload: str  # names what every alternative serves; also the comparison's file name ("/" becomes "__")
    reference: tuple[str, Cell]  # (label, cell)
    alternatives: tuple[tuple[str, Cell], ...]
    # About how long a label's server start, warm-up and one window take: sizes the comparison's share of a time
    # budget (harness.run.runner), not its measurement.
    window_seconds: float = 4.0
    # Whether the reference also runs as its A/A twin: the runner gives each study's first comparison the study's
    # control (`controlled_first`), so that a study orders its comparisons with the one that suits it first.
    controlled: bool = False
    # Whether it holds an A/A control of its own as well, set by its study: a slow comparison (a wave of calls a
    # slice) where the first comparison's slices last a second, so that each design is calibrated by its own twin.
    own_control: bool = False
    # The driver of its windows, where not the study's (a pattern the study's driver cannot express); None: the
    # study's. The study lists it among its checkers, so that the run records its version.
    driver: str | None = None
    # The server may use every CPU of the machine (how a host's cores serve), not only the run's server CPUs.
    unpinned: bool = False
    # Whether a row of the decision table reads it (its pick over the runner-up): the race answers those first.
    deciding: bool = True
    # The pairs of labels (first over second) whose ratio a row reads as an estimate, whatever it is (what TLS
    # costs): the race keeps both in its blocks until the estimate is known to the tie band.
    estimates: tuple[tuple[str, str], ...] = ()
    # Whether its servers keep their own counters (loop lag, GC) where its study asks for them (StudyPlan.diagnostics):
    # each slice then waits for them to be written afresh (harness.run.resources.FRESH_WAIT_SECONDS), a quarter of
    # a second on average, so a study may spare the comparisons whose question does not turn on them.
    counted: bool = True

    def __post_init__(self) -> None:
        labels = [label for label, _ in (self.reference, *self.alternatives)]
        cells = [cell.key for _, cell in (self.reference, *self.alternatives)]
        if len(set(labels)) != len(labels) or len(set(cells)) != len(cells):
            raise ValueError(f"{self.workload}: labels and cells must be distinct: {labels}")

    def over(self, wire: str) -> Comparison:
        """The same comparison with every cell over wire (run-all --tls, --mtls); a stack's floor, which serves
        plaintext as the stack's own example does, is left out."""
        reference, cell = self.reference
        alternatives = tuple(
            (label, replace(each, wire=wire)) for label, each in self.alternatives if not each.server.floor_of
        )
        return replace(self, reference=(reference, replace(cell, wire=wire)), alternatives=alternatives)

    @property
    def topic(self) -> str:
        """What kind of comparison it is, its workload's first part: `hello` in hello/c50."""
        return self.workload.split("/")[0]

    @property
    def slow(self) -> bool:
        """Whether its calls are slow (`Scenario.slow`): its blocks then run one unmirrored cycle of slices a wave
        long (`fitted_to`)."""
        return any(cell.scenario.slow for _, cell in (self.reference, *self.alternatives))

    def fitted_to(self, method: Method) -> Method:
        """The method as this comparison runs it: a slow one's blocks hold one cycle, each label once."""
        return replace(method, cycles=1, mirrored=False) if self.slow and method.design == BLOCKS else method

    @property
    def labelled(self) -> dict[str, Cell]:
        """label -> cell, the reference's first."""
        return dict((self.reference, *self.alternatives))

    @property
    def cells(self) -> list[Cell]:
        """The reference's cell, then each alternative's."""
        return list(self.labelled.values())

    def block_seconds(self, method: Method) -> float:
        """About how long one block takes: each label's start and warm-up (about a window) and its slices (a slow
        workload's a wave of calls a client at about SLOW_CALLS_PER_SECOND)."""
        labels = len(self.alternatives) + 1 + self.controlled
        method = self.fitted_to(method)
        slices = (2 if method.mirrored else 1) * method.cycles if method.design == BLOCKS else 1
        length = method.slice_seconds
        if self.slow:
            level = max(cell.concurrency for cell in self.cells)
            length = max(length, max(level, SLOW_SLICE_CALLS) / SLOW_CALLS_PER_SECOND)
        return labels * (self.window_seconds + slices * length)

    def estimate_seconds(self, method: Method) -> float:
        """About how long the comparison takes at the least number of blocks; where the study's A/A control runs,
        twice that (the usual case: slices scatter more than stacks differ, so a control needs the blocks).
        Comparisons fit their cycles to their share of a run's budget by these estimates."""
        return self.block_seconds(method) * method.min_blocks * (2 if self.controlled else 1)


def controlled_first(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """A study's comparisons with its A/A control in the first of them, and in those that hold one of their own."""
    return [replace(each, controlled=index == 0 or each.own_control) for index, each in enumerate(comparisons)]


def between_servers(
    scenario: Scenario,
    concurrency: int,
    reference: ServerVariant,
    alternatives: Sequence[ServerVariant],
    connections: str = SHARED,
) -> Comparison:
    """Server variants against a reference on one scenario and level; each labelled by its name."""
    return Comparison(
        f"{scenario.name}/{cell_name(concurrency, connections)}",
        (reference.name, Cell(reference, scenario, concurrency, connections)),
        tuple((each.name, Cell(each, scenario, concurrency, connections)) for each in alternatives),
    )


def cells_of(comparisons: Callable[[RunOptions], list[Comparison]]) -> Callable[[RunOptions], list[Cell]]:
    """A study's cells where its comparisons are its whole matrix: theirs, each once."""

    def cells(options: RunOptions) -> list[Cell]:
        return list({cell.key: cell for comparison in comparisons(options) for cell in comparison.cells}.values())

    return cells


def no_comparisons(options: RunOptions) -> list[Comparison]:
    """A study measured cell by cell."""
    return []


def no_checks(options: RunOptions) -> list[Cell]:
    """A study that measures no cell beside its comparisons."""
    return []


@dataclass(frozen=True)
class StudyPlan:
    """What a study measures and how: the cells its axes expand to, the driver, the measurement of one cell."""

    name: str
    axes: tuple[Axis, ...]
    driver: str  # a key of harness.run.drivers.registry.DRIVERS
    repeats: int  # measured runs per cell unless --repeats says otherwise
    cells: Callable[[RunOptions], list[Cell]]
    # Measures one cell on a running server: (cell, target, server process, context, probe file) -> record.
    measure: Callable[[Cell, str, Child | None, CellContext, str], CellRecord]
    # Servers keep their own counters (GC pauses, loop lag, context switches) for each measured run.
    diagnostics: bool = False
    # Drivers that cross-check the study's own on some cells (their versions are recorded with the run's).
    checkers: tuple[str, ...] = ()
    # The comparisons these options ask for, measured in interleaved rounds (harness.method.contest) instead of cell by
    # cell; none: every cell is measured on its own (the full matrix, and studies not yet moved to rounds).
    comparisons: Callable[[RunOptions], list[Comparison]] = no_comparisons
    # Scenarios the study makes for itself (not in scenarios/), which --scenarios may name as well.
    own_scenarios: tuple[Scenario, ...] = ()
    # The comparisons of its whole matrix (--full), measured in blocks; None: --full measures it cell by cell.
    full_comparisons: Callable[[RunOptions], list[Comparison]] | None = None
    # Cells measured cell by cell beside the comparisons, in every run that races them: a driver's cross-check.
    checks: Callable[[RunOptions], list[Cell]] = no_checks
    # The blocks each of its comparisons gets whatever the budget (two make an interval; whether a row of so many
    # is trusted is what `harness validate` measured: harness.results.calibration).
    least_blocks: int = LEAST_BLOCKS

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
