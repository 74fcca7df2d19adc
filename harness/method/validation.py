"""Does an interval cover what it claims? Checked on runs with many blocks: draw 2 or 3 of a comparison's blocks,
make each row's interval from them alone, and ask whether it holds the row's mean over the blocks left out. Pure:
log ratios in, figures out.

Three ways of making the interval are set side by side:
- plain: the t-interval of the row's own drawn blocks;
- moderated: its variance moderated by a prior fitted to every row of the run drawn the same way
  (harness.method.moderation), d0 capped at the drawn blocks less one summed over the comparisons;
- weighted: moderated, and each block weighted by the inverse of its own noise, read from the spread of every
  label's slices about their means in that block (a block noisy for every label counts less). Weighted least
  squares with known relative weights: the weighted mean, its residual variance moderated as above.

The mean of the blocks left out is itself uncertain, so an exact 95% interval holds it less often than 95% (at 3
of 12 blocks, about 91% for a normal spread known exactly). Two figures are given: `held` counts an interval as
covering when it holds that mean; `compatible` when the two estimates are within what both their errors allow
(|drawn - left| <= hypot(half-width, z * the left mean's standard error)), which an exact interval meets 95% of the
time. A method keeps its claim when `compatible` is at least 93%.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.method.moderation import NO_PRIOR, Prior, Row, moderated, priors, quantile
from harness.method.selection import DELTA, Difference, select
from harness.method.verdicts import CONTROL_SUFFIX

LEAST_BLOCKS = 8  # a comparison is drawn from when its reference ran at least this many blocks
LEAST_LEFT = 3  # a row counts when at least this many of its blocks are left out of the draw
PLAIN, MODERATED, WEIGHTED = "plain t", "moderated", "moderated, blocks weighted by their noise"
METHODS = (PLAIN, MODERATED, WEIGHTED)
TWINS = "moderated, the A/A twins alone"  # the moderated intervals of the A/A twins, told apart from the labels'


@dataclass(frozen=True)
class ManyBlocks:
    """A comparison of a run with many blocks: its groups (as moderation.Row has them), its name, each label's log
    ratio to the reference by block, and each block's noise (the variance of its slices' log rates about their
    label's mean in the block; absent where a block ran one slice a label)."""

    groups: tuple[str, ...]
    comparison: str
    logs: Mapping[str, Mapping[int, float]]
    block_noise: Mapping[int, float] = field(default_factory=dict)

    @property
    def blocks(self) -> list[int]:
        return sorted({block for found in self.logs.values() for block in found})


@dataclass(frozen=True)
class Coverage:
    """How one way of making intervals fared on drawn blocks: how often they held the mean of the blocks left out
    (`held`), how often the two were compatible within both their errors (`compatible`), their median half-width
    (a fraction: 0.1 is ±10%), and how many intervals that was."""

    method: str
    drawn: int
    held: float
    compatible: float
    half_width: float
    intervals: int


@dataclass(frozen=True)
class Drawn:
    """One row's drawn blocks: its log ratios and their weights (1 each, or its blocks' inverse noise, mean 1),
    and the mean of its blocks left out with that mean's standard error."""

    row: Row
    weights: tuple[float, ...]
    left: float
    left_error: float
    control: bool = False  # an A/A twin's row


def draw(comparisons: Sequence[ManyBlocks], drawn: int, rng: random.Random) -> list[Drawn]:
    """Each row of the run with `drawn` blocks of its comparison (the same blocks for every label of it, as a run
    measures them), with what the blocks left out say."""
    found = []
    for comparison in comparisons:
        chosen = sorted(rng.sample(comparison.blocks, drawn))
        noise = [comparison.block_noise.get(block) for block in chosen]
        known = [each for each in noise if each]
        inverse = [1 / each for each in known]
        weights = tuple(each / statistics.fmean(inverse) for each in inverse) if len(known) == drawn else (1.0,) * drawn
        for label, logs in comparison.logs.items():
            inside = [logs[block] for block in chosen if block in logs]
            outside = [value for block, value in logs.items() if block not in chosen]
            if len(inside) == drawn and len(outside) >= LEAST_LEFT:
                row = Row(comparison.groups, comparison.comparison, tuple(inside))
                error = statistics.stdev(outside) / math.sqrt(len(outside))
                found.append(Drawn(row, weights, statistics.fmean(outside), error, label.endswith(CONTROL_SUFFIX)))
    return found


