"""The streaming study: when does streaming beat paging, and how to stream well?

Four parts, all driven by our Go driver (loadgen), so the client's cost is one and the same:
- fetch all: the 10,000 objects of a bucket in 10 top-level prefixes, with S3 0 and 20 ms away: paging
  (the client follows ListObjectsPage's tokens, 1,000 a page), one stream (StreamObjects, batch 1,000),
  and the server listing 4 or 10 prefixes at once (parallelism). With one client: the time to fetch
  everything (median of FETCHES_ALONE); with FETCH_CLIENTS clients: fetch-alls per second;
- stream for a unary reply: SayHello against SayHelloStream at concurrency 10 and 50; at 50, SayHello is
  also driven by ghz, to cross-check loadgen against it;
- batch size: StreamObjects of the 893-object bucket with 1, 10, 100 and 1,000 objects a message, at 10;
- watch: 10, 100 and 1,000 Sensor.Watch streams at once, each watching one of WATCH_SENSORS sensors.
"""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import (
    BENCH_BUCKET,
    BENCH_OBJECTS,
    SCENARIOS,
    WIDE_BUCKET,
    WIDE_OBJECTS,
    WIDE_PREFIXES,
    Scenario,
)

NAME = "streaming"
QUESTION = "When does streaming beat paging, and how should we stream?"
SERVERS = ("sync-w10", "grpclib-uvloop", "aio-uvloop")  # one variant per stack unless --servers says otherwise
# The comparisons in rounds run on this stack unless --servers names others; grpc.aio, so that no stream waits
# for a worker thread.
COMPARED_ON = "aio-uvloop"
FETCH_COMPARED_MS = 20  # the fetch patterns are compared with S3 this far away, one client fetching
COMPARED_PATTERNS = ("paging", "stream", "parallel-10")  # parallel-4 with --full

# Fetch all.
FETCH_LATENCIES_MS = (0, 20)
PAGE_SIZE = 1000
FETCH_PATTERNS: dict[str, tuple[str, dict[str, int]]] = {
    "paging": ("bench.v1.ObjectStore.ListObjectsPage", {"page_size": PAGE_SIZE}),
    "stream": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 1}),
    "parallel-4": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 4}),
    "parallel-10": ("bench.v1.ObjectStore.StreamObjects", {"batch_size": PAGE_SIZE, "parallelism": 10}),
}
FETCH_CLIENTS = (1, 4)
FETCHES_ALONE = 5  # fetch-alls by one client: its time is their median
FETCHES_EACH = 2  # fetch-alls per client when several fetch at once

# Stream for a unary reply, and the cross-check against ghz.
UNARY_LEVELS = (10, 50)
CROSS_CHECK_LEVEL = 50

# Batch size.
BATCH_SIZES = (1, 10, 100, 1000)
BATCH_LEVEL = 10

# Watch.
WATCH_STREAMS = (10, 100, 1000)
WATCH_SENSORS = 100  # stream i watches sensor s<i mod 100>: at 1,000 streams, ten watchers a sensor
WATCH_SECONDS = 10
WATCH_INTERVAL_MS = 100  # the servers' default --sensor-interval-ms


def fetch_scenario(pattern: str, latency_ms: int) -> Scenario:
    call, extra = FETCH_PATTERNS[pattern]
    kind = "paging" if pattern == "paging" else "stream"
    return Scenario(
        f"fetch-{pattern}-{latency_ms}ms",
        call,
        {"pattern": kind, "bucket": WIDE_BUCKET, "objects": WIDE_OBJECTS, **extra},
        f"fetch all {WIDE_OBJECTS:,} objects ({WIDE_PREFIXES} prefixes) by {pattern}, S3 {latency_ms} ms away",
        1,
        bucket=WIDE_BUCKET,
        s3_latency_ms=latency_ms,
    )


FETCH_SCENARIOS = tuple(fetch_scenario(p, ms) for ms in FETCH_LATENCIES_MS for p in FETCH_PATTERNS)
HELLO = next(each for each in SCENARIOS if each.name == "hello")
# Every run's cross-check of our driver (harness.run.runner measures a study's checks before its comparisons race):
# SayHello at CROSS_CHECK_LEVEL on these stacks, by loadgen and by ghz taking turns. A scenario of its own, so that
# its cells stand apart from a comparison's SayHello cells on the same stack.
DRIVER_CHECK = replace(HELLO, name="hello-driver-check", description="SayHello: no I/O, by loadgen and by ghz in turns")
CROSS_CHECKED = ("sync-w10", "aio-uvloop")
HELLO_STREAM = replace(
    HELLO, name="hello-stream", call="bench.v1.Greeter.SayHelloStream", description="SayHelloStream: one message"
)
BATCH_SCENARIOS = tuple(
    Scenario(
        f"batch-{size}",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": BENCH_BUCKET, "batch_size": size},
        f"StreamObjects of the {BENCH_OBJECTS}-object bucket, {size} a message",
        20,
        bucket=BENCH_BUCKET,
    )
    for size in BATCH_SIZES
)
WATCH = Scenario(
    "watch",
    "bench.v1.Sensor.Watch",
    {"sensors": WATCH_SENSORS, "seconds": WATCH_SECONDS, "interval_ms": WATCH_INTERVAL_MS},
    f"Sensor.Watch streams, one sensor each, {WATCH_SECONDS} s counted",
    0,
)
