"""The verdict method: alternatives compared in interleaved rounds, each ratio with its 95% interval.

A comparison sets alternatives (stacks, call shapes, ways of connecting) against one reference on one workload.
Every round runs each alternative still measured, the reference and its A/A twin once, in a fresh random order,
each on a fresh server start. An alternative's ratio in a round is its rate over the reference's in the same
round, so drift that hits a whole round cancels. Its verdict comes from the t-interval of the mean log ratio:
a **tie** when the interval lies inside the tie band (1 ± tie), **faster** or **slower** when it lies wholly
above or below it, **unresolved** otherwise. The A/A twin is the reference measured again under another label:
its ratio must come out a tie, or the method cannot be trusted on this machine in this run.

After at least `min_blocks`, an alternative stops being measured once its interval is narrow enough (half-width
at most log(1 + precision)) or lies wholly outside the tie band; the reference and its twin run while anything
does. Pure: the rounds themselves are run by `harness.method.contest`; this module reads only numbers.
(Abedi & Brecht, ICPE 2017, for interleaved rounds; Kalibera & Jones, ISMM 2013, for intervals of ratios;
criterion.rs for a verdict only where the interval clears a noise band.)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from scipy import stats

from harness.method.moderation import NO_PRIOR, Prior, moderated, quantile

FASTER, SLOWER, TIE, UNRESOLVED = "faster", "slower", "tie", "unresolved"
CONTROL_SUFFIX = "~aa"  # the A/A twin's label: the reference's, with this suffix


def control_of(reference: str) -> str:
    """The label of the reference's A/A twin."""
    return reference + CONTROL_SUFFIX


BLOCKS, FRESH = "blocks", "fresh"  # the designs: warm servers alternated in slices, or a fresh start per window
DESIGNS = (BLOCKS, FRESH)
# Who runs a block's slices: a driver process each (ghz or loadgen), or one loadgen held for the block, with its
# connections to every server of the block kept from slice to slice (harness.run.drivers.held).
PROCESS, HELD = "process", "held"
SLICERS = (PROCESS, HELD)


@dataclass(frozen=True)
class Method:
    """The values a comparison is run and judged by; recorded in every run that uses them.

    In the blocks design a round is a block: every label's server started afresh side by side and warmed, then
    `cycles` mirrored cycles of slices of about `slice_seconds` each (every label once in a shuffled order, then
    in the reverse order), a label's rate in the block the geometric mean of its slices'. In the fresh design (runs
    before 2026-11-25, and `--design fresh`) a round is one window per label, each on a fresh start."""

    tie: float = 0.05  # a ratio whose interval lies inside 1 ± tie is a tie
    precision: float = 0.03  # an alternative is known once its interval's half-width is at most log(1 + this)
    confidence: float = 0.95
    min_blocks: int = 5  # blocks (rounds, in the fresh design) before an alternative may stop
    max_blocks: int = 40
    design: str = BLOCKS
    cycles: int = 2  # mirrored cycles of slices per block
    slice_seconds: float = 1.0  # a slice's length, before its workload's own minimum (two waves of calls)
    slicer: str = PROCESS  # who runs the slices (SLICERS); held only where loadgen can drive every cell
    # A cycle runs every label once and then in reverse (A B C C B A), so that a linear drift cancels; a slow
    # workload's cycle runs each label once (its slices last seconds: the order, shuffled every block, spreads the
    # drift over the labels instead).
    mirrored: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.tie < 1 or not 0 < self.precision < 1 or not 0.5 < self.confidence < 1:
            raise ValueError(f"tie and precision in (0, 1), confidence in (0.5, 1): got {self}")
        if not 2 <= self.min_blocks <= self.max_blocks:
            raise ValueError(f"need 2 <= min_blocks <= max_blocks, got {self.min_blocks} and {self.max_blocks}")
        if self.design not in (BLOCKS, FRESH) or self.cycles < 1 or self.slice_seconds <= 0:
            raise ValueError(f"design blocks or fresh, cycles >= 1, slice_seconds > 0: got {self}")
        if self.slicer not in SLICERS or (self.slicer == HELD and self.design != BLOCKS):
            raise ValueError(f"slicer {' or '.join(SLICERS)}, held only in the blocks design: got {self}")

    @property
    def unit(self) -> str:
        """What one round is called in tables: a block, or a round of fresh starts."""
        return "block" if self.design == BLOCKS else "round"

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        return {RECORDED_AS.get(key, key): value for key, value in found.items()}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Method:
        """A recorded method; one recorded before designs were (every run before 2026-11-25) was fresh."""
        named = {READ_AS.get(key, key): value for key, value in raw.items()}
        return cls(**{"design": FRESH, "max_blocks": 20, **named})


