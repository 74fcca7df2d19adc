"""The interval and pooling functions against their definitions: property tests (Hypothesis) over any blocks, and
each interval beside scipy's own computation of the same statistic, so that a changed exponent, a lost degree of
freedom or a swapped bound fails here (mutation testing found these survived the example tests)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from harness.method.pooling import pooled
from harness.method.verdicts import Interval, interval, log_spread, paired_ratios, unpaired_interval, verdict

# A block's ratio: a factor of ten either way, which covers every ratio a run has measured.
RATIOS = st.floats(min_value=0.1, max_value=10.0, allow_nan=False, allow_infinity=False)
BLOCKS = st.lists(RATIOS, min_size=2, max_size=30)
SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None)  # the same examples every run


def bounds(found: Interval) -> tuple[float, float, float]:
    return found.value, found.low, found.high


def close(first: Interval, second: Interval, tolerance: float = 1e-9) -> bool:
    return all(math.isclose(a, b, rel_tol=tolerance) for a, b in zip(bounds(first), bounds(second), strict=True))


def spread_out(values: list[float]) -> bool:
    return log_spread(values) > 1e-6


@SETTINGS
@given(BLOCKS, st.randoms(use_true_random=False))
def test_an_interval_does_not_depend_on_the_order_of_its_blocks(values: list[float], shuffler: object) -> None:
    shuffled = list(values)
    shuffler.shuffle(shuffled)  # type: ignore[attr-defined]
    found, again = interval(values), interval(shuffled)
    assert close(found, again) and found.blocks == again.blocks == len(values)


@SETTINGS
@given(BLOCKS)
def test_the_inverse_ratio_has_the_inverse_interval(values: list[float]) -> None:
    found, inverse = interval(values), interval([1 / value for value in values])
    assert math.isclose(inverse.value, 1 / found.value, rel_tol=1e-9)
    assert math.isclose(inverse.low, 1 / found.high, rel_tol=1e-9)
    assert math.isclose(inverse.high, 1 / found.low, rel_tol=1e-9)


@SETTINGS
@given(BLOCKS, st.floats(min_value=1.1, max_value=3.0))
def test_more_spread_makes_a_wider_interval(values: list[float], factor: float) -> None:
    if not spread_out(values):
        return
    centre = sum(math.log(value) for value in values) / len(values)
    wider = [math.exp(centre + factor * (math.log(value) - centre)) for value in values]
    narrow, wide = interval(values), interval(wider)
    assert wide.half_width > narrow.half_width
    assert math.isclose(wide.value, narrow.value, rel_tol=1e-9)  # the same centre


@SETTINGS
@given(BLOCKS)
def test_the_interval_is_scipy_s_t_interval_of_the_logs(values: list[float]) -> None:
    logs = np.log(values)
    found = interval(values)
    assert math.isclose(found.value, math.exp(logs.mean()), rel_tol=1e-9)
    if spread_out(values):
        low, high = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
        assert math.isclose(found.low, math.exp(low), rel_tol=1e-9)
        assert math.isclose(found.high, math.exp(high), rel_tol=1e-9)


@SETTINGS
@given(BLOCKS, BLOCKS)
def test_the_unpaired_interval_is_scipy_s_welch_interval(before: list[float], after: list[float]) -> None:
    if not (spread_out(before) and spread_out(after)):
        return
    result = stats.ttest_ind(np.log(after), np.log(before), equal_var=False)
    low, high = result.confidence_interval(0.95)
    found = unpaired_interval(before, after)
    assert math.isclose(math.log(found.value), np.log(after).mean() - np.log(before).mean(), abs_tol=1e-9)
    assert math.isclose(math.log(found.low), low, abs_tol=1e-9)
    assert math.isclose(math.log(found.high), high, abs_tol=1e-9)


@SETTINGS
@given(st.lists(BLOCKS, min_size=2, max_size=6), st.randoms(use_true_random=False))
def test_pooling_does_not_depend_on_the_order_of_runs_or_blocks(runs: list[list[float]], shuffler: object) -> None:
    mixed = [list(each) for each in runs]
    for each in mixed:
        shuffler.shuffle(each)  # type: ignore[attr-defined]
    shuffler.shuffle(mixed)  # type: ignore[attr-defined]
    found, again = pooled(runs), pooled(mixed)
    assert close(found.ratio, again.ratio, 1e-7)
    assert math.isclose(found.tau, again.tau, rel_tol=1e-7, abs_tol=1e-9) and found.disagree == again.disagree


@SETTINGS
@given(st.lists(BLOCKS, min_size=2, max_size=6))
def test_pooling_the_inverse_ratios_inverts_the_pooled_interval(runs: list[list[float]]) -> None:
    found = pooled(runs).ratio
    inverse = pooled([[1 / value for value in each] for each in runs]).ratio
    assert math.isclose(inverse.value, 1 / found.value, rel_tol=1e-7)
    assert math.isclose(inverse.low, 1 / found.high, rel_tol=1e-7)
    assert math.isclose(inverse.high, 1 / found.low, rel_tol=1e-7)


@SETTINGS
@given(st.lists(BLOCKS, min_size=2, max_size=6))
def test_pooled_runs_never_claim_more_than_one_run_alone_would(runs: list[list[float]]) -> None:
    """However well the runs agree, the pooled interval is never narrower than the fixed-effect error allows (the
    modified Hartung-Knapp floor): the t quantile on k - 1 degrees of freedom times the inverse-variance error."""
    found = pooled(runs)
    assert found.ratio.low <= found.ratio.value <= found.ratio.high and found.ratio.blocks == len(runs)
    variances = [max(log_spread(each) ** 2 / len(each), 1e-12) for each in runs]
    error = math.sqrt(1 / sum(1 / each for each in variances))
    least = float(stats.t.ppf(0.975, len(runs) - 1)) * error
    assert found.ratio.half_width >= least * (1 - 1e-9)


def test_paired_ratios_reversed_are_the_reciprocals_in_the_blocks_both_ran() -> None:
    rates = {"a": {1: 100.0, 2: 110.0, 3: 90.0}, "b": {1: 50.0, 3: 45.0, 4: 60.0}}
    assert paired_ratios(rates, "a", "b") == [2.0, 2.0]
    assert paired_ratios(rates, "b", "a") == [0.5, 0.5]
    assert paired_ratios(rates, "a", "missing") == []


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.95, 1.05, "tie"),  # the band's own edges are inside it
        (0.9499, 1.03, "unresolved"),
        (0.97, 1.0501, "unresolved"),
        (1.0501, 1.2, "faster"),
        (1.05, 1.2, "unresolved"),  # touching the band is not wholly above it
        (0.8, 0.9499, "slower"),
        (0.8, 0.95, "unresolved"),
    ],
)
def test_a_verdict_at_the_band_s_edges(low: float, high: float, expected: str) -> None:
    assert verdict(Interval(math.sqrt(low * high), low, high, 5), 0.05) == expected


def test_the_unpaired_interval_s_edges() -> None:
    """One value on a side: no interval (0 to infinity) over the shorter side's count; no spread on either side: a
    point; a value that is not positive is refused."""
    assert unpaired_interval([2.0], [4.0, 4.4]) == Interval(math.sqrt(4.0 * 4.4) / 2, 0.0, math.inf, 1)
    point = unpaired_interval([2.0, 2.0, 2.0], [3.0, 3.0])
    assert close(point, Interval(1.5, 1.5, 1.5, 2)) and point.blocks == 2
    with pytest.raises(ValueError, match="an interval needs positive values"):
        unpaired_interval([1.0, 0.0], [1.0, 2.0])
    found = unpaired_interval([1.0, 1.1, 0.9], [2.0, 2.2])
    assert found.blocks == 2 and found.low < found.value < found.high


def dersimonian_laird(runs: list[list[float]]) -> tuple[float, float, float, float, bool]:
    """The random-effects estimate written out in numpy, independently of harness.method.pooling: (ratio, low, high,
    tau, whether Cochran's Q is beyond its 95% point), with the modified Hartung-Knapp interval."""
    logs = [np.log(each) for each in runs]
    means = np.array([each.mean() for each in logs])
    variances = np.array([each.var(ddof=1) / len(each) for each in logs])
    weights = 1 / variances
    fixed = (weights * means).sum() / weights.sum()
    q = (weights * (means - fixed) ** 2).sum()
    k = len(runs)
    tau2 = max(0.0, (q - (k - 1)) / (weights.sum() - (weights**2).sum() / weights.sum()))
    star = 1 / (variances + tau2)
    mean = (star * means).sum() / star.sum()
    spread = (star * (means - mean) ** 2).sum() / ((k - 1) * star.sum())
    half = stats.t.ppf(0.975, k - 1) * math.sqrt(max(spread, 1 / star.sum()))
    disagree = bool(q > stats.chi2.ppf(0.95, k - 1))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), math.sqrt(tau2), disagree


@pytest.mark.parametrize(
    "runs",
    [
        [[0.70, 0.72, 0.69, 0.71], [0.60, 0.57, 0.59, 0.58, 0.60], [0.65, 0.66, 0.64]],  # runs apart: tau > 0
        [[1.00, 1.02, 0.98], [1.01, 0.99, 1.00, 1.02]],  # runs that agree: tau 0
    ],
)
def test_pooling_is_dersimonian_laird_with_the_hartung_knapp_interval(runs: list[list[float]]) -> None:
    found = pooled(runs)
    value, low, high, tau, disagree = dersimonian_laird(runs)
    assert found.disagree == disagree == (len(runs) == 3)
    assert close(found.ratio, Interval(value, low, high, len(runs)), 1e-9) and found.ratio.blocks == len(runs)
    assert math.isclose(found.tau, tau, rel_tol=1e-9, abs_tol=1e-12) and found.runs == len(runs)
    with pytest.raises(ValueError, match="pooling needs at least two runs"):
        pooled(runs[:1])
