"""The message sizes the wire study and `harness profile` measure: SayHello replying with, or sent, a payload of
each size, as a scenario of its own."""

from __future__ import annotations

from harness.plan.matrix import Scenario

MIB = 1024 * 1024
# Past 1 MiB, 4 MiB is grpc's default receive limit and 16 MiB the largest reply SayHello makes
# (scenarios.objects.MAX_REPLY_BYTES); every stack's limit is raised to 32 MiB (servers.common.MAX_MESSAGE_BYTES).
SIZES = (0, 1024, 64 * 1024, MIB, 4 * MIB, 16 * MIB)
REQUEST_SIZES = SIZES[1:]  # a request of 0 bytes is the reply comparison's 0
REPLY, REQUEST = "reply", "request"


def size_label(size: int) -> str:
    """0B, 1KiB, 64KiB, 1MiB, 16MiB."""
    if size >= MIB:
        return f"{size // MIB}MiB"
    return f"{size // 1024}KiB" if size >= 1024 else f"{size}B"


def sized_scenario(direction: str, size: int) -> Scenario:
    """SayHello replying with `size` bytes of payload, or sending them in its request (a small reply)."""
    field = "reply_bytes" if direction == REPLY else "request_bytes"
    return Scenario(
        f"{direction}-{size_label(size)}",
        "bench.v1.Greeter.SayHello",
        {"name": "world", field: size},
        f"SayHello with {size_label(size)} of payload in its {direction}",
        200,
    )


SIZE_SCENARIOS = (
    *(sized_scenario(REPLY, size) for size in SIZES),
    *(sized_scenario(REQUEST, size) for size in REQUEST_SIZES),
)
# scenario name -> (reply or request, the bytes of payload it moves per call)
SIZED = {
    **{sized_scenario(REPLY, size).name: (REPLY, size) for size in SIZES},
    **{sized_scenario(REQUEST, size).name: (REQUEST, size) for size in REQUEST_SIZES},
}
