"""The leaderboards that open results/README.md: for each workload of the default run at 50 clients, every stack on
a row, fastest first, with its absolute figures as the run's machine gave them (OK calls/s with their interval, the
rate over the fastest, p50 and p99, the server's CPU a call, its peak memory), and the machine stated once above.
Made from the comparisons' views (harness.render.views), so a figure here is the one every other page shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.plan.wires import PLAINTEXT
from harness.render.summaries import rate
from harness.render.table import Block, Figure, Table
from harness.results.run_meta import RunMeta

# The workloads a leaderboard is drawn for, in order, with what each one's handler does.
BOARDS = {
    "hello": "no I/O",
    "hello-wait": "waiting 100 ms on I/O",
    "s3-unary-region": "an S3 listing a call, S3 100 ms away",
    "s3-stream-region": "that listing streamed",
    "s3-mongo-region": "S3 to MongoDB, S3 100 ms and MongoDB 1 ms away",
}
CLIENTS = 50
COLUMNS = ["stack", "OK calls/s [95% CI]", "× the fastest [95% CI]", "p50 ms", "p99 ms", "CPU ms a call", "RSS MiB"]


def boards(views: Sequence[Mapping[str, Any]], study: str = "stacks") -> list[Mapping[str, Any]]:
    """The study's comparisons at CLIENTS clients of the BOARDS workloads, in BOARDS' order."""
    found = {
        view["scenario"]: view
        for view in views
        if view["study"] == study and view["workload"] == f"{view['scenario']}/c{CLIENTS}"
    }
    return [found[name] for name in BOARDS if name in found]


def figure(value: float | None, form: str, unit: str) -> Figure:
    return Figure(value, "—" if value is None else format(value, form), unit=unit)


def board(view: Mapping[str, Any]) -> Table:
    """One workload's stacks, fastest first by their rate over the fastest's (paired by block, pooled over runs): the
    labels a team could pick (plaintext), each with its figures from the newest run."""
    ranked = view["ranked"].get(PLAINTEXT) or {"best": view["reference"], "to_best": {}}
    labels = [ranked["best"], *ranked["to_best"]]
    own = view["absolute"]
    table = Table(f"leaderboard {view['workload']}", list(COLUMNS))

    def standing(label: str) -> float:  # its rate over the fastest's, paired by block and pooled over runs
        found = ranked["to_best"].get(label)
        return 1.0 if found is None else float(found["value"])

    for label in sorted((label for label in labels if label in own), key=lambda label: -standing(label)):
        mine = own[label]
        high = "∞" if mine["rate_high"] is None else rate(mine["rate_high"])
        to_best = ranked["to_best"].get(label)
        table.add(
            label,
            [
                Figure(
                    mine["rate"],
                    f"{rate(mine['rate'])} [{rate(mine['rate_low'])}, {high}]",
                    mine["rate_low"],
                    mine["rate_high"],
                    "OK calls/s",
                ),
                Figure(1.0, "1", 1.0, 1.0, "×")
                if to_best is None
                else Figure(to_best["value"], to_best["text"], to_best["low"], to_best["high"], "×"),
                figure(mine.get("p50"), ".1f", "ms"),
                figure(mine.get("p99"), ".1f", "ms"),
                figure(mine.get("cpu_ms"), ".3f", "ms"),
                figure(mine.get("rss_mib"), ".0f", "MiB"),
            ],
        )
    return table


def machine_line(meta: RunMeta, runs: int) -> str:
    """The machine the boards were measured on, said once: its CPU, the cores the server had, its speed index at the
    run's start, and how many runs the ratios pool."""
    found = meta.machine.fingerprint if meta.machine else None
    cpu = (found.model_name if found else "") or meta.environment.cpu_model
    family = f"{found.family}/{found.model}/{found.stepping}" if found else ""
    start = meta.machine.speed.get("start") if meta.machine else None
    speed = start.python_seconds if start else None
    parts = [
        f"**Measured on** {cpu}" + (f" ({family})" if family else ""),
        f"{meta.environment.cpu_count} cores, the server pinned to {meta.server_cpus}",
        *([f"speed index {speed:.2f} s (a Python loop; lower is faster)"] if speed else []),
        f"run `{meta.run_id}`",
    ]
    pooled = f", pooled over {runs} runs" if runs > 1 else ""
    order = (
        f"Each board is ordered by × the fastest (paired by block{pooled}); its other figures are this run's own, so "
        "two stacks within each other's intervals may stand in either order by OK calls/s."
    )
    return "; ".join(parts) + ". " + order


# The machine line, then each workload's title and table: what both renderers draw.
Boards = tuple[str, list[tuple[str, Table]]]


def board_tables(views: Sequence[Mapping[str, Any]], meta: RunMeta | None) -> Boards:
    """The machine line and each workload's title and table; ("", []) where the default run has no board."""
    found = boards(views)
    if not found or meta is None:
        return "", []
    runs = max((label.get("runs", 1) for view in found for label in view["labels"]), default=1)
    titled = [(f"**{view['scenario']}**: {BOARDS[view['scenario']]}", board(view)) for view in found]
    return machine_line(meta, runs), titled


def leaderboards(machine: str, titled: Sequence[tuple[str, Table]]) -> list[Block]:
    """The leaderboards section of a markdown page (board_tables' machine line and tables): the machine, then a table
    a workload; nothing where the default run has none."""
    if not titled:
        return []
    lines: list[Block] = ["## Leaderboards at 50 clients", "", machine, ""]
    for title, table in titled:
        lines += [f"{title}.", "", table, ""]
    return lines
