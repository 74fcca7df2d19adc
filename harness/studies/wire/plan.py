"""The wire study's plan: its comparisons in rounds (TLS cost per stack, connections under TLS, reply sizes);
with --full the same cells, each measured on its own."""

from __future__ import annotations

from harness.plan.matrix import PER_CALL, SHARED, Cell
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.plan.sizes import REQUEST, SIZE_SCENARIOS, SIZED
from harness.plan.wires import MTLS, PLAINTEXT, TLS
from harness.run.measure import measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan
from harness.studies.wire import (
    CLIENTS,
    CONNECTIONS_ON,
    HELLO,
    LAG_FROM,
    LEVEL,
    NAME,
    REST_NAME,
    S3_SCENARIOS,
    S3_STACK_NAMES,
    SIZE_LEVEL,
    STACK_NAMES,
    WAYS,
    wire_label,
)


def comparisons(options: RunOptions) -> list[Comparison]:
    """Plaintext against TLS and mutual TLS on each stack; the ways of holding connections under TLS; each size
    of reply and request from every stack in plaintext and TLS against sync-w10 in plaintext; the S3 work a region
    away from every stack over TLS, side by side."""
    stacks = options.servers or tuple(server_variant(name) for name in (*STACK_NAMES, REST_NAME))
    found = [
        Comparison(
            f"tls/{server.name}/c{LEVEL}",
            (PLAINTEXT, Cell(server, HELLO, LEVEL)),
            tuple((wire, Cell(server, HELLO, LEVEL, wire=wire)) for wire in (TLS, MTLS)),
            driver="loadgen" if server.protocol == "http" else None,  # ghz speaks gRPC alone
            counted=False,
        )
        for server in stacks
    ]
    on = server_variant(CONNECTIONS_ON)
    ways = [(wire_label(way, TLS), Cell(on, HELLO, CLIENTS, way, TLS)) for way in WAYS]
    found.append(
        Comparison(
            f"connections-tls/{on.name}/c{CLIENTS}",
            (SHARED, Cell(on, HELLO, CLIENTS)),
            (*ways, (WAYS[-1], Cell(on, HELLO, CLIENTS, WAYS[-1]))),
            driver="loadgen",  # ghz cannot open a connection per call
            counted=False,
            estimates=((wire_label(SHARED, TLS), SHARED),),  # what TLS costs, its row's estimate
        )
    )
    for each in SIZE_SCENARIOS:
        direction, size = SIZED[each.name]
        labelled = [
            (wire_label(server.name, wire), Cell(server, each, SIZE_LEVEL, wire=wire))
            for server in stacks
            if not (direction == REQUEST and server.protocol == "http")  # REST's hello is a GET: no body
            for wire in (PLAINTEXT, TLS)
        ]
        found.append(
            Comparison(
                f"{each.name}/c{SIZE_LEVEL}",
                labelled[0],
                tuple(labelled[1:]),
                driver="loadgen",
                counted=size >= LAG_FROM,  # the loop's lag where a message may hold it up
            )
        )
    s3_stacks = options.servers or tuple(server_variant(name) for name in S3_STACK_NAMES)
    for each in S3_SCENARIOS:
        over_tls = [
            (wire_label(server.name, TLS), Cell(server, each, LEVEL, wire=TLS))
            for server in s3_stacks
            if server.runs(each.name) and server.protocol != "http"  # the drivers call REST's hello alone
        ]
        if len(over_tls) > 1:
            found.append(Comparison(f"{each.name}/c{LEVEL}+{TLS}", over_tls[0], tuple(over_tls[1:]), counted=False))
    if options.scenarios is None:
        return found
    # --scenarios: the comparisons of those scenarios alone (hello: TLS and connections under TLS; or sizes).
    chosen = {each.name for each in options.scenarios}
    kept = [each for each in found if {cell.scenario.name for cell in each.cells} <= chosen]
    if not kept:
        names = ", ".join([HELLO.name, *(each.name for each in (*SIZE_SCENARIOS, *S3_SCENARIOS))])
        raise ValueError(f"the wire study compares on {names}; --scenarios chose none of them")
    return kept


def cells(options: RunOptions) -> list[Cell]:
    """The comparisons' cells; with --full each measured on its own by ghz, which cannot open a connection per
    call, send a MiB in a request, or speak REST (those cells are left out)."""
    found = {cell.key: cell for comparison in comparisons(options) for cell in comparison.cells}
    if not options.full:
        return list(found.values())
    return [
        cell
        for cell in found.values()
        if cell.connections != PER_CALL and cell.server.protocol != "http" and "request_bytes" not in cell.scenario.data
    ]


PLAN = StudyPlan(
    name=NAME,
    axes=(
        Axis("server", (*STACK_NAMES, REST_NAME), "--servers"),
        Axis("scenario", (HELLO.name, *(each.name for each in (*SIZE_SCENARIOS, *S3_SCENARIOS))), "--scenarios"),
    ),
    driver="ghz",
    repeats=3,
    cells=cells,
    measure=measure_closed_loop,
    diagnostics=True,  # the loop's lag on large messages (the comparisons from LAG_FROM on: Comparison.counted)
    checkers=("loadgen",),
    comparisons=comparisons,
    full_comparisons=comparisons,  # its comparisons are its whole matrix: --full measures them in blocks
    own_scenarios=SIZE_SCENARIOS,
    least_blocks=3,  # the study is run on its own, with time for three
)
