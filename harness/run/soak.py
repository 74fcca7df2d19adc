"""python -m harness soak: a mixed load for minutes while a schedule breaks the backends, then the verdict.

Each server variant in turn gets its own backends (versitygw, mongo-java-server), each behind a
toxiproxy proxy, and a mixed load at concurrency 20 from our own driver (ghz drives one RPC at a time):
five calls at once each of hello, s3-unary (ListObjects), s3-stream (StreamObjects, batch 10) and
s3-mongo (ArchiveObjects), on a bucket of SOAK_OBJECTS objects, each caller pausing THINK_SECONDS between
calls. (On the 893-object bucket, whose listing costs a server over 100 ms of CPU on a 2-core AMD EPYC,
fifteen listings at once queued each call for over 2 s: the servers' S3 read timeout fired with no fault
injected. A soak tests faults and leaks, not overload: its report gives the server's CPU and OK calls/s.)
Meanwhile the schedule injects, each for FAULT_SECONDS: S3 connections reset, S3 timing out (data
dropped), 2 s of added S3 latency, MongoDB unreachable, and the S3 server stopped and restarted on its
port and data.

Recorded per second and per RPC: OK calls and every status code; per second, the server's RSS, open
file descriptors and threads, and how many of those threads are Python's (the server's own counters,
`servers/diagnostics.py`); the Python threads by name before the first fault and at the end, so that a
report names the threads that grew. The criteria (`verdict`) are checked from the report alone:
- during a fault, only calls that need the failed backend fail, and only with UNAVAILABLE or
  DEADLINE_EXCEEDED; hello never fails;
- no call fails unless it was in flight during a fault window or the RECOVERY_SECONDS after it;
- RSS grows at most 10% from minute 2 (or a fifth of a shorter soak) to the end;
- file descriptors and threads end no higher than under the same load before the first fault (after a
  warm-up at four times the concurrency has grown the server's thread and connection pools), except for
  workers a thread pool started within its bound (motor's pool grows while MongoDB is down and keeps its
  workers): the report names the threads that grew, Python's by name, the others as native;
- afterwards the archive collection holds exactly one document per object in the bucket.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import psutil
import pymongo

from harness.method.soak_verdict import NEEDS, SOAK_OBJECTS, load_summary, verdict
from harness.plan.servers import ServerVariant
from harness.results.files import write_json_atomic
from harness.results.run_context import Environment
from harness.results.soak_meta import SoakMeta
from harness.run.backends import VersityGW, backend_env, mongo_java_server, seed_bucket, versitygw
from harness.run.latency import Toxiproxy, mongo_upstream, s3_upstream, through_proxies, toxiproxy
from harness.run.processes import off_cpus
from harness.run.provenance import environment
from harness.run.resources import process_tree, read_counters
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.config import BackendConfig
from scenarios.objects import ARCHIVE_COLLECTION
from servers.diagnostics import STATS_DIR_VARIABLE

SOAK_SERVERS = ("sync-w10", "grpclib-uvloop", "aio-uvloop")  # one per stack unless --servers says otherwise
SOAK_BUCKET = "soak"
CALLS_PER_RPC = 5  # concurrency 20: five calls at once of each of the four RPCs
WARMUP_SECONDS = 10.0
WARMUP_CALLERS = 4 * CALLS_PER_RPC
DEADLINE_SECONDS = 10.0
# A caller's pause between its calls: it keeps hello (a millisecond a call) from turning the mix into a
# hello benchmark, and the driver, which shares its CPU with the backends, from starving them.
THINK_SECONDS = 0.02
# The servers' backend timeouts. Reads: 2 s, so that two S3 attempts end before the deadline and a hung
# S3 frees a sync server's worker in time. Connects: 5 s; no fault here black-holes a connect (a reset
# or a stopped server refuses at once), and with 2 s an event-loop server under this load saw a few
# connects to the S3 proxy time out with no fault injected (4 calls in 10 minutes on grpclib-uvloop).
READ_TIMEOUT = 2.0
CONNECT_TIMEOUT = 5.0
FAULT_SECONDS = 5.0
RESTART_PAUSE_SECONDS = 2.0  # how long the S3 server stays down before it is started again


class SoakError(RuntimeError):
    """The soak could not do what it claims (a fault was not injected): its report would prove nothing."""


@dataclass(frozen=True)
class Fault:
    """One injected fault: what, on which backend, and when (seconds from the start of the load)."""

    name: str
    backend: str
    start: float
    end: float  # when the fault was over: a restart lasts as long as it takes


FAULTS = (
    ("s3-connections-reset", "s3"),
    ("s3-timing-out", "s3"),
    ("s3-latency-2s", "s3"),
    ("mongodb-unreachable", "mongodb"),
    ("s3-stopped-and-restarted", "s3"),
)


def schedule(seconds: float) -> list[tuple[str, str, float]]:
    """(fault, backend, start): the five faults, twice in a soak of 10 minutes or more, spread evenly
    from a quarter of the soak to four fifths, so that its start and end see none."""
    rounds = max(1, int(seconds // 300))
    names = [fault for _ in range(rounds) for fault in FAULTS]
    first, last = 0.25 * seconds, 0.8 * seconds
    spacing = (last - first) / len(names)
    return [(name, backend, round(first + index * spacing, 1)) for index, (name, backend) in enumerate(names)]


@dataclass
class Tally:
    """Per second since the load started: per RPC, calls by status; the failed calls one by one."""

    begun: float
    seconds: dict[int, dict[str, Counter[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(Counter))
    )
    failures: list[dict[str, Any]] = field(default_factory=list)

    def add(self, rpc: str, started: float, ended: float, code: str, message: str = "") -> None:
        self.seconds[int(ended - self.begun)][rpc][code] += 1
        if code != "OK":
            self.failures.append(
                {
                    "rpc": rpc,
                    "started": round(started - self.begun, 3),
                    "ended": round(ended - self.begun, 3),
                    "code": code,
                    "message": message[:200],
                }
            )


def _calls(channel: grpc.aio.Channel) -> dict[str, Callable[[], Awaitable[None]]]:
    greeter, store = bench_pb2_grpc.GreeterStub(channel), bench_pb2_grpc.ObjectStoreStub(channel)
    listing = bench_pb2.ListObjectsRequest(bucket=SOAK_BUCKET)

    async def hello() -> None:
        await greeter.SayHello(bench_pb2.HelloRequest(name="soak"), timeout=DEADLINE_SECONDS)

    async def unary() -> None:
        await store.ListObjects(listing, timeout=DEADLINE_SECONDS)

    async def stream() -> None:
        request = bench_pb2.ListObjectsRequest(bucket=SOAK_BUCKET, batch_size=10)
        async for _ in store.StreamObjects(request, timeout=DEADLINE_SECONDS):
            pass

    async def archive() -> None:
        await store.ArchiveObjects(listing, timeout=DEADLINE_SECONDS)

    return {"hello": hello, "s3-unary": unary, "s3-stream": stream, "s3-mongo": archive}


async def drive(target: str, seconds: float, tally: Tally, callers: int = CALLS_PER_RPC) -> None:
    """`callers` closed-loop callers per RPC, each on its own channel, for `seconds`."""
    deadline = tally.begun + seconds

    async def caller(rpc: str) -> None:
        async with grpc.aio.insecure_channel(target) as channel:
            call = _calls(channel)[rpc]
            while time.monotonic() < deadline:
                started = time.monotonic()
                try:
                    await call()
                    tally.add(rpc, started, time.monotonic(), "OK")
                except grpc.aio.AioRpcError as error:
                    tally.add(rpc, started, time.monotonic(), error.code().name, error.details() or "")
                await asyncio.sleep(THINK_SECONDS)

    await asyncio.gather(*(caller(rpc) for rpc in NEEDS for _ in range(callers)))


class Backends:
    """versitygw and mongo-java-server behind toxiproxy; S3 can be stopped and started again in place."""

    def __init__(self, stack: ExitStack) -> None:
        self._data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-s3-")))
        self._stack = stack
        self._s3_stack = ExitStack()
        stack.callback(self._s3_stack.close)
        self.gateway: VersityGW = self._s3_stack.enter_context(versitygw(self._data))
        mongo_uri, _ = stack.enter_context(mongo_java_server())
        self.direct = self.gateway.config(BackendConfig(mongo_uri=mongo_uri))
        self.proxy: Toxiproxy = stack.enter_context(toxiproxy())
        s3 = self.proxy.add_proxy("s3", s3_upstream(self.direct))
        mongo = self.proxy.add_proxy("mongodb", mongo_upstream(self.direct))
        # Backend timeouts below the calls' deadline: a hung backend frees a worker thread in time.
        self.config = replace(
            through_proxies(self.direct, s3, mongo), connect_timeout=CONNECT_TIMEOUT, read_timeout=READ_TIMEOUT
        )

    def restart_s3(self) -> None:
        """Stop the S3 server, leave it down a moment, start it again on the same port, data and keys."""
        port = int(self.gateway.endpoint.rpartition(":")[2])
        credentials = self.gateway.credentials
        self._s3_stack.close()
        time.sleep(RESTART_PAUSE_SECONDS)
        self._s3_stack = ExitStack()
        self.gateway = self._s3_stack.enter_context(versitygw(self._data, port, credentials))

    def inject(self, name: str) -> None:
        """Hold a fault for FAULT_SECONDS (a restart for as long as it takes), then lift it."""
        if name == "s3-stopped-and-restarted":
            self.restart_s3()
            return
        if name == "mongodb-unreachable":
            self.proxy.set_enabled("mongodb", False)
            time.sleep(FAULT_SECONDS)
            self.proxy.set_enabled("mongodb", True)
            return
        kind, attributes = {
            "s3-connections-reset": ("reset_peer", {"timeout": 0}),
            "s3-timing-out": ("timeout", {"timeout": 0}),
            "s3-latency-2s": ("latency", {"latency": 2000}),
        }[name]
        self.proxy.add_toxic("s3", name, kind, attributes)
        time.sleep(FAULT_SECONDS)
        self.proxy.remove_toxic("s3", name)


def sample_server(pid: int, stats_dir: Path) -> tuple[dict[str, float], dict[str, dict[str, int]]]:
    """The server's CPU seconds so far, RSS, open file descriptors, threads and Python threads, summed over
    its processes; and its Python threads by name with the bounds of its thread pools (from the counters
    its processes write into stats_dir)."""
    totals = {"cpu_seconds": 0.0, "rss_bytes": 0, "fds": 0, "threads": 0}
    processes = process_tree(psutil.Process(pid))
    for process in processes:
        try:
            with process.oneshot():
                cpu = process.cpu_times()
                totals["cpu_seconds"] += cpu.user + cpu.system
                totals["rss_bytes"] += process.memory_info().rss
                totals["fds"] += process.num_fds()
                totals["threads"] += process.num_threads()
        except psutil.Error:
            continue
    totals["cpu_seconds"] = round(totals["cpu_seconds"], 2)
    names: Counter[str] = Counter()
    pools: dict[str, int] = {}
    for counters in read_counters(stats_dir, {process.pid for process in processes}).values():
        names.update(counters.get("python_threads", {}))
        pools.update(counters.get("thread_pools", {}))
    totals["python_threads"] = sum(names.values())
    return totals, {"names": dict(sorted(names.items())), "pools": pools}


@contextmanager
def faults_on_schedule(backends: Backends, begun: float, plan: list[tuple[str, str, float]]) -> Iterator[list[Fault]]:
    """Inject the planned faults from a thread while the load runs; yields the faults as they happen."""
    happened: list[Fault] = []
    failed: list[BaseException] = []
    stop = threading.Event()

    def run() -> None:
        try:
            for name, backend, start in plan:
                if stop.wait(max(0.0, begun + start - time.monotonic())):
                    return
                started = time.monotonic() - begun
                backends.inject(name)
                happened.append(Fault(name, backend, round(started, 3), round(time.monotonic() - begun, 3)))
        except BaseException as error:  # raised in the soak's own thread below
            failed.append(error)

    thread = threading.Thread(target=run, name="faults", daemon=True)
    thread.start()
    try:
        yield happened
    finally:
        stop.set()
        thread.join()
    if failed:
        raise SoakError(f"injecting a fault failed, so the soak proves nothing: {failed[0]}") from failed[0]
    if len(happened) < len(plan):
        raise SoakError(f"only {len(happened)} of {len(plan)} faults were injected before the load ended")


def archive_documents(config: BackendConfig) -> tuple[int, int]:
    """(documents in the archive collection for the bucket, distinct object keys among them)."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(config.mongo_uri, serverSelectionTimeoutMS=5000)
    try:
        collection = client[config.mongo_db][ARCHIVE_COLLECTION]
        documents = collection.count_documents({"bucket": SOAK_BUCKET})
        return documents, len(collection.distinct("key", {"bucket": SOAK_BUCKET}))
    finally:
        client.close()


