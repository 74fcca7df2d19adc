"""What every server shares: CLI -> ServerConfig, domain error -> status code, logging, reply shapes."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from google.protobuf import descriptor, descriptor_pool

from protos.bench.v1 import bench_pb2
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable, InvalidArgument, NotFound, ScenarioError
from scenarios.objects import ArchiveCounts

LOOPS = ("asyncio", "uvloop")
Loop = Literal["asyncio", "uvloop"]
MONGO_DRIVERS = ("motor", "pymongo")
MongoDriver = Literal["motor", "pymongo"]
# Full names of the services every server registers, for health and reflection.
SERVICE_NAMES = tuple(service.full_name for service in bench_pb2.DESCRIPTOR.services_by_name.values())

log = logging.getLogger("servers")


@dataclass(frozen=True)
class ServerConfig:
    """How a server runs. `workers` sizes a thread pool; `loop` picks an event loop."""

    host: str = "127.0.0.1"
    port: int = 50051
    grace: float = 5.0
    workers: int = 10
    # Thread-pool server processes sharing the port (SO_REUSEPORT); more than 1 needs an explicit port.
    processes: int = 1
    loop: Loop = "asyncio"
    # Backend connections per client for event-loop servers (thread-pool servers use `workers`).
    pool_size: int = 100
    # The async MongoDB client of event-loop servers: motor, or PyMongo's native AsyncMongoClient.
    mongo_driver: MongoDriver = "motor"
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
        if self.processes > 1 and self.port == 0:
            raise ValueError("several processes share one port: give --port, not 0")
        if self.pool_size < 1:
            raise ValueError(f"pool size must be >= 1, got {self.pool_size}")
        if self.loop not in LOOPS:
            raise ValueError(f"loop must be one of {', '.join(LOOPS)}, got {self.loop!r}")
        if self.mongo_driver not in MONGO_DRIVERS:
            raise ValueError(f"mongo driver must be one of {', '.join(MONGO_DRIVERS)}, got {self.mongo_driver!r}")


def parse_config(
    argv: Sequence[str] | None, *, prog: str, description: str, stack: Literal["threads", "loop"]
) -> ServerConfig:
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
    if stack == "threads":
        parser.add_argument(
            "-w", "--workers", type=int, default=10, help="thread-pool size per process (default: %(default)s)"
        )
        parser.add_argument(
            "-p",
            "--processes",
            type=int,
            default=1,
            help="server processes sharing the port with SO_REUSEPORT (default: %(default)s)",
        )
    else:
        parser.add_argument("-l", "--loop", choices=LOOPS, default="asyncio", help="event loop (default: %(default)s)")
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
    options = {name: value for name, value in vars(args).items() if value is not None}
    try:
        return ServerConfig(backends=BackendConfig.from_env(), **options)
    except ValueError as error:
        parser.error(str(error))


def run_on_loop(config: ServerConfig, serve: Callable[[ServerConfig], Coroutine[Any, Any, None]]) -> None:
    """Run an async server's main coroutine on the configured event loop."""
    if config.loop == "uvloop":
        import uvloop

        uvloop.run(serve(config))
    else:
        asyncio.run(serve(config))


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
