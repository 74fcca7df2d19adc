"""The stacks study's report: one table per scenario, level and way of connecting; a chart per scenario; the
targets; scaling by processes; every machine side by side; where async pays off."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.closing import MOST_BLOCKS_SAID, closing
from harness.analysis.decision import Decision
from harness.analysis.judging import absolute, judged_comparisons
from harness.plan.matrix import SHARED, WAIT_MS
from harness.render.summaries import (
    CellSummary,
    not_ok_mark,
    rate,
)
from harness.render.table import Block, Table, markdown, page_files
from harness.render.wording import rate_text
from harness.results.records import StudyRun
from harness.studies.base import StudyReport
from harness.studies.stacks import NAME, QUESTION
from harness.studies.stacks.brief import async_pays, brief_decisions
from harness.studies.stacks.levels import across_levels, by_topic
from harness.studies.stacks.levels import chart as brief_chart
from harness.studies.stacks.machines import scaling, side_by_side
from harness.studies.stacks.tables import (
    BRIEF_FOLDER,
    Levels,
    cell_table,
    chart,
    connection_label,
    description,
    grouped,
    latency_label,
    reading,
    servers_in,
    table_file,
    ways_of_connecting,
)
from harness.studies.stacks.targets import SETTINGS, targets, targets_lines
from harness.studies.telling import Finding, Telling, blocks_answer, blocks_files, comparison_lines, in_blocks
from harness.studies.telling import blocks_section as told_in_blocks


def render(run: StudyRun) -> dict[str, bytes]:
    """results/stacks/<scenario>/concurrency-<N>.md; for a run in rounds, comparisons.md and charts/verdicts.png,
    else results/stacks/charts/<scenario>.png."""
    files: dict[str, bytes] = {}
    plain_title = run.title.replace("`", "")
    judged = in_blocks(run)
    if judged:
        files.update(blocks_files(run, TELLING))
        files.update(brief_files(run))
    for scenario, levels in grouped(run).items():
        servers = servers_in(run, levels)
        for level, by_server in levels.items():
            ordered = {name: by_server[name] for name in servers if name in by_server}
            files |= page_files(table_file(scenario, level), cell_table(run, scenario, level, ordered))
        if not judged:
            files[f"charts/{scenario}.png"] = chart(scenario, levels, servers, plain_title)
    for way in ways_of_connecting(run):
        for scenario, levels in grouped(run, way).items():
            servers = servers_in(run, levels)
            for level, by_server in levels.items():
                ordered = {name: by_server[name] for name in servers if name in by_server}
                files |= page_files(table_file(scenario, level, way), cell_table(run, scenario, level, ordered, way))
    return files


def _summary_cell(summary: CellSummary) -> str:
    bounds = summary.bounds
    efficiency = f" ({bounds.efficiency:.0%})" if bounds else ""
    flags = "".join(f" **{flag}**" for flag in summary.flags)
    return rate(summary.ok_rps) + efficiency + flags + not_ok_mark(summary.reports)


QUESTIONS = {
    "hello": "Handlers without I/O: which stack?",
    "hello-wait": "Handlers waiting on I/O: does async pay off, and on which stack?",
    "s3-unary": "Listing S3 in every call, S3 on loopback (the brief's 893 objects, botocore-bound): which stack?",
    "s3-stream": "Streaming an S3 listing object by object, S3 on loopback: which stack?",
    "s3-mongo": "S3 to MongoDB (list, then upsert each object), both on loopback: which stack?",
    "s3-unary-region": "Listing S3 in every call, S3 100 ms away as in a cloud region: which stack?",
    "s3-stream-region": "Streaming an S3 listing object by object, S3 100 ms away: which stack?",
    "s3-mongo-region": "S3 to MongoDB, S3 100 ms and MongoDB 1 ms away as in a cloud region: which stack?",
}


# What a profile found, where it explains a stack's figures (py-spy's output kept under results/profiles/).
FOUND = {
    "hello": Finding(
        ("connect-pyvoy", "connect-pyvoy-minimal"),
        "connect-pyvoy serves faster than its floor, whose stderr shows the likely reason: pyvoy's own command "
        "line writes a traceback there for nearly every call, asyncio's default handler reporting "
        "InvalidStateError from pyvoy's `RecvFutureExecutor` (pyvoy 1.3 resolving a receive that connectrpc 0.13 "
        "had cancelled). Ours counts them and writes nothing (`StaleReceives` in servers/connect.py). Evidence: "
        "`results/profiles/20261126/pyvoy-floor-log/` (each server's stderr over the same hello calls). A team "
        "on stock pyvoy with connectrpc pays that log until it installs such a handler.",
    ),
    "hello-wait": Finding(
        ("connect-pyvoy",),
        "connect-pyvoy keeps its core busy on calls that only wait, where the other event-loop stacks idle. A py-spy "
        "profile (`results/profiles/20261125/pyvoy-wait/profile.txt`) finds its loop thread "
        "in connectrpc's disconnect watch (`_RequestReceiver.__call__`, which awaits `receive()` once the body is "
        "in) and in pyvoy resolving receives that connectrpc had already cancelled: connectrpc 0.13 and pyvoy 1.3 "
        "together, not our app, and neither has a setting for it.",
    ),
}
TELLING = Telling(NAME, QUESTIONS, description, "stack", found=FOUND, leads={"hello-wait": async_pays})


def brief_lines(run: StudyRun, folder: str) -> list[Block]:
    """The brief's tables of a run in rounds: for each scenario its table across levels and its chart, then links
    to each level's tables (every scenario's comparison at that level)."""
    topics = by_topic(judged_comparisons(run))
    lines: list[Block] = []
    for topic, levels in topics.items():
        if len(levels) < 2:
            continue
        lines += [*across_levels(topic, levels), f"![{topic} by clients]({folder}charts/{topic}-by-clients.png)", ""]
    measured = sorted({level for found in topics.values() for level in found})
    closings = [found for levels in topics.values() for judged in levels.values() if (found := closing(judged))]
    if lines and closings:
        minutes = sum(each.minutes for each in closings if each.needed <= MOST_BLOCKS_SAID)
        beyond = sum(1 for each in closings if each.needed > MOST_BLOCKS_SAID)
        lines += [
            f"{len(closings)} of these comparisons left a label unresolved. Telling each one's widest within the "
            f"tie band, at the spreads its blocks showed so far, would take about {minutes:.0f} more minutes of "
            "blocks on this machine"
            + (f" ({beyond} would need more than {MOST_BLOCKS_SAID} blocks)" if beyond else "")
            + "; each comparison's note below says its own share. A spread read from two blocks is itself rough.",
            "",
        ]
    if lines:
        links = ", ".join(f"[c={level}]({folder}{BRIEF_FOLDER}/level-{level}.md)" for level in measured)
        lines += [f"The brief's table per level (every scenario's comparison at that level): {links}.", ""]
    return ["## The brief's matrix, by level", "", *lines] if lines else []


def brief_files(run: StudyRun) -> dict[str, bytes]:
    """results/stacks/brief/README.md (the brief's tables across levels, as results/README.md shows them),
    brief/level-<N>.md (each scenario's comparison at N, as comparisons.md tells it), their tables beside them, and
    charts/<scenario>-by-clients.png (rate and p99 against clients per stack)."""
    judgeds = judged_comparisons(run)
    topics = by_topic(judgeds)
    files: dict[str, bytes] = {}
    if across := brief_lines(run, "../"):
        files |= page_files(f"{BRIEF_FOLDER}/README.md", across)
    title = run.title.replace("`", "")
    for topic, levels in topics.items():
        if len(levels) >= 2:
            files[f"charts/{topic}-by-clients.png"] = brief_chart(topic, levels, title)
    for level in sorted({level for found in topics.values() for level in found}):
        at = [found[level] for found in topics.values() if level in found]
        lines: list[Block] = [f"# The brief's matrix at {level} clients: {run.title}", ""]
        lines += comparison_lines(run, TELLING, at)
        files |= page_files(f"{BRIEF_FOLDER}/level-{level}.md", lines)
    return files


def blocks_section(runs: Sequence[StudyRun]) -> str:
    """The section of a run in rounds: the brief's tables across levels, each comparison with intervals and
    verdicts, the chart, the targets and the tables of every window."""
    newest = runs[0]
    links = ", ".join(
        f"[{scenario} c={level}]({NAME}/{table_file(scenario, level)})"
        for scenario, levels in grouped(newest).items()
        for level in levels
    )
    more = [*brief_lines(newest, f"{NAME}/"), *pool_bound_lines(newest), *targets_lines(newest)]
    return told_in_blocks(runs, TELLING, [*more, f"Every window's percentiles, CPU and memory: {links}.", ""])


def pool_bound_lines(run: StudyRun) -> list[Block]:
    """Where a thread pool's size sets the rate (Little's law: at most threads ÷ the wait, calls/s): each sync
    server's rate on hello-wait beside that bound ("" where the run did not measure hello-wait)."""
    judged = next((each for each in judged_comparisons(run) if each.record.topic == "hello-wait"), None)
    slots = run.matrix.get("server_slots", {})
    if judged is None:
        return []
    said = []
    for label in judged.standing:
        threads, own = slots.get(label), absolute(judged, label)
        if threads and own is not None:
            bound = threads / (WAIT_MS / 1000)
            said.append(
                f"{label} {threads} threads ÷ {WAIT_MS} ms = {rate(bound)} at most, served {rate_text(own.rate)}"
            )
    if not said:
        return []
    return [
        f"**Where the thread pool sets the rate** (Little's law: a pool of N threads serves at most N ÷ the wait calls "
        f"a second when every call waits {WAIT_MS} ms): " + "; ".join(said) + ". A sync server's rate there measures "
        "its pool's size, not its stack: size it to the calls in flight, as sync-w50 is, before you compare.",
        "",
    ]


def section(runs: Sequence[StudyRun]) -> str:
    """The study's part of results/README.md: the newest run's tables, and every machine side by side."""
    newest = runs[0]
    if in_blocks(newest):
        return blocks_section(runs)
    lines: list[Block] = [
        f"Newest run: {newest.title}; {newest.entry.wall_seconds / 60:.1f} min. Each cell: a discarded "
        f"warm-up, then {newest.matrix['repeats']} ghz runs in count mode sized to last a few seconds, on one "
        "server start per variant and scenario. Figures are OK responses per second (failed calls never count), "
        "the median of the runs; flags (**noisy**, **short**, **driver-busy**) are explained in the full tables. "
        "Where a scenario waits, a cell also shows its **efficiency**: OK req/s over the lower of the wait bound "
        "min(concurrency, serving slots) / (one call's latency alone) and the CPU bound (server CPUs / CPU "
        f"seconds per call). Raw reports: [`runs/{newest.run_id}`](runs/{newest.run_id}).",
        "",
        *targets_lines(newest),
        *scaling(newest),
    ]
    for scenario, levels in grouped(newest).items():
        servers = servers_in(newest, levels)
        latency = latency_label([s for level in levels.values() for s in level.values()])
        bounded = any(s.bounds for level in levels.values() for s in level.values())
        lines += [f"### {scenario}", "", description(scenario) + (f"; emulated latency: {latency}" if latency else "")]
        lines += ["", f"![{scenario}]({NAME}/charts/{scenario}.png)", "", f"*{scenario}: {newest.title}.*", ""]
        columns = [(level, SHARED, levels[level]) for level in sorted(levels)]
        for way in ways_of_connecting(newest):
            other = grouped(newest, way).get(scenario, {})
            columns += [(level, way, other[level]) for level in sorted(other)]
        labels = [f"c={level}" + ("" if way == SHARED else f", {connection_label(way)}") for level, way, _ in columns]
        table = Table(f"{scenario} by level", ["OK req/s (efficiency)" if bounded else "OK req/s", *labels])
        lines.append(table)
        for name in servers:
            row_cells = []
            for _, _, by_server in columns:
                s = by_server.get(name)
                row_cells.append("—" if s is None else s.result.record.status if s.failed else _summary_cell(s))
            table.add(name, row_cells)
        links = ", ".join(
            f"[{label}]({NAME}/{table_file(scenario, level, way)})"
            for label, (level, way, _) in zip(labels, columns, strict=True)
        )
        lines += ["", f"Full tables: {links}.", "", *reading(newest, levels), ""]
        lines += side_by_side(runs, scenario)
    return markdown(lines)


def _best(run: StudyRun, levels: Levels, async_stack: bool) -> tuple[str, CellSummary] | None:
    top = levels[max(levels)]
    candidates = [  # one process each: several processes on more CPUs are the scaling table's question
        (name, s)
        for name, s in top.items()
        if not s.failed and run.processes(name) == 1 and ((s.slots is None) == async_stack)
    ]
    return max(candidates, key=lambda item: item[1].ok_rps, default=None)


def _async_verdicts(run: StudyRun) -> dict[str, list[str]]:
    """Per scenario at the highest level, the best event-loop stack over the best thread-pool stack, by verdict."""
    verdicts: dict[str, list[str]] = {"pays off": [], "ties": [], "costs": []}
    pays_off = run.settings["pays_off"]
    for scenario, levels in grouped(run).items():
        best_async, best_sync = _best(run, levels, True), _best(run, levels, False)
        if best_async is None or best_sync is None or not best_sync[1].ok_rps:
            continue
        ratio = best_async[1].ok_rps / best_sync[1].ok_rps
        verdict = "pays off" if ratio >= pays_off else "costs" if ratio <= 1 / pays_off else "ties"
        verdicts[verdict].append(
            f"{scenario} ×{ratio:.2f} ({best_async[0]} {rate(best_async[1].ok_rps)} vs "
            f"{best_sync[0]} {rate(best_sync[1].ok_rps)} OK calls/s)"
        )
    return verdicts


def _verdict_text(run: StudyRun) -> str:
    verdicts = _async_verdicts(run)
    return "; ".join(f"async {verdict} on {', '.join(items)}" for verdict, items in verdicts.items() if items)


def _leaders(run: StudyRun, scenario: str) -> str:
    levels = grouped(run).get(scenario)
    if not levels:
        return ""
    top = max(levels)
    ranked = sorted(((s.ok_rps, name) for name, s in levels[top].items() if not s.failed), reverse=True)
    if not ranked:
        return ""
    order = ", ".join(f"{name} {rate(value)}" for value, name in ranked)
    return f"{scenario} at c={top}: {order} OK calls/s"


def _connections_sentences(run: StudyRun) -> list[str]:
    """For each other way of connecting: its OK calls/s over one shared connection's on the same cell, per
    scenario, lowest to highest over the stacks."""
    sentences = []
    shared = grouped(run)
    for way in ways_of_connecting(run):
        ratios = []
        for scenario, levels in grouped(run, way).items():
            for level, by_server in levels.items():
                found = [
                    s.ok_rps / base.ok_rps
                    for name, s in by_server.items()
                    if not s.failed
                    and (base := shared.get(scenario, {}).get(level, {}).get(name)) is not None
                    and not base.failed
                    and base.ok_rps
                ]
                if found:
                    ratios.append(f"{scenario} at c={level} {min(found):.2f}x to {max(found):.2f}x")
        if ratios:
            sentences.append(
                f"Driven with {connection_label(way)} rather than one shared connection, the stacks served "
                + "; ".join(ratios)
                + " the calls/s."
            )
    return sentences


def answer(runs: Sequence[StudyRun]) -> str:
    """Where async pays off and which stack leads where the CPU is the limit, from the newest run per machine."""
    newest = runs[0]
    if in_blocks(newest):
        return blocks_answer(newest, TELLING)
    parts = [
        f"On {newest.cpu_model} (run `{newest.run_id}`, the server pinned to one core), comparing the best "
        f"event-loop stack with the best thread-pool stack at the highest concurrency: {_verdict_text(newest)}.",
    ]
    hello = _leaders(newest, "hello")
    if hello:
        parts.append(f"Where the server's own cost per call decides (no I/O), the order is {hello}.")
    parts += _connections_sentences(newest)
    for other in runs[1:]:
        line = _leaders(other, "hello")
        parts.append(
            f"On {other.cpu_model} (run `{other.run_id}`): {_verdict_text(other)}" + (f"; {line}" if line else "") + "."
        )
    if len(runs) > 1:
        parts.append("Machines rank the stacks differently: measure on your own hardware before you choose.")
    return " ".join(parts)


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """The study's rows of the decision table: from a run of the brief's matrix, each question at its highest level
    with the brief's own rows (harness.studies.stacks.brief); from an older run in rounds, a row per comparison."""
    newest = runs[0]
    if not in_blocks(newest):
        return []
    return brief_decisions(newest, TELLING, judged_comparisons(newest))


REPORT = StudyReport(
    name=NAME,
    question=QUESTION,
    follows="the 2020 Python gRPC study (grpcio sync vs grpclib vs aio on S3 and MongoDB), its matrix and tables",
    render=render,
    section=section,
    answer=answer,
    targets=targets,
    settings=SETTINGS,
    decisions=decisions,
)
