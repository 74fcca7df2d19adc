"""The protocols study: would REST do, and which call shape should a request/response flow take?

The Info flow (name, age, height -> success; no I/O) as gRPC unary SetInfo calls, as one SetInfos stream
per client worker used in lockstep (send, wait for the reply, send the next), as one stream pipelined (a
sender and a receiver, at most IN_FLIGHT unanswered), and as REST (FastAPI) over HTTP/1.1 with a
connection per worker and over HTTP/2 on one connection; the Connect RPC stacks serve the gRPC shapes and
SetInfo in Connect's own unary protocol with JSON over HTTP/1.1. Client workers: 1, 16 and 50. One driver
(loadgen) for every shape and protocol keeps the client's own cost equal; SetInfo at CROSS_CHECK_WORKERS
is also driven by ghz, and REST over HTTP/2 by h2load, to cross-check it. Each message (a request and its
reply) counts once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.drivers.loadgen import HTTP_SHAPES, IN_FLIGHT, INFO_SHAPES
from harness.matrix import Cell, Scenario, server_variant
from harness.measure import CellContext, measure_against, measure_closed_loop
from harness.options import RunOptions
from harness.processes import Child
from harness.results import CellRecord, StudyRun
from harness.studies.base import Axis, Study
from harness.studies.reading import (
    Measured,
    busiest_driver,
    cross_check_pairs,
    cross_check_sentence,
    cross_checked_targets,
    driver_cross_check_table,
    failed_cells,
    failures,
    measured,
    newest_run_section,
    study_readme,
)
from harness.summaries import header, png, row

NAME = "protocols"
GRPC_SERVERS = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy", "connect-hypercorn")
CONNECT_MODULE = "servers.connect"  # a stack that also speaks the Connect protocol
REST_SERVERS = {"rest-h1": "1.1", "rest-h2": "2"}  # variant -> the HTTP version it speaks
GRPC_SHAPES = ("unary", "lockstep", "pipelined")
WORKERS = (1, 16, 50)
CROSS_CHECK_WORKERS = 16
WARMUP_MESSAGES = 500
INFO_REQUEST = {"name": "w0", "age": 30, "height": 170}  # ghz's request; loadgen sends one like it per message
RUN_SECONDS = 2.5  # Info messages are cheap: longer runs for steadier figures

# The Go study this one follows, as the issue summarised it: at 16 client goroutines.
GO_GRPC_OVER_REST = 2.0  # gRPC beat REST (JSON over HTTP/2) by more than this
GO_PIPELINED_OVER_NEXT = 80.0  # pipelined streaming over the next best shape


def info_scenario(shape: str, http: str = "") -> Scenario:
    """The Info flow in one shape; a REST or Connect JSON scenario names its HTTP version."""
    name = f"info-{shape}-h{http.split('.')[0]}" if shape in HTTP_SHAPES else f"info-{shape}"
    data: dict[str, object] = {"shape": shape, **INFO_REQUEST}
    if shape == "pipelined":
        data["in_flight"] = IN_FLIGHT
    if shape in HTTP_SHAPES:
        data["http"] = http
    described = {
        "unary": "SetInfo calls",
        "lockstep": "a SetInfos stream per worker, in lockstep",
        "pipelined": f"a SetInfos stream per worker, pipelined ({IN_FLIGHT} in flight at most)",
        "rest": f"POST /v1/info (JSON) over HTTP/{http}",
        "connect": f"SetInfo in Connect's unary protocol, JSON over HTTP/{http}",
    }[shape]
    return Scenario(name, INFO_SHAPES[shape], data, described, WARMUP_MESSAGES, run_seconds=RUN_SECONDS)


GRPC_SCENARIOS = tuple(info_scenario(shape) for shape in GRPC_SHAPES)
REST_SCENARIOS = {server: info_scenario("rest", http) for server, http in REST_SERVERS.items()}
CONNECT_JSON = info_scenario("connect", "1.1")
REST_H2 = REST_SCENARIOS["rest-h2"]
UNARY = GRPC_SCENARIOS[0]
SHAPE_LABELS = (
    {UNARY.name: "unary", GRPC_SCENARIOS[1].name: "lockstep", GRPC_SCENARIOS[2].name: "pipelined"}
    | {each.name: f"REST HTTP/{each.data['http']}" for each in REST_SCENARIOS.values()}
    | {CONNECT_JSON.name: f"Connect JSON HTTP/{CONNECT_JSON.data['http']}"}
)
HTTP_SCENARIOS = {*(each.name for each in REST_SCENARIOS.values()), CONNECT_JSON.name}  # JSON over HTTP


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


# --- reading a run -------------------------------------------------------------------------------------


def rows(run: StudyRun) -> list[tuple[str, str]]:
    """(server, scenario) pairs the run measured: the default servers first, each in the order of shapes."""
    pairs = {(result.record.server, result.record.scenario) for result in run.cells}
    servers = [*GRPC_SERVERS, *REST_SERVERS]
    shapes = list(SHAPE_LABELS)

    def order(pair: tuple[str, str]) -> tuple[int, str, int, str]:
        server, scenario = pair
        known_server, known_shape = server in servers, scenario in shapes
        return (
            servers.index(server) if known_server else len(servers),
            "" if known_server else server,
            shapes.index(scenario) if known_shape else len(shapes),
            "" if known_shape else scenario,
        )

    return sorted(pairs, key=order)


def workers(level: int) -> str:
    return f"{level} worker" + ("" if level == 1 else "s")


def levels_of(run: StudyRun) -> list[int]:
    return sorted({result.record.concurrency for result in run.cells})


def shape_table(run: StudyRun) -> list[str]:
    found = measured(run)
    levels = levels_of(run)
    labels = [f"{workers(level)}: {what}" for level in levels for what in ("msgs/s", "p50 / p99", "server CPU")]
    lines = header([*labels, "driver CPU"], "stack / shape")
    for server, scenario in rows(run):
        values: list[str] = []
        driven = [found.get((scenario, server, level)) for level in levels]
        for each in driven:
            if each is None:
                values += ["—", "—", "—"]
                continue
            p50, p99 = each.report.percentiles.get(50), each.report.percentiles.get(99)
            values += [
                f"{each.report.ok_rps:,.0f}",
                "—" if p50 is None or p99 is None else f"{p50 * 1000:.2f} / {p99 * 1000:.2f} ms",
                f"{each.server_cpu:.0%}",
            ]
        lines.append(row(f"{server} / {SHAPE_LABELS.get(scenario, scenario)}", [*values, busiest_driver(run, driven)]))
    return lines


def best(run: StudyRun, level: int, scenarios: Sequence[str]) -> tuple[str, str, float] | None:
    """(server, shape, msgs/s) of the fastest of these scenarios at a level, on any server."""
    found = measured(run)
    candidates = [
        (server, SHAPE_LABELS.get(scenario, scenario), each.report.ok_rps)
        for (scenario, server, at), each in found.items()
        if at == level and scenario in scenarios
    ]
    return max(candidates, key=lambda each: each[2]) if candidates else None


def cross_check_runs(run: StudyRun) -> dict[str, tuple[Measured, Measured]]:
    """server -> (loadgen's, ghz's) median run of SetInfo at the cross-check level."""
    return cross_check_pairs(run, UNARY.name, CROSS_CHECK_WORKERS, GRPC_SERVERS)


def cross_check_table(run: StudyRun) -> list[str]:
    return driver_cross_check_table(run, cross_check_runs(run), "msgs/s")


def h2load_runs(run: StudyRun) -> dict[str, tuple[Measured, Measured]]:
    """rest-h2 -> (loadgen's, h2load's) median run of REST over HTTP/2 at the cross-check level."""
    return cross_check_pairs(run, REST_H2.name, CROSS_CHECK_WORKERS, tuple(REST_SERVERS), "h2load")


def chart(run: StudyRun) -> bytes:
    """Messages per second against client workers, one line per stack and shape."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = measured(run)
    levels = levels_of(run)
    figure, axes = plt.subplots(figsize=(8, 5))
    for server, scenario in rows(run):
        points = [(level, found[key].report.ok_rps) for level in levels if (key := (scenario, server, level)) in found]
        if points:
            style = "--" if scenario in HTTP_SCENARIOS else "-"
            label = f"{server} / {SHAPE_LABELS.get(scenario, scenario)}"
            axes.plot(*zip(*points, strict=True), style, marker="o", label=label)
    axes.set_xlabel("client workers")
    axes.set_ylabel("OK messages/s")
    axes.set_yscale("log")
    axes.set_xticks(levels)
    axes.legend(fontsize=7, ncol=2)
    axes.grid(True, alpha=0.3)
    return png(figure, f"Info flow by call shape: {run.cpu_model}")


