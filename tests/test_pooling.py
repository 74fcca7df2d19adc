"""Pooling a ratio over runs on synthetic runs that carry a between-run component: the random-effects interval
(Hartung-Knapp) covers the truth where one run's interval, or a fixed-effect pooling, does not."""

from __future__ import annotations

import math
import random

import pytest

from harness.method.pooling import held_text, pooled, run_estimate
from harness.method.verdicts import interval

TRUTH = 0.70


def synthetic_runs(rng: random.Random, runs: int, blocks: int, between: float, within: float) -> list[list[float]]:
    """Each run shifted by its own effect (its day, its host), each block scattered about it."""
    found = []
    for _ in range(runs):
        shift = rng.gauss(0, between)
        found.append([TRUTH * math.exp(shift + rng.gauss(0, within)) for _ in range(blocks)])
    return found


def test_pooled_intervals_cover_the_truth_where_a_single_run_s_do_not() -> None:
    rng = random.Random(7)
    trials, pooled_hits, single_hits = 2000, 0, 0
    for _ in range(trials):
        runs = synthetic_runs(rng, runs=3, blocks=8, between=0.08, within=0.05)
        found = pooled(runs).ratio
        pooled_hits += found.low <= TRUTH <= found.high
        one = interval(runs[0])
        single_hits += one.low <= TRUTH <= one.high
    assert pooled_hits / trials >= 0.93
    assert single_hits / trials < 0.80  # a run's own interval leaves its day's shift out


def test_without_a_between_run_component_the_runs_agree_and_the_interval_is_narrower() -> None:
    rng = random.Random(3)
    quiet = pooled(synthetic_runs(rng, runs=4, blocks=10, between=0.0, within=0.05))
    noisy = pooled(synthetic_runs(rng, runs=4, blocks=10, between=0.15, within=0.05))
    assert quiet.ratio.half_width < noisy.ratio.half_width
    assert noisy.tau > quiet.tau
    assert noisy.ratio.rounds == 4


def test_pooling_is_invariant_to_the_order_of_runs_and_blocks_and_symmetric_in_the_ratio() -> None:
    runs = [[0.6, 0.65, 0.62], [0.72, 0.7, 0.75, 0.71], [0.58, 0.6]]
    first = pooled(runs)
    again = pooled([list(reversed(each)) for each in reversed(runs)])
    assert first.ratio.value == pytest.approx(again.ratio.value) and first.ratio.low == pytest.approx(again.ratio.low)
    inverse = pooled([[1 / value for value in each] for each in runs])
    assert inverse.ratio.value == pytest.approx(1 / first.ratio.value)
    assert inverse.ratio.low == pytest.approx(1 / first.ratio.high)


def test_a_run_needs_two_blocks_and_pooling_two_runs() -> None:
    with pytest.raises(ValueError, match="two positive"):
        run_estimate([0.7])
    with pytest.raises(ValueError, match="two runs"):
        pooled([[0.7, 0.71]])
    mean, variance = run_estimate([math.e, math.e**3])
    assert mean == pytest.approx(2.0) and variance == pytest.approx(1.0)
    said = held_text(pooled([[0.6, 0.61], [0.72, 0.73]]), 2)
    assert said.startswith("over 2 runs on 2 days: ") and "runs apart by" in said
