"""The stacks study's plan. By default, the brief's matrix in blocks: its four servers and two peers on hello, an S3
listing as one reply and as a stream, and an S3 listing archived to MongoDB, at 2, 10, 25 and 50 clients, each
(scenario, level) a comparison against sync-w10; and whether async pays off when handlers wait. With --full,
every server variant on every scenario at several levels, ghz in closed loop on one connection, and at
CONNECTIONS_LEVEL also on a connection per worker, cell by cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.plan.matrix import (
    CONCURRENCY_LEVELS,
    PER_CALL,
    PER_WORKER,
    REGION,
    REPEATS,
    SCENARIOS,
    SHARED,
    Cell,
    Scenario,
    expand,
    scenario,
)
from harness.plan.options import RunOptions
from harness.plan.servers import SERVER_VARIANTS, ServerVariant, minimal_of, server_variant
from harness.run.measure import measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan, between_servers
from harness.studies.stacks import (
    BRIEF_LEVELS,
    BRIEF_SCENARIOS,
    BRIEF_SERVERS,
    CONNECTIONS_LEVEL,
    DECISIVE,
    DISTANT,
    LOOP_PEER,
    LOOP_SCENARIOS,
    NAME,
    PEERS,
    PYMONGO,
    REFERENCE,
)

BRIEF = tuple(server_variant(name) for name in (*BRIEF_SERVERS, *PEERS))


def comparisons(options: RunOptions) -> list[Comparison]:
    """The brief's matrix: each of its scenarios at each of its levels, its servers and the peers (a sync server
    sized to the load, grpc.aio, Connect RPC) against the reference (sync-w10); hello-wait, whether async pays off
    when handlers wait; and the brief's S3 work with its backends a region away (the PyMongo variants beside Motor
    on s3-mongo there, at its highest level). Hello at its highest level comes first (its slices are short, so it
    holds the study's A/A control; s3-unary a region away holds one for the comparisons whose slices are waves);
    with --floors it also sets each stack against its floor. --servers, --scenarios, --concurrency and --connections
    narrow it."""
    stacks = options.servers or BRIEF
    if len(stacks) < 2:
        raise ValueError("a comparison needs at least two server variants: give --servers A,B or --full")
    reference = next((each for each in stacks if each.name == REFERENCE), stacks[0])
    others = tuple(each for each in stacks if each != reference)
    if options.servers is None:
        others += tuple(server_variant(name) for name in (*PYMONGO, LOOP_PEER))
    chosen = options.scenarios or tuple(scenario(name) for name in (*BRIEF_SCENARIOS, *DECISIVE, *DISTANT))
    names = {each.name for each in chosen}

    def levels(each: Scenario) -> tuple[int, ...]:
        if options.levels:
            return options.levels
        return (DECISIVE[each.name],) if each.name in DECISIVE else DISTANT.get(each.name, BRIEF_LEVELS)

    def compared(each: Scenario, level: int, way: str) -> Comparison:
        top = level == max(levels(each))  # the decision rows read each scenario at its highest level
        # ... and the brief's S3 work a region away where the run measures it there, not on loopback
        read = top and not (each.name in BRIEF_SCENARIOS and each.name + REGION in names)
        stacks_at = [
            *alternatives(others, each, options, read, level),
            *(floors(stacks, each) if top and options.floors else []),
        ]
        own_control = options.servers is None and top and each.name == SLOW_CONTROL
        return replace(between_servers(each, level, reference, stacks_at, way), deciding=top, own_control=own_control)

    found = [
        compared(each, level, way)
        for each in chosen
        for level in levels(each)
        for way in options.connections or (SHARED,)
    ]
    return first_the_control(found)


# The slow comparison (a wave of calls a slice) that holds an A/A control of its own: the region work whose waves are
# the shortest, so that the slow design's calibration costs the default run about half a minute.
SLOW_CONTROL = "s3-unary" + REGION
SIZED, SIZED_ABOVE = "sync-w50", 10  # the sync pool sized to the load, set beside sync-w10 above its ten clients


def alternatives(
    others: Sequence[ServerVariant], each: Scenario, options: RunOptions, read: bool = True, level: int = 50
) -> list[ServerVariant]:
    """The stacks set against the reference on a scenario at a level: those that run it, but sync-w50 at ten
    clients or fewer, where grpcio's pool, which starts a thread only when none is idle, runs as many threads as
    sync-w10 does (sync-w10 is the pool sized to the load there); on the brief's loopback work the brief's stacks
    alone, but where a decision row reads the peers (`read`: hello at its highest level, and the S3 work at its
    highest level when the run does not measure it a region away), so that the default run's two blocks of every
    comparison fit its budget; beyond the brief (hello-wait, the S3 work a region away) not sync-w1 by default, whose
    one thread serves a waiting call at a time (ten calls/s: a slice of a wave would last seconds, to say what its
    one thread already says); PyMongo's async client only a region away, where a team's MongoDB is, at the highest
    level, where the row that asks reads it; grpc.aio on asyncio (LOOP_PEER) on LOOP_SCENARIOS at the highest
    level, for the row that asks whether uvloop pays off."""
    found = [s for s in others if s.runs(each.name)]
    if options.servers is None and each.name in BRIEF_SCENARIOS and not read:
        found = [s for s in found if s.name in BRIEF_SERVERS]
    if options.servers is None and level <= SIZED_ABOVE:
        found = [s for s in found if s.name != SIZED]  # as many threads as clients: sync-w10 is that pool here
    if options.servers is None and (each.name in DECISIVE or each.name in DISTANT):
        found = [s for s in found if s.name != "sync-w1"]
    if options.servers is None and (each.name not in DISTANT or not read):
        found = [s for s in found if s.name not in PYMONGO]
    if options.servers is None and (each.name not in LOOP_SCENARIOS or not read):
        found = [s for s in found if s.name != LOOP_PEER]
    return found


def first_the_control(found: list[Comparison]) -> list[Comparison]:
    """Hello at its highest level first, where present (its slices last a second, so it holds the study's A/A
    control; with --floors it also sets each stack against its floor)."""
    hello = [each for each in found if each.topic == "hello"]
    controls = [max(hello, key=lambda each: each.reference[1].concurrency)] if hello else []
    return controls + [each for each in found if each not in controls]


def floors(stacks: Sequence[ServerVariant], each: Scenario) -> list[ServerVariant]:
    """On hello, each stack's floor (servers/minimal.py) beside it: ours against what the stack costs alone."""
    found = [floor for stack in stacks if (floor := minimal_of(stack)) is not None]
    return [floor for floor in found if floor.runs(each.name)]


def full_comparisons(options: RunOptions) -> list[Comparison]:
    """The whole matrix in blocks (--full): every server variant the machine can run (or those chosen) against
    sync-w10 on every scenario at every level, on one shared connection and at CONNECTIONS_LEVEL also on one per
    client; on hello at its highest level each stack's floor beside it."""
    stacks = options.servers or tuple(each for each in SERVER_VARIANTS if not options.skip_reason(each))
    if len(stacks) < 2:
        raise ValueError("a comparison needs at least two server variants")
    if options.connections and PER_CALL in options.connections:
        raise ValueError("the stacks study cannot open a connection per call: the held loadgen keeps its connections")
    reference = next((each for each in stacks if each.name == REFERENCE), stacks[0])
    others = [each for each in stacks if each != reference]
    levels = options.levels or CONCURRENCY_LEVELS
    found = [
        between_servers(
            each,
            level,
            reference,
            [*(s for s in others if s.runs(each.name)), *(floors(stacks, each) if level == max(levels) else [])],
            way,
        )
        for each in options.scenarios or SCENARIOS
        for level in levels
        for way in options.connections or ((SHARED, PER_WORKER) if level == CONNECTIONS_LEVEL else (SHARED,))
    ]
    return first_the_control(found)


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
    full_comparisons=full_comparisons,
)
