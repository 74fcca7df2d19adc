"""A run's comparisons racing for its budget: each gets the blocks an interval needs, then the time goes block by
block to the open comparison whose next block gains most, every interval moderated by all the run's rows so far."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.method.comparison_record import ComparisonRecord
from harness.method.contest import Block, Contest, Race, step
from harness.method.moderation import NO_PRIOR, priors
from harness.method.verdicts import Method


def budget_shares(estimates: Sequence[float], budget: float | None) -> list[float | None]:
    """Each comparison's share of a run's budget (seconds) by its estimate, for fitting its cycles per block to the
    time it should have; None for each without a budget. The race itself hands on what a comparison leaves."""
    total = math.fsum(estimates) or 1.0
    return [None if budget is None else budget * each / total for each in estimates]


@dataclass
class Entrant:
    """A comparison in a run's race: its race, the function that measures one of its blocks, and when it began."""

    race: Race
    block: Block
    seconds: float = 0.0  # the time its blocks took, so far
    record: ComparisonRecord | None = None

    @property
    def least(self) -> int:
        """The blocks it gets whatever the budget (its race's)."""
        return self.race.least

    def step(self, clock: Callable[[], float]) -> None:
        begun = clock()
        step(self.race, self.block, clock)
        self.seconds += clock() - begun


def run_race(
    entrants: Sequence[Entrant],
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    told: Callable[[Entrant], None] = lambda entrant: None,
) -> None:
    """A run's comparisons sharing its time. First each gets its `least` blocks, in turns (the first block of each,
    then the second of each), whatever the deadline; then, until the deadline (a clock() time) or until none is
    open, a block of the open comparison whose last block fits before the deadline and whose `Race.gain` per
    second of that block is highest: a comparison already clear or precise leaves the race, and the time it
    leaves goes to those still open. Before the gain, `Race.urgency` orders them: a twin too thin to judge first,
    then a decision row whose close fits in the time left, and only then the rows no decision reads (the brief's
    lower levels, say). Every block is judged by intervals moderated by all the run's rows so far (`moderate`).
    Each entrant's record is set once it has stopped; `told(entrant)` after each block."""
    for turn in range(max((each.least for each in entrants), default=0)):
        for each in entrants:
            if each.race.open and each.race.blocks <= turn < each.least:
                moderate(entrants)
                each.step(clock)
                told(each)
    while open_ := [each for each in entrants if each.race.open]:
        moderate(entrants)
        now = clock()
        fitting = [each for each in open_ if deadline is None or now + each.race.last_seconds <= deadline]
        if not fitting:
            break
        left = math.inf if deadline is None else deadline - now
        best = max(
            fitting,
            key=lambda each: (each.race.urgency(left), each.race.gain() / max(each.race.last_seconds, 1e-3)),
        )
        best.step(clock)
        told(best)
    for each in entrants:
        each.record = each.race.finish("budget", each.seconds)


def moderate(entrants: Sequence[Entrant]) -> None:
    """Each race's prior from every race's rows so far (harness.method.moderation), in their groups; a race that
    names no groups keeps its own intervals."""
    races = [each.race for each in entrants if each.race.contest.groups]
    rows = [(race, row) for race in races for row in race.rows()]
    fitted = priors([row for _, row in rows])
    for race in races:
        race.prior = next((prior for (owner, _), prior in zip(rows, fitted, strict=True) if owner is race), NO_PRIOR)


def estimated_end(entrants: Sequence[Entrant], deadline: float | None, now: float) -> float:
    """When a race should end (a clock() time): the blocks each comparison still needs for an interval, each as
    long as its last (or, before its first, as the mean block so far), then the budget's end if that is later."""
    measured = [seconds for each in entrants for seconds in each.race.seconds]
    typical = sum(measured) / len(measured) if measured else 0.0
    pending = sum(
        max(0, each.least - each.race.blocks) * (each.race.last_seconds or typical)
        for each in entrants
        if each.race.open
    )
    return max(now + pending, deadline or 0.0)


def run_blocks(
    rounds: Contest,
    block: Block,
    method: Method,
    seed: int,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ComparisonRecord:
    """Blocks (rounds) until every alternative and the A/A twin have stopped, the cap, or the deadline (a clock()
    time): after the first two (the least that gives an interval), no block starts that would end past it, judged
    by the last block's length.

    `block(number, plan)` measures one block: each label of the plan (`block_plan`, seeded by `seed`) in turn,
    returning each slice's OK rate (None for a slice that failed)."""
    begun = clock()
    race = Race(rounds, method, seed)
    while race.open:
        if deadline is not None and race.blocks >= 2 and clock() + race.last_seconds > deadline:
            break  # two blocks make an interval
        step(race, block, clock)
    return race.finish("budget", clock() - begun)
