"""The benchmark matrix as data: the server variants (a registry), and later scenarios and levels.

A new stack is one entry here and one module in `servers/`; tests and the run loop read this table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TypeVar


@dataclass(frozen=True)
class ServerVariant:
    """One way of serving: a server module and its flags."""

    name: str
    module: str
    args: tuple[str, ...]
    # Calls it can serve at once: thread-pool workers, or None for an event loop (no fixed bound).
    slots: int | None
    description: str

    def argv(self, port: int, host: str = "127.0.0.1") -> list[str]:
        """The command that starts this variant on host:port."""
        return [sys.executable, "-m", self.module, *self.args, "--host", host, "--port", str(port)]

    @property
    def command(self) -> str:
        """The command a user types, for tables and the README."""
        return " ".join(["python -m", self.module, *self.args])


SERVER_VARIANTS: tuple[ServerVariant, ...] = (
    ServerVariant("sync-w1", "servers.sync", ("-w", "1"), 1, "grpcio sync, 1 worker thread"),
    ServerVariant("sync-w10", "servers.sync", ("-w", "10"), 10, "grpcio sync, 10 worker threads"),
    ServerVariant("grpclib-asyncio", "servers.async", ("-l", "asyncio"), None, "grpclib on asyncio"),
    ServerVariant("grpclib-uvloop", "servers.async", ("-l", "uvloop"), None, "grpclib on uvloop"),
)


@dataclass(frozen=True)
class Scenario:
    """One kind of call ghz makes: the method, its request, and how to size a run of it."""

    name: str
    call: str
    data: dict[str, object]
    description: str
    # Requests in a warm-up run; measured runs are sized from the warm-up's throughput.
    warmup_requests: int


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("hello", "bench.v1.Greeter.SayHello", {"name": "world"}, "SayHello: no I/O", 2000),
    Scenario(
        "s3-unary",
        "bench.v1.ObjectStore.ListObjects",
        {"bucket": "bench"},
        "ListObjects: the whole bucket in one reply",
        20,
    ),
    Scenario(
        "s3-stream",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": "bench", "batch_size": 1},
        "StreamObjects: one object per message (batch_size 1)",
        20,
    ),
    Scenario(
        "s3-mongo",
        "bench.v1.ObjectStore.ArchiveObjects",
        {"bucket": "bench"},
        "ArchiveObjects: list the bucket, upsert one document per object",
        20,
    ),
)
Named = TypeVar("Named", "Scenario", "ServerVariant")
CONCURRENCY_LEVELS: tuple[int, ...] = (2, 10, 25, 50)
REPEATS = 3
# Measured runs are sized to last about this long, from the warm-up's throughput.
TARGET_RUN_SECONDS = 2.5
MAX_REQUESTS = 50_000


def scenario(name: str) -> Scenario:
    """The scenario called name."""
    return _by_name(SCENARIOS, name, "scenario")


def server_variant(name: str) -> ServerVariant:
    """The registered variant called name."""
    return _by_name(SERVER_VARIANTS, name, "server variant")


def _by_name(items: tuple[Named, ...], name: str, kind: str) -> Named:
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"unknown {kind} {name!r}; known: {', '.join(item.name for item in items)}")


@dataclass(frozen=True)
class Cell:
    """One point of the matrix: a server variant serving a scenario at a concurrency level."""

    server: ServerVariant
    scenario: Scenario
    concurrency: int

    @property
    def key(self) -> str:
        """A stable, path-safe name: scenario/server/c<N>."""
        return f"{self.scenario.name}/{self.server.name}/c{self.concurrency}"


def expand(servers: tuple[ServerVariant, ...], scenarios: tuple[Scenario, ...], levels: tuple[int, ...]) -> list[Cell]:
    """Every cell of servers x scenarios x levels, one scenario at a time."""
    return [Cell(server, each, level) for each in scenarios for server in servers for level in levels]


def measured_requests(warmup_ok_rps: float, concurrency: int) -> int:
    """Requests for a run of about TARGET_RUN_SECONDS; at least one per ghz worker."""
    return max(concurrency, min(MAX_REQUESTS, round(warmup_ok_rps * TARGET_RUN_SECONDS)))
