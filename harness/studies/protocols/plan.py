"""The protocols study's plan: every gRPC shape on each gRPC stack, REST on each REST server, at 1, 16 and 50
workers; at 16, SetInfo also by ghz and REST over HTTP/2 also by h2load, taking turns with loadgen."""

from __future__ import annotations

from typing import Any

from harness.plan.matrix import Cell, Scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.records import CellRecord
from harness.run.measure import CellContext, measure_against, measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan
from harness.run.processes import Child
from harness.studies.protocols import (
    COMPARED_ON,
    CONNECT_JSON,
    CONNECT_JSON_ON,
    CONNECT_MODULE,
    CROSS_CHECK_WORKERS,
    GRPC_SCENARIOS,
    GRPC_SERVERS,
    GRPC_SHAPES,
    INFO_REQUEST,
    NAME,
    REST_H2,
    REST_SCENARIOS,
    REST_SERVERS,
    UNARY,
    WORKERS,
)


def comparisons(options: RunOptions) -> list[Comparison]:
    """At each chosen level (by default CROSS_CHECK_WORKERS): lockstep and pipelined streams on the chosen gRPC
    stack, REST over HTTP/1.1 and HTTP/2, and Connect's JSON, against unary gRPC calls on that stack."""
    grpc = [each for each in options.servers or (server_variant(COMPARED_ON),) if each.protocol != "http"]
    if len(grpc) != 1:
        raise ValueError("the protocols comparison runs the gRPC shapes on one gRPC stack: give one, or --full")
    stack = grpc[0]
    others = [
        (label, server_variant(name), each)
        for label, name, each in (
            *((name, name, REST_SCENARIOS[name]) for name in REST_SERVERS),
            ("connect-json-h1", CONNECT_JSON_ON, CONNECT_JSON),
        )
    ]
    return [
        Comparison(
            f"info/{stack.name}/c{level}",
            ("unary", Cell(stack, UNARY, level)),
            (
                *(
                    (shape, Cell(stack, each, level))
                    for shape, each in zip(GRPC_SHAPES[1:], GRPC_SCENARIOS[1:], strict=True)
                ),
                *((label, Cell(server, each, level)) for label, server, each in others),
            ),
        )
        for level in options.levels or (CROSS_CHECK_WORKERS,)
    ]


def cells(options: RunOptions) -> list[Cell]:
    """The cells of the comparison; with --full, every gRPC shape on each gRPC stack (and Connect JSON on a
    Connect stack), REST on each REST server, the levels of one scenario in a row."""
    if not options.full:
        return [cell for comparison in comparisons(options) for cell in comparison.cells]
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
    comparisons=comparisons,
)
