"""A comparison measured in blocks of warm servers (or, in the design before them, a fresh start per window):
the servers started side by side on the run's server CPUs, each label warmed up, then the slices of the block's
plan (harness.rounds) in turn, each paired by its place with the reference's. What an idle neighbour spent during
each slice, and what starts, warm-ups and slices cost, are recorded with it."""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from harness.backends import LatencyRoutes, backend_env
from harness.drivers.held import SERVED_MODES, HeldLoadgen
from harness.drivers.loadgen import loadgen_argv
from harness.drivers.report import DriverError
from harness.matrix import Cell, Scenario, window_requests
from harness.measure import CellContext, failure_reason, new_record, sampled_run, warm_up
from harness.noise import Costs
from harness.options import RunOptions
from harness.processes import Child, ProcessError
from harness.results import CellRecord, Repeat, save_cell, save_comparison
from harness.rounds import Rounds, run_rounds
from harness.serving import running_server
from harness.studies.planning import Comparison
from harness.tls import PLAIN, PLAINTEXT, Wire, negotiated
from harness.verdicts import BLOCKS, HELD, ComparisonRecord, Method, control_of
from scenarios.config import BackendConfig
from servers.diagnostics import STATS_DIR_VARIABLE


class RunProgress(Protocol):
    """Told when each study and cell starts and finishes (a progress display, or nothing)."""

    def study_started(self, name: str, cells: int) -> None: ...

    def cell_started(self, cell: Cell, index: int, total: int) -> None: ...

    def cell_finished(self, cell: Cell, record: CellRecord) -> None: ...


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


def holdable(comparison: Comparison, driver: str) -> bool:
    """Whether a held loadgen can run a comparison's slices: its driver is ghz or loadgen, and loadgen has a served
    mode for every cell (not a watch, nor a call it does not make)."""
    if driver not in ("ghz", "loadgen"):
        return False
    for cell in comparison.labelled.values():
        try:
            argv = loadgen_argv("loadgen", cell, "127.0.0.1:1", cell.concurrency)
        except ValueError:
            return False
        if argv[1] not in SERVED_MODES:
            return False
    return True


def held_context(comparison: Comparison, context: CellContext) -> CellContext | None:
    """The context that drives a comparison's slices by a held loadgen, or None where one cannot (`holdable`)."""
    return context.driven_by("loadgen") if holdable(comparison, context.driver.name) else None


