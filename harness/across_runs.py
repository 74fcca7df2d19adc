"""`python -m harness validate --across-runs`: whether the picks one run certifies alone hold across runs.

For each machine class with at least LEAST_RUNS complete default runs of the servers' code its newest one ran,
each run is rendered alone (its own results directory, as a team's first run would be) and the class's other runs
pooled (harness.analysis.saved writes the analysis their report made). Each default row the run answered alone and
trusted, whose pick is a label of one comparison, is held against the others: the pick's pooled ratio to the
reference over the best label's. The selection rule claims its pick is the fastest or within 5% of it with 95%
confidence; across runs it should hold about as often.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analysis.saved import FOLDER
from harness.paths import ROOT
from harness.render.decisions import Row
from harness.render.markdown import render_report
from harness.results.code import run_code
from harness.results.files import read_json
from harness.results.records import all_runs, read_meta
from harness.studies import DEFAULT_STUDIES

LEAST_RUNS = 3  # a class is held across runs from this many default runs on
WITHIN = 0.05  # a pick holds where the others put it within this share of their best


@dataclass(frozen=True)
class Held:
    """One pick a run certified alone, against the class's other runs pooled: the share of the others' best rate
    that the pick's is."""

    run: str
    question: str
    workload: str
    pick: str
    best: str
    share: float

    @property
    def holds(self) -> bool:
        return self.share >= 1 - WITHIN


def default_runs(out_dir: Path) -> dict[str, list[Path]]:
    """The complete default runs (not aside, not a shard) of each machine class that ran the servers' code its
    newest such run did, oldest first: the runs that pool with each other (harness.analysis.evidence)."""
    found: dict[str, list[tuple[Path, str]]] = {}
    for run in all_runs(out_dir):
        meta = read_meta(run)
        if meta.whole and set(meta.studies) & set(DEFAULT_STUDIES):
            found.setdefault(meta.cpu_class, []).append((run, run_code(meta, ROOT)))
    return {name: [run for run, code in runs if code == runs[-1][1]] for name, runs in found.items()}


def placed(folder: Path, runs: Sequence[Path]) -> Path:
    """A results directory of its own holding these runs only."""
    for run in runs:
        shutil.copytree(run, folder / "runs" / run.name)
    return folder


def ratios_by_workload(document: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each comparison's labels by their pooled ratio to its reference (the reference 1), from a saved analysis."""
    found = {}
    for comparisons in document["studies"].values():
        for each in comparisons:
            ratios = {each["reference"]: 1.0}
            ratios |= {
                outcome["alternative"]: outcome["pooled"]["ratio"]
                for outcome in each["outcomes"]
                if not outcome["control"]
            }
            found[each["workload"]] = ratios
    return found


def held_picks(run: Path, others: Sequence[Path]) -> list[Held]:
    """The picks a run certified alone on one comparison, each held against the other runs pooled."""
    with tempfile.TemporaryDirectory(prefix="across-") as scratch:
        _, rows = render_report(placed(Path(scratch) / "alone", [run]))
        pooled = placed(Path(scratch) / "others", others)
        render_report(pooled)
        ratios = ratios_by_workload(read_json(pooled / FOLDER / f"{max(each.name for each in others)}.json"))
    return [held for row in rows if (held := held_row(run.name, row, ratios)) is not None]


def held_row(run: str, row: Row, ratios: dict[str, dict[str, float]]) -> Held | None:
    """A row answered and trusted alone whose pick is a label of one comparison the others measured, held against
    them; None for any other row."""
    if not (row.answered and row.trusted) or len(row.workloads) != 1:
        return None
    found = ratios.get(row.workloads[0], {})
    if row.pick not in found:
        return None
    best = max(found, key=lambda label: found[label])
    return Held(run, row.question, row.workloads[0], row.pick, best, found[row.pick] / found[best])


def across_runs(out_dir: Path) -> dict[str, list[Held]]:
    """For each machine class with LEAST_RUNS default runs or more, every pick one of them certified alone, held
    against the class's other runs pooled."""
    return {
        name: [held for run in runs for held in held_picks(run, [each for each in runs if each != run])]
        for name, runs in default_runs(out_dir).items()
        if len(runs) >= LEAST_RUNS
    }


def across_runs_command(out_dir: Path) -> int:
    """Print, by machine class, how many of the picks its runs certified alone held against its other runs, and
    each that did not."""
    found = across_runs(out_dir)
    if not found:
        raise FileNotFoundError(f"no machine class under {out_dir / 'runs'} has {LEAST_RUNS} default runs")
    print(
        f"Each default run rendered alone, its picks on one comparison held against the other runs of its machine "
        f"class pooled: a pick holds where they put it within {WITHIN:.0%} of their best."
    )
    for name, picks in found.items():
        holding = sum(each.holds for each in picks)
        share = f"{holding / len(picks):.0%}" if picks else "no pick"
        print(f"\n{name}: {holding} of {len(picks)} picks held ({share})")
        for each in picks:
            if not each.holds:
                print(f"  {each.run} {each.workload}: {each.pick} at {each.share:.3f} of {each.best}")
    return 0
