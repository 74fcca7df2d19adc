"""The connections study: how should clients hold connections, and servers their S3 client?

Client side: SayHello (no wait, and a 500 ms wait, the Go study's sleep) at CLIENTS concurrent clients on
every stack, the clients sharing one connection, holding one each, sharing a pool of POOL, or opening a
new connection for every call and closing it after. One driver (loadgen) for every strategy, since ghz
cannot open a connection per call.

Server side: ListObjects at S3_CLIENTS_LEVEL with the S3 client made once per process against a new
session and client for every request, as the 2020 study's handlers made them (`--s3-client per-request`),
with S3 near and 100 ms away.
"""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import PER_CALL, PER_WORKER, S3_LATENCY_MS, SHARED, Scenario, pool, scenario
from harness.plan.servers import STACKS

NAME = "connections"
QUESTION = "How should clients hold connections, and servers their S3 client?"
CLIENTS = 100
POOL = 10
STRATEGIES = (SHARED, PER_WORKER, pool(POOL), PER_CALL)
WAIT_MS = 500  # the Go study's server sleep
HELLO = replace(scenario("hello"), run_seconds=2.5)
HELLO_WAIT = Scenario(
    f"hello-wait-{WAIT_MS}ms",
    "bench.v1.Greeter.SayHello",
    {"name": "world", "delay_ms": WAIT_MS},
    f"SayHello waiting {WAIT_MS} ms without CPU",
    CLIENTS,
    run_seconds=3.0,
)
CLIENT_SCENARIOS = (HELLO, HELLO_WAIT)
S3_SCENARIOS = (scenario("s3-unary"), scenario(f"s3-unary-{S3_LATENCY_MS}ms"))
S3_CLIENTS_LEVEL = 50  # the stacks study's highest level
# The comparisons in rounds run on this stack unless --servers names others; the S3 client's at S3_COMPARED_LEVEL,
# where a window of two waves of calls with a new client for each (about 3 calls/s) lasts seconds, not half a
# minute.
COMPARED_ON = "aio-uvloop"
S3_COMPARED_LEVEL = 10
# Every single-process stack but sync-w1: one worker thread, waiting 500 ms a call, serves 2 calls/s.
STACK_NAMES = tuple(variant.name for variant in STACKS if variant.name != "sync-w1")
