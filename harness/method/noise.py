"""Where a comparison's noise lives, and the design it calls for. Pure: numbers in, numbers out.

A comparison in blocks reads each label's slices in time order within each block. From them:
- a slice's spread: the standard deviation of a slice's log rate about its label's mean in its block;
- the lag-1 correlation of neighbouring slices' deviations (the machine's drift makes it positive);
- a cycle's spread: how a label's log ratio to the reference moves from one mirrored cycle to the next within a
  block, and a block's spread: how it moves from one block (one set of server starts) to the next;
- the part of the block's spread the cycles do not explain: what a restart adds (Kalibera & Jones, ISMM 2013).
The design (cycles per block) is then the one that gives the narrowest expected interval over blocks in the
time at hand, given what a restart, a warm-up and a slice cost.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats

# label -> block -> (position in its block, OK rate) of each slice, in order
Slices = Mapping[str, Mapping[int, Sequence[tuple[int, float]]]]
DRIFT_HORIZON_SECONDS = 10.0  # "the rate drifts about S% over this many seconds"
MOST_CYCLES = 4  # a pilot's restart spread is rough: no design leans on it further


def _sd(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1))


@dataclass(frozen=True)
class Noise:
    """A comparison's noise, read from its slices (log scale: 0.05 is about 5%)."""

    slices: int
    slice_sd: float | None  # a slice's log rate about its label's mean in its block
    lag1: float | None  # correlation of neighbouring slices' deviations, within blocks
    cycle_sd: float | None  # a cycle's log ratio to the reference about its block's mean (None: one cycle a block)
    block_sd: float | None  # a block's log ratio to the reference, across blocks
    restart_sd: float | None  # the part of block_sd that cycle_sd does not explain: what a restart adds
    cycles: int  # cycles per block

    def to_json(self) -> dict[str, Any]:
        return {key: None if value is None else round(value, 4) for key, value in asdict(self).items()}


