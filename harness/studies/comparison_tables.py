"""A comparison's tables: each label's rate and its ratio to the reference with 95% intervals, the verdict and
this run's own reading, latency, blocks and CPU; how the comparison was measured; each server against its floor.
Report-side: reads only the run's files."""

from __future__ import annotations

import statistics
from dataclasses import replace

from harness.analysis.closing import to_close
from harness.analysis.judging import (
    Judged,
    absolute,
    pick_over,
    windows_of,
)
from harness.method.verdicts import BLOCKS, HELD, Interval, Method, Outcome, separated, spread_between_blocks
from harness.plan.matrix import SLOW_SLICE_CALLS
from harness.plan.servers import MINIMAL_SUFFIX
from harness.render.summaries import driver_share, ms_figure, not_ok_mark, shares_figure
from harness.render.table import Block, Figure, Table, interval_figure
from harness.render.wording import noise_text, rate_text, ratio_text
from harness.results.records import StudyRun


def comparison_table(run: StudyRun, judged: Judged, what: str = "alternative") -> list[Block]:
    """One row per label: its OK calls/s (geometric mean over its blocks, 95% interval), its ratio to the
    reference (paired by block; over the runs it pools with, where it pools) with the verdict, and this run's own
    reading where that differs, its p50 and p99 latency (every OK call of its slices pooled), how many blocks it ran
    and why it stopped, the server's CPU and the driver's (highest over the slices), and where a latency proxy
    stood between the servers and their backends, its CPU (of a core, lowest to highest over the slices); then how
    it was measured, where its noise lived and what the idle servers beside a slice spent."""
    record = judged.record
    unit = record.method.unit
    labels = [
        "OK calls/s [95% CI]",
        f"× {record.reference} [95% CI]",
        "verdict",
        "this run alone",
        "p50",
        "p99",
        f"{unit}s",
        "stopped",
        f"between-{unit} spread",
        "server CPU",
        "driver CPU",
    ]
    shown = [name for name, _ in judged.ranked] + ([record.control] if record.control else [])
    proxied = any(repeat.proxy_cpu_seconds is not None for label in shown for repeat, _ in windows_of(judged, label))
    if proxied:  # a latency proxy stood between the servers and their backends
        labels.append("proxy CPU")
    table = Table(f"comparison {record.workload}", [what, *labels])
    for label in shown:
        own = absolute(judged, label)
        if own is None:
            continue
        outcome: Outcome | None = judged.outcome(label)
        mine = windows_of(judged, label)
        busy = [repeat.resources.average_cpu_percent / 100 for repeat, _ in mine if repeat.resources.sampled]
        drivers = [share for repeat, _ in mine if (share := driver_share(repeat, run.meta)) is not None]
        proxy = [
            repeat.proxy_cpu_seconds / repeat.resources.wall_seconds
            for repeat, _ in mine
            if repeat.proxy_cpu_seconds is not None and repeat.resources.wall_seconds > 0
        ]
        stop = record.stopped.get(label)
        name = f"{label} (A/A control)" if label == record.control else label
        table.add(
            f"**{name}**" if label == record.reference else name,
            [
                interval_figure(own.rate, rate_text(own.rate) + not_ok_mark([r for _, r in mine]), "OK calls/s"),
                Figure(1.0, "1 (reference)", 1.0, 1.0, "×")
                if label == record.reference
                else ratio_figure(outcome.ratio, pooled_text(outcome))
                if outcome
                else Figure(None, "—"),
                "—" if label == record.reference or outcome is None else verdict_cell(outcome),
                ratio_figure(outcome.alone, alone_text(outcome)) if outcome and outcome.alone else Figure(None, "—"),
                ms_figure(own.p50),
                ms_figure(own.p99),
                Figure(own.blocks, str(own.blocks)),
                "—" if stop is None else f"{unit} {stop.block}, {stop.reason}",
                Figure(100 * (spread := spread_between_blocks(judged.rates.get(label, {}))), f"{spread:.1%}", unit="%"),
                shares_figure(busy) if busy else Figure(None, "not sampled"),
                Figure(100 * max(drivers), f"{max(drivers):.0%}", unit="% of a core") if drivers else Figure(None, "—"),
                *([shares_figure(proxy)] if proxied else []),
            ],
        )
    return [table, "", *measured_how(judged)]


def verdict_cell(outcome: Outcome) -> str:
    """A label's verdict as its table shows it; an A/A control that separated says what that means beside it,
    on every page its comparison appears (a run made aside too)."""
    if outcome.control and separated(outcome.alone or outcome.ratio):
        return (
            f"**{outcome.verdict}: the A/A control separated**, so this run's ratios of its study are not to be trusted"
        )
    return f"**{outcome.verdict}**"


def ratio_figure(ratio: Interval, text: str) -> Figure:
    """A ratio with its interval as a table's figure, `text` as its page shows it."""
    return interval_figure(ratio, text, "×")


def pooled_text(outcome: Outcome) -> str:
    """An outcome's ratio with its interval, and over how many runs where it pools: "0.97 [0.93, 1.01] (3 runs)"."""
    return ratio_text(outcome.ratio) + (f" ({outcome.runs} runs)" if outcome.runs > 1 else "")


def alone_text(outcome: Outcome) -> str:
    """The run's own reading of a pooled outcome ("1.02 [0.87, 1.19], unresolved"); "—" where it pools with none."""
    return f"{ratio_text(outcome.alone)}, {outcome.alone_verdict}" if outcome.alone else "—"


