"""The benchmark matrix as data: the server variants (a registry), and later scenarios and levels.

A new stack is one entry here and one module in `servers/`; tests and the run loop read this table.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from typing import TypeVar

from harness.run.tls import MTLS, PLAINTEXT, TLS, WIRES
from servers.common import ServerConfig

THREAD_POOL_MODULE = "servers.sync"  # the one server module that serves on a thread pool


@dataclass(frozen=True)
class ServerVariant:
    """One way of serving: a server module and its flags."""

    name: str
    module: str
    args: tuple[str, ...]
    # Calls it can serve at once: thread-pool workers (times processes), or None for an event loop.
    slots: int | None
    description: str
    # Server CPUs it needs to be worth measuring (a multi-process server on one core measures nothing new).
    min_cpus: int = 1
    # The scenarios it runs, or None for all (a MongoDB-driver variant only matters where MongoDB is used).
    only: tuple[str, ...] | None = None
    # HOST:PORT of a server the harness does not start (run-all --target); "" for one it starts.
    address: str = ""
    # What it speaks, and so how the harness sees it is ready: "grpc" (gRPC health) or "http" (GET /healthz).
    protocol: str = "grpc"
    # The interpreter it runs under (a virtualenv's python, harness.plan.pythons); "": the harness's own.
    python: str = ""
    # The variant whose floor this one is (servers/minimal.py: hello alone, no health or reflection, so it is
    # ready once a hello call is answered), or "" for one of ours.
    floor_of: str = ""

    def under(self, interpreter: str, python: str) -> ServerVariant:
        """The same variant run by another interpreter, named `<name>@<interpreter>`."""
        return replace(
            self, name=f"{self.name}@{interpreter}", python=python, description=f"{self.description}, {interpreter}"
        )

    def runs(self, scenario_name: str) -> bool:
        """Whether this variant takes part in a scenario."""
        return self.only is None or scenario_name in self.only

    def argv(self, port: int, host: str = "127.0.0.1") -> list[str]:
        """The command that starts this variant on host:port."""
        return [self.python or sys.executable, "-m", self.module, *self.args, "--host", host, "--port", str(port)]

    def _flag(self, *names: str) -> str | None:
        """The value the variant's arguments give one of these flags, or None."""
        for index, arg in enumerate(self.args[:-1]):
            if arg in names:
                return self.args[index + 1]
        return None

    @property
    def http_version(self) -> str:
        """The HTTP version a REST or Connect server speaks (its --http flag; its default, 2, if silent)."""
        return self._flag("--http") or "2"

    @property
    def shape(self) -> dict[str, object]:
        """How the variant serves, as a run records it: processes, worker threads (a thread pool) or event loop,
        and the backend connections each process pools (the servers' defaults where the arguments are silent)."""
        if self.address:
            return {"processes": None, "threads": None, "event_loop": None, "backend_pool": None}
        defaults = ServerConfig()
        threads = int(self._flag("-w", "--workers") or defaults.workers) if self.module == THREAD_POOL_MODULE else None
        return {
            "processes": int(self._flag("-p", "--processes") or defaults.processes),
            "threads": threads,
            "event_loop": None if threads else self._flag("-l", "--loop") or defaults.loop,
            "backend_pool": threads or int(self._flag("--pool-size") or defaults.pool_size),
        }

    @property
    def command(self) -> str:
        """The command a user types, for tables and the README."""
        return (
            f"(not started here) {self.address}" if self.address else " ".join(["python -m", self.module, *self.args])
        )


def external_server(name: str, address: str) -> ServerVariant:
    """A server somebody else runs at address: measured, never started or stopped, its resources not sampled."""
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"a target is HOST:PORT, got {address!r}")
    return ServerVariant(name, "", (), None, f"the server at {address}, not started by the harness", address=address)


BENCH_BUCKET = "bench"
BENCH_OBJECTS = 893  # the original study's bucket
SMALL_BUCKET = "bench-small"  # for the latency scenarios: few objects, so the wait dominates
SMALL_OBJECTS = 20
WIDE_BUCKET = "bench-wide"  # the streaming study's fetch-all: many objects under a few top-level prefixes
WIDE_OBJECTS = 10_000
WIDE_PREFIXES = 10
BUCKET_PREFIXES = {WIDE_BUCKET: WIDE_PREFIXES}  # top-level prefixes of a seeded bucket (none if absent)
WAIT_MS = 100
S3_LATENCY_MS = 100

