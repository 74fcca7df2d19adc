"""The connections study's report: calls/s by way of holding connections, and the S3 client per process
against per request, with the server's CPU per call."""

from __future__ import annotations

from collections.abc import Sequence

from harness.plan.matrix import PER_CALL, PER_WORKER, SHARED, pool
from harness.plan.servers import S3_PER_REQUEST
from harness.render.summaries import chart_title, or_dash
from harness.render.table import Block, Table
from harness.render.vega import Axis, bars, png, side_by_side
from harness.results.records import CellRecord, Repeat, StudyRun
from harness.studies.base import StudyReport
from harness.studies.connections import (
    CLIENT_SCENARIOS,
    CLIENTS,
    HELLO,
    HELLO_WAIT,
    NAME,
    POOL,
    QUESTION,
    S3_CLIENTS_LEVEL,
    S3_COMPARED_LEVEL,
    S3_SCENARIOS,
    STACK_NAMES,
    STRATEGIES,
    WAIT_MS,
)
from harness.studies.reading import (
    Measured,
    busiest_driver,
    driver_not_busy,
    failed_cells,
    medians,
    newest_run_section,
    study_readme,
)
from harness.studies.telling import Telling, with_blocks

STRATEGY_LABELS = {
    SHARED: "one shared",
    PER_WORKER: "one per client",
    pool(POOL): f"pool of {POOL}",
    PER_CALL: "new per call",
}

# The Go study, as the issue summarised it: calls/s at 100 concurrent clients.
GO_CALLS = {SHARED: 31_500, pool(POOL): 3_100, PER_CALL: 3_000}
GO_WAIT_CALLS = 190  # with a 0.5 s server sleep, every strategy


# --- reading a run -------------------------------------------------------------------------------------


def by_cell(run: StudyRun) -> dict[tuple[str, str, str], Measured]:
    """(scenario, server, connections) -> the cell's median run, at the scenario's highest level."""
    ordered = sorted(medians(run), key=lambda each: each.result.record.concurrency)
    return {
        (record.scenario, record.server, record.connections): each for each in ordered if (record := each.result.record)
    }


def client_table(run: StudyRun, scenario_name: str) -> list[Block]:
    cells = by_cell(run)
    labels = [f"{STRATEGY_LABELS[each]}: calls/s, p99" for each in STRATEGIES]
    table = Table(f"{scenario_name} by way", ["stack", *labels, "server CPU (lowest–highest)", "driver CPU"])
    servers = [name for name in STACK_NAMES if any(key[1] == name and key[0] == scenario_name for key in cells)]
    for server in servers:
        runs = [cells.get((scenario_name, server, each)) for each in STRATEGIES]
        values = ["—" if each is None else f"{each.report.ok_rps:,.0f}{each.not_ok}, {_p99(each)}" for each in runs]
        busy = [each.server_cpu for each in runs if each is not None]
        cpu = f"{min(busy):.0%}–{max(busy):.0%}" if busy else "—"
        table.add(server, [*values, cpu, busiest_driver(run, runs)])
    return [table]


def _p99(each: Measured) -> str:
    p99 = each.report.percentiles.get(99)
    return "—" if p99 is None else f"{p99 * 1000:,.1f} ms"


def s3_table(run: StudyRun) -> list[Block]:
    cells = by_cell(run)
    labels = []
    for each in S3_SCENARIOS:
        labels += [f"{each.name}: per process", "per request", "ratio", "server CPU ms per call (process / request)"]
    table = Table("S3 client", ["stack", *labels])
    for server in STACK_NAMES:
        values: list[str] = []
        for each in S3_SCENARIOS:
            held = cells.get((each.name, server, SHARED))
            fresh = cells.get((each.name, server + S3_PER_REQUEST, SHARED))
            if held is None and fresh is None:
                values += ["—"] * 4
                continue
            values += [
                "—" if held is None else f"{held.report.ok_rps:,.1f}{held.not_ok}",
                "—" if fresh is None else f"{fresh.report.ok_rps:,.1f}{fresh.not_ok}",
                "—" if held is None or fresh is None else f"{fresh.report.ok_rps / held.report.ok_rps:.2f}x",
                " / ".join(or_dash(None if each is None else each.server_ms_per_call, ".2f") for each in (held, fresh)),
            ]
        if any(value != "—" for value in values):
            table.add(server, values)
    return [table]


def chart(run: StudyRun) -> bytes:
    """Calls/s by strategy and stack for each hello scenario, and S3 per process against per request (log axes: a
    per-request client serves a twentieth or less of a held one)."""
    cells = by_cell(run)
    rate = Axis("rate", "OK calls/s", log=True)
    panels = [
        bars(
            [
                {"stack": server, "strategy": STRATEGY_LABELS[strategy], "rate": cells[key].report.ok_rps}
                for server in STACK_NAMES
                for strategy in STRATEGIES
                if (key := (each.name, server, strategy)) in cells
            ],
            Axis("stack", ""),
            rate,
            "strategy",
            title=f"{each.name} at {CLIENTS} clients",
        )
        for each in CLIENT_SCENARIOS
    ]
    s3 = [
        {"cell": f"{server} {each.name}", "client": f"S3 client {label}", "rate": cells[key].report.ok_rps}
        for each in S3_SCENARIOS
        for server in STACK_NAMES
        for suffix, label in (("", "per process"), (S3_PER_REQUEST, "per request"))
        if (key := (each.name, server + suffix, SHARED)) in cells
    ]
    panels.append(bars(s3, Axis("cell", ""), rate, "client", title=f"ListObjects at c={S3_CLIENTS_LEVEL}"))
    return png(side_by_side(*panels), chart_title(run, "Connections"))


