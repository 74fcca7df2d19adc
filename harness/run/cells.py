"""The studies a run measures (`Chosen`: each with its plan, cells and comparisons), and a study's cells
measured one by one, each recorded as it finishes, its entry in run.json started and ended.

One server start serves all of a variant's cells of one scenario (levels ascending): a warm-up per
level is thrown away, a probe (calls one at a time, for the bounds) runs once per start, and the
measured runs are sized from the level's warm-up.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.method.verdicts import HELD, Method
from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.shards import Shard, deal
from harness.results.load import DriverError
from harness.results.records import CellRecord, StudyRun, load_cells, save_cell
from harness.results.run_meta import RunMeta, StudyEntry, Target
from harness.run.blocks import RunProgress, StudyEnvironment, counted
from harness.run.drivers.held import holdable
from harness.run.drivers.registry import DRIVERS
from harness.run.measure import CellContext, failure_reason
from harness.run.planning import Comparison, StudyPlan, controlled_first
from harness.run.processes import ProcessError
from harness.run.serving import running_server
from harness.run.tls import negotiated


@dataclass(frozen=True)
class Chosen:
    """A study a run measures: its name, question and settings, what its run must meet, its plan half, and the cells
    the options expand it to (harness.studies.choosing makes one from the registry)."""

    name: str
    question: str
    settings: Mapping[str, Any]
    targets: Callable[[StudyRun, float, bool], dict[str, Target]]  # (its run, wall seconds, full matrix): all of them
    plan: StudyPlan
    cells: list[Cell]
    comparisons: list[Comparison] = field(default_factory=list)  # measured in rounds, when there are any
    checks: list[Cell] = field(default_factory=list)  # measured cell by cell before its comparisons race


BY_CELL_SECONDS = 30.0  # about what a cell measured on its own costs, for dealing such a study to a shard


def sharded(plans: list[Chosen], shard: Shard, method: Method) -> list[Chosen]:
    """The part of the plan a shard measures (harness.plan.shards.deal): its comparisons, each study's A/A control
    in its first one there; a study measured cell by cell goes whole to one shard, and a study's checks with its
    first comparison's shard."""
    items = [(each, comparison) for each in plans for comparison in each.comparisons]
    whole = [each for each in plans if not each.comparisons]
    costs = [comparison.estimate_seconds(method) for _, comparison in items]
    costs += [BY_CELL_SECONDS * len(each.cells) for each in whole]
    dealt = deal(costs, shard.count)
    mine = {id(comparison) for (_, comparison), at in zip(items, dealt, strict=False) if at == shard.index - 1}
    mine_whole = {id(each) for each, at in zip(whole, dealt[len(items) :], strict=True) if at == shard.index - 1}
    found = []
    for each in plans:
        if not each.comparisons:
            if id(each) in mine_whole:
                found.append(each)
            continue
        kept = [comparison for comparison in each.comparisons if id(comparison) in mine]
        if not kept:
            continue
        first = dealt[next(index for index, (owner, _) in enumerate(items) if owner is each)] == shard.index - 1
        compared = controlled_first([replace(comparison, controlled=False) for comparison in kept])
        cells = list({cell.key: cell for comparison in compared for cell in comparison.cells}.values())
        found.append(replace(each, cells=cells, comparisons=compared, checks=each.checks if first else []))
    return found


def _failed(cell: Cell, reason: str, status: str = "failed") -> CellRecord:
    """A cell's record when it was not measured: failed or skipped, with the reason."""
    return CellRecord(
        cell.scenario.name,
        cell.server.name,
        cell.concurrency,
        status,
        reason,
        connections=cell.connections,
        wire=cell.wire,
    )


def skipped(group: list[Cell], reason: str, started: Callable[[Cell], None]) -> Iterator[tuple[Cell, CellRecord]]:
    """Cells recorded as skipped, with the reason."""
    for cell in group:
        started(cell)
        yield cell, _failed(cell, reason, "skipped")


