"""The run loop's arithmetic and options: run sizing, spread, targets, validation, CPU placement."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.arguments import parser
from harness.cli import run_options
from harness.method.verdicts import Method
from harness.plan.matrix import measured_requests, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.render.summaries import spread
from harness.results.records import StudyRun
from harness.results.run_meta import RunMeta, Target
from harness.run.runner import run_method
from harness.studies.choosing import chosen_studies
from harness.studies.stacks.targets import targets
from tests.runs import meta


def test_unknown_names_say_what_exists() -> None:
    with pytest.raises(KeyError, match="known: sync-w1, sync-w10"):
        server_variant("tornado")
    with pytest.raises(KeyError, match="unknown scenario"):
        scenario("s3-batch")


@pytest.mark.parametrize(
    ("warmup_rps", "concurrency", "requests"),
    [(4000.0, 50, 10_000), (10.0, 2, 25), (10.0, 50, 50), (1e9, 2, 50_000), (0.0, 10, 10)],
)
def test_measured_requests_last_a_few_seconds(warmup_rps: float, concurrency: int, requests: int) -> None:
    assert measured_requests(warmup_rps, concurrency, seconds=2.5) == requests


def test_spread_is_the_farthest_run_from_the_median() -> None:
    assert spread([100.0, 110.0, 95.0]) == pytest.approx(0.10)
    assert spread([5.0]) == 0.0
    assert spread([]) == 0.0


def test_targets_with_nothing_run() -> None:
    empty = StudyRun("stacks", Path("run"), RunMeta.from_json(meta("r", "cpu")), [])
    measured = targets(empty, wall_seconds=1300.0, full_matrix=True)
    assert measured["wall_time"] == Target(False, {"target_seconds": 900, "measured_seconds": 1300.0, "applies": True})
    assert measured["zero_non_ok"].met and measured["zero_non_ok"].gate
    assert measured["driver_not_busy"] == Target(True, {"highest": 0.0})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"levels": (0,)}, "concurrency levels must be >= 1"),
        ({"repeats": 0}, "repeats must be >= 1"),
        ({"requests": 10, "levels": (50,)}, "requests (10) must be >= the highest concurrency (50)"),
        ({"server_cpus": (7,), "available_cpus": (0, 1)}, "server CPUs [7] are not available"),
        ({"servers": ()}, "give at least one server variant"),
        ({"blocks": 1}, "blocks must be >= 2"),
        ({"cycles": 1}, "cycles must be >= 1, and only with blocks"),
        ({"blocks": 2, "cycles": 0}, "cycles must be >= 1, and only with blocks"),
    ],
)
def test_run_options_validate(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        RunOptions(out_dir=Path("out"), **changes)  # type: ignore[arg-type]


def test_a_server_given_every_cpu_shares_them_and_multiprocess_needs_two() -> None:
    shared = RunOptions(out_dir=Path("out"), server_cpus=(0, 1), available_cpus=(0, 1))
    assert shared.other_cpus == (0, 1)
    multi = server_variant("sync-w10-p2")
    assert shared.skip_reason(multi) == ""
    one = RunOptions(out_dir=Path("out"), server_cpus=(1,), available_cpus=(0, 1))
    assert "needs 2 server CPUs, given 1" in one.skip_reason(multi)


def test_no_server_cpus_means_everything_shares_every_cpu() -> None:
    options = run_options(parser().parse_args(["run-all", "--server-cpus", ""]))
    assert options.other_cpus == options.available_cpus


def test_quick_is_a_tiny_matrix_and_flags_override_it() -> None:
    quick = run_options(parser().parse_args(["run-all", "--quick", "--server-cpus", ""]))
    assert (quick.levels, quick.repeats, quick.requests) == ((2,), 1, 20)
    chosen = run_options(
        parser().parse_args(["run-all", "--quick", "--concurrency", "3,4", "--servers", "sync-w1", "--server-cpus", ""])
    )
    assert chosen.levels == (3, 4)
    assert [s.name for s in chosen.servers or ()] == ["sync-w1"]


@pytest.mark.parametrize(
    ("text", "cpus"), [("1", (1,)), ("0,1", (0, 1)), ("8-11", (8, 9, 10, 11)), ("0,4-5", (0, 4, 5)), ("", ())]
)
def test_server_cpus_take_lists_and_ranges(text: str, cpus: tuple[int, ...]) -> None:
    assert parser().parse_args(["run-all", "--server-cpus", text]).server_cpus == cpus


def test_a_malformed_cpu_list_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["run-all", "--server-cpus", "a-b"])
    assert "expected CPUs such as 1, 0,1 or 8-15" in capsys.readouterr().err


def test_a_target_is_measured_alone_and_must_be_host_port(capsys: pytest.CaptureFixture[str]) -> None:
    options = run_options(parser().parse_args(["run-all", "--target", "db.example:7000", "--target-name", "x"]))
    assert options.target == "db.example:7000"
    assert [server.name for server in options.servers or ()] == ["x"]
    assert options.server_cpus == ()
    with pytest.raises(ValueError, match="measured alone"):
        run_options(parser().parse_args(["run-all", "--target", "h:1", "--servers", "sync-w1"]))
    with pytest.raises(ValueError, match="HOST:PORT"):
        run_options(parser().parse_args(["run-all", "--target", "nohost"]))


def test_every_command_prints_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    root = parser()
    commands = next(action for action in root._actions if isinstance(action, argparse._SubParsersAction))
    for name in [None, *commands.choices]:
        with pytest.raises(SystemExit) as exit_:
            root.parse_args([*([name] if name else []), "--help"])
        assert exit_.value.code == 0, name
        assert "usage:" in capsys.readouterr().out


def test_each_study_runs_its_a_a_control_in_its_first_comparison_and_where_it_asks_for_one(tmp_path: Path) -> None:
    """The first comparison, and one whose slices are waves where the study holds one (stacks: s3-unary a region
    away); no other."""
    studies = [each for each in chosen_studies(RunOptions(tmp_path)) if each.comparisons]
    assert studies
    for each in studies:
        assert [comparison.controlled for comparison in each.comparisons] == [
            index == 0 or comparison.own_control for index, comparison in enumerate(each.comparisons)
        ], each.name
        assert all(comparison.slow for comparison in each.comparisons if comparison.own_control), each.name
    owning = {each.name: [c.workload for c in each.comparisons if c.own_control] for each in studies}
    assert owning == {name: ["s3-unary-region/c50"] if name == "stacks" else [] for name in owning}


def test_fixed_blocks_take_the_cycles_asked_for_or_the_methods() -> None:
    asked = run_method(RunOptions(out_dir=Path("out"), blocks=2, cycles=1))
    assert (asked.min_blocks, asked.max_blocks, asked.cycles) == (2, 2, 1)
    assert run_method(RunOptions(out_dir=Path("out"), blocks=3)).cycles == Method().cycles
    for flag in ("--blocks", "--rounds"):  # --rounds: the flag's old name, still taken
        assert run_options(parser().parse_args(["run-all", flag, "4", "--server-cpus", ""])).blocks == 4
