"""One workload measured by two studies of one run, each in its own blocks: whether their rates agree, for
results/README.md."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.costs import block_ms_per_call
from harness.analysis.judging import judged_comparisons
from harness.method.verdicts import TIE, interval, unpaired_interval, verdict
from harness.render.table import Block, Table
from harness.render.wording import rate_text, ratio_text
from harness.results.records import StudyRun


def _driver(run: StudyRun) -> str:
    """The driver a study's run used (runs before drivers were recorded: ghz, the stacks study's)."""
    return str(run.matrix.get("driver") or "ghz")


def same_workloads(runs: Sequence[StudyRun]) -> list[Block]:
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
                    found.setdefault((run.run_id, cell.record.key), []).append((run, rates, block_ms_per_call(cell)))
    shared = {key: each for key, each in found.items() if len({run.study for run, _, _ in each}) >= 2}
    if not shared:
        return []
    intro = (
        "One workload measured by two studies of one run, each in its own rounds: their rates should agree "
        "within the tie band; where they do not, the server's CPU per call under each driver says whether the "
        "server did more work a call or waited."
    )
    table = Table(
        "same workloads",
        [
            "cell",
            "run",
            "first study: OK calls/s [95% CI]",
            "second study",
            "second × first [95% CI]",
            "verdict",
            "server CPU ms per call: first, second",
        ],
    )
    for (run_id, key), ((first, mine, my_cost), (second, theirs, their_cost), *_) in shared.items():
        ratio = unpaired_interval(mine, theirs)
        outcome = verdict(ratio, first.thresholds.tie)
        said = "agree" if outcome == TIE else f"{outcome}: by {_driver(second)} against {_driver(first)}"
        table.add(
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
    return [intro, "", table, ""]
