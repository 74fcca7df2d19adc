"""A ratio pooled over runs: the run (its day, its host) as a level of the design. Each run gives a comparison's
mean log ratio over its blocks with its standard error; runs differ by more than their blocks say (measured:
aio-uvloop over sync-w10 read 0.58 to 0.72 over six runs on one machine type, some intervals disjoint), so the pooled
interval is a random-effects one: the between-run variance tau² by DerSimonian and Laird, the runs weighted by
1 / (their variance + tau²), and the interval by Hartung and Knapp (a t-interval on k - 1 degrees of freedom whose
scale comes from the runs' own scatter), which holds its coverage with few runs where the plain random-effects
interval does not. Pure: numbers in, numbers out."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy import stats

from harness.method.moderation import Prior, moderated, quantile
from harness.method.verdicts import Interval


@dataclass(frozen=True)
class Pooled:
    """A ratio over runs: its interval (Interval.blocks counts the runs), the between-run spread tau (log scale),
    and whether the runs disagree (Cochran's Q beyond its 95% point)."""

    ratio: Interval
    tau: float
    runs: int
    disagree: bool


def run_estimate(ratios: Sequence[float]) -> tuple[float, float]:
    """One run's mean log ratio over its blocks and its variance (the squared standard error); it needs two."""
    if len(ratios) < 2 or min(ratios) <= 0:
        raise ValueError(f"a run's estimate needs two positive block ratios, got {list(ratios)}")
    logs = [math.log(each) for each in ratios]
    mean = math.fsum(logs) / len(logs)
    variance = math.fsum((each - mean) ** 2 for each in logs) / (len(logs) - 1)
    return mean, variance / len(logs)


def pooled(runs: Sequence[Sequence[float]], confidence: float = 0.95) -> Pooled:
    """The random-effects ratio over runs, each given as its blocks' paired ratios. Sums are exact (math.fsum) and
    the DerSimonian-Laird scale is summed over pairs of runs, not as a difference of two large sums: a run whose
    blocks agree exactly (its variance at the floor, its weight 1e12) otherwise made the result depend on the order
    of the runs in its fifth digit (found by tests/test_properties.py)."""
    estimates = [run_estimate(each) for each in runs]
    k = len(estimates)
    if k < 2:
        raise ValueError("pooling needs at least two runs")
    floored = [(mean, max(variance, 1e-12)) for mean, variance in estimates]
    weighted = [(mean, 1 / variance) for mean, variance in floored]
    total = math.fsum(w for _, w in weighted)
    fixed = math.fsum(w * m for m, w in weighted) / total
    q = math.fsum(w * (m - fixed) ** 2 for m, w in weighted)
    # sum(w) - sum(w^2)/sum(w), as the sum over pairs of runs of w_i w_j over sum(w): positive for two runs or more
    scale = math.fsum(wi * wj for i, (_, wi) in enumerate(weighted) for j, (_, wj) in enumerate(weighted) if i != j)
    tau2 = max(0.0, (q - (k - 1)) / (scale / total))
    starred = [(mean, 1 / (variance + tau2)) for mean, variance in floored]
    star = math.fsum(w for _, w in starred)
    mean = math.fsum(w * m for m, w in starred) / star
    spread = math.fsum(w * (m - mean) ** 2 for m, w in starred) / ((k - 1) * star)
    error = math.sqrt(max(spread, 1 / star))  # never narrower than the random-effects error (modified HK)
    half = float(stats.t.ppf((1 + confidence) / 2, k - 1)) * error
    disagree = q > float(stats.chi2.ppf(0.95, k - 1))
    return Pooled(
        Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), k), math.sqrt(tau2), k, disagree
    )


def typical_spread(comparisons: Sequence[Sequence[Sequence[float]]]) -> float:
    """The between-run spread tau (log scale) typical of a machine: the median over comparisons (each its runs'
    block ratios, two runs or more) of each one's DerSimonian-Laird tau; 0 without any."""
    found = sorted(pooled(runs).tau for runs in comparisons if len(runs) >= 2)
    return float(statistics.median(found)) if found else 0.0


def change_between(before: Sequence[float], after: Sequence[float], tau: float, confidence: float = 0.95) -> Interval:
    """How far a ratio moved from one run to another: `after`'s over `before`'s (each its blocks' paired ratios),
    with a t-interval whose variance is each run's own (its blocks' squared standard error) plus the between-run
    variance tau² of each, on Welch-Satterthwaite's degrees of freedom (tau² taken as known): a change the interval
    lies clear of is more than the runs' days explain. Two blocks a run give one degree of freedom each, and an
    interval as wide as that deserves."""
    (mean_before, var_before), (mean_after, var_after) = run_estimate(before), run_estimate(after)
    variance = var_before + var_after + 2 * tau**2
    scatter = var_before**2 / (len(before) - 1) + var_after**2 / (len(after) - 1)
    freedom = variance**2 / scatter if scatter > 0 else math.inf
    half = float(stats.t.ppf((1 + confidence) / 2, freedom)) * math.sqrt(variance)
    change = mean_after - mean_before
    return Interval(math.exp(change), math.exp(change - half), math.exp(change + half), 2)


