"""A run's comparisons in rounds read back and judged: each with its cells by label, its windows, pooled
latency, its verdicts, and one label over another. Report-side: reads only the run's files."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.method.moderation import NO_PRIOR, Prior, Row, row_groups, row_priors
from harness.method.noise import Noise, components
from harness.method.validation import LEAST_BLOCKS, ManyBlocks
from harness.method.verdicts import (
    BLOCKS,
    ComparisonRecord,
    Interval,
    Outcome,
    block_rate,
    interval,
    judge,
    paired_ratios,
    verdict,
)
from harness.plan.matrix import cell_name
from harness.results.files import read_json
from harness.results.records import (
    CellRecord,
    CellResult,
    Repeat,
    StudyRun,
    load_comparisons,
    load_study,
    studies_in,
    study_dir,
)
from harness.run.drivers.histogram import Latencies
from harness.run.drivers.report import LoadReport


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

    def paired(self, first: str, second: str) -> Interval | None:
        """first's rate over second's, paired by block, with its moderated 95% interval; None with fewer than two
        blocks in common."""
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
    def ranked(self) -> list[tuple[str, Interval]]:
        """The reference and the alternatives (not the twin), fastest first by their own geometric mean rate."""
        labels = [self.record.reference, *self.record.alternatives]
        owned = [(label, interval(list(found.values()))) for label in labels if (found := self.rates.get(label))]
        return sorted(owned, key=lambda pair: -pair[1].value)


def windows_of(judged: Judged, label: str) -> list[tuple[Repeat, LoadReport]]:
    """A label's slices (or windows) with their reports: the A/A twin's are the reference cell's "control" ones."""
    record = judged.record
    cell = judged.cells.get(record.reference if label == record.control else label)
    role = "control" if label == record.control else "round"
    windows = [] if cell is None else list(zip(cell.record.repeats, cell.reports, strict=True))
    return [(repeat, report) for repeat, report in windows if repeat.role == role]


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
    without histograms)."""

    rate: Interval
    blocks: int
    p50: float | None
    p99: float | None


def absolute(judged: Judged, label: str) -> Absolute | None:
    """A label's own rate and latency in a judged comparison; None where it ran no block."""
    found = judged.rates.get(label)
    if not found:
        return None
    windows = windows_of(judged, label)
    return Absolute(
        interval(list(found.values())), len(found), pooled_latency(windows, 50), pooled_latency(windows, 99)
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


def workload_of(record: CellRecord) -> str:
    """A cell's workload, as a comparison names it: scenario/c<N>[+connections]."""
    return f"{record.scenario}/{cell_name(record.concurrency, record.connections, record.wire)}"


def labelled_cells(run: StudyRun, record: ComparisonRecord) -> dict[str, CellResult]:
    """label -> its cell of the run: as the record names them, or (runs before it did) the servers' cells of the
    workload."""
    if record.cells:
        by_key = {c.record.key: c for c in run.cells}
        return {label: by_key[key] for label, key in record.cells.items() if key in by_key}
    return {c.record.server: c for c in run.cells if workload_of(c.record) == record.workload}


Slices = dict[str, dict[int, list[tuple[int, float]]]]  # label -> block -> (place, OK rate) of its slices, in order


@dataclass(frozen=True)
class Read:
    """A comparison's windows read back from its run: its record, its cells by label, each label's slices and its
    rate in each block (verdicts.block_rate)."""

    record: ComparisonRecord
    cells: dict[str, CellResult]
    slices: Slices
    rates: dict[str, dict[int, float]]

    @property
    def scenario(self) -> str:
        """The scenario its reference serves (hello in tls/aio-uvloop/c50): the run's rows are moderated by it."""
        cell = self.cells.get(self.record.reference)
        return cell.record.scenario if cell is not None else self.record.topic


def read_comparisons(run: StudyRun) -> list[Read]:
    """Every comparison the run made in rounds, with each window's OK rate read from the cells' reports."""
    found = []
    for record in load_comparisons(study_dir(run.run_dir, run.meta, run.study)):
        cells = labelled_cells(run, record)
        slices: Slices = {}
        for label, cell in cells.items():
            for repeat, report in zip(cell.record.repeats, cell.reports, strict=True):
                if repeat.round is None or report.ok_rps <= 0:
                    continue
                owner = record.control if repeat.role == "control" and record.control else label
                place = 0 if repeat.slice is None else repeat.slice
                slices.setdefault(owner, {}).setdefault(repeat.round, []).append((place, report.ok_rps))
        for blocks in slices.values():
            for each in blocks.values():
                each.sort()
        rates = {
            label: {block: block_rate([rate for _, rate in each]) for block, each in blocks.items()}
            for label, blocks in slices.items()
        }
        found.append(Read(record, cells, slices, rates))
    return found


def rows_of(study: str, read: Read) -> dict[str, Row]:
    """A comparison's rows (each label, the A/A twin too, against its reference), in their groups: the study's
    scenario, the study, the run."""
    groups = row_groups(study, read.scenario)
    comparison = f"{study}/{read.record.workload}"
    found = {}
    for label in read.rates:
        ratios = paired_ratios(read.rates, label, read.record.reference)
        if label != read.record.reference and ratios:
            found[label] = Row(groups, comparison, tuple(math.log(each) for each in ratios))
    return found


def run_priors(run_dir: Path, meta: Mapping[str, Any]) -> dict[tuple[str, str], Prior]:
    """What every comparison of a run (study, workload) takes from the run's rows (harness.method.moderation)."""
    rows = {
        (study, read.record.workload, label): row
        for study in studies_in(dict(meta))
        for read in read_comparisons(load_study(run_dir, study))
        for label, row in rows_of(study, read).items()
    }
    return {(study, workload): prior for (study, workload, _), prior in row_priors(rows).items()}


def many_blocks(run_dir: Path, least: int = LEAST_BLOCKS) -> list[ManyBlocks]:
    """A run's comparisons whose reference ran at least `least` blocks, each label's log ratio to the reference by
    block: what harness.method.validation draws from."""
    meta = read_json(run_dir / "run.json")
    found = []
    for study in studies_in(meta):
        for read in read_comparisons(load_study(run_dir, study)):
            reference = read.rates.get(read.record.reference, {})
            if len(reference) < least:
                continue
            logs = {
                label: {block: math.log(rate / reference[block]) for block, rate in rates.items() if block in reference}
                for label, rates in read.rates.items()
                if label != read.record.reference
            }
            groups = row_groups(study, read.scenario)
            found.append(ManyBlocks(groups, f"{study}/{read.record.workload}", logs, block_noise(read.slices)))
    return found


def block_noise(slices: Slices) -> dict[int, float]:
    """Each block's noise: the variance of every label's slices' log rates about that label's mean in the block,
    pooled over the labels; blocks of one slice a label have none."""
    squares: dict[int, float] = {}
    freedom: dict[int, int] = {}
    for blocks in slices.values():
        for block, found in blocks.items():
            if len(found) >= 2:
                logs = [math.log(rate) for _, rate in found]
                mean = sum(logs) / len(logs)
                squares[block] = squares.get(block, 0.0) + sum((each - mean) ** 2 for each in logs)
                freedom[block] = freedom.get(block, 0) + len(logs) - 1
    return {block: squares[block] / freedom[block] for block in squares if squares[block] > 0}


def judged_comparisons(run: StudyRun) -> list[Judged]:
    """Every comparison the run made in rounds, judged with the intervals its run's rows moderate."""
    priors = run_priors(run.run_dir, run.meta) if run.study in studies_in(run.meta) else {}
    found = []
    for read in read_comparisons(run):
        record = read.record
        prior = priors.get((run.study, record.workload), NO_PRIOR)
        outcomes = judge(run.study, record.workload, record.reference, read.rates, record.method, prior)
        found.append(Judged(run.study, record, read.rates, outcomes, read.cells, read.slices, prior))
    return found


def judged_by_workload(run: StudyRun) -> dict[str, Judged]:
    """The run's comparisons in rounds by workload (`judged_comparisons`)."""
    return {judged.record.workload: judged for judged in judged_comparisons(run)}


def run_verdicts(run_dir: Path) -> list[Outcome]:
    """Every outcome of every comparison in rounds that a run holds, study by study."""
    meta = read_json(run_dir / "run.json")
    return [
        outcome
        for name in studies_in(meta)
        for judged in judged_comparisons(load_study(run_dir, name))
        for outcome in judged.outcomes
    ]


def pick_over(judged: Judged, first: str, second: str, tie: float) -> tuple[Interval, str] | None:
    """first's rate over second's, paired by round, with its moderated interval and verdict; None when they share
    too few rounds."""
    found = judged.paired(first, second)
    return None if found is None else (found, verdict(found, tie))
