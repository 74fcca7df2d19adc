"""A study told from its comparisons in rounds: its files, its section of results/README.md, its answer and its
rows of the decision table, each comparison told by harness.studies.comparing. Report-side: reads only the run's
files."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from harness.analysis.decision import Decision
from harness.analysis.judging import Judged, judged_comparisons, pick_over, selection_of
from harness.method.verdicts import Outcome
from harness.render.summaries import chart_title
from harness.render.table import Block, markdown, page_files
from harness.render.vega import forest_layers, grid, nothing, png
from harness.render.views import comparison_view
from harness.render.wording import ratio_text
from harness.results.records import StudyRun, comparison_files
from harness.studies.base import StudyReport
from harness.studies.comparing import candidates, control_doubt, decision, pick, sentence
from harness.studies.comparison_tables import comparison_table, floors_table


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
    # cost): the comparison's decision row with its lead (Decision.lead) and whatever else that answer measures by.
    leads: Mapping[str, Callable[[Judged, Decision], Decision]] = field(default_factory=dict)

    def question(self, judged: Judged) -> str:
        return self.questions.get(judged.record.topic, self.describe(judged.record.topic))

    def headline(self, judged: Judged) -> str:
        return self.headlines.get(judged.record.topic, self.question(judged))

    def description(self, judged: Judged) -> str:
        return self.describe(judged.record.topic)

    def led(self, judged: Judged, made: Decision | None) -> Decision | None:
        """A comparison's decision row with its answer in the question's words, where the study words one."""
        lead = self.leads.get(judged.record.topic)
        return made if made is None or lead is None else lead(judged, made)


def comparison_lines(run: StudyRun, telling: Telling, judgeds: Sequence[Judged]) -> list[Block]:
    """Every comparison of a run in rounds: its question, what it measures, its table, the reading in a
    sentence."""
    lines: list[Block] = []
    for judged in judgeds:
        lines += [f"### {judged.record.workload}: {telling.question(judged)}", ""]
        lines += [f"{telling.description(judged)}.", "", *comparison_table(run, judged, telling.what), ""]
        lines += floors_table(judged)
        if (note := telling.found.get(judged.record.topic)) and set(note.of) <= set(judged.rates):
            lines += [note.text, ""]
        lines += [f"In a sentence: {sentence(judged)}.", ""]
    return lines


CHARTS_A_ROW = 2  # the verdict chart's comparisons wrap into rows of this many


def verdict_chart(run: StudyRun, judgeds: Sequence[Judged]) -> bytes:
    """Each comparison's forest plot as the page draws it (each label's ratio to the reference with its 95%
    interval, the tie band shaded, the blocks' ratios beside), titled with its workload and reference."""
    charts = [
        forest_layers(
            comparison_view(run, judged, question=""), f"{judged.record.workload}: × {judged.record.reference}"
        )
        for judged in judgeds
    ]
    drawn = grid(charts, CHARTS_A_ROW) if charts else nothing("no comparison measured")
    return png(drawn, chart_title(run, "Ratios to the reference, 95% intervals"))


def blocks_files(run: StudyRun, telling: Telling, more: Sequence[Block] = ()) -> dict[str, bytes]:
    """results/<study>/comparisons.md (each comparison, then `more`), its tables beside it (tables/, CSV and JSON),
    and charts/verdicts.png."""
    judgeds = judged_comparisons(run)
    lines: list[Block] = [
        f"# {telling.study.capitalize()} compared: {run.title}",
        "",
        *comparison_lines(run, telling, judgeds),
        *more,
    ]
    return {**page_files("comparisons.md", lines), "charts/verdicts.png": verdict_chart(run, judgeds)}