# The keys records have kept since blocks were called rounds, by the field each holds.
RECORDED_AS = {"min_blocks": "min_rounds", "max_blocks": "max_rounds"}
READ_AS = {recorded: name for name, recorded in RECORDED_AS.items()}


@dataclass(frozen=True)
class Interval:
    """The geometric mean of paired ratios (or of rates) with its confidence interval, from `rounds` values; the
    degrees of freedom of its spread (None: its own rounds less one; more where the spread was moderated by its
    run's other rows, harness.method.moderation; inf where the spread is taken as known)."""

    value: float
    low: float
    high: float
    blocks: int
    freedom: float | None = None

    @property
    def degrees(self) -> float:
        """The degrees of freedom its spread was estimated on."""
        return float(self.blocks - 1) if self.freedom is None else self.freedom

    @property
    def half_width(self) -> float:
        """Half the interval's width on the log scale (inf with fewer than two rounds)."""
        return (math.log(self.high) - math.log(self.low)) / 2 if self.low > 0 and math.isfinite(self.high) else math.inf


def log_spread(values: Sequence[float]) -> float:
    """The sample standard deviation of log(values) (0 with fewer than two); values must be positive."""
    logs = [math.log(value) for value in values]
    if len(logs) < 2:
        return 0.0
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((each - mean) ** 2 for each in logs) / (len(logs) - 1))


def t_half_width(spread: float, n: int, confidence: float = 0.95) -> float:
    """The half-width (log scale) of a t-interval of the mean of n values scattered by `spread`."""
    return quantile(confidence, n - 1) * spread / math.sqrt(n)


def interval(values: Sequence[float], confidence: float = 0.95, prior: Prior = NO_PRIOR) -> Interval:
    """The t-interval of the mean of log(values), back on the ratio scale; values must be positive. With a prior
    (harness.method.moderation), the spread is the moderated one, on the prior's degrees of freedom and the
    values' own."""
    if not values or min(values) <= 0:
        raise ValueError(f"an interval needs positive values, got {list(values)}")
    logs = [math.log(value) for value in values]
    mean = sum(logs) / len(logs)
    if len(logs) < 2:
        return Interval(math.exp(mean), 0.0, math.inf, len(logs))
    if prior.freedom <= 0:
        half = t_half_width(log_spread(values), len(logs), confidence)
        return Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(logs))
    found = moderated(logs, prior)
    half = quantile(confidence, found.freedom) * found.error
    return Interval(math.exp(mean), math.exp(mean - half), math.exp(mean + half), len(logs), found.freedom)


def unpaired_interval(before: Sequence[float], after: Sequence[float], confidence: float = 0.95) -> Interval:
    """The ratio of after's geometric mean to before's, with Welch's t-interval on the log scale: for rates that
    were not measured in the same rounds (two runs, say). Fewer than two values on a side: no interval."""
    if not before or not after or min(*before, *after) <= 0:
        raise ValueError(f"an interval needs positive values on both sides, got {list(before)} and {list(after)}")
    logs_a, logs_b = [math.log(v) for v in before], [math.log(v) for v in after]
    mean_a, mean_b = sum(logs_a) / len(logs_a), sum(logs_b) / len(logs_b)
    value = math.exp(mean_b - mean_a)
    if len(logs_a) < 2 or len(logs_b) < 2:
        return Interval(value, 0.0, math.inf, min(len(logs_a), len(logs_b)))
    _, variance, freedom = welch(before, after)
    if variance == 0:
        return Interval(value, value, value, min(len(logs_a), len(logs_b)))
    half = float(stats.t.ppf((1 + confidence) / 2, freedom)) * math.sqrt(variance)
    return Interval(value, value * math.exp(-half), value * math.exp(half), min(len(logs_a), len(logs_b)))


