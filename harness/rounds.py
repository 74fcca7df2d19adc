"""Interleaved rounds: the order in which a comparison's windows are measured, and when each alternative stops.

`run_rounds` knows nothing of servers: it is handed `window(label, round)`, which starts the alternative fresh,
warms it up, measures one window and returns its OK rate (None when the window failed). A test hands it a
synthetic one with known ratios and noise.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.verdicts import ComparisonRecord, Method, Stop, control_of, interval, paired_ratios, stop_reason

FAILED_WINDOWS = 2  # an alternative whose windows failed this often is measured no more


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


def run_rounds(
    rounds: Rounds,
    window: Callable[[str, int], float | None],
    method: Method,
    seed: int,
    deadline: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> ComparisonRecord:
    """Rounds until every alternative and the A/A twin have stopped, the cap of rounds, or the deadline (a
    clock() time): no round starts that would end past it, judged by the last round's length.

    Each round measures every alternative still active, the reference and its A/A twin (if it has one) once, in
    an order shuffled by a generator seeded with `seed`."""
    begun = clock()
    shuffler = random.Random(seed)
    twin = [control_of(rounds.reference)] if rounds.controlled else []
    # The A/A twin is judged like an alternative: the rounds go on until it too is known, so that a workload
    # whose starts scatter gets the rounds it needs before its control is read.
    active = [*rounds.alternatives, *twin]
    rates: dict[str, dict[int, float]] = {label: {} for label in (*rounds.alternatives, rounds.reference, *twin)}
    failures = dict.fromkeys(rates, 0)
    orders: list[list[str]] = []
    stopped: dict[str, Stop] = {}
    last = 0.0  # how long the last round took
    out_of_time = False
    while active and len(orders) < method.max_rounds:
        started = clock()
        if deadline is not None and started + last > deadline:
            out_of_time = True
            break
        number = len(orders) + 1
        order = [*(label for label in active if label not in twin), rounds.reference, *twin]
        shuffler.shuffle(order)
        orders.append(order)
        for label in order:
            rate = window(label, number)
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
