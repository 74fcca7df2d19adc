"""A comparison measured in blocks of warm servers (or, in the design before them, a fresh start per window):
the servers started side by side on the run's server CPUs, each label warmed up, then the slices of the block's
plan (harness.method.contest) in turn, each paired by its place with the reference's. What an idle neighbour spent
during each slice, and what starts, warm-ups and slices cost, are recorded with it."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from harness.method.comparison_record import ComparisonRecord
from harness.method.contest import Contest
from harness.method.moderation import row_groups
from harness.method.noise import Costs
from harness.method.race import run_blocks
from harness.method.verdicts import BLOCKS, HELD, Method, control_of
from harness.plan.matrix import Cell, Scenario, warming, window_requests
from harness.plan.options import RunOptions
from harness.plan.wires import PLAINTEXT
from harness.results.load import DriverError
from harness.results.records import CellRecord, Repeat, save_cell, save_comparison
from harness.run.backends import backend_env
from harness.run.drivers.held import HeldLoadgen, holdable
from harness.run.latency import LatencyRoutes
from harness.run.measure import CellContext, failure_reason, new_record, sampled_run, warm_up
from harness.run.planning import Comparison
from harness.run.processes import Child, ProcessError
from harness.run.serving import running_server
from harness.run.tls import PLAIN, Wire, negotiated
from scenarios.config import BackendConfig
from servers.diagnostics import STATS_DIR_VARIABLE


class RunProgress(Protocol):
    """Told when each study and cell starts and finishes (a progress display, or nothing)."""

    def planned(self, text: str) -> None: ...

    def study_started(self, name: str, cells: int) -> None: ...

    def cell_started(self, cell: Cell, index: int, total: int) -> None: ...

    def cell_finished(self, cell: Cell, record: CellRecord) -> None: ...

    def block_finished(self, study: str, workload: str, blocks: int, still_open: int, seconds_left: float) -> None: ...


def counted(env: dict[str, str], context: CellContext) -> dict[str, str]:
    """A server's environment, naming where it writes its own counters when the study reads them."""
    return env if context.stats_dir is None else {**env, STATS_DIR_VARIABLE: str(context.stats_dir)}


@dataclass(frozen=True)
class StudyEnvironment:
    """Where a study's cells run: the options, the backends (direct, or through latency routes), the driver."""

    options: RunOptions
    backends: BackendConfig | None  # None when the run measures a --target with its own backends
    routes: LatencyRoutes | None
    tool: Path
    run_dir: Path
    wires: Mapping[str, Wire] = field(default_factory=lambda: {PLAINTEXT: PLAIN})

    def server_env(self, scenario: Scenario) -> dict[str, str]:
        """The backend variables a server of this scenario gets (through a latency proxy where it has one)."""
        config = self.routes.config(*self.options.latencies(scenario)) if self.routes else self.backends
        assert config is not None, "a server the harness starts needs backends"
        return backend_env(config)


def window_cpus(comparison: Comparison, options: RunOptions) -> tuple[int, ...]:
    """The CPUs a comparison's server runs on: the run's server CPUs, or, unpinned, every CPU the run has. Named
    either way: a child left unpinned would inherit the harness's own affinity, which keeps off the server's CPUs."""
    return options.available_cpus if comparison.unpinned else options.server_cpus


def server_of(comparison: Comparison, label: str, options: RunOptions) -> tuple[object, ...]:
    """What a label's server is in a block: labels of one variant, wire and backend route share a start (ways of
    connecting, call shapes, fetch patterns); the A/A twin always has a start of its own."""
    if label == control_of(comparison.reference[0]):
        return (label,)
    cell = comparison.labelled[label]
    return (cell.server.name, cell.wire, options.latencies(cell.scenario))


def held_context(comparison: Comparison, context: CellContext) -> CellContext | None:
    """The context that drives a comparison's slices by a held loadgen, or None where one cannot (`holdable`)."""
    holds = holdable(comparison.labelled.values(), context.driver.name)
    return context.driven_by("loadgen") if holds else None


