"""A run's comparisons in rounds read back and judged: each with its cells by label, its windows, pooled
latency, its verdicts, and one label over another. Report-side: reads only the run's files."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.analysis.evidence import Pool, cost_pools, pools, stamp_of
from harness.analysis.read_back import Read, block_costs, label_windows, read_comparisons, run_priors
from harness.method.comparison_record import ComparisonRecord
from harness.method.moderation import NO_PRIOR, Prior, Row, priors, row_groups
from harness.method.noise import Noise, components
from harness.method.pooling import Combined
from harness.method.selection import Difference, Selection, difference_of, select
from harness.method.verdicts import BLOCKS, Interval, Outcome, interval, judge, paired_ratios, verdict
from harness.results.calibration import load_calibration
from harness.results.histogram import Latencies
from harness.results.load import LoadReport
from harness.results.records import (
    CellResult,
    Repeat,
    StudyRun,
    load_study,
    read_meta,
)


@dataclass(frozen=True)
class Judged:
    """A comparison of a run, judged: its record, each label's OK rate by round, and every outcome."""

    study: str
    record: ComparisonRecord
    rates: dict[str, dict[int, float]]  # label -> block -> its rate in the block (verdicts.block_rate)
    outcomes: list[Outcome]
    cells: dict[str, CellResult]  # label -> its cell (the A/A twin's windows are in the reference's)
    slices: dict[str, dict[int, list[tuple[int, float]]]] = field(default_factory=dict)  # (place, rate) in order
    prior: Prior = NO_PRIOR  # what its run's rows give its intervals (harness.method.moderation)
    pool: Pool | None = None  # the earlier runs it pools with (harness.analysis.evidence); None: its own alone
    cost_pool: Pool | None = None  # the same by calls per server CPU second
    # The fewest blocks a row of its machine class needs to be trusted, as `harness validate` measured it
    # (harness.results.calibration); None where no count it drew holds.
    least_trusted: int | None = None
    run_seconds: float = 0.0  # how long its whole run took: what one more run of it costs
    # What each label's own rate takes from its run's other labels' spread over blocks (rate_priors); a label not
    # here has its plain t-interval.
    rate_priors: dict[str, Prior] = field(default_factory=dict)

    def trusted_at(self, blocks: int) -> bool:
        """Whether a row resting on this many blocks is trusted by what validation measured."""
        return self.least_trusted is not None and blocks >= self.least_trusted

    def over(self, first: str, second: str) -> Combined | None:
        """first's rate over second's, paired by block in each run, over the runs it pools with (its own first);
        None where this run has fewer than two blocks of both."""
        if self.pool is not None:
            return self.pool.over(first, second)
        ratios = paired_ratios(self.rates, first, second)
        if len(ratios) < 2:
            return None
        return Combined(interval(ratios, 0.95, self.prior), 1, 1, 0.0, False)

    def cost_over(self, first: str, second: str) -> Combined | None:
        """first's calls per server CPU second over second's (second's CPU per call over first's), paired by block in
        each run, over the runs it pools with (its own first); None where this run has fewer than two blocks of
        both."""
        if self.cost_pool is not None:
            return self.cost_pool.over(first, second)
        found = paired_measure(cpu_per_call(self, second), cpu_per_call(self, first))
        return None if found is None else Combined(found, 1, 1, 0.0, False)

    def paired(self, first: str, second: str) -> Interval | None:
        """first's rate over second's with its 95% interval: pooled over runs where it pools, else this run's
        moderated one; None with fewer than two blocks in common."""
        found = self.over(first, second)
        return None if found is None else found.ratio

    def alone(self, first: str, second: str) -> Interval | None:
        """first's rate over second's in this run alone, with its moderated interval."""
        ratios = paired_ratios(self.rates, first, second)
        return interval(ratios, 0.95, self.prior) if len(ratios) >= 2 else None

    @property
    def noise(self) -> Noise:
        """Where the comparison's noise lived: slices, cycles, blocks (harness.method.noise)."""
        cycles = self.record.method.cycles if self.record.method.design == BLOCKS else 1
        return components(self.slices, self.record.reference, cycles, self.record.method.mirrored)

    def outcome(self, label: str) -> Outcome | None:
        return next((each for each in self.outcomes if each.alternative == label), None)

    @property
    def control(self) -> Outcome | None:
        return self.outcome(control) if (control := self.record.control) else None

    @property
    def standing(self) -> list[str]:
        """The reference and the alternatives (not the twin), fastest first by their ratio to the reference (pooled
        over runs where it pools; the reference's is 1)."""
        labels = [self.record.reference, *self.record.alternatives]
        ratio = {each.alternative: each.ratio.value for each in self.outcomes} | {self.record.reference: 1.0}
        return sorted((label for label in labels if label in ratio), key=lambda label: -ratio[label])

    @property
    def ranked(self) -> list[tuple[str, Interval]]:
        """The reference and the alternatives (not the twin), fastest first by their own geometric mean rate."""
        labels = [self.record.reference, *self.record.alternatives]
        owned = [(label, interval(list(found.values()))) for label in labels if (found := self.rates.get(label))]
        return sorted(owned, key=lambda pair: -pair[1].value)


