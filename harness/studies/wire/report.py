"""The wire study's report: its comparisons in rounds (tables with intervals, verdicts, decision rows), and what
the reply and request sizes moved: MB/s with its interval and the server's CPU per MB, by stack and wire, the
replies charted against size."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.costs import block_calls_per_core, block_ms_per_call
from harness.analysis.decision import Decision, choice
from harness.analysis.judging import Judged, judged_comparisons, pick_over, selection_of
from harness.method.verdicts import known
from harness.plan.matrix import SHARED
from harness.plan.sizes import REPLY, REQUEST, SIZED, size_label
from harness.plan.wires import MTLS, TLS
from harness.render.decisions import picked
from harness.render.table import Block, Figure, Table, interval_figure, markdown
from harness.render.wording import rate_text, ratio_text
from harness.results.records import StudyRun
from harness.studies.base import StudyReport
from harness.studies.comparing import certify_text, know_text, over_runs, with_closing
from harness.studies.reading import driver_not_busy, failed_cells, medians, study_readme
from harness.studies.telling import (
    Telling,
    answer_opening,
    blocks_decisions,
    blocks_files,
    blocks_section,
    in_blocks,
    told,
    with_blocks,
)
from harness.studies.wire import (
    CLIENTS,
    CONNECTIONS_ON,
    LEVEL,
    NAME,
    NEW_CONNECTIONS,
    QUESTION,
    S3_SCENARIOS,
    SIZE_LEVEL,
    wire_label,
)
from harness.studies.wire.sizes import Sized, size_chart, size_table, sized_of


def connection_costs(judgeds: Sequence[Judged]) -> list[Block]:
    """What each way of holding connections under TLS cost the server: its CPU per OK call and the OK calls one
    busy core served, so that a new connection per call says how many handshakes one core completes, and the
    difference from plaintext what the handshake alone costs."""
    found = next((each for each in judgeds if each.record.topic == "connections-tls"), None)
    if found is None:
        return []
    table = Table("connection costs", ["way", "server CPU ms per call", "OK calls per busy server core [95% CI]"])
    costs = {}
    for label, _ in found.ranked:
        cell = found.cells[label]
        cost, per_core = block_ms_per_call(cell), block_calls_per_core(cell)
        if cost is None or per_core is None:
            continue
        costs[label] = cost
        table.add(
            label,
            [
                Figure(cost, f"{cost:.3f}", unit="ms"),
                interval_figure(per_core, rate_text(per_core), "OK calls/s a core"),
            ],
        )
    if not table.rows:
        return []
    plaintext, tls = NEW_CONNECTIONS
    handshake = costs[tls] - costs[plaintext] if {plaintext, tls} <= costs.keys() else 0.0
    alone = (
        f" Over TLS a new connection cost the server {handshake:.3f} ms of CPU more a call than in plaintext: the "
        f"handshake's own cost, some {1000 / handshake:,.0f} handshakes a second on one core."
        if handshake > 0
        else ""
    )
    return [
        f"What each way cost the server's core ({found.record.workload}): its CPU per OK call (median over the "
        "windows) and the OK calls one busy core served (over the windows, with the interval). Where every call "
        f"opens a connection ({', '.join(NEW_CONNECTIONS)}), a call is also a TCP connection, and over TLS a "
        "handshake: per busy core, these are the connections one core completes, however busy the driver "
        f"was.{alone}",
        "",
        table,
        "",
    ]


# What a row reads where one driver core cannot feed the server (issue 60's choice among three).
DRIVER_BOUND = (
    "**Where the driver binds.** One loadgen process on one core drives every comparison. We keep it off the limit "
    "by making it cheaper, not the load lower: it marshals a request sent unchanged on every call once, checks a "
    "HelloReply's fields without copying its payload, and collects its garbage less often (loadgen/codec.go; the "
    "runs before 2026-11-29 15:00 UTC made those copies). The bytes on the wire, and so the server's work, are the "
    "same. Lowering the load would measure latency rather than what a stack can move, and a driver process per "
    "group of connections would take the server's core on a two-core machine. Where the driver still uses more "
    "than 80% of its core (a TLS handshake every call does), the rates measure the driver, not the server: such a "
    "decision row ranks the stacks by the calls each serves per second of its server's CPU (paired by block) and "
    "says so. Each comparison's table gives the driver's CPU."
)


def _more(judgeds: Sequence[Judged], sized: Sequence[Sized], charts: str) -> list[Block]:
    """Beside a run's comparisons: what connections cost the server, then the payload moved at each size (its
    chart in the directory `charts`, as the page that shows it links to it)."""
    return [
        DRIVER_BOUND,
        "",
        *connection_costs(judgeds),
        f"![sizes]({charts}/sizes.png)",
        "",
        *size_table(sized, REPLY),
        *size_table(sized, REQUEST),
    ]


def render(run: StudyRun) -> dict[str, bytes]:
    if not in_blocks(run):
        return {"README.md": study_readme(NAME, f"# Wire: {run.title}", matrix_tables(run))}
    judgeds = judged_comparisons(run)
    sized = sized_of(run, judgeds)
    return {**blocks_files(run, TELLING, _more(judgeds, sized, "charts")), "charts/sizes.png": size_chart(run, sized)}


def matrix_tables(run: StudyRun) -> list[Block]:
    """A --full run: each cell's median OK calls/s."""
    table = Table("cells", ["cell", "OK calls/s", "handshake"])
    for each in medians(run):
        table.add(each.result.record.key, [f"{each.report.ok_rps:,.0f}{each.not_ok}", each.result.record.tls or "—"])
    return [table, "", *failed_cells(run)]


