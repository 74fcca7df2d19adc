"""The wire study: what TLS costs, how to hold connections under it, and which stack moves large messages.

Three kinds of comparison, each in interleaved rounds on one core: hello at LEVEL workers on one connection in
plaintext, TLS and mutual TLS, on each gRPC stack (ghz); hello at CLIENTS clients on aio-uvloop holding their
connections the connections study's four ways under TLS, beside plaintext's shared and per-call (loadgen, which
can open a connection per call); and replies of each of SIZES bytes at SIZE_LEVEL workers from every gRPC stack,
in plaintext and TLS, against sync-w10 in plaintext (ghz). Opt-in: `run-all --study wire`.
"""

from __future__ import annotations

from harness.matrix import PER_CALL, PER_WORKER, SHARED, Scenario, pool, scenario

NAME = "wire"
QUESTION = "What do TLS and large messages cost, and how should clients hold connections under TLS?"
STACK_NAMES = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy", "connect-hypercorn")
LEVEL = 50
HELLO = scenario("hello")
CONNECTIONS_ON = "aio-uvloop"
CLIENTS = 100
WAYS = (SHARED, PER_WORKER, pool(10), PER_CALL)
SIZES = (1024, 64 * 1024, 1024 * 1024)
SIZE_LEVEL = 10


def size_label(size: int) -> str:
    """1KiB, 64KiB, 1MiB."""
    return f"{size // (1024 * 1024)}MiB" if size >= 1024 * 1024 else f"{size // 1024}KiB"


def reply_scenario(size: int) -> Scenario:
    """SayHello replying with `size` bytes of payload."""
    return Scenario(
        f"reply-{size_label(size)}",
        "bench.v1.Greeter.SayHello",
        {"name": "world", "reply_bytes": size},
        f"SayHello replying with {size_label(size)} of payload",
        200,
    )


SIZE_SCENARIOS = tuple(reply_scenario(size) for size in SIZES)
BYTES = {reply_scenario(size).name: size for size in SIZES}  # reply bytes by scenario name
