"""`python -m harness run-all --quick` end to end: real servers, backends and ghz; every file; no leftovers."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from harness.cli import QUICK_SERVERS
from harness.method.pilot import Pilot
from harness.method.rounds import BEHIND
from harness.plan import pythons
from harness.plan.matrix import SCENARIOS
from harness.plan.servers import server_variant
from harness.render.decisions import LINE_CHARACTERS
from harness.run.backends import Backends
from harness.run.processes import free_port
from harness.run.serving import running_server
from harness.run.tools import ROOT
from harness.studies.streaming import DRIVER_CHECK
from tests.runs import INTERRUPTED_GRACE, SERVER_MODULES, TEST_TIMEOUT, run_harness, started_by_harness, within
from tests.waiting import until

# Every test here starts a server or a tool, and a run-all of its own: on a slow 2-vCPU VM (a Python loop in 0.59 s)
# a quick run takes longer than the suite's default timeout, so each gets a run's.
pytestmark = [pytest.mark.usefixtures("tools"), pytest.mark.timeout(900)]


RUN_TIMEOUT = 900  # seconds: a run-all of several studies' comparisons, which took 5 to 6 minutes on a 2-vCPU VM


def harness(*args: str, timeout: float = within(RUN_TIMEOUT)) -> subprocess.CompletedProcess[str]:
    """`python -m harness` with these arguments from the project's root: it must exit 0 and leave no process it
    started."""
    before = started_by_harness()
    finished = run_harness(*args, timeout=timeout)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert started_by_harness() <= before
    return finished


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
    (run_dir,) = (tmp_path / "results" / "runs").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"


@pytest.mark.slow
def test_quick_run_writes_every_file_with_zero_errors_and_leaves_no_process(tmp_path: Path) -> None:
    """Slow (about 150 s here): the smoke matrix, every scenario on five stacks cell by cell, is what a user's
    first `run-all --quick` does, and every file it writes is checked."""
    finished = harness("run-all", "--quick", "--out", str(tmp_path))

    (run_dir,) = (tmp_path / "runs").iterdir()
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

    for each in SCENARIOS:
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
    assert all(f"### {each.name}" in page for each in SCENARIOS)
    assert (tmp_path / "report.html").stat().st_size < 2_000_000
    assert ": complete in" in finished.stdout and "This machine's answers" in finished.stdout
    assert "(fails the run)" not in finished.stdout and "{" not in finished.stdout  # no gate missed, no dict
    answers = finished.stdout.split("This machine's answers", 1)[1].split("\nraw results:", 1)[0].splitlines()[1:]
    rows = [line for line in answers if not line.startswith("  missed: ")]
    assert all(len(line) <= 2 + LINE_CHARACTERS for line in rows)  # a run cell by cell answers none: no line


@pytest.mark.slow
def test_a_small_capacity_run_records_every_step_and_renders(tmp_path: Path) -> None:
    """Slow (about 130 s here): an SLO search steps an open-loop rate until two steps agree, twice a cell; its
    time is in the steps, each 10 s of real load however few its calls."""
    harness(
        *("run-all", "--study", "capacity", "--servers", "aio-uvloop,sync-w10"),
        *("--scenarios", "hello,s3-unary-100ms,s3-unary-100ms-jitter20"),  # the jitter scenario, named, is run
        *("--requests", "60", "--repeats", "2", "--out", str(tmp_path)),  # each SLO search twice
    )
    (run_dir,) = (tmp_path / "runs").iterdir()
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
    assert step["count"] == 60
    jittered = run_dir / "capacity" / "cells" / "s3-unary-100ms-jitter20" / "aio-uvloop" / "c50.json"
    assert json.loads(jittered.read_text())["jitter_ms"] == 20
    assert not (run_dir / "capacity" / "cells" / "s3-unary-100ms-jitter20" / "sync-w10").exists()
    assert (tmp_path / "capacity" / "hello.md").is_file()
    assert (tmp_path / "capacity" / "charts" / "s3-unary-100ms.png").is_file()
    summary = (tmp_path / "README.md").read_text()
    assert "**The load one core takes within its p99 SLO: which stack?** " in summary  # Pick, Lean to or Either
    assert "Closed loop against open loop" in (tmp_path / "capacity" / "README.md").read_text()


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
    (run_dir,) = (tmp_path / "runs").iterdir()
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


@pytest.fixture(scope="module")
def full_in_blocks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """One small full matrix in blocks, read by the tests of blocks, floors and --full: the stacks study's hello
    (with the stacks' floors, which --full measures) and s3-unary at 2 clients, two blocks each."""
    out = tmp_path_factory.mktemp("full-in-blocks")
    args = ["--study", "stacks", "--full", "--servers", "sync-w10,aio-uvloop", "--scenarios", "hello,s3-unary"]
    done = harness(
        "run-all", *args, "--concurrency", "2", "--requests", "20", "--rounds", "2", "--seed", "1", "--out", str(out)
    )
    return out, done


def test_a_comparison_in_blocks_alternates_mirrored_slices_of_warm_servers_and_records_the_order(
    full_in_blocks: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    tmp_path = full_in_blocks[0]
    (run_dir,) = (tmp_path / "runs").iterdir()
    compared = json.loads((run_dir / "stacks" / "comparisons" / "hello__c2.json").read_text())
    assert compared["seed"] == 1 and compared["reference"] == "sync-w10" and compared["control"] == "sync-w10~aa"
    labels = ["aio-uvloop", "aio-uvloop-minimal", "sync-w10", "sync-w10-minimal", "sync-w10~aa"]  # floors on hello
    cycles = compared["method"]["cycles"]
    assert compared["method"]["design"] == "blocks" and len(compared["orders"]) == 2
    for plan in compared["orders"]:
        assert sorted(set(plan)) == labels and all(plan.count(label) == 2 * cycles for label in labels)
        first = plan[: len(labels)]
        assert plan[len(labels) : 2 * len(labels)] == first[::-1]  # a mirrored cycle
    # --rounds 2 makes two the minimum and the cap: each stops at block 2, known already (clear, precise) or not (cap)
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
    (run_dir,) = (tmp_path / "runs").iterdir()
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
    (run_dir,) = (tmp_path / "runs").iterdir()
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
    assert meta["wall_seconds"] < 45 + 120  # no block started past the deadline beyond those two
    shown = json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
    assert {each["workload"] for each in shown} == {"hello/c10", "hello/c2"}


@pytest.fixture(scope="module")
def default_studies_over_mtls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default run's decision studies in rounds, over mutual TLS: read by the tests of their comparisons and of
    a run whose every cell is served and driven over TLS (loadgen's gRPC shapes, REST on HTTP/1.1 and 2, Connect
    JSON, ghz's and h2load's cross-checks)."""
    out = tmp_path_factory.mktemp("default-studies")
    args = ["--study", "streaming,protocols,connections", "--mtls", "--requests", "20", "--rounds", "2", "--seed", "3"]
    harness("run-all", *args, "--out", str(out), timeout=within(RUN_TIMEOUT))
    return out


@pytest.mark.timeout(RUN_TIMEOUT)  # a run of several studies in rounds; bounded by its own timeout
@pytest.mark.slow
def test_the_default_studies_compare_fetch_patterns_call_shapes_and_ways_to_connect_in_rounds(
    default_studies_over_mtls: Path,
) -> None:
    """Slow (about 140 s here, in its fixture): the default run's three decision studies, each comparison two
    blocks, with loadgen's cross-check against ghz; shared with the mutual TLS test."""
    tmp_path = default_studies_over_mtls
    (run_dir,) = (tmp_path / "runs").iterdir()
    found = {
        (each["study"], each["workload"]): each
        for each in json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
        if not each["control"]
    }
    assert set(found) == {
        ("streaming", "fetch-all-20ms/aio-uvloop/c1"),
        ("streaming", "one-message/aio-uvloop/c50"),
        ("protocols", "info/aio-uvloop/c16"),
        ("connections", "hello/aio-uvloop/c100"),
        ("connections", "s3-client/aio-uvloop/c10"),
    }
    # Every run checks loadgen against ghz first, on a thread pool and on an event loop, the drivers taking turns.
    for server in ("sync-w10", "aio-uvloop"):
        checked = json.loads(
            (run_dir / "streaming" / "cells" / DRIVER_CHECK.name / server / "c50+mtls.json").read_text()
        )
        assert [each["role"] for each in checked["repeats"]][:2] == ["measured", "ghz"], server
        assert all(each["tcp_segments"] > 0 for each in checked["repeats"]), server
    streaming = json.loads((run_dir / "run.json").read_text())["studies"]["streaming"]
    assert "driver_within_5_percent_of_ghz" in streaming["targets"]
    compared = json.loads((run_dir / "connections" / "comparisons" / "hello__aio-uvloop__c100.json").read_text())
    assert compared["cells"]["per-call"] == "hello/aio-uvloop/c100+per-call+mtls"  # a cell's key names its wire
    per_call = json.loads(
        (run_dir / "connections" / "cells" / "hello" / "aio-uvloop" / "c100+per-call+mtls.json").read_text()
    )
    assert sorted({each["round"] for each in per_call["repeats"]}) == [1, 2]  # two blocks, each of several slices
    # A fetch-all's smoke window is one fetch-all, as its warm-up is.
    fetch = json.loads(
        (run_dir / "streaming" / "cells" / "fetch-stream-20ms" / "aio-uvloop" / "c1+mtls.json").read_text()
    )
    assert {each["requests"] for each in fetch["repeats"]} == {1}
    decide = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
    assert "| How should clients hold connections, and servers their S3 client? | **" in decide
    assert (tmp_path / "protocols" / "comparisons.md").is_file()


def served_over(run_dir: Path, wire: str) -> None:
    """Every cell of a run served and driven over this wire, and no certificate kept."""
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "complete" and meta["wire"] == {"name": wire, "key_type": "ECDSA"}
    cells = [json.loads(path.read_text()) for path in run_dir.glob("*/cells/*/*/c*.json") if "-" not in path.stem]
    assert cells and all(cell["status"] == "ok" for cell in cells)
    assert all(cell["tls"].startswith("TLSv1.") for cell in cells), {cell["server"]: cell["tls"] for cell in cells}
    assert not list(run_dir.rglob("*.key")) and not list(run_dir.rglob("*.pem"))  # the certificates are not kept


def test_a_run_over_tls_serves_and_drives_every_cell_over_it(tmp_path: Path) -> None:
    args = ["--study", "stacks", "--servers", "sync-w10,connect-pyvoy", "--scenarios", "hello", "--concurrency", "2"]
    harness("run-all", "--tls", *args, "--requests", "20", "--rounds", "2", "--out", str(tmp_path))
    (run_dir,) = (tmp_path / "runs").iterdir()
    served_over(run_dir, "tls")


def test_a_run_over_mutual_tls_serves_and_drives_every_cell_over_it(default_studies_over_mtls: Path) -> None:
    (run_dir,) = (default_studies_over_mtls / "runs").iterdir()
    served_over(run_dir, "mtls")


@pytest.mark.timeout(RUN_TIMEOUT)  # a run of several studies in rounds; bounded by its own timeout
@pytest.mark.slow
def test_the_wire_study_compares_wires_ways_and_sizes_in_rounds(tmp_path: Path) -> None:
    """Slow (about 170 s here): one comparison of each kind the wire study has, each over plaintext, TLS and
    mutual TLS, with a TLS handshake a server start; the S3 work a region away waits 100 ms a listing."""
    # a comparison of each kind (the sizes up to 16 MiB each cost minutes: tests/test_loadgen.py moves the largest)
    scenarios = "hello,reply-0B,reply-1MiB,request-1MiB,s3-mongo-region"
    args = ["--study", "wire", "--servers", "sync-w10,aio-uvloop,rest-h1", "--scenarios", scenarios, "--requests", "20"]
    harness("run-all", *args, "--rounds", "2", "--seed", "5", "--out", str(tmp_path), timeout=within(RUN_TIMEOUT))
    (run_dir,) = (tmp_path / "runs").iterdir()
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["wire"] == {"name": "per cell", "key_type": "ECDSA"}
    found = {
        (each["workload"], each["alternative"])
        for each in json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
    }
    assert {("tls/sync-w10/c50", "tls"), ("tls/aio-uvloop/c50", "mtls")} <= found
    assert ("connections-tls/aio-uvloop/c100", "per-call+tls") in found
    assert ("reply-1MiB/c10", "aio-uvloop+tls") in found
    assert {("tls/rest-h1/c50", "mtls"), ("reply-0B/c10", "rest-h1+tls"), ("request-1MiB/c10", "aio-uvloop")} <= found
    # the S3 work a region away over TLS, every gRPC stack side by side (the drivers call REST's hello alone)
    assert ("s3-mongo-region/c50+tls", "aio-uvloop+tls") in found
    assert not any(workload.startswith("s3-") and "rest-h1" in label for workload, label in found)
    tls = json.loads((run_dir / "wire" / "cells" / "hello" / "sync-w10" / "c50+tls.json").read_text())
    assert tls["wire"] == "tls" and tls["tls"].startswith("TLSv1.3")
    assert (tmp_path / "wire" / "charts" / "sizes.png").is_file()
    readme = (tmp_path / "README.md").read_text()
    assert "Which stack moves large messages, in plaintext or TLS?" in readme
    assert "Which stack serves the brief's S3 work a region away over TLS?" in readme
    assert "Request payload moved" in (tmp_path / "wire" / "README.md").read_text()


@pytest.mark.timeout(RUN_TIMEOUT)  # a run of several studies in rounds; bounded by its own timeout
@pytest.mark.slow
def test_the_interpreters_study_runs_servers_under_each_interpreter_and_on_every_core(tmp_path: Path) -> None:
    """Slow (about 140 s here): a virtualenv of the servers' pinned packages for a second interpreter, then its
    servers and the multi-process ones on every core."""
    other = "3.12"
    try:
        pythons.find(other)
    except pythons.NotFound as missing:
        pytest.skip(f"this machine lacks CPython {other}: {missing}")
    args = ["--study", "interpreters", "--pythons", f"3.11,{other}", "--servers", "sync-w10", "--rounds", "2"]
    harness("run-all", *args, "--requests", "20", "--seed", "7", "--out", str(tmp_path), timeout=within(RUN_TIMEOUT))
    (run_dir,) = (tmp_path / "runs").iterdir()
    meta = json.loads((run_dir / "run.json").read_text())
    assert set(meta["interpreters"]) == {"3.11", other}
    assert meta["interpreters"][other]["version"].startswith(other)
    assert meta["interpreters"][other]["gil_enabled_after_import"]["servers.sync"] is True
    found = {
        (each["workload"], each["alternative"])
        for each in json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
    }
    assert ("interpreter/hello-work/sync-w10/c50", other) in found
    assert {("cores/sync-w10/c20", "p2"), ("cores/sync-w10/c20", "p2+per-worker")} <= found
    shared = json.loads((run_dir / "interpreters/cells/hello-work/sync-w10-p2@3.11/c20.json").read_text())
    assert all(len(repeat["resources"]["process_cpu_seconds"]) == 3 for repeat in shared["repeats"])  # launcher + 2
    # The servers' own counters: the two processes took every call of the window between them.
    assert all(
        len(repeat["process_calls"]) == 2 and sum(repeat["process_calls"]) == repeat["requests"]
        for repeat in shared["repeats"]
    )
    readme = (tmp_path / "README.md").read_text()
    assert "Processes or threads for handlers that compute?" in readme
    assert "calls by process" in (tmp_path / "interpreters" / "README.md").read_text()
