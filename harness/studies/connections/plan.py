"""The connections study's plan: each stack, each way of holding connections, at CLIENTS clients; then the S3
client per process against per request."""

from __future__ import annotations

from harness.matrix import S3_PER_REQUEST, Cell, server_variant
from harness.measure import measure_closed_loop
from harness.options import RunOptions
from harness.studies.connections import (
    CLIENT_SCENARIOS,
    CLIENTS,
    NAME,
    S3_CLIENTS_LEVEL,
    S3_SCENARIOS,
    STACK_NAMES,
    STRATEGIES,
)
from harness.studies.planning import Axis, StudyPlan


def cells(options: RunOptions) -> list[Cell]:
    """Client side: each stack, each hello scenario, each strategy at CLIENTS (one server start per stack and
    scenario); then server side: each stack and its per-request twin on each S3 scenario."""
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
)
