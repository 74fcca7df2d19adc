"""How a study tells its comparisons in rounds: a table per comparison (each alternative's rate and its ratio to
the reference, with 95% intervals and the verdict), a chart with error bars, the sentence its answer carries, and
its row of the decision table. Report-side: reads only the run's files."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from harness.method.verdicts import (
    BLOCKS,
    HELD,
    TIE,
    UNRESOLVED,
    Interval,
    Method,
    Outcome,
    calibration_text,
    interval,
    log_spread,
    noise_floor,
    paired_ratios,
    ratio_text,
    separated,
    spread_between_rounds,
    t_half_width,
    unpaired_interval,
    verdict,
)
from harness.plan.matrix import SLOW_SLICE_CALLS
from harness.plan.servers import MINIMAL_SUFFIX
from harness.render.summaries import chart_title, driver_share, figure, header, ms, not_ok_mark, png, rate, row, style
from harness.results.records import CellResult, StudyRun, comparison_files, study_dir
from harness.studies.base import SEPARATED, Decision, StudyReport
from harness.studies.reading import Judged, judged_comparisons, pick_over, pooled_latency, windows_of

SPREAD_FOR_LOG = 20  # a panel whose ratios span more than this factor gets a log scale
PANELS_A_ROW = 4  # the verdict chart's panels wrap into rows of this many
MOST_BLOCKS_SAID = 200  # what it would take to close a comparison is said up to this many blocks


def rate_text(found: Interval) -> str:
    high = rate(found.high) if math.isfinite(found.high) else "∞"
    return f"{rate(found.value)} [{rate(found.low)}, {high}]"


def comparison_table(run: StudyRun, judged: Judged, what: str = "alternative") -> list[str]:
    """One row per label: its OK calls/s (geometric mean over its blocks, 95% interval), its ratio to the
    reference (paired by block) with the verdict, its p50 and p99 latency (every OK call of its slices pooled), how
    many blocks it ran and why it stopped, the server's CPU and the driver's (highest over the slices); then how it
    was measured, where its noise lived and what the idle servers beside a slice spent."""
    record = judged.record
    unit = record.method.unit
    labels = [
        "OK calls/s [95% CI]",
        f"× {record.reference} [95% CI]",
        "verdict",
        "p50",
        "p99",
        f"{unit}s",
        "stopped",
        f"between-{unit} spread",
        "server CPU",
        "driver CPU",
    ]
    lines = header(labels, what)
    for label in [name for name, _ in judged.ranked] + ([record.control] if record.control else []):
        found = judged.rates.get(label)
        if not found:
            continue
        own = interval(list(found.values()))
        outcome: Outcome | None = judged.outcome(label)
        mine = windows_of(judged, label)
        busy = [repeat.resources.average_cpu_percent / 100 for repeat, _ in mine if repeat.resources.sampled]
        drivers = [share for repeat, _ in mine if (share := driver_share(repeat, run.meta)) is not None]
        stop = record.stopped.get(label)
        name = f"{label} (A/A control)" if label == record.control else label
        lines.append(
            row(
                f"**{name}**" if label == record.reference else name,
                [
                    rate_text(own) + not_ok_mark([report for _, report in mine]),
                    "1 (reference)" if label == record.reference else ratio_text(outcome.ratio) if outcome else "—",
                    "—" if label == record.reference or outcome is None else f"**{outcome.verdict}**",
                    ms(pooled_latency(mine, 50)),
                    ms(pooled_latency(mine, 99)),
                    str(len(judged.rates.get(label, {}))),
                    "—" if stop is None else f"{unit} {stop.round}, {stop.reason}",
                    f"{spread_between_rounds(judged.rates.get(label, {})):.1%}",
                    f"{min(busy):.0%}–{max(busy):.0%}" if busy else "not sampled",
                    f"{max(drivers):.0%}" if drivers else "—",
                ],
            )
        )
    return [*lines, "", *measured_how(judged)]


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


def blocks_to_close(spread: float, target: float, confidence: float = 0.95) -> int:
    """The blocks a ratio whose log ratios scatter by `spread` (sd across blocks) needs for its interval's
    half-width to reach log(1 + target); at most MOST_BLOCKS_SAID (then "more")."""
    for blocks in range(2, MOST_BLOCKS_SAID + 1):
        if t_half_width(spread, blocks, confidence) <= math.log1p(target):
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
    spread = log_spread(ratios)
    needed = blocks_to_close(spread, record.method.tie)
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


def verdict_chart(run: StudyRun, judgeds: Sequence[Judged]) -> bytes:
    """Each comparison's ratios to its reference with their 95% intervals as error bars, on a log scale, the tie
    band shaded; every label told apart by colour and marker."""
    columns = min(len(judgeds), PANELS_A_ROW)
    rows = math.ceil(len(judgeds) / columns)
    drawing, axes = figure(rows, columns, figsize=(5.2 * columns, 4.6 * rows), squeeze=False)
    panels = [panel for line in axes for panel in line]
    for unused in panels[len(judgeds) :]:
        unused.set_visible(False)
    labels = sorted({outcome.alternative for judged in judgeds for outcome in judged.outcomes})  # one style each
    for panel, judged in zip(panels, judgeds, strict=False):
        outcomes = sorted(judged.outcomes, key=lambda each: (each.control, -each.ratio.value))
        tie = judged.record.method.tie
        panel.axhspan(1 - tie, 1 + tie, color="0.85", label=f"tie band 1 ± {tie:.0%}")
        panel.axhline(1.0, color="0.4", linewidth=0.8)
        for index, outcome in enumerate(outcomes):
            high = outcome.ratio.high if math.isfinite(outcome.ratio.high) else outcome.ratio.value
            panel.errorbar(
                [index],
                [outcome.ratio.value],
                yerr=[[outcome.ratio.value - outcome.ratio.low], [high - outcome.ratio.value]],
                linestyle="none",
                capsize=4,
                **style(labels.index(outcome.alternative)),
                label=outcome.alternative + (" (A/A)" if outcome.control else ""),
            )
        panel.set_xticks(range(len(outcomes)), [each.alternative for each in outcomes], rotation=30, fontsize=7)
        values = [each.ratio.low for each in outcomes if each.ratio.low > 0] + [each.ratio.value for each in outcomes]
        if values and max(values) / min(values) > SPREAD_FOR_LOG:
            panel.set_yscale("log")
        panel.set(title=f"{judged.record.workload}: × {judged.record.reference}", ylabel="OK calls/s ratio, 95% CI")
        panel.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=6)
    return png(drawing, chart_title(run, "Ratios to the reference, 95% intervals"))


def is_floor(label: str) -> bool:
    """A stack's floor (servers/minimal.py): measured beside its stack, never a pick or one to avoid."""
    return label.endswith(MINIMAL_SUFFIX)


