"""A run's comparisons as evidence with the runs before it: every row (a label over another, paired by block) pooled
over the runs of one machine class that measured the same comparison the same way (study, workload, design, driver)
with the same code for both labels (harness.results.code: the server module's, the shared server code's, the
scenarios' and the protos'); runs made aside pool too, where their comparison is the same, and those made after a
run pool into its rows when its report is told. Each run gives its moderated estimate (harness.method.moderation);
the runs are combined by random effects with the between-run variance its scenario's rows share
(harness.method.pooling). Report-side: reads only result files and git history.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.analysis.read_back import Read, block_costs, read_comparisons, run_priors
from harness.method.moderation import NO_PRIOR, Prior
from harness.method.pooling import Combined, Estimate, between_runs, estimate_of, pooled_row
from harness.method.verdicts import Method, paired_ratios
from harness.paths import ROOT  # the checkout, whose history tells a run's code
from harness.results.archive import run_files
from harness.results.code import label_code
from harness.results.records import load_study, read_meta
from harness.results.run_meta import RunMeta


@dataclass(frozen=True)
class Reading:
    """One run's reading of a comparison: the run, its day, each label's rate by block, the prior its run's rows
    lend it, the code each label's server ran ("" where unknown: it never pools), and each label's calls per server
    CPU second by block (where its server's CPU was sampled)."""

    run_id: str
    day: str
    rates: Mapping[str, Mapping[int, float]]
    prior: Prior
    codes: Mapping[str, str]
    costs: Mapping[str, Mapping[int, float]] = field(default_factory=dict)

    def by_cost(self) -> Reading:
        """The reading by calls per server CPU second in place of the rates, unmoderated: the run's prior is fitted
        to its rates, and the plain t-interval is the one validated for costs (harness validate)."""
        return replace(self, rates=self.costs, prior=NO_PRIOR)

    def estimate(self, first: str, second: str) -> Estimate | None:
        """first over second in this run: its moderated estimate; None with fewer than two blocks in common."""
        ratios = paired_ratios(self.rates, first, second)
        if len(ratios) < 2:
            return None
        return estimate_of([math.log(each) for each in ratios], self.prior, self.day)


@dataclass(frozen=True)
class Pool:
    """A comparison's readings, the run's own first, then the other runs it may pool with (`pooled_with`); its
    reference; and the between-run variance its scenario's rows share on this machine class, with its degrees of
    freedom."""

    readings: tuple[Reading, ...]
    reference: str
    tau2: float = 0.0
    tau_freedom: float = 0.0

    def matching(self, first: str, second: str) -> list[Estimate]:
        """first over second in the run's own reading, then in every earlier one whose code for both labels is the
        run's; [] where the run itself does not read the row."""
        own, *earlier = self.readings
        estimate = own.estimate(first, second)
        return [] if estimate is None else [estimate, *matching(earlier, own.codes, first, second)]

    def over(self, first: str, second: str) -> Combined | None:
        """first over second over the matching runs (`matching`, harness.method.pooling.pooled_row); None where the
        run itself has no interval."""
        found = self.matching(first, second)
        return pooled_row(found, self.tau2, self.tau_freedom) if found else None


def matching(readings: Sequence[Reading], codes: Mapping[str, str], first: str, second: str) -> list[Estimate]:
    """first over second in each of these readings whose code for both labels is `codes`' (none where a code is
    unknown)."""
    wanted = (codes.get(first, ""), codes.get(second, ""))
    if not all(wanted):
        return []
    return [
        estimate
        for reading in readings
        if (reading.codes.get(first), reading.codes.get(second)) == wanted
        and (estimate := reading.estimate(first, second)) is not None
    ]


def method_of(method: Method, driver: str) -> tuple[str, ...]:
    """How a comparison was measured, as far as runs must agree to pool: its design, who ran its slices, and who ran
    its windows (ghz or loadgen)."""
    return (method.design, method.slicer, driver)


def driver_of(read: Read, meta: RunMeta, study: str) -> str:
    """Who ran a comparison's windows: as its record says; in a record from before records said, as its first
    window's report tells (`readings.window_driver`), else the study's driver."""
    if read.record.driver:
        return read.record.driver
    entry = meta.studies.get(study)
    studied = str((entry.matrix.get("driver") if entry else None) or "ghz")
    return read.window_driver or studied


def reading_of(study: str, read: Read, meta: RunMeta, prior: Prior, root: Path) -> Reading:
    """A comparison of a run as a reading: each label's code from its cell's server."""
    codes = {label: label_code(meta, cell.record.server, root) for label, cell in read.cells.items()}
    if read.record.control:
        codes[read.record.control] = codes.get(read.record.reference, "")
    day = meta.date[:10]
    costs = {
        label: {block: 1 / cost for block, cost in block_costs(read.record, read.cells, label).items()}
        for label in read.rates
    }
    return Reading(meta.run_id, day, read.rates, prior, codes, costs)


# A run's comparisons as readings, each with how it was measured (`method_of`), by (study, workload).
Readings = dict[tuple[str, str], tuple[Reading, tuple[str, ...]]]


@functools.lru_cache(maxsize=256)
def _run_readings(
    run_dir: Path, stamp: tuple[int, ...], root: Path
) -> dict[tuple[str, str], tuple[Reading, tuple[str, ...]]]:
    """A finished run's comparisons as readings, with how each was measured, by (study, workload); remembered
    while its files stand as they are (`stamp`)."""
    meta = read_meta(run_dir)
    priors = run_priors(run_dir, meta)
    found = {}
    for study in meta.studies:
        for read in read_comparisons(load_study(run_dir, study)):
            key = (study, read.record.workload)
            reading = reading_of(study, read, meta, priors.get(key, NO_PRIOR), root)
            found[key] = (reading, method_of(read.record.method, driver_of(read, meta, study)))
    return found


def stamp_of(run_dir: Path) -> tuple[int, ...]:
    """What changes when a run's result files are rewritten: the times its run.json and comparison records were
    written."""
    files = [run_dir / "run.json", *sorted(run_dir.glob("*/comparisons/*.json"))]
    return tuple(path.stat().st_mtime_ns for path in files if path.exists())


def run_readings(run_dir: Path, root: Path = ROOT) -> Readings:
    """`_run_readings` for a run as its files stand now."""
    return _run_readings(run_dir, stamp_of(run_dir), root)


def earlier_runs(run_dir: Path, meta: RunMeta) -> list[Path]:
    """The runs beside this one, made before it on the same machine class, newest first."""
    here = meta.cpu_class
    found = []
    for other in reversed(run_files(run_dir.parent)):
        if other.parent.name >= run_dir.name:
            continue
        if read_meta(other.parent).cpu_class == here:
            found.append(other.parent)
    return found


def pooled_with(run_dir: Path, meta: RunMeta) -> list[Path]:
    """The runs a run's rows pool with when its report is told: the earlier runs of its machine class, and, where it
    decides rows (not made --aside itself), the runs made --aside after it on that class, newest first: a question
    closed by a run aside closes the row of the run before it, not only of the next."""
    here, deciding = meta.cpu_class, not meta.aside
    found = []
    for other in reversed(run_files(run_dir.parent)):
        name = other.parent.name
        theirs = read_meta(other.parent)
        if name == run_dir.name or theirs.cpu_class != here:
            continue
        if name < run_dir.name or (deciding and theirs.aside):
            found.append(other.parent)
    return found


def pools(
    study: str,
    reads: Sequence[Read],
    run_dir: Path,
    meta: RunMeta,
    priors: Mapping[tuple[str, str], Prior],
    root: Path = ROOT,
) -> dict[str, Pool]:
    """Each comparison of a run's study (by workload) with the readings of other runs it may pool with (`pooled_with`),
    and its scenario's between-run variance on this machine class (from every row of the run's comparisons in that
    scenario that pools)."""
    earlier = [run_readings(other, root) for other in pooled_with(run_dir, meta)] if run_dir.parent.exists() else []
    found: dict[str, Pool] = {}
    for read in reads:
        key = (study, read.record.workload)
        own = reading_of(study, read, meta, priors.get(key, NO_PRIOR), root)
        how = method_of(read.record.method, driver_of(read, meta, study))
        peers = [runs[key][0] for runs in earlier if key in runs and runs[key][1] == how]
        found[read.record.workload] = Pool((own, *peers), read.record.reference)
    return shared_spread(found, scenarios_of(reads))


def cost_pools(found: Mapping[str, Pool], reads: Sequence[Read]) -> dict[str, Pool]:
    """The same pools with every reading by calls per server CPU second (`Reading.by_cost`), and the between-run
    variance of their scenario's costs."""
    by_cost = {
        workload: Pool(tuple(each.by_cost() for each in pool.readings), pool.reference)
        for workload, pool in found.items()
    }
    return shared_spread(by_cost, scenarios_of(reads))


def scenarios_of(reads: Sequence[Read]) -> dict[str, str]:
    """Each comparison's scenario, by workload: the rows that share a between-run variance."""
    return {read.record.workload: read.scenario for read in reads}


def shared_spread(found: Mapping[str, Pool], scenario: Mapping[str, str]) -> dict[str, Pool]:
    """Each pool with the between-run variance of its scenario: DerSimonian and Laird's moments over every row (a
    label against its reference) of the scenario's comparisons that ran twice or more with the same code."""
    rows: dict[str, list[list[Estimate]]] = {}
    for workload, pool in found.items():
        for label in pool.readings[0].rates:
            if label != pool.reference and len(estimates := pool.matching(label, pool.reference)) >= 2:
                rows.setdefault(scenario[workload], []).append(estimates)
    spreads = {name: between_runs(each) for name, each in rows.items()}
    return {
        workload: replace(pool, tau2=spread[0], tau_freedom=spread[1])
        for workload, pool in found.items()
        if (spread := spreads.get(scenario[workload], (0.0, 0.0)))
    }


@dataclass(frozen=True)
class Seed:
    """What earlier runs tell a comparison a run is about to measure: their readings of it (newest first), this
    run's code for each of its labels, and the between-run variance its scenario's rows show in them."""

    readings: tuple[Reading, ...]
    codes: Mapping[str, str]
    tau2: float = 0.0
    tau_freedom: float = 0.0

    def earlier(self, first: str, second: str) -> list[Estimate]:
        """first over second in each earlier run that ran this run's code for both (harness.method.contest.Earlier)."""
        return matching(self.readings, self.codes, first, second)


@dataclass(frozen=True)
class Planned:
    """A comparison a run is about to measure, as far as pooling asks: its study, workload and scenario, how it is
    measured (`method_of`), its reference and its A/A twin, and each label's server."""

    study: str
    workload: str
    scenario: str
    how: tuple[str, ...]
    reference: str
    control: str | None
    servers: Mapping[str, str]


def seeds(run_dir: Path, meta: RunMeta, planned: Sequence[Planned], root: Path = ROOT) -> dict[str, Seed]:
    """What the earlier runs of this run's machine class tell each planned comparison (by study/workload): their
    readings of it measured the same way, this run's code for each label, and each scenario's between-run variance
    from the rows two earlier runs or more read with this run's code."""
    earlier = [run_readings(other, root) for other in earlier_runs(run_dir, meta)] if run_dir.parent.exists() else []
    found: dict[str, Seed] = {}
    rows: dict[str, list[list[Estimate]]] = {}
    for each in planned:
        key = (each.study, each.workload)
        codes = {label: label_code(meta, server, root) for label, server in each.servers.items()}
        if each.control:
            codes[each.control] = codes.get(each.reference, "")
        readings = tuple(runs[key][0] for runs in earlier if key in runs and runs[key][1] == each.how)
        seed = Seed(readings, codes)
        found[f"{each.study}/{each.workload}"] = seed
        for label in codes:
            if label != each.reference and len(estimates := seed.earlier(label, each.reference)) >= 2:
                rows.setdefault(f"{each.study}/{each.scenario}", []).append(estimates)
    spreads = {name: between_runs(each) for name, each in rows.items()}
    return {
        name: replace(seed, tau2=spread[0], tau_freedom=spread[1])
        for (name, seed), each in zip(found.items(), planned, strict=True)
        if (spread := spreads.get(f"{each.study}/{each.scenario}", (0.0, 0.0)))
    }
