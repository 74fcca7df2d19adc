"""The stacks study's tables cell by cell: one per scenario, level and way of connecting, with its reading and
chart. Report-side: reads only the run's files."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

from harness.analysis.judging import without_controls
from harness.method.bounds import Bounds
from harness.plan.matrix import PER_WORKER, SCENARIOS, SHARED
from harness.render.summaries import (
    MIB,
    SHOWN_PERCENTILES,
    TOO_FEW_NOTE,
    CellSummary,
    flag_notes,
    ms_figure,
    percent,
    percentile_label,
    rate,
    seconds,
)
from harness.render.table import Block, Cell, Figure, Table, row
from harness.render.vega import Axis, lines, png, side_by_side
from harness.results.records import StudyRun

CONNECTION_LABELS = {PER_WORKER: "a connection per worker"}
BRIEF_FOLDER = "brief"  # results/stacks/brief/level-<N>.md

Levels = dict[int, dict[str, CellSummary]]


def table_file(scenario: str, level: int, connections: str = SHARED) -> str:
    """A cell table's path under results/stacks/: <scenario>/concurrency-<N>[+<connections>].md."""
    return f"{scenario}/concurrency-{level}" + ("" if connections == SHARED else f"+{connections}") + ".md"


def connection_label(connections: str) -> str:
    return CONNECTION_LABELS.get(connections, connections.replace("-", " "))


def grouped(run: StudyRun, connections: str = SHARED) -> dict[str, Levels]:
    """scenario -> level -> server -> summary of the cells driven with these connections, in the run's matrix
    order."""
    slots = run.matrix.get("server_slots", {})
    result: dict[str, Levels] = {}
    for cell in run.cells:
        record = cell.record
        if record.connections != connections:
            continue
        summary = CellSummary(without_controls(cell), run.meta, slots.get(record.server))
        result.setdefault(record.scenario, {}).setdefault(record.concurrency, {})[record.server] = summary
    order = list(run.matrix["scenarios"])
    return {name: result[name] for name in sorted(result, key=lambda n: order.index(n) if n in order else len(order))}


def servers_in(run: StudyRun, levels: Levels) -> list[str]:
    """The servers of a scenario's cells, in the run's matrix order."""
    present = sorted({name for level in levels.values() for name in level})
    order = list(run.matrix["servers"])
    return [name for name in order if name in present] + [name for name in present if name not in order]


def description(scenario: str) -> str:
    return next((each.description for each in SCENARIOS if each.name == scenario), scenario)


def latency_label(summaries: Sequence[CellSummary]) -> str:
    """ "S3 +100 ms, MongoDB +5 ms (jitter 10 ms)" for the latencies the cells ran with, or ""."""
    record = summaries[0].result.record if summaries else None
    if record is None or not (record.s3_latency_ms or record.mongo_latency_ms):
        return ""
    parts = [
        f"{name} +{ms} ms" for name, ms in (("S3", record.s3_latency_ms), ("MongoDB", record.mongo_latency_ms)) if ms
    ]
    jitter = f" (jitter {record.jitter_ms} ms)" if record.jitter_ms else ""
    return ", ".join(parts) + jitter


def _bound(value: float) -> Figure:
    return Figure(None, "unbounded") if value == math.inf else Figure(value, f"{rate(value)}/s", unit="calls/s")


def _if_sampled(render: Callable[[CellSummary], Cell]) -> Callable[[CellSummary], Cell]:
    return lambda s: render(s) if s.sampled else Figure(None, "not sampled")


def _binding(found: Bounds) -> Figure:
    """The bound that binds a cell, named in its text and its unit."""
    bound = _bound(found.bound)
    return Figure(bound.value, f"{found.binding}, {bound}", unit=f"calls/s, the {found.binding} bound")


def _count(value: int) -> Figure:
    return Figure(value, f"{value:,}", unit="calls")


def _status_count(code: str) -> Callable[[CellSummary], Cell]:
    return lambda s: _count(s.status_counts().get(code, 0))


def _ok_rate(s: CellSummary) -> Figure:
    """A cell's OK calls/s, the median of its runs, with the lowest to the highest run's."""
    low, high = s.ok_rps_range
    return Figure(s.ok_rps, f"{rate(s.ok_rps)} ({rate(low)}–{rate(high)})", low, high, "OK calls/s")