def measure_comparison(
    comparison: Comparison,
    where: StudyEnvironment,
    context: CellContext,
    method: Method,
    seed: int,
    progress: RunProgress,
    deadline: float | None = None,
) -> ComparisonRecord:
    """A comparison in blocks (harness.rounds): in the blocks design each block starts every label's server afresh
    side by side, warms each label up (thrown away), then measures the block's slices in their order, each sized
    from its label's warm-up to last about the method's slice; in the fresh design every window has a fresh start
    of its own. Each label's slices go into its cell (the A/A twin's into the reference's, as "control"), the
    blocks' order and stopping into the study's comparisons/, with what starts, warm-ups and slices cost. No
    block starts that would end past `deadline` (a time.monotonic() time)."""
    options = where.options
    cells = comparison.labelled
    reference = comparison.reference[0]
    control = control_of(reference)
    records = {label: new_record(cell, options) for label, cell in cells.items()}
    runs: dict[str, list[Repeat]] = {label: [] for label in cells}
    failures: dict[str, str] = {}
    sizes: dict[str, int] = {}
    spent: dict[str, list[float]] = {"start": [], "warm": [], "slice_overhead": []}
    measured = itertools.count(1)
    slice_seconds = method.slice_seconds if method.design == BLOCKS else None  # fresh: the scenario's window
    estimate = (len(cells) + comparison.controlled) * (2 * method.cycles if slice_seconds else 1) * method.min_rounds
    holding = held_context(comparison, context) if method.slicer == HELD else None

    def owner(label: str) -> str:
        return reference if label == control else label

    def failed(label: str, number: int, error: BaseException | str) -> None:
        reason = error if isinstance(error, str) else failure_reason(error)
        failures.setdefault(owner(label), f"{label}, block {number}: {reason}")

    def serve(label: str) -> AbstractContextManager[tuple[str, Child]]:
        cell = cells[owner(label)]
        env = counted(where.server_env(cell.scenario), context)
        return running_server(cell.server, env, cpus=window_cpus(comparison, options), wire=context.wire(cell))

    def warm(label: str, target: str, fresh: bool, driving: CellContext) -> None:
        """Warm a label up on its server (thrown away) and size its slices from the warm-up's rate."""
        cell = cells[owner(label)]
        if not records[owner(label)].tls:
            records[owner(label)] = replace(records[owner(label)], tls=negotiated(target, context.wire(cell)))
        begun = time.monotonic()
        warmed = warm_up(cell, target, driving, records[owner(label)])
        spent["warm"].append(time.monotonic() - begun)
        records[owner(label)] = replace(records[owner(label)], warmup_ok_rps=warmed.warmup_ok_rps)
        size = window_requests(warmed.warmup_ok_rps, cell, options.requests, slice_seconds)
        sizes[label] = sizes.setdefault(label, size) if fresh else size

    def measure_slice(
        label: str, number: int, index: int | None, server: tuple[str, Child], idle: list[int], driving: CellContext
    ) -> float:
        cell, role = cells[owner(label)], "control" if label == control else "round"
        progress.cell_started(cell, next(measured), estimate)
        target, child = server
        relative = f"{records[owner(label)].stem}-{role}{number}" + ("" if index is None else f"-{index}") + ".json"
        argv = driving.argv(cell, target, sizes[label])
        begun = time.monotonic()
        repeat, report = sampled_run(argv, child, driving, relative, sizes[label], role, number, index, idle)
        spent["slice_overhead"].append(max(0.0, time.monotonic() - begun - report.total))
        runs[owner(label)].append(repeat)
        return report.ok_rps

    def block(number: int, plan: list[str]) -> list[float | None]:
        """Every server of the block started side by side and warmed, then each slice in the plan's order."""
        with ExitStack() as stack:
            servers: dict[tuple[object, ...], tuple[str, Child] | str] = {}
            for label in dict.fromkeys(plan):
                key = server_of(comparison, label, options)
                if key in servers:
                    continue
                begun = time.monotonic()
                try:
                    servers[key] = stack.enter_context(serve(label))
                    spent["start"].append(time.monotonic() - begun)
                except ProcessError as error:
                    servers[key] = failure_reason(error)
            driving = context
            if holding is not None:  # one loadgen for the block, its connections held from slice to slice
                held = stack.enter_context(HeldLoadgen(holding.tool))
                driving = replace(holding, driver=replace(holding.driver, run=held.run))
            ready: set[str] = set()
            for label in dict.fromkeys(plan):
                server = servers[server_of(comparison, label, options)]
                try:
                    if isinstance(server, str):
                        raise ProcessError(server)
                    warm(label, server[0], fresh=False, driving=driving)
                    ready.add(label)
                except (ProcessError, DriverError, OSError) as error:
                    failed(label, number, error)
            pids = {key: server[1].pid for key, server in servers.items() if not isinstance(server, str)}
            rates: list[float | None] = []
            for index, label in enumerate(plan):
                key = server_of(comparison, label, options)
                if label not in ready:
                    rates.append(None)
                    continue
                idle = [pid for other, pid in pids.items() if other != key]
                try:
                    rates.append(measure_slice(label, number, index, servers[key], idle, driving))  # type: ignore[arg-type]
                except (ProcessError, DriverError, OSError) as error:
                    failed(label, number, error)
                    ready.discard(label)
                    rates.append(None)
            return rates

    def fresh_windows(number: int, plan: list[str]) -> list[float | None]:
        """Each label's window on a fresh server start of its own, warmed up first (the design before blocks)."""
        rates: list[float | None] = []
        for label in plan:
            try:
                begun = time.monotonic()
                with serve(label) as server:
                    spent["start"].append(time.monotonic() - begun)
                    warm(label, server[0], fresh=True, driving=context)
                    rates.append(measure_slice(label, number, None, server, [], context))
            except (ProcessError, DriverError, OSError) as error:
                failed(label, number, error)
                rates.append(None)
        return rates

    begun = time.monotonic()
    alternatives = tuple(label for label, _ in comparison.alternatives)
    record = run_rounds(
        Rounds(comparison.workload, reference, alternatives, comparison.controlled),
        block if method.design == BLOCKS else fresh_windows,
        method,
        seed,
        deadline,
    )
    costs = Costs(*(statistics.fmean(values) if values else 0.0 for values in spent.values()))
    record = replace(record, cells={label: cell.key for label, cell in cells.items()}, costs=costs.to_json())
    save_comparison(context.study_dir, record)
    for label, cell_record in records.items():
        status, reason = ("failed", failures[label]) if label in failures else ("ok", "")
        finished = replace(
            cell_record, status=status, reason=reason, repeats=runs[label], seconds=round(time.monotonic() - begun, 3)
        )
        save_cell(context.study_dir, finished)
        progress.cell_finished(cells[label], finished)
    return record
