"""The stacks study across machines and processes: every machine's newest run side by side, and scaling by
processes. Report-side: reads only the run's files."""

from __future__ import annotations

from collections.abc import Sequence

from harness.plan.matrix import S3_LATENCY_MS
from harness.render.summaries import (
    rate,
)
from harness.render.table import Block, Table
from harness.results.records import StudyRun
from harness.studies.stacks.tables import (
    grouped,
    servers_in,
)


def side_by_side(runs: Sequence[StudyRun], scenario: str) -> list[Block]:
    """One scenario at its highest level on each machine: OK req/s and the ratio to the baseline stack."""
    per_run = [(run, grouped(run).get(scenario, {})) for run in runs]
    per_run = [(run, levels) for run, levels in per_run if levels]
    if len(per_run) < 2:
        return []
    level = max(max(levels) for _, levels in per_run)
    servers: list[str] = []
    for run, levels in per_run:
        servers += [name for name in servers_in(run, levels) if name not in servers]
    baseline = runs[0].settings["baseline"]
    labels = []
    for run, _ in per_run:
        labels += [f"{run.cpu_model} (`{run.run_id}`)", f"× {baseline}"]
    table = Table(f"{scenario} by machine", ["OK req/s", *labels])
    for name in servers:
        cells = []
        for _, levels in per_run:
            summary = levels.get(level, {}).get(name)
            base = levels.get(level, {}).get(baseline)
            if summary is None or summary.failed:
                cells += ["—", "—"]
                continue
            ratio = summary.ok_rps / base.ok_rps if base and not base.failed and base.ok_rps else None
            cells += [rate(summary.ok_rps), "—" if ratio is None else f"{ratio:.2f}"]
        table.add(name, cells)
    return [
        f"Side by side, c={level}, one machine per column pair (compare ranks, not absolute figures):",
        "",
        table,
        "",
    ]


SCALING_SCENARIOS = ("hello", f"s3-unary-{S3_LATENCY_MS}ms")


def processes_of(run: StudyRun, server: str) -> tuple[str, int]:
    """A variant's single-process sibling and the processes it ran, as the run recorded them:
    "aio-uvloop-p2" -> ("aio-uvloop", 2)."""
    count = run.processes(server)
    return (server.removesuffix(f"-p{count}"), count) if count > 1 else (server, 1)


def scaling(run: StudyRun) -> list[Block]:
    """Calls/s by process count for each stack whose multi-process variant was measured (given the CPUs)."""
    lines: list[Block] = []
    for scenario, levels in grouped(run).items():
        if scenario not in SCALING_SCENARIOS:
            continue
        top = max(levels)
        by_stack: dict[str, dict[int, float]] = {}
        for name, summary in levels[top].items():
            if not summary.failed:
                base, count = processes_of(run, name)
                by_stack.setdefault(base, {})[count] = summary.ok_rps
        counts = sorted({count for rates in by_stack.values() for count in rates if count > 1})
        measured = {base: rates for base, rates in by_stack.items() if 1 in rates and len(rates) > 1}
        if not counts or not measured:
            continue
        labels = ["1 process", *[f"{count} processes (×)" for count in counts]]
        lines += [f"Scaling, {scenario} at c={top}: OK calls/s by server processes, speed-up over one.", ""]
        table = Table(f"{scenario} scaling", ["stack", *labels])
        for base, rates in measured.items():
            cells = [rate(rates[1])]
            cells += [f"{rate(rates[c])} (×{rates[c] / rates[1]:.2f})" if c in rates else "—" for c in counts]
            table.add(base, cells)
        lines += [table, ""]
    return lines


# The question each decisive comparison answers, in the decision table.
