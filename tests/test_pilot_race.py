"""The default run's method end to end on a synthetic machine with a clock handed in: the pilot's A/A blocks, the
noise and costs read from them, each comparison's cycles fitted to the pilot and to its share of the budget, and
the race that hands the time a settled comparison leaves to those still open. Nothing here waits: the clock
moves only as the synthetic blocks spend it."""

from __future__ import annotations

import math
from dataclasses import replace

from harness.analysis.judging import Judged
from harness.method.comparison_record import ComparisonRecord
from harness.method.contest import Contest, Race
from harness.method.noise import Costs
from harness.method.pilot import RUN_SECONDS, Pilot, pilot_method
from harness.method.race import Entrant, budget_shares, run_blocks, run_race
from harness.method.verdicts import Method, block_rate, judge
from harness.run.pilot import pilot_of
from tests.synthetic import Clock, Lab, Machine

COSTS = Costs(start=2.0, warm=1.0, slice_overhead=0.2)
BASE = Method(slice_seconds=1.0)


def judged_of(record: ComparisonRecord, slices: dict[str, dict[int, list[tuple[int, float]]]]) -> Judged:
    """The comparison as the report reads it back from a run's files."""
    rates = {
        label: {block: block_rate([rate for _, rate in found]) for block, found in blocks.items()}
        for label, blocks in slices.items()
    }
    return Judged("s", record, rates, judge("s", record.workload, record.reference, rates, record.method), {}, slices)


def run_the_pilot(clock: Clock, seconds: float, costs: Costs = COSTS, **noise: float) -> Pilot:
    """The pilot as a run makes it: a reference against an independent start of itself, for `seconds`."""
    lab = Lab(Machine({"ref": 100.0}, 1, **{"white": 0.05, "walk": 0.01, "restart": 0.02, **noise}), clock, costs, 1.0)
    measuring = pilot_method(BASE)
    begun = clock()
    record = run_blocks(Contest("pilot/hello/c50", "ref", ()), lab.block, measuring, 1, begun + seconds, clock)
    return pilot_of(judged_of(replace(record, costs=costs.to_json()), lab.slices), measuring, clock() - begun)


def test_a_run_s_pilot_fits_each_comparison_and_the_race_hands_on_the_time_a_settled_one_leaves() -> None:
    clock = Clock()
    pilot = run_the_pilot(clock, RUN_SECONDS)
    assert pilot.blocks == 2 and pilot.costs == COSTS  # 20.4 s a block of three cycles: two fit the 45 s
    assert pilot.noise.cycle_sd is not None and pilot.ratio is not None

    truths = {
        "clear": {"ref": 100.0, "a": 150.0},
        "close": {"ref": 100.0, "a": 103.0, "b": 97.0},
        "same": {"ref": 100.0, "a": 100.0},
    }
    controlled = {"clear": False, "close": False, "same": True}
    labs = {
        name: Lab(Machine(true, seed, white=0.05, walk=0.01, restart=0.02), clock, COSTS, BASE.slice_seconds)
        for seed, (name, true) in enumerate(truths.items(), 2)
    }
    labels = {name: len(true) + controlled[name] for name, true in truths.items()}
    estimates = [COSTS.block_seconds(n, n, BASE.cycles, 1.0) * BASE.min_blocks for n in labels.values()]
    begun, budget = clock(), 900.0
    deadline = begun + budget
    shares = dict(zip(truths, budget_shares(estimates, budget), strict=True))
    entrants = {}
    for name, true in truths.items():
        share = shares[name]
        assert share is not None
        design = pilot.design_for(labels[name], labels[name], share, BASE)
        assert 1 <= design.cycles <= 4 and design.blocks >= 2  # every share fits the blocks an interval needs
        rounds = Contest(name, "ref", tuple(label for label in true if label != "ref"), controlled[name])
        entrants[name] = Entrant(Race(rounds, replace(BASE, cycles=design.cycles), 7), labs[name].block)
    run_race(list(entrants.values()), deadline, clock)

    assert clock() <= deadline  # no block ended past the budget
    assert sum(each.seconds for each in entrants.values()) == clock() - begun  # all the time went to blocks
    for each in entrants.values():
        assert each.race.blocks >= 2
        if each.race.open:  # still open: its next block would not have fitted
            assert clock() + each.race.last_seconds > deadline
    clear = entrants["clear"].record
    assert clear is not None
    (faster,) = [each for each in judged_of(clear, labs["clear"].slices).outcomes if each.alternative == "a"]
    assert faster.verdict == "faster"  # known from its first blocks: the race spent no more on it than that
    assert len(clear.orders) < min(len(entrants[name].race.orders) for name in ("close", "same"))
    assert shares["clear"] is not None and entrants["clear"].seconds < shares["clear"]
    others = [name for name in truths if name != "clear"]  # what "clear" left went to those still open
    assert sum(entrants[name].seconds for name in others) > sum(shares[name] or 0.0 for name in others)
    for name, true in truths.items():  # each label's slices read as its own (coverage: tests/test_coverage.py)
        record = entrants[name].record
        assert record is not None
        for outcome in judged_of(record, labs[name].slices).outcomes:
            truth = true[outcome.alternative.removesuffix("~aa")] / true["ref"]
            assert abs(math.log(outcome.ratio.value / truth)) < 0.05, (name, outcome)


def test_the_pilot_fits_one_cycle_where_restarts_add_noise_and_more_where_starts_cost_time() -> None:
    """What a restart adds cannot be averaged within a block, so where it dominates, short blocks (more of them)
    win; where a start costs much time and adds nothing, longer blocks spend less of the budget on starts."""
    restarting = run_the_pilot(Clock(), 600.0, restart=0.08)
    assert restarting.noise.restart_sd is not None and restarting.noise.restart_sd > 0.05
    assert restarting.design_for(3, 3, 600.0, BASE).cycles == 1

    slow_starts = Costs(start=20.0, warm=5.0, slice_overhead=0.2)
    steady = run_the_pilot(Clock(), 1200.0, costs=slow_starts, restart=0.0)
    assert steady.design_for(3, 3, 600.0, BASE).cycles >= 3