class ComparisonMeasurement:
    """A comparison's blocks measured on real servers (harness.method.contest hands `block` each block's plan), its
    slices recorded into its cells, and, once its race is over, its record and cells saved (`save`).

    In the blocks design each block starts every label's server afresh side by side, warms each label up (thrown
    away), then measures the block's slices in their order, each sized from its label's warm-up to last about the
    method's slice (a slow workload's: a wave of calls per worker, `matrix.window_requests`); in the fresh design
    every window has a fresh start of its own. Each label's slices go into its cell (the A/A twin's into the
    reference's, as "control"), the blocks' order and stopping into the study's comparisons/, with what starts,
    warm-ups and slices cost."""

    def __init__(
        self,
        comparison: Comparison,
        where: StudyEnvironment,
        context: CellContext,
        method: Method,
        progress: RunProgress,
    ) -> None:
        options = where.options
        if not comparison.counted:
            context = replace(context, stats_dir=None)
        self.comparison, self.where, self.context, self.method, self.progress = (
            comparison,
            where,
            context,
            method,
            progress,
        )
        self.cells = comparison.labelled
        self.reference = comparison.reference[0]
        self.control = control_of(self.reference)
        self.records = {label: new_record(cell, options) for label, cell in self.cells.items()}
        self.runs: dict[str, list[Repeat]] = {label: [] for label in self.cells}
        self.failures: dict[str, str] = {}
        self.sizes: dict[str, int] = {}
        self.spent: dict[str, list[float]] = {"start": [], "warm": [], "slice_overhead": []}
        self.measured = itertools.count(1)
        self.slice_seconds = method.slice_seconds if method.design == BLOCKS else None  # fresh: the scenario's window
        slices = (2 if method.mirrored else 1) * method.cycles if self.slice_seconds else 1
        self.estimate = (len(self.cells) + comparison.controlled) * slices * method.min_blocks
        self.holding = held_context(comparison, context) if method.slicer == HELD else None

    @property
    def driver(self) -> str:
        """Who runs the comparison's windows: a held loadgen, or its context's driver."""
        return (self.holding or self.context).driver.name

    def owner(self, label: str) -> str:
        return self.reference if label == self.control else label

    def failed(self, label: str, number: int, error: BaseException | str) -> None:
        reason = error if isinstance(error, str) else failure_reason(error)
        self.failures.setdefault(self.owner(label), f"{label}, block {number}: {reason}")

    def serve(self, label: str) -> AbstractContextManager[tuple[str, Child]]:
        cell = self.cells[self.owner(label)]
        env = counted(self.where.server_env(cell.scenario), self.context)
        cpus = window_cpus(self.comparison, self.where.options)
        return running_server(cell.server, env, cpus=cpus, wire=self.context.wire(cell))

    def warm(self, label: str, target: str, fresh: bool, driving: CellContext) -> None:
        """Warm a label up on its server (thrown away) and size its slices from the warm-up's rate."""
        owner = self.owner(label)
        cell = self.cells[owner]
        if not self.records[owner].tls:
            self.records[owner] = replace(self.records[owner], tls=negotiated(target, self.context.wire(cell)))
        begun = time.monotonic()
        warm = warming(cell)
        if warm != cell:
            requests = max(warm.concurrency, cell.scenario.warmup_requests)
            self.records[owner] = replace(self.records[owner], warmup_requests=requests)
        warmed = warm_up(warm, target, driving, self.records[owner])
        self.spent["warm"].append(time.monotonic() - begun)
        self.records[owner] = replace(self.records[owner], warmup_ok_rps=warmed.warmup_ok_rps)
        size = window_requests(warmed.warmup_ok_rps, cell, self.where.options.requests, self.slice_seconds)
        self.sizes[label] = self.sizes.setdefault(label, size) if fresh else size

    def measure_slice(
        self,
        label: str,
        number: int,
        index: int | None,
        server: tuple[str, Child],
        idle: list[int],
        driving: CellContext,
    ) -> float:
        owner = self.owner(label)
        cell, role = self.cells[owner], "control" if label == self.control else "round"
        self.progress.cell_started(cell, next(self.measured), self.estimate)
        target, child = server
        relative = f"{self.records[owner].stem}-{role}{number}" + ("" if index is None else f"-{index}") + ".json"
        argv = driving.argv(cell, target, self.sizes[label])
        routes = self.where.routes
        proxy = routes.pid if routes is not None and self.where.options.latencies(cell.scenario) != (0, 0, 0) else None
        begun = time.monotonic()
        size = self.sizes[label]
        repeat, report = sampled_run(argv, child, driving, relative, size, role, number, index, idle, proxy)
        self.spent["slice_overhead"].append(max(0.0, time.monotonic() - begun - report.total))
        self.runs[owner].append(repeat)
        return report.ok_rps

    def block(self, number: int, plan: list[str]) -> list[float | None]:
        """One block: in the blocks design every server started side by side and warmed, then each slice in the
        plan's order; in the fresh design each window on a start of its own."""
        return self.warm_block(number, plan) if self.method.design == BLOCKS else self.fresh_windows(number, plan)

    def warm_block(self, number: int, plan: list[str]) -> list[float | None]:
        """Every server of the block started side by side and warmed, then each slice in the plan's order."""
        comparison, options = self.comparison, self.where.options
        with ExitStack() as stack:
            servers: dict[tuple[object, ...], tuple[str, Child] | str] = {}
            for label in dict.fromkeys(plan):
                key = server_of(comparison, label, options)
                if key in servers:
                    continue
                begun = time.monotonic()
                try:
                    servers[key] = stack.enter_context(self.serve(label))
                    self.spent["start"].append(time.monotonic() - begun)
                except ProcessError as error:
                    servers[key] = failure_reason(error)
            driving = self.context
            if self.holding is not None:  # one loadgen for the block, its connections held from slice to slice
                held = stack.enter_context(HeldLoadgen(self.holding.tool))
                driving = replace(self.holding, driver=replace(self.holding.driver, run=held.run))
            ready: set[str] = set()
            for label in dict.fromkeys(plan):
                server = servers[server_of(comparison, label, options)]
                try:
                    if isinstance(server, str):
                        raise ProcessError(server)
                    self.warm(label, server[0], fresh=False, driving=driving)
                    ready.add(label)
                except (ProcessError, DriverError, OSError) as error:
                    self.failed(label, number, error)
            pids = {key: server[1].pid for key, server in servers.items() if not isinstance(server, str)}
            rates: list[float | None] = []
            for index, label in enumerate(plan):
                key = server_of(comparison, label, options)
                if label not in ready:
                    rates.append(None)
                    continue
                idle = [pid for other, pid in pids.items() if other != key]
                try:
                    rates.append(self.measure_slice(label, number, index, servers[key], idle, driving))  # type: ignore[arg-type]
                except (ProcessError, DriverError, OSError) as error:
                    self.failed(label, number, error)
                    ready.discard(label)
                    rates.append(None)
            return rates

    def fresh_windows(self, number: int, plan: list[str]) -> list[float | None]:
        """Each label's window on a fresh server start of its own, warmed up first (the design before blocks)."""
        rates: list[float | None] = []
        for label in plan:
            try:
                begun = time.monotonic()
                with self.serve(label) as server:
                    self.spent["start"].append(time.monotonic() - begun)
                    self.warm(label, server[0], fresh=True, driving=self.context)
                    rates.append(self.measure_slice(label, number, None, server, [], self.context))
            except (ProcessError, DriverError, OSError) as error:
                self.failed(label, number, error)
                rates.append(None)
        return rates

    def contest(self) -> Contest:
        """What harness.method.contest races: the comparison's labels, reference and control, the groups its rows
        are moderated within, whether a decision row reads it, which labels it may pick (not a floor) and the
        estimates a row reads."""
        comparison = self.comparison
        alternatives = tuple(label for label, _ in comparison.alternatives)
        groups = row_groups(self.context.study_dir.name, self.cells[self.reference].scenario.name)
        pickable = tuple(label for label, cell in self.cells.items() if not cell.server.floor_of)
        return Contest(
            comparison.workload,
            self.reference,
            alternatives,
            comparison.controlled,
            groups,
            comparison.deciding,
            pickable,
            comparison.estimates,
        )

    def save(self, record: ComparisonRecord) -> ComparisonRecord:
        """The comparison's record (with each label's cell and what starts, warm-ups and slices cost) into the
        study's comparisons/, and each label's cell with its slices."""
        costs = Costs(*(statistics.fmean(values) if values else 0.0 for values in self.spent.values()))
        cells = {label: cell.key for label, cell in self.cells.items()}
        record = replace(record, cells=cells, costs=costs.to_json(), driver=self.driver)
        save_comparison(self.context.study_dir, record)
        for label, cell_record in self.records.items():
            status, reason = ("failed", self.failures[label]) if label in self.failures else ("ok", "")
            finished = replace(
                cell_record,
                status=status,
                reason=reason,
                repeats=self.runs[label],
                seconds=round(record.wall_seconds, 3),  # its comparison's blocks' time
            )
            save_cell(self.context.study_dir, finished)
            self.progress.cell_finished(self.cells[label], finished)
        return record


def measure_comparison(
    comparison: Comparison,
    where: StudyEnvironment,
    context: CellContext,
    method: Method,
    seed: int,
    progress: RunProgress,
    deadline: float | None = None,
) -> ComparisonRecord:
    """A comparison in blocks on its own (harness.method.contest.run_blocks), saved: no block starts that would end past
    `deadline` (a time.monotonic() time) once it has two."""
    measurement = ComparisonMeasurement(comparison, where, context, method, progress)
    return measurement.save(run_blocks(measurement.contest(), measurement.block, method, seed, deadline))