def candidates(judged: Judged) -> list[str]:
    """The labels a team could pick, fastest first: every one but the floors and the A/A twin."""
    return [label for label, _ in judged.ranked if not is_floor(label)]


def pick(judged: Judged) -> tuple[str, str] | None:
    """The fastest label and the runner-up by their own rates."""
    ranked = candidates(judged)
    return (ranked[0], ranked[1]) if len(ranked) >= 2 else None


def floors_table(judged: Judged) -> list[str]:
    """Each of our servers against its floor (the stack's own hello example), paired by block: a tie says our code
    costs nothing the stack does not; a slower one, what it costs."""
    tie = judged.record.method.tie
    lines = []
    for label in [judged.record.reference, *judged.record.alternatives]:
        floor = label + MINIMAL_SUFFIX
        if floor in judged.rates and (found := pick_over(judged, label, floor, tie)):
            lines.append(row(label, [floor, ratio_text(found[0]), f"**{found[1]}**", ours_cost(found[0])]))
    if not lines:
        return []
    heading = header(["its floor", "ours × its floor [95% CI]", "verdict", "what ours costs a call"], "ours")
    said = (
        "Each of our servers against its floor (the stack's own hello example, servers/minimal.py), paired by block. "
        "What ours adds to a call, and what it buys: the scenario's hello (reading `work`, `delay_ms` and "
        "`reply_bytes`), domain errors mapped to statuses with one log line, and on the event loops a call limit and "
        "count (the drain on SIGTERM, RESOURCE_EXHAUSTED past `--max-concurrent-rpcs`); the health and reflection "
        "services cost a call nothing. A floor serves with its stack's defaults (connectrpc's gzip among them). "
        "What ours costs is the share of its floor's rate it gives up, read from the interval: at most its low end."
    )
    return [said, "", *heading, *lines, ""]


