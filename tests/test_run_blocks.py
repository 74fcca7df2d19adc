"""`python -m harness run-all` in blocks end to end: a small full matrix (the blocks' order, floors), the default
method's pilot and race within a budget, a run over TLS, and the capacity study's SLO searches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.method.contest import BEHIND
from harness.method.pilot import Pilot
from harness.results.records import all_runs
from tests.runs import RUN_TIMEOUT, harness, served_over

# Every test here reads a run-all of real servers and tools, its own or its module's: each gets a run's timeout.
pytestmark = [pytest.mark.usefixtures("tools"), pytest.mark.timeout(RUN_TIMEOUT)]


@pytest.fixture(scope="module")
def full_in_blocks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One small full matrix in blocks, read by the tests of blocks, floors and --full: the stacks study's hello
    (with the stacks' floors, which --full measures) and s3-unary at 2 clients, two blocks each."""
    out = tmp_path_factory.mktemp("full-in-blocks")
    args = ["--study", "stacks", "--full", "--servers", "sync-w10,aio-uvloop", "--scenarios", "hello,s3-unary"]
    done = harness(
        "run-all",
        *args,
        "--concurrency",
        "2",
        "--requests",
        "20",
        "--blocks",
        "2",
        "--cycles",
        "1",
        "--seed",
        "1",
        *("--out", str(out)),
    )
    return out, done


