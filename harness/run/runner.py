"""run-all: the chosen studies, each cell driven by its study's driver and recorded as it finishes.

One server start serves all of a variant's cells of one scenario (levels ascending): a warm-up per
level is thrown away, a probe (calls one at a time, for the bounds) runs once per start, and the
measured runs are sized from the level's warm-up.
"""

from __future__ import annotations

import itertools
import os
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.method.blocks import ComparisonMeasurement, RunProgress, StudyEnvironment, counted, holdable
from harness.method.pilot import Pilot, fitted, pilot_seconds, run_pilot
from harness.method.rounds import LEAST_BLOCKS, Entrant, Race, budget_shares, estimated_end, run_race
from harness.method.verdicts import BLOCKS, HELD, Method
from harness.plan.matrix import BUCKET_PREFIXES, REST_VARIANTS, SERVER_VARIANTS, Cell
from harness.plan.options import RunOptions
from harness.plan.pythons import DEFAULT_PYTHONS, prepare
from harness.results.provenance import environment, tool_version
from harness.results.records import (
    CellRecord,
    RunMeta,
    StudyEntry,
    StudyRun,
    Thresholds,
    load_cells,
    save_cell,
)
from harness.run.backends import LatencyRoutes, seed_bucket, start_backends, toxiproxy
from harness.run.drivers.registry import DRIVERS
from harness.run.drivers.report import DriverError
from harness.run.machine import fingerprint, speed, steal_share, steal_ticks
from harness.run.measure import CellContext, failure_reason
from harness.run.processes import ProcessError, off_cpus
from harness.run.serving import running_server
from harness.run.tls import MTLS, PLAIN, PLAINTEXT, TLS, Wire, make_certificates, negotiated
from harness.run.tools import TOXIPROXY, ensure_tool
from harness.studies import DEFAULT_STUDIES, StudyReport, plan, study
from harness.studies.base import shared_targets
from harness.studies.interpreters import NAME as INTERPRETERS_STUDY
from harness.studies.planning import Comparison, StudyPlan, controlled_first


def default_server_cpus() -> tuple[int, ...]:
    """The last available core, or none on a one-core machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[-1],) if len(cpus) > 1 else ()


@dataclass(frozen=True)
class Chosen:
    """A study a run measures: its report half, its plan half, and the cells the options expand it to."""

    report: StudyReport
    plan: StudyPlan
    cells: list[Cell]
    comparisons: list[Comparison] = field(default_factory=list)  # measured in rounds, when there are any
    checks: list[Cell] = field(default_factory=list)  # measured cell by cell before its comparisons race

    @property
    def name(self) -> str:
        return self.report.name


def with_interpreters(options: RunOptions) -> RunOptions:
    """The options with every interpreter they compare prepared: found or built, given its virtualenv, and
    asked which server modules it can run (a study that compares none leaves them as they are)."""
    names = options.pythons or (DEFAULT_PYTHONS if INTERPRETERS_STUDY in options.studies else ())
    if not names or options.interpreters:
        return options
    modules = sorted({variant.module for variant in (*SERVER_VARIANTS, *REST_VARIANTS)})
    return replace(options, pythons=tuple(names), interpreters=tuple(prepare(name, modules) for name in names))


def chosen_studies(options: RunOptions) -> list[Chosen]:
    """The studies options name, or the default ones, each with its comparisons and their cells (with --full those of
    its whole matrix, where it has them), or, cell by cell, its cells; with --tls or --mtls, every cell over that
    wire."""
    found = []
    for name in options.studies or DEFAULT_STUDIES:
        planned = plan(name)
        comparisons: list[Comparison] = []
        if options.full and planned.full_comparisons and not options.by_cell:
            comparisons = controlled_first(planned.full_comparisons(options))
        elif not options.full and not options.by_cell:
            comparisons = controlled_first(planned.comparisons(options))
        cells = [cell for each in comparisons for cell in each.cells] if comparisons else planned.cells(options)
        checks = planned.checks(options) if comparisons else []
        if options.wire != PLAINTEXT:
            cells, checks = ([replace(cell, wire=options.wire) for cell in each] for each in (cells, checks))
            comparisons = [each.over(options.wire) for each in comparisons]
        found.append(Chosen(study(name), planned, cells, comparisons, checks))
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
    return "loadgen" if held and all(holdable(c, c.driver or driver) for c in each.comparisons) else driver


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
    targets = {
        **shared_targets(run, chosen.report, wall_seconds, full),
        **chosen.report.targets(run, wall_seconds, full),
    }
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
    run = StudyRun(chosen.name, run_dir, meta.to_json(), load_cells(study_dir))
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


@dataclass
class Raced:
    """A comparison in the run's race: its study, its measurement on real servers, its entrant in the race."""

    study: Chosen
    measurement: ComparisonMeasurement
    entrant: Entrant