def soak_one(variant: ServerVariant, seconds: float, server_cpus: Sequence[int]) -> dict[str, Any]:
    """One variant under the mixed load and the fault schedule; the report, with its verdict."""
    with ExitStack() as stack:
        backends = Backends(stack)
        seed_bucket(backends.direct, SOAK_BUCKET, SOAK_OBJECTS)
        stats_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="soak-stats-")))
        env = {**backend_env(backends.config), STATS_DIR_VARIABLE: str(stats_dir)}
        target, child = stack.enter_context(running_server(variant, env, cpus=server_cpus))
        plan = schedule(seconds)
        first_fault = min(start for _, _, start in plan)
        # Warm-up, not recorded: the server's thread and connection pools grow to what WARMUP_CALLERS
        # calls at once need, so that the levels before the first fault are the warm ones.
        asyncio.run(drive(target, WARMUP_SECONDS, Tally(time.monotonic()), WARMUP_CALLERS))
        begun = time.monotonic()
        tally = Tally(begun)
        samples: list[dict[str, float]] = []
        threads: dict[str, dict[str, dict[str, int]]] = {}
        cpu_before = time.process_time()

        async def load_and_sample() -> None:
            load = asyncio.ensure_future(drive(target, seconds, tally))
            while not load.done():
                second = round(time.monotonic() - begun, 1)
                totals, threads["end"] = sample_server(child.pid, stats_dir)
                if second < first_fault:
                    threads["before_first_fault"] = threads["end"]
                samples.append({"second": second, **totals})
                await asyncio.wait([load], timeout=1.0)
            load.result()

        with faults_on_schedule(backends, begun, plan) as happened:
            asyncio.run(load_and_sample())
        wall = time.monotonic() - begun
        driver_cpu = time.process_time() - cpu_before
        documents, keys = archive_documents(backends.direct)
        server_alive = child.process.poll() is None
    report = {
        "server": variant.name,
        "command": variant.command,
        "seconds": round(wall, 1),
        "server_cpus": list(server_cpus),
        "driver": {"cpu_seconds": round(driver_cpu, 2), "cpu_share": round(driver_cpu / wall, 3)},
        "schedule": [asdict(fault) for fault in happened],
        "per_second": {
            str(second): {rpc: dict(codes) for rpc, codes in rpcs.items()}
            for second, rpcs in sorted(tally.seconds.items())
        },
        "failures": tally.failures,
        "server_samples": samples,
        "python_threads": threads,
        "archive": {"objects": SOAK_OBJECTS, "documents": documents, "distinct_keys": keys},
        "server_alive_at_end": server_alive,
    }
    report["load"] = load_summary(report)
    report["verdict"] = verdict(report)
    return report


def soak(
    variants: Sequence[ServerVariant], minutes: float, out_dir: Path, server_cpus: Sequence[int]
) -> tuple[Path, list[dict[str, Any]]]:
    """Each variant in turn; writes soak/<run>/run.json and <server>.json under out_dir (harness.render.soak draws
    each server's chart from it)."""
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    run_dir = out_dir / "soak" / run_id
    meta = SoakMeta(
        run_id,
        datetime.now(UTC).isoformat(timespec="seconds"),
        Environment(**environment({})),
        minutes,
        [variant.name for variant in variants],
        list(server_cpus),
    )
    meta.save(run_dir)
    reports = []
    try:
        with off_cpus(server_cpus):
            for variant in variants:
                report = soak_one(variant, minutes * 60, server_cpus)
                write_json_atomic(run_dir / f"{variant.name}.json", report)
                reports.append(report)
        meta = replace(meta, status="complete")
    finally:
        if meta.status == "running":
            meta = replace(meta, status="interrupted")
        meta.save(run_dir)
    return run_dir, reports
