"""How long each command takes, from runs' metadata alone."""

from pathlib import Path

from harness.render.durations import BENCH, durations, how_long
from harness.render.table import Table
from harness.results.run_context import Environment, Pinning
from harness.results.run_meta import RunMeta, StudyEntry, Thresholds

DEFAULT = ("stacks", "streaming")
COMMANDS = {"wire": "python -m harness run-all --study wire"}


def meta(
    minutes: float,
    *studies: str,
    budget: float = 1680.0,
    status: str = "complete",
    aside: bool = False,
    shard: int = -1,
) -> RunMeta:
    return RunMeta(
        "run",
        "",
        Environment("Test CPU", 2),
        {},
        Pinning([1], [0]),
        Thresholds(),
        {name: StudyEntry("", True, {}, {}) for name in studies},
        status=status,
        wall_seconds=minutes * 60,
        budget_seconds=budget,
        aside=aside,
        shard={} if shard < 0 else {"index": shard},
    )


def test_bench_is_the_runs_of_every_default_study_at_the_newest_budget() -> None:
    metas = {
        Path("a"): meta(19.0, *DEFAULT, budget=1140.0),  # an older budget: another command then
        Path("b"): meta(28.2, *DEFAULT),
        Path("c"): meta(27.9, *DEFAULT),
        Path("d"): meta(40.0, *DEFAULT),
        Path("e"): meta(3.0, *DEFAULT, aside=True),  # aside: a few comparisons, not the command
        Path("f"): meta(9.0, *DEFAULT, shard=0),  # one shard of a fleet's run
        Path("g"): meta(30.0, "wire"),
        Path("h"): meta(50.0, "wire", status="failed"),
        Path("i"): meta(5.0, "stacks"),  # a default study alone: not `make bench`
    }
    found = durations(metas, DEFAULT, COMMANDS)
    assert set(found) == {BENCH, COMMANDS["wire"]}
    bench = found[BENCH]
    assert (bench.minutes, bench.low, bench.high, bench.runs) == (28.2, 27.9, 40.0, 3)
    assert bench.text == "28 min (27.9 to 40.0 over 3 runs)"
    assert found[COMMANDS["wire"]].text == "30 min (1 run)"


def test_the_section_lists_make_bench_first_in_numbers() -> None:
    found = durations({Path("a"): meta(30.0, "wire"), Path("b"): meta(28.0, *DEFAULT)}, DEFAULT, COMMANDS)
    table = next(block for block in how_long(found) if isinstance(block, Table))
    assert [each[0] for each in table.rows] == [f"`{BENCH}`", f"`{COMMANDS['wire']}`"]
    assert table.values()[1][1:5] == [28, 28, 28, "min"]
    assert how_long({}) == []
