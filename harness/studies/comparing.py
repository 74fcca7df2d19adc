"""How a study tells its comparisons in rounds: a table per comparison (each alternative's rate and its ratio to
the reference, with 95% intervals and the verdict), the sentence its answer carries, and
its row of the decision table. Report-side: reads only the run's files."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TypedDict

from harness.method.moderation import quantile
from harness.method.pooling import Combined, over_runs_text
from harness.method.rounds import BEHIND
from harness.method.selection import Selection, blocks_to_certify
from harness.method.verdicts import (
    BLOCKS,
    HELD,
    UNRESOLVED,
    Interval,
    Method,
    Outcome,
    calibration_text,
    known,
    log_spread,
    more_blocks,
    noise_floor,
    paired_ratios,
    ratio_text,
    separated,
    spread_between_rounds,
    verdict,
)
from harness.plan.matrix import SLOW_SLICE_CALLS
from harness.plan.servers import MINIMAL_SUFFIX
from harness.render.summaries import driver_share, ms_figure, not_ok_mark, rate, shares_figure
from harness.render.table import Block, Figure, Table, interval_figure
from harness.results.records import StudyRun
from harness.studies.base import CERTIFIED, NOT_CERTIFIED, SEPARATED, Decision
from harness.studies.judging import (
    Judged,
    absolute,
    block_mean,
    cost_selection,
    cpu_per_call,
    pick_over,
    selection_of,
    windows_of,
)

MOST_BLOCKS_SAID = 200  # what it would take to close a comparison is said up to this many blocks


def rate_text(found: Interval) -> str:
    high = rate(found.high) if math.isfinite(found.high) else "∞"
    return f"{rate(found.value)} [{rate(found.low)}, {high}]"


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
                "—" if stop is None else f"{unit} {stop.round}, {stop.reason}",
                Figure(100 * (spread := spread_between_rounds(judged.rates.get(label, {}))), f"{spread:.1%}", unit="%"),
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
        f"tie band 1 ± {method.tie:.0%}; an alternative stops after at least {method.min_rounds} {method.unit}s once "
        f"its interval's half-width is at most {method.precision:.0%} (precise) or the interval lies outside the "
        f"band (clear), at {method.max_rounds} {method.unit}s at the most (cap)"
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
    if said := judged.noise.sentence():
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


def blocks_to_close(spread: float, target: float, confidence: float = 0.95, prior_freedom: float = 0.0) -> int:
    """The blocks a ratio whose log ratios scatter by `spread` (sd across blocks) needs for its interval's
    half-width to reach log(1 + target), its spread known on its blocks less one degrees of freedom and the prior's
    (harness.method.moderation); at most MOST_BLOCKS_SAID (then "more")."""
    for blocks in range(2, MOST_BLOCKS_SAID + 1):
        if quantile(confidence, blocks - 1 + prior_freedom) * spread / math.sqrt(blocks) <= math.log1p(target):
            return blocks
    return MOST_BLOCKS_SAID + 1


@dataclass(frozen=True)
class Closing:
    """What it would take to resolve a comparison's widest unresolved label: its spread from block to block so
    far, the blocks that spread needs for a half-width of the tie band, the blocks it has, and the minutes the rest
    would take at its blocks' length."""

    label: str
    spread: float
    needed: int
    has: int
    minutes: float


def closing(judged: Judged) -> Closing | None:
    """The comparison's widest unresolved label (not the A/A twin) and what closing it would take; None where
    none is unresolved."""
    record = judged.record
    open_ = [each for each in judged.outcomes if each.verdict == UNRESOLVED and not each.control]
    if not open_ or not record.orders or record.wall_seconds <= 0:
        return None
    widest = max(open_, key=lambda each: each.ratio.half_width)
    ratios = paired_ratios(judged.rates, widest.alternative, record.reference)
    if len(ratios) < 2:
        return None
    variance, _ = judged.prior.posterior(log_spread(ratios) ** 2, len(ratios) - 1)
    spread = math.sqrt(variance)
    needed = blocks_to_close(spread, record.method.tie, prior_freedom=judged.prior.freedom)
    minutes = record.wall_seconds / len(record.orders) * max(0, needed - len(ratios)) / 60
    return Closing(widest.alternative, spread, needed, len(ratios), minutes)


