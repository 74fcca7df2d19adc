"""The verdict method on synthetic rounds with known ratios and noise: intervals, verdicts, the order of a
round, the stopping rule, and the A/A control."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from harness.method.comparison_record import ComparisonRecord, Stop
from harness.method.contest import Contest, Race
from harness.method.race import Entrant, estimated_end, run_blocks, run_race
from harness.method.verdicts import (
    FASTER,
    FRESH,
    HELD,
    SLOWER,
    TIE,
    UNRESOLVED,
    Interval,
    Method,
    control_of,
    interval,
    judge,
    paired_ratios,
    stop_reason,
    verdict,
)
from harness.render.wording import ratio_text
from tests.synthetic import Clock

METHOD = Method(design=FRESH, max_blocks=20)  # a round: one window per label, each on a fresh start


def fresh_blocks(
    rounds: Contest, window: Callable[[str, int], float | None], *args: Any, **kwargs: Any
) -> ComparisonRecord:
    """run_blocks in the fresh design, handed a window function: each round measures its plan's windows in turn."""
    return run_blocks(rounds, lambda number, plan: [window(label, number) for label in plan], *args, **kwargs)


def test_interval_is_the_t_interval_of_the_log_ratios() -> None:
    found = interval([1.0, 1.1, 0.9, 1.05, 0.95])
    logs = [math.log(v) for v in (1.0, 1.1, 0.9, 1.05, 0.95)]
    mean = sum(logs) / 5
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / 4)
    half = 2.7764451051977987 * sd / math.sqrt(5)  # t(0.975, 4)
    assert found.value == pytest.approx(math.exp(mean))
    assert found.low == pytest.approx(math.exp(mean - half))
    assert found.high == pytest.approx(math.exp(mean + half))
    assert found.blocks == 5
    assert interval([2.0]).high == math.inf  # one round: no interval
    with pytest.raises(ValueError, match="positive"):
        interval([1.0, 0.0])


def test_a_held_driver_runs_the_slices_of_blocks_alone() -> None:
    assert Method(slicer=HELD).to_json()["slicer"] == HELD
    assert Method.from_json({"design": "blocks"}).slicer == "process"  # runs before the held driver
    with pytest.raises(ValueError, match="held only in the blocks design"):
        Method(design=FRESH, slicer=HELD)
    with pytest.raises(ValueError, match="slicer process or held"):
        Method(slicer="ghz")


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(0.97, 1.04, TIE), (1.06, 1.2, FASTER), (0.5, 0.94, SLOWER), (0.9, 1.02, UNRESOLVED), (1.03, 1.07, UNRESOLVED)],
)
def test_verdict_is_where_the_interval_lies_against_the_tie_band(low: float, high: float, expected: str) -> None:
    assert verdict(Interval(math.sqrt(low * high), low, high, 5), 0.05) == expected


def test_an_alternative_stops_when_precise_or_clear_and_never_before_the_minimum() -> None:
    assert stop_reason(Interval(1.0, 0.99, 1.01, 4), METHOD) == ""  # fewer than five rounds
    assert stop_reason(Interval(1.0, 0.99, 1.01, 5), METHOD) == "precise"
    assert stop_reason(Interval(1.5, 1.2, 1.9, 5), METHOD) == "clear"
    assert stop_reason(Interval(1.0, 0.9, 1.1, 5), METHOD) == ""


def synthetic(true: dict[str, float], noise: float, drift: float, seed: int) -> tuple[list[tuple[str, int]], object]:
    """A window function: each label's true rate, times a drift shared by everything in its round, times its
    own log-normal noise; it records what it measured, in order."""
    rng = random.Random(seed)
    measured: list[tuple[str, int]] = []
    block_factor: dict[int, float] = {}

    def window(label: str, number: int) -> float:
        measured.append((label, number))
        factor = block_factor.setdefault(number, math.exp(rng.gauss(0, drift)))
        base = true[label.removesuffix("~aa")]
        return base * factor * math.exp(rng.gauss(0, noise))

    return measured, window


