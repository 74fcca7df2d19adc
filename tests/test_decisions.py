"""The decision table as data: a study's rows for one question merge into one, its answer stays short."""

from __future__ import annotations

from dataclasses import replace

from harness.analysis.decision import SEPARATED, Decision, Standing, answer_of
from harness.method.verdicts import Interval
from harness.render.decisions import ANSWER_WORDS, SURE_CHARACTERS, decision_rows, open_text, picked, scopes
from harness.render.findings import elsewhere_of
from harness.render.lines import LINE_CHARACTERS, answer_line
from harness.render.targets import target_text
from harness.results.run_meta import Target
from harness.studies.stacks.brief import uvloop_lead


def interpreter_row(stack: str, runner: str, over: float, worst: float) -> Decision:
    return Decision(
        question="Which interpreter should the server run on?",
        workload=f"interpreter/hello-work/{stack}/c50",
        pick="3.11",
        runner_up=runner,
        verdict="faster",
        avoid=f"3.14t ({worst:.2f} [{worst - 0.01:.2f}, {worst + 0.01:.2f}] of the pick)",
        avoided="3.14t",
        study="interpreters",
        run_id="20260101T000000Z",
        machine="Test CPU",
        over=Interval(over, over - 0.03, over + 0.03, 10),
        worst=Interval(worst, worst - 0.01, worst + 0.01, 10),
        control=Interval(1.0, 1 / 1.03, 1.03, 10),  # a noise floor of ±3.0%
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
    unresolved = Decision(**{**first.__dict__, "verdict": "unresolved", "standing": Standing.UNRESOLVED})
    assert decision_rows([unresolved])[0].lead == "3.11 or 3.13: not told apart yet (1.24 [1.21, 1.27] ×)"
    tie = Decision(**{**first.__dict__, "verdict": "tie with 3.13", "standing": Standing.TIE})
    assert decision_rows([tie])[0].lead.startswith("Either 3.11 or 3.13: they tie")
    yes = Decision(**{**first.__dict__, "word": "Yes", "lead": "aio-uvloop serves 4.70 [4.52, 4.89] × sync-w10"})
    assert decision_rows([yes])[0].lead == "Yes: aio-uvloop serves 4.70 [4.52, 4.89] × sync-w10" == yes.told


def test_a_row_names_the_margin_of_its_pick_or_of_its_leader_where_it_has_no_pick_yet() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    assert "The pick's margin is known to ±" in decision_rows([first])[0].answer
    open_ = Decision(**{**first.__dict__, "certified": False, "lowest": 0.9, "binding": "3.13"})
    assert "The leader's margin is known to ±" in decision_rows([open_])[0].answer


def test_a_row_is_untrusted_when_one_of_its_studies_controls_separated() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    (row,) = decision_rows([first, Decision(**{**first.__dict__, "workload": "other/c1", "trusted": False})])
    assert not row.trusted and f"Not to be trusted yet ({SEPARATED})" in row.answer


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
    # the table's cells stay short: the parts in a tally, what would close the first of them, the rest on its page
    assert row.lead == "Not yet on stack-0, stack-1, stack-2, stack-3, stack-4, stack-5 and stack-6"
    assert len(row.sure) <= SURE_CHARACTERS and row.sure.endswith("; …")
    assert row.sure.startswith("0 of 7 answered; 1.24 × the runner-up; to close it: stack-0: about 2 more blocks")


def test_yes_or_no_answers_on_several_workloads_open_with_their_word() -> None:
    """A question answered yes or no per workload reads as one answer that opens with it: each word once, what
    follows it said once for the workloads it holds on (found reading the uvloop row, which opened with a stack)."""
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    said = {
        "hello/aio": "Yes: uvloop 1.18 [1.10, 1.27] × asyncio",
        "hello/grpclib": "No: neither loop clearly faster",
        "hello-wait/grpclib": "No: neither loop clearly faster",
        "s3-unary/grpclib": "No: asyncio 1.09 [1.00, 1.18] × uvloop",
        "s3-mongo/grpclib": "Not told yet: uvloop 1.02 [0.90, 1.15] × asyncio",
    }
    found = [
        Decision(**{**first.__dict__, "workload": f"loops/{scope}", **answer_of(*told.split(": ", 1))})
        for scope, told in said.items()
    ]
    (row,) = decision_rows([found[4], *found[:4]])
    # too long for the table: its tally there, in the same order, and whole in the answers below it
    assert row.lead == (
        "Yes on hello/aio; No on hello/grpclib, hello-wait/grpclib and s3-unary/grpclib; "
        "Not told yet on s3-mongo/grpclib"
    )
    assert row.said == (
        "Yes on hello/aio: uvloop 1.18 [1.10, 1.27] × asyncio; "
        "No on hello/grpclib and hello-wait/grpclib: neither loop clearly faster; "
        "on s3-unary/grpclib: asyncio 1.09 [1.00, 1.18] × uvloop; "
        "Not told yet on s3-mongo/grpclib: uvloop 1.02 [0.90, 1.15] × asyncio"
    )
    mixed = Decision(**{**first.__dict__, "workload": "loops/other/aio"})  # a pick, not a yes or no: told per scope
    assert decision_rows([found[0], mixed])[
        0
    ].lead == "hello: Yes: uvloop 1.18 [1.10, 1.27] × asyncio; other: 3.11: " + ("1.24 [1.21, 1.27] × 3.13")


def test_a_pick_not_yet_certified_is_not_called_the_pick_where_one_is_avoided() -> None:
    """Found reading the table: a row saying "Not yet: a or b" also said "avoid c (0.83 of the pick)"."""
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    certified = Decision(**{**first.__dict__, "certified": True, "lowest": 1.1, "binding": "3.13"})
    open_one = Decision(**{**certified.__dict__, "workload": "interpreter/hello-work/sync-w10/c50", "certified": False})
    assert decision_rows([certified, certified])[0].avoid == "3.14t (0.64 of the pick)"
    assert decision_rows([certified, open_one])[0].avoid == "3.14t (0.64 of the one leading)"


def test_whether_uvloop_paid_off_is_yes_only_where_it_is_clearly_ahead() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)

    def loops(pick: str, over: Interval, certified: bool, contenders: tuple[str, ...]) -> str:
        runner = "asyncio" if pick == "uvloop" else "uvloop"
        made = Decision(
            **{
                **first.__dict__,
                "pick": pick,
                "runner_up": runner,
                "over": over,
                "certified": certified,
                "contenders": contenders,
            }
        )
        answer = uvloop_lead(made, 0.05)
        return f"{answer['word']}: {answer['lead']}"

    ahead, close = Interval(1.18, 1.10, 1.27, 6), Interval(1.01, 0.96, 1.06, 6)
    assert loops("uvloop", ahead, True, ("uvloop",)) == "Yes: uvloop 1.18 [1.10, 1.27] × asyncio"
    assert loops("asyncio", ahead, True, ("asyncio",)) == "No: asyncio 1.18 [1.10, 1.27] × uvloop"
    assert loops("uvloop", close, True, ("uvloop", "asyncio")) == "No: neither loop clearly faster"
    assert loops("uvloop", close, False, ("uvloop", "asyncio")).startswith("Not told yet: uvloop 1.01 [0.96, 1.06]")


