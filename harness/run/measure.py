"""How a cell is measured: the context every study's measurement gets, and the closed-loop measurement.

A study names its measurement (`Study.measure`); the run loop gives it a running server and this context.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.plan.matrix import Cell, measured_requests
from harness.plan.options import RunOptions
from harness.plan.wires import PLAINTEXT
from harness.results.load import DriverError, LoadReport
from harness.results.records import CellRecord, Repeat, save_report
from harness.run.drivers.registry import DRIVERS, Driver
from harness.run.processes import Child, ProcessError
from harness.run.resources import ResourceSampler, ServerCounters, tcp_segments, tree_cpu_seconds
from harness.run.tls import PLAIN, Wire
from harness.run.tools import ensure_tool

RUN_TIMEOUT = 600.0
PROBE_REQUESTS = 10  # calls made one at a time to measure a call's latency alone
# A driver cross-check: runs by each driver, taking turns, and how long each lasts. In 2.5 s runs of
# SayHello at c=50, sync-w10's rate lay up to 33% from its median under either driver; in 10 s runs,
# 7-23% in four trials, with the drivers' medians within 10% of each other each time. Every run checks two
# stacks (the streaming study's checks), so a check costs about 45 s a stack of the run's budget.
CROSS_CHECK_REPEATS = 4
CROSS_CHECK_SECONDS = 5.0


@dataclass(frozen=True)
class CellContext:
    """What measuring a cell needs besides the cell: where, with what, how often."""

    driver: Driver
    tool: Path
    options: RunOptions
    repeats: int
    study_dir: Path
    # Where servers write their own counters (GC, loop lag, context switches); None: they keep none.
    stats_dir: Path | None = None
    # The run's wires by name (harness.run.tls): a cell's server and driver speak the one the cell names.
    wires: Mapping[str, Wire] = field(default_factory=lambda: {PLAINTEXT: PLAIN})

    def driven_by(self, name: str) -> CellContext:
        """This context with another registered driver (installed if need be) in place of its own."""
        if name == self.driver.name:
            return self
        driver = DRIVERS[name]
        return replace(self, driver=driver, tool=ensure_tool(driver.tool))

    def wire(self, cell: Cell) -> Wire:
        return self.wires[cell.wire]

    def argv(self, cell: Cell, target: str, requests: int) -> list[str]:
        """The driver's command for `requests` calls of cell on target, over the cell's wire."""
        return self.driver.wire(self.driver.argv(self.tool, cell, target, requests), self.wire(cell))

    def open_loop_argv(self, cell: Cell, target: str, rate: int, requests: int, timeout: str) -> list[str]:
        """The driver's open-loop command (`rate` calls/s), over the cell's wire."""
        build = self.driver.open_loop_argv
        assert build is not None, f"{self.driver.name} has no open loop"
        return self.driver.wire(build(self.tool, cell, target, rate, requests, timeout), self.wire(cell))


def sampled_run(
    argv: list[str],
    child: Child | None,
    context: CellContext,
    relative: str,
    requests: int,
    role: str = "measured",
    block_: int | None = None,
    slice_: int | None = None,
    neighbours: Sequence[int] = (),
    proxy: int | None = None,
) -> tuple[Repeat, LoadReport]:
    """One driver run while the server's CPU and memory are sampled (child None: a target not started here),
    with the server's own counters where the study asked for them; in a block, its slice's place and what the
    other servers beside it (neighbours: their pids) spent meanwhile; what the latency proxy between the server and
    its backends (proxy: its pid) spent."""
    with ExitStack() as stack:
        counters = None
        if context.stats_dir is not None and child is not None:
            counters = stack.enter_context(ServerCounters(context.stats_dir, child.pid))
        idle_before = tree_cpu_seconds(neighbours) if neighbours else 0.0
        proxy_before = tree_cpu_seconds([proxy]) if proxy else 0.0
        sampler = stack.enter_context(ResourceSampler(child.pid if child else None))
        sent = tcp_segments()
        run = context.driver.run(argv, RUN_TIMEOUT)
        segments = None if sent is None or (now := tcp_segments()) is None else now - sent
    idle = round(tree_cpu_seconds(neighbours) - idle_before, 4) if neighbours else None
    proxied = round(tree_cpu_seconds([proxy]) - proxy_before, 4) if proxy else None
    assert sampler.usage is not None
    save_report(context.study_dir, relative, run.raw)
    if child is not None and child.process.poll() is not None:
        raise ProcessError(f"server exited with status {child.process.returncode} during the run")
    delta, calls = (counters.delta, counters.process_calls) if counters else (None, [])
    repeat = Repeat(
        relative, requests, sampler.usage, run.cpu_seconds, role, delta, block_, calls, slice_, idle, segments, proxied
    )
    return repeat, run.report


def warm_up(cell: Cell, target: str, context: CellContext, record: CellRecord) -> CellRecord:
    """A closed-loop run that is thrown away; the record keeps its OK rate, which sizes what follows."""
    driver = context.driver
    warmup = driver.run(context.argv(cell, target, record.warmup_requests), RUN_TIMEOUT).report
    if warmup.ok == 0:
        raise DriverError(f"no OK response in the warm-up: {warmup.status_codes} {warmup.errors}")
    return replace(record, warmup_ok_rps=warmup.ok_rps)


def new_record(cell: Cell, options: RunOptions, probe_file: str = "") -> CellRecord:
    """A cell's record before it is measured: its latencies and warm-up size."""
    s3_ms, mongo_ms, jitter_ms = options.latencies(cell.scenario)
    return CellRecord(
        cell.scenario.name,
        cell.server.name,
        cell.concurrency,
        status="ok",
        warmup_requests=max(cell.concurrency, options.warmup_requests or cell.scenario.warmup_requests),
        s3_latency_ms=s3_ms,
        mongo_latency_ms=mongo_ms,
        jitter_ms=jitter_ms,
        probe_file=probe_file,
        connections=cell.connections,
        wire=cell.wire,
    )


