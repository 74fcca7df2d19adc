"""What every server shares: CLI -> ServerConfig, domain error -> status code, logging, reply shapes."""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from google.protobuf import descriptor, descriptor_pool

from protos.bench.v1 import bench_pb2
from scenarios.clients import PER_PROCESS, S3_CLIENT_SCOPES, S3ClientScope, s3_scope
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable, Cancelled, InvalidArgument, NotFound, ScenarioError
from scenarios.info import InfoStore
from scenarios.objects import ArchiveCounts
from scenarios.sensors import DEFAULT_INTERVAL_MS, interval_seconds
from servers.diagnostics import count_call, diagnosed_loop
from servers.ports import PortInUse, refuse_taken

LOOPS = ("asyncio", "uvloop")
Loop = Literal["asyncio", "uvloop"]
MONGO_DRIVERS = ("motor", "pymongo")
MongoDriver = Literal["motor", "pymongo"]
# A thread pool, an event loop, an HTTP server on an event loop (REST), or an ASGI server on one (Connect RPC).
Stack = Literal["threads", "loop", "http", "asgi"]
HTTP_VERSIONS = ("1.1", "2")
HttpVersion = Literal["1.1", "2"]
ASGI_SERVERS = ("pyvoy", "hypercorn")  # what serves the Connect RPC stack's ASGI app
AsgiServer = Literal["pyvoy", "hypercorn"]
HEALTH_PATH = "/healthz"  # a REST server's readiness check: 200 once it serves
# The largest request message any stack accepts, stated once for every stack: a larger one is refused with
# RESOURCE_EXHAUSTED before it is decoded. grpcio's default is 4 MiB; it is raised so that the wire study can send
# 16 MiB (scenarios.objects.MAX_REPLY_BYTES) with room for its envelope.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
# Options every grpcio server (sync and aio) is created with; a grpcio client that reads the largest replies too.
GRPCIO_SERVER_OPTIONS = (("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),)
GRPCIO_CLIENT_OPTIONS = GRPCIO_SERVER_OPTIONS
# Calls grpc's core holds for a grpc.aio server before the server's loop asks for them. Past the soft limit
# (core's default 1,000) core drops arriving calls at random, more often towards the hard limit (3,000),
# and the client sees CANCELLED: measured with 2,000 streams at once, about one in nine. The limits are
# raised out of a flood's reach; a server that must shed load refuses with --max-concurrent-rpcs. (The
# sync server keeps core's defaults: with them raised, its maximum_concurrent_rpcs no longer refused.)
MAX_PENDING_CALLS = 100_000
AIO_SERVER_OPTIONS = (
    *GRPCIO_SERVER_OPTIONS,
    ("grpc.server.max_pending_requests", MAX_PENDING_CALLS),
    ("grpc.server.max_pending_requests_hard_limit", 2 * MAX_PENDING_CALLS),
)
# Full names of the services every server registers, for health and reflection.
SERVICE_NAMES = tuple(service.full_name for service in bench_pb2.DESCRIPTOR.services_by_name.values())

log = logging.getLogger("servers")
BACKLOG = 4096


@dataclass(frozen=True)
class TlsFiles:
    """PEM files a server serves TLS with; with client_ca, mutual TLS: a client must present a certificate
    signed by that CA, or the handshake is refused."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    @staticmethod
    def paths(tls: TlsFiles | None) -> tuple[Path | None, Path | None, Path | None]:
        """Certificate, key and client CA, or three Nones for plaintext: as the ASGI servers take them."""
        return (tls.cert, tls.key, tls.client_ca) if tls else (None, None, None)

    def argv(self) -> list[str]:
        argv = ["--tls-cert", str(self.cert), "--tls-key", str(self.key)]
        return [*argv, "--tls-client-ca", str(self.client_ca)] if self.client_ca else argv

    def grpc_credentials(self) -> Any:
        """grpcio's server credentials (sync and aio)."""
        import grpc

        return grpc.ssl_server_credentials(
            [(self.key.read_bytes(), self.cert.read_bytes())],
            root_certificates=self.client_ca.read_bytes() if self.client_ca else None,
            require_client_auth=self.client_ca is not None,
        )

    def ssl_context(self, alpn: Sequence[str]) -> ssl.SSLContext:
        """A server context offering the ALPN protocols alpn, for the stacks that use Python's ssl module."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        context.set_alpn_protocols(list(alpn))
        if self.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(self.client_ca)
        return context


def tls_files(cert: str | None, key: str | None, client_ca: str | None) -> TlsFiles | None:
    """The TLS files the flags name (None: plaintext); raises ValueError naming a missing flag or unreadable file."""
    if cert is None and key is None:
        if client_ca is not None:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if cert is None or key is None:
        raise ValueError("--tls-cert and --tls-key go together: give both")
    for flag, path in (("--tls-cert", cert), ("--tls-key", key), ("--tls-client-ca", client_ca)):
        if path is not None and not Path(path).is_file():
            raise ValueError(f"{flag}: no such file: {path}")
    return TlsFiles(Path(cert), Path(key), Path(client_ca) if client_ca else None)


@dataclass(frozen=True)
class ServerConfig:
    """How a server runs. `workers` sizes a thread pool; `loop` picks an event loop."""

    host: str = "127.0.0.1"
    port: int = 50051
    grace: float = 5.0
    stack: Stack = "threads"  # a thread pool (workers) or an event loop (loop, pool_size, mongo_driver)
    workers: int = 10
    # Server processes sharing the port (SO_REUSEPORT); more than 1 needs an explicit port.
    processes: int = 1
    # One worker process of a multi-process server: it binds with SO_REUSEPORT, sharing the port with its siblings
    # alone (the supervisor checked that nothing else listens there). A single process binds without it, so that a
    # port already in use is refused rather than silently shared.
    shared_port: bool = False
    # Calls a server runs (or, on a thread pool, queues) at once before it refuses more with
    # RESOURCE_EXHAUSTED (grpcio's maximum_concurrent_rpcs on a thread pool; CallLimit on an event loop);
    # None: no limit.
    max_concurrent_rpcs: int | None = None
    loop: Loop = "asyncio"
    # Backend connections per client for event-loop servers (thread-pool servers use `workers`).
    pool_size: int = 100
    # The async MongoDB client of event-loop servers: motor, or PyMongo's native AsyncMongoClient.
    mongo_driver: MongoDriver = "motor"
    # How often a watched sensor delivers a reading on Sensor.Watch streams.
    sensor_interval_ms: int = DEFAULT_INTERVAL_MS
    # Who holds the S3 client: the process (made once), or each request (a new session and client per call).
    s3_client: S3ClientScope = PER_PROCESS
    # The HTTP version a REST server speaks: 1.1 (uvicorn) or 2 (hypercorn, cleartext).
    http: HttpVersion = "1.1"
    # The ASGI server of the Connect RPC stack: pyvoy (Envoy) or hypercorn.
    server: AsgiServer = "hypercorn"
    # The Connect stack gzips replies for clients that accept it (connectrpc's default); False: it never compresses.
    gzip_replies: bool = False
    # On hypercorn, each HTTP/2 stream's and the connection's receive window (None: HTTP/2's 65,535).
    h2_window: int | None = None
    # TLS (and with a client CA, mutual TLS); None: plaintext.
    tls: TlsFiles | None = None
    backends: BackendConfig = field(default_factory=BackendConfig)

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0-65535, got {self.port}")
        if self.grace < 0:
            raise ValueError(f"grace must be >= 0 seconds, got {self.grace}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        if self.processes < 1:
            raise ValueError(f"processes must be >= 1, got {self.processes}")
        if self.max_concurrent_rpcs is not None and self.max_concurrent_rpcs < 1:
            raise ValueError(f"max concurrent RPCs must be >= 1, got {self.max_concurrent_rpcs}")
        if self.processes > 1 and self.port == 0:
            raise ValueError("several processes share one port: give --port, not 0")
        interval_seconds(self.sensor_interval_ms)  # raises ValueError below 1 ms
        if self.pool_size < 1:
            raise ValueError(f"pool size must be >= 1, got {self.pool_size}")
        if self.loop not in LOOPS:
            raise ValueError(f"loop must be one of {', '.join(LOOPS)}, got {self.loop!r}")
        if self.http not in HTTP_VERSIONS:
            raise ValueError(f"HTTP version must be one of {', '.join(HTTP_VERSIONS)}, got {self.http!r}")
        if self.server not in ASGI_SERVERS:
            raise ValueError(f"ASGI server must be one of {', '.join(ASGI_SERVERS)}, got {self.server!r}")
        if self.mongo_driver not in MONGO_DRIVERS:
            raise ValueError(f"mongo driver must be one of {', '.join(MONGO_DRIVERS)}, got {self.mongo_driver!r}")
        s3_scope(self.s3_client)

    def worker_argv(self) -> list[str]:
        """The flags that run this configuration as one worker process of a multi-process server."""
        argv = ["--host", self.host, "--port", str(self.port), "--grace", str(self.grace), "-p", "1", "--shared-port"]
        if self.tls:
            argv += self.tls.argv()
        if self.sensor_interval_ms != DEFAULT_INTERVAL_MS:
            argv += ["--sensor-interval-ms", str(self.sensor_interval_ms)]
        if self.max_concurrent_rpcs is not None:
            argv += ["--max-concurrent-rpcs", str(self.max_concurrent_rpcs)]
        if self.stack == "http":
            return [*argv, "-l", self.loop, "--http", self.http]
        argv += ["--s3-client", self.s3_client]
        if self.stack == "threads":
            return [*argv, "-w", str(self.workers)]
        argv += ["-l", self.loop, "--pool-size", str(self.pool_size), "--mongo-driver", self.mongo_driver]
        return [*argv, "--server", self.server] if self.stack == "asgi" else argv


def parse_config(argv: Sequence[str] | None, *, prog: str, description: str, stack: Stack) -> ServerConfig:
    """Parse a server's command line; backends come from the environment."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    parser.add_argument("--port", type=int, default=50051, help="port to bind, 0 for any (default: %(default)s)")
    parser.add_argument(
        "--grace",
        type=float,
        default=5.0,
        help="seconds calls in flight get on shutdown (default: %(default)s)",
    )
    parser.add_argument(
        "-p",
        "--processes",
        type=int,
        default=1,
        help="server processes sharing the port with SO_REUSEPORT, refused where anything else listens on it "
        "(default: %(default)s)",
    )
    parser.add_argument("--shared-port", action="store_true", default=None, help=argparse.SUPPRESS)  # a -p N worker
    parser.add_argument("--tls-cert", help="serve TLS only, with this certificate chain (PEM)")
    parser.add_argument("--tls-key", help="the certificate's private key (PEM)")
    parser.add_argument(
        "--tls-client-ca", help="mutual TLS: refuse a client without a certificate signed by this CA (PEM)"
    )
    if stack != "http":  # gRPC servers: the REST server serves no Sensor and no gRPC status
        parser.add_argument(
            "--sensor-interval-ms",
            type=int,
            default=DEFAULT_INTERVAL_MS,
            help="milliseconds between readings of a watched sensor on Sensor.Watch (default: %(default)s)",
        )
        parser.add_argument(
            "--max-concurrent-rpcs",
            type=int,
            help="refuse calls beyond this many at once with RESOURCE_EXHAUSTED (default: no limit; a thread "
            "pool queues calls for a free worker, an event loop runs them all)",
        )
        parser.add_argument(
            "--s3-client",
            choices=S3_CLIENT_SCOPES,
            default=PER_PROCESS,
            help="one S3 client for the process, or a new session and client for every request, as the 2020 "
            "study's handlers made (default: %(default)s)",
        )
    if stack == "threads":
        parser.add_argument(
            "-w", "--workers", type=int, default=10, help="thread-pool size per process (default: %(default)s)"
        )
    elif stack == "http":
        parser.add_argument("-l", "--loop", choices=LOOPS, default="uvloop", help="event loop (default: %(default)s)")
        parser.add_argument(
            "--http",
            choices=HTTP_VERSIONS,
            default="1.1",
            help="1.1 (uvicorn, keep-alive) or 2 (hypercorn, cleartext HTTP/2) (default: %(default)s)",
        )
    else:
        if stack == "asgi":
            parser.add_argument(
                "--server",
                choices=ASGI_SERVERS,
                default="pyvoy",
                help="the ASGI server: pyvoy (Envoy) or hypercorn (default: %(default)s)",
            )
            parser.add_argument(
                "--h2-window",
                type=int,
                help="on hypercorn, each HTTP/2 stream's and the connection's receive window in bytes "
                "(default: HTTP/2's 65,535, as hypercorn leaves it)",
            )
            parser.add_argument(
                "--gzip-replies",
                action="store_true",
                default=None,
                help="gzip replies for clients that accept it, as connectrpc does by default (default: never)",
            )
        loop = "uvloop" if stack == "asgi" else "asyncio"
        parser.add_argument("-l", "--loop", choices=LOOPS, default=loop, help="event loop (default: %(default)s)")
        parser.add_argument(
            "--pool-size", type=int, default=100, help="backend connections per client (default: %(default)s)"
        )
        parser.add_argument(
            "--mongo-driver",
            choices=MONGO_DRIVERS,
            default="motor",
            help="async MongoDB client: motor, or PyMongo's AsyncMongoClient (default: %(default)s)",
        )
    args = parser.parse_args(argv)
    files = (args.tls_cert, args.tls_key, args.tls_client_ca)
    options = {name: value for name, value in vars(args).items() if value is not None and not name.startswith("tls")}
    try:
        return ServerConfig(backends=BackendConfig.from_env(), stack=stack, tls=tls_files(*files), **options)
    except ValueError as error:
        parser.error(str(error))


def freeze_startup_heap() -> None:
    """Put every object startup made (modules, botocore's service models, the server itself) out of the cyclic
    collector's reach, as a server does once it is ready (`gc.freeze`). Our servers import boto3, the MongoDB
    drivers and the scenarios, twice the objects of a stack's floor; without this every full collection walks
    them again, and a hello call cost about 7% more CPU than with them frozen (sync-w10, c=50)."""
    gc.collect()
    gc.freeze()


def run_on_loop(config: ServerConfig, serve: Callable[[ServerConfig], Coroutine[Any, Any, None]]) -> None:
    """Run an async server's main coroutine on the configured event loop, with its counters if asked for."""

    async def main() -> None:
        async with diagnosed_loop():
            await serve(config)

    if config.loop == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())


class StopSignal:
    """SIGTERM or SIGINT, noted by a handler that takes no lock; the main thread polls for it.

    A handler must not call `threading.Event.set()`: in a process with other threads (grpc's), the
    kernel may hand the signal to one of them, and the main thread runs the Python handler when it next
    executes bytecode, often right after `Event.wait()` re-took the Event's own lock. `set()` then waits
    for that lock forever and the process never stops.
    """

    POLL_SECONDS = 0.1

    def __init__(self) -> None:
        self.received: int | None = None
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._note)

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum

    async def until_received(self) -> None:
        """Sleep on the event loop until a stop signal arrives.

        Not `loop.add_signal_handler`: closing the loop restores the default action, so a second
        SIGTERM (a supervisor forwarding the one its process group already got) killed a worker
        during its teardown. This handler stays installed for the life of the process.
        """
        while self.received is None:
            await asyncio.sleep(self.POLL_SECONDS)

    def wait(self, timeout: float | None = None) -> bool:
        """Sleep until a stop signal arrives (True) or the timeout passes (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.received is None:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(self.POLL_SECONDS)
        return True


class CallLimit:
    """The calls an event-loop server runs at once, and the limit beyond which it refuses new ones.

    Refusing at once with RESOURCE_EXHAUSTED tells an overloaded server's clients to back off, and keeps
    the loop short of work. grpc.aio's own `maximum_concurrent_rpcs` does not refuse: it stops taking
    calls from grpc's core, where they wait.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.running = 0

    def refusal(self) -> str | None:
        """Why a new call is refused now, or None when it may run."""
        if self.limit is not None and self.running >= self.limit:
            return f"server busy: {self.running} calls running, its limit (--max-concurrent-rpcs) is {self.limit}"
        return None

    def started(self) -> None:
        """A call admitted: one more running, and one more in the process's `calls` counter."""
        self.running += 1
        count_call()

    def finished(self) -> None:
        """A call ended, however it ended."""
        self.running -= 1


