"""The streaming study's plan: fetch-alls by pattern, a stream for a unary reply, batch sizes and Watch
streams on each server, all driven by loadgen; SayHello at the cross-check level also by ghz."""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.load import DriverError
from harness.results.records import CellRecord, Repeat, save_report
from harness.run.drivers.loadgen import is_fetch, is_watch
from harness.run.measure import (
    RUN_TIMEOUT,
    CellContext,
    measure_against,
    measure_cell,
    measure_closed_loop,
    sampled_run,
)
from harness.run.planning import Axis, Comparison, StudyPlan
from harness.run.processes import Child
from harness.studies.reading import WARMUP
from harness.studies.streaming import (
    BATCH_LEVEL,
    BATCH_SCENARIOS,
    COMPARED_ON,
    COMPARED_PATTERNS,
    CROSS_CHECK_LEVEL,
    CROSS_CHECKED,
    DRIVER_CHECK,
    FETCH_CLIENTS,
    FETCH_COMPARED_MS,
    FETCH_SCENARIOS,
    FETCHES_ALONE,
    FETCHES_EACH,
    HELLO,
    HELLO_STREAM,
    NAME,
    SERVERS,
    UNARY_LEVELS,
    WATCH,
    WATCH_STREAMS,
    fetch_scenario,
)


def comparisons(options: RunOptions) -> list[Comparison]:
    """On each chosen stack (by default COMPARED_ON): a one-message reply as a stream against a unary call, at
    CROSS_CHECK_LEVEL; and fetching all of the wide bucket, S3 FETCH_COMPARED_MS away, by one stream and by the
    server fetching 10 prefixes at once against paging, one client. The one-message comparison comes first, so
    it holds the study's A/A control: its slices are a second long, where a fetch-all takes about 2 s a call and
    a block of its five labels a minute, too few blocks in a run's share for a control to reach the tie band."""
    found = []
    for server in options.servers or (server_variant(COMPARED_ON),):
        level = CROSS_CHECK_LEVEL
        found.append(
            Comparison(
                f"one-message/{server.name}/c{level}",
                ("unary", Cell(server, HELLO, level)),
                (("stream", Cell(server, HELLO_STREAM, level)),),
            )
        )
        fetches = {each: Cell(server, fetch_scenario(each, FETCH_COMPARED_MS), 1) for each in COMPARED_PATTERNS}
        paging = fetches.pop("paging")
        found.append(
            Comparison(
                f"fetch-all-{FETCH_COMPARED_MS}ms/{server.name}/c1",
                ("paging", paging),
                tuple(fetches.items()),
            )
        )
    return found


def cells(options: RunOptions) -> list[Cell]:
    """The cells of the comparisons; with --full, each server on every part, a part's cells of one scenario in a
    row (one server start serves them)."""
    if not options.full:
        return [cell for comparison in comparisons(options) for cell in comparison.cells]
    servers = options.servers or tuple(server_variant(name) for name in SERVERS)
    plan = [
        *[(each, FETCH_CLIENTS) for each in FETCH_SCENARIOS],
        (HELLO, UNARY_LEVELS),
        (HELLO_STREAM, UNARY_LEVELS),
        *[(each, (BATCH_LEVEL,)) for each in BATCH_SCENARIOS],
        (WATCH, WATCH_STREAMS),
    ]
    return [Cell(server, each, level) for each, levels in plan for server in servers for level in levels]


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """A fetch-all, watch or closed-loop cell, by its scenario; hello at the cross-check level also by ghz."""
    if is_fetch(cell):
        return measure_fetch(cell, target, child, context)
    if is_watch(cell):
        return measure_watch(cell, target, child, context)
    requests = context.options.requests
    if requests and requests < cell.concurrency:  # a smoke run (--requests): at least a call per worker
        context = replace(context, options=replace(context.options, requests=cell.concurrency))
    if cell.scenario.name in (HELLO.name, DRIVER_CHECK.name) and cell.concurrency == CROSS_CHECK_LEVEL:
        return measure_against("ghz", cell, target, child, context, probe_file)
    return measure_closed_loop(cell, target, child, context, probe_file)


def checks(options: RunOptions) -> list[Cell]:
    """Every run's cross-check of our driver against ghz: SayHello at CROSS_CHECK_LEVEL on each of CROSS_CHECKED (of
    those the run names, where it names servers)."""
    named = {server.name for server in options.servers} if options.servers else set(CROSS_CHECKED)
    return [Cell(server_variant(name), DRIVER_CHECK, CROSS_CHECK_LEVEL) for name in CROSS_CHECKED if name in named]


def measure_fetch(cell: Cell, target: str, child: Child | None, context: CellContext) -> CellRecord:
    """One fetch-all per client thrown away, then FETCHES_ALONE fetch-alls by one client, or FETCHES_EACH
    per client by several. The warm-up's report is kept: its failed calls are told with the run's."""
    driver, clients = context.driver, cell.concurrency

    def runs(record: CellRecord, repeats: list[Repeat]) -> CellRecord:
        warmup = driver.run(context.argv(cell, target, clients), RUN_TIMEOUT)
        save_report(context.study_dir, f"{record.stem}-{WARMUP}.json", warmup.raw)
        if warmup.report.ok == 0:
            raise DriverError(f"no warm-up fetch-all was OK: {warmup.report.status_codes} {warmup.report.errors}")
        total = clients if context.options.requests else (FETCHES_ALONE if clients == 1 else FETCHES_EACH * clients)
        argv = context.argv(cell, target, total)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-r1.json", total)[0])
        return record

    return measure_cell(cell, context.options, runs)


def measure_watch(cell: Cell, target: str, child: Child | None, context: CellContext) -> CellRecord:
    """cell.concurrency streams at once, for the scenario's window (shortened to 2 s by --requests)."""
    watched = cell
    if context.options.requests:
        watched = replace(cell, scenario=replace(cell.scenario, data={**cell.scenario.data, "seconds": 2}))

    def runs(record: CellRecord, repeats: list[Repeat]) -> CellRecord:
        argv = context.argv(watched, target, cell.concurrency)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-r1.json", cell.concurrency)[0])
        return record

    return measure_cell(cell, context.options, runs)


PLAN = StudyPlan(
    name=NAME,
    # Fetch patterns, S3 latency, batch sizes and watch streams are fixed: the issue's own values.
    axes=(Axis("server", SERVERS, "--servers"),),
    driver="loadgen",
    # Closed-loop cells; the cross-check makes measure.CROSS_CHECK_REPEATS runs by each driver. A fetch-all cell makes
    # FETCHES_ALONE fetch-alls (or FETCHES_EACH per client) in one run, a watch cell one run.
    repeats=3,
    cells=cells,
    measure=measure,
    checkers=("ghz",),
    comparisons=comparisons,
    own_scenarios=(DRIVER_CHECK,),
    checks=checks,
)
