"""Our Go driver (loadgen): its command lines from cells (pure), its reports parsed strictly, and each mode
against a live server: call counts, fetch-alls that check every object, watch streams with readings; and a held
loadgen (`loadgen serve`) running slice after slice on the connections it keeps."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest

from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS, Cell
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.files import read_json, write_json_atomic
from harness.results.load import DriverError, FetchCounts, LoadReport, WatchOutcome
from harness.results.records import CellRecord, Repeat, ResourceUsage, load_study, save_cell
from harness.run.backends import Backends, seed_bucket
from harness.run.blocks import held_context
from harness.run.drivers.held import HeldLoadgen
from harness.run.drivers.loadgen import loadgen_argv, run_loadgen
from harness.run.drivers.registry import DRIVERS
from harness.run.measure import CellContext
from harness.run.planning import Comparison
from harness.run.serving import running_server
from harness.run.tools import LOADGEN, ensure_go_tool, ensure_tool
from harness.studies.reading import calls_not_ok
from harness.studies.streaming import BATCH_SCENARIOS, CROSS_CHECK_LEVEL, HELLO, HELLO_STREAM, WATCH, fetch_scenario
from harness.studies.streaming import plan as streaming
from harness.studies.wire import STACK_NAMES as WIRE_STACKS
from scenarios.objects import MAX_REPLY_BYTES
from tests.runs import ghz_report, meta
from tests.s3_counter import CountingProxy

PREFIXED_BUCKET = "loadgen-prefixed"
PREFIXED_OBJECTS = 1200  # two pages of 1,000
PREFIXES = 3


def test_a_fetch_cell_names_its_pattern_bucket_and_the_objects_to_expect() -> None:
    cell = Cell(server_variant("sync-w10"), fetch_scenario("parallel-4", 20), 4)
    argv = loadgen_argv("/tools/loadgen", cell, "127.0.0.1:5000", 8)
    assert argv[:4] == ["/tools/loadgen", "fetch", "-target", "127.0.0.1:5000"]
    flags = dict(zip(argv[4::2], argv[5::2], strict=True))
    assert flags == {
        "-pattern": "stream",
        "-bucket": "bench-wide",
        "-expect": "10000",
        "-page-size": "1000",
        "-batch": "1000",
        "-parallelism": "4",
        "-clients": "4",
        "-total": "8",
    }
    paging = loadgen_argv("loadgen", replace(cell, scenario=fetch_scenario("paging", 0)), "t", 8)
    assert paging[paging.index("-pattern") + 1] == "paging"


def test_a_call_cell_maps_its_rpc_and_a_watch_cell_its_streams() -> None:
    hello = loadgen_argv("loadgen", Cell(server_variant("aio-uvloop"), HELLO_STREAM, 10), "t", 100)
    assert hello == [
        "loadgen", "call", "-target", "t", "-method", "hello-stream",
        "-concurrency", "10", "-total", "100", "-timeout", "120s",
    ]  # fmt: skip
    batch = loadgen_argv("loadgen", Cell(server_variant("aio-uvloop"), BATCH_SCENARIOS[1], 10), "t", 100)
    assert batch[batch.index("-bucket") + 1] == BENCH_BUCKET and batch[batch.index("-batch") + 1] == "10"
    watch = loadgen_argv("loadgen", Cell(server_variant("aio-uvloop"), WATCH, 1000), "t", 0)
    assert watch[1] == "watch" and watch[watch.index("-streams") + 1] == "1000"
    assert watch[watch.index("-seconds") + 1] == "10s" and watch[watch.index("-interval") + 1] == "100ms"


def test_a_call_needs_a_request_per_worker_and_an_rpc_loadgen_knows() -> None:
    with pytest.raises(ValueError, match="at least one call per worker"):
        loadgen_argv("loadgen", Cell(server_variant("sync-w10"), HELLO, 50), "t", 49)
    archive = replace(HELLO, call="bench.v1.ObjectStore.ArchiveObjects")
    with pytest.raises(ValueError, match=r"cannot call bench\.v1\.ObjectStore\.ArchiveObjects"):
        loadgen_argv("loadgen", Cell(server_variant("sync-w10"), archive, 1), "t", 1)


def test_a_watch_report_whose_streams_do_not_add_up_is_refused() -> None:
    raw = {
        "streams": 10,
        "established": 8,
        "established_late": 1,
        "not_established": 1,
        "expected_readings": 800,
        "ended": {"OK": 10},
    }
    assert WatchOutcome.from_json(raw).established == 8
    with pytest.raises(DriverError, match="add up"):
        WatchOutcome.from_json({**raw, "not_established": 2})
    with pytest.raises(DriverError, match="malformed watch report"):
        WatchOutcome.from_json({**raw, "ended": None})
    with pytest.raises(DriverError, match="malformed fetch report"):
        FetchCounts.from_json({"rpcs": 1, "messages": 2})


def test_loadgen_is_a_registered_driver_built_from_this_repository() -> None:
    driver = DRIVERS["loadgen"]
    assert driver.argv is loadgen_argv and driver.run is run_loadgen
    assert driver.tool is LOADGEN and len(LOADGEN.version) == 12


@pytest.fixture(scope="module")
def target(backends: Backends) -> Iterator[str]:
    """An aio-uvloop server (its sensors 50 ms apart) with a bucket of objects under PREFIXES prefixes."""
    seed_bucket(backends.config, PREFIXED_BUCKET, PREFIXED_OBJECTS, PREFIXES)
    variant = server_variant("aio-uvloop")
    variant = replace(variant, args=(*variant.args, "--sensor-interval-ms", "50"))
    with running_server(variant, backends.env()) as (address, _):
        yield address


def run(*argv: str) -> tuple[dict[str, Any], LoadReport]:
    finished = run_loadgen([str(ensure_go_tool(LOADGEN)), *argv], 120.0)
    return finished.raw, finished.report


def test_call_mode_makes_every_call_and_counts_ok_ones(target: str) -> None:
    _, report = run("call", "-target", target, "-method", "hello", "-concurrency", "4", "-total", "40")
    assert report.count == 40 and report.ok == 40
    _, report = run(
        "call", "-target", target, "-method", "stream-objects", "-bucket", BENCH_BUCKET, "-batch", "100",
        "-concurrency", "2", "-total", "4",
    )  # fmt: skip
    assert report.ok == 4
    _, report = run(
        "call", "-target", target, "-method", "list-objects", "-bucket", BENCH_BUCKET, "-concurrency", "2",
        "-total", "4",
    )  # fmt: skip
    assert report.ok == 4
    _, report = run("call", "-target", target, "-method", "list-objects", "-bucket", "no-such-bucket", "-total", "2")
    assert report.ok == 0 and report.status_codes == {"NotFound": 2}


@pytest.mark.parametrize(
    ("pattern", "extra", "rpcs", "messages"),
    [
        ("paging", ["-page-size", "500"], 3, 3),  # 1,200 objects: pages of 500, 500 and 200
        ("stream", ["-batch", "1000", "-parallelism", "1"], 1, 2),
        ("stream", ["-batch", "1000", "-parallelism", "3"], 1, PREFIXES),  # 400 a prefix: one batch each
    ],
)
def test_a_fetch_all_gets_every_object_exactly_once(
    target: str, pattern: str, extra: list[str], rpcs: int, messages: int
) -> None:
    raw, report = run(
        "fetch", "-target", target, "-pattern", pattern, "-bucket", PREFIXED_BUCKET,
        "-expect", str(PREFIXED_OBJECTS), "-clients", "2", "-total", "4", *extra,
    )  # fmt: skip
    assert report.ok == 4
    assert FetchCounts.from_json(raw) == FetchCounts(4 * rpcs, 4 * messages, 4 * PREFIXED_OBJECTS)


def test_a_fetch_all_that_misses_objects_is_incomplete_not_ok(target: str) -> None:
    _, report = run(
        "fetch", "-target", target, "-pattern", "stream", "-bucket", BENCH_BUCKET,
        "-expect", str(BENCH_OBJECTS + 1), "-total", "1",
    )  # fmt: skip
    assert report.status_codes == {"Incomplete": 1}


def test_watch_streams_are_created_get_readings_and_end_ok(target: str) -> None:
    raw, report = run("watch", "-target", target, "-streams", "6", "-sensors", "3", "-seconds", "1s",
                      "-settle", "500ms", "-interval", "50ms")  # fmt: skip
    outcome = WatchOutcome.from_json(raw)
    assert (outcome.established, outcome.ended) == (6, {"OK": 6})
    assert outcome.expected_readings == 6 * 20
    # Readings come at the server's pace, however busy the machine: at least one a stream, never more than a few
    # past the interval's count (none counted twice); each reading's age is measured.
    assert outcome.established <= report.ok <= 1.1 * outcome.expected_readings
    assert 0 <= report.percentiles[50] <= report.percentiles[99]


@pytest.mark.usefixtures("tools")
def test_bad_flags_are_a_clear_error() -> None:
    loadgen = str(ensure_go_tool(LOADGEN))
    with pytest.raises(DriverError, match="-target HOST:PORT is required"):
        run_loadgen([loadgen, "call"], 30.0)
    with pytest.raises(DriverError, match="unknown -pattern"):
        run_loadgen([loadgen, "fetch", "-target", "t", "-pattern", "pages", "-bucket", "b", "-expect", "1"], 30.0)
    assert os.access(loadgen, os.X_OK)


def test_the_cross_check_cell_takes_turns_between_loadgen_and_ghz(target: str, tmp_path: Path) -> None:
    options = RunOptions(tmp_path, repeats=2, requests=CROSS_CHECK_LEVEL, warmup_requests=CROSS_CHECK_LEVEL)
    context = CellContext(DRIVERS["loadgen"], ensure_go_tool(LOADGEN), options, 2, tmp_path)
    cell = Cell(server_variant("aio-uvloop"), HELLO, CROSS_CHECK_LEVEL)
    record = streaming.measure(cell, target, None, context, "")
    assert record.status == "ok", record.reason
    assert [repeat.role for repeat in record.repeats] == ["measured", "ghz", "measured", "ghz"]
    for repeat in record.repeats:
        assert LoadReport.from_json(read_json(tmp_path / repeat.report_file)).ok == CROSS_CHECK_LEVEL
    assert [repeat.report_file.rpartition("-")[2] for repeat in record.repeats] == [
        "r1.json", "ghz1.json", "r2.json", "ghz2.json",
    ]  # fmt: skip


def test_calls_that_were_not_ok_are_told_from_a_warm_up_or_a_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "runs" / "20260101T000000Z"
    data = meta("20260101T000000Z", "Some CPU")
    data["studies"] = {"streaming": {**data["studies"]["stacks"], "matrix": {"servers": ["aio-uvloop"]}}}
    write_json_atomic(run_dir / "run.json", data)
    study_dir = run_dir / "streaming"
    usage = ResourceUsage(1.0, 0.5, 50.0, 1)
    fetch = CellRecord(fetch_scenario("parallel-4", 0).name, "aio-uvloop", 4, "ok")
    write_json_atomic(study_dir / f"{fetch.stem}-warmup.json", ghz_report(3, 1.0, 900.0, failed=1))
    write_json_atomic(study_dir / f"{fetch.stem}-r1.json", ghz_report(8, 4.0, 900.0))
    save_cell(study_dir, replace(fetch, repeats=[Repeat(f"{fetch.stem}-r1.json", 8, usage)]))
    hello = CellRecord(HELLO.name, "aio-uvloop", 10, "ok")
    write_json_atomic(study_dir / f"{hello.stem}-r1.json", ghz_report(95, 1.0, 2.0, failed=5))
    save_cell(study_dir, replace(hello, repeats=[Repeat(f"{hello.stem}-r1.json", 100, usage)]))

    told = calls_not_ok(load_study(run_dir, "streaming"))
    assert told == [
        "fetch-parallel-4-0ms/aio-uvloop/c4, warm-up: 1 of 4 failed: 1 × rpc error: code = Unavailable",
        "hello/aio-uvloop/c10, measured run: 5 of 100 failed: 5 × rpc error: code = Unavailable",
    ]


def test_a_call_cell_states_its_connections_and_its_wait() -> None:
    wait = replace(HELLO, data={"name": "w", "delay_ms": 500})
    argv = loadgen_argv("loadgen", Cell(server_variant("sync-w10"), wait, 100, "pool-10"), "t", 100)
    assert argv[argv.index("-delay-ms") + 1] == "500" and argv[argv.index("-connections") + 1] == "10"
    per_worker = loadgen_argv("loadgen", Cell(server_variant("sync-w10"), HELLO, 100, "per-worker"), "t", 100)
    assert per_worker[per_worker.index("-connections") + 1] == "100"
    per_call = loadgen_argv("loadgen", Cell(server_variant("sync-w10"), HELLO, 100, "per-call"), "t", 100)
    assert per_call[per_call.index("-connections") + 1] == "per-call"
    assert "-connections" not in loadgen_argv("loadgen", Cell(server_variant("sync-w10"), HELLO, 100), "t", 100)


@pytest.mark.parametrize(("connections", "opened"), [("1", 1), ("3", 3), ("6", 6), ("per-call", 24)])
def test_call_mode_opens_the_connections_it_is_told(target: str, connections: str, opened: int) -> None:
    host, _, port = target.rpartition(":")
    with CountingProxy(host, int(port), 0.0) as proxy:  # counts the TCP connections made through it
        _, report = run(
            "call", "-target", proxy.endpoint.removeprefix("http://"), "-method", "hello", "-delay-ms", "20",
            "-concurrency", "6", "-total", "24", "-connections", connections,
        )  # fmt: skip
        assert report.ok == 24
        assert report.average >= 0.020  # the server waited as asked
        assert proxy.connections == opened


@pytest.mark.usefixtures("tools")
def test_connections_beyond_the_workers_are_a_clear_error() -> None:
    with pytest.raises(DriverError, match=r"-connections is 1 to -concurrency \(2\) or per-call"):
        run("call", "-target", "127.0.0.1:1", "-concurrency", "2", "-total", "2", "-connections", "3")


@pytest.mark.parametrize("http", ["1.1", "2"])
def test_call_mode_says_hello_over_rest_with_work_and_reply_bytes(backends: Backends, http: str) -> None:
    variant = server_variant("rest-h1" if http == "1.1" else "rest-h2")
    with running_server(variant, backends.env()) as (address, _):
        raw, report = run(
            "call", "-target", address, "-http", http, "-work", "2", "-reply-bytes", "1024",
            "-concurrency", "4", "-total", "20",
        )  # fmt: skip
        assert report.count == 20 and report.ok == 20
        assert raw["options"]["work"] == 2 and raw["options"]["http"] == http
        _, refused = run("call", "-target", address, "-http", http, "-work", "1001", "-total", "2")
        assert refused.ok == 0 and refused.status_codes == {"HTTP 400": 2}
    with pytest.raises(DriverError, match="-http calls hello alone"):
        run("call", "-target", address, "-http", http, "-method", "list-objects", "-bucket", "b")


def test_call_mode_asks_grpc_hello_for_work_and_reply_bytes(target: str) -> None:
    _, report = run("call", "-target", target, "-work", "1", "-reply-bytes", "4096", "-concurrency", "2", "-total", "6")
    assert report.ok == 6
    raw, report = run("call", "-target", target, "-request-bytes", str(1024 * 1024), "-total", "3")
    assert report.ok == 3 and raw["options"]["request_bytes"] == 1024 * 1024
    _, refused = run("call", "-target", target, "-reply-bytes", str(MAX_REPLY_BYTES + 1), "-total", "2")
    assert refused.status_codes == {"InvalidArgument": 2}


@pytest.mark.parametrize("name", WIRE_STACKS)
def test_every_wire_stack_moves_the_largest_message_each_way_past_grpcs_default_limit(
    backends: Backends, name: str
) -> None:
    """The wire study's largest reply and request (16 MiB, four times grpc's default receive limit) arrive whole on
    every gRPC stack it measures, by loadgen; one byte more is refused by its status, and the server goes on."""
    with running_server(server_variant(name), backends.env()) as (address, child):
        for flag in ("-reply-bytes", "-request-bytes"):
            _, report = run("call", "-target", address, flag, str(MAX_REPLY_BYTES), "-concurrency", "2", "-total", "4")
            assert report.ok == 4, report.errors
        _, refused = run("call", "-target", address, "-reply-bytes", str(MAX_REPLY_BYTES + 1), "-total", "2")
        assert refused.status_codes == {"InvalidArgument": 2}
        assert child.process.poll() is None, child.log_tail()
        assert run("call", "-target", address, "-total", "2")[1].ok == 2


def test_a_hello_reply_that_does_not_parse_is_not_ok(tools: dict[str, str]) -> None:
    """loadgen checks a HelloReply's fields, though it does not decode them (loadgen/codec.go): a server whose
    reply claims 5 bytes of a field and sends 3 gets no OK call."""
    truncated = grpc.unary_unary_rpc_method_handler(
        lambda request, context: b"", response_serializer=lambda _: b"\x12\x05abc"
    )
    server = grpc.server(ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.v1.Greeter", {"SayHello": truncated}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        _, report = run("call", "-target", f"127.0.0.1:{port}", "-concurrency", "2", "-total", "4")
    finally:
        server.stop(None)
    assert report.ok == 0 and report.status_codes == {"Internal": 4}
    assert all("does not parse" in error for error in report.errors), report.errors


def test_a_held_loadgen_runs_slice_after_slice_on_connections_it_dialled_once(target: str) -> None:
    loadgen = str(ensure_go_tool(LOADGEN))
    host, _, port = target.rpartition(":")
    with CountingProxy(host, int(port), 0.0) as proxy, HeldLoadgen(Path(loadgen)) as held:
        address = proxy.endpoint.removeprefix("http://")
        call = [loadgen, "call", "-target", address, "-method", "hello", "-concurrency", "6", "-connections", "3"]
        first, second = (held.run([*call, "-total", str(total)], 60.0) for total in (30, 600))
        assert (first.report.ok, second.report.ok) == (30, 600)
        # Its CPU is read in clock ticks (10 ms): 30 calls may take less than one, 600 take several.
        assert first.cpu_seconds >= 0 and second.cpu_seconds > 0
        assert proxy.connections == 3  # dialled for the first slice, held for the second
        with pytest.raises(DriverError, match="need 1 <= -concurrency <= -total"):
            held.run([loadgen, "call", "-target", address, "-concurrency", "5", "-total", "2"], 60.0)
        with pytest.raises(DriverError, match="runs call, fetch, info, not"):
            held.run([loadgen, "watch", "-target", address], 60.0)
        assert held.run([*call, "-total", "6"], 60.0).report.ok == 6  # a refused run leaves it serving
        process = held.process
    assert process is not None and process.poll() == 0  # stopped on leaving, by the end of its input


@pytest.mark.usefixtures("tools")
def test_a_comparison_is_held_only_where_loadgen_can_drive_every_cell(tmp_path: Path) -> None:
    ghz = DRIVERS["ghz"]
    context = CellContext(ghz, ensure_tool(ghz.tool), RunOptions(tmp_path), 1, tmp_path)

    def comparison(*cells: Cell) -> Comparison:
        return Comparison("w", (cells[0].server.name, cells[0]), tuple((cell.server.name, cell) for cell in cells[1:]))

    hello = comparison(*(Cell(server_variant(name), HELLO, 50) for name in ("sync-w10", "aio-uvloop")))
    held = held_context(hello, context)
    assert held is not None and held.driver.name == "loadgen"
    assert held_context(comparison(Cell(server_variant("aio-uvloop"), WATCH, 10)), context) is None
    archive = replace(HELLO, call="bench.v1.ObjectStore.ArchiveObjects")
    assert held_context(comparison(Cell(server_variant("sync-w10"), archive, 1)), context) is None
    assert held_context(hello, context.driven_by("h2load")) is None
