"""The capacity study: how much load does one core take within our latency SLO?

Open loop (`ghz --async --rps R`): calls start at a constant rate whether or not earlier ones have
finished, so queueing shows in the latency instead of slowing the load down (no coordinated omission).
For each stack and scenario, after a warm-up and one closed-loop run at concurrency 50 (the stacks
study's method, for comparison), a search finds the highest rate sustained with p99 at or under the
scenario's SLO and no failed call: a bracket from a low rate (doubling), then bisection. Each step lasts
2,000 calls or 10 s, whichever comes first, and every step is kept. Then a run at 10% of that rate
measures the CPU seconds a call costs: one core over that cost is the stack's CPU bound.
A second latency route with 20 ms of jitter shows whether the closed loop's shortfall is a convoy.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.bounds import server_cpus
from harness.drivers import DriverError, LoadReport
from harness.drivers.histogram import Latencies
from harness.matrix import SCENARIOS, SERVER_VARIANTS, SMALL_BUCKET, Cell, Scenario, measured_requests, scenario
from harness.measure import CellContext, new_record, sampled_run, warm_up
from harness.options import RunOptions
from harness.processes import Child, ProcessError
from harness.results import CellRecord, CellResult, Repeat, StudyRun
from harness.studies.base import Axis, Study, run_targets
from harness.summaries import DRIVER_BUSY, driver_cpus, header, ms, png, rate, row

NAME = "capacity"
WORKERS = 50  # ghz workers taking the open loop's ticks, and the closed loop's concurrency beside it
JITTER_MS = 20
JITTER = Scenario(
    f"s3-unary-100ms-jitter{JITTER_MS}",
    "bench.v1.ObjectStore.ListObjects",
    {"bucket": SMALL_BUCKET},
    f"ListObjects on the small bucket, S3 100 ms away with {JITTER_MS} ms of jitter",
    20,
    bucket=SMALL_BUCKET,
    s3_latency_ms=100,
    jitter_ms=JITTER_MS,
)
# The scenario -> (SLO on p99 in seconds, the rate the search starts from in calls/s; ghz takes whole rates).
SEARCHED: dict[str, tuple[float, int]] = {
    "hello": (0.010, 100),
    "hello-wait": (0.150, 10),
    "s3-unary-100ms": (0.300, 20),
    "s3-mongo-100ms": (0.300, 20),
}
STEP_CALLS = 2000
STEP_SECONDS = 10.0
MIN_CALLS = 10
SMOKE_STEPS = 3  # with --requests (as --quick sets it): steps of that many calls, and only this many
PRECISION = 0.05  # the bisection stops once the failing rate is within 5% of the passing one
MAX_STEPS = 16
LOW_LOAD_SHARE = 0.10
CALL_TIMEOUT = "60s"  # well above every SLO: a slow call is measured, not cut short
TARGET_SHARE = 0.80  # capacity at SLO against the low-load CPU bound, on hello and s3-unary-100ms
TARGET_SCENARIOS = ("hello", "s3-unary-100ms")
CONVOY = 1.10  # open loop (or jitter) this far above the closed loop: the closed loop was held back


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
    passes: Callable[[int], bool], start: int, precision: float = PRECISION, max_steps: int = MAX_STEPS
) -> Search:
    """Bracket the knee by doubling (or halving) from start, then bisect until the bracket is within
    precision of the passing rate, or one call/s where that is finer than a whole rate."""
    steps: list[Step] = []

    def trial(value: int) -> bool:
        steps.append(Step(value, passes(value)))
        return steps[-1].passed

    low, high, value = 0, math.inf, start
    while len(steps) < max_steps and (low == 0 or high == math.inf) and value >= 1:
        if trial(value):
            low, value = value, value * 2
        else:
            high, value = value, value // 2
    while len(steps) < max_steps and low > 0 and high - low > max(1.0, low * precision):
        middle = int((low + high) // 2)
        if trial(middle):
            low = middle
        else:
            high = middle
    return Search(low, high, tuple(steps))


def step_calls(offered: int) -> int:
    """Calls in an open-loop step: 2,000 or 10 s of them, whichever is fewer."""
    return max(MIN_CALLS, min(STEP_CALLS, round(offered * STEP_SECONDS)))


def open_loop_cell(cell: Cell, calls: int) -> Cell:
    """The cell with as many ghz workers as it can have for `calls` (ghz needs a call per worker).

    In an open loop a worker starts a call at each tick it takes without waiting for the last one, so
    the number of workers does not bound the calls in flight.
    """
    return replace(cell, concurrency=min(cell.concurrency, calls))


def p99(report: LoadReport) -> float | None:
    """The run's p99 from its histogram; None without one."""
    return Latencies([report.histogram]).percentile(99) if report.histogram else None


