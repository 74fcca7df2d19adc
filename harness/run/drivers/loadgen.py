"""loadgen (our Go driver, `loadgen/`): the command line built from a cell (pure), and its report.

It drives what ghz cannot express and prints ghz's JSON shape, so `LoadReport` reads every run:
- `call`: closed-loop calls of one RPC, as ghz makes them (to cross-check it against ghz), the workers sharing
  one connection or several, or opening a new one for every call (the connections study);
- `fetch`: fetch-alls of a bucket, following ListObjectsPage's tokens or reading one StreamObjects to its
  end; one entry per fetch-all, OK only if every object came exactly once; one connection per client;
- `watch`: Sensor.Watch streams, each watching one sensor; one entry per reading received in the window
  (its latency: receipt minus the reading's timestamp), plus how the streams were established and ended;
- `slow`: StreamObjects streams read slower than the server sends (one message every D, or the first only), on
  fixed HTTP/2 windows, then cancelled; one entry per message read, plus what each stream read and how it ended;
- `info`: the Info flow in one shape: SetInfo calls, a SetInfos stream per worker in lockstep or
  pipelined, or REST (or Connect JSON) POSTs over HTTP/1.1 or HTTP/2; one entry per message (request to its
  reply).
"""

from __future__ import annotations

from pathlib import Path

from harness.plan.matrix import HTTP_SHAPES, IN_FLIGHT, INFO_SHAPES, PER_CALL, SHARED, Cell, connection_count
from harness.results.load import DriverRun
from harness.run.drivers.ghz import CALL_TIMEOUT, run_reporting_tool
from harness.run.tls import Wire

CALL_METHODS = {
    "bench.v1.Greeter.SayHello": "hello",
    "bench.v1.Greeter.SayHelloStream": "hello-stream",
    "bench.v1.ObjectStore.ListObjects": "list-objects",
    "bench.v1.ObjectStore.StreamObjects": "stream-objects",
}
FETCH_CALLS = ("bench.v1.ObjectStore.ListObjectsPage", "bench.v1.ObjectStore.StreamObjects")
WATCH_CALL = "bench.v1.Sensor.Watch"
SLOW_PER_CONNECTION = 100  # a slow reader's streams per HTTP/2 connection, under servers' usual stream limits
SLOW_WINDOW = 65_535  # a slow reader's HTTP/2 window a stream, bytes: HTTP/2's initial one, fixed
# A call's request fields that a scenario may set, and the flags that carry them.
REQUEST_FLAGS = (
    ("delay_ms", "-delay-ms"),
    ("work", "-work"),
    ("reply_bytes", "-reply-bytes"),
    ("request_bytes", "-request-bytes"),
)


def is_fetch(cell: Cell) -> bool:
    """A fetch-all cell: its scenario names a fetch pattern."""
    return "pattern" in cell.scenario.data


def is_watch(cell: Cell) -> bool:
    return cell.scenario.call == WATCH_CALL


def is_slow(cell: Cell) -> bool:
    """A slow-reader cell: its scenario says how often its reader reads."""
    return "every_ms" in cell.scenario.data


