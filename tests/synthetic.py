"""A synthetic machine for the method's tests: known rates under drift, restarts, white noise and stalls, and a
clock that moves as a block on a real machine would spend its time."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from harness.method.noise import Costs


class Machine:
    """A drifting machine: log rate = log(true rate) + walk(t) + a server start's own effect + white noise, and
    now and then a stall that takes a slice down by a third. Time moves one slice at a time."""

    def __init__(
        self, true: dict[str, float], seed: int, *, white: float, walk: float, restart: float, stalls: float = 0.02
    ) -> None:
        self.true, self.rng = true, random.Random(seed)
        self.white, self.walk, self.restart, self.stalls = white, walk, restart, stalls
        self.level = 0.0
        self.starts: dict[str, float] = {}

    def block(self, number: int, plan: Sequence[str]) -> list[float | None]:
        self.starts = {label: self.rng.gauss(0, self.restart) for label in dict.fromkeys(plan)}  # afresh, in plan order
        rates: list[float | None] = []
        for label in plan:
            self.level = 0.97 * self.level + self.rng.gauss(0, self.walk)  # drifts, and comes back
            stall = math.log(2 / 3) if self.rng.random() < self.stalls else 0.0
            noise = self.level + self.starts[label] + self.rng.gauss(0, self.white) + stall
            rates.append(self.true[label.removesuffix("~aa")] * math.exp(noise))
        return rates


class Clock:
    """Time that moves only when a synthetic block spends it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Lab:
    """A machine on a clock: each block spends what one would on a real machine (every label's server started
    and warmed, every slice and what it costs beyond its load), and its slices are kept as a run's files keep
    them: label -> block -> (place in the block, rate)."""

    def __init__(self, machine: Machine, clock: Clock, costs: Costs, slice_seconds: float) -> None:
        self.machine, self.clock, self.costs, self.slice_seconds = machine, clock, costs, slice_seconds
        self.slices: dict[str, dict[int, list[tuple[int, float]]]] = {}

    def block(self, number: int, plan: list[str]) -> list[float | None]:
        servers = len(set(plan))  # every label its own start, the A/A twin too
        costs = self.costs
        self.clock.now += servers * (costs.start + costs.warm) + len(plan) * (self.slice_seconds + costs.slice_overhead)
        rates = self.machine.block(number, plan)
        for place, (label, rate) in enumerate(zip(plan, rates, strict=True)):
            if rate is not None:
                self.slices.setdefault(label, {}).setdefault(number, []).append((place, rate))
        return rates