def rates_of(
    record: ComparisonRecord, window_log: list[tuple[str, int]], values: list[float]
) -> dict[str, dict[int, float]]:
    rates: dict[str, dict[int, float]] = {}
    for (label, number), value in zip(window_log, values, strict=True):
        rates.setdefault(label, {})[number] = value
    return rates


def run(
    true: dict[str, float], noise: float, drift: float, seed: int
) -> tuple[ComparisonRecord, dict[str, dict[int, float]]]:
    measured, window = synthetic(true, noise, drift, seed)
    values: list[float] = []

    def recorded(label: str, number: int) -> float:
        value = window(label, number)  # type: ignore[operator]
        values.append(value)
        return float(value)

    alternatives = tuple(label for label in true if label != "ref")
    record = fresh_blocks(Contest("hello/c50", "ref", alternatives), recorded, METHOD, seed)
    return record, rates_of(record, measured, values)


def test_rounds_recover_known_ratios_through_drift_that_hits_whole_rounds() -> None:
    true = {"ref": 1000.0, "same": 1000.0, "faster": 1300.0, "slower": 700.0, "close": 1040.0}
    record, rates = run(true, noise=0.02, drift=0.30, seed=7)  # 30% drift between rounds, 2% within
    judged = {each.alternative: each for each in judge("stacks", "hello/c50", "ref", rates, METHOD)}
    assert judged["faster"].verdict == FASTER and judged["faster"].ratio.value == pytest.approx(1.3, rel=0.05)
    assert judged["slower"].verdict == SLOWER and judged["slower"].ratio.value == pytest.approx(0.7, rel=0.05)
    assert judged["same"].verdict == TIE
    assert judged[control_of("ref")].control and judged[control_of("ref")].verdict == TIE
    assert judged["close"].verdict in (TIE, UNRESOLVED)  # 4% apart inside a 5% band: never called faster
    # Clear differences stop at the minimum; every stop is recorded with its round and reason.
    assert record.stopped["faster"].block == METHOD.min_blocks
    assert record.stopped["faster"].reason in ("clear", "precise")
    assert set(record.stopped) == {"same", "faster", "slower", "close", "ref~aa"}  # the twin is judged too


def test_the_interval_covers_the_true_ratio_about_as_often_as_it_claims() -> None:
    covered = 0
    for seed in range(40):
        _, rates = run({"ref": 1000.0, "alt": 1200.0}, noise=0.05, drift=0.3, seed=seed)
        (alt, _) = judge("s", "w", "ref", rates, METHOD)
        covered += alt.ratio.low <= 1.2 <= alt.ratio.high
    assert covered >= 34  # 95% claimed; at least 85% of 40 seeds


def test_every_round_runs_each_active_alternative_the_reference_and_its_twin_once_in_a_seeded_order() -> None:
    true = {"ref": 100.0, "a": 150.0, "b": 100.0}
    first, _ = run(true, noise=0.05, drift=0.1, seed=3)
    again, _ = run(true, noise=0.05, drift=0.1, seed=3)
    assert first.orders == again.orders  # the seed fixes the order
    for order in first.orders:
        assert sorted(order)[: len(order)] == sorted(set(order)) and {"ref", "ref~aa"} <= set(order)
    assert len({tuple(order) for order in first.orders}) > 1  # shuffled, not fixed
    assert all("a" not in order for order in first.orders[first.stopped["a"].block :])  # stopped means stopped


def test_noisy_alternatives_stop_at_the_cap_and_stay_unresolved() -> None:
    record, rates = run({"ref": 100.0, "noisy": 103.0}, noise=0.4, drift=0.0, seed=11)
    assert len(record.orders) == METHOD.max_blocks and record.stopped["noisy"].reason == "cap"
    (noisy, _) = judge("s", "w", "ref", rates, METHOD)
    assert noisy.verdict in (UNRESOLVED, TIE)


def test_the_a_a_control_is_a_tie_in_nineteen_of_twenty_comparisons_of_noise_alone() -> None:
    ties = 0
    for seed in range(20):
        _, rates = run({"ref": 500.0, "other": 500.0}, noise=0.05, drift=0.3, seed=seed)
        outcomes = {each.alternative: each for each in judge("s", "w", "ref", rates, METHOD)}
        ties += outcomes["ref~aa"].verdict != FASTER and outcomes["ref~aa"].verdict != SLOWER
    assert ties >= 19  # a false separation is rarer than the interval's 5%


