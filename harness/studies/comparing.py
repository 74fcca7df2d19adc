"""How a study tells its comparisons in rounds: the decision rule that makes a comparison's row of the decision
table, whether to trust it, and the sentence its answer carries; the tables are in comparison_tables, what would
close a row in closing. Report-side: reads only the run's files."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TypedDict

from harness.analysis.decision import SEPARATED, Decision, choice
from harness.analysis.judging import (
    Judged,
    block_mean,
    cost_selection,
    cpu_per_call,
    pick_over,
    selection_of,
    windows_of,
)
from harness.method.contest import BEHIND
from harness.method.pooling import Combined
from harness.method.selection import Selection, blocks_to_certify
from harness.method.verdicts import (
    BLOCKS,
    UNRESOLVED,
    Interval,
    known,
    more_blocks,
    paired_ratios,
    separated,
    verdict,
)
from harness.plan.servers import is_floor
from harness.render.summaries import driver_share
from harness.render.wording import over_runs_text, ratio_text
from harness.results.records import StudyRun


def candidates(judged: Judged) -> list[str]:
    """The labels a team could pick, fastest first by their ratio to the reference (pooled over runs where it
    pools): every one but the floors and the A/A twin."""
    return [label for label in judged.standing if not is_floor(label)]


def pick(judged: Judged) -> tuple[str, str] | None:
    """The fastest label and the runner-up by their own rates."""
    ranked = candidates(judged)
    return (ranked[0], ranked[1]) if len(ranked) >= 2 else None


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
    return pair.ratio.blocks if pair else min((len(judged.rates.get(label, {})) for label in labels), default=0)


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
        avoid=f"{slowest} ({ratio_text(slower)} of {pick_named(chosen)})" if slower and slowest != top else "—",
        avoided=slowest if slower and slowest != top else "",
        study=judged.study,
        run_id=run.run_id,
        machine=run.cpu_model,
        trusted=not why,
        why=why,
        labels=(top, runner),
        over=None if over is None else over[0],
        worst=slower,
        control=control,
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
    """Whether the race stopped this label's blocks as clearly behind its row's pick (harness.method.contest)."""
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
    untrust = untrusted(doubt, distrust(judged, run, [top, binding.rival], by_rate=False))
    return replace(
        made,
        stacks=servers_of(judged, labels),
        **with_closing(pooled_runs(pooled), certify_text(judged, chosen)),
        **choice(chosen),
        pick=top,
        runner_up=runner,
        avoid=f"{costliest} ({ratio_text(slower)} of {pick_named(chosen)})" if slower else made.avoid,
        avoided=costliest if slower else made.avoided,
        trusted=not untrust,
        why=untrust,
        labels=(),
        over=over,
        worst=slower or made.worst,
        measure=BY_COST,
        measured_why=why,
    )


BY_COST = "calls per server CPU second"  # what a row measures where its driver set the rates


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
        return f"1 run in blocks (about {run.entry.wall_seconds / 60:.0f} min, as this run took)"
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
    return combined_close_text(judged, judged.over(first, second), (first, second))


def combined_close_text(judged: Judged, found: Combined | None, pair: tuple[str, str]) -> str:
    """What would close an open row whose figure is `found` (a pair's ratio pooled over runs, by rate or by CPU per
    call), as close_text says it; "" where it is resolved or has no interval."""
    if found is None or verdict(found.ratio, judged.record.method.tie) != UNRESOLVED:
        return ""
    target = abs(abs(math.log(found.ratio.value)) - math.log1p(judged.record.method.tie))
    minutes = f" (over {MOST_RUNS_SAID * judged.run_seconds / 60:.0f} min)" if judged.run_seconds else ""
    most = f"more than {MOST_RUNS_SAID} runs{minutes}"
    if target <= 0 or not math.isfinite(found.ratio.half_width):
        return f"{most}: its ratio sits on the band's edge"
    needed = more_blocks(found.ratio, target)
    runs = math.ceil(needed / max(1, len(paired_ratios(judged.rates, *pair))))
    return f"{most}: its ratio sits near the band's edge" if runs > MOST_RUNS_SAID else more_text(judged, needed, pair)


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