def to_close(judged: Judged) -> str:
    """What it would take to resolve the comparison's widest unresolved label, in a sentence ("" where none is)."""
    found = closing(judged)
    if found is None:
        return ""
    tie = judged.record.method.tie
    if found.needed > MOST_BLOCKS_SAID:
        return (
            f"Its widest unresolved label, {found.label}, scatters {found.spread:.1%} from block to block: more than "
            f"{MOST_BLOCKS_SAID} blocks would be needed to tell it within ±{tie:.0%}."
        )
    return (
        f"To tell its widest unresolved label, {found.label}, within ±{tie:.0%} at the spread seen so far "
        f"({found.spread:.1%} a block) would take about {found.needed} blocks: {found.needed - found.has} more, "
        f"{found.minutes:.0f} min."
    )


def is_floor(label: str) -> bool:
    """A stack's floor (servers/minimal.py): measured beside its stack, never a pick or one to avoid."""
    return label.endswith(MINIMAL_SUFFIX)


def candidates(judged: Judged) -> list[str]:
    """The labels a team could pick, fastest first by their ratio to the reference (pooled over runs where it
    pools): every one but the floors and the A/A twin."""
    return [label for label in judged.standing if not is_floor(label)]


def pick(judged: Judged) -> tuple[str, str] | None:
    """The fastest label and the runner-up by their own rates."""
    ranked = candidates(judged)
    return (ranked[0], ranked[1]) if len(ranked) >= 2 else None


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


def driver_peak(judged: Judged, run: StudyRun, labels: Sequence[str]) -> float:
    """The busiest the driver was in these labels' slices, as a share of its CPUs (0 where it was not measured)."""
    shares = [
        share
        for label in labels
        for repeat, _ in windows_of(judged, label)
        if (share := driver_share(repeat, run.meta)) is not None
    ]
    return max(shares, default=0.0)


def distrust(
    judged: Judged, run: StudyRun, labels: Sequence[str], by_rate: bool = True, blocks: int | None = None
) -> str:
    """Why a row from this comparison is not to be trusted, whatever its study's control said: a run before blocks,
    a count of blocks of the labels it sets side by side at which validation does not hold on the run's machine
    class (two labels: every block of the runs their pair pools over; `blocks` where the row pooled them otherwise),
    or, where the row reads their rates (by_rate), a driver busy enough to have been the limit in their slices; ""
    where none of these holds."""
    why = []
    if judged.record.method.design != BLOCKS:
        why.append("a run before blocks")
    blocks = blocks_of(judged, labels, by_rate) if blocks is None else blocks
    if not judged.trusted_at(blocks):
        why.append(f"validation does not hold at {blocks} blocks")
    busiest = driver_peak(judged, run, labels)
    if by_rate and busiest > run.thresholds.driver_busy:
        why.append(f"the driver at {busiest:.0%} of its CPU")
    return ", ".join(why)


def blocks_of(judged: Judged, labels: Sequence[str], by_rate: bool = True) -> int:
    """The blocks that carry a row: of two labels read by rate, every block of the runs their pair pools over; else
    the fewest any of the labels ran in this run."""
    pair = judged.over(*labels) if len(labels) == 2 and by_rate else None
    return pair.ratio.rounds if pair else min((len(judged.rates.get(label, {})) for label in labels), default=0)


def control_doubt(controls: Sequence[Interval]) -> str:
    """Why a study's A/A controls leave its rows untrusted, in words: none ran, or one separated ("the A/A control
    separated, 1.27 [1.04, 1.56]"); "" where every one held. A control wider than the rows' differences still holds:
    validation finds the twins' intervals keep their claim from 2 blocks on, and its width is the noise floor each
    row shows."""
    if not controls:
        return "no A/A control ran"
    if apart := next((each for each in controls if separated(each)), None):
        return f"{SEPARATED}, {ratio_text(apart)}"
    return ""


def untrusted(doubt: str, why: str) -> str:
    """Why a row is not trusted: what its study's control left in doubt, then the comparison's own reasons ("" for
    none)."""
    return ", ".join(filter(None, [doubt, why]))