def weighted(logs: Sequence[float], weights: Sequence[float]) -> tuple[float, float, float]:
    """The weighted mean, the residual variance (an estimate of the unit-weight variance, on len - 1 degrees of
    freedom) and the sum of the weights, by which that variance is divided for the mean's."""
    total = math.fsum(weights)
    mean = math.fsum(w * x for w, x in zip(weights, logs, strict=True)) / total
    residual = math.fsum(w * (x - mean) ** 2 for w, x in zip(weights, logs, strict=True)) / (len(logs) - 1)
    return mean, residual, total


def run_half_widths(rows: Sequence[Drawn], confidence: float) -> dict[str, list[tuple[float, float]]]:
    """Each row's (mean, half-width) by each method."""
    found: dict[str, list[tuple[float, float]]] = {method: [] for method in METHODS}
    fitted = priors([each.row for each in rows])
    # the weighted rows' residual variances, moderated by a prior fitted to them, within the same groups and cap
    residuals = [weighted(each.row.logs, each.weights) for each in rows]
    weighted_priors = priors([each.row for each in rows], variances=[residual for _, residual, _ in residuals])
    for each, prior, (mean, residual, total), weighted_prior in zip(
        rows, fitted, residuals, weighted_priors, strict=True
    ):
        n = len(each.row.logs)
        plain_mean = statistics.fmean(each.row.logs)
        for method, used, center, variance, scale in (
            (PLAIN, NO_PRIOR, plain_mean, each.row.variance, n),
            (MODERATED, prior, plain_mean, each.row.variance, n),
            (WEIGHTED, weighted_prior, mean, residual, total),
        ):
            posterior, freedom = used.posterior(variance, n - 1)
            found[method].append((center, quantile(confidence, freedom) * math.sqrt(posterior / scale)))
    return found


def coverage(
    runs: Sequence[Sequence[ManyBlocks]],
    drawn: int,
    draws: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Coverage]:
    """Plain, moderated and weighted intervals from `drawn` blocks of each run's comparisons with many blocks,
    `draws` times each, against the mean of the blocks left out; and the moderated ones of the A/A twins alone
    (TWINS), which calibrate a run and must cover as the labels' do."""
    rng = random.Random(seed)
    z = quantile(confidence, math.inf)
    told = (*METHODS, TWINS)
    held: dict[str, list[bool]] = {method: [] for method in told}
    compatible: dict[str, list[bool]] = {method: [] for method in told}
    widths: dict[str, list[float]] = {method: [] for method in told}
    for comparisons in runs:
        usable = [each for each in comparisons if len(each.blocks) >= LEAST_BLOCKS]
        for _ in range(draws if usable else 0):
            rows = draw(usable, drawn, rng)
            if not rows:
                continue
            for method, found in run_half_widths(rows, confidence).items():
                for each, (mean, half) in zip(rows, found, strict=True):
                    apart = abs(each.left - mean)
                    for name in (method, TWINS) if method == MODERATED and each.control else (method,):
                        held[name].append(apart <= half)
                        compatible[name].append(apart <= math.hypot(half, z * each.left_error))
                        widths[name].append(half)
    return [
        Coverage(
            method,
            drawn,
            statistics.fmean(held[method]) if held[method] else math.nan,
            statistics.fmean(compatible[method]) if compatible[method] else math.nan,
            math.expm1(statistics.median(widths[method])) if widths[method] else math.nan,
            len(held[method]),
        )
        for method in told
    ]