class RaisingCallLimit(CallLimit):
    """A call limit for a stack whose handlers end a call with a status by raising it (grpclib, Connect RPC).

    `with calls.call("SayHello"):` admits the call or raises the stack's refusal, and turns what its body raises
    into the stack's error: a domain error into its status, anything unexpected into INTERNAL (logged once).
    """

    PASSES: tuple[type[BaseException], ...] = ()  # the stack's own errors, raised on unchanged

    def call(self, method: str) -> TrackedCall:
        return TrackedCall(self, method)

    def admit(self) -> None:
        """Count the call in, or raise the stack's refusal."""
        refused = self.refusal()
        if refused:
            raise self.refused(refused)
        self.started()

    def refused(self, message: str) -> Exception:
        """The stack's error refusing a call over the limit (RESOURCE_EXHAUSTED)."""
        raise NotImplementedError

    def failed(self, error: ScenarioError | None) -> Exception:
        """The stack's error for a domain error, or for an unexpected one (None): INTERNAL, its cause not told."""
        raise NotImplementedError


class TrackedCall:
    """One call inside a RaisingCallLimit. A class, not a @contextmanager generator: every call enters one, and
    a generator's setup cost a hello call about 1% of its CPU (grpclib on asyncio, against the stack's floor)."""

    __slots__ = ("_calls", "_method")

    def __init__(self, calls: RaisingCallLimit, method: str) -> None:
        self._calls = calls
        self._method = method

    def __enter__(self) -> None:
        self._calls.admit()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, traceback: object) -> None:
        self._calls.finished()
        if not isinstance(error, Exception) or isinstance(error, self._calls.PASSES):
            return  # no error, or a cancellation, or the stack's own status: on its way unchanged
        log_failure(self._method, error)
        raise self._calls.failed(error if isinstance(error, ScenarioError) else None) from None


