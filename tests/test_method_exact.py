"""The method's functions to the digit: each against an independent computation (numpy, scipy) or a value worked by
hand, and at the boundaries of what it accepts. The statistical tests beside this one show the method covers what
it claims on a synthetic machine; these show each part computes what it says, so that a changed operator,
exponent or bound fails a test (`make mutation`)."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from harness.method.comparison_record import ComparisonRecord, Stop
from harness.method.contest import DECIDING_WEIGHT, JUDGED_FLOOR, OTHER, THIN_TWIN, Contest, Race, block_rates
from harness.method.moderation import NO_PRIOR, Prior
from harness.method.noise import Costs, Design, Noise, choose_design, components, drift, expected_half_width
from harness.method.pilot import LONGEST_SLICE, Pilot, one_server_drift, pilot_seconds
from harness.method.pooling import Pooled, change_between, pooled, run_estimate, typical_spread
from harness.method.race import Entrant, budget_shares, estimated_end, run_blocks, run_race
from harness.method.verdicts import (
    FRESH,
    HELD,
    Interval,
    Method,
    Outcome,
    control_of,
    interval,
    judge,
    log_spread,
    noise_floor,
    paired_ratios,
    pessimistic_half_width,
    spread_between_blocks,
    stop_reason,
    t_half_width,
    unpaired_interval,
    verdict,
)
from harness.render.wording import calibration_text, held_text, noise_text, ratio_text
from tests.synthetic import Clock

# --- the noise components ---------------------------------------------------------------------------------------

Slices = dict[str, dict[int, list[tuple[int, float]]]]


def random_slices(seed: int, labels: tuple[str, ...], blocks: int, cycles: int, restart: float = 0.1) -> Slices:
    """Every label twice a cycle at shuffled positions, rates scattered about its level in the block (which a
    restart moves by `restart`, log scale)."""
    rng = random.Random(seed)
    found: Slices = {label: {} for label in labels}
    for block in range(1, blocks + 1):
        level = {label: 100 * math.exp(rng.gauss(0, restart)) for label in labels}
        for cycle in range(cycles):
            order = list(labels) * 2
            rng.shuffle(order)
            for offset, label in enumerate(order):
                position = cycle * 2 * len(labels) + offset
                found[label].setdefault(block, []).append((position, level[label] * math.exp(rng.gauss(0, 0.05))))
    return found


def numpy_components(slices: Slices, reference: str, cycles: int) -> dict[str, float | int | None]:
    """The components as the module's docstring defines them, computed a second way: by arrays over a table of
    (label, block, position, log rate)."""
    rows = [
        (label, block, position, math.log(rate))
        for label, by_block in slices.items()
        for block, found in by_block.items()
        for position, rate in found
    ]
    label_of = np.array([row[0] for row in rows])
    block_of = np.array([row[1] for row in rows])
    position_of = np.array([row[2] for row in rows])
    logs = np.array([row[3] for row in rows])

    deviation = np.full(len(rows), np.nan)
    groups = 0
    for label in slices:
        for block in np.unique(block_of):
            mask = (label_of == label) & (block_of == block)
            if mask.sum() >= 2:
                deviation[mask] = logs[mask] - logs[mask].mean()
                groups += 1
    used = ~np.isnan(deviation)
    freedom = int(used.sum()) - groups
    slice_sd = float(np.sqrt(np.sum(deviation[used] ** 2) / freedom)) if freedom > 0 else None

    left, right = [], []
    for block in np.unique(block_of):
        here = used & (block_of == block)
        at = dict(zip(position_of[here].tolist(), deviation[here].tolist(), strict=True))
        for position in sorted(at):
            if position + 1 in at:
                left.append(at[position])
                right.append(at[position + 1])
    lag1 = None
    if len(left) >= 3 and np.std(left) > 0 and np.std(right) > 0:
        lag1 = float(np.corrcoef(left, right)[0, 1])

    cycle_of = position_of // (2 * len(slices))
    within, within_freedom, block_variances = [], 0, []
    for label in [each for each in slices if each != reference]:
        means = []
        for block in np.unique(block_of):
            ratios = []
            for cycle in np.unique(cycle_of[block_of == block]):
                mine = logs[(label_of == label) & (block_of == block) & (cycle_of == cycle)]
                theirs = logs[(label_of == reference) & (block_of == block) & (cycle_of == cycle)]
                if mine.size and theirs.size:
                    ratios.append(mine.mean() - theirs.mean())
            if ratios:
                means.append(np.mean(ratios))
                within += list(np.array(ratios) - np.mean(ratios))
                within_freedom += len(ratios) - 1
        if len(means) >= 2:
            block_variances.append(np.var(means, ddof=1))
    cycle_sd = float(np.sqrt(np.sum(np.square(within)) / within_freedom)) if within_freedom > 0 else None
    block_sd = float(np.sqrt(np.mean(block_variances))) if block_variances else None
    restart_sd = None
    if block_sd is not None and cycle_sd is not None:
        restart_sd = float(np.sqrt(max(0.0, block_sd**2 - cycle_sd**2 / cycles)))
    return {
        "slices": int(used.sum()),
        "slice_sd": slice_sd,
        "lag1": lag1,
        "cycle_sd": cycle_sd,
        "block_sd": block_sd,
        "restart_sd": restart_sd,
        "cycles": cycles,
    }


def assert_same_components(slices: Slices, reference: str, cycles: int) -> None:
    found = components(slices, reference, cycles)
    for name, expected in numpy_components(slices, reference, cycles).items():
        value = getattr(found, name)
        assert (value is None) == (expected is None), name
        if expected is not None:
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-12), name


@pytest.mark.parametrize(
    ("seed", "labels", "blocks", "cycles"),
    [(1, ("ref", "a"), 6, 3), (2, ("a", "ref", "b"), 4, 2), (3, ("ref", "ref~aa", "a", "b"), 5, 1)],
)
def test_the_noise_components_equal_a_second_computation(
    seed: int, labels: tuple[str, ...], blocks: int, cycles: int
) -> None:
    assert_same_components(random_slices(seed, labels, blocks, cycles), "ref", cycles)


def test_the_noise_components_where_a_part_has_too_few_slices() -> None:
    slices = random_slices(4, ("ref", "a", "b"), 4, 2)
    slices["b"][2] = slices["b"][2][:1]  # one slice in a block: no spread about its mean there
    del slices["a"][3]  # a label missing from a block
    assert_same_components(slices, "ref", 2)
    assert_same_components(slices, "ref", 5)  # the design's cycles weigh the cycle spread against the block's
    assert_same_components({label: found for label, found in slices.items() if label != "ref"}, "ref", 2)

    one_block = {label: {1: found[1]} for label, found in random_slices(5, ("ref", "a"), 1, 3).items()}
    assert_same_components(one_block, "ref", 3)
    assert components(one_block, "ref", 3).block_sd is None  # one block: no spread across blocks

    single = {"ref": {1: [(0, 100.0)], 2: [(0, 90.0)]}, "a": {1: [(1, 110.0)], 2: [(1, 95.0)]}}
    noise = components(single, "ref", 1)  # one slice a label a block: nothing within a block
    assert (noise.slices, noise.slice_sd, noise.lag1, noise.cycle_sd) == (0, None, None, None)
    assert noise.block_sd == pytest.approx(abs(math.log(110 / 100) - math.log(95 / 90)) / math.sqrt(2))


def test_the_slices_correlation_needs_three_pairs_of_neighbours() -> None:
    def pairs(count: int) -> Slices:
        """`count` pairs of neighbouring slices: one label's positions 0, 1 in each of `count` blocks."""
        rates = [100.0, 101.0, 97.0, 104.0, 99.0, 103.0]
        return {"ref": {block: [(0, rates[block]), (1, rates[block + 1] * 1.1)] for block in range(count)}}

    assert components(pairs(2), "ref", 1).lag1 is None
    three = components(pairs(3), "ref", 1)
    assert three.lag1 is not None
    assert three.lag1 == pytest.approx(numpy_components(pairs(3), "ref", 1)["lag1"])


