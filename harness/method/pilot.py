"""The pilot: one server set against an independent start of itself (an A/A comparison) in blocks, for a short
while at the start of a run, or alone (`python -m harness noise`). It measures where this machine's noise lives
(a slice's spread, how neighbouring slices correlate, what a restart adds, how far the rate drifts in 10 s) and
what a start, a warm-up and a slice cost; the run then fits each comparison's cycles per block to them and to
the time the comparison has (harness.method.noise.choose_design)."""

from __future__ import annotations

import math
import os
import random
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.method.blocks import RunProgress, StudyEnvironment, measure_comparison, server_of
from harness.method.noise import Costs, Design, Noise, choose_design, drift
from harness.method.verdicts import BLOCKS, PROCESS, Interval, Method, ratio_text, verdict
from harness.plan.matrix import Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.records import StudyRun, load_cells
from harness.run.backends import start_backends
from harness.run.drivers.registry import DRIVERS
from harness.run.measure import CellContext
from harness.run.processes import off_cpus
from harness.run.tools import ensure_tool
from harness.studies.judging import Judged, judged_comparisons
from harness.studies.planning import Comparison

NAME = "pilot"  # its files: <run>/pilot/
SERVER, SCENARIO, LEVEL, DRIVER = "sync-w10", "hello", 50, "ghz"
CYCLES = 3  # enough cycles a block to tell a cycle's spread from a block's
RUN_SECONDS = 45.0  # a run's pilot
BUDGET_SHARE = 0.05  # at most this share of a run's budget goes to its pilot (which still measures its two blocks)
SLICE_SHARE = 0.2  # a slice lasts at least this many times what it costs beyond its load, over this share
LONGEST_SLICE = 3.0


def pilot_seconds(budget: float | None) -> float:
    """How long a run's pilot measures: RUN_SECONDS, or its share of a short budget (the pilot still measures the
    two blocks an interval needs, as every comparison does)."""
    return RUN_SECONDS if not budget else min(RUN_SECONDS, BUDGET_SHARE * budget)


def pilot_comparison() -> Comparison:
    """The A/A the pilot measures: a stock workload's reference against an independent start of itself."""
    cell = Cell(server_variant(SERVER), scenario(SCENARIO), LEVEL)
    return Comparison(f"{NAME}/{SCENARIO}/c{LEVEL}", (SERVER, cell), (), controlled=True)


