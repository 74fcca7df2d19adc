"""The decision table as data: a study's rows for one question merge into one, its answer stays short."""

from __future__ import annotations

from harness.method.verdicts import Interval
from harness.render.decisions import ANSWER_WORDS, decision_rows, scopes
from harness.studies.base import Decision


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
        calibration="±3.0%",
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
    assert row.pick == "3.11 (on aio-uvloop, grpclib-uvloop and sync-w10)"
    assert row.lead == "3.11 on aio-uvloop, grpclib-uvloop and sync-w10: 1.24 to 1.28 × 3.13 and 3.12"
    assert row.sure == "1.24 to 1.28 × the runner-up (3.13, 3.12): 3 faster"
    assert row.avoid == "3.14t (0.58 to 0.64 of the pick)"
    assert row.floor == "±3.0%" and row.trusted
    assert row.evidence == (("20260101T000000Z", "Test CPU"),)
    assert len(row.answer.split()) <= ANSWER_WORDS and row.answer.startswith(f"{row.lead}.")


def test_different_picks_are_told_per_workload() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    second = Decision(**{**first.__dict__, "workload": "interpreter/hello-work/sync-w10/c50", "pick": "3.12"})
    (row,) = decision_rows([first, second])
    assert row.pick == "3.11 (aio-uvloop), 3.12 (sync-w10)"
    assert row.sure.startswith("aio-uvloop: 1.24 [1.21, 1.27] × 3.13: faster; sync-w10: ")
    assert row.lead == "aio-uvloop: 3.11: 1.24 [1.21, 1.27] × 3.13; sync-w10: 3.12: 1.24 [1.21, 1.27] × 3.13"


def test_a_row_answers_in_the_question_s_words_first() -> None:
    """The answer column: the study's own words where it has them (a yes or no), else the pick and its margin, or
    that the two tie or were not told apart, never a bare name."""
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    (faster,) = decision_rows([first])
    assert faster.lead == "3.11: 1.24 [1.21, 1.27] × 3.13"
    assert faster.answer.startswith("3.11: 1.24 [1.21, 1.27] × 3.13 (interpreter/hello-work/aio-uvloop/c50).")
    unresolved = Decision(**{**first.__dict__, "verdict": "unresolved"})
    assert decision_rows([unresolved])[0].lead == "3.11 or 3.13: not told apart yet (1.24 [1.21, 1.27] ×)"
    tie = Decision(**{**first.__dict__, "verdict": "tie with 3.13"})
    assert decision_rows([tie])[0].lead.startswith("Either 3.11 or 3.13: they tie")
    yes = Decision(**{**first.__dict__, "lead": "Yes: aio-uvloop serves 4.70 [4.52, 4.89] × sync-w10"})
    assert decision_rows([yes])[0].lead == yes.lead


def test_a_row_is_untrusted_when_one_of_its_studies_controls_separated() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    (row,) = decision_rows([first, Decision(**{**first.__dict__, "workload": "other/c1", "trusted": False})])
    assert not row.trusted and "Not to be trusted yet (its study's A/A control separated)" in row.answer


def test_scopes_are_the_parts_of_the_workloads_that_differ() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    second = Decision(**{**first.__dict__, "workload": "interpreter/hello-work/sync-w10/c50"})
    assert scopes([first, second]) == ["aio-uvloop", "sync-w10"]
    assert scopes([first]) == [first.workload]


def test_a_part_a_scope_repeats_is_said_once() -> None:
    """The threads rows name their scenario twice ("hello/c50/hello"): the row says "hello", not "hello/hello"."""
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    rows = [Decision(**{**first.__dict__, "workload": f"{topic}/c50/{topic}"}) for topic in ("hello", "s3-unary")]
    assert scopes(rows) == ["hello", "s3-unary"]


def test_a_row_too_long_for_its_answer_keeps_what_would_close_it() -> None:
    """Seven workloads each not yet certified: the answer says as many of them as fit, then what would close the
    row, within ANSWER_WORDS; the table says what would close each part."""
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    found = [
        Decision(
            **{
                **first.__dict__,
                "workload": f"interpreter/hello-work/stack-{index}/c50",
                "pick": "3.11" if index % 2 else "3.12",
                "certified": False,
                "lowest": 0.9,
                "binding": "3.13",
                "contenders": ("3.11", "3.12", "3.13", "3.14"),
                "closing": f"about {index + 2} more blocks, 1 more run (2 min of its blocks)",
            }
        )
        for index in range(7)
    ]
    (row,) = decision_rows(found)
    assert row.closing.startswith("To close it: about 2 more blocks") and row.closing in row.answer
    assert len(row.answer.split()) <= ANSWER_WORDS and "; …" in row.answer
    assert "stack-6: about 8 more blocks, 1 more run (2 min of its blocks)" in row.sure
