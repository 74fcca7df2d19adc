"""A comparison as it ran, as its run saves it: who against whom, the seed and method, each block's order, when and
why each alternative stopped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.method.verdicts import Method, control_of


@dataclass(frozen=True)
class Stop:
    """When an alternative stopped being measured, and why: precise, clear, calibrated (an A/A twin), cap, budget,
    failed."""

    block: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"round": self.block, "reason": self.reason}  # the key records have kept since blocks were rounds


@dataclass(frozen=True)
class ComparisonRecord:
    """A comparison as it ran: who against whom, the seed and method, each round's order, when each stopped.
    The rates themselves are the windows' reports, in the cells of the workload (role "round" or "control")."""

    workload: str
    reference: str
    alternatives: tuple[str, ...]
    seed: int
    method: Method
    orders: list[list[str]]
    stopped: dict[str, Stop]
    wall_seconds: float
    # label -> the key of the cell its windows are in (the A/A twin's are in the reference's); runs before
    # comparisons of other things than stacks have none: there a label is a server on the workload.
    cells: dict[str, str] = field(default_factory=dict)
    # Whether the reference also ran as its A/A twin: in one comparison of each study (runs before that: all).
    controlled: bool = True
    # What a block spent besides its slices' load, in seconds (harness.method.noise.Costs; runs before blocks: none).
    costs: dict[str, float] = field(default_factory=dict)
    # Who ran its windows: ghz, or loadgen (held, or its own); "" in runs before 2026-11-29 (evidence.driver_of).
    driver: str = ""

    @property
    def control(self) -> str | None:
        """The A/A twin's label, or None in a comparison without one."""
        return control_of(self.reference) if self.controlled else None

    @property
    def topic(self) -> str:
        """What kind of comparison it is, its workload's first part: `tls` in tls/aio-uvloop/c50."""
        return self.workload.split("/")[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "reference": self.reference,
            "control": self.control,
            "alternatives": list(self.alternatives),
            "seed": self.seed,
            "method": self.method.to_json(),
            "orders": self.orders,
            "stopped": {label: stop.to_json() for label, stop in self.stopped.items()},
            "wall_seconds": self.wall_seconds,
            "cells": self.cells,
            "costs": self.costs,
            **({"driver": self.driver} if self.driver else {}),
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ComparisonRecord:
        return cls(
            str(raw["workload"]),
            str(raw["reference"]),
            tuple(raw["alternatives"]),
            int(raw["seed"]),
            Method.from_json(raw["method"]),
            [list(order) for order in raw["orders"]],
            {label: Stop(stop["round"], stop["reason"]) for label, stop in raw["stopped"].items()},
            float(raw["wall_seconds"]),
            dict(raw.get("cells", {})),
            raw.get("control", control_of(str(raw["reference"]))) is not None,
            dict(raw.get("costs", {})),
            str(raw.get("driver", "")),
        )
