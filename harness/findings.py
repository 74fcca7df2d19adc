"""What results/README.md and results/report.html show, as data: the decision table (one row per question, with
its short answer), every comparison of the runs the report draws on (each alternative's ratio with its interval,
and each block's), each run's provenance, and, where a study has run more than once, its two newest runs side by
side. `harness.report` renders it as markdown, `harness.page` as one HTML page; neither computes a figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.compare import compare_rows
from harness.machine import machine_class
from harness.pooling import held_text, pooled, server_code
from harness.results import (
    DIRTY,
    StudyRun,
    comparison_files,
    is_aside,
    load_study,
    studies_in,
    study_dir,
)
from harness.studies.base import SEPARATED, Decision, StudyReport
from harness.studies.reading import Judged, judged_comparisons
from harness.verdicts import Interval, noise_floor, paired_ratios, ratio_text

ROOT = Path(__file__).resolve().parent.parent  # the checkout, whose history tells a run's server code
ANSWER_WORDS = 80  # an answer's most words: the decision first, then the figures that carry it
# The decision table's columns after the question, as both renderers head them.
DECISION_COLUMNS = (
    "pick",
    "how sure: the pick × the runner-up [95% CI]",
    "avoid",
    "noise floor",
    "trusted",
    "evidence",
)


@dataclass(frozen=True)
class Row:
    """One question of the decision table, merged from its study's rows (one per workload or stack it was
    measured on), with its short answer."""

    question: str
    pick: str
    sure: str  # the pick over the runner-up, with its interval (or their range) and the verdict
    avoid: str
    floor: str  # how its study's A/A control read, with the noise floor: the smallest difference it could resolve
    trusted: bool
    why: str  # why it is not trusted; "" when it is
    study: str
    evidence: tuple[tuple[str, str], ...]  # (run id, machine) of each run behind it
    workloads: tuple[str, ...]  # the workloads of its comparisons, which the page opens from the row
    answer: str


def scopes(found: Sequence[Decision]) -> list[str]:
    """What tells a question's rows apart: the parts of their workloads that differ (the stack, the size)."""
    parts = [each.workload.split("/") for each in found]
    if len(found) == 1 or len({len(each) for each in parts}) != 1:
        return [each.workload for each in found]
    differing = [index for index in range(len(parts[0])) if len({each[index] for each in parts}) > 1]
    return ["/".join(each[index] for index in differing) for each in parts]


def span(values: Sequence[float]) -> str:
    """ "0.74 to 0.81", or one value."""
    low, high = min(values), max(values)
    return f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f} to {high:.2f}"


def named(text: str) -> str:
    """The name an avoid or pick text begins with: `p1` in "p1 (0.51 [0.45, 0.57] of the pick)"."""
    return text.split(" (")[0]


def merged(question: str, found: Sequence[Decision]) -> Row:
    """A question's rows as one: the same pick everywhere said once, with the range of its margins; different
    picks said per workload."""
    told = scopes(found)
    picks = list(dict.fromkeys(each.pick for each in found))
    first = found[0]
    if len(found) == 1:
        pick = first.pick
        sure = f"{first.over_runner_up} × {first.runner_up}: {first.verdict}" + (
            f"; {first.held}" if first.held else ""
        )
        avoid = first.avoid
    else:
        every = f"on all {len(found)}" if len(found) > 2 else "on both"
        each_pick = ", ".join(f"{e.pick} ({s})" for e, s in zip(found, told, strict=True))
        pick = f"{picks[0]} ({every})" if len(picks) == 1 else each_pick
        margins = [each.over for each in found]
        if all(margins) and len(picks) == 1:
            verdicts = [each.verdict for each in found]
            counted = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
            runners = ", ".join(dict.fromkeys(each.runner_up for each in found))
            sure = f"{span([m.value for m in margins if m])} × the runner-up ({runners}): {counted}"
        else:
            sure = "; ".join(
                f"{s}: {e.over_runner_up} × {e.runner_up}, {e.verdict}" for e, s in zip(found, told, strict=True)
            )
        avoided = [each for each in found if each.avoid != "—"]
        names = list(dict.fromkeys(named(each.avoid) for each in avoided))
        worst = [each.worst.value for each in avoided if each.worst]
        if len(names) == 1 and len(worst) == len(avoided):
            avoid = f"{names[0]} ({span(worst)} of the pick)"
        else:
            avoid = "; ".join(f"{s}: {e.avoid}" for e, s in zip(found, told, strict=True) if e.avoid != "—") or "—"
    widest = max(found, key=lambda each: -1.0 if each.floor is None else each.floor)
    evidence = tuple(dict.fromkeys((each.run_id, each.machine) for each in found))
    row = Row(
        question=question,
        pick=pick,
        sure=sure,
        avoid=avoid,
        floor=widest.calibration,
        trusted=all(each.trusted for each in found),
        why="; ".join(dict.fromkeys(each.why or SEPARATED for each in found if not each.trusted)),
        study=first.study,
        evidence=evidence,
        workloads=tuple(dict.fromkeys(each.comparison or each.workload for each in found)),
        answer="",
    )
    return Row(**{**row.__dict__, "answer": answer(row, found)})