def windows_of(judged: Judged, label: str) -> list[tuple[Repeat, LoadReport]]:
    """A label's slices (or windows) with their reports: the A/A twin's are the reference cell's "control" ones."""
    return label_windows(judged.record, judged.cells, label)


def pooled_latency(windows: Sequence[tuple[Repeat, LoadReport]], p: float) -> float | None:
    """The latency at percentile p (seconds) of every OK call of these windows, pooled; None without histograms."""
    histograms = [report.histogram for _, report in windows]
    if not histograms or not all(histograms):
        return None
    found = Latencies(histograms)
    return found.percentile(p) if found.count else None


@dataclass(frozen=True)
class Absolute:
    """A label's own figures in a comparison, as its run's machine gave them: its OK calls/s over its blocks (the
    geometric mean, with its 95% interval), and its p50 and p99 in seconds (every OK call of its slices pooled; None
    without histograms), and its p99 over blocks (each block's slices pooled; the geometric mean with its 95%
    interval; None with fewer than two blocks' histograms)."""

    rate: Interval
    blocks: int
    p50: float | None
    p99: float | None
    p99_blocks: Interval | None = None


def absolute(judged: Judged, label: str) -> Absolute | None:
    """A label's own rate and latency in a judged comparison; None where it ran no block."""
    found = judged.rates.get(label)
    if not found:
        return None
    windows = windows_of(judged, label)
    by_block: dict[int, list[tuple[Repeat, LoadReport]]] = {}
    for repeat, report in windows:
        if repeat.block is not None:
            by_block.setdefault(repeat.block, []).append((repeat, report))
    tails = [found_p99 for each in by_block.values() if (found_p99 := pooled_latency(each, 99))]
    return Absolute(
        interval(list(found.values()), 0.95, judged.rate_priors.get(label, NO_PRIOR)),
        len(found),
        pooled_latency(windows, 50),
        pooled_latency(windows, 99),
        interval(tails) if len(tails) >= 2 else None,
    )


def without_controls(result: CellResult) -> CellResult:
    """A cell without the A/A twin's windows (which stand in the reference's cell): the reference's own."""
    kept = [
        (repeat, report)
        for repeat, report in zip(result.record.repeats, result.reports, strict=True)
        if repeat.role != "control"
    ]
    record = replace(result.record, repeats=[repeat for repeat, _ in kept])
    return replace(result, record=record, reports=[report for _, report in kept])


# Each run's comparisons are analysed once: every page, table and row of a report that reads a run reads the one
# analysis of it, made the first time (by its study, files, metadata and cells). ANALYSED counts the analyses made,
# by (study, run id), so that a test can see that no reader analysed a run again.
_ANALYSES: dict[tuple[Any, ...], list[Judged]] = {}
ANALYSED: Counter[tuple[str, str]] = Counter()


def forget_analyses() -> None:
    """Begin a report: no analysis made before it is read again (the runs beside a run, or the calibration, may have
    changed), and ANALYSED counts this report's alone."""
    _ANALYSES.clear()
    ANALYSED.clear()


