"""Which one to pick: a certified selection among k candidates, the best or within δ of it.

"Faster only beyond 1.05, a tie only inside [0.95, 1.05]" asks a question that need not finish: for a true ratio at
the band's edge no number of blocks settles it. A team asks something else: which one can I pick without losing
more than δ? Multiple comparisons with the best (Hsu 1984) answer that, with a bounded number of blocks whatever the
truth:

    pick        the candidate with the highest estimate
    bound       L_j = mean(log pick/j) - t(1 - alpha/(k-1), df_j) · se_j      for every rival j (one-sided, Bonferroni)
    certified   min_j L_j >= log(1 - δ): with confidence 1 - alpha the pick is the best or within δ of it
    contenders  the pick and every rival whose upper bound over the pick reaches 1 - δ (Gupta's subset)
    behind      a rival whose upper bound over the pick lies below 1 - δ: it may leave the block order
                (Kim & Nelson 2001's elimination)

Why it holds: let b be the truly best. With probability at least 1 - alpha (Bonferroni over b's k - 1 rivals), every
one-sided bound of b over a rival holds. Then, for a pick p != b, μ_b - μ_p <= (x_b - x_p) + d·se <= d·se since the
pick's estimate is the highest, that is μ_p - μ_b >= L_p: a certified pick loses at most δ, and the true best is
never behind. Each difference comes from the blocks in which both ran (moderated, pooled over runs where they pool:
harness.method.moderation and pooling), so the rule is blind to how the estimate was made. Pure: numbers in, numbers
out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from scipy import stats

from harness.method.moderation import quantile
from harness.method.verdicts import Interval

DELTA = 0.05  # the loss a pick may carry: the tie band
MOST_BLOCKS = 1000  # blocks to certify are said up to this many


@dataclass(frozen=True)
class Difference:
    """An estimate of log(first / second): its mean, its standard error and the degrees of freedom of that error
    (inf: taken as known), and the blocks behind it."""

    mean: float
    error: float
    freedom: float
    blocks: int = 0


def difference_of(found: Interval, confidence: float = 0.95) -> Difference | None:
    """The estimate behind a two-sided interval of a ratio (symmetric on the log scale): its log mean, and its error
    from the half-width over the t quantile on its degrees of freedom; None without a finite interval."""
    if found.value <= 0 or not math.isfinite(found.half_width) or found.degrees <= 0:
        return None
    return Difference(
        math.log(found.value), found.half_width / quantile(confidence, found.degrees), found.degrees, found.blocks
    )


def one_sided(level: float, freedom: float) -> float:
    """Student's t quantile at `level` (the normal's on infinite degrees of freedom)."""
    return float(stats.norm.ppf(level) if math.isinf(freedom) else stats.t.ppf(level, freedom))


@dataclass(frozen=True)
class Bound:
    """The pick over one rival: the estimate and its simultaneous lower and upper bounds (ratio scale; 0 and inf
    where the two have no estimate), and the difference behind them (None: none)."""

    rival: str
    ratio: float
    low: float
    high: float
    difference: Difference | None = None


@dataclass(frozen=True)
class Selection:
    """A pick among candidates: its bound over every rival, the contenders (the pick first), those clearly behind,
    whether the pick is certified, and the δ and confidence it was judged at."""

    pick: str
    bounds: tuple[Bound, ...]
    contenders: tuple[str, ...]
    behind: tuple[str, ...]
    certified: bool
    delta: float
    confidence: float

    @property
    def binding(self) -> Bound | None:
        """The rival that holds the pick's bound lowest (None with no rival)."""
        return min(self.bounds, key=lambda each: each.low, default=None)

    @property
    def lowest(self) -> float:
        """The pick's lowest simultaneous bound over any rival: at least 1 - δ where certified."""
        found = self.binding
        return math.inf if found is None else found.low

    def bound(self, rival: str) -> Bound | None:
        return next((each for each in self.bounds if each.rival == rival), None)


def select(
    candidates: Sequence[str],
    standing: Mapping[str, float],
    difference: Callable[[str, str], Difference | None],
    delta: float = DELTA,
    confidence: float = 0.95,
) -> Selection | None:
    """The candidate with the highest `standing` (its log rate over a common reference, say) as the pick, bounded
    over every other by `difference(pick, rival)` (log pick/rival), simultaneously at `confidence` (Bonferroni over
    the rivals, one-sided); None with fewer than two candidates."""
    if len(candidates) < 2:
        return None
    if not 0 < delta < 1 or not 0.5 < confidence < 1:
        raise ValueError(f"delta in (0, 1), confidence in (0.5, 1): got {delta}, {confidence}")
    pick = max(candidates, key=lambda label: standing.get(label, -math.inf))
    rivals = [label for label in candidates if label != pick]
    level = 1 - (1 - confidence) / len(rivals)
    bounds = []
    for rival in rivals:
        found = difference(pick, rival)
        if found is None or not math.isfinite(found.error) or found.freedom <= 0:
            bounds.append(Bound(rival, math.exp(found.mean) if found else math.nan, 0.0, math.inf, found))
            continue
        half = one_sided(level, found.freedom) * found.error
        bounds.append(
            Bound(rival, math.exp(found.mean), math.exp(found.mean - half), math.exp(found.mean + half), found)
        )
    floor = 1 - delta
    behind = tuple(each.rival for each in bounds if each.low * floor > 1)  # its upper bound over the pick < 1 - δ
    contenders = (pick, *(each.rival for each in bounds if each.rival not in behind))
    certified = all(each.low >= floor for each in bounds)
    return Selection(pick, tuple(bounds), contenders, behind, certified, delta, confidence)


def blocks_to_certify(found: Selection) -> int | None:
    """About how many more blocks (each as the ones so far, every contender in each) would certify the pick, at the
    spread each rival's difference shows: for each rival the n at which its mean less t · s / sqrt(n) reaches
    1 - δ, its mean taken at no less than 0 (the pick is the highest estimate), so that the count is bounded
    whatever the truth; the most over the rivals, less the blocks each has. None where a rival has no estimate yet,
    0 where certified; at most MOST_BLOCKS."""
    if found.certified:
        return 0
    differences = [each.difference for each in found.bounds]
    if not all(each is not None and math.isfinite(each.error) and each.blocks > 0 for each in differences):
        return None
    level = 1 - (1 - found.confidence) / len(found.bounds)
    margin = -math.log(1 - found.delta)
    needed = 0
    for each in differences:
        assert each is not None
        spread = each.error * math.sqrt(each.blocks)  # a block's spread, as the blocks so far show it
        gap = max(each.mean, 0.0) + margin
        lent = each.freedom - (each.blocks - 1)  # what a prior or earlier runs lend its degrees of freedom
        n = each.blocks
        while n < each.blocks + MOST_BLOCKS and one_sided(level, max(1.0, n - 1 + lent)) * spread / math.sqrt(n) > gap:
            n += 1
        needed = max(needed, n - each.blocks)
    return needed
