"""The protocols study: its cells, loadgen's `info` command lines (pure), and every call shape driven by
loadgen against live servers: message counts, per-message latency, refusals counted as not OK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.files import read_json
from harness.results.histogram import Latencies
from harness.results.load import DriverError, LoadReport
from harness.run.backends import Backends
from harness.run.drivers.h2load import h2load_argv, h2load_report
from harness.run.drivers.loadgen import loadgen_argv, run_loadgen
from harness.run.drivers.registry import DRIVERS
from harness.run.measure import CellContext
from harness.run.serving import running_server
from harness.run.tools import H2LOAD, LOADGEN, ensure_go_tool, ensure_tool
from harness.studies.protocols import CONNECT_JSON, CROSS_CHECK_WORKERS, GRPC_SCENARIOS, REST_SCENARIOS, UNARY
from harness.studies.protocols import plan as protocols


def test_grpc_stacks_get_every_grpc_shape_and_rest_servers_their_own_version() -> None:
    cells = protocols.cells(RunOptions(Path("out"), full=True))
    pairs = {(cell.server.name, cell.scenario.name) for cell in cells}
    assert {scenario for server, scenario in pairs if server == "aio-uvloop"} == {s.name for s in GRPC_SCENARIOS}
    assert {scenario for server, scenario in pairs if server == "rest-h2"} == {"info-rest-h2"}
    assert {scenario for server, scenario in pairs if server == "rest-h1"} == {"info-rest-h1"}
    for connect in ("connect-pyvoy", "connect-hypercorn"):
        shapes = {scenario for server, scenario in pairs if server == connect}
        assert shapes == {s.name for s in GRPC_SCENARIOS} | {"info-connect-h1"}
    assert sorted({cell.concurrency for cell in cells}) == [1, 16, 50]
    assert len(cells) == (5 * 3 + 2 + 2) * 3  # five gRPC stacks, two of them Connect; two REST servers


def test_info_cells_map_to_loadgen_shapes() -> None:
    aio, rest = server_variant("aio-uvloop"), server_variant("rest-h2")
    unary = loadgen_argv("loadgen", Cell(aio, UNARY, 16), "t", 100)
    assert unary == [
        "loadgen", "info", "-target", "t", "-shape", "unary", "-workers", "16", "-total", "100", "-timeout", "120s",
    ]  # fmt: skip
    pipelined = loadgen_argv("loadgen", Cell(aio, GRPC_SCENARIOS[2], 1), "t", 10)
    assert pipelined[pipelined.index("-shape") + 1] == "pipelined" and "-in-flight" in pipelined
    http2 = loadgen_argv("loadgen", Cell(rest, REST_SCENARIOS["rest-h2"], 50), "t", 50)
    assert http2[http2.index("-shape") + 1] == "rest" and http2[http2.index("-http") + 1] == "2"
    connect = loadgen_argv("loadgen", Cell(server_variant("connect-pyvoy"), CONNECT_JSON, 16), "t", 16)
    assert connect[connect.index("-shape") + 1] == "connect" and connect[connect.index("-http") + 1] == "1.1"
    with pytest.raises(ValueError, match="at least one call per worker"):
        loadgen_argv("loadgen", Cell(aio, UNARY, 16), "t", 15)


def run(*argv: str) -> LoadReport:
    return run_loadgen([str(ensure_go_tool(LOADGEN)), "info", *argv], 120.0).report


@pytest.fixture(scope="module")
def grpc_target(backends: Backends) -> Iterator[str]:
    with running_server(server_variant("aio-uvloop"), backends.env()) as (address, _):
        yield address


@pytest.mark.parametrize("shape", ["unary", "lockstep", "pipelined"])
def test_every_grpc_shape_counts_each_message_once(grpc_target: str, shape: str) -> None:
    report = run("-target", grpc_target, "-shape", shape, "-workers", "4", "-total", "403", "-in-flight", "8")
    assert (report.count, report.ok) == (403, 403)
    assert 0 < report.percentiles[50] <= report.percentiles[99]


@pytest.fixture(scope="module", params=["rest-h1", "rest-h2"])
def rest_target(request: pytest.FixtureRequest, tools: dict[str, str]) -> Iterator[tuple[str, str]]:
    with running_server(server_variant(request.param), {}) as (address, _):
        yield address, str(REST_SCENARIOS[request.param].data["http"])


def test_rest_counts_each_post_once_on_its_http_version(rest_target: tuple[str, str]) -> None:
    address, http = rest_target
    report = run("-target", address, "-shape", "rest", "-http", http, "-workers", "3", "-total", "90")
    assert (report.count, report.ok) == (90, 90)
    assert report.percentiles[50] > 0


@pytest.mark.parametrize("http", ["1.1", "2"])
def test_connect_json_counts_each_post_once_on_either_http_version(backends: Backends, http: str) -> None:
    with running_server(server_variant("connect-hypercorn"), backends.env()) as (address, _):
        report = run("-target", address, "-shape", "connect", "-http", http, "-workers", "3", "-total", "90")
    assert (report.count, report.ok) == (90, 90)
    assert report.percentiles[50] > 0


@pytest.mark.usefixtures("tools")
def test_http2_to_an_http1_server_fails_every_call_and_counts_none() -> None:
    with running_server(server_variant("rest-h1"), {}) as (address, _):
        report = run("-target", address, "-shape", "rest", "-http", "2", "-workers", "1", "-total", "3")
    assert report.ok == 0 and report.status_codes == {"Unavailable": 3}


def test_the_cross_check_sends_ghz_the_request_alone(grpc_target: str, tmp_path: Path) -> None:
    options = RunOptions(tmp_path, repeats=1, requests=CROSS_CHECK_WORKERS, warmup_requests=CROSS_CHECK_WORKERS)
    context = CellContext(DRIVERS["loadgen"], ensure_go_tool(LOADGEN), options, 1, tmp_path)
    cell = Cell(server_variant("aio-uvloop"), UNARY, CROSS_CHECK_WORKERS)
    record = protocols.measure(cell, grpc_target, None, context, "")
    assert record.status == "ok", record.reason
    assert [repeat.role for repeat in record.repeats] == ["measured", "ghz"]
    raw: dict[str, Any] = read_json(tmp_path / record.repeats[1].report_file)
    assert LoadReport.from_json(raw).ok == CROSS_CHECK_WORKERS


def test_h2load_drives_rest_over_http2_only_one_connection_many_streams() -> None:
    argv = h2load_argv("h2load", Cell(server_variant("rest-h2"), REST_SCENARIOS["rest-h2"], 16), "t:1", 400)
    assert argv[:5] == ["h2load", "--clients=1", "--threads=1", "--max-concurrent-streams=16", "--requests=400"]
    assert argv[-1] == "http://t:1/v1/info"
    body = Path(next(arg for arg in argv if arg.startswith("--data=")).removeprefix("--data="))
    assert json.loads(body.read_text()) == {"age": 30, "height": 170, "name": "w0"}
    for cell in (
        Cell(server_variant("rest-h1"), REST_SCENARIOS["rest-h1"], 16),
        Cell(server_variant("aio-uvloop"), UNARY, 16),
    ):
        with pytest.raises(ValueError, match="REST over HTTP/2"):
            h2load_argv("h2load", cell, "t:1", 400)
    with pytest.raises(ValueError, match="one request per stream"):
        h2load_argv("h2load", Cell(server_variant("rest-h2"), REST_SCENARIOS["rest-h2"], 16), "t:1", 15)


LOGGED = ((200, 1000), (200, 3000), (400, 500), (200, 2000))  # (status, microseconds) of the requests answered
H2LOAD_SUMMARY = """starting benchmark...
finished in 250.00ms, 20.00 req/s, 1.00KB/s
requests: 5 total, 5 started, 4 done, 3 succeeded, 2 failed, 1 errored, 0 timeout
status codes: 3 2xx, 0 3xx, 1 4xx, 0 5xx
"""


def test_an_h2load_run_reads_as_a_report_of_ok_answers_only() -> None:
    log = "".join(f"17000000000{n}0000\t{status}\t{micros}\n" for n, (status, micros) in enumerate(LOGGED))
    raw = h2load_report(H2LOAD_SUMMARY, log)
    report = LoadReport.from_json(raw)
    assert (report.count, report.ok, report.total) == (5, 3, 0.25)
    assert report.status_codes == {"OK": 3, "HTTP 400": 1, "Unavailable": 1}  # one request logged no answer
    assert report.ok_rps == 12.0 and report.driver_rps == 20.0
    assert Latencies([report.histogram]).count == 3
    assert (report.fastest, report.slowest) == (0.001, 0.003)
    assert report.percentiles[50] == pytest.approx(0.002, rel=1e-3)  # of the OK answers only
    assert report.percentiles[99] == pytest.approx(0.003, rel=1e-3)
    with pytest.raises(DriverError, match="no summary"):
        h2load_report("connection refused", "")
    with pytest.raises(DriverError, match="malformed"):
        h2load_report(H2LOAD_SUMMARY, "200 1000\n")


@pytest.mark.usefixtures("tools")
def test_h2load_counts_every_post_to_an_http2_server_and_none_to_an_http1_one() -> None:
    h2load = ensure_tool(H2LOAD)
    cell = Cell(server_variant("rest-h2"), REST_SCENARIOS["rest-h2"], 4)
    for name, ok in (("rest-h2", 80), ("rest-h1", 0)):
        with running_server(server_variant(name), {}) as (address, _):
            run = DRIVERS["h2load"].run(h2load_argv(h2load, cell, address, 80), 60.0)
        assert (run.report.count, run.report.ok) == (80, ok), run.report.status_codes
        if ok:
            assert Latencies([run.report.histogram]).count == ok and 0 < run.report.percentiles.get(50, 1) < 1


@pytest.mark.usefixtures("tools")
def test_rest_over_http2_is_cross_checked_by_h2load(tmp_path: Path) -> None:
    options = RunOptions(tmp_path, repeats=1, requests=CROSS_CHECK_WORKERS, warmup_requests=CROSS_CHECK_WORKERS)
    context = CellContext(DRIVERS["loadgen"], ensure_go_tool(LOADGEN), options, 1, tmp_path)
    cell = Cell(server_variant("rest-h2"), REST_SCENARIOS["rest-h2"], CROSS_CHECK_WORKERS)
    with running_server(cell.server, {}) as (address, child):
        record = protocols.measure(cell, address, child, context, "")
    assert record.status == "ok", record.reason
    assert [repeat.role for repeat in record.repeats] == ["measured", "h2load"]
    raw: dict[str, Any] = read_json(tmp_path / record.repeats[1].report_file)
    assert LoadReport.from_json(raw).ok == CROSS_CHECK_WORKERS