MONGO_ONLY = ("s3-mongo",)
SERVER_VARIANTS: tuple[ServerVariant, ...] = (
    ServerVariant("sync-w1", "servers.sync", ("-w", "1"), 1, "grpcio sync, 1 worker thread"),
    ServerVariant("sync-w10", "servers.sync", ("-w", "10"), 10, "grpcio sync, 10 worker threads"),
    ServerVariant(
        "sync-w10-p2", "servers.sync", ("-w", "10", "-p", "2"), 20, "grpcio sync, 2 processes x 10 threads", 2
    ),
    ServerVariant("grpclib-asyncio", "servers.async", ("-l", "asyncio"), None, "grpclib on asyncio, motor"),
    ServerVariant("grpclib-uvloop", "servers.async", ("-l", "uvloop"), None, "grpclib on uvloop, motor"),
    ServerVariant("aio-asyncio", "servers.aio", ("-l", "asyncio"), None, "grpc.aio on asyncio, motor"),
    ServerVariant("aio-uvloop", "servers.aio", ("-l", "uvloop"), None, "grpc.aio on uvloop, motor"),
    ServerVariant(
        "connect-pyvoy", "servers.connect", ("--server", "pyvoy", "-l", "uvloop"), None, "Connect RPC on pyvoy, uvloop"
    ),
    ServerVariant(
        "connect-hypercorn",
        "servers.connect",
        ("--server", "hypercorn", "-l", "uvloop"),
        None,
        "Connect RPC on hypercorn, uvloop",
    ),
    ServerVariant(
        "grpclib-uvloop-p2", "servers.async", ("-l", "uvloop", "-p", "2"), None, "2 grpclib processes on uvloop", 2
    ),
    ServerVariant(
        "aio-uvloop-p2", "servers.aio", ("-l", "uvloop", "-p", "2"), None, "2 grpc.aio processes on uvloop", 2
    ),
    *(
        ServerVariant(
            f"{stack}-{loop}-pymongo",
            module,
            ("-l", loop, "--mongo-driver", "pymongo"),
            None,
            f"{label} on {loop}, PyMongo AsyncMongoClient",
            only=MONGO_ONLY,
        )
        for stack, module, label in (("grpclib", "servers.async", "grpclib"), ("aio", "servers.aio", "grpc.aio"))
        for loop in ("asyncio", "uvloop")
    ),
)

# REST servers (servers/rest.py): the Info flow and hello as JSON over HTTP, for the protocols study. Not in
# SERVER_VARIANTS: they serve no gRPC, so no gRPC study or test takes them.
REST_VARIANTS: tuple[ServerVariant, ...] = (
    ServerVariant("rest-h1", "servers.rest", ("--http", "1.1"), None, "FastAPI on uvicorn, HTTP/1.1", protocol="http"),
    ServerVariant(
        "rest-h2", "servers.rest", ("--http", "2"), None, "FastAPI on hypercorn, HTTP/2 cleartext", protocol="http"
    ),
)


# The connections study's server side: each stack with a new boto3/aioboto3 session and S3 client for every
# request (`--s3-client per-request`), as the 2020 study's handlers made them. Not in SERVER_VARIANTS: the
# stacks study and the tests run every stack as the default, one client per process.
# One variant per server module and loop: the MongoDB-driver and multi-process variants serve alike otherwise.
STACKS: tuple[ServerVariant, ...] = tuple(v for v in SERVER_VARIANTS if v.only is None and v.min_cpus == 1)
S3_PER_REQUEST = "-s3-per-request"  # the suffix of such a variant's name
S3_PER_REQUEST_VARIANTS: tuple[ServerVariant, ...] = tuple(
    ServerVariant(
        base.name + S3_PER_REQUEST,
        base.module,
        (*base.args, "--s3-client", "per-request"),
        base.slots,
        f"{base.description}, a new S3 client per request",
    )
    for base in STACKS
)

# connect-hypercorn with connectrpc's default compression (gzip every reply a client accepts gzip for), which ours
# turns off: set against connect-hypercorn on large replies (`run-all --study wire --servers
# connect-hypercorn,connect-hypercorn-gzip`), it measures what that default cost. Not in SERVER_VARIANTS.
GZIP_REPLIES = ServerVariant(
    "connect-hypercorn-gzip",
    "servers.connect",
    ("--server", "hypercorn", "-l", "uvloop", "--gzip-replies"),
    None,
    "Connect RPC on hypercorn, uvloop, gzipping replies as connectrpc does by default",
)
# connect-hypercorn with HTTP/2 receive windows of 1 MiB where hypercorn leaves HTTP/2's 65,535 bytes: set against
# connect-hypercorn on large requests, it measures what the small window cost. Not in SERVER_VARIANTS.
WIDE_WINDOW = ServerVariant(
    "connect-hypercorn-1MiB-window",
    "servers.connect",
    ("--server", "hypercorn", "-l", "uvloop", "--h2-window", str(2**20)),
    None,
    "Connect RPC on hypercorn, uvloop, HTTP/2 receive windows of 1 MiB",
)