def blocks_section(runs: Sequence[StudyRun], telling: Telling, more: Sequence[Block] = ()) -> str:
    """A study's part of results/README.md from its newest run in rounds: how it was measured, the chart, each
    comparison, then `more`."""
    newest = runs[0]
    name = telling.study
    return markdown(
        [
            f"Newest run: {newest.title}; {newest.entry.wall_seconds / 60:.1f} min. Each comparison sets "
            "alternatives against a reference, interleaved as its own note below says (blocks of warm servers "
            "alternated in short slices, or a fresh start for every window in runs before blocks); in the study's "
            "first comparison (and in one whose slices are waves of calls, where the study has such) the reference "
            "also runs as an independent start of itself (the A/A control, which calibrates the run). A ratio is "
            "paired within its block or round; its 95% interval is the t-interval of the log ratios over blocks. "
            "Figures count OK responses only. Raw "
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
    """A comparison's question and pick (certified or not by the selection rule, its lowest bound over any rival),
    then its reading in a sentence ("" where nothing was picked)."""
    chosen = pick(judged)
    if chosen is None:
        return ""
    over = pick_over(judged, *chosen, run.thresholds.tie)
    settled = "" if over is None else f", {ratio_text(over[0])} × {chosen[1]} ({over[1]})"
    found = selection_of(judged, candidates(judged), run.thresholds.tie)
    if found is not None and found.pick == chosen[0] and math.isfinite(found.lowest):
        said = "certified" if found.certified else "not yet certified"
        settled += f"; {said}: at least {found.lowest:.2f} × every rival"
    return f"{telling.question(judged)} **{chosen[0]}**{settled}. {sentence(judged)}."


def blocks_answer(run: StudyRun, telling: Telling) -> str:
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


def blocks_decisions(
    runs: Sequence[StudyRun], telling: Telling, judgeds: Sequence[Judged] | None = None
) -> list[Decision]:
    """A row per comparison of the newest run, where it ran in rounds; each trusted unless an A/A control of the
    run's study separated (one in its first comparison, and one in a comparison of waves where it has such; runs
    before that had one in each: comparing.control_doubt), and carrying how the widest control read: its noise
    floor. judgeds: the newest run's comparisons, where the caller has judged them already."""
    newest = runs[0]
    judgeds = judged_comparisons(newest) if judgeds is None else judgeds
    controls = [control.ratio for each in judgeds if (control := each.control)]
    doubt = control_doubt(controls)
    widest = max(controls, key=lambda each: each.half_width, default=None)
    found = [telling.led(each, decision(telling.headline(each), each, newest, doubt, widest)) for each in judgeds]
    return [each for each in found if each is not None]


def in_blocks(run: StudyRun) -> bool:
    """True when the run measured the study's comparisons in rounds (not its full matrix)."""
    return bool(comparison_files(run.folder))


def with_blocks(
    report: StudyReport, telling: Telling, checked: Callable[[StudyRun], tuple[str, list[Block]]] | None = None
) -> StudyReport:
    """The report, telling a run in rounds by its comparisons and a run of the full matrix as before. `checked`: what
    a run in rounds measured beside its comparisons (its checks), as a sentence for the answer and lines for the
    section; ("", []) where it measured none."""
    matrix_render, matrix_section, matrix_answer = report.render, report.section, report.answer

    def told(run: StudyRun) -> tuple[str, list[Block]]:
        return checked(run) if checked is not None else ("", [])

    def render(run: StudyRun) -> dict[str, bytes]:
        return blocks_files(run, telling) if in_blocks(run) else matrix_render(run)

    def section(runs: Sequence[StudyRun]) -> str:
        if not in_blocks(runs[0]):
            return matrix_section(runs)
        lines = told(runs[0])[1]
        return markdown([blocks_section(runs, telling), *(["", *lines] if lines else [])])

    def answer(runs: Sequence[StudyRun]) -> str:
        if not in_blocks(runs[0]):
            return matrix_answer(runs)
        sentence = told(runs[0])[0]
        return " ".join(part for part in (blocks_answer(runs[0], telling), sentence) if part)

    def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
        return blocks_decisions(runs, telling) if in_blocks(runs[0]) else report.decisions(runs)

    return replace(report, render=render, section=section, answer=answer, decisions=decisions)
