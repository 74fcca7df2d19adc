"""The pilot measured: sync-w10 against an independent start of itself (an A/A comparison) in blocks, for a short
while at the start of a run, or alone (`python -m harness noise`), into <run>/pilot/; and each comparison's method
fitted to what it found (harness.method.pilot)."""

from __future__ import annotations

import os
import random
import tempfile
import time
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from harness.analysis.judging import Judged, judged_comparisons
from harness.method.noise import Costs
from harness.method.pilot import (
    DRIVER,
    LEVEL,
    NAME,
    SCENARIO,
    SERVER,
    Pilot,
    one_server_drift,
    pilot_method,
)
from harness.method.verdicts import BLOCKS, Method
from harness.plan.matrix import Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.machines import Fingerprint, Machine
from harness.results.records import StudyRun, load_cells
from harness.results.run_context import Environment, Pinning
from harness.results.run_meta import RunMeta, Thresholds
from harness.run.backends import start_backends
from harness.run.blocks import RunProgress, StudyEnvironment, measure_comparison, server_of
from harness.run.drivers.registry import DRIVERS
from harness.run.machine import fingerprint
from harness.run.measure import CellContext
from harness.run.planning import Comparison
from harness.run.processes import off_cpus
from harness.run.provenance import cpu_model
from harness.run.tools import ensure_tool


def pilot_comparison() -> Comparison:
    """The A/A the pilot measures: a stock workload's reference against an independent start of itself."""
    cell = Cell(server_variant(SERVER), scenario(SCENARIO), LEVEL)
    return Comparison(f"{NAME}/{SCENARIO}/c{LEVEL}", (SERVER, cell), (), controlled=True)


def read_pilot(where: StudyEnvironment, meta: RunMeta, method: Method, seconds: float) -> Pilot:
    """The pilot's findings, read back from its files."""
    directory = where.run_dir / NAME
    return pilot_of(judged_comparisons(StudyRun(NAME, where.run_dir, meta, load_cells(directory)))[0], method, seconds)


def pilot_of(judged: Judged, method: Method, seconds: float) -> Pilot:
    """What the pilot's A/A comparison tells of the machine: its noise, its costs, one server's drift."""
    control = judged.control
    reference = judged.slices.get(judged.record.reference, {})
    twin = judged.slices.get(judged.record.control or "", {})
    step = method.slice_seconds + Costs(**judged.record.costs).slice_overhead if judged.record.costs else 1.0
    return Pilot(
        judged.record.workload,
        method.design,
        seconds,
        len(judged.record.orders),
        method.slice_seconds,
        judged.noise,
        Costs(**judged.record.costs),
        one_server_drift(reference, twin, step),
        None if control is None else control.ratio,
        method.slicer,
    )


def run_pilot(
    where: StudyEnvironment, meta: RunMeta, method: Method, seconds: float, seed: int, progress: RunProgress
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
        meta = RunMeta(
            "noise",
            "",
            Environment(cpu_model(), os.cpu_count() or 1),
            {},
            Pinning(list(options.server_cpus), list(options.other_cpus)),
            Thresholds(),
            {},
            machine=Machine(Fingerprint(**fingerprint())),
        )
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
