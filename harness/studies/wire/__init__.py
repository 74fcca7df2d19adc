"""The wire study: what TLS costs, how to hold connections under it, and which stack moves large messages.

Three kinds of comparison, each in interleaved rounds on one core: hello at LEVEL workers on one connection in
plaintext, TLS and mutual TLS, on each gRPC stack (ghz) and REST (loadgen's GET /v1/hello); hello at CLIENTS
clients on aio-uvloop holding their connections the connections study's four ways under TLS, beside plaintext's
shared and per-call (loadgen, which can open a connection per call); and replies of each of SIZES bytes, then
requests of each of REQUEST_SIZES with a small reply, at SIZE_LEVEL workers from every stack, in plaintext and
TLS, against sync-w10 in plaintext (loadgen: ghz takes a request's bytes on its command line, too short for a
MiB, and cannot speak REST). REST's hello is a GET, so it carries no request payload. And the brief's S3 work a
region away (S3_SCENARIOS) over TLS at LEVEL workers, every stack side by side, so that a team whose clients speak
TLS sees the stacks ranked on its work. Opt-in: `run-all --study wire`.
"""

from __future__ import annotations

from harness.plan.matrix import PER_CALL, PER_WORKER, REGION, SHARED, pool, scenario
from harness.plan.sizes import MIB
from harness.plan.wires import PLAINTEXT, TLS

NAME = "wire"
QUESTION = "What do TLS and large messages cost, and how should clients hold connections under TLS?"
STACK_NAMES = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy", "connect-hypercorn")
REST_NAME = "rest-h1"  # REST's hello beside the gRPC stacks where it can serve the workload
# The brief's S3 work a region away, every stack over TLS side by side (sync-w1, one waiting call at a time, left out
# as the stacks study leaves it out there).
S3_SCENARIOS = (scenario("s3-unary" + REGION), scenario("s3-mongo" + REGION))
S3_STACK_NAMES = ("sync-w10", "sync-w50", "grpclib-asyncio", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy")
LEVEL = 50
HELLO = scenario("hello")
CONNECTIONS_ON = "aio-uvloop"
CLIENTS = 100
WAYS = (SHARED, PER_WORKER, pool(10), PER_CALL)
# From this size on, a size comparison's servers count their event loop's lag (servers.diagnostics): whether a
# large message holds the loop up.
LAG_FROM = MIB
SIZE_LEVEL = 10


def wire_label(name: str, wire: str) -> str:
    """A comparison's label for a stack or a way of connecting over a wire: `aio-uvloop`, `per-call+tls`."""
    return name if wire == PLAINTEXT else f"{name}+{wire}"


NEW_CONNECTIONS = (PER_CALL, wire_label(PER_CALL, TLS))  # the labels whose every call opens a connection
