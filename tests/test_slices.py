"""A slow workload's slices on a synthetic server: does a slice sized by `matrix.window_requests` (count mode, one
wave of calls per worker and at least SLOW_SLICE_CALLS) read the server's rate without bias? The server is one
core shared by the calls in its CPU phase (processor sharing, as the GIL shares it), each call first waiting off
the core (the S3 round trip) and then spending an exponential CPU time (botocore parsing the listing); the
clients are a closed loop of `concurrency` workers, as loadgen's `call` drives them."""

from __future__ import annotations

import heapq
import random
import statistics

import pytest

from harness.plan.matrix import SLOW_SLICE_CALLS, WARM_WORKERS, Cell, scenario, warming, window_requests
from harness.plan.servers import server_variant

CPU_SECONDS = 0.18  # a call's mean CPU: the 893-object listing on this machine type
CPU_SPREAD = 0.5  # its coefficient of variation: the same listing parsed each time, so likely far less
WAIT_SECONDS = 0.025  # its S3 round trip, off the core
SHAPE = 1 / CPU_SPREAD**2  # of the gamma distribution of a call's CPU time


def count_mode(concurrency: int, calls: int, rng: random.Random) -> float:
    """One slice in count mode: `calls` calls by `concurrency` workers sharing a counter, each worker starting its
    next call when its last one ends; the OK rate over the time from the first start to the last end."""
    now, issued, done = 0.0, 0, 0
    waiting: list[tuple[float, int]] = []  # (when its wait ends, call id)
    working: dict[int, float] = {}  # call id -> CPU seconds left
    for call in range(min(concurrency, calls)):
        heapq.heappush(waiting, (WAIT_SECONDS, call))
        issued += 1
    while done < calls:
        share = len(working)
        first_cpu = min(working.values(), default=float("inf")) * max(share, 1)
        first_wait = waiting[0][0] - now if waiting else float("inf")
        step = min(first_cpu, first_wait)
        for call in working:
            working[call] -= step / share
        now += step
        if first_wait <= first_cpu:
            _, call = heapq.heappop(waiting)
            working[call] = rng.gammavariate(SHAPE, CPU_SECONDS / SHAPE)
            continue
        finished = min(working, key=lambda each: working[each])
        del working[finished]
        done += 1
        if issued < calls:
            heapq.heappush(waiting, (now + WAIT_SECONDS, issued))
            issued += 1
    return calls / now


@pytest.mark.parametrize("concurrency", [2, 10, 50])
def test_a_slow_slice_reads_the_server_s_rate_without_bias(concurrency: int) -> None:
    """Within 2% of the steady rate (a long run's): the slices' geometric mean, as a block and the interval read them
    (a slice's rate is calls over a sum of CPU times, so a short slice reads high by about half its squared
    coefficient of variation: 0.6% at 20 calls here, 5% at 10 calls of exponential CPU times)."""
    rng = random.Random(concurrency)
    steady = count_mode(concurrency, 40_000, rng)
    cell = Cell(server_variant("sync-w10"), scenario("s3-unary"), concurrency)
    size = window_requests(steady, cell, None, 1.0)
    assert size == max(concurrency, SLOW_SLICE_CALLS, round(steady))
    slices = [count_mode(concurrency, size, rng) for _ in range(400)]
    assert statistics.geometric_mean(slices) == pytest.approx(steady, rel=0.02)


def test_a_fast_slice_keeps_two_waves_a_worker() -> None:
    cell = Cell(server_variant("sync-w10"), scenario("hello"), 50)
    assert window_requests(5000.0, cell, None, 1.0) == 5000
    assert window_requests(10.0, cell, None, 1.0) == 100  # two waves of 50 workers


def test_a_slow_comparison_warms_up_on_a_few_workers_and_a_fast_one_on_all() -> None:
    slow = Cell(server_variant("sync-w10"), scenario("s3-mongo"), 50)
    assert warming(slow).concurrency == WARM_WORKERS and warming(slow).scenario == slow.scenario
    assert warming(Cell(server_variant("sync-w10"), scenario("s3-mongo"), 2)).concurrency == 2
    fast = Cell(server_variant("sync-w10"), scenario("hello"), 50)
    assert warming(fast) == fast
