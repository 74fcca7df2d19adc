"""The default run's decision studies over mutual TLS, and the interpreters study, each a run-all in blocks end to
end, read by the tests of their comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.plan import interpreter, pythons, virtualenvs
from harness.results.records import all_runs
from harness.studies.streaming import DRIVER_CHECK
from tests.runs import RUN_TIMEOUT, harness, served_over, within

# Every test here reads a run-all of real servers and tools, its own or its module's: each gets a run's timeout.
pytestmark = [pytest.mark.usefixtures("tools"), pytest.mark.timeout(RUN_TIMEOUT)]


# The default run's decision studies, in two runs, each a test's: what each run's comparisons are.
DEFAULT_STUDIES = {
    "streaming": {
        ("streaming", "fetch-all-20ms/aio-uvloop/c1"),
        ("streaming", "one-message/aio-uvloop/c50"),
    },
    "protocols,connections": {
        ("protocols", "info/aio-uvloop/c16"),
        ("connections", "hello/aio-uvloop/c100"),
        ("connections", "s3-client/aio-uvloop/c10"),
    },
}


@pytest.fixture(scope="module", params=list(DEFAULT_STUDIES))
def default_studies_over_mtls(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default run's decision studies in rounds (two runs: streaming, then protocols and connections), over
    mutual TLS: read by the tests of their comparisons and of a run whose every cell is served and driven over TLS
    (loadgen's gRPC shapes, REST on HTTP/1.1 and 2, Connect JSON, ghz's and h2load's cross-checks)."""
    out = tmp_path_factory.mktemp("default-studies")
    args = ["--study", request.param, "--mtls", "--requests", "20", "--blocks", "2", "--cycles", "1", "--seed", "3"]
    harness("run-all", *args, "--out", str(out), timeout=within(RUN_TIMEOUT))
    return out


@pytest.mark.slow
def test_the_default_studies_compare_fetch_patterns_call_shapes_and_ways_to_connect_in_blocks(
    default_studies_over_mtls: Path,
) -> None:
    """Slow (about 70 s here, in its fixture, each run): the default run's three decision studies, each comparison
    two blocks, with loadgen's cross-check against ghz; shared with the mutual TLS test."""
    tmp_path = default_studies_over_mtls
    (run_dir,) = all_runs(tmp_path)
    studies = json.loads((run_dir / "run.json").read_text())["studies"]
    found = {
        (each["study"], each["workload"]): each
        for each in json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
        if not each["control"]
    }
    (expected,) = (pairs for names, pairs in DEFAULT_STUDIES.items() if set(names.split(",")) == set(studies))
    assert set(found) == expected
    decide = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
    if "streaming" in studies:
        # Every run checks loadgen against ghz first, on a thread pool and on an event loop, the drivers taking
        # turns.
        for server in ("sync-w10", "aio-uvloop"):
            checked = json.loads(
                (run_dir / "streaming" / "cells" / DRIVER_CHECK.name / server / "c50+mtls.json").read_text()
            )
            assert [each["role"] for each in checked["repeats"]][:2] == ["measured", "ghz"], server
            assert all(each["tcp_segments"] > 0 for each in checked["repeats"]), server
        assert "driver_within_5_percent_of_ghz" in studies["streaming"]["targets"]
        # A fetch-all's smoke window is one fetch-all, as its warm-up is.
        fetch = json.loads(
            (run_dir / "streaming" / "cells" / "fetch-stream-20ms" / "aio-uvloop" / "c1+mtls.json").read_text()
        )
        assert {each["requests"] for each in fetch["repeats"]} == {1}
        return
    compared = json.loads((run_dir / "connections" / "comparisons" / "hello__aio-uvloop__c100.json").read_text())
    assert compared["cells"]["per-call"] == "hello/aio-uvloop/c100+per-call+mtls"  # a cell's key names its wire
    per_call = json.loads(
        (run_dir / "connections" / "cells" / "hello" / "aio-uvloop" / "c100+per-call+mtls.json").read_text()
    )
    assert sorted({each["round"] for each in per_call["repeats"]}) == [1, 2]  # two blocks
    assert "| How should clients hold connections, and servers their S3 client? | **" in decide
    assert (tmp_path / "protocols" / "comparisons.md").is_file()


def test_a_run_over_mutual_tls_serves_and_drives_every_cell_over_it(default_studies_over_mtls: Path) -> None:
    (run_dir,) = all_runs(default_studies_over_mtls)
    served_over(run_dir, "mtls")


@pytest.fixture
def other_interpreter() -> str:
    """A second interpreter beside 3.11, each with its virtualenv of the servers' pinned packages made here, in
    set-up (a clean clone makes them, about a minute each), so that the test itself times its run alone; skipped
    where this machine lacks it."""
    other = "3.12"
    try:
        found = [pythons.find(name) for name in ("3.11", other)]
    except interpreter.NotFound as missing:
        pytest.skip(f"this machine lacks CPython 3.11 or {other}: {missing}")
    for each in found:
        virtualenvs.environment(each)
    return other


@pytest.mark.timeout(RUN_TIMEOUT)  # a run of several studies in rounds; bounded by its own timeout
@pytest.mark.slow
def test_the_interpreters_study_runs_servers_under_each_interpreter_and_on_every_core(
    tmp_path: Path, other_interpreter: str
) -> None:
    """Slow (about 70 s here, its virtualenvs made in set-up, 43 s on a clean clone): a second interpreter's
    servers, and the multi-process ones on every core."""
    other = other_interpreter
    args = ["--study", "interpreters", "--pythons", f"3.11,{other}", "--servers", "sync-w10", "--blocks", "2"]
    args += ["--cycles", "1"]
    harness("run-all", *args, "--requests", "20", "--seed", "7", "--out", str(tmp_path), timeout=within(RUN_TIMEOUT))
    (run_dir,) = all_runs(tmp_path)
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
