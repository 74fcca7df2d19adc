"""The capacity study's plan: per stack and scenario a closed-loop run at c=50, then an open-loop search for the
highest rate that holds the SLO (doubling, then bisection; each rate taken until two steps agree; --repeats N
searches it N times), the same search for the saturation throughput without the SLO, then a run at low load."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from harness.plan.matrix import SCENARIOS, Cell, measured_requests
from harness.plan.options import RunOptions
from harness.plan.servers import SERVER_VARIANTS, server_variant
from harness.results.load import LoadReport
from harness.results.records import CellRecord, Repeat
from harness.run.measure import CellContext, measure_cell, sampled_run, warm_up
from harness.run.planning import Axis, StudyPlan
from harness.run.processes import Child
from harness.studies.capacity import (
    AGREEING,
    DECIDING,
    JITTER,
    LOW_LOAD_SHARE,
    NAME,
    PRECISION,
    SEARCHED,
    STEP_SECONDS,
    WORKERS,
    held,
    kept_up,
)
from harness.studies.stacks import BRIEF_SERVERS, PEERS

MIN_CALLS = 10
SMOKE_STEPS = 3  # with --requests (as --quick sets it): steps of at most that many calls, and only this many
MAX_STEPS = 16
REPEAT_FACTOR = 1 + 2 * PRECISION  # a repeated search brackets the first one's capacity by this much up or down
CALL_TIMEOUT = "60s"  # well above every SLO: a slow call is measured, not cut short


@dataclass(frozen=True)
class Step:
    """One rate tried (whole calls/s), and whether it held the SLO."""

    rate: int
    passed: bool


@dataclass(frozen=True)
class Search:
    """The highest passing rate, the lowest failing one above it, and every step in order."""

    capacity: int  # 0 when no rate tried passed
    failed_at: float  # math.inf when no rate tried failed
    steps: tuple[Step, ...]


def rate_search(
    passes: Callable[[int], bool],
    start: int,
    precision: float = PRECISION,
    max_steps: int = MAX_STEPS,
    factor: float = 2.0,
) -> Search:
    """Bracket the knee by growing (or shrinking) the rate by `factor` from start (doubling by default), then bisect
    until the bracket is within precision of the passing rate, or one call/s where that is finer than a whole
    rate."""
    steps: list[Step] = []

    def trial(value: int) -> bool:
        steps.append(Step(value, passes(value)))
        return steps[-1].passed

    low, high, value = 0, math.inf, start
    while len(steps) < max_steps and (low == 0 or high == math.inf) and value >= 1:
        if trial(value):
            low, value = value, max(value + 1, int(value * factor))
        else:
            high, value = value, min(value - 1, int(value / factor))
    while len(steps) < max_steps and low > 0 and high - low > max(1.0, low * precision):
        middle = int((low + high) // 2)
        if trial(middle):
            low = middle
        else:
            high = middle
    return Search(low, high, tuple(steps))


def agreed(step: Callable[[], bool], agreeing: int = AGREEING) -> bool:
    """Steps at one rate until `agreeing` of them agree (a majority of 2 * agreeing - 1 at most): True when
    they held."""
    outcomes: list[bool] = []
    while outcomes.count(True) < agreeing and outcomes.count(False) < agreeing:
        outcomes.append(step())
    return outcomes.count(True) >= agreeing


def step_calls(offered: int) -> int:
    """Calls in an open-loop step: STEP_SECONDS of them."""
    return max(MIN_CALLS, round(offered * STEP_SECONDS))


def open_loop_cell(cell: Cell, calls: int) -> Cell:
    """The cell with as many ghz workers as it can have for `calls` (ghz needs a call per worker).

    In an open loop a worker starts a call at each tick it takes without waiting for the last one, so
    the number of workers does not bound the calls in flight.
    """
    return replace(cell, concurrency=min(cell.concurrency, calls))


def cells(options: RunOptions) -> list[Cell]:
    """By default the brief's stacks and the peers (the stacks study's) on the scenarios the decision row reads
    (hello, and S3 100 ms away); --servers and --scenarios name others among the searched ones (hello-wait,
    s3-mongo-100ms), and naming the jitter scenario adds the convoy check of the event-loop stacks."""
    servers = [
        server
        for server in options.servers or tuple(server_variant(name) for name in (*BRIEF_SERVERS, *PEERS))
        if server.only is None
    ]
    names = [each.name for each in options.scenarios] if options.scenarios else list(DECIDING)
    chosen = [each for each in SCENARIOS if each.name in SEARCHED and each.name in names]
    found = [Cell(server, each, WORKERS) for each in chosen for server in servers]
    if JITTER.name in names:
        found += [Cell(server, JITTER, WORKERS) for server in servers if server.slots is None]
    return found


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """Warm-up, a closed-loop run at c=50, then (on searched scenarios) the rate search and a low-load run."""
    driver, options = context.driver, context.options
    assert driver.open_loop_argv is not None, f"{driver.name} has no open loop"

    def runs(record: CellRecord, repeats: list[Repeat]) -> CellRecord:
        record = warm_up(cell, target, context, record)
        closed = (
            max(options.requests, cell.concurrency)  # ghz needs a call per worker
            if options.requests
            else measured_requests(record.warmup_ok_rps, cell.concurrency, cell.scenario.run_seconds)
        )
        argv = context.argv(cell, target, closed)
        closed_run, closed_report = sampled_run(
            argv, child, context, f"{record.stem}-closed.json", closed, "closed-loop"
        )
        repeats.append(closed_run)
        if cell.scenario.name not in SEARCHED:
            return record
        slo, start = SEARCHED[cell.scenario.name]

        def open_loop(offered: int, name: str, role: str, search: int | None = None) -> LoadReport:
            # --requests caps a step's calls, never past a full step's: at a low rate a smoke step takes no longer
            calls = min(options.requests, step_calls(offered)) if options.requests else step_calls(offered)
            argv = context.open_loop_argv(open_loop_cell(cell, calls), target, offered, calls, CALL_TIMEOUT)
            repeat, report = sampled_run(argv, child, context, f"{record.stem}-{name}.json", calls, role, search)
            repeats.append(repeat)
            return report

        def step(offered: int, role: str, search: int | None = None) -> LoadReport:
            return open_loop(offered, f"step{len(repeats):02d}", role, search)

        if not options.requests and closed_report.ok_rps >= 2:  # half the closed loop's rate: one doubling past it
            start = round(closed_report.ok_rps / 2)
        steps = SMOKE_STEPS if options.requests else MAX_STEPS
        # The SLO search, --repeats times, each after the first from the capacity the first found, growing or shrinking
        # by REPEAT_FACTOR (three rates or so where the capacity holds still): the capacity then has an interval over
        # its searches. A step carries its search's number as its round.
        first = None
        for number in range(1, max(1, context.repeats) + 1):
            begin = max(1, first.capacity or start) if first else start

            def holds(offered: int, number: int = number) -> bool:
                return agreed(lambda: held(step(offered, "step", number), slo))

            found = rate_search(
                holds,
                begin,
                max_steps=steps,
                factor=REPEAT_FACTOR if first else 2.0,  # near the first's capacity: a bracket of a few steps
            )
            first = first or found
        assert first is not None
        rate_search(
            lambda offered: agreed(lambda: kept_up(step(offered, "saturation"))),
            max(1, first.capacity or start),
            max_steps=steps,
        )
        open_loop(max(1, round(first.capacity * LOW_LOAD_SHARE)), "low-load", "low-load")
        return record

    return measure_cell(cell, options, runs)


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", tuple(v.name for v in SERVER_VARIANTS if v.only is None), "--servers"),
        Axis("scenario", tuple(SEARCHED), "--scenarios"),
    ),
    driver="ghz",
    repeats=1,
    cells=cells,
    measure=measure,
    diagnostics=True,
    own_scenarios=(JITTER,),
)