def decision(
    question: str, judged: Judged, run: StudyRun, doubt: str, control: Interval | None = None
) -> Decision | None:
    """The decision row of a comparison, by the selection rule (harness.method.selection): the pick, certified or
    not, its lowest simultaneous bound over every rival, the contenders, what would certify it; beside them the
    runner-up with the pick's ratio over it and over the reference (95% intervals), and the alternative to avoid
    (the slowest, if slower); trusted unless its study's A/A control leaves it in `doubt` (control_doubt) or the
    comparison itself cannot carry the pick over the rival that binds it (`distrust`), with how that control read
    (its noise floor)."""
    labels = candidates(judged)
    tie = judged.record.method.tie
    chosen = selection_of(judged, labels, tie)
    if chosen is None or (binding := chosen.binding) is None:
        return None
    top = chosen.pick
    runner = next(label for label in labels if label != top)
    why = untrusted(doubt, distrust(judged, run, [top, binding.rival]))
    over = pick_over(judged, top, runner, tie)
    reference = judged.record.reference
    against = judged.outcome(top)
    slowest = labels[-1]
    worst = pick_over(judged, slowest, top, tie)
    slower = worst[0] if worst and worst[1] == "slower" else None  # the one to avoid, where it was slower
    closing = certify_text(judged, chosen) or trust_text(judged, run, (top, binding.rival))
    made = Decision(
        stacks=servers_of(judged, labels),
        **with_closing(over_runs(judged, top, runner), closing),
        **choice(chosen),
        question=question,
        workload=judged.record.workload,
        pick=top,
        runner_up=runner,
        over_runner_up="—" if over is None else ratio_text(over[0]),
        over_reference="1 (reference)" if top == reference or against is None else ratio_text(against.ratio),
        avoid=f"{slowest} ({ratio_text(slower)} of {pick_named(chosen)})" if slower and slowest != top else "—",
        study=judged.study,
        run_id=run.run_id,
        machine=run.cpu_model,
        trusted=not why,
        why=why,
        labels=(top, runner),
        calibration="—" if control is None else calibration_text(control, run.thresholds.tie),
        over=None if over is None else over[0],
        worst=slower,
        floor=None if control is None else noise_floor(control),
    )
    # Where the driver set the rates, the contenders are read again by CPU per call. A label clearly behind by rate
    # served below the rate the driver held the others to: its own server held it, and it stays behind, as does one
    # the race left behind the pick (its blocks stopped there).
    busiest = driver_peak(judged, run, chosen.contenders)
    ahead = [label for label in chosen.contenders if not left_behind(judged, label)]
    efficient = cost_selection(judged, ahead, tie) if busiest > run.thresholds.driver_busy else None
    if efficient is None or efficient.binding is None:
        return made
    said = f"the driver at {busiest:.0%} of its CPU set the rates"
    return by_cost(made, judged, run, efficient, ahead, doubt, said)


def pick_named(chosen: Selection) -> str:
    """The pick as the row's avoid column names it: "the pick" where certified, else the one leading so far, which
    the row does not yet pick ("sync-w10, leading")."""
    return "the pick" if chosen.certified else f"{chosen.pick}, leading"


def left_behind(judged: Judged, label: str) -> bool:
    """Whether the race stopped this label's blocks as clearly behind its row's pick (harness.method.rounds)."""
    stop = judged.record.stopped.get(label)
    return stop is not None and stop.reason == BEHIND


def by_cost(
    made: Decision,
    judged: Judged,
    run: StudyRun,
    chosen: Selection,
    ahead: Sequence[str],
    doubt: str,
    why: str,
) -> Decision:
    """A decision row read again by the server's CPU per call among its contenders by rate that the race did not
    leave behind (`ahead`; `chosen`, by judging.cost_selection over them), for a comparison whose rates its driver
    set (`why`): the pick serves the most calls per server CPU second, or within δ of the most; beside it the
    runner-up (the next cheapest) and the costliest to avoid, each paired by block in the newest run; the one to
    avoid by rate stays where none is."""
    costs = {label: found for label in ahead if (found := cpu_per_call(judged, label))}
    labels = sorted(costs, key=lambda each: block_mean(costs[each]))  # the cheapest a call first
    top, binding = chosen.pick, chosen.binding
    assert binding is not None
    runner = next(label for label in labels if label != top)
    pooled = judged.cost_over(top, runner)  # the pick's calls per CPU second over the runner-up's, over runs
    over = None if pooled is None else pooled.ratio
    costliest = labels[-1]
    against_costliest = judged.cost_over(costliest, top) if costliest != top else None
    worst = None if against_costliest is None else against_costliest.ratio
    slower = worst if worst is not None and verdict(worst, judged.record.method.tie) == "slower" else None
    against = judged.outcome(top)
    untrust = untrusted(doubt, distrust(judged, run, [top, binding.rival], by_rate=False))
    return replace(
        made,
        stacks=servers_of(judged, labels),
        **with_closing(pooled_runs(pooled), certify_text(judged, chosen)),
        **choice(chosen),
        pick=top,
        runner_up=runner,
        over_runner_up="—" if over is None else ratio_text(over),
        over_reference="1 (reference)"
        if top == judged.record.reference or against is None
        else ratio_text(against.ratio),
        avoid=f"{costliest} ({ratio_text(slower)} of {pick_named(chosen)})" if slower else made.avoid,
        trusted=not untrust,
        why=untrust,
        labels=(),
        over=over,
        worst=slower or made.worst,
        measure=BY_COST,
        measured_why=why,
    )