def slow_argv(loadgen: Path | str, cell: Cell, target: str) -> list[str]:
    """cell.concurrency StreamObjects streams at once, read as the scenario says (one message every every_ms; 0: the
    first only) for its seconds, then cancelled; a connection per PER_CONNECTION streams."""
    data = cell.scenario.data
    connections = -(-cell.concurrency // SLOW_PER_CONNECTION)
    return [
        str(loadgen),
        "slow",
        "-target",
        target,
        "-bucket",
        str(data["bucket"]),
        "-batch",
        str(data.get("batch_size", 1)),
        "-streams",
        str(cell.concurrency),
        "-connections",
        str(connections),
        "-every",
        f"{data['every_ms']}ms",
        "-seconds",
        f"{data['seconds']}s",
        "-window",
        str(data.get("window", SLOW_WINDOW)),
    ]


def is_info(cell: Cell) -> bool:
    """An Info cell: its scenario names a call shape."""
    return "shape" in cell.scenario.data


def info_argv(loadgen: Path | str, cell: Cell, target: str, requests: int) -> list[str]:
    """`requests` Info messages by cell.concurrency workers in the scenario's shape."""
    data = cell.scenario.data
    shape = str(data["shape"])
    expected = INFO_SHAPES.get(shape)
    if expected is None:
        raise ValueError(f"unknown Info shape {shape!r}: {', '.join(INFO_SHAPES)}")
    if cell.scenario.call != expected:
        raise ValueError(f"the {shape} shape calls {expected}, not {cell.scenario.call}")
    argv = [str(loadgen), "info", "-target", target, "-shape", shape]
    if shape == "pipelined":
        argv += ["-in-flight", str(data.get("in_flight", IN_FLIGHT))]
    if shape in HTTP_SHAPES:
        argv += ["-http", str(data["http"])]
    return [*argv, "-workers", str(cell.concurrency), "-total", str(requests), "-timeout", CALL_TIMEOUT]


def loadgen_wire(argv: list[str], wire: Wire) -> list[str]:
    """argv speaking the wire: -cacert for TLS, and -cert and -key for mutual TLS (every mode takes them)."""
    return [*argv[:2], *wire.client_flags("-"), *argv[2:]]


def loadgen_argv(loadgen: Path | str, cell: Cell, target: str, requests: int) -> list[str]:
    """The loadgen command for a cell: `requests` calls (or fetch-alls) at cell.concurrency workers (or
    clients); for a watch cell, cell.concurrency streams for the scenario's seconds (requests unused)."""
    data = cell.scenario.data
    if is_slow(cell):
        return slow_argv(loadgen, cell, target)
    if is_watch(cell):
        return [
            str(loadgen),
            "watch",
            "-target",
            target,
            "-streams",
            str(cell.concurrency),
            "-sensors",
            str(data["sensors"]),
            "-seconds",
            f"{data['seconds']}s",
            "-interval",
            f"{data['interval_ms']}ms",
        ]
    if requests < cell.concurrency:
        raise ValueError(f"loadgen needs at least one call per worker: {requests} < {cell.concurrency}")
    if cell.connections != SHARED and (is_info(cell) or is_fetch(cell)):
        raise ValueError(f"loadgen's info and fetch modes hold their connections their own way ({cell.key})")
    if is_info(cell):
        return info_argv(loadgen, cell, target, requests)
    if is_fetch(cell):
        pattern = str(data["pattern"])
        expected = {"paging": FETCH_CALLS[0], "stream": FETCH_CALLS[1]}.get(pattern)
        if cell.scenario.call != expected:
            raise ValueError(f"a {pattern!r} fetch calls {expected}, not {cell.scenario.call}")
        return [
            str(loadgen),
            "fetch",
            "-target",
            target,
            "-pattern",
            pattern,
            "-bucket",
            str(data["bucket"]),
            "-expect",
            str(data["objects"]),
            "-page-size",
            str(data.get("page_size", 1000)),
            "-batch",
            str(data.get("batch_size", 1000)),
            "-parallelism",
            str(data.get("parallelism", 1)),
            "-clients",
            str(cell.concurrency),
            "-total",
            str(requests),
        ]
    method = CALL_METHODS.get(cell.scenario.call)
    if method is None:
        raise ValueError(f"loadgen cannot call {cell.scenario.call}: it calls {', '.join(CALL_METHODS)}")
    argv = [str(loadgen), "call", "-target", target, "-method", method]
    if method == "list-objects":
        argv += ["-bucket", str(data["bucket"])]
    if method == "stream-objects":
        argv += ["-bucket", str(data["bucket"]), "-batch", str(data.get("batch_size", 1))]
    fields = (
        ("delay_ms", "-delay-ms"),
        ("work", "-work"),
        ("reply_bytes", "-reply-bytes"),
        ("request_bytes", "-request-bytes"),
    )
    for field, flag in fields:
        if data.get(field):
            argv += [flag, str(data[field])]
    if cell.server.protocol == "http":  # REST's hello, GET /v1/hello, on the server's HTTP version
        argv += ["-http", cell.server.http_version]
    connections = connection_count(cell.connections, cell.concurrency)
    if connections != 1:
        argv += ["-connections", PER_CALL if connections is None else str(connections)]
    return [*argv, "-concurrency", str(cell.concurrency), "-total", str(requests), "-timeout", CALL_TIMEOUT]


def run_loadgen(argv: list[str], timeout: float) -> DriverRun:
    """Run loadgen: its report kept compact, its CPU time measured."""
    return run_reporting_tool("loadgen", argv, timeout)