def answer(row: Row, found: Sequence[Decision]) -> str:
    """The row in words, at most ANSWER_WORDS: the decision, then the figures that carry it."""
    first = found[0]
    if len(found) > 1:
        said = [f"Pick {row.pick}: {row.sure}."]
    elif first.verdict.startswith("tie"):
        said = [f"Either {first.pick} or {first.runner_up} will do on {first.workload}: {row.sure}."]
    elif first.verdict.startswith("unresolved"):
        said = [
            f"Lean to {first.pick} on {first.workload}; the run could not tell it from {first.runner_up}: {row.sure}."
        ]
    else:
        said = [f"Pick {first.pick} on {first.workload}: {row.sure}."]
    if row.avoid != "—":
        said.append(f"Avoid {row.avoid}.")
    if not row.trusted:
        said.insert(1, f"Not to be trusted yet ({row.why}): measure longer before you act on it.")
    said += [f"Pooled {each.held}." for each in found[:1] if each.held and len(found) > 1]
    widths = [noise_floor(each.over) for each in found if each.over is not None]
    if widths and all(math.isfinite(width) for width in widths) and max(widths) <= 1:
        said.append(f"The pick's margin is known to ±{max(widths):.1%}.")
    elif widths:
        said.append("The pick's margin is not known yet: its interval spans more than a factor of two.")
    floors = [each.floor for each in found if each.floor is not None and math.isfinite(each.floor)]
    if floors:
        said.append(f"The run could tell apart differences down to ±{max(floors):.1%}.")
    kept = said[:1]  # the decision, then as many of the figures as fit
    for sentence in said[1:]:
        if len(" ".join([*kept, sentence]).split()) <= ANSWER_WORDS:
            kept.append(sentence)
    return " ".join(" ".join(kept).split()[:ANSWER_WORDS])


def decision_rows(decisions: Sequence[Decision]) -> list[Row]:
    """One row per question, in the order the studies asked them."""
    grouped: dict[str, list[Decision]] = {}
    for each in decisions:
        grouped.setdefault(each.question, []).append(each)
    return [merged(question, found) for question, found in grouped.items()]


def comparison_id(study: str, run_id: str, workload: str) -> str:
    """A comparison's id on the page and in its links: `stacks/20261125T173916Z/hello/c50`."""
    return f"{study}/{run_id}/{workload}"


def _ratio(found: Interval) -> dict[str, float | None]:
    return {"value": found.value, "low": found.low, "high": found.high if math.isfinite(found.high) else None}