def test_a_row_at_the_end_of_run_all_is_one_short_line_that_says_whether_it_is_open() -> None:
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    (row,) = decision_rows([first])
    line = answer_line(row)
    assert line.startswith("interpreter") and len(line) <= LINE_CHARACTERS
    untrusted = decision_rows([Decision(**{**first.__dict__, "trusted": False, "why": "w"})])[0]
    assert answer_line(untrusted).startswith("interpreter (not trusted): ")
    long = replace(
        row,
        question="Anything at all: why?",
        lead="Pick a: the fastest, or within 5% of the fastest (95%)" + "; b" * 60,
    )
    assert answer_line(long).startswith("Anything at all: Pick a (certified); b") and answer_line(long).endswith("…")
    assert len(answer_line(long)) == LINE_CHARACTERS


def test_a_missed_target_is_said_in_words_and_a_met_one_not_at_all() -> None:
    spread = Target(False, {"spread_by_cell": {"aio-asyncio/c50": 0.2708, "sync-w1/c2": 0.05}})
    assert target_text("hello_repeats_within_10_percent", spread) == (
        "hello's repeats spread up to 27% (aio-asyncio/c50), above the 10% the study expects"
    )
    assert target_text("no_failed_cell", Target(False, {"cells": ["a", "b"]}, gate=True)) == "cells failed: a, b"
    assert target_text("driver_within_5_percent_of_ghz", Target(False, {"by_server": {"sync-w10": 0.233}})) == (
        "our driver and its cross-check differ by +23% on sync-w10, past the tolerance"
    )
    assert target_text("something_new", Target(False, {"x": 1})) == "something new: not met"
    assert target_text("driver_not_busy", Target(False, {})) == "driver not busy: not met"  # figures it lacks


def test_an_open_row_names_at_most_three_candidates_and_how_close_they_are() -> None:
    assert open_text(("a", "b"), 0.031) == "a or b, within 3% of each other"
    assert open_text(("a", "b", "c"), 0.06) == "a, b or c, within 6% of each other"
    assert open_text(tuple("abcdefgh"), 0.06) == "a, b, c and 5 more, within 6% of each other"
    first = interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)
    open_ = Decision(**{**first.__dict__, "certified": False, "contenders": tuple("abcde"), "apart": 0.04})
    assert picked(open_) == "Not yet: a, b, c and 2 more, within 4% of each other"


def test_another_machine_class_says_beside_a_row_whether_it_answers_the_same() -> None:
    (row,) = decision_rows([interpreter_row("aio-uvloop", "3.13", 1.24, 0.64)])
    other = replace(row, pooled="over 2 runs on 1 day")
    assert elsewhere_of(row, [("Intel 6/207/2", other)]) == ("Intel 6/207/2, over 2 runs on 1 day: same answer",)
    assert elsewhere_of(row, [("B", replace(other, pick="3.12"))]) == ("B, over 2 runs on 1 day: answers 3.12",)
    assert elsewhere_of(row, [("B", replace(other, answered=False))]) == ("B, over 2 runs on 1 day: not answered yet",)
