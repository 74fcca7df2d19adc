"""The studies a run measures, from the registry: each as the run's `Chosen` (its plan half, its cells and
comparisons, and what its run must meet), with the interpreters and package sides it compares prepared first.
run/ measures what this hands it and imports nothing of studies/."""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.pythons import DEFAULT_PYTHONS, own_interpreter, prepare
from harness.plan.servers import REST_VARIANTS, SERVER_VARIANTS
from harness.plan.wires import PLAINTEXT
from harness.results.records import StudyRun
from harness.results.run_meta import Target
from harness.run.cells import Chosen
from harness.run.planning import Comparison, StudyPlan, controlled_first
from harness.studies import DEFAULT_STUDIES, StudyReport, plan, study
from harness.studies.base import shared_targets
from harness.studies.interpreters import NAME as INTERPRETERS_STUDY
from harness.studies.versions import NAME as VERSIONS_STUDY
from harness.studies.versions.plan import sides


def with_interpreters(options: RunOptions) -> RunOptions:
    """The options with every interpreter they compare prepared: found or built, given its virtualenv, and
    asked which server modules it can run; with the versions study, both of its sides' virtualenvs too, on the
    harness's own interpreter (a study that compares none leaves them as they are)."""
    names = options.pythons or (DEFAULT_PYTHONS if INTERPRETERS_STUDY in options.studies else ())
    versions = sides(options.packages) if VERSIONS_STUDY in options.studies else ()
    if options.interpreters or not (names or versions):
        return options
    modules = sorted({variant.module for variant in (*SERVER_VARIANTS, *REST_VARIANTS)})
    found = [prepare(name, modules) for name in names]
    found += [prepare(side.label, modules, side.pins, own_interpreter()) for side in versions]
    return replace(options, pythons=tuple(names), interpreters=tuple(found))


def chosen(
    report: StudyReport,
    planned: StudyPlan,
    cells: list[Cell],
    comparisons: list[Comparison] | None = None,
    checks: list[Cell] | None = None,
) -> Chosen:
    """A study as a run measures it: its report half's name, question, settings and targets (the shared ones,
    then its own), with its plan half and what the options expand it to."""

    def targets(run: StudyRun, wall_seconds: float, full: bool) -> dict[str, Target]:
        return {**shared_targets(run, report, wall_seconds, full), **report.targets(run, wall_seconds, full)}

    return Chosen(
        report.name, report.question, dict(report.settings), targets, planned, cells, comparisons or [], checks or []
    )


def chosen_studies(options: RunOptions) -> list[Chosen]:
    """The studies options name, or the default ones, each with its comparisons and their cells (with --full those of
    its whole matrix, where it has them), or, cell by cell, its cells; with --tls or --mtls, every cell over that
    wire."""
    found = []
    for name in options.studies or DEFAULT_STUDIES:
        planned = plan(name)
        comparisons: list[Comparison] = []
        if options.full and planned.full_comparisons and not options.by_cell:
            comparisons = controlled_first(planned.full_comparisons(options))
        elif not options.full and not options.by_cell:
            comparisons = controlled_first(planned.comparisons(options))
        cells = [cell for each in comparisons for cell in each.cells] if comparisons else planned.cells(options)
        checks = planned.checks(options) if comparisons else []
        if options.wire != PLAINTEXT:
            cells, checks = ([replace(cell, wire=options.wire) for cell in each] for each in (cells, checks))
            comparisons = [each.over(options.wire) for each in comparisons]
        found.append(chosen(study(name), planned, cells, comparisons, checks))
    return found