def comparison_view(run: StudyRun, judged: Judged, question: str) -> dict[str, Any]:
    """One comparison as the page draws it: each label's ratio to the reference with its 95% interval and
    verdict, and each block's ratio (paired within the block), so that drift and outliers show."""
    record = judged.record
    reference = judged.rates.get(record.reference, {})
    labels = [
        {
            **_ratio(each.ratio),
            "label": each.alternative,
            "verdict": each.verdict,
            "control": each.control,
            "blocks": each.ratio.rounds,
            "text": ratio_text(each.ratio),
        }
        for each in judged.outcomes
    ]
    whole = {each.alternative: each.ratio.value for each in judged.outcomes}
    blocks = [
        {
            "label": label,
            "block": block,
            "ratio": rate / reference[block],
            "apart": rate / reference[block] / whole[label],
        }
        for label, rates in judged.rates.items()
        if label in whole
        for block, rate in sorted(rates.items())
        if reference.get(block)
    ]
    control = judged.control
    return {
        "id": comparison_id(run.study, run.run_id, record.workload),
        "study": run.study,
        "run": run.run_id,
        "machine": run.cpu_model,
        "workload": record.workload,
        "scenario": record.topic,
        "question": question,
        "reference": record.reference,
        "tie": record.method.tie,
        "design": record.method.design,
        "stacks": sorted({cell.record.server for cell in judged.cells.values()}),
        "labels": labels,
        "rounds": blocks,
        "floor": None if control is None else noise_floor(control.ratio),
    }


def provenance(meta: Mapping[str, Any]) -> dict[str, Any]:
    """What a run was made from and on: commit and whether it was clean, machine, interpreter, every package and
    tool version, pinning, the method's values, budget and wall time."""
    env = meta["environment"]
    commit = str(env.get("git_commit", ""))
    return {
        "run": meta["run_id"],
        "date": meta.get("date", ""),
        "commit": commit.removesuffix(DIRTY),
        "clean": not commit.endswith(DIRTY),
        "machine": f"{env['cpu_model']} ({env['cpu_count']} CPUs)",
        "platform": env.get("platform", ""),
        "python": env.get("python", ""),
        "tools": env.get("tools", {}),
        "packages": env.get("packages", {}),
        "pinning": meta.get("pinning", {}),
        "thresholds": meta.get("thresholds", {}),
        "pilot": meta.get("pilot"),
        "studies": studies_in(dict(meta)),
        "budget_minutes": round(meta["budget_seconds"] / 60, 1) if meta.get("budget_seconds") else None,
        "wall_minutes": round(meta.get("wall_seconds", 0) / 60, 1),
        "status": meta.get("status", ""),
    }


def side_by_side(runs: Mapping[Path, dict[str, Any]], study: str) -> dict[str, Any] | None:
    """A study's two newest of the runs (each with its run.json) but those made --aside, cell by cell (what
    `python -m harness compare` prints); None with one run."""
    holding = [run for run, meta in runs.items() if study in studies_in(meta) and not is_aside(meta)]
    if len(holding) < 2:
        return None
    found = compare_rows(holding[-2], holding[-1], (study,))
    return {"study": study, **found} if found["rows"] else None


def matrix_run(study: StudyReport, metas: dict[Path, dict[str, Any]], newest: StudyRun) -> StudyRun | None:
    """The newest complete run of the study measured cell by cell (its full matrix), if not the newest run; metas:
    each run's run.json, oldest first."""
    for run, meta in reversed(metas.items()):
        entry = meta.get("studies", {}).get(study.name)
        if entry and entry.get("status") == "complete" and not comparison_files(study_dir(run, meta, study.name)):
            return None if run.name == newest.run_id else load_study(run, study.name)
    return None


def only_in_matrix(matrix: StudyRun, newest: StudyRun) -> list[str]:
    """The scenarios a full-matrix run measured that the newest run did not."""
    measured = {cell.record.scenario for cell in newest.cells}
    return sorted({cell.record.scenario for cell in matrix.cells} - measured)


@dataclass(frozen=True)
class Findings:
    """Everything the summary and the page show."""

    rows: list[Row]
    comparisons: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    matrices: list[dict[str, Any]]  # each study's newest full-matrix run, and what only it measured
    asides: list[dict[str, Any]]  # the comparisons of runs made --aside, which decide nothing


def machine_of(meta: Mapping[str, Any]) -> str:
    """The machine class runs are pooled within: the fingerprint's class, or for a run before fingerprints its CPU
    model and count."""
    found = machine_class(dict(meta.get("machine", {}).get("fingerprint", {})))
    env = meta["environment"]
    return found or f"{env['cpu_model']}, {env['cpu_count']} cores"


Peers = list[tuple[str, dict[str, dict[str, dict[int, float]]]]]  # (day, workload -> label -> block -> rate)


