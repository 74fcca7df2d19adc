"""run-all: the pilot, then every comparison of the chosen studies raced for the budget, their checks and
cells measured (harness.run.cells), the run's metadata written as it goes; failed_gates: why a run exits
non-zero."""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from harness.analysis.evidence import Planned, earlier_runs, method_of, seeds
from harness.method.contest import Race
from harness.method.pilot import Pilot, pilot_seconds
from harness.method.race import Entrant, budget_shares, estimated_end, run_race
from harness.method.verdicts import BLOCKS, HELD, Method, control_of
from harness.plan.matrix import BUCKET_KEY_BYTES, BUCKET_PREFIXES
from harness.plan.options import RunOptions
from harness.plan.wires import MTLS, PLAINTEXT, TLS
from harness.results.machines import Fingerprint, Machine, Speed
from harness.results.run_context import Environment, InterpreterRecord, Pinning, RunWire
from harness.results.run_meta import RunMeta, StudyEntry, Thresholds
from harness.run.backends import seed_bucket, start_backends
from harness.run.blocks import ComparisonMeasurement, RunProgress, StudyEnvironment
from harness.run.cells import (
    Chosen,
    ended_study,
    measure_cells,
    run_study,
    sharded,
    slices_driver,
    started_study,
    study_context,
    study_matrix,
)
from harness.run.drivers.registry import DRIVERS
from harness.run.latency import LatencyRoutes, toxiproxy
from harness.run.machine import fingerprint, speed, steal_share, steal_ticks
from harness.run.measure import CellContext
from harness.run.pilot import fitted, run_pilot
from harness.run.processes import off_cpus
from harness.run.provenance import environment, tool_version
from harness.run.tls import PLAIN, Wire, make_certificates
from harness.run.tools import TOXIPROXY, ensure_tool


def default_server_cpus() -> tuple[int, ...]:
    """The last available core, or none on a one-core machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[-1],) if len(cpus) > 1 else ()


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
    """Every comparison of the studies that have them, in one race (harness.method.race.run_race): each gets the
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
                race = Race(measurement.contest(), fitted_method, seed, least=each.plan.least_blocks)
                raced.append(Raced(each, measurement, Entrant(race, measurement.block)))
            if not options.fresh:
                said, seeded_by = seeded(raced, where_of(chosen[0]).run_dir, meta)
                meta = replace(meta, seeded_by=seeded_by)
                progress.planned(said)
            entrants = [each.entrant for each in raced]
            owner = {id(each.entrant): each for each in raced}

            def told(entrant: Entrant) -> None:
                now = clock()
                left = estimated_end(entrants, deadline, now) - now
                still_open = sum(1 for each in entrants if each.race.open)
                study = owner[id(entrant)].study.name
                progress.block_finished(study, entrant.race.contest.workload, entrant.race.blocks, still_open, left)

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


def seeded(raced: list[Raced], run_dir: Path, meta: RunMeta) -> tuple[str, list[str]]:
    """Start each comparison's race from what the earlier runs of this machine class and code tell its rows
    (harness.analysis.evidence.seeds), and say what they left open and what this run targets; with the earlier runs
    whose readings seeded it."""
    planned = [
        Planned(
            each.study.name,
            each.measurement.comparison.workload,
            each.measurement.cells[each.measurement.reference].scenario.name,
            method_of(each.entrant.race.method, each.measurement.driver),
            each.measurement.reference,
            (each.entrant.race.contest.controlled and control_of(each.measurement.reference)) or None,
            {label: cell.server.name for label, cell in each.measurement.cells.items()},
        )
        for each in raced
    ]
    found = seeds(run_dir, meta, planned)
    for each, plan in zip(raced, planned, strict=True):
        seed = found[f"{plan.study}/{plan.workload}"]
        each.entrant.race.earlier, each.entrant.race.spread = seed.earlier, (seed.tau2, seed.tau_freedom)
    seeded_by = sorted({reading.run_id for seed in found.values() for reading in seed.readings})
    return seeded_text([each.entrant.race for each in raced], len(earlier_runs(run_dir, meta))), seeded_by


def seeded_text(races: list[Race], earlier: int) -> str:
    """What the earlier runs left open and what this run targets, in a line or two: "3 earlier runs of this machine
    class: 60 of 118 label rows open, 12 of 16 decision rows; this run targets hello/c50 (connect-pyvoy over
    sync-w10), ..."."""
    rows = sum(len(race.contest.alternatives) for race in races)
    settled = [race.settled_before() for race in races]
    open_rows = sum(len(labels) for labels, _ in settled)
    deciding = [race for race in races if race.contest.deciding]
    pairs = [(race, pair) for race, (_, pair) in zip(races, settled, strict=True) if pair is not None]
    if not earlier:
        return f"No earlier run of this machine class: all {rows} label rows and {len(deciding)} decision rows open."
    targets = ", ".join(f"{race.contest.workload} ({pair[0]} × {pair[1]})" for race, pair in pairs) or "none"
    return (
        f"{earlier} earlier run{'s' if earlier != 1 else ''} of this machine class: {open_rows} of {rows} label rows "
        f"open, {len(pairs)} of {len(deciding)} decision rows; this run targets {targets}"
    )