def analyses() -> dict[str, dict[str, list[Judged]]]:
    """The analyses this report has made, by run id and study (harness.analysis.saved writes each run's down)."""
    found: dict[str, dict[str, list[Judged]]] = {}
    for (study, run_dir, *_), judgeds in _ANALYSES.items():
        found.setdefault(run_dir.name, {})[study] = list(judgeds)
    return found


def judged_comparisons(run: StudyRun) -> list[Judged]:
    """Every comparison the run made in rounds, judged with the intervals its run's rows moderate, each row pooled
    with the earlier runs that measured it the same way with the same code (harness.analysis.evidence): the run's
    analysis, made once (`analysed`)."""
    key = (
        run.study,
        run.run_dir,
        stamp_of(run.run_dir),
        json.dumps(run.meta.to_json(), sort_keys=True, default=str),
        tuple(cell.record.key for cell in run.cells),
    )
    if key not in _ANALYSES:
        _ANALYSES[key] = analysed(run)
        ANALYSED[(run.study, run.run_id)] += 1
    return list(_ANALYSES[key])


def analysed(run: StudyRun) -> list[Judged]:
    """The run's comparisons judged: each with its moderated intervals, pooled with the earlier runs it pools with,
    and what it costs; read `judged_comparisons`, which makes this once a run."""
    studied = run.study in run.meta.studies
    priors = run_priors(run.run_dir, run.meta) if studied else {}
    reads = read_comparisons(run)
    found_pools = pools(run.study, reads, run.run_dir, run.meta, priors) if studied else {}
    by_cost = cost_pools(found_pools, reads)
    least = load_calibration(run.run_dir.parents[1]).least_trusted(run.meta.cpu_class)
    by_rate = rate_priors(run.study, reads)
    found = []
    for read in reads:
        record = read.record
        prior = priors.get((run.study, record.workload), NO_PRIOR)
        outcomes = judge(run.study, record.workload, record.reference, read.rates, record.method, prior)
        pool = found_pools.get(record.workload)
        if pool is not None:
            outcomes = [pooled_outcome(each, pool, record.method.tie) for each in outcomes]
        cost_pool = by_cost.get(record.workload)
        found.append(
            Judged(
                run.study,
                record,
                read.rates,
                outcomes,
                read.cells,
                read.slices,
                prior,
                pool,
                cost_pool,
                least,
                run.meta.wall_seconds,
                by_rate.get(record.workload, {}),
            )
        )
    return found


def rate_priors(study: str, reads: Sequence[Read]) -> dict[str, dict[str, Prior]]:
    """Each comparison's labels' priors for their own rates (workload -> label -> prior): a label's log rate over
    blocks is a row, moderated within the study's rows of its scenario as a ratio's is (harness.method.moderation),
    so that two blocks' rate is not given a t-interval of t = 12.7 over one degree of freedom. A block's drift
    moves every label of a comparison alike, so its rows are not independent: the prior's freedom is capped at the
    comparisons' blocks less one."""
    keys: list[tuple[str, str]] = []
    rows: list[Row] = []
    for read in reads:
        for label, by_block in read.rates.items():
            if len(by_block) >= 2 and min(by_block.values()) > 0:
                keys.append((read.record.workload, label))
                logs = tuple(math.log(by_block[block]) for block in sorted(by_block))
                rows.append(Row(row_groups(study, read.scenario), read.record.workload, logs))
    found: dict[str, dict[str, Prior]] = {}
    for (workload, label), prior in zip(keys, priors(rows), strict=True):
        found.setdefault(workload, {})[label] = prior
    return found


def pooled_outcome(outcome: Outcome, pool: Pool, tie: float) -> Outcome:
    """An outcome judged over the runs it pools with, the run's own reading kept beside; as it was where it pools
    with none."""
    found = pool.over(outcome.alternative, outcome.reference)
    if found is None or found.runs < 2:
        return outcome
    return replace(
        outcome,
        ratio=found.ratio,
        verdict=verdict(found.ratio, tie),
        alone=outcome.ratio,
        alone_verdict=outcome.verdict,
        runs=found.runs,
        days=found.days,
        disagree=found.disagree,
    )