def held(report: LoadReport, slo: float) -> bool:
    """No failed call, and p99 at or under the SLO."""
    value = p99(report)
    return report.non_ok == 0 and report.ok > 0 and value is not None and value <= slo


def cells(options: RunOptions) -> list[Cell]:
    """Each stack (without the MongoDB-driver variants) on each searched scenario; async stacks with jitter."""
    servers = [server for server in options.servers or SERVER_VARIANTS if server.only is None]
    chosen = [each for each in options.scenarios or SCENARIOS if each.name in SEARCHED]
    found = [Cell(server, each, WORKERS) for each in chosen for server in servers]
    if options.scenarios is None or any(each.name == "s3-unary-100ms" for each in chosen):
        found += [Cell(server, JITTER, WORKERS) for server in servers if server.slots is None]
    return found


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """Warm-up, a closed-loop run at c=50, then (on searched scenarios) the rate search and a low-load run."""
    begun = time.monotonic()
    driver, options = context.driver, context.options
    open_loop_argv = driver.open_loop_argv
    assert open_loop_argv is not None, f"{driver.name} has no open loop"
    record = new_record(cell, options)
    repeats: list[Repeat] = []
    try:
        record = warm_up(cell, target, context, record)
        closed = (
            max(options.requests, cell.concurrency)  # ghz needs a call per worker
            if options.requests
            else measured_requests(record.warmup_ok_rps, cell.concurrency, cell.scenario.run_seconds)
        )
        argv = driver.argv(context.tool, cell, target, closed)
        repeats.append(sampled_run(argv, child, context, f"{record.stem}-closed.json", closed, "closed-loop")[0])
        if cell.scenario.name in SEARCHED:
            slo, start = SEARCHED[cell.scenario.name]

            def open_loop(offered: int, name: str, role: str) -> LoadReport:
                calls = options.requests or step_calls(offered)
                argv = open_loop_argv(context.tool, open_loop_cell(cell, calls), target, offered, calls, CALL_TIMEOUT)
                repeat, report = sampled_run(argv, child, context, f"{record.stem}-{name}.json", calls, role)
                repeats.append(repeat)
                return report

            search = rate_search(
                lambda offered: held(open_loop(offered, f"step{len(repeats):02d}", "step"), slo),
                start,
                max_steps=SMOKE_STEPS if options.requests else MAX_STEPS,
            )
            open_loop(max(1, round(search.capacity * LOW_LOAD_SHARE)), "low-load", "low-load")
    except (ProcessError, DriverError, OSError) as error:
        record = replace(record, status="failed", reason=str(error).strip().splitlines()[0][:500])
    return replace(record, repeats=repeats, seconds=round(time.monotonic() - begun, 3))


WAIT_BOUND_SHARE = 0.80  # capacity this close to the wait bound: the workers, not the core, set it
SATURATED = 0.90  # server CPU at this share of its cores or more: the knee is the CPU
HAND_OFFS = 1.5  # context switches per call this many times their low-load count: thread hand-offs grew