def tables(run: StudyRun) -> list[str]:
    lines = [
        "### Messages per second by call shape",
        "",
        f"![call shapes]({NAME}/charts/shapes.png)",
        "",
        "One message is a request and its reply; its latency runs from sending the request to receiving its "
        f"reply. Pipelined streams keep at most {IN_FLIGHT} requests unanswered. Server CPU is a share of one "
        "core; driver CPU the highest share of the CPUs the driver had, over the row's runs.",
        "",
        *shape_table(run),
        "",
        f"Cross-check of our driver: SetInfo at {CROSS_CHECK_WORKERS} workers by loadgen and by ghz on the same "
        "server start, taking turns.",
        "",
        *cross_check_table(run),
        "",
    ]
    if rest_pairs := h2load_runs(run):
        lines += [
            f"REST over HTTP/2 at {CROSS_CHECK_WORKERS} workers by loadgen and by h2load (one connection, "
            f"{CROSS_CHECK_WORKERS} concurrent streams), taking turns.",
            "",
            *driver_cross_check_table(run, rest_pairs, "msgs/s", "h2load"),
            "",
        ]
    lines += failed_cells(run)
    return lines


def render(run: StudyRun) -> dict[str, bytes]:
    return {"README.md": study_readme(NAME, f"# Protocols: {run.title}", tables(run)), "charts/shapes.png": chart(run)}