# Each stack's floor (servers/minimal.py): SayHello served as the stack's own hello example serves it, nothing
# else. Not in SERVER_VARIANTS: they serve hello alone; the stacks study sets each of ours against its floor.
MINIMAL_SUFFIX = "-minimal"
_MINIMAL_ARGS = {
    "sync-w1": ("--stack", "grpcio", "-w", "1"),
    "sync-w10": ("--stack", "grpcio", "-w", "10"),
    "grpclib-asyncio": ("--stack", "grpclib", "-l", "asyncio"),
    "grpclib-uvloop": ("--stack", "grpclib", "-l", "uvloop"),
    "aio-asyncio": ("--stack", "grpc-aio", "-l", "asyncio"),
    "aio-uvloop": ("--stack", "grpc-aio", "-l", "uvloop"),
    "connect-pyvoy": ("--stack", "connect", "--server", "pyvoy", "-l", "uvloop"),
    "connect-hypercorn": ("--stack", "connect", "--server", "hypercorn", "-l", "uvloop"),
    "rest-h1": ("--stack", "rest", "--server", "uvicorn", "-l", "uvloop"),
    "rest-h2": ("--stack", "rest", "--server", "hypercorn", "-l", "uvloop"),
}
MINIMAL_VARIANTS: tuple[ServerVariant, ...] = tuple(
    replace(
        base,
        name=base.name + MINIMAL_SUFFIX,
        module="servers.minimal",
        args=_MINIMAL_ARGS[base.name],
        description=f"the floor of {base.name}: hello alone, as the stack's own example serves it",
        only=("hello",),
        floor_of=base.name,
    )
    for base in (*STACKS, *REST_VARIANTS)
)


def minimal_of(variant: ServerVariant) -> ServerVariant | None:
    """The floor of one of our variants, where it has one."""
    return next((each for each in MINIMAL_VARIANTS if each.floor_of == variant.name), None)


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
    # Emulated latency between the server and S3 in this scenario (0: the run's --s3-latency, if any).
    s3_latency_ms: int = 0
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
        10,  # a slow call: its warm-up warms the server, and the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
    ),
    Scenario(
        "s3-stream",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": BENCH_BUCKET, "batch_size": 1},
        "StreamObjects: one object per message (batch_size 1)",
        10,  # a slow call: its warm-up warms the server, and the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
    ),
    Scenario(
        "s3-mongo",
        "bench.v1.ObjectStore.ArchiveObjects",
        {"bucket": BENCH_BUCKET},
        "ArchiveObjects: list the bucket, upsert one document per object",
        10,  # a slow call: its warm-up warms the server, and the slice is a wave of calls whatever the rate
        bucket=BENCH_BUCKET,
        slow=True,
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
Named = TypeVar("Named", "Scenario", "ServerVariant")
CONCURRENCY_LEVELS: tuple[int, ...] = (2, 10, 25, 50)
REPEATS = 3
MAX_REQUESTS = 50_000


def scenario(name: str) -> Scenario:
    """The scenario called name."""
    return _by_name(SCENARIOS, name, "scenario")


def server_variant(name: str) -> ServerVariant:
    """The registered variant called name: gRPC, REST, a stack with an S3 client per request, or a stack's floor."""
    everything = (
        *SERVER_VARIANTS,
        *REST_VARIANTS,
        *S3_PER_REQUEST_VARIANTS,
        *MINIMAL_VARIANTS,
        GZIP_REPLIES,
        WIDE_WINDOW,
    )
    return _by_name(everything, name, "server variant")


def _by_name(items: tuple[Named, ...], name: str, kind: str) -> Named:
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"unknown {kind} {name!r}; known: {', '.join(item.name for item in items)}")


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


WARM_WORKERS = 10  # a slow scenario's warm-up in a comparison runs on at most this many workers


def warming(cell: Cell) -> Cell:
    """The cell a comparison's warm-up drives: the cell itself, or a slow scenario's call on at most WARM_WORKERS
    workers. A warm-up warms the server and sizes the slices, and a slow slice holds a wave a worker whatever the
    rate: a wave of 50 slow calls would spend ten seconds a label a block on nothing else."""
    return replace(cell, concurrency=min(cell.concurrency, WARM_WORKERS)) if cell.scenario.slow else cell


def measured_requests(warmup_ok_rps: float, concurrency: int, seconds: float) -> int:
    """Requests for a run of about `seconds`; at least one per ghz worker."""
    return max(concurrency, min(MAX_REQUESTS, round(warmup_ok_rps * seconds)))