@dataclass(frozen=True)
class Pressure:
    """What the server went through in one run: its CPU and the counters it kept about itself."""

    offered: float
    cpu_share: float  # of the server's cores
    cpu_ms_per_call: float
    gc_ms_per_second: float | None  # None: the server kept no counters
    lag_ms: float | None  # mean lateness of the loop's wake-ups; None for a thread pool
    late_50ms_share: float | None  # share of wake-ups 50 ms or more late
    switches_per_call: float | None

    @classmethod
    def of(cls, repeat: Repeat, report: LoadReport, cpus: int) -> Pressure | None:
        usage, counters = repeat.resources, repeat.server_counters or {}
        if not usage.sampled or usage.wall_seconds <= 0 or report.ok == 0:
            return None
        checks = counters.get("lag_checks", 0)
        switches = counters.get("voluntary_switches", 0) + counters.get("involuntary_switches", 0)
        return cls(
            offered=report.offered_rps or 0.0,
            cpu_share=usage.cpu_seconds / (usage.wall_seconds * cpus),
            cpu_ms_per_call=1000 * usage.cpu_seconds / report.ok,
            gc_ms_per_second=1000 * counters["gc_seconds"] / usage.wall_seconds if counters else None,
            lag_ms=1000 * counters["lag_seconds"] / checks if checks else None,
            late_50ms_share=counters["late_50ms"] / checks if checks else None,
            switches_per_call=switches / report.ok if counters else None,
        )


