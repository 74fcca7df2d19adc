"""The bound and efficiency computations, on known inputs."""

from __future__ import annotations

import math

import pytest

from harness.method.bounds import Bounds, cpu_bound, wait_bound


@pytest.mark.parametrize(
    ("concurrency", "slots", "latency", "bound"),
    [
        (50, 1, 0.1, 10.0),  # sync -w 1: one call at a time, 100 ms each
        (50, 10, 0.1, 100.0),  # sync -w 10
        (50, None, 0.1, 500.0),  # an event loop: as many as the callers
        (2, 10, 0.1, 20.0),  # fewer callers than slots
        (50, 20, 0.125, 160.0),
    ],
)
def test_wait_bound_is_littles_law(concurrency: int, slots: int | None, latency: float, bound: float) -> None:
    assert wait_bound(concurrency, slots, latency) == pytest.approx(bound)


def test_wait_bound_without_latency_is_unbounded() -> None:
    assert wait_bound(10, None, 0.0) == math.inf


def test_cpu_bound() -> None:
    assert cpu_bound(1, cpu_seconds=2.0, calls=1000) == pytest.approx(500.0)  # 2 ms of CPU per call
    assert cpu_bound(2, cpu_seconds=2.0, calls=1000) == pytest.approx(1000.0)
    assert cpu_bound(1, cpu_seconds=0.0, calls=1000) == math.inf


def test_the_lower_bound_binds_and_efficiency_is_against_it() -> None:
    waiting = Bounds(wait=100.0, cpu=400.0, achieved=94.0)
    assert (waiting.binding, waiting.bound) == ("wait", 100.0)
    assert waiting.efficiency == pytest.approx(0.94)
    busy = Bounds(wait=500.0, cpu=250.0, achieved=212.0)
    assert (busy.binding, busy.bound) == ("CPU", 250.0)
    assert busy.efficiency == pytest.approx(0.848)


def test_no_finite_bound_means_no_efficiency() -> None:
    assert Bounds(wait=math.inf, cpu=math.inf, achieved=5.0).efficiency == 0.0
