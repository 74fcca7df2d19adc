"""Ports a server binds: a single process refuses one that anything else listens on, rather than sharing it through
SO_REUSEPORT as grpcio, Envoy and a `reuse_port=True` asyncio server would by default; the processes of a
multi-process server share theirs with each other alone. Socket and errno only, so that a stack's floor
(servers/minimal.py) imports nothing it would not."""

from __future__ import annotations

import errno
import socket


class PortInUse(SystemExit):
    """A server refusing to start on an address something else listens on: it exits with status 1 and this message
    on stderr, and the process that holds the port goes on serving, untouched."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(
            f"{host}:{port} is already in use: another process listens there; stop it, or give another --port"
        )


def refuse_taken(host: str, port: int) -> None:
    """Raise PortInUse where something already listens on host:port: a probe bind without SO_REUSEPORT, which the
    kernel refuses while any socket holds the port (a connection in TIME_WAIT does not: SO_REUSEADDR). Port 0 is
    never taken."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise PortInUse(host, port) from error
            raise
