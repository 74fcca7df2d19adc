"""Whether a run's certified picks hold across runs (`harness validate --across-runs`): each run rendered alone,
its picks held against the other runs of its machine class pooled."""

from __future__ import annotations

from pathlib import Path

from harness.across_runs import Held, across_runs, held_row, ratios_by_workload
from harness.render.decisions import Row
from tests.runs import make_brief_run


def row(pick: str, workloads: tuple[str, ...] = ("hello/c50",), answered: bool = True) -> Row:
    return Row("Which?", "", pick, "", "", "", True, "", "stacks", (), workloads, "", answered=answered)


def test_a_pick_holds_within_five_percent_of_the_others_best() -> None:
    document = {
        "studies": {
            "stacks": [
                {
                    "workload": "hello/c50",
                    "reference": "sync-w10",
                    "outcomes": [
                        {"alternative": "aio-uvloop", "control": False, "pooled": {"ratio": 1.10}},
                        {"alternative": "sync-w10~aa", "control": True, "pooled": {"ratio": 1.01}},
                    ],
                }
            ]
        }
    }
    ratios = ratios_by_workload(document)
    assert ratios == {"hello/c50": {"sync-w10": 1.0, "aio-uvloop": 1.10}}
    behind = held_row("r1", row("sync-w10"), ratios)
    assert behind == Held("r1", "Which?", "hello/c50", "sync-w10", "aio-uvloop", 1 / 1.10)
    assert not behind.holds
    found = held_row("r1", row("aio-uvloop"), ratios)
    assert found is not None and found.holds
    # Only a row answered alone, on one comparison the others measured, is held.
    assert held_row("r1", row("aio-uvloop", answered=False), ratios) is None
    assert held_row("r1", row("aio-uvloop", ("hello/c50", "hello/c2")), ratios) is None
    assert held_row("r1", row("aio-uvloop", ("hello/c10",)), ratios) is None


def test_three_runs_of_a_class_hold_each_others_picks(tmp_path: Path) -> None:
    for day, shift in ((5, 0.97), (6, 1.03), (7, 1.0)):
        make_brief_run(tmp_path, f"2026010{day}T000000Z", f"2026-01-0{day}", shift=shift)
    (picks,) = across_runs(tmp_path).values()
    assert {each.run for each in picks} == {"20260105T000000Z", "20260106T000000Z", "20260107T000000Z"}
    assert all(each.holds for each in picks)
