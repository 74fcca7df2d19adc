"""The connections study's plan: each stack, each way of holding connections, at CLIENTS clients; then the S3
client per process against per request."""

from __future__ import annotations

from harness.plan.matrix import Cell
from harness.plan.options import RunOptions
from harness.plan.servers import S3_PER_REQUEST, server_variant
from harness.run.measure import measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan
from harness.studies.connections import (
    CLIENT_SCENARIOS,
    CLIENTS,
    COMPARED_ON,
    HELLO,
    NAME,
    S3_CLIENTS_LEVEL,
    S3_COMPARED_LEVEL,
    S3_SCENARIOS,
    STACK_NAMES,
    STRATEGIES,
)

S3_WINDOW_SECONDS = 7.0  # with a new S3 client per request, a warm-up and a window take about 10 s


def comparisons(options: RunOptions) -> list[Comparison]:
    """On each chosen stack (by default COMPARED_ON): hello at CLIENTS clients holding a connection each, a pool
    or a new one per call against one shared; and s3-unary with a new S3 client per request against one per
    process."""
    found = []
    for server in options.servers or (server_variant(COMPARED_ON),):
        if server.name.endswith(S3_PER_REQUEST):
            raise ValueError(f"{server.name}: give the stack, not its per-request twin")
        for level in options.levels or (CLIENTS,):
            shared, *ways = [(way, Cell(server, HELLO, level, way)) for way in options.connections or STRATEGIES]
            found.append(Comparison(f"{HELLO.name}/{server.name}/c{level}", shared, tuple(ways)))
        s3 = S3_SCENARIOS[0]
        found.append(
            Comparison(
                f"s3-client/{server.name}/c{S3_COMPARED_LEVEL}",
                ("per-process", Cell(server, s3, S3_COMPARED_LEVEL)),
                (("per-request", Cell(server_variant(server.name + S3_PER_REQUEST), s3, S3_COMPARED_LEVEL)),),
                window_seconds=S3_WINDOW_SECONDS,
            )
        )
    return found


def cells(options: RunOptions) -> list[Cell]:
    """The cells of the comparisons; with --full, client side: each stack, each hello scenario, each strategy at
    CLIENTS (one server start per stack and scenario); then server side: each stack and its per-request twin on
    each S3 scenario."""
    if not options.full:
        return [cell for comparison in comparisons(options) for cell in comparison.cells]
    stacks = options.servers or tuple(server_variant(name) for name in STACK_NAMES)
    found = [
        Cell(server, each, level, connections)
        for each in CLIENT_SCENARIOS
        for server in stacks
        if not server.name.endswith(S3_PER_REQUEST)
        for level in options.levels or (CLIENTS,)
        for connections in options.connections or STRATEGIES
    ]
    twins = [
        twin
        for server in stacks
        for twin in (
            (server,)
            if server.name.endswith(S3_PER_REQUEST)
            else (server, server_variant(server.name + S3_PER_REQUEST))
        )
    ]
    return found + [
        Cell(server, each, level) for each in S3_SCENARIOS for server in twins for level in (S3_CLIENTS_LEVEL,)
    ]


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", STACK_NAMES, "--servers"),
        Axis("connections", STRATEGIES, "--connections"),
    ),
    driver="loadgen",
    repeats=3,
    cells=cells,
    measure=measure_closed_loop,
    comparisons=comparisons,
)