@dataclass(frozen=True)
class Selecting:
    """How the selection rule (harness.method.selection) fared on drawn blocks: of `selections` draws of a
    comparison, the share it certified, and of those the share whose pick was more than δ behind the best by all the
    comparison's blocks (`wrong`; the probability of good selection is 1 - wrong), with the worst comparison's share
    (of those certified at least ten times)."""

    drawn: int
    selections: int
    certified: float
    wrong: float
    worst: float


LEAST_CERTIFIED = 10  # a comparison's own share of wrong picks is told once it certified this often


def candidate_logs(comparison: ManyBlocks) -> dict[str, Mapping[int, float]]:
    """The labels a row may pick (every label but the A/A twin) with their log ratios to the reference by block,
    the reference's own ("") at 0."""
    found: dict[str, Mapping[int, float]] = {"": dict.fromkeys(comparison.blocks, 0.0)}
    return found | {label: logs for label, logs in comparison.logs.items() if not label.endswith(CONTROL_SUFFIX)}


def drawn_selection(
    logs: Mapping[str, Mapping[int, float]], chosen: Sequence[int], prior: Prior, delta: float, confidence: float
) -> tuple[str, bool, tuple[str, ...]] | None:
    """The pick from the chosen blocks alone (each difference moderated by the run's prior), whether it is
    certified, and the candidates it was chosen among: the labels that ran every chosen block (a label that stopped
    early ran only the first); None where fewer than two did."""
    inside = {label: [found[block] for block in chosen] for label, found in logs.items() if set(chosen) <= set(found)}
    if len(inside) < 2:
        return None

    def difference(first: str, second: str) -> Difference:
        found = moderated([a - b for a, b in zip(inside[first], inside[second], strict=True)], prior)
        return Difference(found.mean, found.error, found.freedom, found.blocks)

    standing = {label: statistics.fmean(values) for label, values in inside.items()}
    made = select(list(inside), standing, difference, delta, confidence)
    return None if made is None else (made.pick, made.certified, tuple(inside))


def selection_check(
    runs: Sequence[Sequence[ManyBlocks]],
    drawn: int,
    draws: int = 200,
    seed: int = 0,
    delta: float = DELTA,
    confidence: float = 0.95,
) -> Selecting:
    """The selection rule on `drawn` blocks of each run's comparisons with many blocks, `draws` times each, the
    differences moderated by a prior fitted to every row of the run drawn the same way; a certified pick is wrong
    where its mean over all its blocks lies more than δ below the best one's of the labels it was chosen among (those
    that ran every drawn block)."""
    rng = random.Random(seed)
    made = certified = wrong = 0
    by_comparison: dict[str, list[bool]] = {}
    for comparisons in runs:
        usable = [each for each in comparisons if len(each.blocks) >= LEAST_BLOCKS]
        for _ in range(draws if usable else 0):
            chosen = {each.comparison: sorted(rng.sample(each.blocks, drawn)) for each in usable}
            rows = [
                Row(each.groups, each.comparison, tuple(logs[block] for block in chosen[each.comparison]))
                for each in usable
                for logs in each.logs.values()
                if set(chosen[each.comparison]) <= set(logs)
            ]
            fitted = dict(zip([row.comparison for row in rows], priors(rows), strict=True))
            for each in usable:
                logs = candidate_logs(each)
                found = drawn_selection(
                    logs, chosen[each.comparison], fitted.get(each.comparison, NO_PRIOR), delta, confidence
                )
                if found is None:
                    continue
                made += 1
                pick, sure, among = found
                if not sure:
                    continue
                full = {label: statistics.fmean(logs[label].values()) for label in among}
                behind = full[pick] - max(full.values()) < math.log(1 - delta)
                certified += 1
                wrong += behind
                by_comparison.setdefault(each.comparison, []).append(behind)
    shares = [statistics.fmean(found) for found in by_comparison.values() if len(found) >= LEAST_CERTIFIED]
    return Selecting(
        drawn,
        made,
        certified / made if made else math.nan,
        wrong / certified if certified else math.nan,
        max(shares, default=math.nan),
    )