BY_COST = "calls per server CPU second"  # what a row measures where its driver set the rates


class Choice(TypedDict):
    """A selection as the Decision holds it."""

    verdict: str
    certified: bool
    lowest: float
    binding: str
    contenders: tuple[str, ...]
    delta: float
    apart: float


def choice(chosen: Selection) -> Choice:
    """A selection's reading for its decision row: certified or not, its lowest bound and the rival that binds it,
    the contenders, δ, and how far the contenders lie from the pick by their estimates (the pick's largest ratio
    over one, less 1)."""
    binding = chosen.binding
    ratios = [bound.ratio for rival in chosen.contenders[1:] if (bound := chosen.bound(rival))]
    return Choice(
        verdict=CERTIFIED if chosen.certified else NOT_CERTIFIED,
        certified=chosen.certified,
        lowest=chosen.lowest,
        binding="" if binding is None else binding.rival,
        contenders=chosen.contenders,
        delta=chosen.delta,
        apart=max((ratio - 1 for ratio in ratios if math.isfinite(ratio)), default=0.0),
    )


def certify_text(judged: Judged, chosen: Selection, paired: Sequence[str] = ()) -> str:
    """What would certify an open pick: about how many more blocks of its contenders, at the spread each rival's
    difference shows (harness.method.selection.blocks_to_certify), as runs of its study (each giving the pair the
    blocks this run did) and minutes of its blocks; "" where it is certified. paired: the labels of the pick and its
    rival in the comparison, where the selection names them otherwise ("ten threads")."""
    if chosen.certified:
        return ""
    more = blocks_to_certify(chosen)
    if more is None:
        return "a block of every contender, for an interval of each"
    binding = chosen.binding
    pair = tuple(paired) or ((chosen.pick, binding.rival) if binding else ())
    return more_text(judged, max(1, more), pair)


def more_text(judged: Judged, blocks: int, pair: Sequence[str]) -> str:
    """So many more blocks of a pair, as runs of its study (each giving the pair the blocks this run did) and the
    wall-clock minutes of those runs: "about 5 more blocks: 3 more runs, about 85 min"."""
    per_run = len(paired_ratios(judged.rates, *pair)) if len(pair) == 2 else 0
    runs = math.ceil(blocks / max(1, per_run))
    minutes = runs * judged.run_seconds / 60
    took = f", about {minutes:.0f} min" if minutes >= 0.5 else ""
    return f"about {blocks} more block{'s' if blocks != 1 else ''}: {runs} more run{'s' if runs != 1 else ''}{took}"


def trust_text(judged: Judged, run: StudyRun, pair: Sequence[str]) -> str:
    """What would give a row the evidence `distrust` finds it lacks: a run of its study in blocks, about as long as
    this run took, where it was made before blocks; else the blocks it lacks of the pair it sets side by side; ""
    where it lacks neither."""
    if judged.record.method.design != BLOCKS:
        return f"1 run in blocks (about {run.info.get('wall_seconds', 0.0) / 60:.0f} min, as this run took)"
    blocks, least = blocks_of(judged, pair), judged.least_trusted
    if least is None:
        return "a validation that holds on this machine class (`python -m harness validate`)"
    return more_text(judged, least - blocks, pair) if blocks < least else ""


def servers_of(judged: Judged, labels: Sequence[str]) -> tuple[str, ...]:
    """The servers these labels ran (their cells'), for the page's stack filter: a label may be an interpreter, a
    way of connecting or a call shape."""
    return tuple(dict.fromkeys(judged.cells[label].record.server for label in labels if label in judged.cells))