def race_studies(
    chosen: list[Chosen],
    where_of: Callable[[Chosen], StudyEnvironment],
    meta: RunMeta,
    progress: RunProgress,
    method: Method,
    pilot: Pilot | None,
    deadline: float | None,
    clock: Callable[[], float] = time.monotonic,
) -> RunMeta:
    """Every comparison of the studies that have them, in one race (harness.method.rounds.run_race): each gets the
    blocks an interval needs, in turns, then the budget goes, block by block, to whichever open comparison narrows most
    per second, until `deadline` (a clock() time). Each comparison's cycles per block are fitted to the
    pilot and to its share of the budget by its estimate. Returns the run's metadata with each study's entry as
    it ended, also written to run.json."""
    if not chosen:
        return meta
    options = where_of(chosen[0]).options
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
    status = "interrupted"
    checked: dict[str, float] = {}  # each study's seconds on its checks, measured before the race
    raced: list[Raced] = []
    with ExitStack() as stack:
        try:
            contexts: dict[str, CellContext] = {}
            for each in chosen:
                meta = started_study(each, meta, where_of(each).run_dir)
                progress.study_started(each.name, len(each.cells) + len(each.checks))
                contexts[each.name] = study_context(each, where_of(each), stack)
                begun = clock()
                measure_cells(each, each.checks, where_of(each), contexts[each.name], progress)
                checked[each.name] = clock() - begun
            budget = None if deadline is None else max(0.0, deadline - clock())
            comparisons = [(each, comparison) for each in chosen for comparison in each.comparisons]
            estimates = [comparison.estimate_seconds(method) for _, comparison in comparisons]
            for (each, comparison), share in zip(comparisons, budget_shares(estimates, budget), strict=True):
                context = contexts[each.name]
                driven = context.driven_by(comparison.driver) if comparison.driver else context
                fitted_method = fitted(pilot, comparison, method, share, options)
                measurement = ComparisonMeasurement(comparison, where_of(each), driven, fitted_method, progress)
                race = Race(measurement.rounds(), fitted_method, seed)
                raced.append(Raced(each, measurement, Entrant(race, measurement.block)))
            entrants = [each.entrant for each in raced]
            owner = {id(each.entrant): each for each in raced}

            def told(entrant: Entrant) -> None:
                now = clock()
                left = estimated_end(entrants, deadline, now) - now
                still_open = sum(1 for each in entrants if each.race.open)
                study = owner[id(entrant)].study.name
                progress.block_finished(study, entrant.race.rounds.workload, entrant.race.blocks, still_open, left)

            run_race(entrants, deadline, clock, told=told)
            status = "complete"
        finally:
            for one in raced:  # what was measured is kept, an interrupted race's too (its open labels "interrupted")
                if one.entrant.race.blocks:
                    record = one.entrant.record or one.entrant.race.finish("interrupted", one.entrant.seconds)
                    one.measurement.save(record)
            for each in chosen:
                seconds = checked.get(each.name, 0.0) + sum(r.entrant.seconds for r in raced if r.study is each)
                study_dir = where_of(each).run_dir / each.name
                meta = ended_study(each, meta, where_of(each).run_dir, study_dir, status, seconds)
    return meta


def planned_text(plans: list[Chosen], method: Method, budget_minutes: float | None) -> str:
    """What a run will measure and about how long it should take, said before it starts."""
    comparisons = [comparison for each in plans for comparison in each.comparisons]
    by_cell = [each.name for each in plans if not each.comparisons]
    parts = []
    if comparisons:
        least = sum(each.block_seconds(method) for each in comparisons) * LEAST_BLOCKS / 60
        budget = f"; the budget {budget_minutes:g} min" if budget_minutes else "; no budget: until every label stops"
        parts.append(
            f"{len(comparisons)} comparisons of {sum(len(each.cells) for each in plans if each.comparisons)} cells in "
            f"blocks, their first {LEAST_BLOCKS} blocks each about {least:.0f} min{budget}"
        )
    checks = [cell.key for each in plans for cell in each.checks]
    if checks:
        parts.append(f"first, {len(checks)} check cells one by one ({', '.join(checks)})")
    if by_cell:
        cells = sum(len(each.cells) for each in plans if not each.comparisons)
        parts.append(f"{cells} cells measured one by one ({', '.join(by_cell)})")
    return "; ".join(parts)


def run_method(options: RunOptions) -> Method:
    """The method the options ask for: its design, and with --rounds exactly that many blocks (a smoke test)."""
    if options.rounds:
        return Method(
            design=options.design, slicer=options.slices_by, min_rounds=options.rounds, max_rounds=options.rounds
        )
    return Method(design=options.design, slicer=options.slices_by)