def _noise(s: CellSummary) -> Figure:
    text = f"**noisy** ({s.spread:.0%})" if s.noisy else f"ok ({s.spread:.0%})"
    return Figure(100 * s.spread, text, unit="% spread")


def _latency_at(p: float) -> Callable[[CellSummary], Cell]:
    return lambda s: ms_figure(s.percentile(p))


def _percent(value: float) -> Figure:
    return Figure(value, f"{value:.0f}%", unit="% of a core")


def _mib(value: float) -> Figure:
    return Figure(value / MIB, f"{value / MIB:.0f} MiB", unit="MiB")


def ways_of_connecting(run: StudyRun) -> list[str]:
    """The ways other than one shared connection that the run's cells were driven with."""
    return [way for way in dict.fromkeys(cell.record.connections for cell in run.cells) if way != SHARED]


def cell_table(
    run: StudyRun, scenario: str, concurrency: int, summaries: dict[str, CellSummary], connections: str = SHARED
) -> list[Block]:
    """The original study's per-concurrency table: one column per server variant."""
    servers = list(summaries)
    codes = sorted({code for s in summaries.values() for code in s.status_counts() if code != "OK"})
    repeats = run.matrix["repeats"]

    def column(render: Callable[[CellSummary], Cell]) -> list[Cell]:
        return [(Figure(None, "—") if summaries[name].failed else render(summaries[name])) for name in servers]

    def bound_column(render: Callable[[Bounds], Cell]) -> list[Cell]:
        return [(Figure(None, "—") if (b := summaries[name].bounds) is None else render(b)) for name in servers]

    def median_of(s: CellSummary, field: str) -> float:
        return float(statistics.median(getattr(report, field) for report in s.reports))

    latency = latency_label(list(summaries.values()))
    percentiles = [p for p, _ in SHOWN_PERCENTILES]
    measured = [s for s in summaries.values() if not s.failed]
    table = Table(
        f"{scenario} c{concurrency}" + ("" if connections == SHARED else f" {connections}"),
        ["", *servers],
        [
            row("Count", column(lambda s: _count(sum(r.count for r in s.reports)))),
            row("OK", column(_status_count("OK"))),
            *[row(code, column(_status_count(code))) for code in codes],
            row("Total", column(lambda s: Figure(t := median_of(s, "total"), seconds(t), unit="s"))),
            row("Slowest", column(lambda s: ms_figure(median_of(s, "slowest")))),
            row("Fastest", column(lambda s: ms_figure(median_of(s, "fastest")))),
            row("Average", column(lambda s: ms_figure(median_of(s, "average")))),
            row("Requests/sec (OK only)", column(_ok_rate)),
            *[row(percentile_label(p), column(_latency_at(p))) for p in percentiles],
            row("Server CPU, average", column(_if_sampled(lambda s: _percent(s.cpu_average)))),
            row("Server CPU, peak", column(_if_sampled(lambda s: _percent(s.cpu_peak)))),
            row("Server RSS, peak", column(_if_sampled(lambda s: _mib(s.rss_peak)))),
            row(
                f"Driver CPU, peak (of its {run.meta.driver_cpus})",
                column(
                    lambda s: Figure(
                        None if s.driver_cpu is None else 100 * s.driver_cpu, percent(s.driver_cpu), unit="%"
                    )
                ),
            ),
            row("Noise", column(_noise)),
            row("Flags", column(lambda s: ", ".join(f"**{flag}**" for flag in s.flags) or "none")),
        ],
    )
    lines: list[Block] = [
        f"# {scenario}, concurrency {concurrency}"
        + ("" if connections == SHARED else f", {connection_label(connections)}")
        + (f" ({latency})" if latency else "")
        + f": {run.title}",
        "",
        f"{description(scenario)}. A discarded warm-up, then {repeats} measured ghz runs per cell in count mode"
        + ("" if connections == SHARED else f", the workers on {connection_label(connections)}")
        + ". "
        "Count, OK and status rows add up all runs; times are medians of the runs; "
        + (
            "percentiles pool every OK call of the runs. "
            if all(s.latencies is not None for s in measured)
            else "percentiles are medians of the runs' own (this run predates pooled histograms). "
        )
        + "**Requests/sec counts OK responses only**: median (lowest–highest run).",
        "",
        table,
    ]
    if any(summary.bounds for summary in summaries.values()):
        table.rows += [
            row(
                "Call alone (c=1, average)",
                column(lambda s: ms_figure(s.result.probe.average if s.result.probe else None)),
            ),
            row("Wait bound, min(c, slots) / latency", bound_column(lambda b: _bound(b.wait))),
            row("CPU bound, CPUs / CPU s per call", bound_column(lambda b: _bound(b.cpu))),
            row("Bound that binds", bound_column(_binding)),
            row(
                "**Efficiency**, OK req/s / bound",
                bound_column(lambda b: Figure(100 * b.efficiency, f"**{b.efficiency:.0%}**", unit="%")),
            ),
        ]
    meanings = flag_notes(run.thresholds)
    notes = [f"- {meanings[flag]}" for flag in meanings if any(flag in s.flags for s in measured)]
    if any(s.percentile(p) is None for s in measured for p in percentiles):
        notes.append(f"- {TOO_FEW_NOTE}")
    failures = [
        f"- {name}: {s.result.record.status}: {s.result.record.reason}" for name, s in summaries.items() if s.failed
    ]
    if notes or failures:
        lines += ["", *notes, *failures]
    return lines