def planned_text(plans: list[Chosen], method: Method, budget_minutes: float | None) -> str:
    """What a run will measure and about how long it should take, said before it starts."""
    comparisons = [comparison for each in plans for comparison in each.comparisons]
    by_cell = [each.name for each in plans if not each.comparisons]
    parts = []
    if comparisons:
        owed = {each.plan.least_blocks for each in plans if each.comparisons}
        least = sum(each.plan.least_blocks * c.block_seconds(method) for each in plans for c in each.comparisons) / 60
        first = "-".join(map(str, sorted(owed)))
        budget = f"; the budget {budget_minutes:g} min" if budget_minutes else "; no budget: until every label stops"
        parts.append(
            f"{len(comparisons)} comparisons of {sum(len(each.cells) for each in plans if each.comparisons)} cells in "
            f"blocks, their first {first} blocks each about {least:.0f} min{budget}"
        )
    checks = [cell.key for each in plans for cell in each.checks]
    if checks:
        parts.append(f"first, {len(checks)} check cells one by one ({', '.join(checks)})")
    if by_cell:
        cells = sum(len(each.cells) for each in plans if not each.comparisons)
        parts.append(f"{cells} cells measured one by one ({', '.join(by_cell)})")
    return "; ".join(parts)


def run_method(options: RunOptions) -> Method:
    """The method the options ask for: its design, and with --blocks exactly that many blocks (a smoke test), of
    --cycles cycles each where given."""
    if options.blocks:
        fixed = Method(
            design=options.design, slicer=options.slices_by, min_blocks=options.blocks, max_blocks=options.blocks
        )
        return replace(fixed, cycles=options.cycles) if options.cycles else fixed
    return Method(design=options.design, slicer=options.slices_by)


def run_all(options: RunOptions, plans: list[Chosen], progress: RunProgress) -> tuple[Path, RunMeta]:
    """Run the chosen studies (harness.studies.choosing, with the interpreters they compare prepared in options)
    into a new run directory; returns it and the final run metadata."""
    begun = time.monotonic()
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if options.shard is not None:  # a part of the plan, a run of its own (harness.plan.shards)
        shard = options.shard if options.shard.plan else replace(options.shard, plan=run_id)
        options = replace(options, shard=shard)
        plans = sharded(plans, shard, run_method(options))
        run_id = shard.run_id
    run_dir = options.out_dir / "runs" / run_id
    progress.planned(planned_text(plans, run_method(options), options.budget_minutes))
    drivers = {name for each in plans for name in (each.plan.driver, *each.plan.checkers)}
    if options.slices_by == HELD:
        drivers.add("loadgen")  # it runs every comparison's slices that it can drive
    tools = {each.name: ensure_tool(DRIVERS[each.plan.driver].tool) for each in plans}
    versions = {name: tool_version(DRIVERS[name].tool) for name in sorted(drivers)}
    meta = RunMeta(
        run_id=run_id,
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        environment=Environment(**environment(versions)),
        drivers={name: versions[name] for each in plans for name in (each.plan.driver, slices_driver(each, options))},
        pinning=Pinning(list(options.server_cpus), list(options.other_cpus)),
        thresholds=Thresholds(),
        interpreters={each.name: InterpreterRecord.from_json(each.to_json()) for each in options.interpreters},
        budget_seconds=options.budget_minutes * 60 if options.budget_minutes else None,
        aside=options.aside,
        shard=options.shard.to_json() if options.shard else {},
        studies={
            each.name: StudyEntry(
                question=each.question,
                default_matrix=each.plan.is_default_matrix(options),
                matrix=study_matrix(
                    each.plan, options, each.cells, options.repeats or each.plan.repeats, slices_driver(each, options)
                ),
                settings=dict(each.settings),
            )
            for each in plans
        },
    )
    meta = replace(meta, machine=Machine(Fingerprint(**fingerprint()), {"start": Speed(**speed())}))
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
                    seed_bucket(
                        config,
                        bucket,
                        options.bucket_objects(bucket),
                        BUCKET_PREFIXES.get(bucket, 0),
                        BUCKET_KEY_BYTES.get(bucket, 0),
                    )
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
                meta = replace(meta, wire=RunWire(name, made.key_type))
            meta.save(run_dir)
            method, pilot = run_method(options), None
            if method.design == BLOCKS and not options.blocks and any(each.comparisons for each in plans):
                where = StudyEnvironment(options, config, routes, tools[plans[0].name], run_dir, wires)
                seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
                pilot = run_pilot(where, meta, method, pilot_seconds(meta.budget_seconds), seed, progress)
                method = replace(method, slice_seconds=pilot.slice_for_run)
                meta = replace(meta, pilot=pilot)
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
        ended = meta.machine and replace(meta.machine, steal_share=steal_share(stolen, steal_ticks()))
        if ended and status == "complete":
            ended = replace(ended, speed={**ended.speed, "end": Speed(**speed())})
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
