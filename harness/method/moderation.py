"""Moderated variances: each row's variance borrowed from its group's (Smyth 2004, limma's `squeezeVar`).

A run holds many rows, a label against its reference, each with 2 or 3 blocks: its own variance has 1 or 2 degrees
of freedom and its t-interval pays t = 12.7 or 4.3 for them. But rows of one scenario share a machine and a method,
and their variances are nearly alike. Smyth's empirical Bayes fits a scaled inverse chi-square prior (d0, s0²) to
the rows' variances by moments of their logs, and shrinks each towards it:

    s~² = (d0 s0² + d s²) / (d0 + d)          interval: mean ± t(d0 + d) s~ / sqrt(n)

Rows of one comparison share its reference's blocks, so they are not independent and the prior's own degrees of
freedom would be overstated: d0 is capped at the sum over the comparisons behind the prior of their blocks less one
(subsampling the committed 12-block runs, the cap brings coverage from 88-92% to 93-96%). A group is a run's study
and scenario; one with too few rows falls back to its study, then to the run (`Row.groups`, narrowest first). Pure:
numbers in, numbers out.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scipy import special, stats

LEAST_ROWS = 8  # a group fits its own prior from at least this many rows; fewer fall back to a broader group
RUN_GROUP = "run"  # the broadest group: every row of a run


def row_groups(study: str, scenario: str) -> tuple[str, ...]:
    """The groups a row of a study's comparison on a scenario is moderated within, narrowest first."""
    return (f"{study}/{scenario}", study, RUN_GROUP)


@dataclass(frozen=True)
class Prior:
    """The prior a row's variance is shrunk towards: its degrees of freedom d0 (inf: every row's variance is s0²;
    0: no prior, the row's own variance alone) and its variance s0² (log scale), the group it was fitted to, from how
    many rows, and the cap d0 was held to."""

    freedom: float
    variance: float
    group: str = ""
    rows: int = 0
    cap: float = math.inf

    def posterior(self, variance: float, freedom: int) -> tuple[float, float]:
        """A row's moderated variance and its degrees of freedom, from its own variance on `freedom`."""
        if self.freedom <= 0:
            return variance, float(freedom)
        if math.isinf(self.freedom):
            return self.variance, math.inf
        total = self.freedom + freedom
        return (self.freedom * self.variance + freedom * variance) / total, total

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "rows": self.rows,
            "d0": None if math.isinf(self.freedom) else round(self.freedom, 3),
            "s0": round(math.sqrt(self.variance), 5),
            "cap": None if math.isinf(self.cap) else self.cap,
        }


NO_PRIOR = Prior(0.0, 0.0)


def trigamma_inverse(x: float) -> float:
    """The y > 0 with trigamma(y) = x, by Newton's method on 1/trigamma as limma's `trigammaInverse` does."""
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


def fit_prior(variances: Sequence[float], freedoms: Sequence[int], cap: float = math.inf) -> tuple[float, float]:
    """Smyth's moment estimates (d0, s0²) from rows' variances on their degrees of freedom (limma's `fitFDist`), d0
    held to `cap`: the mean and variance of log s² corrected by digamma and trigamma; d0 is infinite where the logs
    scatter no more than their sampling explains. Zero variances are raised to 1e-5 of the median, as limma does."""
    if len(variances) != len(freedoms) or len(variances) < 2 or min(freedoms) < 1:
        raise ValueError(f"a prior needs two rows or more, each with a degree of freedom: {variances}, {freedoms}")
    middle = statistics.median(variances) or 1.0
    logs = [
        math.log(max(variance, 1e-5 * middle)) - float(special.digamma(d / 2)) + math.log(d / 2)
        for variance, d in zip(variances, freedoms, strict=True)
    ]
    mean = math.fsum(logs) / len(logs)
    spread = math.fsum((each - mean) ** 2 for each in logs) / (len(logs) - 1)
    spread -= statistics.fmean(float(special.polygamma(1, d / 2)) for d in freedoms)
    freedom = 2 * trigamma_inverse(spread) if spread > 0 else math.inf
    freedom = min(freedom, cap)
    if math.isinf(freedom):
        return math.inf, math.exp(mean)
    return freedom, math.exp(mean + float(special.digamma(freedom / 2)) - math.log(freedom / 2))


def sample_variance(values: Sequence[float]) -> float:
    """The sample variance (n - 1) in floating point: statistics.variance's exact fractions cost a race dear."""
    mean = math.fsum(values) / len(values)
    return math.fsum((each - mean) ** 2 for each in values) / (len(values) - 1)


