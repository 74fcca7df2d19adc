"""Moderated variances (harness.method.moderation): each part against an independent computation or a known
truth, then the whole on synthetic runs like this project's: comparisons of several labels sharing their
reference's blocks, blocks noisy for every label at once, labels that scatter unalike, 2 or 3 blocks each. The
moderated intervals must cover the truth at least 93% of the time and an A/A control separate at most 5%."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
from scipy import special

from harness.method.moderation import (
    NO_PRIOR,
    Prior,
    Row,
    fit_prior,
    moderated,
    pessimistic_error,
    priors,
    quantile,
    trigamma_inverse,
)
from harness.method.verdicts import interval, separated, verdict


@pytest.mark.parametrize("y", [0.01, 0.3, 1.0, 2.5, 10.0, 400.0])
def test_the_inverse_trigamma_inverts_trigamma(y: float) -> None:
    assert trigamma_inverse(float(special.polygamma(1, y))) == pytest.approx(y, rel=1e-6)


def test_the_inverse_trigamma_takes_limma_s_shortcuts_at_the_extremes() -> None:
    assert trigamma_inverse(1e8) == pytest.approx(1 / math.sqrt(1e8))
    assert trigamma_inverse(1e-7) == pytest.approx(1e7)


def simulated_variances(d0: float, s0_squared: float, freedom: int, rows: int, seed: int) -> list[float]:
    """Rows' sample variances under Smyth's model: each row's true variance d0 s0² / chi²(d0), its sample variance
    that times chi²(d) / d."""
    rng = np.random.default_rng(seed)
    true = d0 * s0_squared / rng.chisquare(d0, rows) if math.isfinite(d0) else np.full(rows, s0_squared)
    return list(true * rng.chisquare(freedom, rows) / freedom)


@pytest.mark.parametrize(("d0", "freedom"), [(4.0, 1), (4.0, 2), (10.0, 2), (20.0, 4)])
def test_the_prior_is_recovered_from_many_rows_drawn_under_its_model(d0: float, freedom: int) -> None:
    found_d0, found_s0 = fit_prior(simulated_variances(d0, 0.01, freedom, 20_000, 1), [freedom] * 20_000)
    assert found_d0 == pytest.approx(d0, rel=0.25) and found_s0 == pytest.approx(0.01, rel=0.08)


def test_rows_that_scatter_no_more_than_sampling_explains_give_an_infinite_prior_and_the_cap_holds_it() -> None:
    variances = simulated_variances(math.inf, 0.01, 2, 5_000, 2)
    d0, s0 = fit_prior(variances, [2] * 5_000)
    assert math.isinf(d0) and s0 == pytest.approx(0.01, rel=0.05)
    capped, capped_s0 = fit_prior(variances, [2] * 5_000, cap=6.0)
    # at d0 = 6 the scale is corrected by digamma(3) - log(3), as limma's fitFDist does at its estimate
    assert capped == 6.0 and capped_s0 == pytest.approx(s0 * math.exp(special.digamma(3) - math.log(3)))


def test_the_moment_estimates_are_limma_s_formulas_worked_by_hand() -> None:
    variances, freedoms = [0.0004, 0.04, 0.0025, 0.09], [1, 2, 1, 3]
    e = [math.log(v) - special.digamma(d / 2) + math.log(d / 2) for v, d in zip(variances, freedoms, strict=True)]
    evar = np.var(e, ddof=1) - np.mean([special.polygamma(1, d / 2) for d in freedoms])
    d0 = 2 * trigamma_inverse(float(evar))
    s0 = math.exp(np.mean(e) + special.digamma(d0 / 2) - math.log(d0 / 2))
    assert fit_prior(variances, freedoms) == pytest.approx((d0, s0))
    zeros = fit_prior([0.0, 0.01, 0.02], [1, 1, 1])  # a zero variance is raised to 1e-5 of the median
    assert zeros == pytest.approx(fit_prior([1e-7, 0.01, 0.02], [1, 1, 1]))


def test_a_row_s_moderated_variance_and_interval() -> None:
    prior = Prior(6.0, 0.01)
    assert prior.posterior(0.04, 2) == pytest.approx(((6 * 0.01 + 2 * 0.04) / 8, 8.0))
    assert Prior(math.inf, 0.01).posterior(0.04, 2) == (0.01, math.inf)
    assert NO_PRIOR.posterior(0.04, 2) == (0.04, 2.0)
    logs = [0.1, 0.3, 0.2]
    found = moderated(logs, prior)
    assert found.mean == pytest.approx(0.2) and found.freedom == 8.0
    variance = (6 * 0.01 + 2 * statistics.variance(logs)) / 8
    assert found.error == pytest.approx(math.sqrt(variance / 3))
    ratio = interval([math.exp(each) for each in logs], 0.95, prior)
    half = quantile(0.95, 8.0) * found.error
    assert (ratio.low, ratio.high, ratio.degrees) == pytest.approx((math.exp(0.2 - half), math.exp(0.2 + half), 8.0))
    plain = interval([math.exp(each) for each in logs], 0.95)
    assert plain.degrees == 2.0 and plain.half_width > ratio.half_width
    assert pessimistic_error(found, 0.2) > found.error and moderated([0.1], prior).freedom == 0.0


def test_a_row_takes_the_prior_of_its_narrowest_group_with_enough_rows_and_the_cap_is_its_comparisons_blocks() -> None:
    def rows(group: str, comparison: str, count: int, blocks: int, seed: int) -> list[Row]:
        rng = random.Random(seed)
        return [
            Row((f"s/{group}", "s", "run"), comparison, tuple(rng.gauss(0, 0.1) for _ in range(blocks)))
            for _ in range(count)
        ]

    many = rows("hello", "s/hello/c2", 5, 3, 1) + rows("hello", "s/hello/c50", 5, 2, 2)
    few = rows("hello-wait", "s/hello-wait/c50", 3, 2, 3)
    lone = [Row(("t/info", "t", "run"), "t/info/c16", (0.1, 0.2))]
    found = priors(many + few + lone)
    assert {each.group for each in found[:10]} == {"s/hello"} and found[0].rows == 10
    assert found[0].cap == (3 - 1) + (2 - 1) and found[0].freedom <= found[0].cap
    assert {each.group for each in found[10:13]} == {"s"} and found[10].rows == 13
    assert found[13].group == "run" and found[13].rows == 14
    assert priors([Row(("a", "run"), "a/c", (0.1, 0.2))]) == [NO_PRIOR]  # one row: nothing to borrow from
    assert priors([Row(("a", "run"), "a/c", (0.1,)), *lone])[0] == NO_PRIOR  # one block: no variance to fit


# --- synthetic runs ---------------------------------------------------------------------------------------------


def synthetic_run(seed: int, blocks: int, comparisons: int = 4, labels: int = 6) -> list[tuple[Row, float, bool]]:
    """A run's rows with their true log ratios, the A/A twin's marked: each comparison's labels share its
    reference's slice noise in every block; each block's noise is scaled alike for every label in it (some blocks
    noisy for all); labels scatter unalike (by up to about 1.5x); the spread a block is about 10%."""
    rng = random.Random(seed)
    found = []
    for number in range(comparisons):
        truths = [rng.choice([0.0, 0.0, 0.03, -0.1, 0.3, -0.5]) for _ in range(labels)] + [0.0]
        spreads = [0.07 * math.exp(rng.gauss(0, 0.2)) for _ in range(labels + 1)]
        scale = [math.exp(rng.gauss(0, 0.35)) for _ in range(blocks)]
        reference = [rng.gauss(0, 0.07 * scale[b]) for b in range(blocks)]
        for index, (truth, spread) in enumerate(zip(truths, spreads, strict=True)):
            logs = tuple(truth + rng.gauss(0, spread * scale[b]) - reference[b] for b in range(blocks))
            row = Row(("s/hello", "s", "run"), f"s/hello/c{number}", logs)
            found.append((row, truth, index == labels))
    return found


@pytest.mark.parametrize("blocks", [2, 3])
def test_moderated_intervals_cover_the_truth_and_an_a_a_control_seldom_separates(blocks: int) -> None:
    covered, separations, twins, widths, plain_widths = [], 0, 0, [], []
    for seed in range(400):
        rows = synthetic_run(seed, blocks)
        for (row, truth, twin), prior in zip(rows, priors([row for row, _, _ in rows]), strict=True):
            found = interval([math.exp(each) for each in row.logs], 0.95, prior)
            covered.append(math.log(found.low) <= truth <= math.log(found.high))
            widths.append(found.half_width)
            plain_widths.append(interval([math.exp(each) for each in row.logs]).half_width)
            if twin:
                twins += 1
                separations += separated(found)
    assert statistics.fmean(covered) >= 0.93
    assert separations / twins <= 0.05
    assert statistics.median(widths) < 0.7 * statistics.median(plain_widths)  # what the borrowing buys


def test_more_rows_resolve_with_moderation_on_a_synthetic_run() -> None:
    rows = [each for seed in range(50) for each in synthetic_run(seed, 3)]
    resolved = {"plain": 0, "moderated": 0}
    for seed in range(50):
        run = synthetic_run(seed, 3)
        for (row, _, _), prior in zip(run, priors([row for row, _, _ in run]), strict=True):
            rates = [math.exp(each) for each in row.logs]
            resolved["plain"] += verdict(interval(rates), 0.05) != "unresolved"
            resolved["moderated"] += verdict(interval(rates, 0.95, prior), 0.05) != "unresolved"
    assert rows and resolved["moderated"] > 1.2 * resolved["plain"]
