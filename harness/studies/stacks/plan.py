"""The stacks study's plan: every server variant on every scenario at several levels, ghz in closed loop on one
connection, and at CONNECTIONS_LEVEL also on a connection per worker."""

from __future__ import annotations

from dataclasses import replace

from harness.matrix import (
    CONCURRENCY_LEVELS,
    PER_CALL,
    PER_WORKER,
    REPEATS,
    SCENARIOS,
    SERVER_VARIANTS,
    SHARED,
    Cell,
    expand,
)
from harness.measure import measure_closed_loop
from harness.options import RunOptions
from harness.studies.planning import Axis, StudyPlan
from harness.studies.stacks import CONNECTIONS_LEVEL, NAME


def cells(options: RunOptions) -> list[Cell]:
    """Server variants x scenarios x concurrency levels, one scenario at a time, on one shared connection,
    and at CONNECTIONS_LEVEL also on one per worker (right after, on the same server start); --connections
    runs each cell once per way given instead."""
    shared = expand(
        options.servers or SERVER_VARIANTS, options.scenarios or SCENARIOS, options.levels or CONCURRENCY_LEVELS
    )
    if options.connections and PER_CALL in options.connections:
        raise ValueError("the stacks study drives ghz, which keeps its connections: it cannot open one per call")
    found = []
    for cell in shared:
        ways = options.connections or ((SHARED, PER_WORKER) if cell.concurrency == CONNECTIONS_LEVEL else (SHARED,))
        found += [replace(cell, connections=way) for way in ways]
    return found


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", tuple(variant.name for variant in SERVER_VARIANTS), "--servers"),
        Axis("scenario", tuple(each.name for each in SCENARIOS), "--scenarios"),
        Axis("concurrency", tuple(map(str, CONCURRENCY_LEVELS)), "--concurrency"),
    ),
    driver="ghz",
    repeats=REPEATS,
    cells=cells,
    measure=measure_closed_loop,
)
