"""The decision table as data: a study's rows for one question merge into one, its answer stays short."""

from __future__ import annotations

from harness.findings import ANSWER_WORDS, decision_rows, scopes
from harness.studies.base import Decision
from harness.verdicts import Interval


def interpreter_row(stack: str, runner: str, over: float, worst: float) -> Decision:
    return Decision(
        question="Which interpreter should the server run on?",
        workload=f"interpreter/hello-work/{stack}/c50",
        pick="3.11",
        runner_up=runner,
        over_runner_up=f"{over:.2f} [{over - 0.03:.2f}, {over + 0.03:.2f}]",
        over_reference="1 (reference)",
        verdict="faster",
        avoid=f"3.14t ({worst:.2f} [{worst - 0.01:.2f}, {worst + 0.01:.2f}] of the pick)",
        study="interpreters",
        run_id="20260101T000000Z",
        machine="Test CPU",
        calibration="tie, floor ±3.0%",
        over=Interval(over, over - 0.03, over + 0.03, 10),
        worst=Interval(worst, worst - 0.01, worst + 0.01, 10),
        floor=0.03,
    )


def test_one_question_on_several_stacks_is_one_row_with_the_range() -> None:
    found = [
        interpreter_row("aio-uvloop", "3.13", 1.24, 0.64),
        interpreter_row("grpclib-uvloop", "3.13", 1.28, 0.62),
        interpreter_row("sync-w10", "3.12", 1.27, 0.58),
    ]
    (row,) = decision_rows(found)
    assert row.pick == "3.11 (on all 3)"
    assert row.sure == "1.24 to 1.28 × the runner-up (3.13, 3.12): 3 faster"
    assert row.avoid == "3.14t (0.58 to 0.64 of the pick)"
    assert row.floor == "tie, floor ±3.0%" and row.trusted
    assert row.evidence == (("20260101T000000Z", "Test CPU"),)
    assert len(row.answer.split()) <= ANSWER_WORDS and row.answer.startswith("Pick 3.11 (on all 3): 1.24 to 1.28")


def test_different_picks_are_told_per_workload() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    second = Decision(**{**first.__dict__, "workload": "interpreter/hello-work/sync-w10/c50", "pick": "3.12"})
    (row,) = decision_rows([first, second])
    assert row.pick == "3.11 (aio-uvloop), 3.12 (sync-w10)"
    assert row.sure.startswith("aio-uvloop: 1.24 [1.21, 1.27] × 3.13, faster; sync-w10: ")


def test_a_row_is_untrusted_when_one_of_its_studies_controls_separated() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    (row,) = decision_rows([first, Decision(**{**first.__dict__, "workload": "other/c1", "trusted": False})])
    assert not row.trusted and "Not to be trusted yet (its study's A/A control separated)" in row.answer


def test_scopes_are_the_parts_of_the_workloads_that_differ() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    second = Decision(**{**first.__dict__, "workload": "interpreter/hello-work/sync-w10/c50"})
    assert scopes([first, second]) == ["aio-uvloop", "sync-w10"]
    assert scopes([first]) == [first.workload]