BLOCKS_DRAWN = (2, 3, 4, 6)  # the block counts validation draws, each told apart
LEAST_CLASS_RUNS = 5  # a machine class is judged by its own figures from this many many-block runs on
KEPT = 0.93  # an interval method keeps its 95% claim where at least this share of its intervals is compatible
GOOD = 0.95  # the selection rule keeps its claim where at least this share of its certified picks is good


@dataclass(frozen=True)
class Held:
    """What validation measured at one number of blocks drawn, on one machine class or all: the share of moderated
    intervals compatible with the blocks left out (the labels', the A/A twins' apart), the probability of good
    selection, and how many runs, intervals and certified picks each share rests on (0: none measured)."""

    blocks: int
    compatible: float
    twins: float
    good: float
    intervals: int
    twin_intervals: int
    certified: int
    runs: int = 0

    @property
    def measured(self) -> bool:
        """Whether every figure was measured: intervals of the labels and of the twins, and certified picks."""
        return self.intervals > 0 and self.twin_intervals > 0 and self.certified > 0

    @property
    def own(self) -> bool:
        """Whether a class may be judged by its own figures: every one measured, over LEAST_CLASS_RUNS runs or more
        (fewer runs draw the same few comparisons again and again, and their shares scatter)."""
        return self.measured and self.runs >= LEAST_CLASS_RUNS

    @property
    def holds(self) -> bool:
        """Whether a row resting on this many blocks may be trusted: every figure measured and at its claim."""
        return self.measured and self.compatible >= KEPT and self.twins >= KEPT and self.good >= GOOD


@dataclass(frozen=True)
class Calibration:
    """Validation's findings by machine class ("all": every class together), each at the block counts drawn."""

    by_class: Mapping[str, Sequence[Held]]

    def at(self, blocks: int, machine: str) -> Held | None:
        """What validation found for a row of `blocks` blocks on a machine class: at the most blocks drawn not above
        it, on that class where its own figures are enough to judge it (Held.own), else on every class together; None
        below the fewest drawn or where nothing was measured."""
        for name, enough in ((machine, "own"), (ALL_CLASSES, "measured")):
            found = [each for each in self.by_class.get(name, ()) if each.blocks <= blocks and getattr(each, enough)]
            if found:
                return max(found, key=lambda each: each.blocks)
        return None

    def trusted(self, blocks: int, machine: str) -> bool:
        """Whether a row of `blocks` blocks is trusted on this machine class by what validation measured."""
        found = self.at(blocks, machine)
        return found is not None and found.holds

    def least_trusted(self, machine: str) -> int | None:
        """The fewest blocks a row needs to be trusted on this machine class; None where no count drawn holds."""
        counts = sorted({each.blocks for name in (machine, ALL_CLASSES) for each in self.by_class.get(name, ())})
        return next((blocks for blocks in counts if self.trusted(blocks, machine)), None)


ALL_CLASSES = "all"


def held(runs: Sequence[Sequence[ManyBlocks]], drawn: int, draws: int, seed: int) -> Held:
    """Validation at one number of blocks drawn, over these runs (one machine class, or all)."""
    found = {each.method: each for each in coverage(runs, drawn, draws, seed)}
    selecting = selection_check(runs, drawn, draws, seed)
    certified = round(selecting.certified * selecting.selections) if selecting.selections else 0
    return Held(
        drawn,
        found[MODERATED].compatible,
        found[TWINS].compatible,
        1 - selecting.wrong if certified else math.nan,
        found[MODERATED].intervals,
        found[TWINS].intervals,
        certified,
        len(runs),
    )