def catches(pid: int, signum: int) -> bool:
    """Whether process pid has a handler installed for signum (Linux: SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), "0")
    return bool(int(caught, 16) >> (signum - 1) & 1)


def supervise(config: ServerConfig, module: str) -> int:
    """Run config.processes single-process servers of `module` on one port; stop them all on SIGTERM or SIGINT.

    grpc's documented way to use more cores: one process per core, each with its own GIL, sharing the
    port through SO_REUSEPORT. Ready when every worker listens; a worker that dies stops the rest, and
    the supervisor then exits non-zero.
    """
    refuse_taken(config.host, config.port)  # the workers share the port with each other alone
    stop = StopSignal()
    argv = [sys.executable, "-m", module, *config.worker_argv()]
    workers = [subprocess.Popen(argv) for _ in range(config.processes)]
    log.info("supervising %d server processes: %s", len(workers), ", ".join(str(w.pid) for w in workers))
    try:
        while not stop.wait(0.5):
            exited = [worker for worker in workers if worker.poll() is not None]
            # A signal sent to the whole process group can stop a worker before this process sees it.
            if exited and not stop.wait(1.0):
                log.error("server process %d exited with status %d; stopping", exited[0].pid, exited[0].returncode)
                break
    finally:
        # A signal to the whole process group reached the workers too: give them a moment to stop on it.
        # Then forward SIGTERM only to a worker that still catches it: one whose event loop has closed
        # is tearing down with the default action restored, and a second SIGTERM would kill it.
        settle = time.monotonic() + 1.0
        while time.monotonic() < settle and any(worker.poll() is None for worker in workers):
            time.sleep(0.05)
        for worker in workers:
            if worker.poll() is None and catches(worker.pid, signal.SIGTERM):
                worker.send_signal(signal.SIGTERM)
        for worker in workers:
            try:
                worker.wait(config.grace + 5)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            if worker.returncode != 0:
                log.error("server process %d exited with status %d", worker.pid, worker.returncode)
    return 0 if stop.received is not None and all(worker.returncode == 0 for worker in workers) else 1


def grpcio_options(config: ServerConfig) -> tuple[tuple[str, int], ...]:
    """The channel option that tells grpcio whether to bind with SO_REUSEPORT (its default on Linux): only a worker
    of a multi-process server does."""
    return (("grpc.so_reuseport", int(config.shared_port)),)


def add_grpcio_port(server: Any, config: ServerConfig) -> int:
    """Bind a grpcio server (sync or aio, made with `grpcio_options`) to the configured address, with TLS if
    configured; the port bound. A port already in use raises PortInUse (grpcio says only that it failed to bind)."""
    address = f"{config.host}:{config.port}"
    try:
        if config.tls:
            return int(server.add_secure_port(address, config.tls.grpc_credentials()))
        return int(server.add_insecure_port(address))
    except RuntimeError:
        if not config.shared_port:
            refuse_taken(config.host, config.port)
        raise


def listening_socket(host: str, port: int, shared: bool = False) -> socket.socket:
    """The server's socket: bound with SO_REUSEPORT where the processes of a multi-process server share it
    (`shared`), else without, so that a port already in use raises PortInUse."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if shared:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # accepted connections inherit it
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            raise PortInUse(host, port) from error
        raise
    sock.listen(BACKLOG)
    sock.set_inheritable(True)
    return sock


