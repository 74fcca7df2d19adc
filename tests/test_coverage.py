"""The interval and the stopping rule judged together, as a run uses them: a label measured block by block until
`stop_reason` says it is known (optional stopping on), its interval then set against the truth.

Enough trials that the bounds have teeth: 2,000 labels of each kind, seeds drawn apart from each other. Measured
when this was written (SPREAD 0.05): same 92.5%, slower 93.6%, faster 96.0%, close 92.2% covered, so optional
stopping costs the claimed 95% up to 3 points, which the bound of 91% (about three standard errors below the
lowest) accepts and states. A z-interval in place of the t-interval covers 86-89% and fails every kind; an A/A
twin biased by 3% separates 26% of the time against 0.15% unbiased, and fails the twin's bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.method.contest import Contest, Race
from harness.method.moderation import Row, row_priors
from harness.method.noise import Costs
from harness.method.race import Entrant, run_race
from harness.method.verdicts import (
    Interval,
    Method,
    interval,
    paired_ratios,
    separated,
    stop_reason,
    twin_stop_reason,
)
from tests.synthetic import Clock, Lab, Machine

METHOD = Method()  # the run's own: at least 5 blocks, at most 40, precise at ±3%, ties within ±5%
TRIALS = 2000
SPREAD = 0.05  # a block's log ratio scatters this much: what hello's blocks showed on a 2-vCPU VM
COSTS = Costs(start=0.8, warm=0.5, slice_overhead=0.03)


def stopped(rng: np.random.Generator, truth: float, twin: bool = False) -> Interval:
    """A label's interval when its stopping rule (or the cap) ends it, each block's ratio drawn around truth."""
    logs = rng.normal(math.log(truth), SPREAD, METHOD.max_blocks)
    rule = twin_stop_reason if twin else stop_reason
    for blocks in range(2, METHOD.max_blocks + 1):
        found = interval(np.exp(logs[:blocks]).tolist(), METHOD.confidence)
        if rule(found, METHOD) or blocks == METHOD.max_blocks:
            return found
    raise AssertionError("unreachable: the cap stops every label")


@pytest.mark.parametrize(
    ("kind", "truth", "seed"),
    [("same", 1.0, 101), ("slower", 0.8, 202), ("faster", 1.25, 303), ("close", 1.04, 404)],
)
def test_a_stopped_interval_covers_the_truth_as_often_as_it_claims(kind: str, truth: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    covered = sum(found.low <= truth <= found.high for found in (stopped(rng, truth) for _ in range(TRIALS)))
    assert covered / TRIALS >= 0.91, f"{kind}: {covered / TRIALS:.1%} of {TRIALS} intervals covered {truth}"


def test_an_a_a_twin_separates_no_more_often_than_its_interval_allows() -> None:
    rng = np.random.default_rng(505)
    apart = sum(separated(stopped(rng, 1.0, twin=True)) for _ in range(TRIALS))
    assert apart / TRIALS <= 0.05, f"{apart / TRIALS:.1%} of {TRIALS} A/A twins separated"


def test_a_race_moderated_by_its_run_s_rows_covers_the_truth_and_its_twin_seldom_separates() -> None:
    """A run's comparisons raced together, as run-all races them: each block judged by intervals moderated by all
    the run's rows so far (optional stopping on), each label read at the end with the prior of every row, as the
    report reads it. Four comparisons of one scenario, four labels each and the A/A twin in the first; a drifting
    machine with restarts and stalls; 150 runs."""
    covered, labels, apart = 0, 0, 0
    truths = {"ref": 100.0, "a": 100.0, "b": 103.0, "c": 80.0, "d": 130.0}
    for run in range(150):
        clock = Clock()
        entrants, labs = [], []
        for number in range(4):
            lab = Lab(Machine(truths, 1000 * run + number, white=0.08, walk=0.02, restart=0.05), clock, COSTS, 1.0)
            rounds = Contest(f"hello/c{number}", "ref", ("a", "b", "c", "d"), number == 0, ("s/hello", "s", "run"))
            entrants.append(Entrant(Race(rounds, Method(cycles=1), run), lab.block))
            labs.append(lab)
        run_race(entrants, clock() + 600.0, clock)
        rows = {(index, label): row for index, each in enumerate(entrants) for label, row in rows_by_label(each.race)}
        fitted = row_priors(rows)
        for (index, label), row in rows.items():
            found = interval([math.exp(each) for each in row.logs], 0.95, fitted[index, label])
            truth = truths[label.removesuffix("~aa")] / truths["ref"]
            if label.endswith("~aa"):
                apart += separated(found)
            else:
                labels += 1
                covered += found.low <= truth <= found.high
    assert covered / labels >= 0.93, f"{covered / labels:.1%} of {labels} moderated intervals covered the truth"
    assert apart / 150 <= 0.05, f"{apart} of 150 A/A twins separated"


def rows_by_label(race: Race) -> list[tuple[str, Row]]:
    """A race's rows by label, as the report reads them back."""
    reference = race.contest.reference
    found = []
    for label in race.rates:
        ratios = paired_ratios(race.rates, label, reference)
        if label != reference and ratios:
            found.append((label, Row(race.contest.groups, race.contest.workload, tuple(map(math.log, ratios)))))
    return found