def welch(before: Sequence[float], after: Sequence[float]) -> tuple[float, float, float]:
    """Welch's terms for after over before on the log scale, each side two values or more: the difference of the
    means, its variance (the two means' own) and Welch-Satterthwaite's degrees of freedom (inf where both sides
    read no spread)."""
    logs = [[math.log(v) for v in side] for side in (before, after)]
    means = [sum(side) / len(side) for side in logs]
    parts = [sum((x - m) ** 2 for x in side) / (len(side) - 1) / len(side) for side, m in zip(logs, means, strict=True)]
    variance = sum(parts)
    scatter = sum(part**2 / (len(side) - 1) for part, side in zip(parts, logs, strict=True))
    return means[1] - means[0], variance, variance**2 / scatter if scatter > 0 else math.inf


def verdict(ratio: Interval, tie: float) -> str:
    """tie, faster, slower or unresolved, from where the interval lies against the band 1 ± tie."""
    if ratio.low >= 1 - tie and ratio.high <= 1 + tie:
        return TIE
    if ratio.low > 1 + tie:
        return FASTER
    if ratio.high < 1 - tie:
        return SLOWER
    return UNRESOLVED


def known(ratio: Interval, tie: float) -> bool:
    """Whether an estimate (what a thing costs, whatever the cost) is known to the tie band: its interval's
    half-width within it, so that the band is the most it can be off by."""
    return ratio.half_width <= math.log1p(tie)


def more_blocks(ratio: Interval, half_width: float) -> int:
    """The more blocks that bring an interval's half-width (log scale) to `half_width`, at the spread it shows: its
    width falls as one over the root of its blocks."""
    blocks = ratio.blocks
    return max(1, math.ceil(blocks * (ratio.half_width / half_width) ** 2) - blocks)


def block_rate(slices: Sequence[float]) -> float:
    """A label's rate in a block from its slices' rates: their geometric mean. Its slices stand symmetrically
    about the block's middle (mirrored cycles), so a drift linear over the block cancels in its ratio."""
    return statistics.geometric_mean(slices)


def separated(control: Interval) -> bool:
    """An A/A control whose interval excludes 1: the method told identical things apart, so the run's other
    verdicts of that study cannot be trusted."""
    return control.low > 1 or control.high < 1


def noise_floor(control: Interval) -> float:
    """The smallest difference a run could resolve, from its A/A control: the control interval's half-width, as a
    fraction (0.04 is ±4%)."""
    return math.expm1(control.half_width)


PESSIMISM = 0.2  # "precise" judges the half-width by the spread that is exceeded with this probability


def pessimistic_half_width(ratio: Interval) -> float:
    """The half-width with the spread taken at its upper 1 - PESSIMISM bound (chi-square on the spread's degrees of
    freedom: rounds - 1, more where moderated; a spread taken as known is left as it is). Stopping once the interval
    merely looks narrow stops most often where the spread was underestimated by chance, and the intervals so stopped
    cover less than they claim; judged by this bound they do not."""
    freedom = ratio.degrees
    if freedom < 1 or ratio.blocks < 2:
        return math.inf
    if math.isinf(freedom):
        return ratio.half_width
    return ratio.half_width * math.sqrt(freedom / float(stats.chi2.ppf(PESSIMISM, freedom)))


def stop_reason(ratio: Interval, method: Method) -> str:
    """Why an alternative needs no more rounds ("precise", "clear"), or "" while it does."""
    if ratio.blocks < method.min_blocks:
        return ""
    if pessimistic_half_width(ratio) <= math.log(1 + method.precision):
        return "precise"
    if ratio.low > 1 + method.tie or ratio.high < 1 - method.tie:
        return "clear"
    return ""


def twin_stop_reason(ratio: Interval, method: Method) -> str:
    """Why an A/A twin needs no more rounds ("calibrated"), or "" while it does. The twin calibrates the run: it
    is known once its half-width, taken at the pessimistic spread, lies within the tie band (the run can then tell
    a tie, and the noise floor it reports is below the band). A twin apart from its reference is never stopped
    for that: it is a finding to keep measuring, not a result."""
    if ratio.blocks < method.min_blocks or separated(ratio):
        return ""
    return "calibrated" if pessimistic_half_width(ratio) <= math.log(1 + method.tie) else ""