def tables(run: StudyRun) -> list[Block]:
    lines: list[Block] = [
        "### Client side: how clients hold connections",
        "",
        f"![connections]({NAME}/charts/connections.png)",
        "",
        f"{CLIENTS} concurrent clients in closed loop (loadgen), sharing one connection, holding one each, sharing "
        f"a pool of {POOL} (client i on connection i mod {POOL}), or opening a new connection for every call and "
        "closing it after. Server CPU is a share of one core, lowest and highest over the row's strategies; "
        "driver CPU the highest share of the CPUs the driver had.",
        "",
    ]
    for each in CLIENT_SCENARIOS:
        lines += [f"{each.name}: {each.description}.", "", *client_table(run, each.name), ""]
    lines += [
        "### Server side: the S3 client per process or per request",
        "",
        f"ListObjects at {S3_CLIENTS_LEVEL} clients on one shared connection, the server's S3 client made once "
        "(`--s3-client per-process`, the default) or a new session and client made for every request and "
        "closed after it (`--s3-client per-request`, as the 2020 study's handlers did).",
        "",
        *s3_table(run),
        "",
    ]
    lines += failed_cells(run)
    return lines


def render(run: StudyRun) -> dict[str, bytes]:
    return {
        "README.md": study_readme(NAME, f"# Connections: {run.title}", tables(run)),
        "charts/connections.png": chart(run),
    }


def section(runs: Sequence[StudyRun]) -> str:
    return newest_run_section(runs, tables, "our Go driver (`loadgen/`)")


def _range(values: Sequence[float], form: str) -> str:
    low, high = min(values), max(values)
    return format(low, form) if f"{low:{form}}" == f"{high:{form}}" else f"{low:{form}} to {high:{form}}"


def answer(runs: Sequence[StudyRun]) -> str:
    run = runs[0]
    cells = by_cell(run)
    parts = []
    ratios: dict[str, list[float]] = {}
    for (scenario_name, server, strategy), each in cells.items():
        shared = cells.get((scenario_name, server, SHARED))
        if scenario_name == HELLO.name and shared is not None and strategy != SHARED:
            ratios.setdefault(strategy, []).append(each.report.ok_rps / shared.report.ok_rps)
    if ratios:
        told = ", ".join(f"{STRATEGY_LABELS[strategy]} {_range(values, '.2f')}x" for strategy, values in ratios.items())
        go = ", ".join(
            f"{STRATEGY_LABELS[strategy]} {GO_CALLS[strategy] / GO_CALLS[SHARED]:.2f}x"
            for strategy in ratios
            if strategy in GO_CALLS
        )
        parts.append(
            f"**How should clients hold connections?** With no wait, against one shared connection at {CLIENTS} "
            f"clients, the stacks served: {told} (the Go study: {go})."
        )
    waits: dict[str, list[float]] = {}
    for (name, server, _), each in cells.items():
        if name == HELLO_WAIT.name:
            waits.setdefault(server, []).append(each.report.ok_rps)
    if waits:
        parts.append(
            f"With a {WAIT_MS} ms wait, across the strategies: "
            + "; ".join(f"{server} {_range(rates, ',.0f')} calls/s" for server, rates in waits.items())
            + f" (the Go study: about {GO_WAIT_CALLS} for each strategy). {CLIENTS} clients waiting {WAIT_MS} ms "
            f"allow at most {CLIENTS * 1000 // WAIT_MS} calls/s"
            + "".join(
                f", {server}'s {slots} worker threads {min(slots, CLIENTS) * 1000 // WAIT_MS}"
                for server in waits
                if (slots := run.matrix.get("server_slots", {}).get(server)) is not None
            )
            + "."
        )
    costs = []
    for listing in S3_SCENARIOS:
        for server in STACK_NAMES:
            held = cells.get((listing.name, server, SHARED))
            fresh = cells.get((listing.name, server + S3_PER_REQUEST, SHARED))
            if held and fresh:
                costs.append((listing.name, server, held, fresh))
    if costs:
        parts.append(
            "**What a new S3 client per request cost the 2020 study:** "
            + "; ".join(
                f"{server} on {name} {fresh.report.ok_rps / held.report.ok_rps:.2f}x the calls/s"
                + (
                    f" ({fresh.server_ms_per_call:.1f} against {held.server_ms_per_call:.1f} ms of server CPU per call)"
                    if fresh.server_ms_per_call and held.server_ms_per_call
                    else ""
                )
                for name, server, held, fresh in costs
            )
            + "."
        )
    return " ".join(parts) if parts else "No cell of this study finished in the newest run."


def s3_client_per_request(record: CellRecord, repeat: Repeat) -> bool:
    """A new S3 client per request fails calls when S3 refuses its connections: that is the finding."""
    return record.server.endswith(S3_PER_REQUEST)


TELLING = Telling(
    NAME,
    {
        HELLO.name: "How should clients hold connections?",
        "s3-client": "The server's S3 client: one per process, or a new one per request?",
    },
    {
        HELLO.name: f"SayHello (no I/O) by {CLIENTS} concurrent clients sharing one connection, holding one each, "
        f"sharing a pool of {POOL}, or opening a new connection for every call",
        "s3-client": f"ListObjects at {S3_COMPARED_LEVEL} workers with the server's S3 client made once per process "
        "or a new session and client made for every request (as the 2020 study's handlers did)",
    }.__getitem__,
    "way",
    headlines={HELLO.name: QUESTION, "s3-client": QUESTION},
)

REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="a public Go study of client connections (shared, pooled, new per call), and the 2020 Python study's "
    "handlers, which made an S3 client per request",
    render=render,
    section=section,
    answer=answer,
    targets=driver_not_busy,
    expected_non_ok=s3_client_per_request,
)
REPORT = with_blocks(REPORT, TELLING)