def test_a_comparison_in_blocks_alternates_mirrored_slices_of_warm_servers_and_records_the_order(
    full_in_blocks: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    tmp_path = full_in_blocks[0]
    (run_dir,) = all_runs(tmp_path)
    compared = json.loads((run_dir / "stacks" / "comparisons" / "hello__c2.json").read_text())
    assert compared["seed"] == 1 and compared["reference"] == "sync-w10" and compared["control"] == "sync-w10~aa"
    labels = ["aio-uvloop", "aio-uvloop-minimal", "sync-w10", "sync-w10-minimal", "sync-w10~aa"]  # floors on hello
    cycles = compared["method"]["cycles"]
    assert compared["method"]["design"] == "blocks" and len(compared["orders"]) == 2
    for plan in compared["orders"]:
        assert sorted(set(plan)) == labels and all(plan.count(label) == 2 * cycles for label in labels)
        first = plan[: len(labels)]
        assert plan[len(labels) : 2 * len(labels)] == first[::-1]  # a mirrored cycle
    # --blocks 2 makes two the minimum and the cap: each stops at block 2, known already (clear, precise) or not (cap)
    assert {label: stop["round"] for label, stop in compared["stopped"].items()} == {
        label: 2 for label in labels if label != "sync-w10"
    }
    assert {stop["reason"] for stop in compared["stopped"].values()} <= {"clear", "precise", "cap", BEHIND}
    assert set(compared["costs"]) == {"start", "warm", "slice_overhead"}
    reference = json.loads((run_dir / "stacks" / "cells" / "hello" / "sync-w10" / "c2.json").read_text())
    slices = sorted((each["role"], each["round"], each["slice"]) for each in reference["repeats"])
    assert [(role, block) for role, block, _ in slices] == [
        (role, block) for role in ("control", "round") for block in (1, 2) for _ in range(2 * cycles)
    ]
    assert all(each["neighbour_cpu_seconds"] is not None for each in reference["repeats"])  # idle servers measured
    shown = harness("verdicts", "--json", "--out", str(tmp_path), timeout=60)
    hello = [each["alternative"] for each in json.loads(shown.stdout) if each["workload"] == "hello/c2"]
    assert hello == [*labels[:2], labels[3], labels[4]]
    summary = (tmp_path / "README.md").read_text()
    decided = summary.split("## Decide", 1)[1]
    assert "| Handlers without I/O: which stack? | **" in decided and "-minimal** |" not in decided  # never a floor


def test_full_measures_a_small_matrix_in_blocks_and_says_its_estimate_before_it_starts(
    full_in_blocks: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    tmp_path, done = full_in_blocks
    assert "planned: 2 comparisons of 6 cells in" in done.stderr  # before the pilot's first line
    assert done.stderr.index("planned:") < done.stderr.index("block 1 done")
    (run_dir,) = all_runs(tmp_path)
    unary = json.loads((run_dir / "stacks" / "comparisons" / "s3-unary__c2.json").read_text())
    assert len(unary["orders"]) == 2 and unary["method"]["mirrored"] is False and unary["method"]["cycles"] == 1
    assert sorted(unary["orders"][0]) == ["aio-uvloop", "sync-w10"]  # a slow workload: each label once a block
    hello = json.loads((run_dir / "stacks" / "comparisons" / "hello__c2.json").read_text())
    assert hello["control"] == "sync-w10~aa" and "aio-uvloop-minimal" in hello["alternatives"]


@pytest.mark.timeout(RUN_TIMEOUT)  # the default method's path: a pilot, then a race; bounded by its own timeout
@pytest.mark.slow
def test_the_default_method_runs_its_pilot_then_races_its_comparisons_within_a_budget_in_seconds(
    tmp_path: Path,
) -> None:
    """Slow (about 80 s here): the pilot and a race for a budget in seconds, the default run's whole path."""
    args = ["--study", "stacks", "--servers", "sync-w10,aio-uvloop", "--scenarios", "hello", "--concurrency", "2,10"]
    harness("run-all", *args, "--budget-minutes", "0.75", "--seed", "11", "--out", str(tmp_path), timeout=RUN_TIMEOUT)
    (run_dir,) = all_runs(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "complete" and meta["budget_seconds"] == 45
    # The pilot measured first, an A/A pair in blocks of several cycles: its share of 45 s is 2.25 s, and it
    # still took the two blocks an interval needs.
    pilot = Pilot.from_json(meta["pilot"])
    assert pilot.design == "blocks" and pilot.blocks == 2 and pilot.noise.cycle_sd is not None
    assert (run_dir / "pilot" / "comparisons").is_dir()
    # Then the race, after the pilot (it measures by the pilot's slice): each comparison in cycles fitted to its
    # share (none left after the pilot), given the two blocks an interval needs and no more, the budget spent; the
    # control at the highest level, no floors without --floors.
    for workload, labels in (("hello__c10", 3), ("hello__c2", 2)):
        compared = json.loads((run_dir / "stacks" / "comparisons" / f"{workload}.json").read_text())
        assert compared["method"]["slice_seconds"] == pilot.slice_for_run, workload
        assert compared["method"]["cycles"] == 1, workload
        assert len(compared["orders"]) == 2 and len(compared["orders"][0]) == 2 * labels, workload
        # The budget stops the race; a label the selection rule put clearly behind the pick at its second block
        # leaves it for that reason instead (which one does depends on the machine's noise, never on the budget).
        reasons = {stop["reason"] for stop in compared["stopped"].values()}
        assert "budget" in reasons and reasons <= {"budget", BEHIND}, workload
    shown = json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
    assert {each["workload"] for each in shown} == {"hello/c10", "hello/c2"}


def test_a_run_over_tls_serves_and_drives_every_cell_over_it(tmp_path: Path) -> None:
    args = ["--study", "stacks", "--servers", "sync-w10,connect-pyvoy", "--scenarios", "hello", "--concurrency", "2"]
    harness("run-all", "--tls", *args, "--requests", "20", "--blocks", "2", "--cycles", "1", "--out", str(tmp_path))
    (run_dir,) = all_runs(tmp_path)
    served_over(run_dir, "tls")


@pytest.mark.slow
def test_a_small_capacity_run_records_every_step_and_renders(tmp_path: Path) -> None:
    """Slow (about 90 s here): an SLO search steps an open-loop rate until two steps agree, twice a cell; its
    time is in the steps, each 10 s of real load however few its calls."""
    harness(
        *("run-all", "--study", "capacity", "--servers", "aio-uvloop,sync-w10"),
        *("--scenarios", "hello,s3-unary-100ms,s3-unary-100ms-jitter20"),  # the jitter scenario, named, is run
        *("--requests", "20", "--repeats", "2", "--out", str(tmp_path)),  # each SLO search twice
    )
    (run_dir,) = all_runs(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert list(meta["studies"]) == ["capacity"]
    assert meta["studies"]["capacity"]["targets"]["no_failed_cell"]["met"]
    cell = json.loads((run_dir / "capacity" / "cells" / "hello" / "aio-uvloop" / "c50.json").read_text())
    roles = [repeat["role"] for repeat in cell["repeats"]]
    assert roles[0] == "closed-loop" and roles[-1] == "low-load"
    # --requests makes each search a smoke test of three rates, each taken until two steps agree; --repeats 2 two
    # SLO searches, each step carrying its search's number
    steps = [repeat for repeat in cell["repeats"] if repeat["role"] == "step"]
    assert 12 <= len(steps) <= 18 and roles.count("saturation") >= 2
    assert [repeat["round"] for repeat in steps] == sorted(repeat["round"] for repeat in steps)
    assert {repeat["round"] for repeat in steps} == {1, 2}
    assert len({(repeat["report_file"]) for repeat in steps}) == len(steps)
    step = json.loads((run_dir / "capacity" / cell["repeats"][1]["report_file"]).read_text())
    assert step["options"]["async"] is True and step["options"]["rps"] == 100
    # The study asks the servers for their own counters: the event loop's lag checks ran during each run.
    assert all(repeat["server_counters"]["lag_checks"] > 0 for repeat in cell["repeats"])
    sync = json.loads((run_dir / "capacity" / "cells" / "hello" / "sync-w10" / "c50.json").read_text())
    assert all(repeat["server_counters"]["voluntary_switches"] > 0 for repeat in sync["repeats"])
    assert all(repeat["server_counters"]["lag_checks"] == 0 for repeat in sync["repeats"])
    assert step["count"] == 20
    jittered = run_dir / "capacity" / "cells" / "s3-unary-100ms-jitter20" / "aio-uvloop" / "c50.json"
    assert json.loads(jittered.read_text())["jitter_ms"] == 20
    assert not (run_dir / "capacity" / "cells" / "s3-unary-100ms-jitter20" / "sync-w10").exists()
    assert (tmp_path / "capacity" / "hello.md").is_file()
    assert (tmp_path / "capacity" / "charts" / "s3-unary-100ms.png").is_file()
    summary = (tmp_path / "README.md").read_text()
    # the stacks side by side where each held the SLO at some rate, else each one's capacity (which, the machine says)
    compared, each = "The load one core takes within its p99 SLO: which stack?", "How much load does one core take"
    assert f"**{compared}** " in summary or f"**{each} within our latency SLO?** On " in summary
    assert "Closed loop against open loop" in (tmp_path / "capacity" / "README.md").read_text()


def test_noise_measures_an_a_a_pair_alone_and_says_how_precise_this_machine_is() -> None:
    """`python -m harness noise`, as the README offers it, in half a minute: it reads its A/A pair back as a run's
    pilot does (it had broken unseen: its run's metadata lacked the machine the trust rule looks its class up by)."""
    done = harness("noise", "--minutes", "0.5")
    assert "an A/A pair resolved" in done.stdout and "Costs: a server start" in done.stdout
