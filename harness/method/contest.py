"""Blocks of slices: the order in which a comparison's slices are measured, when each alternative stops, and how a
run's comparisons share its time.

A `Race` is one comparison's blocks, taken one at a time: it plans a block, takes the rates its slices reached and
says who is still open. harness.method.race runs them: `run_blocks` one race to its end, `run_race` many at once,
first the least number of blocks each needs for an interval (in turns, so that no comparison's blocks all fall in
one stretch of the run), then, while the budget lasts, a block of whichever open comparison narrows its intervals
most per second. Neither knows anything of servers: each race is handed `block(number, plan)`, which starts every
label's server afresh side by side, warms each, measures the plan's slices in turn and returns their OK rates (None
for a slice that failed). A test hands it a synthetic one with known ratios, a drifting machine and bursts, and a
clock.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.method.comparison_record import ComparisonRecord, Stop
from harness.method.moderation import NO_PRIOR, Prior, Row, quantile
from harness.method.pooling import Estimate, estimate_of, pooled_row
from harness.method.selection import Difference, Selection, blocks_to_certify, difference_of, select
from harness.method.verdicts import (
    BLOCKS,
    UNRESOLVED,
    Interval,
    Method,
    block_rate,
    control_of,
    interval,
    known,
    more_blocks,
    noise_floor,
    paired_ratios,
    separated,
    stop_reason,
    twin_stop_reason,
    verdict,
)

Block = Callable[[int, list[str]], Sequence[float | None]]
# A row's estimates in the earlier runs this one pools with (harness.analysis.evidence.Seed.earlier): (first, second)
# -> each earlier run's estimate of first over second.
Earlier = Callable[[str, str], Sequence[Estimate]]
FAILED_WINDOWS = 2  # an alternative that failed in this many blocks is measured no more
DECIDING_WEIGHT = 3.0  # how much a decision row's uncertified pick counts in a race's gain
JUDGED_FLOOR = 0.25  # an A/A twin is too thin to judge while its noise floor is wider than this: blind to a 25% gap
# Which comparison's block comes first, before the gain per second decides among equals: a twin too thin to judge,
# then a decision row not yet closed whose close fits in what is left of the budget, then everything else.
THIN_TWIN, CLOSING, OTHER = 2, 1, 0
BEHIND = "behind"  # why a label left a decision row's blocks: the selection rule put it clearly behind the pick
LEAST_BLOCKS = 2  # every comparison of a run gets this many blocks, budget or not: an interval needs two


@dataclass(frozen=True)
class Contest:
    """What to compare: the labels of the alternatives and of the reference, on one workload; whether the
    reference also runs as its A/A twin; the groups its rows' variances are moderated within (narrowest first:
    study and scenario, study, run; none: its own alone); whether a decision row reads it (its certified pick,
    harness.method.selection), and which labels a row may pick (none named: every label; a stack's floor is never
    a pick); and the pairs a row reads as estimates (first over second: what TLS costs), each open until its
    interval is known to the tie band (verdicts.known), whatever its verdict."""

    workload: str
    reference: str
    alternatives: tuple[str, ...]
    controlled: bool = True
    groups: tuple[str, ...] = ()
    deciding: bool = False
    pickable: tuple[str, ...] = ()
    estimates: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.reference in self.alternatives or len(set(self.alternatives)) != len(self.alternatives):
            raise ValueError(f"alternatives must be distinct and exclude the reference: {self}")

    @property
    def candidates(self) -> tuple[str, ...]:
        """The labels a row may pick."""
        return self.pickable or (self.reference, *self.alternatives)


def block_plan(labels: Sequence[str], method: Method, shuffler: random.Random) -> list[str]:
    """The labels' slices of one block, in the order they are measured: in the blocks design `method.cycles`
    mirrored cycles, each every label once in a shuffled order and then in the reverse order (A B C C B A), so
    that a drift linear over a cycle falls alike on every label (a slow workload's cycles are not mirrored: each
    label once, shuffled); in the fresh design every label once, shuffled."""
    plan = []
    for _ in range(method.cycles if method.design == BLOCKS else 1):
        order = list(labels)
        shuffler.shuffle(order)
        plan += order + order[::-1] if method.design == BLOCKS and method.mirrored else order
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


class Race:
    """One comparison's blocks, one at a time: `plan()` the next block, `record()` its slices' rates, until it is
    no longer `open`; then `finish()` gives its record. The A/A twin is judged like an alternative but stops only
    once calibrated (`verdicts.twin_stop_reason`), so that a workload whose slices scatter gets the blocks it needs
    before its control is read. The race gets `least` blocks whatever the budget (its study's
    `StudyPlan.least_blocks`), and every label measured in all of them: one clearly behind a decision row's pick
    leaves only after them, so that no label's row rests on fewer."""

    def __init__(
        self,
        contest: Contest,
        method: Method,
        seed: int,
        earlier: Earlier | None = None,
        spread: tuple[float, float] = (0.0, 0.0),
        least: int = LEAST_BLOCKS,
    ) -> None:
        self.contest, self.method, self.seed, self.least = contest, method, seed, least
        self.prior: Prior = NO_PRIOR  # what the run's other rows lend its intervals (run_race keeps it current)
        # What earlier runs of this machine class and code already tell of each row, and the between-run variance
        # (tau², its degrees of freedom) they show: a row they settled needs no more blocks of this run.
        self.earlier, self.spread = earlier, spread
        self.shuffler = random.Random(seed)
        self.twin = [control_of(contest.reference)] if contest.controlled else []
        self.active = [*contest.alternatives, *self.twin]
        self.rates: dict[str, dict[int, float]] = {label: {} for label in (*contest.alternatives, contest.reference)}
        self.rates |= {label: {} for label in self.twin}
        self.failures = dict.fromkeys(self.rates, 0)
        self.orders: list[list[str]] = []
        self.stopped: dict[str, Stop] = {}
        self.seconds: list[float] = []  # each block's length

    @property
    def blocks(self) -> int:
        return len(self.orders)

    @property
    def measured(self) -> set[str]:
        """The labels the next block measures: the open ones and the reference."""
        return {*self.active, self.contest.reference}

    @property
    def reference_failed(self) -> bool:
        return self.failures[self.contest.reference] >= FAILED_WINDOWS

    @property
    def open(self) -> bool:
        """Whether another block would still tell something: a label is open, the cap is not reached, and the
        reference runs."""
        return bool(self.active) and self.blocks < self.method.max_blocks and not self.reference_failed

    @property
    def last_seconds(self) -> float:
        """How long the last block took (0 before the first)."""
        return self.seconds[-1] if self.seconds else 0.0

    def plan(self) -> list[str]:
        """The next block's slices, in order: every open alternative, the reference and its twin."""
        labels = [*(label for label in self.active if label not in self.twin), self.contest.reference, *self.twin]
        plan = block_plan(labels, self.method, self.shuffler)
        self.orders.append(plan)
        return plan

    def record(self, plan: Sequence[str], rates: Sequence[float | None], seconds: float = 0.0) -> None:
        """The block just planned, measured: each label's rate in it, and who stops now and why."""
        number = self.blocks
        self.seconds.append(seconds)
        for label, rate in block_rates(plan, rates).items():
            if rate is None:
                self.failures[label] += 1
            else:
                self.rates[label][number] = rate
        chosen = self.selection()
        # While a decision row's pick is not certified, its contenders stay in the blocks whatever their own rows
        # say; a label clearly behind the pick leaves them (Kim & Nelson's elimination).
        contending = set(chosen.contenders) if chosen is not None and not chosen.certified else set()
        behind = set(chosen.behind) if chosen is not None else set()
        # An estimate a row reads stays in the blocks, both its labels, until it is known to the tie band.
        estimating = {label for pair in self.unknown() for label in pair}
        contending |= estimating
        for label in list(self.active):
            why = ""
            if self.failures[label] >= FAILED_WINDOWS:
                why = "failed"
            elif label in behind - estimating and number >= self.least:
                why = BEHIND
            elif (found := self.ratio(label, self.contest.reference, pooled=label not in self.twin)) is not None:
                judge = twin_stop_reason if label in self.twin else stop_reason
                why = "" if label in contending else judge(found, self.method)
            if why:
                self.stopped[label] = Stop(number, why)
                self.active.remove(label)

    def ratio(self, label: str, over: str, pooled: bool = True) -> Interval | None:
        """label's rate over another's, paired by block, with its moderated interval, pooled with the earlier runs'
        estimates of the row where there are any (the A/A twin calibrates this run: it is judged alone); None
        before two blocks."""
        ratios = paired_ratios(self.rates, label, over)
        if len(ratios) < 2:
            return None
        before = list(self.earlier(label, over)) if self.earlier and pooled else []
        if not before:
            return interval(ratios, self.method.confidence, self.prior)
        own = estimate_of([math.log(each) for each in ratios], self.prior)
        return pooled_row([own, *before], *self.spread).ratio

    def before(self, first: str, second: str) -> Interval | None:
        """first over second pooled over the earlier runs alone; None where none pools."""
        found = list(self.earlier(first, second)) if self.earlier else []
        return pooled_row(found, *self.spread).ratio if found else None

    def unknown(self, ratio: Callable[[str, str], Interval | None] | None = None) -> list[tuple[str, str]]:
        """The estimates a row reads (Contest.estimates) not yet known to the tie band, by one of this race's ratios
        (this run's pooled with the earlier ones, or the earlier ones alone); each is open before it has an
        interval."""
        found = ratio or self.ratio
        return [
            pair
            for pair in self.contest.estimates
            if (each := found(*pair)) is None or not known(each, self.method.tie)
        ]

    def settled_before(self) -> tuple[list[str], tuple[str, str] | None]:
        """What earlier runs left open, before this run's first block: the labels whose row over the reference they
        did not resolve, and, where a decision row reads this comparison and they did not certify its pick (by their
        pooled standing), the pick and the rival that holds its bound lowest, else the first estimate it reads that
        they did not know to the tie band; everything is open where no earlier run pools."""
        reference, tie = self.contest.reference, self.method.tie
        before = {label: self.before(label, reference) for label in self.contest.alternatives}
        open_labels = [label for label, found in before.items() if found is None or verdict(found, tie) == UNRESOLVED]
        estimate = next(iter(self.unknown(self.before)), None)
        if not self.contest.deciding:
            return open_labels, estimate
        standing = {
            label: 0.0 if label == reference else math.log(found.value) if (found := before.get(label)) else -math.inf
            for label in self.contest.candidates
        }
        chosen = select(
            list(self.contest.candidates), standing, self.difference(self.before), tie, self.method.confidence
        )
        if chosen is None or chosen.certified or (binding := chosen.binding) is None:
            return open_labels, estimate
        return open_labels, (chosen.pick, binding.rival)

    def difference(self, ratio: Callable[[str, str], Interval | None]) -> Callable[[str, str], Difference | None]:
        """A selection's differences, from one of this race's ratios (this run's pooled with the earlier ones, or the
        earlier ones alone)."""

        def found(first: str, second: str) -> Difference | None:
            made = ratio(first, second)
            return None if made is None else difference_of(made, self.method.confidence)

        return found

    def rows(self) -> list[Row]:
        """Its rows (each label, the twin too, against the reference) for the run's priors."""
        name = self.contest.workload
        found = []
        for label in self.rates:
            ratios = paired_ratios(self.rates, label, self.contest.reference)
            if label != self.contest.reference and ratios:
                found.append(Row(self.contest.groups or (name,), name, tuple(math.log(each) for each in ratios)))
        return found

    def decision(self) -> tuple[str, str] | None:
        """The pick so far and the rival that holds its bound lowest (harness.method.selection); None where no
        decision row reads the comparison or it has fewer than two candidates with a block."""
        chosen = self.selection()
        if chosen is None or (binding := chosen.binding) is None:
            return None
        return chosen.pick, binding.rival

    def selection(self) -> Selection | None:
        """Where a decision row reads the comparison: the selection rule over the labels it may pick that ran a
        block, the pick by its mean log rate, each difference paired by block (pooled with earlier runs where they
        pool), judged at the tie band; None otherwise."""
        if not self.contest.deciding:
            return None
        means = {
            label: sum(math.log(rate) for rate in found.values()) / len(found)
            for label in self.contest.candidates
            if (found := self.rates.get(label))
        }
        return select(list(means), means, self.difference(self.ratio), self.method.tie, self.method.confidence)

    def narrowing(self, found: Interval | None) -> float:
        """How much one more block is expected to narrow an interval (log scale): at its moderated spread and
        degrees of freedom, from n blocks to n + 1; inf before it has one."""
        if found is None or not math.isfinite(found.half_width):
            return math.inf
        n, freedom, confidence = found.blocks, found.degrees, self.method.confidence
        error = found.half_width / quantile(confidence, freedom)  # the spread over sqrt(n)
        return found.half_width - quantile(confidence, freedom + 1) * error * math.sqrt(n / (n + 1))

    def gain(self) -> float:
        """What one more block is expected to narrow, at the moderated spread: for each open label whose interval
        is still unresolved (the twin until calibrated), the fall in its half-width from one block more; and where
        a decision row reads the comparison and its pick is not yet certified, the fall of the pick's difference from
        the rival that holds its bound lowest, and of each estimate it reads not yet known, counted DECIDING_WEIGHT
        times (a row is answered first). inf for a label without an interval."""
        total = 0.0
        for label in self.active:
            found = self.ratio(label, self.contest.reference)
            if found is None:
                return math.inf
            if label in self.twin or verdict(found, self.method.tie) == UNRESOLVED:
                total += self.narrowing(found)
        chosen = self.selection()
        binding = None if chosen is None or chosen.certified else chosen.binding
        if chosen is not None and binding is not None and {chosen.pick, binding.rival} & self.measured:
            total += DECIDING_WEIGHT * self.narrowing(self.ratio(chosen.pick, binding.rival))
        for pair in self.unknown():
            total += DECIDING_WEIGHT * self.narrowing(self.ratio(*pair))
        return total

    def thin_twin(self) -> bool:
        """Whether its A/A twin is still open and too thin to judge: no interval yet, or a noise floor wider than
        JUDGED_FLOOR where it has not separated."""
        if not self.twin or self.twin[0] not in self.active:
            return False
        found = self.ratio(self.twin[0], self.contest.reference, pooled=False)
        return found is None or (not separated(found) and noise_floor(found) > JUDGED_FLOOR)

    def blocks_to_close(self) -> int | None:
        """About how many more blocks would close what a decision row reads here: certify its pick, and know each
        estimate to the tie band (at the spread it shows); 0 where nothing is open, None where it cannot yet be
        told (a difference or an estimate without an interval)."""
        needed = 0
        chosen = self.selection()
        if chosen is not None and not chosen.certified:
            more = blocks_to_certify(chosen)
            if more is None:
                return None
            needed = more
        for pair in self.unknown():
            found = self.ratio(*pair)
            if found is None or not math.isfinite(found.half_width):
                return None
            needed = max(needed, more_blocks(found, math.log1p(self.method.tie)))
        return needed

    def urgency(self, seconds_left: float) -> int:
        """Which comes first (THIN_TWIN, CLOSING, OTHER): its twin too thin to judge; a decision row it holds not yet
        closed, whose close (blocks_to_close, each as long as its last) fits in `seconds_left` (one with no estimate
        yet counts as fitting); anything else."""
        if self.thin_twin():
            return THIN_TWIN
        if not self.contest.deciding and not self.contest.estimates:
            return OTHER
        needed = self.blocks_to_close()
        if needed == 0:
            return OTHER
        fits = needed is None or needed * self.last_seconds <= seconds_left
        return CLOSING if fits else OTHER

    def finish(self, why: str, wall_seconds: float) -> ComparisonRecord:
        """The comparison's record. Each label still open stops now: at the cap where the race reached it, for the
        reference where that failed, and otherwise for `why` (its budget spent, or the run interrupted)."""
        if self.blocks >= self.method.max_blocks:
            why = "cap"
        for label in self.active:
            self.stopped[label] = Stop(self.blocks, "reference failed" if self.reference_failed else why)
        self.active = []
        contest = self.contest
        return ComparisonRecord(
            contest.workload,
            contest.reference,
            contest.alternatives,
            self.seed,
            self.method,
            self.orders,
            self.stopped,
            round(wall_seconds, 1),
            controlled=contest.controlled,
        )


def step(race: Race, block: Block, clock: Callable[[], float]) -> None:
    """One block of a race, timed."""
    started = clock()
    plan = race.plan()
    race.record(plan, block(race.blocks, plan), clock() - started)