def _cycle_ratios(slices: Slices, label: str, reference: str, block: int, cycle_length: int) -> list[float]:
    """label's log ratio to the reference in each cycle of one block (each cycle holds a slice of each, twice)."""

    def by_cycle(name: str) -> dict[int, list[float]]:
        found: dict[int, list[float]] = {}
        for position, rate in slices.get(name, {}).get(block, ()):
            found.setdefault(position // cycle_length, []).append(math.log(rate))
        return found

    mine, theirs = by_cycle(label), by_cycle(reference)
    return [sum(mine[c]) / len(mine[c]) - sum(theirs[c]) / len(theirs[c]) for c in sorted(mine) if c in theirs]


def components(slices: Slices, reference: str, cycles: int, mirrored: bool = True) -> Noise:
    """The noise of a comparison's slices against its reference (every other label pooled); a cycle holds every
    label twice where mirrored, once where not (a slow workload's)."""
    deviations: list[float] = []
    neighbours: list[tuple[float, float]] = []
    blocks = sorted({block for found in slices.values() for block in found})
    for block in blocks:
        in_block: dict[int, float] = {}
        for found in slices.values():
            rates = found.get(block, ())
            if len(rates) < 2:
                continue
            logs = [math.log(rate) for _, rate in rates]
            mean = sum(logs) / len(logs)
            for (position, _), value in zip(rates, logs, strict=True):
                in_block[position] = value - mean
                deviations.append(value - mean)
        neighbours += [(in_block[p], in_block[p + 1]) for p in sorted(in_block) if p + 1 in in_block]
    groups = sum(1 for found in slices.values() for rates in found.values() if len(rates) >= 2)
    freedom = len(deviations) - groups
    slice_sd = math.sqrt(sum(each**2 for each in deviations) / freedom) if freedom > 0 else None
    lag1 = None
    if len(neighbours) >= 3:
        left, right = zip(*neighbours, strict=True)
        if _sd(left) and _sd(right):
            lag1 = float(stats.pearsonr(left, right).statistic)
    labels = [label for label in slices if label != reference]
    cycle_length = (2 if mirrored else 1) * len(slices)
    within: list[float] = []
    block_ratios: list[float] = []
    within_freedom = 0
    for label in labels:
        means = []
        for block in blocks:
            ratios = _cycle_ratios(slices, label, reference, block, cycle_length)
            if not ratios:
                continue
            mean = sum(ratios) / len(ratios)
            means.append(mean)
            within += [each - mean for each in ratios]
            within_freedom += len(ratios) - 1
        if (spread := _sd(means)) is not None:
            block_ratios.append(spread**2)
    cycle_sd = math.sqrt(sum(each**2 for each in within) / within_freedom) if within_freedom > 0 else None
    block_sd = math.sqrt(sum(block_ratios) / len(block_ratios)) if block_ratios else None
    restart_sd = None
    if block_sd is not None and cycle_sd is not None:
        restart_sd = math.sqrt(max(0.0, block_sd**2 - cycle_sd**2 / cycles))
    return Noise(len(deviations), slice_sd, lag1, cycle_sd, block_sd, restart_sd, cycles)


def drift(series: Sequence[float], slice_seconds: float, horizon: float = DRIFT_HORIZON_SECONDS) -> float | None:
    """How far one server's log rate moves over `horizon` seconds: the standard deviation of the change between
    slices that many seconds apart (series: log rates of consecutive slices, `slice_seconds` apart)."""
    lag = max(1, round(horizon / slice_seconds))
    changes = [series[i + lag] - series[i] for i in range(len(series) - lag)]
    return _sd(changes) if len(changes) >= 2 else None


@dataclass(frozen=True)
class Costs:
    """What a block spends besides its slices' load (seconds): starting a server until it is ready, warming a
    label up, and what a slice takes beyond its load (the driver's start and drain, the harness's sampling)."""

    start: float
    warm: float
    slice_overhead: float

    def to_json(self) -> dict[str, float]:
        return {key: round(value, 3) for key, value in asdict(self).items()}

    def block_seconds(self, labels: int, servers: int, cycles: int, slice_seconds: float) -> float:
        """About how long a block of `labels` labels on `servers` server starts takes."""
        return servers * self.start + labels * self.warm + cycles * 2 * labels * (slice_seconds + self.slice_overhead)


@dataclass(frozen=True)
class Design:
    """The cycles per block for a comparison, and the interval it should reach in the time at hand."""

    cycles: int
    blocks: int
    half_width: float  # the expected half-width of a ratio's 95% interval, as a fraction (0.04 is ±4%)

    def to_json(self) -> dict[str, float]:
        return {"cycles": self.cycles, "blocks": self.blocks, "half_width": round(self.half_width, 4)}


def expected_half_width(
    noise: Noise, cycles: int, blocks: int, confidence: float = 0.95, prior_freedom: float = 0.0
) -> float:
    """The expected half-width (as a fraction) of a ratio's interval over `blocks` blocks of `cycles` cycles, its
    spread known on its blocks less one degrees of freedom and those a moderating prior lends
    (harness.method.moderation)."""
    if blocks < 2 or noise.cycle_sd is None:
        return math.inf
    variance = (noise.restart_sd or 0.0) ** 2 + noise.cycle_sd**2 / cycles
    half = float(stats.t.ppf((1 + confidence) / 2, blocks - 1 + prior_freedom)) * math.sqrt(variance / blocks)
    return math.expm1(half)


def choose_design(
    noise: Noise,
    costs: Costs,
    labels: int,
    servers: int,
    seconds: float,
    slice_seconds: float,
    least: int = 2,
    prior_freedom: float = 0.0,
) -> Design:
    """The cycles per block (1 to MOST_CYCLES) whose blocks, as many as fit in `seconds`, give the narrowest
    expected interval: short blocks cancel more of a restart's variance (and, without a moderating prior, buy
    degrees of freedom), long ones spend less on starts. A design must fit at least `least` blocks; where none
    does, one cycle a block (the most blocks)."""
    found = []
    for cycles in range(1, MOST_CYCLES + 1):
        blocks = int(seconds // costs.block_seconds(labels, servers, cycles, slice_seconds))
        found.append(Design(cycles, blocks, expected_half_width(noise, cycles, blocks, prior_freedom=prior_freedom)))
    fitting = [each for each in found if each.blocks >= least]
    return min(fitting, key=lambda each: (each.half_width, each.cycles)) if fitting else found[0]