class OverRuns(TypedDict):
    """A decision row's pick over its runner-up across runs, as the Decision holds it."""

    held: str
    closing: str
    runs: int
    days: int


ALONE = OverRuns(held="", closing="", runs=1, days=1)  # a row whose pick and runner-up were not paired by block


def over_runs(judged: Judged, first: str, second: str) -> OverRuns:
    """The row's pick over its runner-up across runs: what it pools over (held_text), what would close it where
    it is open (close_text), and over how many runs and days (1 and 1: the newest run alone)."""
    pooled = judged.over(first, second)
    return OverRuns(
        held=held_text(judged, first, second),
        closing=close_text(judged, first, second),
        runs=pooled.runs if pooled else 1,
        days=pooled.days if pooled else 1,
    )


def pooled_runs(found: Combined | None) -> OverRuns:
    """A row's evidence over the runs its pick and runner-up pool (`ALONE` where they pool with none)."""
    if found is None or found.runs < 2:
        return ALONE
    return OverRuns(held=over_runs_text(found), closing="", runs=found.runs, days=found.days)


def with_closing(found: OverRuns, closing: str) -> OverRuns:
    """A row's evidence over runs with what would close it said otherwise (what would certify its pick)."""
    return OverRuns(held=found["held"], closing=closing, runs=found["runs"], days=found["days"])


def held_text(judged: Judged, first: str, second: str) -> str:
    """Where a row pools over runs: over how many on how many days, and the newest run's own reading beside it
    ("over 3 runs on 2 days; this run alone: 1.02 [0.87, 1.19], unresolved"); "" where it pools with none."""
    found = judged.over(first, second)
    alone = judged.alone(first, second)
    if found is None or found.runs < 2 or alone is None:
        return ""
    return f"{over_runs_text(found)}; this run alone: {ratio_text(alone)}, {verdict(alone, judged.record.method.tie)}"


MOST_RUNS_SAID = 20  # what would close a row is said up to this many runs


def close_text(judged: Judged, first: str, second: str) -> str:
    """What would close an open row (first over second, unresolved): about how many more blocks, at the spread its
    pooled interval shows, would bring its interval clear of the tie band's edge or inside it, in runs of its study
    (each giving the pair the blocks this run did) and minutes of its blocks; "" where it is resolved or has no
    interval."""
    found = judged.over(first, second)
    if found is None or verdict(found.ratio, judged.record.method.tie) != UNRESOLVED:
        return ""
    target = abs(abs(math.log(found.ratio.value)) - math.log1p(judged.record.method.tie))
    if target <= 0 or not math.isfinite(found.ratio.half_width):
        return f"more than {MOST_RUNS_SAID} runs: its ratio sits on the band's edge"
    needed = more_blocks(found.ratio, target)
    runs = math.ceil(needed / max(1, len(paired_ratios(judged.rates, first, second))))
    if runs > MOST_RUNS_SAID:
        return f"more than {MOST_RUNS_SAID} runs: its ratio sits near the band's edge"
    return more_text(judged, needed, (first, second))


def know_text(judged: Judged, first: str, second: str) -> str:
    """What would know an estimate (first over second, whatever its verdict) to within the tie band: about how many
    more blocks, at the spread its pooled interval shows, would bring its half-width to the band's; "" where it is
    known so well or has no interval."""
    found = judged.over(first, second)
    tie = judged.record.method.tie
    if found is None or not math.isfinite(found.ratio.half_width) or known(found.ratio, tie):
        return ""
    return more_text(judged, more_blocks(found.ratio, math.log1p(tie)), (first, second))


def sentence(judged: Judged) -> str:
    """A comparison in a sentence: the order with each ratio to the reference, its interval and verdict."""
    reference = judged.record.reference
    parts = [
        f"{outcome.alternative} {ratio_text(outcome.ratio)} ({outcome.verdict})"
        for outcome in sorted(judged.outcomes, key=lambda each: -each.ratio.value)
        if not outcome.control
    ]
    control = judged.control
    checked = "" if control is None else f"; the A/A control {ratio_text(control.ratio)} ({control.verdict})"
    return f"{judged.record.workload}, × {reference} [95% CI]: " + ", ".join(parts) + checked