def failure_reason(error: BaseException) -> str:
    """What a failed cell records of its error: the first line, at most 500 characters."""
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:500]


def measure_cell(
    cell: Cell,
    options: RunOptions,
    body: Callable[[CellRecord, list[Repeat]], CellRecord],
    probe_file: str = "",
) -> CellRecord:
    """What every measurement shares: a new record, the body's runs appended to `repeats` as they finish, a
    failure recorded with its reason (the runs that finished kept), and the cell's time."""
    begun = time.monotonic()
    record = new_record(cell, options, probe_file)
    repeats: list[Repeat] = []
    try:
        record = body(record, repeats)
    except (ProcessError, DriverError, OSError) as error:
        record = replace(record, status="failed", reason=failure_reason(error))
    return replace(record, repeats=repeats, seconds=round(time.monotonic() - begun, 3))


def measure_closed_loop(
    cell: Cell,
    target: str,
    child: Child | None,
    context: CellContext,
    probe_file: str,
    alongside: Sequence[tuple[str, CellContext, Cell]] = (),
) -> CellRecord:
    """Warm up, probe if the scenario is bounded and no probe exists yet, then the measured runs (closed loop).

    alongside: (role, context, cell as that driver states it) of other drivers that cross-check this one.
    Each measured run is followed by one run of each of them, of the same size, so that drift on the
    machine falls on both alike."""
    options, driver = context.options, context.driver

    def runs(record: CellRecord, repeats: list[Repeat]) -> CellRecord:
        record = warm_up(cell, target, context, record)
        if cell.scenario.bounded and not record.probe_file:
            alone = driver.run(context.argv(replace(cell, concurrency=1), target, PROBE_REQUESTS), RUN_TIMEOUT)
            relative = f"cells/{cell.scenario.name}/{cell.server.name}/probe.json"
            record = replace(record, probe_file=save_report(context.study_dir, relative, alone.raw))
        requests = options.requests or measured_requests(
            record.warmup_ok_rps, cell.concurrency, cell.scenario.run_seconds
        )
        for number in range(1, context.repeats + 1):
            argv = context.argv(cell, target, requests)
            repeats.append(sampled_run(argv, child, context, f"{record.stem}-r{number}.json", requests)[0])
            for role, other, stated in alongside:
                argv = other.argv(stated, target, requests)
                stem = f"{record.stem}-{role}{number}.json"
                repeats.append(sampled_run(argv, child, other, stem, requests, role)[0])
        return record

    return measure_cell(cell, options, runs, probe_file)


def measure_against(
    checker: str,
    cell: Cell,
    target: str,
    child: Child | None,
    context: CellContext,
    probe_file: str,
    request: dict[str, object] | None = None,
) -> CellRecord:
    """A closed-loop cell whose driver is cross-checked by another (ghz, h2load): CROSS_CHECK_REPEATS runs of
    CROSS_CHECK_SECONDS by each (unless --repeats says otherwise), taking turns. The checker sends the
    scenario's data as its request: `request` replaces it where the data also holds the study driver's own
    keys."""
    if context.options.repeats is None:
        context = replace(context, repeats=CROSS_CHECK_REPEATS)
    cell = replace(cell, scenario=replace(cell.scenario, run_seconds=CROSS_CHECK_SECONDS))
    stated = cell if request is None else replace(cell, scenario=replace(cell.scenario, data=request))
    other = context.driven_by(checker)
    return measure_closed_loop(cell, target, child, context, probe_file, alongside=[(checker, other, stated)])
