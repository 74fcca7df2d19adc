"""The capacity study's report: capacity at the SLO per stack and scenario, where the SLO gave way and why,
every step of every search, and the closed loop against the open loop."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from harness.analysis.decision import CERTIFIED, NOT_CERTIFIED, Decision, Standing
from harness.method.selection import Difference, blocks_to_certify, select
from harness.method.verdicts import unpaired_interval, welch
from harness.plan.matrix import scenario
from harness.render.summaries import rate
from harness.render.table import Block, markdown, page_files
from harness.render.wording import ratio_text
from harness.results.records import CellRecord, Repeat, StudyRun
from harness.results.run_meta import Target
from harness.studies.base import StudyReport
from harness.studies.capacity import (
    AGREEING,
    DECIDING,
    JITTER_MS,
    KEPT_UP,
    LOW_LOAD_SHARE,
    NAME,
    PRECISION,
    QUESTION,
    SEARCHED,
    STEP_SECONDS,
    WORKERS,
)
from harness.studies.capacity.cells import CapacityCell, by_scenario
from harness.studies.capacity.tables import (
    KNEE_NOTE,
    capacity_table,
    chart,
    convoy_rows,
    convoy_table,
    knee_table,
    over_searches,
    share_of,
    steps_table,
)

TARGET_SCENARIOS = DECIDING
# The values this report judges by, recorded in every run.
SETTINGS = {
    "slo_seconds": {name: slo for name, (slo, _) in SEARCHED.items()},
    "step_calls": None,  # no cap on a step's calls (runs before repeated steps: 2,000)
    "step_seconds": STEP_SECONDS,
    "agreeing": AGREEING,
    "kept_up": KEPT_UP,
    "precision": PRECISION,
    "low_load_share": LOW_LOAD_SHARE,
    "target_share": 0.80,  # capacity at SLO against the saturation throughput, on TARGET_SCENARIOS
    "convoy": 1.10,  # open loop (or jitter) this far above the closed loop: the closed loop was held back
    "wait_bound_share": 0.80,  # capacity this close to the wait bound: the workers, not the core, set it
    "saturated": 0.90,  # server CPU at this share of its cores or more: the knee is the CPU
    "hand_offs": 1.5,  # context switches per call this many times their low-load count: thread hand-offs grew
}


def _steps_text(settings: dict[str, Any]) -> str:
    """How long a step lasted and how many had to agree, as the run recorded it."""
    if settings.get("step_calls"):  # runs before steps were repeated
        return f"each step {settings['step_calls']:,} calls or {settings['step_seconds']:g} s of them, taken once."
    return (
        f"each step at least {settings['step_seconds']:g} s of calls; a rate counts as held, or failed, once "
        f"{settings['agreeing']} steps at it agree, so a capacity is the interval from the highest rate held to the "
        "lowest failed."
    )


def render(run: StudyRun) -> dict[str, bytes]:
    """results/capacity/<scenario>.md with every step (its tables beside it, under tables/), and
    results/capacity/charts/<scenario>.png."""
    files: dict[str, bytes] = {}
    settings = run.settings
    for scenario_name, stacks in by_scenario(run).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        lines: list[Block] = [
            f"# Capacity, {scenario_name}: {run.title}",
            "",
            f"{scenario(scenario_name).description}. Open loop (ghz --async --rps, {WORKERS} workers taking the "
            f"ticks), {_steps_text(settings)} A step of the SLO search holds when no call fails and p99 is at or "
            "under the SLO; a step of the saturation search when the OK calls/s reach "
            f"{settings.get('kept_up', KEPT_UP):.0%} of the offered rate. Percentiles are of each step's OK calls.",
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
        files |= page_files(f"{scenario_name}.md", lines)
        files[f"charts/{scenario_name}.png"] = chart(scenario_name, stacks, run.title.replace("`", ""))
    return files


def section(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    settings = newest.settings
    lines: list[Block] = [
        f"Newest run: {newest.title}; {newest.entry.wall_seconds / 60:.1f} min. Open loop: calls start "
        f"at a fixed rate whether or not earlier ones finished; the search brackets the highest rate with no "
        f"failed call and p99 within the SLO (doubling, then bisection to {settings['precision']:.0%}); "
        f"{_steps_text(settings)} With `--repeats N` the SLO search runs N times a stack (each after the first "
        "from the capacity the first found), and a capacity is then the geometric mean of its searches' brackets' "
        "middles with its 95% interval. The saturation throughput is the highest OK rate any step delivered, at any "
        "latency, from the same search without the SLO. ghz spaces the calls evenly; real "
        "arrivals are burstier, so read each capacity as an upper bound for your traffic. Raw reports: "
        f"[`runs/{newest.run_id}`](runs/{newest.run_id}).",
        "",
    ]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        lines += [f"### {scenario_name}", "", f"![{scenario_name}]({NAME}/charts/{scenario_name}.png)", ""]
        lines += [f"*{scenario_name}: {newest.title}.*", "", *capacity_table(scenario_name, stacks), ""]
        lines += [KNEE_NOTE, "", *knee_table(stacks), ""]
        lines += [f"Every step: [{scenario_name}]({NAME}/{scenario_name}.md).", ""]
    if convoy_rows(newest):
        lines += ["### Closed loop against open loop", "", f"*{newest.title}.*", "", *convoy_table(newest), ""]
    return markdown(lines)


def _convoy_verdict(run: StudyRun) -> str:
    parts = []
    convoy = run.settings["convoy"]
    for name, closed, jittered, capacity, _ in convoy_rows(run):
        lifted = capacity >= closed * convoy or (jittered is not None and jittered >= closed * convoy)
        parts.append(
            f"{name} {rate(closed)} closed, {rate(jittered) if jittered is not None else '—'} with jitter, "
            f"{rate(capacity)} open ({'held back' if lifted else 'not held back'})"
        )
    return "; ".join(parts)


def answer(runs: Sequence[StudyRun]) -> str:
    """Capacity at SLO per scenario, its share of the CPU bound, and whether the closed loop hid capacity."""
    newest = runs[0]
    settings = newest.settings
    share = settings["target_share"]
    parts = [f"On {newest.cpu_model} (run `{newest.run_id}`), one server core, open loop:"]
    for scenario_name, stacks in by_scenario(newest).items():
        if scenario_name not in settings["slo_seconds"]:
            continue
        ranked = sorted((each for each in stacks if not each.failed), key=lambda each: -each.central)
        if not ranked:
            continue
        slo = settings["slo_seconds"][scenario_name]
        listing = ", ".join(
            f"{each.name} {over_searches(each) if each.over_searches else each.capacity_text}"
            + (f" ({share_of(each.capacity, each.saturation)} of its saturation)" if each.saturation else "")
            for each in ranked
        )
        parts.append(f"{scenario_name} within p99 ≤ {slo * 1000:g} ms: {listing} calls/s.")
        if scenario_name in TARGET_SCENARIOS:
            short = [each for each in ranked if each.saturation and each.capacity < share * each.saturation]
            parts += [
                f"{each.name} held the SLO below {share:.0%} of its saturation on {scenario_name}: {each.reason()}."
                for each in short
            ]
    verdict = _convoy_verdict(newest)
    if verdict:
        parts.append(
            f"On s3-unary-100ms the closed loop at c={WORKERS} against {JITTER_MS} ms of jitter and the open loop: "
            f"{verdict}. Where the open loop or jitter lifts throughput by {settings['convoy'] - 1:.0%} or more, "
            "the closed "
            "loop's convoy, not the stack, held it back."
        )
    return " ".join(parts)


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """Capacity at SLO at least the target share of the saturation throughput on TARGET_SCENARIOS, per stack
    (reported)."""
    grouped = by_scenario(run)
    share = run.settings["target_share"]
    shares: dict[str, float] = {}
    for scenario_name in TARGET_SCENARIOS:
        for each in grouped.get(scenario_name, []):
            if not each.failed and each.saturation:
                shares[f"{scenario_name}/{each.name}"] = round(each.capacity / each.saturation, 3)
    met = all(v >= share for v in shares.values())
    return {f"capacity_at_{share:.0%}_of_saturation".replace("%", "_percent"): Target(met, {"by_cell": shares})}


# What would close a row whose capacities overlap and were searched once: each capacity is one search's bracket, so
# more runs of the same search only bracket it again; an interval over repeated searches is what it needs.
REPEATS = 3  # searches a stack where the newest run searched each once


def unsearched(stacks: Sequence[CapacityCell]) -> str:
    """What would close a row searched once: REPEATS searches a stack, with the minutes they take."""
    minutes = sum(search_minutes(each) for each in stacks) * REPEATS
    return (
        f"repeated searches of each capacity, for an interval over them: {REPEATS} a stack (about {minutes:.0f} min "
        "of searches)"
    )


def repeats_command(repeats: int) -> str:
    """The command that searches each capacity `repeats` times."""
    return f"python -m harness run-all --study capacity --repeats {repeats}"


MEASURE = "load within the SLO"


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """A row per SLO scenario of the newest run: the stack with the highest capacity at the SLO. Where every stack
    was searched more than once, the selection rule judges the pick over its searches (each capacity the middle of
    its search's bracket, Welch's difference against every rival, Bonferroni over them): certified when it takes
    the most load within the SLO or within 5% of the most. Searched once, a capacity is the interval between the
    highest rate held and the lowest failed, and the pick is ahead only where its interval lies wholly above the
    runner-up's."""
    newest = runs[0]
    found = []
    for scenario_name in TARGET_SCENARIOS:
        stacks = sorted(
            (each for each in by_scenario(newest).get(scenario_name, []) if not each.failed and each.capacity),
            key=lambda each: -each.central,
        )
        if len(stacks) < 2:
            continue
        slo = newest.settings["slo_seconds"][scenario_name]
        row = Decision(
            question="The load one core takes within its p99 SLO: which stack?",
            workload=f"{scenario_name}/p99 ≤ {slo * 1000:g} ms",
            pick=stacks[0].name,
            runner_up=stacks[1].name,
            verdict="",
            avoid="",
            study=NAME,
            run_id=newest.run_id,
            machine=newest.cpu_model,
        )
        searched = selected(stacks)
        found.append(searched(row) if searched else bracketed(row, stacks))
    return found