def paired_ratios(rates: Mapping[str, Mapping[int, float]], alternative: str, reference: str) -> list[float]:
    """The alternative's rate over the reference's, round by round, for the rounds both were measured in."""
    mine, theirs = rates.get(alternative, {}), rates.get(reference, {})
    return [mine[block_] / theirs[block_] for block_ in sorted(mine) if block_ in theirs and theirs[block_] > 0]


@dataclass(frozen=True)
class Outcome:
    """One alternative of a comparison, judged: its ratio to the reference with the interval, and its verdict."""

    study: str
    workload: str
    alternative: str
    reference: str
    ratio: Interval
    verdict: str
    own: Interval  # the alternative's own rate (geometric mean over its rounds) with its interval
    control: bool = False  # True for the A/A twin
    # The interval from its own blocks alone (the plain t-interval); `ratio` is moderated where its run gave a prior.
    plain: Interval | None = None
    plain_verdict: str = ""
    prior: Prior = NO_PRIOR
    # Where earlier runs pool with this one (harness.analysis.evidence), `ratio` and `verdict` are the pooled ones and
    # these the run's own, moderated; over how many runs and days, and whether the runs disagree.
    alone: Interval | None = None
    alone_verdict: str = ""
    runs: int = 1
    days: int = 1
    disagree: bool = False

    def to_json(self) -> dict[str, Any]:
        """The shape `python -m harness verdicts --json` prints: the ratio with its interval and verdict (pooled over
        runs where it pools), and beside it the run's plain interval, its moderated one and the pooled one."""
        plain, plain_verdict = (self.plain, self.plain_verdict) if self.plain else (self.ratio, self.verdict)
        own, own_verdict = (self.alone, self.alone_verdict) if self.alone else (self.ratio, self.verdict)
        return {
            "study": self.study,
            "workload": self.workload,
            "alternative": self.alternative,
            "reference": self.reference,
            **interval_json(self.ratio),
            "verdict": self.verdict,
            "rounds": own.blocks,
            "control": self.control,
            "plain": {**interval_json(plain), "verdict": plain_verdict},
            "moderated": {**interval_json(own), "verdict": own_verdict, "prior": self.prior.to_json()},
            "pooled": {
                **interval_json(self.ratio),
                "verdict": self.verdict,
                "runs": self.runs,
                "days": self.days,
                "blocks": self.ratio.blocks,
                "disagree": self.disagree,
            },
        }


def interval_json(found: Interval) -> dict[str, Any]:
    """An interval as the JSON exports give it: the ratio, its bounds (None: unbounded) and its degrees of freedom."""
    return {
        "ratio": round(found.value, 4),
        "low": round(found.low, 4),
        "high": round(found.high, 4) if math.isfinite(found.high) else None,
        "freedom": None if math.isinf(found.degrees) else round(found.degrees, 2),
    }


def judge(
    study: str,
    workload: str,
    reference: str,
    rates: Mapping[str, Mapping[int, float]],
    method: Method,
    prior: Prior = NO_PRIOR,
) -> list[Outcome]:
    """Every alternative of a comparison (the A/A twin last, where there is one) against the reference, from
    rates by round; each interval moderated by the prior its run gave the comparison (harness.method.moderation),
    the plain one kept beside it. The A/A twin is judged the same way: it calibrates the moderated intervals, and
    one that separates under them fails its study."""
    found = []
    control = control_of(reference)
    for label in [each for each in rates if each not in (reference, control)] + [control]:
        ratios = paired_ratios(rates, label, reference)
        if not ratios:
            continue
        ratio = interval(ratios, method.confidence, prior)
        plain = interval(ratios, method.confidence)
        own = interval([rate for rate in rates[label].values() if rate > 0], method.confidence)  # a ratio's own
        found.append(
            Outcome(
                study,
                workload,
                label,
                reference,
                ratio,
                verdict(ratio, method.tie),
                own,
                label == control,
                plain,
                verdict(plain, method.tie),
                prior,
            )
        )
    return found


def spread_between_blocks(rates: Mapping[int, float]) -> float:
    """The standard deviation of an alternative's log rate across rounds: where the variance lives."""
    return log_spread([rate for rate in rates.values() if rate > 0])