def setup_logging() -> None:
    """One line per event on stderr."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")


def status_of(error: ScenarioError) -> str:
    """The gRPC status code name for a domain error (the same names in grpcio and grpclib)."""
    if isinstance(error, InvalidArgument):
        return "INVALID_ARGUMENT"
    if isinstance(error, NotFound):
        return "NOT_FOUND"
    if isinstance(error, BackendUnavailable):
        return "UNAVAILABLE"
    if isinstance(error, Cancelled):
        return "CANCELLED"
    return "INTERNAL"


def log_failure(method: str, error: BaseException) -> None:
    """Log a failed call once, with its cause; unexpected errors with their stack trace."""
    if isinstance(error, BackendUnavailable):
        log.warning("%s: %s (%r)", method, error, error.cause)
    elif isinstance(error, ScenarioError):
        log.info("%s: %s", method, error)
    else:
        log.error("%s: unexpected error", method, exc_info=error)


INTERNAL_MESSAGE = "internal error; see the server log"


class ReflectionPool:
    """The default descriptor pool, able to find the file of a method too.

    ghz asks reflection for the file containing `package.Service.Method`, and protobuf's upb pool
    only resolves services, messages and fields; both grpcio's and grpclib's reflection take a pool.
    """

    def __init__(self, pool: descriptor_pool.DescriptorPool | None = None) -> None:
        self._pool = pool or descriptor_pool.Default()

    def FindFileContainingSymbol(self, symbol: str) -> descriptor.FileDescriptor:
        try:
            return self._pool.FindFileContainingSymbol(symbol)
        except KeyError:
            service, _, method = symbol.rpartition(".")
            try:
                found = self._pool.FindServiceByName(service)
            except KeyError:
                found = None
            if found is None or method not in found.methods_by_name:
                raise
            return found.file

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


def archive_reply(counts: ArchiveCounts) -> bench_pb2.ArchiveReply:
    """The ArchiveReply for what ArchiveObjects did."""
    return bench_pb2.ArchiveReply(listed=counts.listed, inserted=counts.inserted, updated=counts.updated)


def info_reply(store: InfoStore, request: bench_pb2.InfoRequest) -> bench_pb2.InfoReply:
    """SetInfos' reply to one request: bad input is a reply with its reason, and the stream goes on."""
    reason = store.refusal(request.name, request.age, request.height)
    return bench_pb2.InfoReply(success=not reason, reason=reason)


SET_INFO_REPLY = bench_pb2.InfoReply(success=True)  # SetInfo's reply: bad input is INVALID_ARGUMENT instead
