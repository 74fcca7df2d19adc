"""The benchmark matrix as data: the server variants (a registry), and later scenarios and levels.

A new stack is one entry here and one module in `servers/`; tests and the run loop read this table.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


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


def server_variant(name: str) -> ServerVariant:
    """The registered variant called name."""
    for variant in SERVER_VARIANTS:
        if variant.name == name:
            return variant
    known = ", ".join(variant.name for variant in SERVER_VARIANTS)
    raise KeyError(f"unknown server variant {name!r}; known: {known}")
