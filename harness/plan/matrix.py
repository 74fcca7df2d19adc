"""The benchmark matrix as data: the scenarios, the levels, the ways of connecting, and the cells they expand to
with the server variants (harness.plan.servers); how many calls a cell's window holds."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from harness.plan.servers import ServerVariant, by_name
from harness.plan.wires import MTLS, PLAINTEXT, TLS, WIRES

BENCH_BUCKET = "bench"
BENCH_OBJECTS = 893  # the original study's bucket
SMALL_BUCKET = "bench-small"  # for the latency scenarios: few objects, so the wait dominates
SMALL_OBJECTS = 20
WIDE_BUCKET = "bench-wide"  # the streaming study's fetch-all: many objects under a few top-level prefixes
WIDE_OBJECTS = 10_000
WIDE_PREFIXES = 10
BUCKET_PREFIXES = {WIDE_BUCKET: WIDE_PREFIXES}  # top-level prefixes of a seeded bucket (none if absent)
# The readers study's bucket: keys of about 1 KB (S3 allows 1,024 bytes), so that a stream's listing (10 MB) weighs
# ten times a page of it (1,000 objects), what a handler that flow control holds back still holds.
LONG_KEYS_BUCKET = "bench-long-keys"
LONG_KEYS_OBJECTS = 10_000
LONG_KEY_BYTES = 1_000
BUCKET_KEY_BYTES = {
    LONG_KEYS_BUCKET: LONG_KEY_BYTES
}  # the length of a seeded bucket's keys (as short as may be if absent)
WAIT_MS = 100
S3_LATENCY_MS = 100
# Backends as a cloud region has them: S3 100 ms to the first byte (AWS's S3 performance guidance gives 100-200 ms;
# same-region clients measure 60-130 ms for a small PUT), MongoDB 1 ms away (a managed database in the same region).
REGION_S3_MS = 100
REGION_MONGO_MS = 1
REGION = "-region"  # the suffix of a scenario whose backends are a region away
# A slow scenario's warm-up calls (matrix.warming): enough to warm the server; a slow slice is a wave of calls a
# client whatever the warm-up's rate, so it sizes nothing there.
SLOW_WARMUP = 5


@dataclass(frozen=True)
class Scenario:
    """One kind of call ghz makes: the method, its request, and how to size a run of it."""

    name: str
    call: str
    data: dict[str, object]
    description: str
    # Requests in a warm-up run; measured runs are sized from the warm-up's throughput.
    warmup_requests: int
    # The bucket it lists, seeded before the run (None: no S3).
    bucket: str | None = None
    # Emulated latency between the server and S3, and MongoDB, in this scenario (0: the run's --s3-latency and
    # --mongo-latency, if any).
    s3_latency_ms: int = 0
    mongo_latency_ms: int = 0
    # Jitter of that latency (0: the run's --jitter).
    jitter_ms: int = 0
    # Also measure one call alone (concurrency 1), to show the cell's bounds and efficiency.
    bounded: bool = False
    # How long a measured run should last: longer where calls are cheap and runs noisier.
    run_seconds: float = 1.5
    # Calls that keep the server's CPU busy for a long while (the 893-object listing: about 180 ms of botocore
    # parsing a call): a comparison's slice holds one wave of calls per worker and at least SLOW_SLICE_CALLS, and
    # its block runs each label once (matrix.window_requests, verdicts.Method.mirrored).
    slow: bool = False


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("hello", "bench.v1.Greeter.SayHello", {"name": "world"}, "SayHello: no I/O", 2000, run_seconds=2.5),
    Scenario(
        "hello-wait",
        "bench.v1.Greeter.SayHello",
        {"name": "world", "delay_ms": WAIT_MS},
        f"SayHello waiting {WAIT_MS} ms without CPU (a blocking sleep on a worker thread, asyncio.sleep on a loop)",
        20,
        bounded=True,
    ),
    Scenario(
        "s3-unary",
        "bench.v1.ObjectStore.ListObjects",
        {"bucket": BENCH_BUCKET},
        "ListObjects: the whole bucket in one reply",
        SLOW_WARMUP,  # a slow call: its warm-up warms the server; the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
    ),
    Scenario(
        "s3-stream",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": BENCH_BUCKET, "batch_size": 1},
        "StreamObjects: one object per message (batch_size 1)",
        SLOW_WARMUP,  # a slow call: its warm-up warms the server; the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
    ),
    Scenario(
        "s3-mongo",
        "bench.v1.ObjectStore.ArchiveObjects",
        {"bucket": BENCH_BUCKET},
        "ArchiveObjects: list the bucket, upsert one document per object",
        SLOW_WARMUP,  # a slow call: its warm-up warms the server; the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
    ),
    *(
        Scenario(
            f"{name}{REGION}",
            call,
            {"bucket": BENCH_BUCKET, **extra},
            f"{what}, S3 {REGION_S3_MS} ms away" + (f" and MongoDB {REGION_MONGO_MS} ms" if name == "s3-mongo" else ""),
            SLOW_WARMUP,
            bucket=BENCH_BUCKET,
            s3_latency_ms=REGION_S3_MS,
            mongo_latency_ms=REGION_MONGO_MS if name == "s3-mongo" else 0,
            slow=True,
        )
        for name, call, extra, what in (
            ("s3-unary", "bench.v1.ObjectStore.ListObjects", {}, "ListObjects: the whole bucket in one reply"),
            (
                "s3-stream",
                "bench.v1.ObjectStore.StreamObjects",
                {"batch_size": 1},
                "StreamObjects: one object per message",
            ),
            (
                "s3-mongo",
                "bench.v1.ObjectStore.ArchiveObjects",
                {},
                "ArchiveObjects: list the bucket, upsert one document per object",
            ),
        )
    ),
    Scenario(
        f"s3-unary-{S3_LATENCY_MS}ms",
        "bench.v1.ObjectStore.ListObjects",
        {"bucket": SMALL_BUCKET},
        f"ListObjects on the small bucket, S3 {S3_LATENCY_MS} ms away",
        20,
        bucket=SMALL_BUCKET,
        s3_latency_ms=S3_LATENCY_MS,
        bounded=True,
    ),
    Scenario(
        f"s3-mongo-{S3_LATENCY_MS}ms",
        "bench.v1.ObjectStore.ArchiveObjects",
        {"bucket": SMALL_BUCKET},
        f"ArchiveObjects on the small bucket, S3 {S3_LATENCY_MS} ms away",
        20,
        bucket=SMALL_BUCKET,
        s3_latency_ms=S3_LATENCY_MS,
        bounded=True,
    ),
)
# A handler that computes: 10 units of SayHello's work (about 10 ms of CPU under 3.11), for the interpreters and
# cores comparisons (issue 24); not in SCENARIOS, so no study's matrix takes it up unasked.
HELLO_WORK = Scenario(
    "hello-work",
    "bench.v1.Greeter.SayHello",
    {"name": "world", "work": 10},
    "SayHello computing 10 units (~10 ms)",
    50,
    run_seconds=3.0,  # about 300 calls a window on one core: fewer would leave the window's rate coarse
)
CONCURRENCY_LEVELS: tuple[int, ...] = (2, 10, 25, 50)
REPEATS = 3
MAX_REQUESTS = 50_000


def scenario(name: str) -> Scenario:
    """The scenario called name."""
    return by_name(SCENARIOS, name, "scenario")


# The Info flow's call shapes (the protocols study), as loadgen's `info` command drives them.
REST_INFO = "POST /v1/info"  # the REST server's Info call (servers/rest.py)
CONNECT_INFO = "POST /bench.v1.Info/SetInfo"  # SetInfo in Connect's unary protocol, JSON (servers/connect.py)
INFO_SHAPES = {  # an info cell's shape -> the call its scenario names
    "unary": "bench.v1.Info.SetInfo",
    "lockstep": "bench.v1.Info.SetInfos",
    "pipelined": "bench.v1.Info.SetInfos",
    "rest": REST_INFO,
    "connect": CONNECT_INFO,
}
HTTP_SHAPES = ("rest", "connect")  # the shapes that POST JSON over HTTP/1.1 or HTTP/2, not gRPC
IN_FLIGHT = 100  # a pipelined stream's unanswered requests, at most


# How a driver's workers hold their connections to the server.
SHARED = "shared"  # one connection for every worker: ghz's default, the 2020 study's method
PER_WORKER = "per-worker"  # one connection per worker, as grpc_bench drives
PER_CALL = "per-call"  # a new connection for every call, closed when it ends
POOL_PREFIX = "pool-"  # "pool-10": ten connections, worker i on connection i mod 10


def pool(size: int) -> str:
    return f"{POOL_PREFIX}{size}"


def connection_count(connections: str, concurrency: int) -> int | None:
    """How many connections the workers share (None: one per call); ValueError for an unknown strategy."""
    if connections == SHARED:
        return 1
    if connections == PER_WORKER:
        return concurrency
    if connections == PER_CALL:
        return None
    size = connections.removeprefix(POOL_PREFIX)
    if connections.startswith(POOL_PREFIX) and size.isdigit() and 1 <= int(size) <= concurrency:
        return int(size)
    raise ValueError(
        f"connections are {SHARED}, {PER_WORKER}, {PER_CALL} or {POOL_PREFIX}N with 1 <= N <= {concurrency}, "
        f"got {connections!r}"
    )


# A cell's name, as cell_name gives it; a driver's report of the cell adds a suffix ("-r1") it never matches.
CELL_NAME = re.compile(
    rf"c\d+(\+({re.escape(PER_WORKER)}|{re.escape(PER_CALL)}|{re.escape(POOL_PREFIX)}\d+))?(\+({TLS}|{MTLS}))?"
)


def cell_name(concurrency: int, connections: str, wire: str = PLAINTEXT) -> str:
    """c<N>, +<connections> unless the workers share one, and +<wire> over TLS: the last part of a cell's key and
    file stem."""
    return (
        f"c{concurrency}"
        + ("" if connections == SHARED else f"+{connections}")
        + ("" if wire == PLAINTEXT else f"+{wire}")
    )


@dataclass(frozen=True)
class Cell:
    """One point of the matrix: a server variant serving a scenario at a concurrency level, its driver's
    workers holding their connections one way."""

    server: ServerVariant
    scenario: Scenario
    concurrency: int
    connections: str = SHARED
    wire: str = PLAINTEXT  # what the server and driver speak: plaintext, tls or mtls (harness.run.tls)

    def __post_init__(self) -> None:
        connection_count(self.connections, self.concurrency)
        if self.wire not in WIRES:
            raise ValueError(f"a cell's wire is one of {', '.join(WIRES)}, got {self.wire!r}")

    @property
    def key(self) -> str:
        """A stable, path-safe name: scenario/server/c<N>, with +<connections> where they are not shared and
        +<wire> over TLS."""
        return f"{self.scenario.name}/{self.server.name}/{cell_name(self.concurrency, self.connections, self.wire)}"


def expand(servers: tuple[ServerVariant, ...], scenarios: tuple[Scenario, ...], levels: tuple[int, ...]) -> list[Cell]:
    """Every cell of servers x scenarios x levels that a variant takes part in, one scenario at a time."""
    return [
        Cell(server, each, level)
        for each in scenarios
        for server in servers
        if server.runs(each.name)
        for level in levels
    ]


WAVES = 2  # a comparison's window holds at least this many full waves of calls per client worker
SLOW_SLICE_CALLS = 20  # a slow scenario's slice holds at least this many calls, and one per worker


def window_requests(warmup_ok_rps: float, cell: Cell, fixed: int | None = None, seconds: float | None = None) -> int:
    """Requests for a comparison's window (or slice): about `seconds` (default: the scenario's run seconds), and at
    least WAVES calls per worker; a slow scenario's at least one call per worker and SLOW_SLICE_CALLS. A smoke
    run's fixed requests (--requests) are cut to the scenario's warm-up, at least a call per worker: a fetch-all
    warms up with one.

    A slice runs in count mode: every call it issues ends inside it, none is cut at its edge, and its rate is its
    OK calls over the time from the first call's start to the last one's end. Where the server is busy throughout
    (a slow scenario's calls keep its CPU busy), that time is the calls' own work, whatever the slice's length, so
    one wave per worker is unbiased (tests/test_slices.py simulates it); the one edge effect, the tail where fewer
    than a worker's share of calls are left, weighs only where the server idles in it, and falls alike on every
    label of a comparison (the same workers, the same rule)."""
    if fixed:
        return max(cell.concurrency, min(fixed, cell.scenario.warmup_requests))
    length = cell.scenario.run_seconds if seconds is None else seconds
    if cell.scenario.slow:
        least = max(cell.concurrency, SLOW_SLICE_CALLS)
        return max(least, min(MAX_REQUESTS, round(warmup_ok_rps * length)))
    return max(WAVES * cell.concurrency, measured_requests(warmup_ok_rps, cell.concurrency, length))


WARM_WORKERS = 5  # a slow scenario's warm-up in a comparison runs on at most this many workers


def warming(cell: Cell) -> Cell:
    """The cell a comparison's warm-up drives: the cell itself, or a slow scenario's call on at most WARM_WORKERS
    workers. A warm-up warms the server and sizes the slices, and a slow slice holds a wave a worker whatever the
    rate: a wave of 50 slow calls would spend ten seconds a label a block on nothing else."""
    return replace(cell, concurrency=min(cell.concurrency, WARM_WORKERS)) if cell.scenario.slow else cell


def measured_requests(warmup_ok_rps: float, concurrency: int, seconds: float) -> int:
    """Requests for a run of about `seconds`; at least one per ghz worker."""
    return max(concurrency, min(MAX_REQUESTS, round(warmup_ok_rps * seconds)))
