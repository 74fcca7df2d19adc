"""`python -m harness run-all` end to end, cell by cell: the quick smoke matrix (every file, zero errors), a target
started elsewhere, and a run stopped by a signal stopping every process it started."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from harness.arguments import QUICK_SERVERS
from harness.paths import ROOT
from harness.plan.matrix import SCENARIOS
from harness.plan.servers import server_variant
from harness.render.lines import LINE_CHARACTERS
from harness.results.records import all_runs
from harness.run.backends import Backends
from harness.run.processes import free_port
from harness.run.serving import running_server
from tests.runs import INTERRUPTED_GRACE, RUN_TIMEOUT, SERVER_MODULES, TEST_TIMEOUT, harness, run_harness, within
from tests.waiting import until

# Every test here reads a run-all of real servers and tools, its own or its module's: each gets a run's timeout.
pytestmark = [pytest.mark.usefixtures("tools"), pytest.mark.timeout(RUN_TIMEOUT)]


def living(processes: list[psutil.Process]) -> list[list[str]]:
    """The command lines of those processes still running (not ended, not a zombie, their PID not reused); one
    that ends while it is read is not among them."""
    found = []
    for each in processes:
        try:
            if each.is_running() and each.status() != psutil.STATUS_ZOMBIE:
                found.append(each.cmdline())
        except psutil.Error:
            continue
    return found


def ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def serving(harness: psutil.Process) -> list[psutil.Process]:
    """Every process under the harness, once one of them is a server of its run."""

    def under() -> list[psutil.Process]:
        found = harness.children(recursive=True)
        return found if any(set(SERVER_MODULES) & set(argv) for argv in living(found)) else []

    return until(under, "a server of the run", timeout=120)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_run_stopped_by_a_signal_stops_every_process_it_started(tmp_path: Path, signum: signal.Signals) -> None:
    argv = [sys.executable, "-m", "harness", "run-all", "--quick", "--out", str(tmp_path / "results")]
    told = tmp_path / "stderr.txt"
    with (
        told.open("w") as sink,  # a file, not a pipe that no one reads until the end and that could fill
        subprocess.Popen(
            argv,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=sink,
            preexec_fn=ignore_sigint,  # as a script's background job starts it: Ctrl-C stops it even so
        ) as process,
    ):
        try:
            started = serving(psutil.Process(process.pid))
        finally:
            process.send_signal(signum)  # to the harness alone: it stops what it started, in groups of their own
        process.wait(timeout=INTERRUPTED_GRACE)
    stderr = told.read_text()
    assert process.returncode == 128 + signum, stderr[-3000:]
    assert "interrupted: every process the harness started is stopped" in stderr
    until(lambda: not living(started), "every process the run started, gone (a grandchild reaped by its new parent)")
    (run_dir,) = all_runs(tmp_path / "results")
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"


QUICK_PARTS = 4  # the smoke matrix run in parts of its scenarios, each a test: a whole one takes about 160 s here


@pytest.mark.slow
@pytest.mark.parametrize("part", range(QUICK_PARTS), ids=lambda part: f"part-{part + 1}-of-{QUICK_PARTS}")
def test_quick_run_writes_every_file_with_zero_errors_and_leaves_no_process(tmp_path: Path, part: int) -> None:
    """Slow (about 60 s here, each part): the smoke matrix, every scenario on five stacks cell by cell, is what a
    user's first `run-all --quick` does, and every file it writes is checked; a part, a quarter of the scenarios."""
    scenarios = SCENARIOS[part::QUICK_PARTS]
    finished = harness(
        "run-all", "--quick", "--scenarios", ",".join(each.name for each in scenarios), "--out", str(tmp_path)
    )

    (run_dir,) = all_runs(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "complete"
    stacks = meta["studies"]["stacks"]
    assert stacks["status"] == "complete" and stacks["wall_seconds"] > 0
    assert stacks["targets"]["zero_non_ok"]["met"], stacks["targets"]
    assert stacks["targets"]["driver_not_busy"]["highest"] > 0  # the driver's CPU was measured
    assert not stacks["default_matrix"]
    assert meta["pinning"]["server_cpus"] != meta["pinning"]["ghz_and_backend_cpus"]
    assert meta["environment"]["ghz"].startswith("ghz ")
    assert "secret" not in json.dumps(meta["backends"]).lower()

    for each in scenarios:
        assert (tmp_path / "stacks" / each.name / "concurrency-2.md").is_file()
        assert (tmp_path / "stacks" / "charts" / f"{each.name}.png").is_file()
        for server in map(server_variant, QUICK_SERVERS):
            cell_file = run_dir / "stacks" / "cells" / each.name / server.name / "c2.json"
            if not server.runs(each.name):
                assert not cell_file.exists()
                continue
            cell = json.loads(cell_file.read_text())
            if server.min_cpus > len(meta["pinning"]["server_cpus"]):
                assert cell["status"] == "skipped"
                assert "needs 2 server CPUs" in cell["reason"]
                continue
            assert cell["status"] == "ok", cell
            report = json.loads((run_dir / "stacks" / cell["repeats"][0]["report_file"]).read_text())
            assert report["statusCodeDistribution"] == {"OK": 20}
            assert "details" not in report and report["okLatencyHistogram"]
            assert cell["repeats"][0]["driver_cpu_seconds"] > 0
            assert bool(cell["probe_file"]) == each.bounded
    summary = (tmp_path / "README.md").read_text()
    assert summary.index("## Decide") < summary.index("## The answers") < summary.index("## Each study")
    page = (tmp_path / "stacks" / "README.md").read_text()
    assert all(f"### {each.name}" in page for each in scenarios)
    assert (tmp_path / "report.html").stat().st_size < 2_000_000
    assert ": complete in" in finished.stdout and "This machine's answers" in finished.stdout
    assert "(fails the run)" not in finished.stdout and "{" not in finished.stdout  # no gate missed, no dict
    answers = finished.stdout.split("This machine's answers", 1)[1].split("\nraw results:", 1)[0].splitlines()[1:]
    rows = [line for line in answers if not line.startswith("  missed: ")]
    assert all(len(line) <= 2 + LINE_CHARACTERS for line in rows)  # a run cell by cell answers none: no line


def test_a_target_started_elsewhere_is_measured_where_it_answers(tmp_path: Path, backends: Backends) -> None:
    """--target: the harness starts no server and no backend, probes each RPC, and samples no resources."""
    unreachable_s3 = {**backends.env(), "AWS_ENDPOINT_URL": f"http://127.0.0.1:{free_port()}"}
    with running_server(server_variant("aio-asyncio"), unreachable_s3) as (target, child):
        finished = run_harness(
            *("run-all", "--target", target, "--target-name", "theirs"),
            *("--scenarios", "hello,s3-unary,s3-unary-100ms", "--concurrency", "2", "--requests", "20"),
            *("--out", str(tmp_path)),
            timeout=within(TEST_TIMEOUT),
        )
        assert child.process.poll() is None  # the harness never stopped the target
    assert finished.returncode == 0, finished.stderr[-3000:]
    (run_dir,) = all_runs(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["target"] == {"address": target, "name": "theirs"}
    assert meta["pinning"]["server_cpus"] == []
    cells = run_dir / "stacks" / "cells"
    hello = json.loads((cells / "hello" / "theirs" / "c2.json").read_text())
    assert hello["status"] == "ok" and hello["repeats"][0]["resources"]["sampled"] is False
    listing = json.loads((cells / "s3-unary" / "theirs" / "c2.json").read_text())
    assert listing["status"] == "skipped"
    assert "does not answer bench.v1.ObjectStore.ListObjects" in listing["reason"]
    delayed = json.loads((cells / "s3-unary-100ms" / "theirs" / "c2.json").read_text())
    assert delayed["status"] == "skipped" and "emulated latency" in delayed["reason"]
    table = (tmp_path / "stacks" / "hello" / "concurrency-2.md").read_text()
    assert "| Server CPU, average | not sampled |" in table
