"""The protocols study's plan: every gRPC shape on each gRPC stack, REST on each REST server, at 1, 16 and 50
workers; at 16, SetInfo also by ghz and REST over HTTP/2 also by h2load, taking turns with loadgen."""

from __future__ import annotations

from typing import Any

from harness.matrix import Cell, Scenario, server_variant
from harness.measure import CellContext, measure_against, measure_closed_loop
from harness.options import RunOptions
from harness.processes import Child
from harness.results import CellRecord
from harness.studies.planning import Axis, StudyPlan
from harness.studies.protocols import (
    CONNECT_JSON,
    CONNECT_MODULE,
    CROSS_CHECK_WORKERS,
    GRPC_SCENARIOS,
    GRPC_SERVERS,
    INFO_REQUEST,
    NAME,
    REST_H2,
    REST_SCENARIOS,
    REST_SERVERS,
    UNARY,
    WORKERS,
)


def cells(options: RunOptions) -> list[Cell]:
    """Every gRPC shape on each gRPC stack (and Connect JSON on a Connect stack), REST on each REST server; the
    levels of one scenario in a row."""
    chosen = options.servers or tuple(server_variant(name) for name in (*GRPC_SERVERS, *REST_SERVERS))
    levels = options.levels or WORKERS
    plan: list[tuple[Any, Scenario]] = []
    for server in chosen:
        if server.protocol == "http":
            plan.append((server, REST_SCENARIOS[server.name]))
        else:
            plan += [(server, each) for each in GRPC_SCENARIOS]
            if server.module == CONNECT_MODULE:
                plan.append((server, CONNECT_JSON))
    return [Cell(server, each, level) for server, each in plan for level in levels]


def measure(cell: Cell, target: str, child: Child | None, context: CellContext, probe_file: str) -> CellRecord:
    """Closed loop; at the cross-check level SetInfo also by ghz and REST over HTTP/2 by h2load, the two drivers
    taking turns."""
    if cell.concurrency == CROSS_CHECK_WORKERS and cell.scenario.name == UNARY.name:
        return measure_against("ghz", cell, target, child, context, probe_file, request=dict(INFO_REQUEST))
    if cell.concurrency == CROSS_CHECK_WORKERS and cell.scenario.name == REST_H2.name:
        return measure_against("h2load", cell, target, child, context, probe_file)
    return measure_closed_loop(cell, target, child, context, probe_file)


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", (*GRPC_SERVERS, *REST_SERVERS), "--servers"),
        Axis("workers", tuple(map(str, WORKERS)), "--concurrency"),
    ),
    driver="loadgen",
    repeats=3,
    cells=cells,
    measure=measure,
    checkers=("ghz", "h2load"),
)
