"""The protocols study's report: messages per second by call shape and protocol, the cross-checks of our
driver, and what bounds each shape."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.decision import NO, NOT_TOLD_YET, YES, Decision
from harness.analysis.judging import Judged
from harness.method.verdicts import FASTER, SLOWER, TIE, UNRESOLVED
from harness.plan.matrix import IN_FLIGHT
from harness.render.decisions import picked
from harness.render.summaries import chart_title
from harness.render.table import Block, Table
from harness.render.vega import Axis, Dash, lines, png
from harness.render.wording import ratio_text
from harness.results.records import StudyRun
from harness.results.run_meta import Target
from harness.studies.base import StudyReport
from harness.studies.protocols import (
    CONNECT_JSON,
    CROSS_CHECK_WORKERS,
    GRPC_SCENARIOS,
    GRPC_SERVERS,
    HTTP_SCENARIOS,
    NAME,
    QUESTION,
    REST_H2,
    REST_SCENARIOS,
    REST_SERVERS,
    SHAPE_LABELS,
    UNARY,
)
from harness.studies.reading import (
    Measured,
    busiest_driver,
    cross_check_pairs,
    cross_check_sentence,
    cross_checked_targets,
    driver_cross_check_table,
    failed_cells,
    measured,
    newest_run_section,
    study_readme,
)
from harness.studies.telling import Telling, with_blocks

# The Go study this one follows, as the issue summarised it: at 16 client goroutines.
GO_GRPC_OVER_REST = 2.0  # gRPC beat REST (JSON over HTTP/2) by more than this
GO_PIPELINED_OVER_NEXT = 80.0  # pipelined streaming over the next best shape


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


def shape_table(run: StudyRun) -> list[Block]:
    found = measured(run)
    levels = levels_of(run)
    labels = [f"{workers(level)}: {what}" for level in levels for what in ("msgs/s", "p50 / p99", "server CPU")]
    table = Table("shapes", ["stack / shape", *labels, "driver CPU"])
    for server, scenario in rows(run):
        values: list[str] = []
        driven = [found.get((scenario, server, level)) for level in levels]
        for each in driven:
            if each is None:
                values += ["—", "—", "—"]
                continue
            p50, p99 = each.report.percentiles.get(50), each.report.percentiles.get(99)
            values += [
                f"{each.report.ok_rps:,.0f}{each.not_ok}",
                "—" if p50 is None or p99 is None else f"{p50 * 1000:.2f} / {p99 * 1000:.2f} ms",
                f"{each.server_cpu:.0%}",
            ]
        table.add(f"{server} / {SHAPE_LABELS.get(scenario, scenario)}", [*values, busiest_driver(run, driven)])
    return [table]


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


def cross_check_table(run: StudyRun) -> list[Block]:
    return driver_cross_check_table(run, cross_check_runs(run), "msgs/s")


def h2load_runs(run: StudyRun) -> dict[str, tuple[Measured, Measured]]:
    """rest-h2 -> (loadgen's, h2load's) median run of REST over HTTP/2 at the cross-check level."""
    return cross_check_pairs(run, REST_H2.name, CROSS_CHECK_WORKERS, tuple(REST_SERVERS), "h2load")


def chart(run: StudyRun) -> bytes:
    """Messages per second against client workers, one line per stack and shape (JSON over HTTP dashed)."""
    found = measured(run)
    points = [
        {
            "label": f"{server} / {SHAPE_LABELS.get(scenario, scenario)}",
            "over": "JSON over HTTP" if scenario in HTTP_SCENARIOS else "gRPC",
            "workers": level,
            "rate": found[key].report.ok_rps,
        }
        for server, scenario in rows(run)
        for level in levels_of(run)
        if (key := (scenario, server, level)) in found
    ]
    drawn = lines(
        points,
        Axis("workers", "client workers"),
        Axis("rate", "OK messages/s", log=True),
        "label",
        dash=Dash("over", "gRPC", "JSON over HTTP"),
    )
    return png(drawn, chart_title(run, "Info flow by call shape"))


def tables(run: StudyRun) -> list[Block]:
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
        slots = run.matrix.get("server_slots", {}).get(server)
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


def targets(run: StudyRun, wall_seconds: float, full_matrix: bool) -> dict[str, Target]:
    """Our driver within the cross-check tolerance of ghz on SetInfo and of h2load on REST over HTTP/2."""
    return cross_checked_targets(run, {"ghz": cross_check_runs(run), "h2load": h2load_runs(run)})


ANSWER_OF = {FASTER: YES, TIE: YES, SLOWER: NO, UNRESOLVED: NOT_TOLD_YET}


def rest_would_do(judged: Judged, made: Decision) -> Decision:
    """Whether REST would do, in those words: the faster REST server against gRPC unary (the reference), then
    the fastest call shape."""
    rest = [each for each in judged.outcomes if each.alternative in REST_SERVERS]
    if not rest:
        return made
    best = max(rest, key=lambda each: each.ratio.value)
    said = f"{best.alternative} serves {ratio_text(best.ratio)} × gRPC unary"
    return replace(made, word=ANSWER_OF[best.verdict], lead=f"{said}; the call shape: {picked(made)}")


TELLING = Telling(
    NAME,
    {"info": "Would REST do, and which call shape should a request/response flow take?"},
    {
        "info": "The Info flow (name, age, height -> success; no I/O) as unary gRPC calls, a stream per worker in "
        f"lockstep or pipelined ({IN_FLIGHT} in flight at most) on the same stack, REST (FastAPI) over HTTP/1.1 "
        "and HTTP/2, and Connect's unary protocol with JSON over HTTP/1.1: the rate is messages per second (a "
        "request and its reply count once)"
    }.__getitem__,
    "call shape",
    leads={"info": rest_would_do},
)

REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="a public Go study: gRPC unary, a stream in lockstep, a pipelined stream and REST JSON over HTTP/2",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
)
REPORT = with_blocks(REPORT, TELLING)
