"""The capacity study's tables and chart: capacity within the SLO per stack, the knee, the search's steps, the
convoy check. Report-side: reads only the run's files."""

from __future__ import annotations

import math

from harness.render.summaries import ms, ms_figure, not_ok_mark, number_figure, rate, rate_figure
from harness.render.table import Block, Figure, Table, interval_figure
from harness.render.vega import Axis, lines, png, rule, side_by_side
from harness.results.histogram import Latencies
from harness.results.records import Repeat, StudyRun
from harness.studies.capacity import (
    JITTER,
    JITTER_MS,
    WORKERS,
    kept_up,
    p99,
)
from harness.studies.capacity.cells import CapacityCell, by_scenario


def share_of(value: float, bound: float | None) -> str:
    return "—" if not bound else f"{value / bound:.0%}"


def _closed_text(cell: CapacityCell) -> str:
    closed = cell.closed
    return "—" if closed is None else f"{rate(closed[1].ok_rps)} (p99 {ms(p99(closed[1]))}){not_ok_mark([closed[1]])}"


def over_searches(cell: CapacityCell) -> Figure:
    """The capacity over its searches with its interval and how many: "1,320 [1,290, 1,350] (3 searches)"."""
    found = cell.over_searches
    if found is None:
        return Figure(None, "—")
    text = f"{rate(found.value)} [{rate(found.low)}, {rate(found.high)}] ({found.blocks} searches)"
    return interval_figure(found, text, "calls/s")


def capacity_table(scenario_name: str, stacks: list[CapacityCell]) -> list[Block]:
    """One row per stack: capacity at SLO (held to failed), the worst p99 held there, the saturation throughput,
    their ratio, the closed loop, and the steps each search took."""
    measured = [each for each in stacks if not each.failed]
    slo = stacks[0].slo if stacks else None
    repeated = any(len(each.capacities) > 1 for each in measured)
    table = Table(
        f"{scenario_name} capacity",
        [
            "stack",
            *(["capacity over its searches [95% CI] (calls/s)"] if repeated else []),
            f"capacity at p99 ≤ {ms(slo)}: held to failed (calls/s)",
            "p99 there",
            "saturation (OK calls/s, any latency)",
            "capacity / saturation",
            f"closed loop c={WORKERS}: OK calls/s",
            "steps to the SLO's edge",
            "steps to saturation",
        ],
    )
    for each in measured:
        best = each.at_capacity
        table.add(
            each.name + (" **driver-busy**" if each.driver_busy else ""),
            [
                *([over_searches(each)] if repeated else []),
                Figure(
                    each.capacity or None,
                    each.capacity_text,
                    each.capacity or None,
                    None if math.isinf(each.failed_at) else each.failed_at,
                    "calls/s",
                ),
                ms_figure(p99(best[1]) if best else None),
                rate_figure(each.saturation or None, "OK calls/s"),
                Figure(
                    100 * each.capacity / each.saturation if each.saturation else None,
                    share_of(each.capacity, each.saturation),
                    unit="%",
                ),
                Figure(None if each.closed is None else each.closed[1].ok_rps, _closed_text(each), unit="OK calls/s"),
                Figure(len(each.all_steps), str(len(each.all_steps)), unit="steps"),
                Figure(len(each.saturation_steps), str(len(each.saturation_steps)), unit="steps"),
            ],
        )
    failed = [
        f"- {each.name}: {each.result.record.status}: {each.result.record.reason}" for each in stacks if each.failed
    ]
    return [table, *failed]


def knee_table(stacks: list[CapacityCell]) -> list[Block]:
    """Per stack, the first failing rate against low load: CPU, CPU per call, GC, loop lag, context switches."""
    table = Table(
        "knee",
        [
            "stack",
            "knee (calls/s)",
            "server CPU",
            "CPU ms per call",
            "CPU ms per call, low load",
            "context switches per call",
            "context switches per call, low load",
            "GC ms per s",
            "loop lag, mean",
            "wake-ups ≥ 50 ms late",
        ],
    )
    for each in stacks:
        knee, low = each.pressure(each.knee), each.pressure(each.low_load)
        if knee is None:
            continue
        table.add(
            each.name,
            [
                rate_figure(knee.offered),
                Figure(100 * knee.cpu_share, f"{knee.cpu_share:.0%}", unit="% of its cores"),
                number_figure(knee.cpu_ms_per_call, ".2f", "ms"),
                number_figure(low.cpu_ms_per_call if low else None, ".2f", "ms"),
                number_figure(knee.switches_per_call, ".1f", "switches"),
                number_figure(low.switches_per_call if low else None, ".1f", "switches"),
                number_figure(knee.gc_ms_per_second, ".1f", "ms/s"),
                Figure(knee.lag_ms, "—" if knee.lag_ms is None else f"{knee.lag_ms:.1f} ms", unit="ms"),
                number_figure(knee.late_50ms_share, ".0%", "%", scale=100),
            ],
        )
    return [table]