def judged_by_workload(run: StudyRun) -> dict[str, Judged]:
    """The run's comparisons in rounds by workload (`judged_comparisons`)."""
    return {judged.record.workload: judged for judged in judged_comparisons(run)}


def run_verdicts(run_dir: Path) -> list[Outcome]:
    """Every outcome of every comparison in rounds that a run holds, study by study."""
    return [
        outcome
        for name in read_meta(run_dir).studies
        for judged in judged_comparisons(load_study(run_dir, name))
        for outcome in judged.outcomes
    ]


def pick_over(judged: Judged, first: str, second: str, tie: float) -> tuple[Interval, str] | None:
    """first's rate over second's, paired by round, with its moderated interval and verdict; None when they share
    too few rounds."""
    found = judged.paired(first, second)
    return None if found is None else (found, verdict(found, tie))


def selection_of(judged: Judged, labels: Sequence[str], delta: float) -> Selection | None:
    """The selection rule over these labels of a comparison (harness.method.selection): the pick by its ratio to the
    reference, each difference paired by block, pooled over runs where it pools; None with fewer than two that
    ran."""
    ratio = {each.alternative: each.ratio.value for each in judged.outcomes} | {judged.record.reference: 1.0}
    standing = {label: math.log(ratio[label]) for label in labels if label in ratio and label in judged.rates}

    def difference(first: str, second: str) -> Difference | None:
        found = judged.paired(first, second)
        return None if found is None else difference_of(found)

    return select(list(standing), standing, difference, delta)


def cpu_per_call(judged: Judged, label: str) -> dict[int, float]:
    """A label's server CPU seconds per OK call in each block (readings.block_costs)."""
    return block_costs(judged.record, judged.cells, label)


def peak_memory(judged: Judged, label: str) -> dict[int, float]:
    """A label's server peak RSS in each block, in bytes: the highest of its slices'."""
    found: dict[int, float] = {}
    for repeat, _ in windows_of(judged, label):
        if repeat.block is not None and repeat.resources.sampled and repeat.resources.peak_rss_bytes > 0:
            found[repeat.block] = max(found.get(repeat.block, 0.0), float(repeat.resources.peak_rss_bytes))
    return found


def paired_measure(first: dict[int, float], second: dict[int, float]) -> Interval | None:
    """first's figure over second's, paired by block (each a server's CPU per call or memory in the blocks both
    ran), with its 95% t-interval over blocks; None with fewer than two."""
    ratios = [first[block] / second[block] for block in sorted(first) if block in second and second[block] > 0]
    return interval(ratios) if len(ratios) >= 2 else None


def mean_cost(judged: Judged, label: str) -> float:
    """A label's server CPU seconds per call over its blocks (their geometric mean; inf where none was sampled)."""
    return block_mean(cpu_per_call(judged, label))


def block_mean(per_block: dict[int, float]) -> float:
    """The geometric mean of a figure over its blocks (inf where there are none)."""
    return math.exp(sum(map(math.log, per_block.values())) / len(per_block)) if per_block else math.inf


def cost_selection(judged: Judged, labels: Sequence[str], delta: float) -> Selection | None:
    """The selection rule over these labels by calls per server CPU second, for a comparison whose rates its driver
    set: the pick serves the most a CPU second, each difference paired by block and pooled over runs where it pools
    (Judged.cost_over), the standing by each one's ratio to the reference; None with fewer than two whose server's
    CPU was sampled."""
    reference = judged.record.reference
    standing = {
        label: math.log(found.ratio.value)
        for label in labels
        if label != reference and (found := judged.cost_over(label, reference))
    }
    if reference in labels and cpu_per_call(judged, reference):
        standing[reference] = 0.0

    def difference(first: str, second: str) -> Difference | None:
        found = judged.cost_over(first, second)
        return None if found is None else difference_of(found.ratio)

    return select(list(standing), standing, difference, delta)