@dataclass(frozen=True)
class Pilot:
    """What the pilot found: the noise, the costs, the drift, and the A/A ratio it reached in its time."""

    workload: str
    design: str
    seconds: float
    blocks: int
    slice_seconds: float
    noise: Noise
    costs: Costs
    drift: float | None  # sd of the log rate's change over 10 s on one server
    ratio: Interval | None  # the twin over the reference, with its 95% interval
    slicer: str = PROCESS  # who ran the slices (harness.method.verdicts.SLICERS)

    def to_json(self) -> dict[str, Any]:
        found = self.ratio
        return {
            "workload": self.workload,
            "design": self.design,
            "seconds": round(self.seconds, 1),
            "blocks": self.blocks,
            "slice_seconds": self.slice_seconds,
            "noise": self.noise.to_json(),
            "costs": self.costs.to_json(),
            "drift_10s": None if self.drift is None else round(self.drift, 4),
            "ratio": None if found is None else [found.value, found.low, found.high, found.rounds],
            "slicer": self.slicer,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Pilot:
        found = raw["ratio"]
        return cls(
            raw["workload"],
            raw["design"],
            raw["seconds"],
            raw["blocks"],
            raw["slice_seconds"],
            Noise(**raw["noise"]),
            Costs(**raw["costs"]),
            raw["drift_10s"],
            None if found is None else Interval(*found),
            raw.get("slicer", PROCESS),
        )

    @property
    def driver(self) -> str:
        return DRIVER if self.slicer == PROCESS else "one loadgen a block, its connections held"

    @property
    def slice_for_run(self) -> float:
        """The slice length a run uses: what the pilot used, longer where a slice costs much beyond its load."""
        return round(min(LONGEST_SLICE, max(self.slice_seconds, self.costs.slice_overhead / SLICE_SHARE)), 2)

    def design_for(self, labels: int, servers: int, seconds: float, method: Method) -> Design:
        """The cycles per block that give a comparison of `labels` labels on `servers` starts a block the narrowest
        interval in `seconds`."""
        return choose_design(self.noise, self.costs, labels, servers, seconds, method.slice_seconds, method.min_rounds)

    def summary(self, cpu: str) -> str:
        """What the pilot tells a user about this machine, in a few lines."""
        noise, found = self.noise, self.ratio
        reached = (
            "no interval (fewer than two blocks)"
            if found is None or not math.isfinite(found.high)
            else f"±{math.expm1(found.half_width):.1%} ({ratio_text(found)}, {verdict(found, 0.05)})"
        )
        lines = [
            f"On {cpu}: {self.workload} ({SERVER} against an independent start of itself, {self.driver}), "
            f"{self.design} design: an A/A pair resolved {reached} in {self.seconds / 60:.1f} min "
            f"({self.blocks} {'blocks' if self.design == BLOCKS else 'rounds of fresh starts'}).",
        ]
        if self.drift is not None:
            lines.append(f"The rate drifts about {math.expm1(self.drift):.0%} over 10 s on one server.")
        if said := noise.sentence():
            lines.append(said)
        costs = self.costs
        lines.append(
            f"Costs: a server start {costs.start:.1f} s, a warm-up {costs.warm:.1f} s, "
            + (
                f"a slice {self.slice_seconds:g} s"
                if self.design == BLOCKS
                else "a window (the scenario's run seconds)"
            )
            + f" + {costs.slice_overhead:.2f} s beyond its load."
        )
        if self.design == BLOCKS and noise.cycle_sd is not None:
            method = Method(slice_seconds=self.slice_seconds)
            expected = [
                f"±{design.half_width:.1%} in {minutes} min ({design.blocks} blocks of {design.cycles} cycles)"
                for minutes in (2, 5, 10)
                if math.isfinite((design := self.design_for(2, 2, minutes * 60, method)).half_width)
            ]
            if expected:
                lines.append("Expected for an A/A pair: " + "; ".join(expected) + ".")
        return "\n".join(lines)


def read_pilot(where: StudyEnvironment, meta: dict[str, Any], method: Method, seconds: float) -> Pilot:
    """The pilot's findings, read back from its files."""
    directory = where.run_dir / NAME
    return pilot_of(judged_comparisons(StudyRun(NAME, where.run_dir, meta, load_cells(directory)))[0], method, seconds)


def pilot_of(judged: Judged, method: Method, seconds: float) -> Pilot:
    """What the pilot's A/A comparison tells of the machine: its noise, its costs, one server's drift."""
    control = judged.control
    reference = judged.slices.get(judged.record.reference, {})
    twin = judged.slices.get(judged.record.control or "", {})
    # One server's drift: both servers' slices of a block are one series of the machine's rate (they are alike).
    series = [
        [math.log(rate) for _, rate in sorted([*reference.get(block, []), *twin.get(block, [])])] for block in reference
    ]
    step = method.slice_seconds + Costs(**judged.record.costs).slice_overhead if judged.record.costs else 1.0
    drifts = [found for each in series if (found := drift(each, step)) is not None]
    return Pilot(
        judged.record.workload,
        method.design,
        seconds,
        len(judged.record.orders),
        method.slice_seconds,
        judged.noise,
        Costs(**judged.record.costs),
        math.sqrt(sum(each**2 for each in drifts) / len(drifts)) if drifts else None,
        None if control is None else control.ratio,
        method.slicer,
    )


def pilot_method(method: Method) -> Method:
    """What the pilot measures by: in the blocks design, blocks of CYCLES cycles, until its time is up (nothing in
    it is ever precise enough to stop)."""
    cycles = CYCLES if method.design == BLOCKS else method.cycles
    return replace(method, min_rounds=2, max_rounds=10_000, precision=1e-9, cycles=cycles)


def run_pilot(
    where: StudyEnvironment, meta: dict[str, Any], method: Method, seconds: float, seed: int, progress: RunProgress
) -> Pilot:
    """The A/A comparison for `seconds`, in `method`'s design (in blocks of CYCLES cycles), into <run>/pilot/."""
    driver = DRIVERS[DRIVER]
    context = CellContext(driver, ensure_tool(driver.tool), where.options, 1, where.run_dir / NAME, None, where.wires)
    measuring = pilot_method(method)
    progress.study_started(NAME, 0)
    begun = time.monotonic()
    measure_comparison(pilot_comparison(), where, context, measuring, seed, progress, begun + seconds)
    return read_pilot(where, meta, measuring, time.monotonic() - begun)


def measure_noise(options: RunOptions, minutes: float, progress: RunProgress, slice_seconds: float) -> Pilot:
    """The pilot alone for `minutes`, on the embedded backends (or the environment's), into a scratch directory
    that is gone when it returns: what `python -m harness noise` tells."""
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-noise-")))
        stack.enter_context(off_cpus(options.server_cpus))
        backends = stack.enter_context(start_backends(os.environ))
        where = StudyEnvironment(options, backends.config, None, ensure_tool(DRIVERS[DRIVER].tool), scratch)
        seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**32)
        meta = {"run_id": "noise", "studies": {}}
        method = Method(design=options.design, slice_seconds=slice_seconds, slicer=options.slices_by)
        return run_pilot(where, meta, method, minutes * 60, seed, progress)


def fitted(
    pilot: Pilot | None, comparison: Comparison, method: Method, seconds: float | None, options: RunOptions
) -> Method:
    """The method for one comparison: its cycles per block fitted to the pilot's noise and costs and to the time it
    has (unchanged without a pilot or a budget, and in the fresh design); a slow comparison's, one unmirrored cycle
    (`Comparison.fitted_to`)."""
    if comparison.slow:
        return comparison.fitted_to(method)
    if pilot is None or seconds is None or method.design != BLOCKS or pilot.noise.cycle_sd is None:
        return method
    labels = [label for label, _ in (comparison.reference, *comparison.alternatives)]
    servers = len({server_of(comparison, label, options) for label in labels}) + comparison.controlled
    design = pilot.design_for(len(labels) + comparison.controlled, servers, seconds, method)
    return replace(method, cycles=design.cycles)