def serve_and_measure(
    each: StudyPlan, group: list[Cell], env: dict[str, str], context: CellContext, started: Callable[[Cell], None]
) -> Iterator[tuple[Cell, CellRecord]]:
    """One variant's cells of one scenario on as few server starts as possible: a new one only after a crash."""
    pending = list(group)
    while pending:
        try:
            wire = context.wire(pending[0])  # the cells of a group share their server, and so its wire
            server = running_server(
                pending[0].server, counted(env, context), cpus=context.options.server_cpus, wire=wire
            )
            with server as (target, child):
                probe_file, settled = "", negotiated(target, wire)
                while pending:
                    cell = pending.pop(0)
                    started(cell)
                    record = replace(each.measure(cell, target, child, context, probe_file), tls=settled)
                    probe_file = record.probe_file
                    yield cell, record
                    if child.process.poll() is not None:
                        break  # the server died: the rest of the group gets a new one
        except ProcessError as error:  # the server did not start: the whole group fails with the reason
            reason = failure_reason(error)
            for cell in pending:
                started(cell)
                yield cell, _failed(cell, reason)
            pending = []


def probe_target(context: CellContext, cell: Cell) -> str:
    """One call of the cell's RPC to a target; why the target cannot serve the scenario, or ""."""
    address = cell.server.address
    try:
        run = context.driver.run(context.argv(replace(cell, concurrency=1), address, 1), 60.0)
    except DriverError as error:
        return f"the target at {address} could not be reached: {str(error).splitlines()[0][:300]}"
    if run.report.ok != 1:
        return f"the target does not answer {cell.scenario.call}: {run.report.status_codes} {run.report.errors}"
    return ""


def measure_target(
    each: StudyPlan, group: list[Cell], context: CellContext, started: Callable[[Cell], None]
) -> Iterator[tuple[Cell, CellRecord]]:
    """A target's cells of one scenario, if one call of its RPC succeeds first; else each is skipped with why."""
    reason = probe_target(context, group[0])
    if reason:
        yield from skipped(group, reason, started)
        return
    probe_file = ""
    for cell in group:
        started(cell)
        record = each.measure(cell, cell.server.address, None, context, probe_file)
        probe_file = record.probe_file
        yield cell, record


def slices_driver(each: Chosen, options: RunOptions) -> str:
    """The driver that runs a study's windows: its own, or loadgen where a held one runs every comparison's slices."""
    driver = each.plan.driver
    held = options.slices_by == HELD and each.comparisons
    holds = all(holdable(c.labelled.values(), c.driver or driver) for c in each.comparisons)
    return "loadgen" if held and holds else driver


def study_matrix(each: StudyPlan, options: RunOptions, cells: list[Cell], repeats: int, driver: str) -> dict[str, Any]:
    """What a study measured, recorded in run.json: its axes, how each server variant served, the driver."""
    servers = list({cell.server.name: cell.server for cell in cells}.values())
    scenarios = list({cell.scenario.name: cell.scenario for cell in cells}.values())
    return {
        "axes": {axis.name: list(axis.values) for axis in each.axes},
        "servers": [server.name for server in servers],
        "server_commands": {server.name: server.command for server in servers},
        "server_slots": {server.name: server.slots for server in servers},
        "server_processes": {server.name: server.shape["processes"] for server in servers},
        "server_shapes": {server.name: server.shape for server in servers},
        "scenarios": [scenario.name for scenario in scenarios],
        "scenario_calls": {scenario.name: scenario.call for scenario in scenarios},
        "scenario_latency_ms": {scenario.name: options.latencies(scenario) for scenario in scenarios},
        "concurrency": sorted({cell.concurrency for cell in cells}),
        "connections": list({cell.connections: None for cell in cells}),
        "repeats": repeats,
        "requests": options.requests
        or {scenario.name: f"sized for {scenario.run_seconds} s from the warm-up" for scenario in scenarios},
        "buckets": {
            scenario.bucket: options.bucket_objects(scenario.bucket) for scenario in scenarios if scenario.bucket
        },
        "jitter_ms": options.jitter_ms,
        "driver": driver,
    }