def ours_cost(found: Interval) -> str:
    """The share of its floor's rate our server gives up, as far as the interval tells it."""
    if found.low >= 1:
        return "nothing: ours is faster"
    if found.high < 1:
        return f"{1 - found.high:.0%} to {1 - found.low:.0%} of the floor's rate"
    return f"at most {1 - found.low:.0%} of the floor's rate"


LEAST_TRUSTED_BLOCKS = (
    3  # a row from fewer blocks is not trusted: two blocks' t-interval is wide and its spread a guess
)


def distrust(judged: Judged, run: StudyRun, labels: Sequence[str]) -> str:
    """Why a row from this comparison is not to be trusted, whatever its study's control said: a run before blocks,
    fewer than LEAST_TRUSTED_BLOCKS blocks of the labels it sets side by side, or a driver busy enough to have been
    the limit in their slices; "" where none of these holds."""
    why = []
    if judged.record.method.design != BLOCKS:
        why.append("a run before blocks")
    blocks = min((len(judged.rates.get(label, {})) for label in labels), default=0)
    if blocks < LEAST_TRUSTED_BLOCKS:
        why.append(f"only {blocks} blocks")
    limit = run.thresholds.driver_busy
    shares = [
        share
        for label in labels
        for repeat, _ in windows_of(judged, label)
        if (share := driver_share(repeat, run.meta)) is not None
    ]
    if shares and max(shares) > limit:
        why.append(f"the driver at {max(shares):.0%} of its CPU")
    return ", ".join(why)


def untrusted(separated: bool, why: str) -> str:
    """Why a row is not trusted: its study's control separated, then the comparison's own reasons ("" for none)."""
    return ", ".join(filter(None, [SEPARATED if separated else "", why]))