@dataclass(frozen=True)
class Row:
    """One label against its reference in a run: the groups it belongs to, narrowest first (study and scenario,
    study, run), the comparison it is in, and its blocks' log ratios."""

    groups: tuple[str, ...]
    comparison: str
    logs: tuple[float, ...]

    @property
    def variance(self) -> float:
        return sample_variance(self.logs)


def group_prior(rows: Sequence[tuple[Row, float]], group: str) -> Prior:
    """The prior of one group's rows (each with two blocks or more, and the variance to fit: its own), d0 capped at
    the sum over its comparisons of their blocks less one."""
    blocks: dict[str, int] = {}
    for row, _ in rows:
        blocks[row.comparison] = max(blocks.get(row.comparison, 0), len(row.logs))
    cap = float(sum(n - 1 for n in blocks.values()))
    freedom, variance = fit_prior([variance for _, variance in rows], [len(row.logs) - 1 for row, _ in rows], cap)
    return Prior(freedom, variance, group, len(rows), cap)


def priors(rows: Sequence[Row], least: int = LEAST_ROWS, variances: Sequence[float] | None = None) -> list[Prior]:
    """Each row's prior: that of its narrowest group with at least `least` rows of two blocks or more, else its
    broadest group's where that has two such rows, else none. `variances`: what to fit in place of the rows' own
    (a weighted residual variance, say)."""
    chosen = [row.variance if len(row.logs) >= 2 else 0.0 for row in rows] if variances is None else variances
    members: dict[tuple[int, str], list[tuple[Row, float]]] = {}
    for row, variance in zip(rows, chosen, strict=True):
        if len(row.logs) >= 2:
            for level, group in enumerate(row.groups):
                members.setdefault((level, group), []).append((row, variance))
    fitted: dict[tuple[int, str], Prior] = {}

    def prior_of(level: int, group: str) -> Prior:
        if (level, group) not in fitted:
            fitted[level, group] = group_prior(members[level, group], group)
        return fitted[level, group]

    found = []
    for row in rows:
        sizes = [len(members.get((level, group), [])) for level, group in enumerate(row.groups)]
        enough = [level for level, size in enumerate(sizes) if size >= least]
        broadest = [len(sizes) - 1] if sizes and sizes[-1] >= 2 else []
        levels = enough or broadest
        found.append(prior_of(levels[0], row.groups[levels[0]]) if levels else NO_PRIOR)
    return found


@dataclass(frozen=True)
class Moderated:
    """A mean log ratio with its moderated standard error and degrees of freedom: what an interval is made of."""

    mean: float
    error: float
    freedom: float
    blocks: int

    def half_width(self, confidence: float = 0.95) -> float:
        if self.freedom <= 0 or not math.isfinite(self.error):
            return math.inf
        return quantile(confidence, self.freedom) * self.error


@functools.lru_cache(maxsize=4096)
def quantile(confidence: float, freedom: float) -> float:
    """Student's t quantile for a two-sided interval (the normal's on infinite degrees of freedom); remembered, as a
    race asks for the same few many times."""
    level = (1 + confidence) / 2
    return float(stats.norm.ppf(level) if math.isinf(freedom) else stats.t.ppf(level, freedom))


def moderated(logs: Sequence[float], prior: Prior) -> Moderated:
    """A row's mean log ratio, its standard error from its moderated variance, and the degrees of freedom of that
    variance; with fewer than two blocks, no error (inf)."""
    n = len(logs)
    mean = math.fsum(logs) / n
    if n < 2:
        return Moderated(mean, math.inf, 0.0, n)
    variance, freedom = prior.posterior(sample_variance(logs), n - 1)
    return Moderated(mean, math.sqrt(variance / n), freedom, n)


def pessimistic_error(found: Moderated, pessimism: float) -> float:
    """The standard error with the variance taken at its upper 1 - pessimism bound on its degrees of freedom (a
    chi-square), as a stopping rule judges it: infinite degrees of freedom leave it as it is."""
    if found.freedom <= 0:
        return math.inf
    if math.isinf(found.freedom):
        return found.error
    return found.error * math.sqrt(found.freedom / float(stats.chi2.ppf(pessimism, found.freedom)))


def row_priors(rows: Mapping[Any, Row], least: int = LEAST_ROWS) -> dict[Any, Prior]:
    """`priors` keyed as the rows are."""
    keys = list(rows)
    return dict(zip(keys, priors([rows[key] for key in keys], least), strict=True))