def finished_entry(chosen: Chosen, entry: StudyEntry, run: StudyRun, status: str, wall_seconds: float) -> StudyEntry:
    """A study's entry once it has stopped: its status, wall time and targets (the shared ones, then its own)."""
    full = entry.default_matrix and status == "complete"
    targets = chosen.targets(run, wall_seconds, full)
    return replace(entry, status=status, wall_seconds=round(wall_seconds, 1), targets=targets)


def study_context(chosen: Chosen, where: StudyEnvironment, stack: ExitStack) -> CellContext:
    """Where and how a study's cells are measured: its driver and tool, its directory, and, where the study reads the
    servers' counters, a scratch directory for them that `stack` removes."""
    options = where.options
    stats = None
    if chosen.plan.diagnostics:
        stats = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-stats-")))
    return CellContext(
        DRIVERS[chosen.plan.driver],
        where.tool,
        options,
        options.repeats or chosen.plan.repeats,
        where.run_dir / chosen.name,
        stats,
        where.wires,
    )


def started_study(chosen: Chosen, meta: RunMeta, run_dir: Path) -> RunMeta:
    """The run's metadata with the study marked running, written to run.json."""
    meta = replace(meta, studies={**meta.studies, chosen.name: replace(meta.studies[chosen.name], status="running")})
    meta.save(run_dir)
    return meta


def ended_study(chosen: Chosen, meta: RunMeta, run_dir: Path, study_dir: Path, status: str, seconds: float) -> RunMeta:
    """The run's metadata with the study's entry as it ended (status, wall time, targets), written to run.json."""
    run = StudyRun(chosen.name, run_dir, meta, load_cells(study_dir))
    entry = finished_entry(chosen, meta.studies[chosen.name], run, status, seconds)
    meta = replace(meta, studies={**meta.studies, chosen.name: entry})
    meta.save(run_dir)
    return meta


def measure_cells(
    chosen: Chosen, cells: list[Cell], where: StudyEnvironment, context: CellContext, progress: RunProgress
) -> None:
    """Cells of a study measured one by one, each saved into the study's directory as it finishes: a variant's
    cells of one scenario on as few server starts as possible."""
    count = itertools.count(1)

    def started(cell: Cell) -> None:
        progress.cell_started(cell, next(count), len(cells))

    for (server, scenario, _), grouped in itertools.groupby(cells, key=lambda c: (c.server, c.scenario, c.wire)):
        group = list(grouped)
        skip = where.options.skip_reason(server, scenario)
        if skip:
            measured = skipped(group, skip, started)
        elif server.address:
            measured = measure_target(chosen.plan, group, context, started)
        else:
            measured = serve_and_measure(chosen.plan, group, where.server_env(scenario), context, started)
        for cell, record in measured:
            save_cell(context.study_dir, record)
            progress.cell_finished(cell, record)


def run_study(chosen: Chosen, where: StudyEnvironment, meta: RunMeta, progress: RunProgress) -> RunMeta:
    """Every cell of a study measured cell by cell (its full matrix, or a study without comparisons), recorded as
    it finishes; returns the run's metadata with the study's entry as it ended, also written to run.json."""
    meta = started_study(chosen, meta, where.run_dir)
    status = "interrupted"
    begun = time.monotonic()
    progress.study_started(chosen.name, len(chosen.cells))
    with ExitStack() as stack:
        context = study_context(chosen, where, stack)
        try:
            measure_cells(chosen, chosen.cells, where, context, progress)
            status = "complete"
        finally:
            meta = ended_study(chosen, meta, where.run_dir, context.study_dir, status, time.monotonic() - begun)
    return meta
