"""A plan dealt into shards (harness.plan.shards, run.cells.sharded), each shard's run merged with the others of
its machine class (harness.results.shards), and a shard's arguments and core pair on a fleet (harness.run.fleet).
Needs no tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.method.verdicts import Method
from harness.plan.options import RunOptions
from harness.plan.shards import Shard, deal, parse_shard
from harness.results.files import read_json, write_json_atomic
from harness.results.shards import merge_shards, shard_runs
from harness.run.cells import sharded
from harness.run.fleet import pair_cpus, shard_argv
from harness.studies.choosing import chosen_studies
from tests.runs import make_blocks_run

OUT = Path("/nonexistent-results")


def test_the_costliest_go_first_to_the_least_loaded_shard() -> None:
    assert deal([5.0, 1.0, 4.0, 3.0, 3.0], 2) == [0, 1, 1, 1, 0]  # 5+3 against 4+3+1
    assert deal([2.0, 2.0, 2.0], 3) == [0, 1, 2] and deal([1.0], 1) == [0]
    with pytest.raises(ValueError, match="at least one"):
        deal([1.0], 0)


def test_a_shard_is_i_of_n_and_names_its_run_by_its_plan() -> None:
    shard = parse_shard("2/3", "20260101T000000Z")
    assert (shard.index, shard.count, shard.run_id) == (2, 3, "20260101T000000Z-s2")
    for wrong in ("0/2", "3/2", "1-2", "a/b"):
        with pytest.raises(ValueError):
            parse_shard(wrong)


def test_the_shards_of_a_plan_measure_its_comparisons_once_each_with_every_study_s_control() -> None:
    plans = chosen_studies(RunOptions(OUT, server_cpus=(1,)))
    method = Method()
    whole = {(each.name, comparison.workload) for each in plans for comparison in each.comparisons}
    parts = [sharded(plans, Shard(index, 3, "p"), method) for index in (1, 2, 3)]
    dealt = [(each.name, comparison.workload) for part in parts for each in part for comparison in each.comparisons]
    assert sorted(dealt) == sorted(whole) and len(dealt) == len(whole)
    for part in parts:
        for each in part:
            assert [comparison.controlled for comparison in each.comparisons][:1] == [True]  # its A/A control
            assert sum(comparison.controlled and not comparison.own_control for comparison in each.comparisons) == 1
            assert all(comparison.controlled for comparison in each.comparisons if comparison.own_control)
            assert {cell.key for cell in each.cells} == {
                cell.key for comparison in each.comparisons for cell in comparison.cells
            }
    checks = [cell.key for part in parts for each in part for cell in each.checks]
    assert sorted(checks) == sorted(cell.key for each in plans for cell in each.checks)  # each once
    loads = [sum(c.estimate_seconds(method) for each in part for c in each.comparisons) for part in parts]
    assert max(loads) < 1.4 * min(loads)  # about even


def shard_of(root: Path, plan: str, index: int, count: int, cpu: str = "Test CPU A") -> Path:
    """A finished run as one shard of a plan: make_blocks_run's, renamed and marked."""
    made = make_blocks_run(root / f"made-{index}-{cpu.replace(' ', '')}")
    target = root / "runs" / f"{plan}-s{index}"
    target.parent.mkdir(parents=True, exist_ok=True)
    made.rename(target)
    meta = read_json(target / "run.json")
    meta["environment"]["cpu_model"] = cpu
    write_json_atomic(
        target / "run.json", {**meta, "run_id": target.name, "shard": Shard(index, count, plan).to_json()}
    )
    return target


def test_the_shards_of_one_machine_class_merge_into_one_run_and_other_classes_stay_apart(tmp_path: Path) -> None:
    plan = "20260101T000000Z"
    first = shard_of(tmp_path, plan, 1, 3)
    shard_of(tmp_path, plan, 2, 3)
    shard_of(tmp_path, plan, 3, 3, cpu="Another CPU")
    (tmp_path / "runs" / f"{plan}-s2" / "stacks" / "comparisons" / "hello__c50.json").rename(
        tmp_path / "runs" / f"{plan}-s2" / "stacks" / "comparisons" / "hello__c10.json"
    )  # the second shard measured another comparison
    assert [run.name for run in shard_runs(tmp_path / "runs", plan)] == [f"{plan}-s{i}" for i in (1, 2, 3)]
    merged = merge_shards(tmp_path / "runs", plan)
    assert [run.name for run in merged] == [plan, f"{plan}-c2"]
    assert not first.exists() and shard_runs(tmp_path / "runs", plan) == []
    meta = read_json(merged[0] / "run.json")
    assert meta["run_id"] == plan and meta["status"] == "incomplete"  # three shards, two of this class
    assert [each["index"] for each in meta["shard"]["shards"]] == [1, 2]
    assert sorted(path.name for path in (merged[0] / "stacks" / "comparisons").iterdir()) == [
        "hello__c10.json",
        "hello__c50.json",
    ]
    other = read_json(merged[1] / "run.json")
    assert other["environment"]["cpu_model"] == "Another CPU" and other["shard"]["shards"][0]["index"] == 3


def test_a_shard_takes_the_plan_s_arguments_but_the_fleet_s_and_a_core_pair_of_its_own() -> None:
    argv = ["--study", "stacks", "--cluster", "tcp://h:8786", "--pairs=2", "--shards", "3", "--budget-minutes", "5"]
    assert shard_argv(argv, 2, 3, "P") == [
        "--study",
        "stacks",
        "--budget-minutes",
        "5",
        "--shard",
        "2/3",
        "--plan",
        "P",
    ]
    assert pair_cpus(0, 2, range(8)) == (0, 1, 2, 3) and pair_cpus(1, 2, range(8)) == (4, 5, 6, 7)
    with pytest.raises(ValueError, match="need at least 4 CPUs"):
        pair_cpus(0, 2, range(2))
    assert json.loads(json.dumps(Shard(1, 2, "P").to_json())) == {"plan": "P", "index": 1, "count": 2}
