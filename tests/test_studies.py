"""The study registry and each study's expansion of its axes into cells, without running anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main, parser, run_options
from harness.drivers import DRIVERS
from harness.matrix import CONCURRENCY_LEVELS, SCENARIOS, SERVER_VARIANTS, scenario, server_variant
from harness.options import RunOptions
from harness.runner import chosen_studies
from harness.studies import DEFAULT_STUDIES, STUDIES, study

OUT = Path("out")


def test_every_study_is_registered_data_with_a_known_driver() -> None:
    names = [each.name for each in STUDIES]
    assert len(names) == len(set(names))
    for each in STUDIES:
        assert each.question.endswith("?")
        assert each.follows and each.axes and each.repeats >= 1
        assert each.driver in DRIVERS
        for axis in each.axes:  # every axis is set by a run-all option that takes its default values
            parser().parse_args(["run-all", axis.option, ",".join(axis.values)])
    assert "stacks" in DEFAULT_STUDIES


def test_unknown_study_says_what_exists() -> None:
    with pytest.raises(KeyError, match="unknown study 'nosuch'; known: stacks"):
        study("nosuch")


def test_stacks_expands_to_the_original_matrix() -> None:
    cells = study("stacks").cells(RunOptions(OUT))
    pairs = [(server, each) for server in SERVER_VARIANTS for each in SCENARIOS if server.runs(each.name)]
    assert len(cells) == len(pairs) * len(CONCURRENCY_LEVELS) == 268
    assert len({cell.key for cell in cells}) == len(cells)
    assert cells[0].key == "hello/sync-w1/c2"
    # one scenario at a time, each variant's levels ascending together: one server start serves them
    assert [cell.concurrency for cell in cells[:4]] == list(CONCURRENCY_LEVELS)
    assert not any(cell.server.name.endswith("-pymongo") and "mongo" not in cell.scenario.name for cell in cells)


def test_options_narrow_the_axes() -> None:
    options = RunOptions(OUT, servers=(server_variant("sync-w1"),), scenarios=(scenario("hello"),), levels=(3, 4))
    assert [cell.key for cell in study("stacks").cells(options)] == ["hello/sync-w1/c3", "hello/sync-w1/c4"]
    assert not study("stacks").is_default_matrix(options)


def test_the_default_options_are_the_default_matrix() -> None:
    options = run_options(parser().parse_args(["run-all", "--server-cpus", ""]))
    assert study("stacks").is_default_matrix(options)
    assert [each.name for each in chosen_studies(options)] == list(DEFAULT_STUDIES)
    assert not study("stacks").is_default_matrix(run_options(parser().parse_args(["run-all", "--repeats", "5"])))


def test_study_flag_picks_studies_and_refuses_unknown_ones(capsys: pytest.CaptureFixture[str]) -> None:
    options = run_options(parser().parse_args(["run-all", "--study", "stacks"]))
    assert options.studies == ("stacks",)
    with pytest.raises(SystemExit):
        main(["run-all", "--study", "stacks,nosuch"])
    assert "unknown study 'nosuch'" in capsys.readouterr().err


def test_studies_command_lists_questions_and_cell_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "stacks (default): Which gRPC server stack should we run, and when does async pay off?" in out
    assert "268 cells, 3 measured runs each" in out
