"""The stacks study's plan. By default, the comparisons that decide its questions, each in interleaved rounds:
every single-process stack against sync-w10 on a handler without I/O, one waiting on I/O, and one parsing an
S3 listing. With --full, the original matrix: every server variant on every scenario at several levels, ghz in
closed loop on one connection, and at CONNECTIONS_LEVEL also on a connection per worker, cell by cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.matrix import (
    CONCURRENCY_LEVELS,
    PER_CALL,
    PER_WORKER,
    REPEATS,
    SCENARIOS,
    SERVER_VARIANTS,
    SHARED,
    STACKS,
    Cell,
    Scenario,
    ServerVariant,
    expand,
    minimal_of,
    scenario,
)
from harness.measure import measure_closed_loop
from harness.options import RunOptions
from harness.studies.planning import Axis, Comparison, StudyPlan, between_servers
from harness.studies.stacks import CONNECTIONS_LEVEL, DECISIVE, NAME, REFERENCE

# The stacks a comparison sets against the reference: one process each, one variant per stack: sync-w1's one
# thread says nothing new, and a stack that takes an event loop runs on uvloop (asyncio or uvloop is a setting
# of the stack, not another stack; --servers brings the asyncio variants in). Fewer windows a round leave the
# time budget the rounds the A/A control needs.
COMPARED = tuple(variant for variant in STACKS if variant.name != "sync-w1" and not variant.name.endswith("-asyncio"))


def comparisons(options: RunOptions) -> list[Comparison]:
    """Each decisive workload (or each chosen scenario at each chosen level, on each way of connecting), with the
    chosen stacks (by default every single-process stack) against the reference (sync-w10, or the first)."""
    stacks = options.servers or COMPARED
    if len(stacks) < 2:
        raise ValueError("a comparison needs at least two server variants: give --servers A,B or --full")
    reference = next((each for each in stacks if each.name == REFERENCE), stacks[0])
    others = tuple(each for each in stacks if each != reference)
    chosen = options.scenarios or tuple(scenario(name) for name in DECISIVE)
    return [
        between_servers(each, level, reference, [*(s for s in others if s.runs(each.name)), *floors(stacks, each)], way)
        for each in chosen
        for level in options.levels or (DECISIVE.get(each.name, CONNECTIONS_LEVEL),)
        for way in options.connections or (SHARED,)
    ]


def floors(stacks: Sequence[ServerVariant], each: Scenario) -> list[ServerVariant]:
    """On hello, each stack's floor (servers/minimal.py) beside it: ours against what the stack costs alone."""
    found = [floor for stack in stacks if (floor := minimal_of(stack)) is not None]
    return [floor for floor in found if floor.runs(each.name)]


def cells(options: RunOptions) -> list[Cell]:
    """The cells of the comparisons, or with --full every cell of the matrix."""
    if not options.full:
        return [cell for comparison in comparisons(options) for cell in comparison.cells]
    return matrix_cells(options)


def matrix_cells(options: RunOptions) -> list[Cell]:
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
    comparisons=comparisons,
)
