"""The brief's tables, from a run of its matrix in blocks: for each scenario a table across the levels (each stack's
OK calls/s with its interval, and its ratio to the reference with the verdict) and a chart of rate and p99 against
clients (harness.studies.stacks.brief makes its decision rows)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.judging import (
    Judged,
    absolute,
)
from harness.method.verdicts import Interval
from harness.plan.servers import is_floor
from harness.render.table import Block, Cell, Table, interval_figure
from harness.render.vega import clients_layers, png, side_by_side
from harness.render.views import absolute_row
from harness.render.wording import rate_text, ratio_text


def by_topic(judgeds: Sequence[Judged]) -> dict[str, dict[int, Judged]]:
    """Each scenario's comparisons by level (one connection each; other ways of connecting left out)."""
    found: dict[str, dict[int, Judged]] = {}
    for judged in judgeds:
        cell = judged.cells.get(judged.record.reference)
        if cell is None or cell.record.connections != "shared":
            continue
        found.setdefault(judged.record.topic, {})[cell.record.concurrency] = judged
    return {topic: dict(sorted(levels.items())) for topic, levels in found.items()}


def stacks_of(levels: dict[int, Judged]) -> list[str]:
    """The stacks measured at any level, the reference first, floors and the A/A twin left out."""
    found: dict[str, None] = {}
    for judged in levels.values():
        found |= dict.fromkeys([judged.record.reference, *judged.record.alternatives])
    return [label for label in found if not is_floor(label)]


def own_rate(judged: Judged, label: str) -> Interval | None:
    """A label's own OK calls/s over its blocks, moderated as the comparison's table gives it (judging.absolute)."""
    found = absolute(judged, label)
    return None if found is None else found.rate


def across_levels(topic: str, levels: dict[int, Judged]) -> list[Block]:
    """One table for a scenario across its levels: each stack's OK calls/s [95% CI], then over the reference with the
    verdict, per level."""
    stacks = stacks_of(levels)
    reference = next(iter(levels.values())).record.reference
    table = Table(f"{topic} across levels", ["stack", *[f"c={level}" for level in levels]])
    for stack in stacks:
        cells: list[Cell] = []
        for judged in levels.values():
            found = own_rate(judged, stack)
            if found is None:
                cells.append("—")
                continue
            outcome = judged.outcome(stack)
            against = "" if outcome is None else f"× {ratio_text(outcome.ratio)} {outcome.verdict}"
            against = "reference" if stack == reference else against
            cells.append(interval_figure(found, f"{rate_text(found)} {against}", "OK calls/s"))
        table.add(stack, cells)
    return [
        f"**{topic} across levels**: OK calls/s [95% CI] and × {reference} [95% CI] with the verdict, by clients.",
        "",
        table,
        "",
    ]


def chart(topic: str, levels: dict[int, Judged], title: str) -> bytes:
    """OK calls/s (with 95% intervals) and p99 latency against clients, a line a stack, as the page's "which stack"
    view draws them."""
    by_clients = {
        str(level): [
            {"stack": stack, **absolute_row(judged, stack)} for stack in stacks_of(levels) if judged.rates.get(stack)
        ]
        for level, judged in levels.items()
    }
    rates = clients_layers(by_clients, "rate", f"{topic}: OK calls/s, 95% CI")
    p99 = clients_layers(by_clients, "p99", f"{topic}: p99 latency (every OK call pooled)")
    return png(side_by_side(rates, p99), title)
