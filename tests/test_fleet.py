"""A plan's shards on a Dask LocalCluster of one worker (harness.run.fleet): on this 2-core machine the shards run
one after the other, each a real run-all on real servers; their merged run holds the same comparisons, cells and
verdict fields as the same plan unsharded, and the report decides from it. A shard killed mid-run is reported,
the other kept, and the plan exits non-zero."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.analysis.judging import run_verdicts
from harness.paths import ROOT
from harness.render.markdown import write_report
from harness.results.files import read_json
from harness.results.records import all_runs
from tests.runs import INTERRUPTED_GRACE, run_harness, started_by_harness

PLAN = [
    "--study", "stacks", "--scenarios", "hello", "--concurrency", "2,10", "--servers", "sync-w10,aio-uvloop",
    "--blocks", "2", "--cycles", "1", "--fresh",
]  # fmt: skip
LONG = 900  # seconds: three small runs on real servers


def shape(run_dir: Path) -> tuple[list[str], list[str], list[tuple[str, ...]]]:
    """What a run measured, whatever the rates: its comparisons, its cells, and each verdict (but the A/A controls':
    each shard holds its own) with its fields."""
    comparisons = sorted(path.name for path in run_dir.glob("*/comparisons/*.json"))
    cells = sorted(
        str(path.relative_to(run_dir))
        for path in run_dir.glob("stacks/cells/*/*/c*.json")
        if re.fullmatch(r"c\d+\.json", path.name)  # a cell's record, not its slices'
    )
    verdicts = sorted(
        (each.workload, each.alternative, *sorted(each.to_json())) for each in run_verdicts(run_dir) if not each.control
    )
    return comparisons, cells, verdicts


@pytest.mark.usefixtures("tools")
@pytest.mark.timeout(LONG)
@pytest.mark.slow
def test_a_plan_as_two_shards_on_one_worker_measures_what_it_does_unsharded(tmp_path: Path) -> None:
    """Slow (about 75 s here): three run-alls of real servers, the plan whole and as two shards on a Dask worker;
    their slices are 20 calls each, since only what they measure is compared, not how fast."""
    before = started_by_harness()
    small = [*PLAN, "--requests", "20"]
    whole = run_harness("run-all", *small, "--out", str(tmp_path / "whole"), timeout=LONG / 3)
    assert whole.returncode == 0, whole.stderr[-3000:]
    fleet = run_harness(
        "run-all", *small, "--pairs", "1", "--shards", "2", "--out", str(tmp_path / "fleet"), timeout=LONG / 2
    )
    assert fleet.returncode == 0, (fleet.stdout + fleet.stderr)[-3000:]
    assert "shard 1/2 done" in fleet.stdout and "shard 2/2 done" in fleet.stdout
    (merged,) = all_runs(tmp_path / "fleet")
    (alone,) = all_runs(tmp_path / "whole")
    meta = read_json(merged / "run.json")
    assert meta["status"] == "complete" and [each["index"] for each in meta["shard"]["shards"]] == [1, 2]
    assert shape(merged) == shape(alone)
    # each shard measured one of the two comparisons, each with the study's A/A control
    records = [json.loads(path.read_text()) for path in merged.glob("stacks/comparisons/*.json")]
    assert sorted(each["control"] for each in records) == ["sync-w10~aa", "sync-w10~aa"]
    write_report(tmp_path / "fleet")
    decide = (tmp_path / "fleet" / "README.md").read_text().split("## Decide", 1)[1]
    assert "| Handlers without I/O: which stack? |" in decide and f"`{merged.name}`" in decide
    assert started_by_harness() <= before


@pytest.mark.usefixtures("tools")
@pytest.mark.timeout(LONG)
def test_a_shard_killed_mid_run_is_reported_the_other_kept_and_the_plan_exits_non_zero(tmp_path: Path) -> None:
    before = started_by_harness()
    argv = [sys.executable, "-m", "harness", "run-all", *PLAN, "--pairs", "1", "--shards", "2"]
    with subprocess.Popen(
        [*argv, "--out", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as fleet:
        try:
            killed = kill_when_running("2/2", deadline=time.monotonic() + LONG / 2)
            stdout, stderr = fleet.communicate(timeout=LONG / 2)
        except BaseException:
            fleet.send_signal(signal.SIGINT)
            fleet.communicate(timeout=INTERRUPTED_GRACE)
            raise
    assert killed and fleet.returncode != 0, (stdout + stderr)[-3000:]
    assert "shard 2/2 failed" in stdout and "failed: shard 2/2" in stdout
    (merged,) = all_runs(tmp_path)
    shards = read_json(merged / "run.json")["shard"]["shards"]
    statuses = {each["index"]: each["status"] for each in shards}
    assert statuses[1] == "complete" and statuses.get(2) != "complete"  # the first's results kept
    assert list(merged.glob("stacks/comparisons/*.json"))
    time.sleep(1)
    assert started_by_harness() <= before


def kill_when_running(shard: str, deadline: float) -> bool:
    """End the run-all of this shard (`--shard 2/2`) a few seconds into its run with SIGTERM, as a scheduler ending
    a job does (the harness then stops what it started); whether one was found."""
    while time.monotonic() < deadline:
        for process in psutil.process_iter(["cmdline", "create_time"]):
            argv = process.info["cmdline"] or []
            if "--shard" in argv and shard in argv and time.time() - process.info["create_time"] > 8:
                process.send_signal(signal.SIGTERM)
                return True
        time.sleep(0.5)
    return False


PAIRS_PLAN = [
    "--study", "stacks", "--scenarios", "hello", "--concurrency", "10,50", "--servers", "sync-w10,aio-uvloop",
    "--blocks", "6", "--fresh",
]  # fmt: skip


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 4, reason="core pairs beside each other need a host of 4 cores")
@pytest.mark.usefixtures("tools")
@pytest.mark.timeout(LONG)
def test_core_pairs_beside_each_other_read_what_one_pair_alone_reads(tmp_path: Path) -> None:
    """On a host of 4 cores or more: the same comparison (hello at 50 clients, sync-w10 against aio-uvloop, with
    each shard's A/A control) as two shards on two core pairs at once, and as one shard alone. Pairs that disturb
    each other would widen the controls or move the ratio: each shard's control must hold 1, and the ratio beside
    the other pair must be compatible with the ratio alone (`python -m harness compare`'s moved test)."""
    alone = run_harness(
        "run-all", *PAIRS_PLAN, "--pairs", "1", "--shards", "1", "--out", str(tmp_path / "alone"), timeout=LONG / 3
    )
    beside = run_harness(
        "run-all", *PAIRS_PLAN, "--pairs", "2", "--shards", "2", "--out", str(tmp_path / "beside"), timeout=LONG / 3
    )
    assert alone.returncode == beside.returncode == 0, (alone.stderr + beside.stderr)[-3000:]
    (one,), (two,) = all_runs(tmp_path / "alone"), all_runs(tmp_path / "beside")
    controls = [each for each in run_verdicts(two) if each.control]
    assert controls and all(each.ratio.low <= 1 <= each.ratio.high for each in controls)
    ratio = {each.workload: each.ratio for each in run_verdicts(one) if each.alternative == "aio-uvloop"}
    for each in run_verdicts(two):
        if each.alternative == "aio-uvloop":
            found = ratio[each.workload]
            assert each.ratio.low <= found.high and found.low <= each.ratio.high  # the intervals overlap