@dataclass(frozen=True)
class Estimate:
    """One run's reading of a row: its mean log ratio over its blocks, that mean's variance (from the run's
    moderated spread, harness.method.moderation) on its degrees of freedom, its blocks and the day it was made."""

    mean: float
    variance: float
    freedom: float
    blocks: int
    day: str = ""


def estimate_of(logs: Sequence[float], prior: Prior, day: str = "") -> Estimate:
    """A run's estimate of a row from its blocks' log ratios, moderated by the run's prior; it needs two blocks."""
    found = moderated(logs, prior)
    if found.blocks < 2:
        raise ValueError(f"a run's estimate needs two blocks, got {list(logs)}")
    return Estimate(found.mean, found.error**2, found.freedom, found.blocks, day)


def cochran_q(estimates: Sequence[Estimate]) -> float:
    """Cochran's Q: the runs' squared distances from their inverse-variance mean, each over its variance."""
    weights = [1 / max(each.variance, 1e-12) for each in estimates]
    fixed = math.fsum(w * each.mean for w, each in zip(weights, estimates, strict=True)) / math.fsum(weights)
    return math.fsum(w * (each.mean - fixed) ** 2 for w, each in zip(weights, estimates, strict=True))


def between_runs(rows: Sequence[Sequence[Estimate]]) -> tuple[float, float]:
    """The between-run variance tau² that rows of one machine class and scenario share, by DerSimonian and Laird's
    moments summed over the rows that ran twice or more (sum of Q - (k - 1) over sum of S1 - S2/S1), and the degrees
    of freedom behind it (the sum of k - 1). Between runs of one code the spread is 0-3% a scenario against a
    within-run error of 4-9%: one comparison's two or three runs cannot tell it, the scenario's rows can."""
    excess = scale = freedom = 0.0
    for row in rows:
        if len(row) < 2:
            continue
        weights = [1 / max(each.variance, 1e-12) for each in row]
        total = math.fsum(weights)
        excess += cochran_q(row) - (len(row) - 1)
        scale += total - math.fsum(w * w for w in weights) / total
        freedom += len(row) - 1
    return (max(0.0, excess / scale) if scale > 0 else 0.0), freedom


@dataclass(frozen=True)
class Combined:
    """A row over runs: its interval (Interval.blocks counts every run's blocks; its degrees of freedom
    Satterthwaite's), how many runs on how many days, the between-run spread tau (log scale) it allowed for, and
    whether this row's runs disagree beyond their own errors (Cochran's Q past its 95% point)."""

    ratio: Interval
    runs: int
    days: int
    tau: float
    disagree: bool


LEAST_VARIANCE = 1e-12  # log scale: a run that reads no spread weighs as this (combined)


def combined(estimates: Sequence[Estimate], tau2: float, tau_freedom: float, confidence: float = 0.95) -> Combined:
    """The random-effects mean of a row's runs, each weighted by 1 / (its variance + tau²), with tau² the scenario's
    (`between_runs`): its variance 1 / sum of the weights, on Welch-Satterthwaite's degrees of freedom from each
    run's variance and tau² (each on its own). One run gives its own interval back."""
    if not estimates:
        raise ValueError("a row needs a run")
    # A run may read no spread at all (a cost whose CPU times the clock's ticks made equal in every block): it then
    # weighs as the least variance a float tells apart, as in the fixed-effect weights below.
    weights = [1 / max(each.variance + tau2, LEAST_VARIANCE) for each in estimates]
    total = math.fsum(weights)
    mean = math.fsum(w * each.mean for w, each in zip(weights, estimates, strict=True)) / total
    shares = [w / total for w in weights]
    parts = [(share**2 * each.variance, each.freedom) for share, each in zip(shares, estimates, strict=True)]
    parts.append((math.fsum(share**2 for share in shares) * tau2, tau_freedom))
    variance = math.fsum(part for part, _ in parts)
    scatter = math.fsum(part**2 / freedom for part, freedom in parts if part > 0 and freedom > 0)
    freedom = variance**2 / scatter if scatter > 0 else math.inf
    half = quantile(confidence, freedom) * math.sqrt(variance)
    blocks = sum(each.blocks for each in estimates)
    ratio = Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), blocks, freedom)
    fixed_weights = [1 / max(each.variance, LEAST_VARIANCE) for each in estimates]
    fixed = math.fsum(w * each.mean for w, each in zip(fixed_weights, estimates, strict=True)) / math.fsum(
        fixed_weights
    )
    q = math.fsum(w * (each.mean - fixed) ** 2 for w, each in zip(fixed_weights, estimates, strict=True))
    disagree = len(estimates) > 1 and q > float(stats.chi2.ppf(0.95, len(estimates) - 1))
    days = len({each.day for each in estimates})
    return Combined(ratio, len(estimates), days, math.sqrt(tau2), disagree)


def pooled_row(estimates: Sequence[Estimate], tau2: float, tau_freedom: float) -> Combined:
    """A row over its runs (`combined`), allowing for a between-run variance moderated as the within-run ones are:
    its scenario's shared tau² on its degrees of freedom, with the row's own (`between_runs` of its runs alone) on
    its runs less one, so that runs that disagree widen it by what their own spread tells."""
    own, own_freedom = between_runs([estimates])
    freedom = tau_freedom + own_freedom
    moderated_tau2 = (tau_freedom * tau2 + own_freedom * own) / freedom if freedom else 0.0
    return combined(estimates, moderated_tau2, freedom)