def section(runs: Sequence[StudyRun]) -> str:
    return newest_run_section(runs, tables, "our Go driver (`loadgen/`)")


def answer(runs: Sequence[StudyRun]) -> str:
    run = runs[0]
    level = CROSS_CHECK_WORKERS if CROSS_CHECK_WORKERS in levels_of(run) else max(levels_of(run), default=0)
    rest = best(run, level, [each.name for each in REST_SCENARIOS.values()])
    unary = best(run, level, [UNARY.name])
    streams = best(run, level, [GRPC_SCENARIOS[1].name])
    pipelined = best(run, level, [GRPC_SCENARIOS[2].name])
    parts = []
    if rest and unary:
        parts.append(
            f"**Would REST do?** At {level} client workers the best gRPC unary stack ({unary[0]}, {unary[2]:,.0f} "
            f"msgs/s) runs {unary[2] / rest[2]:.2f}x the best REST server ({rest[0]}, {rest[1]}, "
            f"{rest[2]:,.0f} msgs/s) (the Go study: gRPC more than {GO_GRPC_OVER_REST:g}x REST at 16)."
        )
    connect, rest_h1 = best(run, level, [CONNECT_JSON.name]), best(run, level, [REST_SCENARIOS["rest-h1"].name])
    if connect and rest_h1:
        parts.append(
            f"Connect's own protocol, JSON over HTTP/1.1 ({connect[0]}, {connect[2]:,.0f} msgs/s), runs "
            f"{connect[2] / rest_h1[2]:.2f}x FastAPI's REST over HTTP/1.1 ({rest_h1[2]:,.0f} msgs/s)."
        )
    if unary and streams and pipelined:
        next_best = max(unary[2], streams[2])
        parts.append(
            f"**Which shape?** A stream in lockstep ({streams[0]}) runs {streams[2] / unary[2]:.2f}x unary calls; "
            f"pipelined ({pipelined[0]}, {pipelined[2]:,.0f} msgs/s) runs {pipelined[2] / next_best:.1f}x the next "
            f"best shape (the Go study: {GO_PIPELINED_OVER_NEXT:g}x at 16)."
        )
    parts += _why(run, level)
    checked = cross_check_sentence(run, cross_check_runs(run), f"SetInfo at {CROSS_CHECK_WORKERS} workers")
    if checked:
        parts.append(checked)
    rest_checked = cross_check_sentence(
        run, h2load_runs(run), f"REST over HTTP/2 at {CROSS_CHECK_WORKERS} workers", "h2load"
    )
    if rest_checked:
        parts.append(rest_checked)
    failed = failures(run)
    if failed:
        parts.append(f"{len(failed)} cells failed (listed under the tables).")
    return " ".join(parts) if parts else "No cell of this study finished in the newest run."


def _why(run: StudyRun, level: int) -> list[str]:
    """What bounds the shapes at a level (the server's busy share), and what a thread pool does to streams
    that outnumber its workers."""
    found = measured(run)
    busy = [each.server_cpu for (_, _, at), each in found.items() if at == level]
    parts = []
    if busy:
        parts.append(
            f"At {level} workers every cell kept the server's core {min(busy):.0%} to {max(busy):.0%} busy: in "
            "Python the server's cost per message bounds each shape, where in Go the round trip did."
        )
    pipelined = GRPC_SCENARIOS[2].name  # in lockstep a waiting stream holds one message; pipelined, up to 100
    for server in GRPC_SERVERS:
        slots = server_variant(server).slots
        over = [at for at in levels_of(run) if slots is not None and at > slots]
        alone = found.get((pipelined, server, min(levels_of(run), default=0)))
        crowded = [found.get((pipelined, server, at)) for at in over]
        if not over or alone is None or None in crowded or 99 not in alone.report.percentiles:
            continue
        worst = max((each.report.percentiles.get(99, 0.0) for each in crowded if each is not None), default=0.0)
        parts.append(
            f"{server} holds one of its {slots} worker threads per open stream: with {', '.join(map(str, over))} "
            f"pipelined streams, the streams beyond {slots} waited for a worker, and p99 per message rose to "
            f"{worst * 1000:,.0f} ms from {alone.report.percentiles[99] * 1000:.1f} ms with one."
        )
    return parts


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Any]:
    """Our driver within 10% of ghz on SetInfo and of h2load on REST over HTTP/2; no failed cell."""
    checks = {"ghz": cross_check_runs(run), "h2load": h2load_runs(run)}
    return cross_checked_targets(run, checks, wall_seconds, full_matrix)


PROTOCOLS = Study(
    name=NAME,
    question="Would REST do, and which call shape should a request/response flow take?",
    follows="a public Go study: gRPC unary, a stream in lockstep, a pipelined stream and REST JSON over HTTP/2",
    axes=(
        Axis("server", (*GRPC_SERVERS, *REST_SERVERS), "--servers"),
        Axis("workers", tuple(map(str, WORKERS)), "--concurrency"),
    ),
    driver="loadgen",
    repeats=3,
    cells=cells,
    measure=measure,
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    default=False,  # run it with --study protocols
)