def _optional(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


@dataclass(frozen=True)
class CapacityCell:
    """One stack on one scenario, read back from its runs."""

    result: CellResult
    meta: dict[str, Any]
    slots: int | None = None  # calls the server serves at once: thread-pool workers; None for an event loop

    def _runs(self, role: str) -> list[tuple[Repeat, LoadReport]]:
        pairs = zip(self.result.record.repeats, self.result.reports, strict=True)
        return [(repeat, report) for repeat, report in pairs if repeat.role == role]

    @property
    def name(self) -> str:
        return self.result.record.server

    @property
    def failed(self) -> bool:
        return self.result.record.status != "ok"

    @property
    def slo(self) -> float | None:
        entry = SEARCHED.get(self.result.record.scenario)
        return entry[0] if entry else None

    @property
    def steps(self) -> list[tuple[Repeat, LoadReport]]:
        return self._runs("step")

    @property
    def at_capacity(self) -> tuple[Repeat, LoadReport] | None:
        """The passing step with the highest offered rate."""
        slo = self.slo
        passing = [(r, report) for r, report in self.steps if slo is not None and held(report, slo)]
        return max(passing, key=lambda pair: pair[1].offered_rps or 0.0, default=None)

    @property
    def capacity(self) -> float:
        best = self.at_capacity
        return (best[1].offered_rps or 0.0) if best else 0.0

    @property
    def knee(self) -> tuple[Repeat, LoadReport] | None:
        """The failing step with the lowest offered rate above the capacity: where the SLO gave way."""
        slo, capacity = self.slo, self.capacity
        failing = [
            (r, report)
            for r, report in self.steps
            if slo is not None and not held(report, slo) and (report.offered_rps or 0.0) > capacity
        ]
        return min(failing, key=lambda pair: pair[1].offered_rps or 0.0, default=None)

    @property
    def low_load(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("low-load")
        return runs[0] if runs and runs[0][1].ok else None

    def pressure(self, pair: tuple[Repeat, LoadReport] | None) -> Pressure | None:
        return Pressure.of(*pair, server_cpus(self.meta)) if pair else None

    def reason(self) -> str:
        """Why the SLO gave way below the CPU bound, from the knee against low load, in one clause."""
        knee, low = self.pressure(self.knee), self.pressure(self.low_load)
        if knee is None or low is None:
            return "no step failed above the capacity, so there is no knee to read"
        wait_bound = self.wait_bound
        if wait_bound is not None and self.capacity >= WAIT_BOUND_SHARE * wait_bound:
            return (
                f"its {self.slots} worker thread{'s each' if self.slots != 1 else ''} held a call for "
                f"{ms(self.low_load_latency)} at low load, so it finishes at most {rate(wait_bound)} calls/s "
                "(the wait bound) "
                f"whatever its core does: at {rate(knee.offered)} calls/s the core was {knee.cpu_share:.0%} busy"
            )
        cost = knee.cpu_ms_per_call / low.cpu_ms_per_call if low.cpu_ms_per_call else 0.0
        parts = [f"at {rate(knee.offered)} calls/s the server used {knee.cpu_share:.0%} of its core"]
        if knee.cpu_share >= SATURATED:
            parts.append(f"and a call cost {cost:.2f}x its low-load CPU")
            switches, usual = knee.switches_per_call, low.switches_per_call
            if switches and usual and switches >= HAND_OFFS * usual:
                parts.append(
                    f"with {switches:.1f} context switches per call against {usual:.1f} at low load (thread hand-offs)"
                )
        else:
            parts.append("so something other than the CPU held the tail")
        if knee.lag_ms is not None and knee.late_50ms_share is not None:
            parts.append(
                f"the loop woke {knee.lag_ms:.1f} ms late on average, "
                f"{knee.late_50ms_share:.0%} of wake-ups by 50 ms or more"
            )
        if knee.gc_ms_per_second is not None:
            parts.append(f"GC took {knee.gc_ms_per_second:.1f} ms per second")
        return ", ".join(parts)

    @property
    def low_load_latency(self) -> float | None:
        """One call's median latency at low load, in seconds."""
        low = self.low_load
        return Latencies([low[1].histogram]).percentile(50) if low and low[1].histogram else None

    @property
    def wait_bound(self) -> float | None:
        """A thread pool's workers over one call's median latency at low load; None for an event loop."""
        alone = self.low_load_latency
        return self.slots / alone if self.slots is not None and alone else None

    @property
    def cpu_bound(self) -> float | None:
        """One server CPU's worth of calls at the CPU cost per call measured at low load."""
        low = self.low_load
        if low is None or low[0].resources.cpu_seconds <= 0:
            return None
        repeat, report = low
        return server_cpus(self.meta) / (repeat.resources.cpu_seconds / report.ok)

    @property
    def closed(self) -> tuple[Repeat, LoadReport] | None:
        runs = self._runs("closed-loop")
        return runs[0] if runs else None

    @property
    def driver_busy(self) -> bool:
        cpus = driver_cpus(self.meta)
        return any(
            repeat.driver_cpu_seconds is not None
            and repeat.resources.wall_seconds > 0
            and repeat.driver_cpu_seconds / (repeat.resources.wall_seconds * cpus) > DRIVER_BUSY
            for repeat in self.result.record.repeats
        )


def by_scenario(run: StudyRun) -> dict[str, list[CapacityCell]]:
    """scenario -> its stacks, in the run's matrix order."""
    grouped: dict[str, list[CapacityCell]] = {}
    for cell in run.cells:
        slots = run.matrix.get("server_slots", {}).get(cell.record.server)
        grouped.setdefault(cell.record.scenario, []).append(CapacityCell(cell, run.meta, slots))
    order = list(run.matrix["servers"])
    for stacks in grouped.values():
        stacks.sort(key=lambda each: order.index(each.name) if each.name in order else len(order))
    return grouped


def _share(value: float, bound: float | None) -> str:
    return "—" if not bound else f"{value / bound:.0%}"


def _closed_text(cell: CapacityCell) -> str:
    closed = cell.closed
    return "—" if closed is None else f"{rate(closed[1].ok_rps)} (p99 {ms(p99(closed[1]))})"


def capacity_table(scenario_name: str, stacks: list[CapacityCell]) -> list[str]:
    """One row per stack: capacity at SLO, its p99, the CPU bound at low load, their ratio, the closed loop."""
    measured = [each for each in stacks if not each.failed]
    slo = stacks[0].slo if stacks else None
    lines = header(
        [
            f"capacity at p99 ≤ {ms(slo)} (calls/s)",
            "p99 there",
            "CPU bound at low load (calls/s)",
            "capacity / CPU bound",
            f"closed loop c={WORKERS}: OK calls/s",
            "steps",
        ],
        "stack",
    )
    for each in measured:
        best = each.at_capacity
        bound = each.cpu_bound
        lines.append(
            row(
                each.name + (" **driver-busy**" if each.driver_busy else ""),
                [
                    rate(each.capacity) if best else f"below {rate(min(r.offered_rps or 0 for _, r in each.steps))}",
                    ms(p99(best[1])) if best else "—",
                    rate(bound) if bound else "—",
                    _share(each.capacity, bound),
                    _closed_text(each),
                    str(len(each.steps)),
                ],
            )
        )
    lines += [
        f"- {each.name}: {each.result.record.status}: {each.result.record.reason}" for each in stacks if each.failed
    ]
    return lines


def knee_table(stacks: list[CapacityCell]) -> list[str]:
    """Per stack, the first failing rate against low load: CPU, CPU per call, GC, loop lag, context switches."""
    lines = header(
        [
            "knee (calls/s)",
            "server CPU",
            "CPU ms per call (low load)",
            "context switches per call (low load)",
            "GC ms per s",
            "loop lag, mean",
            "wake-ups ≥ 50 ms late",
        ],
        "stack",
    )
    for each in stacks:
        knee, low = each.pressure(each.knee), each.pressure(each.low_load)
        if knee is None:
            continue
        lines.append(
            row(
                each.name,
                [
                    rate(knee.offered),
                    f"{knee.cpu_share:.0%}",
                    f"{knee.cpu_ms_per_call:.2f} ({_optional(low.cpu_ms_per_call if low else None, '.2f')})",
                    f"{_optional(knee.switches_per_call, '.1f')} "
                    f"({_optional(low.switches_per_call if low else None, '.1f')})",
                    _optional(knee.gc_ms_per_second, ".1f"),
                    "—" if knee.lag_ms is None else f"{knee.lag_ms:.1f} ms",
                    _optional(knee.late_50ms_share, ".0%"),
                ],
            )
        )
    return lines


KNEE_NOTE = (
    "Where the SLO gave way: the first failing rate above the capacity, against the low-load run in brackets. "
    "Server CPU is of its cores; GC is time in Python's cyclic collector; loop lag is how late a 50 ms sleep "
    "on an event loop woke (a thread pool has none); context switches count every thread of the server."
)


def steps_table(stacks: list[CapacityCell]) -> list[str]:
    """Every step of every stack, in the order tried."""
    lines = header(["offered calls/s", "OK calls/s", "non-OK", "p50", "p99", "server CPU", "held"], "stack")
    for each in stacks:
        slo = each.slo
        for repeat, report in each.steps:
            lines.append(
                row(
                    each.name,
                    [
                        rate(report.offered_rps or 0.0),
                        rate(report.ok_rps),
                        str(report.non_ok),
                        ms(Latencies([report.histogram]).percentile(50) if report.histogram else None),
                        ms(p99(report)),
                        f"{repeat.resources.average_cpu_percent:.0f}%" if repeat.resources.sampled else "not sampled",
                        "yes" if slo is not None and held(report, slo) else "no",
                    ],
                )
            )
    return lines


def chart(scenario_name: str, stacks: list[CapacityCell], title: str) -> bytes:
    """p50 and p99 against the offered rate, one line per stack, the SLO drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (median, tail) = plt.subplots(1, 2, figsize=(11, 4.4))
    for each in stacks:
        points = sorted(
            (report.offered_rps or 0.0, Latencies([report.histogram]))
            for _, report in each.steps
            if report.histogram and report.ok
        )
        if not points:
            continue
        rates = [offered for offered, _ in points]
        median.plot(rates, [lat.percentile(50) * 1000 for _, lat in points], marker="o", label=each.name)
        tail.plot(rates, [lat.percentile(99) * 1000 for _, lat in points], marker="o", label=each.name)
    slo = stacks[0].slo if stacks else None
    for axes, label in ((median, "p50"), (tail, "p99")):
        if slo is not None:
            axes.axhline(slo * 1000, color="red", linestyle="--", linewidth=1, label=f"SLO {slo * 1000:g} ms")
        axes.set(
            title=f"{scenario_name}: {label} against offered rate", xlabel="offered calls/s", ylabel=f"{label} (ms)"
        )
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.grid(alpha=0.3)
    tail.legend(fontsize="small")
    return png(figure, title)


def convoy_rows(run: StudyRun) -> list[tuple[str, float, float | None, float, float | None]]:
    """Per async stack on s3-unary-100ms: closed loop, closed loop with jitter, open-loop capacity, CPU bound."""
    grouped = by_scenario(run)
    plain = {each.name: each for each in grouped.get("s3-unary-100ms", []) if not each.failed}
    jittered = {each.name: each for each in grouped.get(JITTER.name, []) if not each.failed}
    found = []
    for name, each in plain.items():
        closed = each.closed
        if name not in jittered or closed is None:
            continue
        with_jitter = jittered[name].closed
        found.append(
            (name, closed[1].ok_rps, with_jitter[1].ok_rps if with_jitter else None, each.capacity, each.cpu_bound)
        )
    return found


def convoy_table(run: StudyRun) -> list[str]:
    lines = header(
        [
            f"closed loop c={WORKERS}",
            f"closed loop c={WORKERS}, {JITTER_MS} ms jitter",
            "open loop, capacity at SLO",
            "CPU bound at low load",
        ],
        "s3-unary-100ms, OK calls/s",
    )
    for name, closed, jittered, capacity, bound in convoy_rows(run):
        lines.append(
            row(
                name,
                [
                    rate(closed),
                    "—" if jittered is None else rate(jittered),
                    rate(capacity),
                    rate(bound) if bound else "—",
                ],
            )
        )
    return lines


def render(run: StudyRun) -> dict[str, bytes]:
    """results/capacity/<scenario>.md with every step, and results/capacity/charts/<scenario>.png."""
    files: dict[str, bytes] = {}
    for scenario_name, stacks in by_scenario(run).items():
        if scenario_name not in SEARCHED:
            continue
        lines = [
            f"# Capacity, {scenario_name}: {run.title}",
            "",
            f"{scenario(scenario_name).description}. Open loop (ghz --async --rps, {WORKERS} workers taking the "
            f"ticks), each step {STEP_CALLS:,} calls or {STEP_SECONDS:g} s of them. A step holds when no call "
            "fails and p99 is at or under the SLO. Percentiles are of each step's OK calls.",
            "",
            *capacity_table(scenario_name, stacks),
            "",
            KNEE_NOTE,
            "",
            *knee_table(stacks),
            "",
            "## Every step",
            "",
            *steps_table(stacks),
        ]
        files[f"{scenario_name}.md"] = ("\n".join(lines) + "\n").encode()
        files[f"charts/{scenario_name}.png"] = chart(scenario_name, stacks, run.title.replace("`", ""))
    return files


def section(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    lines = [
        f"Newest run: {newest.title}; {newest.info.get('wall_seconds', 0) / 60:.1f} min. Open loop: calls start "
        f"at a fixed rate whether or not earlier ones finished; the search brackets the highest rate with no "
        f"failed call and p99 within the SLO (doubling, then bisection to {PRECISION:.0%}). The CPU bound is one "
        "core over the CPU seconds per call measured at 10% of that rate. ghz spaces the calls evenly; real "
        "arrivals are burstier, so read each capacity as an upper bound for your traffic. Raw reports: "
        f"[`runs/{newest.run_id}`](runs/{newest.run_id}).",
        "",
    ]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in SEARCHED:
            continue
        lines += [f"### {scenario_name}", "", f"![{scenario_name}]({NAME}/charts/{scenario_name}.png)", ""]
        lines += [f"*{scenario_name}: {newest.title}.*", "", *capacity_table(scenario_name, stacks), ""]
        lines += [KNEE_NOTE, "", *knee_table(stacks), ""]
        lines += [f"Every step: [{scenario_name}]({NAME}/{scenario_name}.md).", ""]
    if convoy_rows(newest):
        lines += ["### Closed loop against open loop", "", f"*{newest.title}.*", "", *convoy_table(newest), ""]
    return "\n".join(lines)


def _convoy_verdict(run: StudyRun) -> str:
    parts = []
    for name, closed, jittered, capacity, _ in convoy_rows(run):
        lifted = capacity >= closed * CONVOY or (jittered is not None and jittered >= closed * CONVOY)
        parts.append(
            f"{name} {rate(closed)} closed, {rate(jittered) if jittered is not None else '—'} with jitter, "
            f"{rate(capacity)} open ({'held back' if lifted else 'not held back'})"
        )
    return "; ".join(parts)


def _cheaper_at_load(run: StudyRun) -> list[str]:
    """Where capacities pass the low-load CPU bound, say so with what a call cost at the knee against low load."""
    above, cells, costs, busy = 0, 0, [], []
    grouped = by_scenario(run)
    for scenario_name in TARGET_SCENARIOS:
        for each in grouped.get(scenario_name, []):
            bound = each.cpu_bound
            knee, low = each.pressure(each.knee), each.pressure(each.low_load)
            if each.failed or not bound:
                continue
            cells += 1
            if each.capacity > bound and knee and low and low.cpu_ms_per_call:
                above += 1
                costs.append(knee.cpu_ms_per_call / low.cpu_ms_per_call)
                busy.append(knee.cpu_share)
    if not above:
        return []
    return [
        f"On {above} of {cells} stacks and scenarios ({', '.join(TARGET_SCENARIOS)}) the capacity passed the CPU "
        f"bound measured at low load: at the knee a call cost {min(costs):.2f}x to {max(costs):.2f}x the CPU it "
        "cost at 10% load (a busy server serves several calls per wake-up and system call), so the low-load "
        f"bound understates what a core takes; at the knee the core was {min(busy):.0%} to {max(busy):.0%} busy."
    ]


def answer(runs: Sequence[StudyRun]) -> str:
    """Capacity at SLO per scenario, its share of the CPU bound, and whether the closed loop hid capacity."""
    newest = runs[0]
    parts = [f"On {newest.cpu_model} (run `{newest.run_id}`), one server core, open loop:"]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in SEARCHED:
            continue
        ranked = sorted((each for each in stacks if not each.failed), key=lambda each: -each.capacity)
        if not ranked:
            continue
        slo = SEARCHED[scenario_name][0]
        listing = ", ".join(
            f"{each.name} {rate(each.capacity)}"
            + (f" ({_share(each.capacity, each.cpu_bound)} of its CPU bound)" if each.cpu_bound else "")
            for each in ranked
        )
        parts.append(f"{scenario_name} within p99 ≤ {slo * 1000:g} ms: {listing} calls/s.")
        if scenario_name in TARGET_SCENARIOS:
            short = [each for each in ranked if each.cpu_bound and each.capacity < TARGET_SHARE * each.cpu_bound]
            parts += [
                f"{each.name} fell short of {TARGET_SHARE:.0%} on {scenario_name}: {each.reason()}." for each in short
            ]
    parts += _cheaper_at_load(newest)
    verdict = _convoy_verdict(newest)
    if verdict:
        parts.append(
            f"On s3-unary-100ms the closed loop at c={WORKERS} against {JITTER_MS} ms of jitter and the open loop: "
            f"{verdict}. Where the open loop or jitter lifts throughput by {CONVOY - 1:.0%} or more, the closed "
            "loop's convoy, not the stack, held it back."
        )
    return " ".join(parts)


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Any]:
    """Capacity at SLO at least 80% of the low-load CPU bound on hello and s3-unary-100ms, per stack."""
    grouped = by_scenario(run)
    shares: dict[str, float] = {}
    for scenario_name in TARGET_SCENARIOS:
        for each in grouped.get(scenario_name, []):
            bound = each.cpu_bound
            if not each.failed and bound:
                shares[f"{scenario_name}/{each.name}"] = round(each.capacity / bound, 3)
    return {
        "capacity_at_80_percent_of_cpu_bound": {
            "by_cell": shares,
            "met": all(v >= TARGET_SHARE for v in shares.values()),
        },
        **run_targets(run, wall_seconds, full_matrix),
    }


CAPACITY = Study(
    name=NAME,
    question="How much load does one core take within our latency SLO?",
    follows="open-loop capacity testing (constant arrival rate, as ghz --async --rps offers it), against the closed "
    "loop of the 2020 study",
    axes=(
        Axis("server", tuple(v.name for v in SERVER_VARIANTS if v.only is None), "--servers"),
        Axis("scenario", tuple(SEARCHED), "--scenarios"),
    ),
    driver="ghz",
    repeats=1,
    cells=cells,
    measure=measure,
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    default=False,  # about 35 minutes on a 2-core machine: run it with --study capacity
    diagnostics=True,
)