def test_a_deadline_ends_the_rounds_and_says_why() -> None:
    clock = iter(range(100))
    record = fresh_blocks(
        Contest("w", "ref", ("a",)), lambda label, number: 1.0, METHOD, 1, deadline=3, clock=lambda: next(clock)
    )
    assert record.stopped["a"].reason == "budget"


def test_no_round_starts_that_would_end_past_the_deadline() -> None:
    now = [0.0]

    def window(label: str, number: int) -> float:
        now[0] += 5.0  # three windows a round: 15 s a round
        return 1.0 + 0.1 * (label == "a")

    record = fresh_blocks(Contest("w", "ref", ("a",)), window, METHOD, 1, deadline=40.0, clock=lambda: now[0])
    assert len(record.orders) == 2 and now[0] == 30.0  # a third round would have ended at 45
    assert record.stopped["a"] == Stop(2, "budget")


def test_a_comparison_gets_two_rounds_however_short_its_part_so_its_ratios_have_an_interval() -> None:
    now = [0.0]

    def window(label: str, number: int) -> float:
        now[0] += 5.0
        return 1.0

    record = fresh_blocks(Contest("w", "ref", ("a",)), window, METHOD, 1, deadline=1.0, clock=lambda: now[0])
    assert len(record.orders) == 2 and record.stopped["a"] == Stop(2, "budget")


def entrant(clock: Clock, true: dict[str, float], seconds: float, seed: int, noise: float = 0.05) -> Entrant:
    """A comparison in a race on a synthetic machine whose blocks take `seconds` of the clock's time each."""
    rng = random.Random(seed)
    alternatives = tuple(label for label in true if label != "ref")

    def block(number: int, plan: list[str]) -> list[float | None]:
        clock.now += seconds
        return [true[label.removesuffix("~aa")] * math.exp(rng.gauss(0, noise)) for label in plan]

    method = Method(design=FRESH, max_blocks=20)
    return Entrant(Race(Contest(f"w{seed}", "ref", alternatives, controlled=False), method, seed), block)


def test_a_race_gives_every_comparison_two_blocks_in_turns_before_the_budget_counts() -> None:
    clock = Clock()
    racers = [entrant(clock, {"ref": 100.0, "a": 103.0}, 10.0, seed) for seed in range(3)]
    order: list[str] = []
    run_race(racers, deadline=5.0, clock=clock, told=lambda each: order.append(each.race.contest.workload))
    assert order == ["w0", "w1", "w2", "w0", "w1", "w2"]  # in turns, and nothing past the deadline after them
    assert all(each.record is not None and each.record.stopped["a"].reason == "budget" for each in racers)


def test_a_comparison_whose_study_owes_it_three_blocks_gets_them_past_the_deadline() -> None:
    clock = Clock()
    racers = [entrant(clock, {"ref": 100.0, "a": 103.0}, 10.0, seed) for seed in range(2)]
    racers[1].race.least = 3  # the wire study's: a row from fewer is not trusted
    order: list[str] = []
    run_race(racers, deadline=5.0, clock=clock, told=lambda each: order.append(each.race.contest.workload))
    assert order == ["w0", "w1", "w0", "w1", "w1"]
    assert estimated_end(racers, None, clock.now) == clock.now  # nothing owed


def test_the_budget_goes_to_the_comparisons_still_open_and_a_clear_one_leaves() -> None:
    clock = Clock()
    clear = entrant(clock, {"ref": 100.0, "a": 200.0}, 10.0, 1)  # clear after the least blocks
    close = entrant(clock, {"ref": 100.0, "a": 104.0}, 10.0, 2, noise=0.08)  # needs many
    run_race([clear, close], deadline=300.0, clock=clock)
    assert clear.record is not None and clear.record.stopped["a"] == Stop(5, "clear")
    assert close.record is not None and len(close.record.orders) > 5
    assert clock.now <= 300.0 and clear.seconds == 50.0 and close.seconds == clock.now - 50.0


