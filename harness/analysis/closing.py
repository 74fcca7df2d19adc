"""What it would take to close a comparison: the blocks its spread needs for a half-width of the tie band, and
the minutes they would take at its blocks' length."""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.analysis.judging import (
    Judged,
)
from harness.method.moderation import quantile
from harness.method.verdicts import (
    UNRESOLVED,
    log_spread,
    paired_ratios,
)

MOST_BLOCKS_SAID = 200  # what it would take to close a comparison is said up to this many blocks


def blocks_to_close(spread: float, target: float, confidence: float = 0.95, prior_freedom: float = 0.0) -> int:
    """The blocks a ratio whose log ratios scatter by `spread` (sd across blocks) needs for its interval's
    half-width to reach log(1 + target), its spread known on its blocks less one degrees of freedom and the prior's
    (harness.method.moderation); at most MOST_BLOCKS_SAID (then "more")."""
    for blocks in range(2, MOST_BLOCKS_SAID + 1):
        if quantile(confidence, blocks - 1 + prior_freedom) * spread / math.sqrt(blocks) <= math.log1p(target):
            return blocks
    return MOST_BLOCKS_SAID + 1


@dataclass(frozen=True)
class Closing:
    """What it would take to resolve a comparison's widest unresolved label: its spread from block to block so
    far, the blocks that spread needs for a half-width of the tie band, the blocks it has, and the minutes the rest
    would take at its blocks' length."""

    label: str
    spread: float
    needed: int
    has: int
    minutes: float


def closing(judged: Judged) -> Closing | None:
    """The comparison's widest unresolved label (not the A/A twin) and what closing it would take; None where
    none is unresolved."""
    record = judged.record
    open_ = [each for each in judged.outcomes if each.verdict == UNRESOLVED and not each.control]
    if not open_ or not record.orders or record.wall_seconds <= 0:
        return None
    widest = max(open_, key=lambda each: each.ratio.half_width)
    ratios = paired_ratios(judged.rates, widest.alternative, record.reference)
    if len(ratios) < 2:
        return None
    variance, _ = judged.prior.posterior(log_spread(ratios) ** 2, len(ratios) - 1)
    spread = math.sqrt(variance)
    needed = blocks_to_close(spread, record.method.tie, prior_freedom=judged.prior.freedom)
    minutes = record.wall_seconds / len(record.orders) * max(0, needed - len(ratios)) / 60
    return Closing(widest.alternative, spread, needed, len(ratios), minutes)


def to_close(judged: Judged) -> str:
    """What it would take to resolve the comparison's widest unresolved label, in a sentence ("" where none is)."""
    found = closing(judged)
    if found is None:
        return ""
    tie = judged.record.method.tie
    if found.needed > MOST_BLOCKS_SAID:
        return (
            f"Its widest unresolved label, {found.label}, scatters {found.spread:.1%} from block to block: more than "
            f"{MOST_BLOCKS_SAID} blocks would be needed to tell it within ±{tie:.0%}."
        )
    return (
        f"To tell its widest unresolved label, {found.label}, within ±{tie:.0%} at the spread seen so far "
        f"({found.spread:.1%} a block) would take about {found.needed} blocks: {found.needed - found.has} more, "
        f"{found.minutes:.0f} min."
    )