def run_all(options: RunOptions, progress: RunProgress) -> tuple[Path, RunMeta]:
    """Run the chosen studies into a new run directory; returns it and the final run metadata."""
    begun = time.monotonic()
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    run_dir = options.out_dir / "runs" / run_id
    options = with_interpreters(options)
    plans = chosen_studies(options)
    progress.planned(planned_text(plans, run_method(options), options.budget_minutes))
    drivers = {name for each in plans for name in (each.plan.driver, *each.plan.checkers)}
    if options.slices_by == HELD:
        drivers.add("loadgen")  # it runs every comparison's slices that it can drive
    tools = {each.name: ensure_tool(DRIVERS[each.plan.driver].tool) for each in plans}
    versions = {name: tool_version(DRIVERS[name].tool) for name in sorted(drivers)}
    meta = RunMeta(
        run_id=run_id,
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        environment=environment(versions),
        drivers={name: versions[name] for each in plans for name in (each.plan.driver, slices_driver(each, options))},
        pinning={"server_cpus": list(options.server_cpus), "ghz_and_backend_cpus": list(options.other_cpus)},
        thresholds=Thresholds(),
        interpreters={each.name: each.to_json() for each in options.interpreters},
        budget_seconds=options.budget_minutes * 60 if options.budget_minutes else None,
        aside=options.aside,
        studies={
            each.name: StudyEntry(
                question=each.report.question,
                default_matrix=each.plan.is_default_matrix(options),
                matrix=study_matrix(
                    each.plan, options, each.cells, options.repeats or each.plan.repeats, slices_driver(each, options)
                ),
                settings=dict(each.report.settings),
            )
            for each in plans
        },
    )
    meta = replace(meta, machine={"fingerprint": fingerprint(), "speed": {"start": speed()}})
    meta.save(run_dir)
    stolen = steal_ticks()
    status = "interrupted"
    try:
        with ExitStack() as stack:
            stack.enter_context(off_cpus(options.server_cpus))  # the drivers and the backends inherit it
            config, routes = None, None
            if options.target:  # the target has backends of its own; the harness starts none
                meta = replace(
                    meta,
                    target={"address": options.target, "name": (options.servers or ())[0].name},
                    backends={"s3": "the target's own", "mongo": "the target's own"},
                )
            else:
                backends = stack.enter_context(start_backends(os.environ))
                config = backends.config
                described = backends.describe()
                all_cells = [cell for each in plans for cell in each.cells]
                for bucket in sorted({cell.scenario.bucket for cell in all_cells if cell.scenario.bucket}):
                    seed_bucket(config, bucket, options.bucket_objects(bucket), BUCKET_PREFIXES.get(bucket, 0))
                if any(options.latencies(cell.scenario) != (0, 0, 0) for cell in all_cells):
                    routes = LatencyRoutes(stack.enter_context(toxiproxy()), config)
                    described["latency_proxy"] = tool_version(TOXIPROXY)
                meta = replace(meta, backends=described)
            wires = {PLAINTEXT: PLAIN}
            spoken = {cell.wire for each in plans for cell in each.cells}  # a study's cells hold its comparisons'
            if spoken - {PLAINTEXT}:  # a CA and certificates for this run only, gone when it ends
                made = make_certificates(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-tls-"))))
                wires |= {TLS: Wire(made), MTLS: Wire(made, mutual=True)}
                name = options.wire if options.wire != PLAINTEXT else "per cell"  # the wire study's: each says
                meta = replace(meta, wire={"name": name, "key_type": made.key_type})
            meta.save(run_dir)
            method, pilot = run_method(options), None
            if method.design == BLOCKS and not options.rounds and any(each.comparisons for each in plans):
                where = StudyEnvironment(options, config, routes, tools[plans[0].name], run_dir, wires)
                seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
                pilot = run_pilot(where, meta.to_json(), method, pilot_seconds(meta.budget_seconds), seed, progress)
                method = replace(method, slice_seconds=pilot.slice_for_run)
                meta = replace(meta, pilot=pilot.to_json())
                meta.save(run_dir)

            def where_of(each: Chosen) -> StudyEnvironment:
                return StudyEnvironment(options, config, routes, tools[each.name], run_dir, wires)

            for each in plans:
                if not each.comparisons:
                    meta = run_study(each, where_of(each), meta, progress)
            deadline = begun + meta.budget_seconds if meta.budget_seconds else None
            raced = [each for each in plans if each.comparisons]
            meta = race_studies(raced, where_of, meta, progress, method, pilot, deadline)
        status = "complete"
    finally:
        ended = {**meta.machine, "steal_share": steal_share(stolen, steal_ticks())}
        if status == "complete":
            ended["speed"] = {**ended["speed"], "end": speed()}
        meta = replace(meta, status=status, wall_seconds=round(time.monotonic() - begun, 1), machine=ended)
        meta.save(run_dir)
    return run_dir, meta


def failed_gates(meta: RunMeta) -> list[str]:
    """Why a run must exit non-zero: a study that did not complete, or a gating target it did not meet."""
    found = [f"{name}: {entry.status}" for name, entry in meta.studies.items() if entry.status != "complete"]
    found += [
        f"{name}: target {target_name} not met"
        for name, entry in meta.studies.items()
        for target_name, target in entry.targets.items()
        if target.gate and not target.met
    ]
    return found
