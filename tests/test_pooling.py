"""Pooling a ratio over runs on synthetic runs that carry a between-run component: the random-effects interval
(Hartung-Knapp) covers the truth where one run's interval, or a fixed-effect pooling, does not."""

from __future__ import annotations

import math
import random

import pytest

from harness.method.moderation import NO_PRIOR, Prior, Row, priors
from harness.method.pooling import (
    Estimate,
    between_runs,
    cochran_q,
    combined,
    estimate_of,
    pooled,
    pooled_row,
    run_estimate,
)
from harness.method.verdicts import interval
from harness.render.wording import held_text, over_runs_text

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
    assert noisy.ratio.blocks == 4


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


# --- rows over runs with the scenario's shared between-run spread (harness.analysis.evidence's pooling) -------------


def scenario_runs(
    rng: random.Random, rows: int, runs: int, blocks: int, between: float, within: float
) -> list[tuple[float, list[list[float]]]]:
    """Rows of one scenario, each with its true log ratio, over `runs` runs: each run shifts each row by its own
    effect (sd `between`), each block scatters about that (sd `within`)."""
    found = []
    for _ in range(rows):
        truth = rng.choice([0.0, -0.2, 0.1, 0.3])
        found.append(
            (
                truth,
                [
                    [truth + shift + rng.gauss(0, within) for _ in range(blocks)]
                    for shift in [rng.gauss(0, between) for _ in range(runs)]
                ],
            )
        )
    return found


@pytest.mark.parametrize(("runs", "blocks"), [(2, 2), (2, 3), (3, 2), (4, 3)])
def test_rows_combined_over_runs_with_their_scenario_s_spread_cover_the_truth(runs: int, blocks: int) -> None:
    """The setting of the default runs: 2 or 3 blocks a run, a between-run spread of 3% against a block's 10%; each
    run's estimate moderated by a prior fitted to the run's rows, tau² shared by the scenario's rows."""
    rng = random.Random(11 * runs + blocks)
    covered = total = 0
    widths, alone_widths = [], []
    for _ in range(120):
        rows = scenario_runs(rng, rows=12, runs=runs, blocks=blocks, between=0.03, within=0.10)
        estimates = []
        for run in range(runs):
            found = priors([Row(("g", "run"), f"c{index % 3}", tuple(each[1][run])) for index, each in enumerate(rows)])
            estimates.append([estimate_of(each[1][run], prior) for each, prior in zip(rows, found, strict=True)])
        by_row = [[estimates[run][index] for run in range(runs)] for index in range(len(rows))]
        tau2, freedom = between_runs(by_row)
        for (truth, _), row in zip(rows, by_row, strict=True):
            ratio = combined(row, tau2, freedom).ratio
            covered += math.log(ratio.low) <= truth <= math.log(ratio.high)
            total += 1
            widths.append(ratio.half_width)
            alone_widths.append(combined(row[:1], 0.0, 0.0).ratio.half_width)
    assert covered / total >= 0.93, f"{covered / total:.1%} of {total}"
    assert sorted(widths)[len(widths) // 2] < sorted(alone_widths)[len(alone_widths) // 2]  # runs narrow it


def test_one_run_combined_is_its_own_moderated_interval_and_two_that_disagree_say_so() -> None:
    prior = Prior(6.0, 0.01)
    one = estimate_of([0.1, 0.2, 0.15], prior, "2026-01-01")
    alone = combined([one], 0.0, 0.0)
    own = interval([math.exp(each) for each in (0.1, 0.2, 0.15)], 0.95, prior)
    assert (alone.runs, alone.days, alone.disagree) == (1, 1, False)
    assert (alone.ratio.low, alone.ratio.high) == pytest.approx((own.low, own.high))
    far = estimate_of([0.6, 0.7, 0.65], prior, "2026-01-02")
    apart = combined([one, far], 0.0, 0.0)
    assert apart.disagree and apart.days == 2 and over_runs_text(apart) == "over 2 runs on 2 days (the runs disagree)"
    assert over_runs_text(combined([one, one], 0.0, 0.0)) == "over 2 runs on 1 day"


def test_the_shared_between_run_variance_is_dersimonian_and_laird_s_summed_over_rows() -> None:
    rows = [
        [Estimate(0.0, 0.01, 5, 2), Estimate(0.3, 0.01, 5, 2)],
        [Estimate(0.1, 0.04, 5, 2), Estimate(0.1, 0.01, 5, 2), Estimate(0.2, 0.01, 5, 2)],
        [Estimate(0.5, 0.01, 5, 2)],  # one run: tells nothing of the spread between runs
    ]
    q = [cochran_q(row) for row in rows[:2]]
    scale = [
        sum(1 / e.variance for e in row) - sum(1 / e.variance**2 for e in row) / sum(1 / e.variance for e in row)
        for row in rows[:2]
    ]
    expected = (q[0] - 1 + q[1] - 2) / (scale[0] + scale[1])
    assert between_runs(rows) == pytest.approx((max(0.0, expected), 3.0))
    assert q[0] == pytest.approx(0.3**2 / 0.02)
    assert between_runs([[Estimate(0.0, 0.01, 5, 2), Estimate(0.0, 0.01, 5, 2)]]) == (0.0, 1.0)


def test_a_run_that_reads_no_spread_pools_without_failing() -> None:
    """A cost whose CPU times the clock's ticks made equal in every block reads no spread: alone or beside another
    run, unmoderated (no between-run variance either), it pools to a finite interval about its own ratio."""
    flat = estimate_of([math.log(1.2)] * 2, NO_PRIOR)
    assert flat.variance == 0
    alone = pooled_row([flat], 0.0, 0.0)
    assert alone.ratio.low == pytest.approx(1.2) and alone.ratio.high == pytest.approx(1.2)
    both = pooled_row([flat, estimate_of([math.log(1.1), math.log(1.3)], NO_PRIOR)], 0.0, 0.0)
    assert math.isfinite(both.ratio.low) and both.ratio.low <= 1.2 <= both.ratio.high