def slices_text(method: Method) -> str:
    """What a block's slices were, in a phrase."""
    if not method.mirrored:
        return (
            "one slice per label in a shuffled order (a slow workload: each slice one wave of calls per client and at "
            f"least {SLOW_SLICE_CALLS} calls, every call it starts ending inside it)"
        )
    plural = "s" if method.cycles > 1 else ""
    return (
        f"{method.cycles} mirrored cycle{plural} of slices of about {method.slice_seconds:g} s (every label once in a "
        "shuffled order, then in reverse)"
    )


def measured_how(judged: Judged) -> list[str]:
    """How a comparison was measured (its design, seed, blocks, stopping rule), where its noise lived, what a
    block's starts, warm-ups and slices cost, and what idle servers spent beside a slice."""
    record, method = judged.record, judged.record.method
    stopping = (
        f"tie band 1 ± {method.tie:.0%}; an alternative stops after at least {method.min_blocks} {method.unit}s once "
        f"its interval's half-width is at most {method.precision:.0%} (precise) or the interval lies outside the "
        f"band (clear), at {method.max_blocks} {method.unit}s at the most (cap)"
    )
    if method.design != BLOCKS:
        return [
            f"Seed {record.seed}; {len(record.orders)} rounds in {record.wall_seconds / 60:.1f} min; {stopping}. Each "
            "window on a fresh server start after a warm-up; the between-round spread is the standard deviation of a "
            "label's log rate across rounds.",
        ]
    lines = [
        f"Seed {record.seed}; {len(record.orders)} blocks in {record.wall_seconds / 60:.1f} min; {stopping}. Each "
        "block starts every label's server afresh side by side on the server's CPUs, warms each label up (thrown "
        f"away), then measures {slices_text(method)}, "
        + (
            "each run by one loadgen held for the block on connections it keeps"
            if method.slicer == HELD
            else "each by a driver process of its own"
        )
        + "; a label's rate in a "
        "block is the geometric mean of its slices', its ratio is paired with the reference's in the same block, "
        "and the interval is the t-interval over blocks. The between-block spread is the standard deviation of a "
        "label's log rate across blocks.",
    ]
    if said := noise_text(judged.noise):
        lines.append(said)
    if record.costs:
        costs = record.costs
        lines.append(
            f"Costs: a server start {costs['start']:.1f} s, a label's warm-up {costs['warm']:.1f} s, a slice's "
            f"overhead beyond its load {costs['slice_overhead']:.2f} s."
        )
    idle = [
        100 * repeat.neighbour_cpu_seconds / repeat.resources.wall_seconds
        for cell in judged.cells.values()
        for repeat in cell.record.repeats
        if repeat.neighbour_cpu_seconds is not None and repeat.resources.wall_seconds > 0
    ]
    if idle:
        lines.append(
            f"The idle servers beside a slice spent {statistics.fmean(idle):.1f}% of a core on average "
            f"({max(idle):.1f}% at most)."
        )
    if said := to_close(judged):
        lines.append(said)
    return [" ".join(lines)]


def floors_table(judged: Judged) -> list[Block]:
    """Each of our servers against its floor (the stack's own hello example), paired by block: a tie says our code
    costs nothing the stack does not; a slower one, what it costs."""
    tie = judged.record.method.tie
    columns = ["ours", "its floor", "ours × its floor [95% CI]", "verdict", "what ours costs a call"]
    table = Table(f"floors {judged.record.workload}", columns)
    for label in [judged.record.reference, *judged.record.alternatives]:
        floor = label + MINIMAL_SUFFIX
        if floor in judged.rates and (found := pick_over(judged, label, floor, tie)):
            table.add(
                label, [floor, ratio_figure(found[0], ratio_text(found[0])), f"**{found[1]}**", ours_cost(found[0])]
            )
    if not table.rows:
        return []
    said = (
        "Each of our servers against its floor (the stack's own hello example, servers/minimal.py), paired by block. "
        "What ours adds to a call, and what it buys: the scenario's hello (reading `work`, `delay_ms` and "
        "`reply_bytes`), domain errors mapped to statuses with one log line, and on the event loops a call limit and "
        "count (the drain on SIGTERM, RESOURCE_EXHAUSTED past `--max-concurrent-rpcs`); the health and reflection "
        "services cost a call nothing (on grpc.aio, where every registered method costs every call, ours registers "
        "none and serves them all by generic handlers). A floor serves with its stack's defaults (connectrpc's gzip "
        "among them). "
        "What ours costs is the share of its floor's rate it gives up, read from the interval: at most its low end."
    )
    return [said, "", table, ""]


def ours_cost(found: Interval) -> Figure:
    """The share of its floor's rate our server gives up, as far as the interval tells it (its number: the share at
    the ratio's estimate, in %, with the interval's)."""
    given = Figure(100 * (1 - found.value), "", 100 * max(0.0, 1 - found.high), 100 * (1 - found.low), "% of its rate")
    if found.low >= 1:
        return replace(given, text="nothing: ours is faster")
    if found.high < 1:
        return replace(given, text=f"{1 - found.high:.0%} to {1 - found.low:.0%} of the floor's rate")
    return replace(given, text=f"at most {1 - found.low:.0%} of the floor's rate")
