"""The pilot's findings, pure: what an A/A comparison at the start of a run (or `python -m harness noise`) tells of
the machine (where its noise lives, what a start, a warm-up and a slice cost, how far one server's rate drifts in
10 s), and what the run makes of them: its slices' length and each comparison's cycles per block
(harness.method.noise.choose_design). The pilot itself is measured by harness.run.pilot."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.method.noise import Costs, Design, Noise, choose_design, drift
from harness.method.verdicts import BLOCKS, PROCESS, Interval, Method

NAME = "pilot"  # its files: <run>/pilot/
SERVER, SCENARIO, LEVEL, DRIVER = "sync-w10", "hello", 50, "ghz"
CYCLES = 3  # enough cycles a block to tell a cycle's spread from a block's
RUN_SECONDS = 45.0  # a run's pilot
BUDGET_SHARE = 0.05  # at most this share of a run's budget goes to its pilot (which still measures its two blocks)
SLICE_SHARE = 0.2  # a slice lasts at least this many times what it costs beyond its load, over this share
LONGEST_SLICE = 3.0
# The degrees of freedom a run's prior lends a row (harness.method.moderation), as the default runs of 2026-11-26/27
# reached them per scenario (d0 of 4 to 8): with them, short blocks no longer pay for their few degrees of freedom.
TYPICAL_PRIOR_FREEDOM = 5.0


def pilot_seconds(budget: float | None) -> float:
    """How long a run's pilot measures: RUN_SECONDS, or its share of a short budget (the pilot still measures the
    two blocks an interval needs, as every comparison does)."""
    return RUN_SECONDS if not budget else min(RUN_SECONDS, BUDGET_SHARE * budget)


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
            "ratio": None if found is None else [found.value, found.low, found.high, found.blocks],
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
        interval in `seconds`, its spread moderated by a prior of TYPICAL_PRIOR_FREEDOM degrees of freedom."""
        return choose_design(
            self.noise,
            self.costs,
            labels,
            servers,
            seconds,
            method.slice_seconds,
            method.min_blocks,
            TYPICAL_PRIOR_FREEDOM,
        )


def one_server_drift(
    reference: Mapping[int, Sequence[tuple[int, float]]],
    twin: Mapping[int, Sequence[tuple[int, float]]],
    step: float,
) -> float | None:
    """How far one server's log rate drifts over 10 s, from the pilot's slices (block -> (place, rate)) of the
    reference and its twin: both servers' slices of a block are one series of the machine's rate (they are alike),
    `step` seconds apart; the root mean square over blocks of `noise.drift`. None where no block is long enough."""
    series = [
        [math.log(rate) for _, rate in sorted([*reference.get(block, []), *twin.get(block, [])])] for block in reference
    ]
    drifts = [found for each in series if (found := drift(each, step)) is not None]
    return math.sqrt(sum(each**2 for each in drifts) / len(drifts)) if drifts else None


def pilot_method(method: Method) -> Method:
    """What the pilot measures by: in the blocks design, blocks of CYCLES cycles, until its time is up (nothing in
    it is ever precise enough to stop)."""
    cycles = CYCLES if method.design == BLOCKS else method.cycles
    return replace(method, min_blocks=2, max_blocks=10_000, precision=1e-9, cycles=cycles)
