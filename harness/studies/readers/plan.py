"""The readers study's plan: each stack against each slow reader, a cell at a time, on a freshly started server
(its memory at the start is the server's own, not an earlier cell's), warmed by reading the listing once whole."""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.load import DriverError
from harness.results.records import CellRecord, Repeat
from harness.run.measure import RUN_TIMEOUT, CellContext, measure_cell, sampled_run
from harness.run.planning import Axis, StudyPlan
from harness.run.processes import Child
from harness.studies.readers import NAME, READER_SCENARIOS, READER_STREAMS, STACK_NAMES


def cells(options: RunOptions) -> list[Cell]:
    """Every chosen stack against every reader, READER_STREAMS streams at once (--concurrency says otherwise)."""
    servers = options.servers or tuple(server_variant(name) for name in STACK_NAMES)
    chosen = [each for each in READER_SCENARIOS if not options.scenarios or each in options.scenarios]
    levels = options.levels or (READER_STREAMS,)
    return [Cell(server, each, level) for each in chosen for server in servers for level in levels]


WARMUP_LISTINGS = 2  # whole listings read one after the other before the reader: the server's S3 client and parser warm


def whole_listing(cell: Cell) -> Cell:
    """The reader's stream read whole, by one client (loadgen call): the warm-up, which leaves in the server's memory
    what any listing needs, so that what the reader's streams add is theirs."""
    data = {key: value for key, value in cell.scenario.data.items() if key not in ("every_ms", "seconds")}
    return replace(
        cell, scenario=replace(cell.scenario, name=f"{cell.scenario.name}-warm-up", data=data), concurrency=1
    )


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """One run of the slow reader, the server's memory and CPU sampled throughout."""

    def runs(record: CellRecord, repeats: list[Repeat]) -> CellRecord:
        warmed = context.driver.run(context.argv(whole_listing(cell), target, WARMUP_LISTINGS), RUN_TIMEOUT).report
        if warmed.ok < WARMUP_LISTINGS:
            raise DriverError(f"the warm-up's listings did not all end OK: {warmed.status_codes} {warmed.errors}")
        argv = context.argv(cell, target, cell.concurrency)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-r1.json", cell.concurrency)[0])
        return record

    return measure_cell(cell, context.options, runs)


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", STACK_NAMES, "--servers"),
        Axis("scenario", tuple(each.name for each in READER_SCENARIOS), "--scenarios"),
    ),
    driver="loadgen",
    repeats=1,
    cells=cells,
    measure=measure,
    own_scenarios=READER_SCENARIOS,
)
