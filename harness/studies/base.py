"""A study's report half as data, and the targets every study shares. Report-side: it imports only what reads
result files, so a report renders without the tools."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.decision import Decision
from harness.results.records import CellRecord, Repeat, StudyRun
from harness.results.run_meta import Target


def no_decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """A study that has no row in the decision table yet."""
    return []


def nothing_expected(record: CellRecord, repeat: Repeat) -> bool:
    """No call that was not OK is measured on purpose."""
    return False


@dataclass(frozen=True, eq=False)  # one object per study: compared and hashed by identity
class StudyReport:
    """How a study tells its runs: its question, its files, its part of results/README.md, its targets."""

    name: str
    question: str
    follows: str  # the seed study or reference it follows
    # Files under results/<study>/ (relative path -> content), rendered from one run's files.
    render: Callable[[StudyRun], dict[str, bytes]]
    # The study's section of results/README.md, from its newest run per CPU model (newest first).
    section: Callable[[Sequence[StudyRun]], str]
    # The short answer, with the figures that carry it, from the same runs.
    answer: Callable[[Sequence[StudyRun]], str]
    # The study's own targets on a finished run (beyond the shared ones of `shared_targets`).
    targets: Callable[[StudyRun, float, bool], dict[str, Target]]
    # The values its report judges by, as they are now: recorded in every new run, read back from it.
    settings: Mapping[str, Any] = field(default_factory=dict)
    default: bool = True  # run-all runs it when no --study is given
    # Which calls that were not OK the study measures on purpose (a finding, shown, not a failed run).
    expected_non_ok: Callable[[CellRecord, Repeat], bool] = nothing_expected
    # Its rows of the decision table, from its newest run per CPU model (newest first).
    decisions: Callable[[Sequence[StudyRun]], list[Decision]] = no_decisions
    # What `run-all --study <name>` needs beside it to run at all ("--packages grpcio==1.75.0"); "": nothing.
    needs: str = ""

    @property
    def command(self) -> str:
        """The command that measures the study on its own."""
        return " ".join(filter(None, ["python -m harness run-all --study", self.name, self.needs]))


def unexpected_non_ok(run: StudyRun, expected: Callable[[CellRecord, Repeat], bool]) -> list[str]:
    """Cells with calls that were not OK in a run the study did not expect them in."""
    return [
        cell.record.key
        for cell in run.cells
        if any(
            report.non_ok and not expected(cell.record, repeat)
            for repeat, report in zip(cell.record.repeats, cell.reports, strict=True)
        )
    ]


def shared_targets(run: StudyRun, report: StudyReport, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """What every study's run must meet: no failed cell and no call that was not OK unless the study measures
    such calls on purpose (both gate run-all's exit status); and its wall time (reported)."""
    failed = [cell.record.key for cell in run.cells if cell.record.status == "failed"]
    surprising = unexpected_non_ok(run, report.expected_non_ok)
    return {
        "no_failed_cell": Target(not failed, {"cells": failed}, gate=True),
        "no_unexpected_non_ok": Target(not surprising, {"cells": surprising}, gate=True),
        "wall_time": Target(True, {"measured_seconds": round(wall_seconds, 1), "applies": full_matrix}),
    }


def no_targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """A study with no targets beyond the shared ones."""
    return {}