def test_what_a_restart_adds_is_never_below_zero() -> None:
    slices = random_slices(6, ("ref", "a"), 8, 4, restart=0.0)
    quiet = components(slices, "ref", 1)  # read as one cycle a block, the cycles' spread more than explains the blocks'
    assert quiet.restart_sd == 0.0
    assert quiet.block_sd is not None and quiet.cycle_sd is not None and quiet.block_sd < quiet.cycle_sd


def test_a_block_s_seconds_are_its_starts_its_warm_ups_and_its_slices() -> None:
    costs = Costs(start=3.0, warm=2.0, slice_overhead=0.5)
    # 2 starts x 3 s + 3 labels x 2 s + 4 cycles x 2 slices x 3 labels x (1.5 + 0.5) s
    assert costs.block_seconds(labels=3, servers=2, cycles=4, slice_seconds=1.5) == 6.0 + 6.0 + 48.0


# --- the method's bounds ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        {"tie": 0.999},
        {"tie": 1e-6},
        {"precision": 0.999},
        {"precision": 1e-6},
        {"confidence": 0.5001},
        {"confidence": 0.999},
        {"min_blocks": 2, "max_blocks": 2},
        {"min_blocks": 7, "max_blocks": 7},
        {"cycles": 1, "slice_seconds": 1e-3},
        {"design": FRESH, "max_blocks": 20},
        {"slicer": HELD},
    ],
)
def test_a_method_at_the_edge_of_its_bounds_is_accepted(values: dict[str, object]) -> None:
    Method(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"tie": 0.0}, "tie and precision"),
        ({"tie": 1.0}, "tie and precision"),
        ({"precision": 0.0}, "tie and precision"),
        ({"precision": 1.0}, "tie and precision"),
        ({"confidence": 0.5}, "confidence in"),
        ({"confidence": 1.0}, "confidence in"),
        ({"min_blocks": 1}, "min_blocks <= max_blocks"),
        ({"min_blocks": 8, "max_blocks": 7}, "min_blocks <= max_blocks"),
        ({"design": "waves"}, "design blocks or fresh"),
        ({"cycles": 0}, "cycles >= 1"),
        ({"slice_seconds": 0.0}, "slice_seconds > 0"),
        ({"slicer": "nobody"}, "slicer"),
        ({"slicer": HELD, "design": FRESH}, "held only in the blocks design"),
    ],
)
def test_a_method_out_of_its_bounds_is_refused_naming_what(values: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Method(**values)  # type: ignore[arg-type]


# --- judging, recording, racing ----------------------------------------------------------------------------------


def test_judge_sets_each_alternative_against_the_reference_with_its_own_rate() -> None:
    rates = {
        "ref": {1: 100.0, 2: 110.0, 3: 90.0},
        "a": {1: 150.0, 3: 140.0, 4: 160.0, 5: 0.0},  # a round the reference missed, and a failed one
        "ref~aa": {1: 101.0, 2: 108.0, 3: 91.0},
    }
    method = Method(confidence=0.9, tie=0.02)
    a, twin = judge("stacks", "hello/c50", "ref", rates, method)
    assert (a.study, a.workload, a.alternative, a.reference, a.control) == ("stacks", "hello/c50", "a", "ref", False)
    assert a.ratio == interval([1.5, 140 / 90], 0.9)
    assert a.own == interval([150.0, 140.0, 160.0], 0.9)  # its own rate over every round it served
    assert a.verdict == verdict(a.ratio, 0.02)
    assert (twin.alternative, twin.control) == ("ref~aa", True)
    assert twin.ratio == interval([1.01, 108 / 110, 91 / 90], 0.9)
    lone = judge("s", "w", "ref", {"ref": {1: 100.0, 2: 100.0}, "a": {3: 5.0}, "b": {1: 0.5, 2: 0.6}}, method)
    assert [each.alternative for each in lone] == ["b"]  # "a" shares no round; "b" after it still judged
    assert lone[0].own == interval([0.5, 0.6], 0.9)


def test_a_record_read_back_keeps_its_cells_costs_and_control() -> None:
    record = ComparisonRecord(
        "hello/c50",
        "ref",
        ("a", "b"),
        7,
        Method(cycles=3, tie=0.04),
        [["a", "ref", "b", "b", "ref", "a"]],
        {"a": Stop(5, "clear"), "b": Stop(6, "precise")},
        12.5,
        {"a": "hello/a", "b": "hello/b", "ref": "hello/ref"},
        False,
        {"start": 1.5, "warm": 0.5},
    )
    assert ComparisonRecord.from_json(record.to_json()) == record
    controlled = ComparisonRecord.from_json({**record.to_json(), "control": "ref~aa"})
    assert controlled.controlled and controlled.control == "ref~aa"
    old = {key: value for key, value in record.to_json().items() if key not in ("cells", "costs", "control")}
    before = ComparisonRecord.from_json(old)  # a run recorded before cells, costs and optional controls
    assert (before.cells, before.costs, before.controlled) == ({}, {}, True)
    assert before.method.design == "blocks"  # what the record says; only a method recorded without one was fresh


def race_with(rates: dict[str, dict[int, float]], method: Method) -> Race:
    race = Race(Contest("w", "ref", tuple(label for label in rates if label != "ref"), controlled=False), method, 1)
    race.rates = rates
    race.active = [label for label in rates if label != "ref"]
    return race


def test_a_race_s_gain_is_the_narrowing_one_block_more_brings() -> None:
    method = Method(confidence=0.9)
    a = [1.10, 1.02, 1.07]
    b = [0.9, 0.95, 0.97, 0.88]
    rates = {
        "ref": {n: 100.0 for n in range(1, 5)},
        "a": {n: 100.0 * ratio for n, ratio in enumerate(a, 1)},
        "b": {n: 100.0 * ratio for n, ratio in enumerate(b, 1)},
    }

    def fall(ratios: list[float], prior_freedom: float = 0.0) -> float:
        spread = float(np.std(np.log(ratios), ddof=1))
        t = [
            float(stats.t.ppf(0.95, n - 1 + prior_freedom)) * spread / math.sqrt(n)
            for n in (len(ratios), len(ratios) + 1)
        ]
        return t[0] - t[1]

    assert race_with(rates, method).gain() == pytest.approx(fall(a) + fall(b), rel=1e-9)
    assert t_half_width(0.1, 4, 0.9) == pytest.approx(float(stats.t.ppf(0.95, 3)) * 0.1 / 2)
    rates["c"] = {1: 100.0, 2: 101.0}  # already a tie: one more block tells nothing the row needs
    assert race_with(rates, method).gain() == pytest.approx(fall(a) + fall(b))
    rates["c"] = {1: 100.0, 2: 108.0}  # unresolved
    assert race_with(rates, method).gain() == pytest.approx(fall(a) + fall(b) + fall([1.0, 1.08]))
    rates["far"] = {1: 200.0, 2: 210.0, 3: 190.0}  # already clear: nothing either
    assert race_with(rates, method).gain() == pytest.approx(fall(a) + fall(b) + fall([1.0, 1.08]))
    rates["d"] = {1: 100.0}
    assert race_with(rates, method).gain() == math.inf  # a label without an interval: any block tells most


def test_a_race_s_gain_is_moderated_and_a_deciding_comparison_counts_its_pick_until_certified() -> None:
    method = Method(confidence=0.95)
    rates = {"ref": {n: 100.0 for n in range(1, 4)}, "a": {1: 112.0, 2: 101.0, 3: 106.0}, "b": {1: 80.0, 2: 81.0}}
    race = race_with(rates, method)
    plain = race.gain()
    race.prior = Prior(6.0, 0.03**2)
    variance = (6 * 0.03**2 + 2 * float(np.var(np.log([1.12, 1.01, 1.06]), ddof=1))) / 8
    moderated = [float(stats.t.ppf(0.975, f)) * math.sqrt(variance / n) for f, n in ((8, 3), (9, 4))]
    assert race.gain() == pytest.approx(moderated[0] - moderated[1]) and race.gain() < plain  # b is clear
    deciding = Race(Contest("w", "ref", ("a", "b"), controlled=False, deciding=True), method, 1)
    deciding.rates, deciding.active, deciding.prior = rates, ["a", "b"], race.prior
    chosen = deciding.selection()
    assert chosen is not None and chosen.certified  # a is at least 0.95 x every rival: no weight for the row
    assert deciding.decision() == ("a", "ref") and deciding.gain() == pytest.approx(race.gain())
    race.prior = deciding.prior = Prior(6.0, 0.12**2)  # blocks scattering more: a is not yet certified
    chosen = deciding.selection()
    assert chosen is not None and not chosen.certified and deciding.decision() == ("a", "ref")  # ref binds it
    extra = DECIDING_WEIGHT * deciding.narrowing(deciding.ratio("a", "ref"))
    assert extra > 0 and deciding.gain() == pytest.approx(race.gain() + extra)
    floors = Race(Contest("w", "ref", ("a", "b"), False, deciding=True, pickable=("ref", "b")), method, 1)
    floors.rates = rates
    assert floors.decision() == ("ref", "b")  # a is a stack's floor: never a pick


def racer(clock: Clock, name: str, ratio: float, seconds: float, noise: float = 0.0, seed: int = 1) -> Entrant:
    rng = random.Random(seed)

    def block(number: int, plan: list[str]) -> list[float | None]:
        clock.now += seconds
        return [(ratio if label == "a" else 1.0) * 100 * math.exp(rng.gauss(0, noise)) for label in plan]

    method = Method(design=FRESH, max_blocks=6, min_blocks=2)
    return Entrant(Race(Contest(name, "ref", ("a",), controlled=False), method, 1), block)


def test_a_decision_row_within_reach_gets_its_blocks_before_a_row_no_decision_reads() -> None:
    """A label comparison with quick, scattered blocks narrows most per second, yet a decision row whose pick is not
    yet certified takes every block after the least ones until it closes; the label comparison gets the rest."""
    clock = Clock()
    method = Method(design=FRESH, max_blocks=12, min_blocks=2)
    labels = racer(clock, "labels", 1.0, 1.0, noise=0.3, seed=5)
    rng = random.Random(6)

    def block(number: int, plan: list[str]) -> list[float | None]:
        clock.now += 5.0
        return [(1.2 if label == "a" else 1.0) * 100 * math.exp(rng.gauss(0, 0.08)) for label in plan]

    deciding = Entrant(Race(Contest("deciding", "ref", ("a",), controlled=False, deciding=True), method, 1), block)
    order: list[tuple[str, bool]] = []  # each block's comparison, and whether the decision row was closed after it
    run_race(
        [labels, deciding],
        deadline=200.0,
        clock=clock,
        told=lambda each: order.append((each.race.contest.workload, deciding.race.blocks_to_close() == 0)),
    )
    assert [name for name, _ in order[:4]] == ["labels", "deciding", "labels", "deciding"]  # the least, in turns
    assert not order[3][1] and deciding.race.blocks > 2 and labels.race.blocks > 2
    # a label block after the least ones only once the decision row was closed
    assert all(order[turn - 1][1] for turn, (name, _) in enumerate(order) if name == "labels" and turn >= 4)


def test_an_a_a_twin_too_thin_to_judge_comes_first_and_then_only_while_thin() -> None:
    method = Method(confidence=0.95)
    twin = control_of("ref")
    rates = {"ref": {1: 100.0, 2: 100.0}, "a": {1: 90.0, 2: 91.0}, twin: {1: 80.0, 2: 120.0}}
    race = Race(Contest("w", "ref", ("a",), controlled=True), method, 1)
    race.rates, race.active = rates, ["a", twin]
    assert race.thin_twin() and race.urgency(0.0) == THIN_TWIN
    race.rates[twin] = {1: 99.0, 2: 101.0, 3: 100.5}
    race.rates["ref"][3] = 100.0
    assert not race.thin_twin() and race.urgency(0.0) == OTHER  # its noise floor within JUDGED_FLOOR
    race.rates[twin] = {1: 130.0, 2: 131.0, 3: 129.0}  # separated: a finding, not thin
    assert not race.thin_twin() and JUDGED_FLOOR == 0.25


def test_a_race_that_runs_out_of_time_says_budget_and_one_at_its_cap_says_cap() -> None:
    clock = Clock()
    racers = [racer(clock, "close", 1.0, 10.0, noise=0.2, seed=2)]
    told: list[Entrant] = []
    run_race(racers, deadline=30.0, clock=clock, told=told.append)
    assert told == racers * 3  # two owed, then one that ends at the deadline exactly: it fits
    assert racers[0].record is not None and racers[0].record.stopped["a"] == Stop(3, "budget")

    clock = Clock()
    capped = [racer(clock, "close", 1.0, 10.0, noise=0.2, seed=2)]
    run_race(capped, deadline=None, clock=clock)
    assert capped[0].record is not None and capped[0].record.stopped["a"] == Stop(6, "cap")


def test_a_race_weighs_each_block_s_narrowing_by_its_seconds() -> None:
    clock = Clock()
    quick = racer(clock, "quick", 1.0, 0.01, noise=0.1, seed=3)
    slow = racer(clock, "slow", 1.0, 1.0, noise=0.1, seed=3)  # the same noise, a hundred times the time
    order: list[str] = []
    run_race([slow, quick], deadline=2.2, clock=clock, told=lambda each: order.append(each.race.contest.workload))
    # two blocks each in turns; then the quick one's narrow as much for a hundredth of the time, to its cap, and
    # the slow one's next block would end past the deadline
    assert order == ["slow", "quick", "slow", "quick", "quick", "quick", "quick", "quick"]

    clock = Clock()
    instant = racer(clock, "instant", 1.0, 0.0, noise=0.1, seed=4)  # blocks that take no time at all
    run_race([instant], deadline=1.0, clock=clock)
    assert instant.record is not None and instant.race.blocks == 6  # no division by zero: it runs to its cap


# --- pooling across runs -----------------------------------------------------------------------------------------


def numpy_pooled(runs: list[list[float]], confidence: float = 0.95) -> tuple[float, float, float, float, bool]:
    """DerSimonian-Laird with the modified Hartung-Knapp interval, by arrays."""
    logs = [np.log(each) for each in runs]
    means = np.array([each.mean() for each in logs])
    variances = np.array([each.var(ddof=1) / len(each) for each in logs])
    weights = 1 / variances
    fixed = np.sum(weights * means) / np.sum(weights)
    q = float(np.sum(weights * (means - fixed) ** 2))
    k = len(runs)
    tau2 = max(0.0, (q - (k - 1)) / (weights.sum() - np.sum(weights**2) / weights.sum()))
    star = 1 / (variances + tau2)
    mean = np.sum(star * means) / star.sum()
    spread = np.sum(star * (means - mean) ** 2) / ((k - 1) * star.sum())
    half = float(stats.t.ppf((1 + confidence) / 2, k - 1)) * math.sqrt(max(spread, 1 / star.sum()))
    return (
        math.exp(mean),
        math.exp(mean - half),
        math.exp(mean + half),
        math.sqrt(tau2),
        bool(q > stats.chi2.ppf(0.95, k - 1)),
    )


@pytest.mark.parametrize(
    "runs",
    [
        [[0.5, 1.5, 0.7], [2.0, 0.6, 1.1], [0.9, 3.0]],  # runs whose blocks scatter widely: weights below one
        [[0.70, 0.72, 0.71], [0.60, 0.61, 0.62, 0.6], [0.66, 0.65, 0.68]],  # runs apart
        [[1.00, 1.02, 0.99], [1.01, 1.00, 1.02]],  # runs that agree
    ],
)
def test_pooling_equals_a_second_computation(runs: list[list[float]]) -> None:
    found = pooled(runs, confidence=0.9)
    value, low, high, tau, disagree = numpy_pooled(runs, confidence=0.9)
    assert (found.ratio.value, found.ratio.low, found.ratio.high) == pytest.approx((value, low, high), rel=1e-9)
    assert found.tau == pytest.approx(tau, abs=1e-12)
    assert (found.disagree, found.runs, found.ratio.blocks) == (disagree, len(runs), len(runs))


def test_two_runs_disagree_where_cochran_s_q_passes_its_95_point_on_one_degree_of_freedom() -> None:
    def two(apart: float) -> Pooled:
        return pooled([[1.0, 1.1, 0.9, 1.0], [apart, apart * 1.1, apart * 0.9, apart]])

    # Each run's variance is the same, s^2/4; Q = (log apart)^2 / (2 s^2/4); find `apart` where Q is 5 (over
    # 3.84 but under the 95% points for 0 or 2 degrees of freedom).
    s2 = float(np.var(np.log([1.0, 1.1, 0.9, 1.0]), ddof=1))
    assert two(math.exp(math.sqrt(5 * s2 / 2))).disagree
    assert not two(math.exp(math.sqrt(3 * s2 / 2))).disagree


def test_a_pooled_row_reads_its_runs_days_spread_and_disagreement() -> None:
    ratio = Interval(0.664, 0.583, 0.752, 3)
    assert held_text(Pooled(ratio, 0.08, 3, False), 2) == "over 3 runs on 2 days: 0.66 [0.58, 0.75], runs apart by ±8%"
    assert held_text(Pooled(ratio, 0.0, 2, False), 1) == "over 2 runs on 1 day: 0.66 [0.58, 0.75], runs agree"
    assert held_text(Pooled(ratio, 0.004, 2, False), 2).endswith("2 days: 0.66 [0.58, 0.75], runs agree")
    assert held_text(Pooled(ratio, 0.005, 2, False), 2).endswith(", runs apart by ±1%")
    assert held_text(Pooled(ratio, 0.25, 4, True), 3).endswith(", runs apart by ±28% (the runs disagree)")


# --- what the method records and says ---------------------------------------------------------------------------


def test_an_outcome_s_json_is_what_verdicts_json_prints() -> None:
    outcome = Outcome(
        "stacks", "hello/c50", "a", "ref", Interval(1.23456, 1.12346, math.inf, 4), "faster", Interval(1, 1, 1, 4), True
    )
    bounds = {"ratio": 1.2346, "low": 1.1235, "high": None, "freedom": 3.0}
    assert outcome.to_json() == {
        "study": "stacks",
        "workload": "hello/c50",
        "alternative": "a",
        "reference": "ref",
        **bounds,
        "verdict": "faster",
        "rounds": 4,
        "control": True,
        "plain": {**bounds, "verdict": "faster"},
        "moderated": {**bounds, "verdict": "faster", "prior": NO_PRIOR.to_json()},
        "pooled": {**bounds, "verdict": "faster", "runs": 1, "days": 1, "blocks": 4, "disagree": False},
    }
    assert (
        Outcome("s", "w", "a", "r", Interval(0.5, 0.44444, 0.55556, 2), "slower", Interval(1, 1, 1, 2)).to_json()[
            "high"
        ]
        == 0.5556
    )
    prior = Prior(6.0, 0.01, "stacks/hello", 27, 8.0)
    moderated = Interval(1.1, 1.0, 1.21, 3, 8.0)
    both = Outcome(
        "s",
        "w",
        "a",
        "r",
        moderated,
        "unresolved",
        Interval(1, 1, 1, 3),
        False,
        Interval(1.1, 0.5, 2.4, 3),
        "unresolved",
        prior,
    ).to_json()
    assert both["freedom"] == 8.0 and both["plain"]["freedom"] == 2.0 and both["plain"]["low"] == 0.5
    assert both["moderated"]["prior"] == {"group": "stacks/hello", "rows": 27, "d0": 6.0, "s0": 0.1, "cap": 8.0}


def test_the_noise_floor_reads_from_the_a_a_control() -> None:
    control = Interval(1.0, 1 / 1.031, 1.031, 9)
    assert noise_floor(control) == pytest.approx(0.031)
    assert calibration_text(control) == "±3.1%"
    assert calibration_text(Interval(1.05, 1.01, 1.09, 9)).endswith(", but the A/A control separated: untrustworthy")
    assert calibration_text(Interval(1.0, 0.0, math.inf, 1)) == "no interval"
    assert spread_between_blocks({1: 100.0, 2: 0.0, 3: 110.0}) == pytest.approx(abs(math.log(1.1)) / math.sqrt(2))


def test_the_noise_says_its_parts_in_a_sentence_and_records_them_rounded() -> None:
    noise = Noise(40, 0.05123, 0.31, 0.02, 0.033, None, 2)
    assert noise_text(noise) == (
        "Noise (log scale): a slice's sd about its label's mean in its block 5.1%; a cycle's log ratio sd within a "
        "block 2.0%; a block's log ratio sd 3.3%; neighbouring slices' correlation 0.31."
    )
    assert noise_text(replace(noise, restart_sd=0.021)).endswith(
        "; what a restart adds 2.1%; neighbouring slices' correlation 0.31."
    )
    assert noise_text(Noise(3, None, None, None, None, None, 1)) == ""
    assert noise.to_json() == {
        "slices": 40,
        "slice_sd": 0.0512,
        "lag1": 0.31,
        "cycle_sd": 0.02,
        "block_sd": 0.033,
        "restart_sd": None,
        "cycles": 2,
    }
    assert Costs(1.23456, 0.5, 0.1).to_json() == {"start": 1.235, "warm": 0.5, "slice_overhead": 0.1}
    assert Design(3, 8, 0.043219).to_json() == {"cycles": 3, "blocks": 8, "half_width": 0.0432}


# --- the design and its boundaries -------------------------------------------------------------------------------


def test_the_expected_half_width_is_the_t_interval_of_a_block_s_variance() -> None:
    noise = Noise(100, 0.05, 0.2, 0.06, 0.05, 0.03, 3)
    for cycles, blocks in ((1, 2), (2, 5), (4, 9)):
        variance = 0.03**2 + 0.06**2 / cycles
        half = float(stats.t.ppf(0.975, blocks - 1)) * math.sqrt(variance / blocks)
        assert expected_half_width(noise, cycles, blocks) == pytest.approx(math.expm1(half), rel=1e-12)
    assert expected_half_width(noise, 2, 1) == math.inf  # one block: no interval
    assert expected_half_width(replace(noise, cycle_sd=None), 2, 5) == math.inf


def test_the_design_is_the_narrowest_of_one_to_four_cycles_that_fits_the_least_blocks() -> None:
    costs = Costs(start=30.0, warm=1.0, slice_overhead=0.0)  # starts dear, restarts add nothing: cycles pay
    steady = Noise(100, 0.05, 0.0, 0.1, 0.06, 0.0, 3)
    design = choose_design(steady, costs, labels=2, servers=2, seconds=1000.0, slice_seconds=1.0)
    blocks = {cycles: int(1000.0 // costs.block_seconds(2, 2, cycles, 1.0)) for cycles in range(1, 5)}
    best = min(range(1, 5), key=lambda cycles: expected_half_width(steady, cycles, blocks[cycles]))
    assert (design.cycles, design.blocks) == (best, blocks[best]) and best == 4  # five would be narrower yet
    assert design.half_width == expected_half_width(steady, best, blocks[best])

    tight = costs.block_seconds(2, 2, 1, 1.0) * 2  # exactly two blocks of one cycle fit, none of more
    assert choose_design(steady, costs, 2, 2, tight, 1.0) == Design(1, 2, expected_half_width(steady, 1, 2))
    none = choose_design(steady, costs, 2, 2, tight / 2, 1.0, least=2)  # not even two: one cycle, the most blocks
    assert (none.cycles, none.blocks, none.half_width) == (1, 1, math.inf)
    assert choose_design(steady, costs, 2, 2, tight, 1.0, least=3).blocks == 2  # the fallback, not a fitting design


def test_the_drift_over_a_horizon_shorter_than_a_slice_is_the_change_between_neighbours() -> None:
    assert drift([0.0, 1.0, 3.0], 25.0, 10.0) == pytest.approx(math.sqrt(0.5))  # changes 1 and 2: sd 0.707
    assert drift([0.0, 1.0, 3.0], 5.0, 10.0) is None  # two slices apart: one change only (3.0)


def test_an_interval_of_one_value_has_its_value_and_no_bounds() -> None:
    assert interval([1.2]) == Interval(1.2, 0.0, math.inf, 1)
    found = interval([1.2, 1.2 * math.exp(0.2)], 0.8)
    half = float(stats.t.ppf(0.9, 1)) * (0.2 / math.sqrt(2)) / math.sqrt(2)
    assert (found.value, found.low, found.high) == pytest.approx(
        (1.2 * math.exp(0.1), 1.2 * math.exp(0.1 - half), 1.2 * math.exp(0.1 + half)), rel=1e-12
    )


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (1.05, 2.0, ""),  # at the band's edge: not clear of it
        (1.0501, 2.0, "clear"),
        (0.5, 0.95, ""),
        (0.5, 0.9499, "clear"),
        (1.0, 2.0, ""),
        (0.5, 1.0, ""),
    ],
)
def test_clear_means_the_interval_lies_wholly_beyond_the_tie_band(low: float, high: float, expected: str) -> None:
    assert stop_reason(Interval(1.0, low, high, 5), Method(tie=0.05)) == expected


def test_a_block_with_a_slice_at_zero_fails() -> None:
    assert block_rates(["a", "b", "b", "a"], [1.0, 4.0, 9.0, 0.0]) == {"a": None, "b": 6.0}


def test_a_race_records_blocks_stops_at_two_ratios_and_finishes_at_its_cap() -> None:
    method = Method(min_blocks=2, max_blocks=3, confidence=0.8)
    race = Race(Contest("w", "ref", ("far",)), method, 1)
    for far in (300.0, 330.0):  # apart from the reference, but not yet precise
        plan = race.plan()
        race.record(plan, [{"far": far, "ref": 100.0, "ref~aa": 100.0}[label] for label in plan])
    assert race.last_seconds == 0.0  # no seconds told: none counted
    assert race.stopped == {"far": Stop(2, "clear"), "ref~aa": Stop(2, "calibrated")}  # the twin by its own rule
    assert not race.open

    capped = Race(Contest("w", "ref", ("a",), controlled=False), method, 1)
    for scatter in (1.0, 1.3, 0.8):
        plan = capped.plan()
        capped.record(plan, [100.0 * (scatter if label == "a" else 1.0) for label in plan], 2.0)
    record = capped.finish("budget", 12.345)
    assert record.stopped["a"] == Stop(3, "cap") and record.wall_seconds == 12.3 and capped.active == []


def test_the_rounds_take_a_block_that_ends_at_the_deadline_and_time_their_wall() -> None:
    clock = Clock()
    clock.now = 100.0

    def block(number: int, plan: list[str]) -> list[float | None]:
        clock.now += 10.0
        return [100.0 * (1.0 + 0.3 * (number % 2) * (label == "a")) for label in plan]

    record = run_blocks(Contest("w", "ref", ("a",), controlled=False), block, Method(), 1, 130.0, clock)
    assert len(record.orders) == 3 and record.stopped["a"] == Stop(3, "budget") and record.wall_seconds == 30.0


def test_a_change_between_two_runs_counts_each_run_s_error_and_the_between_run_spread_twice() -> None:
    before, after = [0.70, 0.72, 0.69], [0.80, 0.83, 0.78, 0.81]
    logs_before, logs_after = np.log(before), np.log(after)
    var_before, var_after = logs_before.var(ddof=1) / 3, logs_after.var(ddof=1) / 4
    change = logs_after.mean() - logs_before.mean()
    for tau in (0.0, 0.05):
        variance = var_before + var_after + 2 * tau**2
        freedom = variance**2 / (var_before**2 / 2 + var_after**2 / 3)  # Welch-Satterthwaite, tau² as known
        half = float(stats.t.ppf(0.975, freedom)) * math.sqrt(variance)
        found = change_between(before, after, tau)
        assert found.blocks == 2  # two runs
        assert (found.value, found.low, found.high) == pytest.approx(
            (math.exp(change), math.exp(change - half), math.exp(change + half)), rel=1e-12
        )
    assert change_between(before, after, 0.0, confidence=0.8).high < change_between(before, after, 0.0).high
    welch = unpaired_interval(before, after)  # with no between-run spread: Welch's interval
    same = change_between(before, after, 0.0)
    assert (same.value, same.low, same.high) == pytest.approx((welch.value, welch.low, welch.high), rel=1e-9)
    still = change_between([1.0, 1.0], [1.1, 1.1], 0.0)  # blocks that agree exactly: no scatter, a normal limit
    assert still.low == still.high == pytest.approx(1.1)


def test_a_machine_s_typical_between_run_spread_is_the_median_of_its_comparisons() -> None:
    comparisons = [
        [[0.70, 0.72, 0.71], [0.60, 0.61, 0.62, 0.6]],
        [[1.00, 1.02, 0.99], [1.01, 1.00, 1.02]],
        [[0.5, 0.52, 0.51], [0.55, 0.56, 0.54], [0.5, 0.49, 0.51]],
        [[0.9, 0.91]],  # one run: no spread to read
    ]
    taus = sorted(pooled(runs).tau for runs in comparisons[:3])
    assert typical_spread(comparisons) == taus[1]
    assert typical_spread(comparisons[:2]) == pytest.approx(sum(pooled(runs).tau for runs in comparisons[:2]) / 2)
    assert typical_spread([comparisons[3]]) == 0.0


def test_the_smallest_cases_each_part_still_reads() -> None:
    """One degree of freedom is enough for a spread; a constant side has no correlation; an empty or
    non-positive input is refused by name."""
    two = components({"ref": {1: [(0, 100.0), (1, 110.0)]}}, "ref", 1)
    assert two.slice_sd == pytest.approx(abs(math.log(1.1)) / math.sqrt(2))  # 2 deviations, 1 group: 1 freedom
    cycles = {"ref": {1: [(0, 100.0), (3, 100.0), (4, 100.0), (7, 100.0)]}}
    cycles["a"] = {1: [(1, 110.0), (2, 110.0), (5, 120.0), (6, 120.0)]}
    found = components(cycles, "ref", 2)  # two cycles of one block: one freedom
    assert found.cycle_sd == pytest.approx(abs(math.log(120 / 110)) / math.sqrt(2))
    flat = {"ref": {block: [(0, 100.0), (1, 100.0), (2, 110.0)] for block in (1, 2)}}
    assert components(flat, "ref", 1).lag1 is None  # every pair's first slice sits alike: no correlation to read
    with pytest.raises(ValueError, match="positive"):
        unpaired_interval([], [1.0, 2.0])
    with pytest.raises(ValueError, match="two positive block ratios"):
        run_estimate([1.0, 0.0])
    assert log_spread([2.0]) == 0.0
    assert t_half_width(0.1, 4) == t_half_width(0.1, 4, 0.95)
    assert pessimistic_half_width(Interval(1.0, 0.9, 1 / 0.9, 5)) == pytest.approx(
        math.log(1 / 0.9) * math.sqrt(4 / float(stats.chi2.ppf(0.2, 4)))
    )
    assert paired_ratios({"a": {1: 2.0, 2: 3.0}, "r": {1: 0.0, 2: 1.5}}, "a", "r") == [2.0]
    assert spread_between_blocks({1: 0.5, 2: 0.25}) == pytest.approx(math.log(2) / math.sqrt(2))
    assert ratio_text(Interval(1.0, 0.5, math.inf, 1)) == "1.00 [0.50, ∞]"
    assert Method.from_json({}).max_blocks == 20 and Method.from_json({}).design == FRESH


def test_rounds_refuse_a_reference_among_the_alternatives_or_one_named_twice() -> None:
    with pytest.raises(ValueError, match="distinct and exclude the reference"):
        Contest("w", "ref", ("ref", "a"))
    with pytest.raises(ValueError, match="distinct and exclude the reference"):
        Contest("w", "ref", ("a", "a"))


def test_a_budget_is_shared_by_the_estimates() -> None:
    assert budget_shares([10.0, 30.0], 200.0) == [50.0, 150.0]
    assert budget_shares([10.0, 30.0], None) == [None, None]
    assert budget_shares([0.0, 0.0], 100.0) == [0.0, 0.0]


def test_the_pilot_takes_its_45_seconds_or_a_twentieth_of_a_short_budget() -> None:
    assert pilot_seconds(None) == pilot_seconds(28 * 60) == pilot_seconds(900) == 45.0
    assert pilot_seconds(600) == 30.0 and pilot_seconds(45) == 2.25


def pilot_costing(slice_seconds: float, overhead: float) -> Pilot:
    noise = Noise(10, 0.1, 0.2, 0.05, 0.05, 0.02, 3)
    return Pilot("pilot/hello/c50", "blocks", 45.0, 2, slice_seconds, noise, Costs(1.0, 1.0, overhead), None, None)


@pytest.mark.parametrize(
    ("slice_seconds", "overhead", "expected"),
    [(1.0, 0.03, 1.0), (1.0, 0.3, 1.5), (1.0, 0.123, 1.0), (0.5, 0.124, 0.62), (1.0, 2.0, LONGEST_SLICE)],
)
def test_a_run_s_slice_lasts_five_times_what_it_costs_beyond_its_load(
    slice_seconds: float, overhead: float, expected: float
) -> None:
    """The pilot's slice, longer where its overhead passes a fifth of it, at most LONGEST_SLICE, to 0.01 s."""
    assert pilot_costing(slice_seconds, overhead).slice_for_run == expected


def test_one_server_s_drift_is_the_root_mean_square_over_blocks_of_its_series_drift() -> None:
    """Both servers' slices of a block are one series in the order they ran; blocks too short give none."""
    rng = random.Random(3)
    reference = {b: [(2 * i, 100 * math.exp(rng.gauss(0, 0.1))) for i in range(8)] for b in (1, 2)}
    twin = {b: [(2 * i + 1, 100 * math.exp(rng.gauss(0, 0.1))) for i in range(8)] for b in (1, 2)}
    lag = 5  # 10 s at slices 2 s apart
    sds = []
    for block in (1, 2):
        logs = np.log([rate for _, rate in sorted(reference[block] + twin[block])])
        sds.append(np.std(logs[lag:] - logs[:-lag], ddof=1))
    assert one_server_drift(reference, twin, 2.0) == pytest.approx(math.sqrt((sds[0] ** 2 + sds[1] ** 2) / 2))
    assert one_server_drift({1: reference[1][:3]}, {1: twin[1][:3]}, 2.0) is None  # 6 slices: one change of 10 s


def test_the_estimated_end_takes_a_comparison_without_blocks_at_the_mean_block() -> None:
    clock = Clock()
    racers = [racer(clock, name, 1.0, seconds) for name, seconds in (("a", 10.0), ("b", 30.0), ("c", 5.0))]
    racers[0].step(clock)
    racers[1].step(clock)  # blocks of 10 s and 30 s: a mean of 20 s for "c", which has none
    assert estimated_end(racers, None, clock.now) == clock.now + 10.0 + 30.0 + 2 * 20.0
    noisy = racer(clock, "d", 1.0, 5.0, noise=0.3, seed=5)
    for _ in range(2):
        noisy.step(clock)
    assert noisy.race.open and estimated_end([noisy], None, clock.now) == clock.now  # open, but owes no block
