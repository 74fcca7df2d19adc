"""A run's comparisons read back from its files, before they are judged: each label's slices and its rate in each
block, the run's rows (a label against its reference) in the groups their variances are moderated within, and the
priors they give (harness.method.moderation); the comparisons with many blocks that validation draws from. Report-side:
reads only the run's files."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.method.comparison_record import ComparisonRecord
from harness.method.moderation import Prior, Row, row_groups, row_priors
from harness.method.validation import LEAST_BLOCKS, ManyBlocks
from harness.method.verdicts import block_rate, paired_ratios
from harness.plan.matrix import cell_name
from harness.results.files import read_json
from harness.results.load import LoadReport
from harness.results.records import (
    CellRecord,
    CellResult,
    Repeat,
    StudyRun,
    load_comparisons,
    load_study,
    read_meta,
)
from harness.results.run_meta import RunMeta


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


def label_windows(
    record: ComparisonRecord, cells: Mapping[str, CellResult], label: str
) -> list[tuple[Repeat, LoadReport]]:
    """A label's slices (or windows) with their reports: the A/A twin's are the reference cell's "control" ones."""
    cell = cells.get(record.reference if label == record.control else label)
    role = "control" if label == record.control else "round"
    windows = [] if cell is None else list(zip(cell.record.repeats, cell.reports, strict=True))
    return [(repeat, report) for repeat, report in windows if repeat.role == role]


def block_costs(record: ComparisonRecord, cells: Mapping[str, CellResult], label: str) -> dict[int, float]:
    """A label's server CPU seconds per OK call in each block: its slices' CPU over their OK calls (blocks whose
    slices were not sampled left out)."""
    sums: dict[int, tuple[float, int]] = {}
    for repeat, report in label_windows(record, cells, label):
        if repeat.block is not None and repeat.resources.sampled and report.ok:
            cpu, calls = sums.get(repeat.block, (0.0, 0))
            sums[repeat.block] = (cpu + repeat.resources.cpu_seconds, calls + report.ok)
    return {block: cpu / calls for block, (cpu, calls) in sums.items() if cpu > 0 and calls}


@dataclass(frozen=True)
class Read:
    """A comparison's windows read back from its run: its record, its cells by label, each label's slices and its
    rate in each block (verdicts.block_rate)."""

    record: ComparisonRecord
    cells: dict[str, CellResult]
    slices: Slices
    rates: dict[str, dict[int, float]]
    # Who ran its windows, as its first window's report tells, where its record does not say (`window_driver`).
    window_driver: str = ""

    @property
    def scenario(self) -> str:
        """The scenario its reference serves (hello in tls/aio-uvloop/c50): the run's rows are moderated by it."""
        cell = self.cells.get(self.record.reference)
        return cell.record.scenario if cell is not None else self.record.topic


def read_comparisons(run: StudyRun) -> list[Read]:
    """Every comparison the run made in rounds, with each window's OK rate read from the cells' reports."""
    found = []
    folder = run.folder
    for record in load_comparisons(folder):
        cells = labelled_cells(run, record)
        slices: Slices = {}
        for label, cell in cells.items():
            for repeat, report in zip(cell.record.repeats, cell.reports, strict=True):
                if repeat.block is None or report.ok_rps <= 0:
                    continue
                owner = record.control if repeat.role == "control" and record.control else label
                place = 0 if repeat.slice is None else repeat.slice
                slices.setdefault(owner, {}).setdefault(repeat.block, []).append((place, report.ok_rps))
        for blocks in slices.values():
            for each in blocks.values():
                each.sort()
        rates = {
            label: {block: block_rate([rate for _, rate in each]) for block, each in blocks.items()}
            for label, blocks in slices.items()
        }
        found.append(Read(record, cells, slices, rates, "" if record.driver else window_driver(folder, cells)))
    return found


GHZ_ONLY = "endReason"  # a key ghz writes in every JSON report and loadgen, held or not, never does


def window_driver(folder: Path, cells: Mapping[str, CellResult]) -> str:
    """Who ran a comparison's windows, as its first stored window report tells: ghz or loadgen; "" where none is
    stored. For records from before 2026-11-29, which do not say (ComparisonRecord.driver)."""
    for cell in cells.values():
        for repeat in cell.record.repeats:
            if repeat.block is not None and repeat.report_file and (folder / repeat.report_file).exists():
                return "ghz" if GHZ_ONLY in read_json(folder / repeat.report_file) else "loadgen"
    return ""


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


def run_priors(run_dir: Path, meta: RunMeta) -> dict[tuple[str, str], Prior]:
    """What every comparison of a run (study, workload) takes from the run's rows (harness.method.moderation)."""
    rows = {
        (study, read.record.workload, label): row
        for study in meta.studies
        for read in read_comparisons(load_study(run_dir, study))
        for label, row in rows_of(study, read).items()
    }
    return {(study, workload): prior for (study, workload, _), prior in row_priors(rows).items()}


def many_blocks(run_dir: Path, least: int = LEAST_BLOCKS, by_cost: bool = False) -> list[ManyBlocks]:
    """A run's comparisons whose reference ran at least `least` blocks, each label's log ratio to the reference by
    block: what harness.method.validation draws from. By cost, the ratio is of calls per server CPU second (the
    reference's CPU per call over the label's), as a row whose driver set the rates reads it."""
    found = []
    for study in read_meta(run_dir).studies:
        for read in read_comparisons(load_study(run_dir, study)):
            figures = (
                {label: block_costs(read.record, read.cells, label) for label in read.rates}
                if by_cost
                else {label: {block: 1 / rate for block, rate in rates.items()} for label, rates in read.rates.items()}
            )
            reference = figures.get(read.record.reference, {})
            if len(reference) < least:
                continue
            logs = {
                label: {
                    block: math.log(reference[block] / each) for block, each in per_block.items() if block in reference
                }
                for label, per_block in figures.items()
                if label != read.record.reference and per_block
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