def section(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    if not in_blocks(newest):
        return markdown(matrix_tables(newest))
    judgeds = judged_comparisons(newest)
    return blocks_section(runs, TELLING, _more(judgeds, sized_of(newest, judgeds), f"{NAME}/charts"))


def _by_stack(judgeds: Sequence[Judged], label: str) -> str:
    """One label across comparisons that differ by stack (tls/<stack>/c50): each stack's ratio with its interval
    and verdict, the dearest first."""
    found = [
        (judged.record.workload.split("/")[1], outcome)
        for judged in judgeds
        if (outcome := judged.outcome(label)) is not None
    ]
    found.sort(key=lambda pair: pair[1].ratio.value)
    return ", ".join(f"{stack} {ratio_text(outcome.ratio)} ({outcome.verdict})" for stack, outcome in found)


# What we found of why a stack comes last at every size: its evidence is a run made --aside, on the study's page.
WHY_LAST = {
    "connect-hypercorn": (
        " (hypercorn keeps HTTP/2's 65,535-byte receive window and has no setting for it, so a large request waits "
        "for a window update every 32 KiB; connect-hypercorn-1MiB-window, our patch of it, measures what a wider "
        "window buys, in the runs aside)"
    ),
}


def _fastest(judgeds: Sequence[Judged]) -> str:
    """For each size comparison, its fastest label and that label's ratio to the reference; then the label that
    came last in every one of them, if one did."""
    parts, last = [], []
    for judged in judgeds:
        ranked = judged.ranked
        if not ranked:
            continue
        top = ranked[0][0]
        outcome = judged.outcome(top)
        ratio = "the reference" if outcome is None else f"{ratio_text(outcome.ratio)} ({outcome.verdict})"
        parts.append(f"{judged.record.topic} {top}, {ratio}")
        last.append(ranked[-1][0].split("+")[0])
    slowest = ""
    if len(last) > 1 and len(set(last)) == 1:
        slowest = f"; last at every size, in plaintext or TLS: {last[0]}" + WHY_LAST.get(last[0], "")
    return "; ".join(parts) + slowest


def answer(runs: Sequence[StudyRun]) -> str:
    """What TLS costs each stack, how to hold connections under it, and the fastest stack at each size."""
    newest = runs[0]
    if not in_blocks(newest):
        return "Not measured in rounds yet: `python -m harness run-all --study wire`."
    judgeds = judged_comparisons(newest)
    costs = [judged for judged in judgeds if judged.record.topic == "tls"]
    sizes = sorted(
        (each for each in judgeds if each.record.topic in SIZED), key=lambda each: list(SIZED).index(each.record.topic)
    )
    reference = sizes[0].record.reference if sizes else ""
    parts = [answer_opening(newest, TELLING, judgeds)]
    if costs:
        parts.append(
            f"{_question('tls')} On one connection at {LEVEL} workers, × plaintext [95% CI]: TLS "
            f"{_by_stack(costs, TLS)}; mutual TLS {_by_stack(costs, MTLS)}."
        )
        parts += [f"The A/A control {ratio_text(c.ratio)} ({c.verdict})." for each in costs if (c := each.control)]
    parts += [told(newest, TELLING, each) for each in judgeds if each.record.topic == "connections-tls"]
    parts += [told(newest, TELLING, each) for each in judgeds if each.record.topic in S3_WORK]
    if sizes:
        parts.append(
            f"Which stack moves large messages? The fastest at each size, × {reference} in plaintext [95% CI]: "
            f"{_fastest(sizes)}."
        )
    return " ".join(part for part in parts if part)


S3_WORK = {each.name: each for each in S3_SCENARIOS}  # topic -> the S3 work a region away, served over TLS
S3_QUESTION = "Which stack serves the brief's S3 work a region away over TLS?"


def _question(topic: str) -> str:
    if topic in S3_WORK:
        return S3_QUESTION
    if topic == "tls":
        return "What TLS costs: plaintext, TLS or mutual TLS?"
    if topic == "connections-tls":
        return "What does TLS cost, and how should clients hold connections under it?"
    direction, size = SIZED[topic]
    plural = "replies" if direction == REPLY else "requests"
    return f"Which stack moves {size_label(size)} {plural}, in plaintext or TLS?"


def _description(topic: str) -> str:
    if topic in S3_WORK:
        return f"{S3_WORK[topic].description}, by {LEVEL} workers (ghz) over TLS, every stack side by side"
    if topic == "tls":
        return (
            f"SayHello by {LEVEL} workers on one connection (ghz; REST's GET /v1/hello by loadgen, a connection per "
            "worker), in plaintext, over TLS and over mutual TLS (a CA made for the run; ECDSA P-256 keys), each on "
            "a fresh server start"
        )
    if topic == "connections-tls":
        return (
            f"SayHello by {CLIENTS} clients (loadgen) on {CONNECTIONS_ON} over TLS, sharing one connection, holding "
            "one each, sharing a pool of 10, or opening a new connection (and so a handshake) for every call, beside "
            "plaintext's shared connection and new connection per call; what each cost the server's core is in the "
            "table after the comparisons"
        )
    direction, size = SIZED[topic]
    small = "" if direction == REPLY else " and a small reply"
    return f"SayHello with {size_label(size)} of payload in its {direction}{small}, {SIZE_LEVEL} loadgen workers"


def tls_costs(judged: Judged, made: Decision) -> Decision:
    """What TLS costs and how to hold connections under it, in those words: a shared TLS connection against a
    shared plaintext one, an estimate (known once its interval's half-width is within the tie band, whatever the
    cost), then the way to hold connections under TLS, by the selection rule over the ways under TLS. Answered when
    both are: the cost known and the way certified."""
    tie = judged.record.method.tie
    tls = wire_label(SHARED, TLS)
    cost = pick_over(judged, tls, SHARED, tie)
    ways = [each.alternative for each in judged.outcomes if each.alternative.endswith(f"+{TLS}")]
    chosen = selection_of(judged, ways, tie)
    if cost is None or chosen is None:
        return made
    cost_known = known(cost[0], tie)
    said = f"TLS serves {ratio_text(cost[0])} × plaintext on one shared connection"
    said += f" ({cost[1]}, known to ±{math.expm1(cost[0].half_width):.0%})" if cost_known else f" ({cost[1]})"
    rival = chosen.binding.rival if chosen.binding else made.runner_up
    over = judged.paired(chosen.pick, rival)
    unknown = f"TLS's cost not yet known to ±{tie:.0%}"
    to_certify = certify_text(judged, chosen)
    to_know = "" if cost_known else know_text(judged, tls, SHARED)  # the row's verdict says the cost is unknown
    if to_know and to_certify:  # both open: which blocks would know the cost
        to_know = f"for TLS's cost, {to_know}"
    closing = "; ".join(filter(None, [to_certify, to_know]))
    found = replace(
        made,
        **with_closing(over_runs(judged, chosen.pick, rival), closing),
        **choice(chosen),
        pick=chosen.pick,
        runner_up=rival,
        over=over,
        labels=(chosen.pick, rival),
    )
    lead = f"{said}; under TLS: {picked(found)}"
    if not cost_known:  # the way may be certified; the row is answered once the cost is known too
        return replace(found, lead=lead, certified=False, verdict=f"{found.verdict}; {unknown}")
    return replace(found, lead=lead)


TELLING = Telling(
    NAME,
    {topic: _question(topic) for topic in ("tls", "connections-tls", *SIZED, *S3_WORK)},
    _description,
    "stack or wire",
    headlines={topic: "Which stack moves large messages, in plaintext or TLS?" for topic in SIZED},
    leads={"connections-tls": tls_costs},
)

REPORT = with_blocks(
    StudyReport(
        name=NAME,
        question=QUESTION,
        follows="no public comparison: the stacks measured over TLS and with large messages for the first time here",
        render=render,
        section=section,
        answer=answer,
        targets=driver_not_busy,
        default=False,
    ),
    TELLING,
)


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """Its rows of the decision table: what TLS costs and how to hold connections under it, which stack moves a
    MiB each way, and which serves S3 to MongoDB a region away over TLS; every stack's own TLS cost stays in its
    tables."""
    rows = blocks_decisions(runs, TELLING) if in_blocks(runs[0]) else []
    return [each for each in rows if each.workload.split("/")[0] in DECIDING]


DECIDING = ("connections-tls", "reply-1MiB", "request-1MiB", "s3-mongo-region")
# its rounds with the sizes' tables and chart, and the rows that decide
REPORT = replace(REPORT, render=render, section=section, answer=answer, decisions=decisions)