KNEE_NOTE = (
    "Where the SLO gave way: the first failing rate above the capacity, with the low-load run beside it. "
    "Server CPU is of its cores; GC is time in Python's cyclic collector; loop lag is how late a 50 ms sleep "
    "on an event loop woke (a thread pool has none); context switches count every thread of the server."
)


def steps_table(stacks: list[CapacityCell]) -> list[Block]:
    """Every step of every stack, in the order tried: the SLO searches' (numbered where there are several), then the
    saturation search's."""
    labels = ["search", "offered calls/s", "OK calls/s", "non-OK", "p50", "p99", "server CPU", "held"]
    table = Table("steps", ["stack", *labels])
    for each in stacks:
        several = len(each.searches) > 1
        searched = [
            (f"SLO {pair[0].block or 1}" if several else "SLO", pair, each.holds(pair[1])) for pair in each.all_steps
        ]
        searched += [("saturation", pair, kept_up(pair[1])) for pair in each.saturation_steps]
        for search, (repeat, report), ok in searched:
            table.add(
                each.name,
                [
                    search,
                    rate_figure(report.offered_rps or 0.0),
                    rate_figure(report.ok_rps, "OK calls/s"),
                    Figure(report.non_ok, str(report.non_ok), unit="calls"),
                    ms_figure(Latencies([report.histogram]).percentile(50) if report.histogram else None),
                    ms_figure(p99(report)),
                    cpu_figure(repeat),
                    "yes" if ok else "no",
                ],
            )
    return [table]


def cpu_figure(repeat: Repeat) -> Figure:
    """A window's server CPU (of a core, on average) as a table's figure; "not sampled" where it was not."""
    if not repeat.resources.sampled:
        return Figure(None, "not sampled")
    cpu = repeat.resources.average_cpu_percent
    return Figure(cpu, f"{cpu:.0f}%", unit="% of a core")


def chart(scenario_name: str, stacks: list[CapacityCell], title: str) -> bytes:
    """p50 and p99 against the offered rate, one line per stack, the SLO drawn."""
    points = [
        {"stack": each.name, "offered": offered, **{f"p{p}": latency.percentile(p) * 1000 for p in (50, 99)}}
        for each in stacks
        for offered, latency in sorted(
            (
                (report.offered_rps or 0.0, Latencies([report.histogram]))
                for _, report in each.steps
                if report.histogram and report.ok
            ),
            key=lambda point: point[0],
        )
    ]
    slo = stacks[0].slo if stacks else None
    panels = []
    for label in ("p50", "p99"):
        drawn = lines(
            points,
            Axis("offered", "offered calls/s", log=True),
            Axis(label, f"{label} (ms)", log=True),
            "stack",
            title=f"{scenario_name}: {label} against offered rate",
        )
        panels.append(drawn if slo is None else drawn + rule(slo * 1000, f"SLO {slo * 1000:g} ms"))
    return png(side_by_side(*panels), title)


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


def convoy_table(run: StudyRun) -> list[Block]:
    table = Table(
        "convoy",
        [
            "s3-unary-100ms, OK calls/s",
            f"closed loop c={WORKERS}",
            f"closed loop c={WORKERS}, {JITTER_MS} ms jitter",
            "open loop, capacity at SLO",
            "CPU bound at low load",
        ],
    )
    for name, closed, jittered, capacity, bound in convoy_rows(run):
        table.add(
            name,
            [rate_figure(closed), rate_figure(jittered), rate_figure(capacity), rate_figure(bound or None)],
        )
    return [table]
