"""The server variants as data: a registry of what the harness can start (and the stacks' floors beside it).

A new stack is one entry here and one module in `servers/`; tests and the run loop read this table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from servers.common import ServerConfig


class HasName(Protocol):
    @property
    def name(self) -> str: ...


Named = TypeVar("Named", bound=HasName)  # a registry's entry: a server variant, or a scenario


# How a virtualenv's python runs the repository's code (harness.plan.pythons): -P (3.11+) keeps the working
# directory (the repository, whose committed stubs an older grpcio refuses) off the front of sys.path, so that
# PYTHONPATH decides.
ISOLATED = ("-P",)
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
        python = [self.python, *ISOLATED] if self.python else [sys.executable]
        return [*python, "-m", self.module, *self.args, "--host", host, "--port", str(port)]

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


MONGO_ONLY = ("s3-mongo", "s3-mongo-region")
SERVER_VARIANTS: tuple[ServerVariant, ...] = (
    ServerVariant("sync-w1", "servers.sync", ("-w", "1"), 1, "grpcio sync, 1 worker thread"),
    ServerVariant("sync-w10", "servers.sync", ("-w", "10"), 10, "grpcio sync, 10 worker threads"),
    # Sized to the load: a thread for each client at every level of the brief (grpcio's thread pool starts a thread
    # only when no idle one is free, so at 2 clients it runs 2), the way a team sizes a pool for 50 clients.
    ServerVariant("sync-w50", "servers.sync", ("-w", "50"), 50, "grpcio sync, 50 worker threads (one per client)"),
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
    if base.name in _MINIMAL_ARGS  # a thread pool sized otherwise has the floor of sync-w10's
)


def minimal_of(variant: ServerVariant) -> ServerVariant | None:
    """The floor of one of our variants, where it has one."""
    return next((each for each in MINIMAL_VARIANTS if each.floor_of == variant.name), None)


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
    return by_name(everything, name, "server variant")


def by_name(items: tuple[Named, ...], name: str, kind: str) -> Named:
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"unknown {kind} {name!r}; known: {', '.join(item.name for item in items)}")


def is_floor(label: str) -> bool:
    """A stack's floor (servers/minimal.py): measured beside its stack, never a pick or one to avoid."""
    return label.endswith(MINIMAL_SUFFIX)