def peers_of(
    study: StudyReport, newest: StudyRun, metas: Mapping[Path, Mapping[str, Any]], kinds: Mapping[Path, tuple[str, str]]
) -> Peers:
    """A study's newest run and the earlier runs it pools with (the same machine class and server code, not made
    aside), newest first: each run's day and its comparisons' rates by workload, read once. kinds: each run's
    (machine class, server code); none where the newest run's code is unknown."""
    here = kinds.get(newest.run_dir, ("", ""))
    if not here[1]:
        return []

    def rates_of(run: StudyRun) -> dict[str, dict[str, dict[int, float]]]:
        return {judged.record.workload: judged.rates for judged in judged_comparisons(run)}

    found = [(str(newest.meta.get("date", ""))[:10], rates_of(newest))]
    for run_dir, meta in metas.items():
        if run_dir == newest.run_dir or is_aside(dict(meta)) or study.name not in studies_in(dict(meta)):
            continue
        if kinds.get(run_dir) == here:
            found.append((str(meta.get("date", ""))[:10], rates_of(load_study(run_dir, study.name))))
    return found


def held_over_runs(decision: Decision, peers: Peers) -> Decision:
    """The row with its pick over the runner-up pooled over the study's newest run and its peers (`peers_of`)
    that compared the same two labels on the same workload."""
    if len(decision.labels) != 2 or len(peers) < 2:
        return decision
    workload = decision.comparison or decision.workload
    runs = [(day, paired_ratios(rates.get(workload, {}), *decision.labels)) for day, rates in peers]
    if len(runs[0][1]) < 2:
        return decision
    held = [(day, ratios) for day, ratios in runs if len(ratios) >= 2]
    if len(held) < 2:
        return decision
    return replace(decision, held=held_text(pooled([ratios for _, ratios in held]), len({day for day, _ in held})))


def views_of(study: StudyReport, run: StudyRun) -> tuple[list[Decision], list[dict[str, Any]]]:
    """A run's decision rows (as if it were its study's newest) and its comparisons as the page draws them."""
    rows = study.decisions([run])
    asked = {row.workload: row.question for row in rows}
    views = [
        comparison_view(run, judged, asked.get(judged.record.workload, study.question))
        for judged in judged_comparisons(run)
    ]
    return rows, views


def findings(
    chosen: Mapping[StudyReport, Sequence[StudyRun]],
    metas: dict[Path, dict[str, Any]],
    matrices: Mapping[StudyReport, StudyRun | None],
    asides: Mapping[StudyReport, Sequence[StudyRun]],
    root: Path = ROOT,
) -> Findings:
    """The findings of each study's runs (newest first, as harness.report chooses them), of its newest
    full-matrix run and of its runs made aside, and every run's provenance (metas: each run's run.json, oldest
    first)."""
    decisions: list[Decision] = []
    kinds = {run: (machine_of(meta), server_code(meta, root)) for run, meta in metas.items()}  # each run's once
    views = []
    for each, study_runs in chosen.items():
        for index, run in enumerate(study_runs):
            rows, told = views_of(each, run)
            if index == 0:  # a study decides from its newest run, pooled with the runs before it where they agree
                peers = peers_of(each, run, metas, kinds)
                decisions += [held_over_runs(row, peers) for row in rows]
            views += told
    aside_views = [view for each, runs in asides.items() for run in runs for view in views_of(each, run)[1]]
    pairs = [found for each in chosen if (found := side_by_side(metas, each.name))]
    found_matrices = [
        {"study": each.name, "run": matrix.run_id, "machine": matrix.cpu_model, "only": only}
        for each, study_runs in chosen.items()
        if (matrix := matrices.get(each)) is not None and (only := only_in_matrix(matrix, study_runs[0]))
    ]
    used = {view["run"] for view in views + aside_views} | {row.run_id for row in decisions}
    used |= {m["run"] for m in found_matrices}
    return Findings(
        decision_rows(decisions),
        views,
        [provenance(meta) for meta in reversed(metas.values()) if meta["run_id"] in used],
        pairs,
        found_matrices,
        aside_views,
    )