def bracketed(row: Decision, stacks: Sequence[CapacityCell]) -> Decision:
    """The row from one search a stack: the pick ahead where its bracket lies wholly above the runner-up's."""
    top, runner, last = stacks[0], stacks[1], stacks[-1]
    apart = top.capacity >= runner.failed_at
    return replace(
        row,
        over_point=top.capacity / runner.capacity,
        over_note=f" ({top.capacity_text} against {runner.capacity_text} calls/s, open loop)",
        verdict="ahead (the capacities do not overlap)" if apart else "unresolved (the capacities overlap)",
        standing=Standing.DECIDED if apart else Standing.UNRESOLVED,
        closing="" if apart else unsearched(stacks),
        command="" if apart else repeats_command(REPEATS),
        avoid=f"{last.name} ({last.capacity / top.capacity:.2f} of the pick)",
        avoided=last.name,
    )


def selected(stacks: Sequence[CapacityCell]) -> Callable[[Decision], Decision] | None:
    """The row from repeated searches by the selection rule; None unless every stack was searched twice or more."""
    values = {each.name: each.capacities for each in stacks}
    if any(len(found) < 2 for found in values.values()):
        return None

    def difference(pick: str, rival: str) -> Difference:
        mean, variance, freedom = welch(values[rival], values[pick])
        return Difference(mean, math.sqrt(variance), freedom, min(len(values[pick]), len(values[rival])))

    standing = {name: statistics.fmean(math.log(v) for v in found) for name, found in values.items()}
    chosen = select(list(values), standing, difference)
    assert chosen is not None
    pick, binding = chosen.pick, chosen.binding
    assert binding is not None
    runner = max((name for name in values if name != pick), key=lambda name: standing[name])
    over = unpaired_interval(values[runner], values[pick])
    last = min(values, key=lambda name: standing[name])
    worst = unpaired_interval(values[pick], values[last])
    searches = min(len(found) for found in values.values())
    more = blocks_to_certify(chosen) or 1  # None: a rival without spread to size it by, so at least one
    repeats = searches + more  # a run searches afresh: the next one with this many searches a stack
    minutes = sum(search_minutes(each) for each in stacks) * repeats

    def made(row: Decision) -> Decision:
        return replace(
            row,
            pick=pick,
            runner_up=runner,
            over_note=f", over {searches} searches a stack",
            verdict=CERTIFIED if chosen.certified else NOT_CERTIFIED,
            avoid=f"{last} ({ratio_text(worst)} of the pick)",
            avoided=last,
            over=over,
            worst=worst,
            closing=""
            if chosen.certified
            else f"{repeats} searches a stack in place of {searches} (about {minutes:.0f} min of searches)",
            command="" if chosen.certified else repeats_command(repeats),
            certified=chosen.certified,
            lowest=chosen.lowest,
            binding=binding.rival,
            contenders=chosen.contenders,
            measure=MEASURE,
            measured_why=f"each capacity over {searches} searches",
        )

    return made


def search_minutes(cell: CapacityCell) -> float:
    """About how long one SLO search of the stack took: its steps' wall time over its searches."""
    seconds = sum(repeat.resources.wall_seconds for repeat, _ in cell.all_steps)
    return seconds / 60 / max(1, len(cell.searches))


def search_steps(record: CellRecord, repeat: Repeat) -> bool:
    """A search step above the capacity fails calls when the server falls behind: that is how the knee shows."""
    return repeat.role in ("step", "saturation")


REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="open-loop capacity testing (constant arrival rate, as ghz --async --rps offers it), against the closed "
    "loop of the 2020 study",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    settings=SETTINGS,
    default=False,  # 5 to 6 minutes per stack and scenario on a 2-core machine: run it with --study capacity
    expected_non_ok=search_steps,
    decisions=decisions,
)