def reading(run: StudyRun, levels: Levels) -> list[str]:
    """A short, factual reading of one scenario: who wins where, and whether the server was CPU-bound."""
    lines = []
    tie, cpus = run.thresholds.tie, run.meta.server_cpus
    for level in sorted(levels):
        ranked = sorted(((s.ok_rps, name) for name, s in levels[level].items() if not s.failed), reverse=True)
        if not ranked:
            continue
        best_rps = ranked[0][0]
        leaders = [name for rps, name in ranked if rps >= best_rps * (1 - tie)]
        if len(leaders) == 1:
            runner_up = f", {ranked[1][1]} next at {rate(ranked[1][0])}" if len(ranked) > 1 else ""
            lines.append(f"- c={level}: **{leaders[0]}** serves the most, {rate(best_rps)} OK req/s{runner_up}.")
        else:
            lines.append(
                f"- c={level}: {', '.join(leaders)} within {tie:.0%} of each other, a tie "
                f"(highest {rate(best_rps)} OK req/s)."
            )
    top = max(levels)
    bound = []
    for name, summary in levels[top].items():
        if summary.failed or not summary.sampled:
            continue
        busy = summary.cpu_average / 100 / cpus >= run.settings["cpu_bound_share"]
        kind = "CPU-bound" if busy else "not CPU-bound"
        bound.append(f"{name} {summary.cpu_average:.0f}% ({kind})")
    if bound:
        lines.append(f"- Server CPU at c={top} (100% = one core, {cpus} given): " + "; ".join(bound) + ".")
    limits = [
        f"{name} {b.binding}-bound at {_bound(b.bound)}, {b.efficiency:.0%} of it"
        + (
            " (its CPU was busy only that share of the time)"
            if b.binding == "CPU" and b.efficiency < run.settings["cpu_bound_share"]
            else ""
        )
        for name, summary in levels[top].items()
        if (b := summary.bounds) is not None
    ]
    if limits:
        lines.append(f"- What limits each stack at c={top}: " + "; ".join(limits) + ".")
    return lines


def chart(scenario: str, levels: Levels, servers: list[str], title: str) -> bytes:
    """OK requests/sec and p99 latency against concurrency, one line per server variant, as PNG."""
    points = [
        {"server": name, "level": level, "rate": found.ok_rps, "p99": None if p99 is None else p99 * 1000}
        for name in servers
        for level in sorted(levels)
        if (found := levels[level].get(name)) and not found.failed
        for p99 in [found.percentile(99)]
    ]
    level = Axis("level", "concurrency")
    rates = lines(points, level, Axis("rate", "OK requests/sec"), "server", title=f"{scenario}: OK requests/sec")
    shown = [point for point in points if point["p99"] is not None]
    p99 = lines(shown, level, Axis("p99", "p99 (ms)"), "server", title=f"{scenario}: p99 latency (pooled)")
    return png(side_by_side(rates, p99), title)