def test_a_race_picks_the_comparison_that_narrows_most_per_second() -> None:
    clock = Clock()
    cheap = entrant(clock, {"ref": 100.0, "a": 104.0}, 5.0, 3, noise=0.1)
    dear = entrant(clock, {"ref": 100.0, "a": 104.0}, 50.0, 4, noise=0.1)
    run_race([cheap, dear], deadline=200.0, clock=clock)
    assert cheap.race.blocks > dear.race.blocks  # the same narrowing costs ten times less in the cheap one


def test_the_estimated_end_counts_the_blocks_still_owed_then_the_budget() -> None:
    clock = Clock()
    racers = [entrant(clock, {"ref": 100.0, "a": 150.0}, 10.0, seed) for seed in range(2)]
    assert estimated_end(racers, None, 0.0) == 0.0  # nothing measured: nothing to go by
    racers[0].step(clock)
    assert estimated_end(racers, None, clock.now) == clock.now + 10.0 + 2 * 10.0  # one owed by w0, two by w1
    assert estimated_end(racers, 1000.0, clock.now) == 1000.0


def test_an_a_a_twin_stops_once_calibrated_and_never_while_apart() -> None:
    from harness.method.verdicts import twin_stop_reason

    method = Method()
    assert twin_stop_reason(Interval(1.0, 0.99, 1.01, 10), method) == "calibrated"
    assert twin_stop_reason(Interval(1.0, 0.99, 1.01, 4), method) == ""  # before the minimum
    assert twin_stop_reason(Interval(1.0, 0.90, 1.11, 10), method) == ""  # its floor not yet within the band
    assert twin_stop_reason(Interval(1.03, 1.01, 1.05, 10), method) == ""  # apart: measured on


def test_a_failing_alternative_stops_and_a_failing_reference_ends_the_comparison() -> None:
    record = fresh_blocks(
        Contest("w", "ref", ("bad", "good")), lambda label, number: None if label == "bad" else 1.0, METHOD, 1
    )
    assert record.stopped["bad"] == record.stopped["bad"].__class__(2, "failed")
    dead = fresh_blocks(Contest("w", "ref", ("a",)), lambda label, number: None if label == "ref" else 1.0, METHOD, 1)
    assert dead.stopped["a"].reason == "reference failed" and len(dead.orders) == 2


def test_ratios_pair_rounds_and_the_record_round_trips() -> None:
    assert paired_ratios({"a": {1: 2.0, 2: 3.0, 3: 4.0}, "r": {1: 1.0, 3: 2.0}}, "a", "r") == [2.0, 2.0]
    record, _ = run({"ref": 100.0, "a": 200.0}, noise=0.01, drift=0.1, seed=5)
    assert ComparisonRecord.from_json(record.to_json()) == record
    assert ratio_text(Interval(0.871, 0.842, 0.903, 5)) == "0.87 [0.84, 0.90]"


def test_the_rounds_go_on_until_the_a_a_twin_is_known_too() -> None:
    record, _ = run({"ref": 1000.0, "far": 2000.0}, noise=0.08, drift=0.0, seed=2)
    assert record.stopped["far"].block == METHOD.min_blocks  # clear at once
    assert len(record.orders) == record.stopped["ref~aa"].block > METHOD.min_blocks  # the twin needed more
    assert all("far" not in order for order in record.orders[METHOD.min_blocks :])


def test_a_comparison_without_the_control_runs_no_twin_and_says_so_in_its_record() -> None:
    record = fresh_blocks(Contest("w", "ref", ("a",), controlled=False), lambda label, number: 1.0, METHOD, 1)
    assert all(control_of("ref") not in order for order in record.orders) and set(record.stopped) == {"a"}
    assert record.control is None and record.to_json()["control"] is None
    assert ComparisonRecord.from_json(record.to_json()) == record
    controlled = fresh_blocks(Contest("w", "ref", ("a",)), lambda label, number: 1.0, METHOD, 1)
    assert ComparisonRecord.from_json(controlled.to_json()).control == control_of("ref")