def decision(
    question: str, judged: Judged, run: StudyRun, trusted: bool, control: Interval | None = None
) -> Decision | None:
    """The decision row of a comparison: the pick, the runner-up, the pick's ratios over it and over the
    reference (95% intervals), whether that is a tie, and the alternative to avoid (the slowest, if slower);
    trusted unless the study's A/A control separated or the comparison itself cannot carry it (`distrust`), with
    how that control read (its noise floor)."""
    chosen = pick(judged)
    if chosen is None:
        return None
    top, runner = chosen
    why = untrusted(not trusted, distrust(judged, run, [top, runner]))
    tie = judged.record.method.tie
    over = pick_over(judged, top, runner, tie)
    reference = judged.record.reference
    against = judged.outcome(top)
    slowest = candidates(judged)[-1]
    worst = pick_over(judged, slowest, top, tie)
    slower = worst[0] if worst and worst[1] == "slower" else None  # the one to avoid, where it was slower
    return Decision(
        question=question,
        workload=judged.record.workload,
        pick=top,
        runner_up=runner,
        over_runner_up="—" if over is None else ratio_text(over[0]),
        over_reference="1 (reference)" if top == reference or against is None else ratio_text(against.ratio),
        verdict="—" if over is None else f"tie with {runner}" if over[1] == TIE else over[1],
        avoid=f"{slowest} ({ratio_text(slower)} of the pick)" if slower else "—",
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


# --- a study told from its comparisons ------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """What a profile or a log found, told after a comparison's table where the comparison measured `of`."""

    of: tuple[str, ...]  # the labels it explains
    text: str


@dataclass(frozen=True)
class Telling:
    """How a study tells its comparisons in rounds: the question each decides and what it measures, by its
    topic (the part of its workload's name before the first "/")."""

    study: str
    questions: Mapping[str, str]
    describe: Callable[[str], str]
    what: str = "alternative"  # the heading of the label column
    unpinned: frozenset[str] = frozenset()  # topics whose server may use every CPU, not the one server core
    # The decision table's question, where several topics answer one (their rows merge into one); default: the
    # topic's own question.
    headlines: Mapping[str, str] = field(default_factory=dict)
    # What we found of a stack on a topic, beyond its figures (a profile's reading, with its link), after its table.
    found: Mapping[str, Finding] = field(default_factory=dict)
    # The answer in the question's own words, by topic, where its question is not "which one" (a yes or no, a
    # cost): from the comparison and its decision row (Decision.lead).
    leads: Mapping[str, Callable[[Judged, Decision], str]] = field(default_factory=dict)

    def question(self, judged: Judged) -> str:
        return self.questions.get(judged.record.topic, self.describe(judged.record.topic))

    def headline(self, judged: Judged) -> str:
        return self.headlines.get(judged.record.topic, self.question(judged))

    def description(self, judged: Judged) -> str:
        return self.describe(judged.record.topic)

    def led(self, judged: Judged, made: Decision | None) -> Decision | None:
        """A comparison's decision row with its answer in the question's words, where the study words one."""
        lead = self.leads.get(judged.record.topic)
        return made if made is None or lead is None else replace(made, lead=lead(judged, made))


def comparison_lines(run: StudyRun, telling: Telling, judgeds: Sequence[Judged]) -> list[str]:
    """Every comparison of a run in rounds: its question, what it measures, its table, the reading in a
    sentence."""
    lines: list[str] = []
    for judged in judgeds:
        lines += [f"### {judged.record.workload}: {telling.question(judged)}", ""]
        lines += [f"{telling.description(judged)}.", "", *comparison_table(run, judged, telling.what), ""]
        lines += floors_table(judged)
        if (note := telling.found.get(judged.record.topic)) and set(note.of) <= set(judged.rates):
            lines += [note.text, ""]
        lines += [f"In a sentence: {sentence(judged)}.", ""]
    return lines


def rounds_files(run: StudyRun, telling: Telling, more: Sequence[str] = ()) -> dict[str, bytes]:
    """results/<study>/comparisons.md (each comparison, then `more`) and charts/verdicts.png."""
    judgeds = judged_comparisons(run)
    lines = [
        f"# {telling.study.capitalize()} compared: {run.title}",
        "",
        *comparison_lines(run, telling, judgeds),
        *more,
    ]
    return {"comparisons.md": ("\n".join(lines) + "\n").encode(), "charts/verdicts.png": verdict_chart(run, judgeds)}


def rounds_section(runs: Sequence[StudyRun], telling: Telling, more: Sequence[str] = ()) -> str:
    """A study's part of results/README.md from its newest run in rounds: how it was measured, the chart, each
    comparison, then `more`."""
    newest = runs[0]
    name = telling.study
    return "\n".join(
        [
            f"Newest run: {newest.title}; {newest.info.get('wall_seconds', 0) / 60:.1f} min. Each comparison sets "
            "alternatives against a reference, interleaved as its own note below says (blocks of warm servers "
            "alternated in short slices, or a fresh start for every window in runs before blocks); in the study's "
            "first comparison the reference also runs as an independent start of itself (the A/A control, which "
            "calibrates the run). A ratio is paired within its block or round; its 95% interval is the t-interval "
            "of the log ratios over blocks. Figures count OK responses only. Raw "
            f"reports: [`runs/{newest.run_id}`](runs/{newest.run_id}).",
            "",
            f"![verdicts]({name}/charts/verdicts.png)",
            "",
            f"*Ratios to each comparison's reference with 95% intervals: {newest.title}.*",
            "",
            *comparison_lines(newest, telling, judged_comparisons(newest)),
            *more,
        ]
    )


def answer_opening(run: StudyRun, telling: Telling, judgeds: Sequence[Judged]) -> str:
    """Where and how a run in rounds was measured, as its answer begins."""
    topics = sorted({each.record.topic for each in judgeds} & telling.unpinned)
    pinned = "the server pinned to one core" + (
        f" except in the {', '.join(topics)} comparisons, where it may use every CPU" if topics else ""
    )
    return f"On {run.cpu_model} (run `{run.run_id}`, {pinned}), in interleaved rounds:"


def told(run: StudyRun, telling: Telling, judged: Judged) -> str:
    """A comparison's question and pick, then its reading in a sentence ("" where nothing was picked)."""
    chosen = pick(judged)
    if chosen is None:
        return ""
    over = pick_over(judged, *chosen, run.thresholds.tie)
    settled = "" if over is None else f", {ratio_text(over[0])} × {chosen[1]} ({over[1]})"
    return f"{telling.question(judged)} **{chosen[0]}**{settled}. {sentence(judged)}."


def rounds_answer(run: StudyRun, telling: Telling) -> str:
    """The pick of each comparison of a run in rounds, with the reading in a sentence."""
    judgeds = judged_comparisons(run)
    parts = [answer_opening(run, telling, judgeds), *(told(run, telling, judged) for judged in judgeds)]
    return " ".join(part for part in parts if part)


def across(judgeds: Sequence[Judged]) -> str:
    """Comparisons of one shape (the same labels against the same reference, one per stack, say) told at once:
    each label's lowest and highest ratio to the reference with their intervals, and how many of the comparisons
    gave each verdict."""
    found: dict[str, list[Outcome]] = {}
    for judged in judgeds:
        for outcome in judged.outcomes:
            if not outcome.control:
                found.setdefault(outcome.alternative, []).append(outcome)
    parts = []
    for label, outcomes in found.items():
        ordered = sorted(outcomes, key=lambda each: each.ratio.value)
        span = ratio_text(ordered[0].ratio)
        if len(ordered) > 1:
            span += f" to {ratio_text(ordered[-1].ratio)}"
        verdicts = Counter(each.verdict for each in outcomes)
        said = ", ".join(f"{count} {verdict}" for verdict, count in verdicts.most_common())
        parts.append(f"{label} {span} ({said})")
    return ", ".join(parts)


def rounds_decisions(runs: Sequence[StudyRun], telling: Telling) -> list[Decision]:
    """A row per comparison of the newest run, where it ran in rounds; each trusted unless an A/A control of the
    run's study separated (one control, in its first comparison; runs before that had one in each), and carrying
    how the widest control read: its noise floor."""
    newest = runs[0]
    judgeds = judged_comparisons(newest)
    controls = [control.ratio for each in judgeds if (control := each.control)]
    trusted = bool(controls) and not any(separated(control) for control in controls)
    widest = max(controls, key=lambda each: each.half_width, default=None)
    found = [telling.led(each, decision(telling.headline(each), each, newest, trusted, widest)) for each in judgeds]
    return [each for each in found if each is not None]


def in_rounds(run: StudyRun) -> bool:
    """True when the run measured the study's comparisons in rounds (not its full matrix)."""
    return bool(comparison_files(study_dir(run.run_dir, run.meta, run.study)))


def with_rounds(
    report: StudyReport, telling: Telling, checked: Callable[[StudyRun], tuple[str, list[str]]] | None = None
) -> StudyReport:
    """The report, telling a run in rounds by its comparisons and a run of the full matrix as before. `checked`: what
    a run in rounds measured beside its comparisons (its checks), as a sentence for the answer and lines for the
    section; ("", []) where it measured none."""
    matrix_render, matrix_section, matrix_answer = report.render, report.section, report.answer

    def told(run: StudyRun) -> tuple[str, list[str]]:
        return checked(run) if checked is not None else ("", [])

    def render(run: StudyRun) -> dict[str, bytes]:
        return rounds_files(run, telling) if in_rounds(run) else matrix_render(run)

    def section(runs: Sequence[StudyRun]) -> str:
        if not in_rounds(runs[0]):
            return matrix_section(runs)
        lines = told(runs[0])[1]
        return "\n".join([rounds_section(runs, telling), *(["", *lines] if lines else [])])

    def answer(runs: Sequence[StudyRun]) -> str:
        if not in_rounds(runs[0]):
            return matrix_answer(runs)
        sentence = told(runs[0])[0]
        return " ".join(part for part in (rounds_answer(runs[0], telling), sentence) if part)

    def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
        return rounds_decisions(runs, telling) if in_rounds(runs[0]) else report.decisions(runs)

    return replace(report, render=render, section=section, answer=answer, decisions=decisions)


def _driver(run: StudyRun) -> str:
    """The driver a study's run used (runs before drivers were recorded: ghz, the stacks study's)."""
    return str(run.matrix.get("driver") or "ghz")


def round_ms_per_call(cell: CellResult) -> float | None:
    """The median over a cell's round windows of the server's CPU milliseconds per OK call."""
    costs = sorted(
        repeat.resources.cpu_seconds * 1000 / report.ok
        for repeat, report in zip(cell.record.repeats, cell.reports, strict=True)
        if repeat.role == "round" and repeat.resources.sampled and report.ok
    )
    return costs[len(costs) // 2] if costs else None


def round_calls_per_core(cell: CellResult) -> Interval | None:
    """OK calls per second of one busy server core (OK calls over the server's CPU seconds) over a cell's round
    windows, with its 95% interval; None where no window was sampled."""
    found = [
        report.ok / repeat.resources.cpu_seconds
        for repeat, report in zip(cell.record.repeats, cell.reports, strict=True)
        if repeat.role == "round" and repeat.resources.sampled and repeat.resources.cpu_seconds > 0 and report.ok
    ]
    return interval(found) if found else None


def same_workloads(runs: Sequence[StudyRun]) -> list[str]:
    """Where two studies of one run measured the same cell in rounds (hello on aio-uvloop at c=50, by ghz in
    one and by our driver in the other, say): each study's rate with its interval, and the ratio of the two
    with Welch's interval. Inside the tie band they agree; else the table says they differ, by which driver
    each was measured, and what the server's CPU per call was under each."""
    found: dict[tuple[str, str], list[tuple[StudyRun, list[float], float | None]]] = {}
    for run in runs:
        for judged in judged_comparisons(run):
            for label, cell in judged.cells.items():
                rates = list(judged.rates.get(label, {}).values())
                if len(rates) >= 2:
                    found.setdefault((run.run_id, cell.record.key), []).append((run, rates, round_ms_per_call(cell)))
    shared = {key: each for key, each in found.items() if len({run.study for run, _, _ in each}) >= 2}
    if not shared:
        return []
    lines = [
        "One workload measured by two studies of one run, each in its own rounds: their rates should agree "
        "within the tie band; where they do not, the server's CPU per call under each driver says whether the "
        "server did more work a call or waited.",
        "",
        *header(
            [
                "run",
                "first study: OK calls/s [95% CI]",
                "second study",
                "second × first [95% CI]",
                "verdict",
                "server CPU ms per call: first, second",
            ],
            "cell",
        ),
    ]
    for (run_id, key), ((first, mine, my_cost), (second, theirs, their_cost), *_) in shared.items():
        ratio = unpaired_interval(mine, theirs)
        outcome = verdict(ratio, first.thresholds.tie)
        said = "agree" if outcome == TIE else f"{outcome}: by {_driver(second)} against {_driver(first)}"
        lines.append(
            row(
                key,
                [
                    f"`{run_id}`",
                    f"{first.study} ({_driver(first)}): {rate_text(interval(mine))}",
                    f"{second.study} ({_driver(second)}): {rate_text(interval(theirs))}",
                    ratio_text(ratio),
                    said,
                    ", ".join("—" if cost is None else f"{cost:.3f}" for cost in (my_cost, their_cost)),
                ],
            )
        )
    return [*lines, ""]
