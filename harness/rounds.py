"""Blocks of slices: the order in which a comparison's slices are measured, and when each alternative stops.

`run_rounds` knows nothing of servers: it is handed `block(number, plan)`, which starts every label's server
afresh side by side, warms each, measures the plan's slices in turn and returns their OK rates (None for a slice
that failed). A test hands it a synthetic one with known ratios, a drifting machine and bursts.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.verdicts import (
    BLOCKS,
    ComparisonRecord,
    Method,
    Stop,
    block_rate,
    control_of,
    interval,
    paired_ratios,
    stop_reason,
)

FAILED_WINDOWS = 2  # an alternative that failed in this many blocks is measured no more


@dataclass
class Budget:
    """A run's time, shared by its comparisons as they begin: each gets the part of what is left that its
    estimate is of the estimates of those not yet begun, so time one leaves over goes to the ones after it."""

    ends: float | None  # a time.monotonic() time; None: no budget
    left: float  # the estimates of the comparisons not yet begun, in seconds

    def deadline(self, estimate: float) -> float | None:
        """When a comparison of that estimate, beginning now, must end; the budget then counts it as begun."""
        share = estimate / self.left if self.left > 0 else 1.0
        self.left -= estimate
        if self.ends is None:
            return None
        now = time.monotonic()
        return now + max(0.0, self.ends - now) * min(1.0, share)


@dataclass(frozen=True)
class Rounds:
    """What to compare: the labels of the alternatives and of the reference, on one workload; whether the
    reference also runs as its A/A twin."""

    workload: str
    reference: str
    alternatives: tuple[str, ...]
    controlled: bool = True

    def __post_init__(self) -> None:
        if self.reference in self.alternatives or len(set(self.alternatives)) != len(self.alternatives):
            raise ValueError(f"alternatives must be distinct and exclude the reference: {self}")


def block_plan(labels: Sequence[str], method: Method, shuffler: random.Random) -> list[str]:
    """The labels' slices of one block, in the order they are measured: in the blocks design `method.cycles`
    mirrored cycles, each every label once in a shuffled order and then in the reverse order (A B C C B A), so
    that a drift linear over a cycle falls alike on every label; in the fresh design every label once, shuffled."""
    plan = []
    for _ in range(method.cycles if method.design == BLOCKS else 1):
        order = list(labels)
        shuffler.shuffle(order)
        plan += order + order[::-1] if method.design == BLOCKS else order
    return plan


def block_rates(plan: Sequence[str], rates: Sequence[float | None]) -> dict[str, float | None]:
    """Each label's rate in a block from its slices' (verdicts.block_rate); None where any slice failed (a block
    with a gap is no longer mirrored)."""
    slices: dict[str, list[float | None]] = {}
    for label, rate in zip(plan, rates, strict=True):
        slices.setdefault(label, []).append(rate)
    return {
        label: None if any(rate is None or rate <= 0 for rate in found) else block_rate(found)  # type: ignore[arg-type]
        for label, found in slices.items()
    }


def run_rounds(
    rounds: Rounds,
    block: Callable[[int, list[str]], Sequence[float | None]],
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
    shuffler = random.Random(seed)
    twin = [control_of(rounds.reference)] if rounds.controlled else []
    # The A/A twin is judged like an alternative: the blocks go on until it too is known, so that a workload
    # whose slices scatter gets the blocks it needs before its control is read.
    active = [*rounds.alternatives, *twin]
    rates: dict[str, dict[int, float]] = {label: {} for label in (*rounds.alternatives, rounds.reference, *twin)}
    failures = dict.fromkeys(rates, 0)
    orders: list[list[str]] = []
    stopped: dict[str, Stop] = {}
    last = 0.0  # how long the last block took
    out_of_time = False
    while active and len(orders) < method.max_rounds:
        started = clock()
        if deadline is not None and len(orders) >= 2 and started + last > deadline:  # two blocks make an interval
            out_of_time = True
            break
        number = len(orders) + 1
        plan = block_plan(
            [*(label for label in active if label not in twin), rounds.reference, *twin], method, shuffler
        )
        orders.append(plan)
        for label, rate in block_rates(plan, block(number, plan)).items():
            if rate is None:
                failures[label] += 1
            else:
                rates[label][number] = rate
        for label in list(active):
            why = ""
            if failures[label] >= FAILED_WINDOWS:
                why = "failed"
            elif len(ratios := paired_ratios(rates, label, rounds.reference)) >= 2:
                why = stop_reason(interval(ratios, method.confidence), method)
                if label in twin and why == "clear":
                    why = ""  # an A/A twin apart from its reference is a calibration to keep measuring, not a result
            if why:
                stopped[label] = Stop(number, why)
                active.remove(label)
        if failures[rounds.reference] >= FAILED_WINDOWS:
            break  # nothing can be set against a reference that does not run
        last = clock() - started
    why = "budget" if out_of_time else "cap"
    for label in active:
        stopped[label] = Stop(len(orders), "reference failed" if failures[rounds.reference] >= FAILED_WINDOWS else why)
    return ComparisonRecord(
        rounds.workload,
        rounds.reference,
        rounds.alternatives,
        seed,
        method,
        orders,
        stopped,
        round(clock() - begun, 1),
        controlled=rounds.controlled,
    )
