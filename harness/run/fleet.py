"""A plan's shards on a Dask cluster (issue 56): each shard a task that runs `run-all --shard i/n --plan P` in a
fresh process on its worker's host and returns its run's files; one shard at a time per worker, through a worker
resource (BENCH: give each bench host's worker one), or, on one large host, one per core pair (`--pairs N`: a
LocalCluster of N workers, each pinning its shard to its own server core and driver cores). The client writes each
shard's run under results/runs/ atomically as it arrives, says which shards are running, done or failed and when
the plan should end, and merges the shards of each machine class into one run (harness.results.shards). A shard
that fails or is lost is reported, the others are kept, and the plan exits non-zero."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.paths import ROOT
from harness.results.archive import pack
from harness.results.shards import merge_shards

BENCH = "bench"  # the worker resource a shard takes: one per bench host, or per core pair
FLEET_FLAGS = {"--cluster": 1, "--pairs": 1, "--shards": 1}  # run-all's flags that the shards do not take


@dataclass(frozen=True)
class ShardResult:
    """What a shard's task returned: its index, the run's exit status, the tail of what it printed, and its run's
    files as a gzipped tar (empty where none were written)."""

    index: int
    status: int
    log: str
    archive: bytes


def shard_argv(argv: Sequence[str], index: int, count: int, plan: str) -> list[str]:
    """run-all's arguments for one shard: the plan's own, less the fleet's flags, with its shard and plan."""
    found: list[str] = []
    skip = 0
    for each in argv:
        if skip:
            skip -= 1
            continue
        flag = each.split("=", 1)[0]
        if flag in FLEET_FLAGS:
            skip = FLEET_FLAGS[flag] if "=" not in each else 0
            continue
        found.append(each)
    return [*found, "--shard", f"{index}/{count}", "--plan", plan]


def pair_cpus(pair: int, pairs: int, cpus: Sequence[int]) -> tuple[int, ...]:
    """The CPUs of core pair `pair` of `pairs` on a host with these CPUs: an even share each, the last its server's."""
    per = len(cpus) // pairs
    if per < 2:
        raise ValueError(f"{pairs} pairs need at least {2 * pairs} CPUs, the host has {len(cpus)}")
    return tuple(sorted(cpus)[pair * per : (pair + 1) * per])


def run_shard(argv: list[str], pairs: int = 0) -> ShardResult:
    """One shard in a fresh process on this worker's host: `python -m harness run-all ARGV` into a scratch results
    folder, its run's files returned as a gzipped tar. With `pairs`, pinned to this worker's core pair (its name is
    its pair's number) with that pair's last CPU as the server's."""
    index = int(argv[argv.index("--shard") + 1].split("/")[0])
    command = [sys.executable, "-m", "harness", "run-all", *argv]
    if pairs:
        from distributed import get_worker

        cpus = pair_cpus(int(get_worker().name), pairs, sorted(os.sched_getaffinity(0)))
        listed = ",".join(map(str, cpus))
        command = ["taskset", "-c", listed, *command, "--server-cpus", str(cpus[-1])]
    with tempfile.TemporaryDirectory(prefix="bench-shard-") as scratch:
        finished = subprocess.run([*command, "--out", scratch], cwd=ROOT, capture_output=True, text=True, check=False)
        archive = io.BytesIO()
        runs = Path(scratch) / "runs"
        with tarfile.open(fileobj=archive, mode="w:gz") as tar:
            for run in sorted(runs.iterdir()) if runs.is_dir() else []:
                if run.is_dir():  # the shard's folder; not the file it packed itself into
                    tar.add(run, arcname=run.name)
        tail = (finished.stdout[-2000:] + finished.stderr[-2000:]).strip()
        return ShardResult(index, finished.returncode, tail, archive.getvalue())


def write_shard(result: ShardResult, runs_dir: Path) -> list[Path]:
    """A shard's runs under runs_dir, each whole or not at all: unpacked beside it, then renamed into place."""
    written = []
    runs_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".shard-", dir=runs_dir) as scratch:
        with tarfile.open(fileobj=io.BytesIO(result.archive), mode="r:gz") as tar:
            tar.extractall(scratch, filter="data")
        for run in sorted(Path(scratch).iterdir()):
            target = runs_dir / run.name
            if target.exists():
                shutil.rmtree(target)
            run.rename(target)
            written.append(target)
    return written


@dataclass
class Progress:
    """The shards' states and the plan's expected end, said as they change."""

    count: int
    begun: float
    say: Callable[[str], None]

    def __post_init__(self) -> None:
        self.states = dict.fromkeys(range(1, self.count + 1), "running")
        self.seconds: list[float] = []

    def ended(self, index: int, state: str) -> None:
        self.states[index] = state
        self.seconds.append(time.monotonic() - self.begun)
        left = [each for each, found in self.states.items() if found == "running"]
        end = f"; the rest should end in about {max(self.seconds) - min(self.seconds) + 60:.0f} s" if left else ""
        counted = {state: sum(1 for found in self.states.values() if found == state) for state in ("done", "failed")}
        self.say(
            f"shard {index}/{self.count} {state}: {counted['done']} done, {counted['failed']} failed, "
            f"{len(left)} running{end}"
        )


def run_fleet(
    argv: Sequence[str],
    count: int,
    out_dir: Path,
    address: str | None = None,
    pairs: int = 0,
    say: Callable[[str], None] = print,
) -> int:
    """Every shard of a plan as a task on the cluster at `address` (or a LocalCluster: `pairs` workers, each on its
    own core pair; one worker where pairs is 0), each written as it arrives, then merged by machine class. 0 when
    every shard completed and passed its gates, else 1."""
    from distributed import Client, LocalCluster, as_completed

    plan = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    runs_dir = out_dir / "runs"
    progress = Progress(count, time.monotonic(), say)
    failed: list[str] = []
    cluster: Any = None
    if address is None:
        cluster = LocalCluster(
            n_workers=max(1, pairs), threads_per_worker=1, processes=True, resources={BENCH: 1}, dashboard_address=None
        )
    try:
        with Client(address or cluster) as client:
            say(f"plan {plan}: {count} shards on {len(client.scheduler_info()['workers'])} workers")
            futures = {
                client.submit(
                    run_shard,
                    shard_argv(argv, index, count, plan),
                    pairs,
                    resources={BENCH: 1},
                    pure=False,
                    key=f"shard-{plan}-{index}",
                ): index
                for index in range(1, count + 1)
            }
            for future in as_completed(futures):
                index = futures[future]
                try:
                    result: ShardResult = future.result()
                except Exception as error:  # the task was lost or raised: the others go on
                    failed.append(f"shard {index}/{count}: {type(error).__name__}: {error}")
                    progress.ended(index, "failed")
                    continue
                write_shard(result, runs_dir)
                if result.status != 0:
                    failed.append(f"shard {index}/{count} exited {result.status}: {result.log[-500:]}")
                progress.ended(index, "done" if result.status == 0 else "failed")
    finally:
        if cluster is not None:
            cluster.close()
    for run in merge_shards(runs_dir, plan):
        say(f"merged: {pack(run)}")
    for why in failed:
        say(f"failed: {why}")
    return 1 if failed else 0
