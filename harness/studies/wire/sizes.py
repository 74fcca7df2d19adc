"""The wire study's message sizes: each stack's rate, the payload it moved and its p99 at every size, as a table
and a chart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from harness.analysis.costs import block_ms_per_call
from harness.analysis.judging import Judged
from harness.method.moderation import NO_PRIOR
from harness.method.verdicts import Interval, interval
from harness.plan.sizes import REPLY, SIZE_SCENARIOS, SIZED, size_label
from harness.render.summaries import CellSummary, chart_title, ms
from harness.render.table import Block, Cell, Figure, Table
from harness.render.vega import BYTES, Axis, Dash, lines, png
from harness.results.records import CellResult, StudyRun, loop_lag_ms
from harness.studies.wire import LAG_FROM, SIZE_LEVEL
from servers.diagnostics import LAG_INTERVAL

MB = 1e6


class Sized(NamedTuple):
    """What one label of a size comparison moved."""

    scenario: str
    label: str
    rates: Interval  # OK calls/s over its rounds
    cost: float | None  # the server's median CPU ms per call
    p99: float | None  # seconds, pooled over its windows; None where too few calls
    lag_ms: float | None = None  # how late the server's loop woke, on average (None: a thread pool, or not counted)


def block_lag_ms(cell: CellResult) -> float | None:
    """How late the server's event loop woke on average over a cell's block windows, in ms (loop_lag_ms)."""
    windows = [repeat.server_counters for repeat in cell.record.repeats if repeat.role == "round"]
    counted = [each for each in windows if each]
    return loop_lag_ms({key: sum(each.get(key, 0.0) for each in counted) for key in ("lag_checks", "lag_seconds")})


def sized_of(run: StudyRun, judgeds: Sequence[Judged]) -> list[Sized]:
    """Every label of the size comparisons."""
    found = []
    for judged in judgeds:
        for label, cell in judged.cells.items():
            rates = list(judged.rates.get(label, {}).values())
            if cell.record.scenario not in SIZED or not rates:
                continue
            p99 = CellSummary(cell, run.meta).percentile(99)
            cost = block_ms_per_call(cell)
            own = interval(rates, 0.95, judged.rate_priors.get(label, NO_PRIOR))  # moderated, as judging.absolute
            found.append(Sized(cell.record.scenario, label, own, cost, p99, block_lag_ms(cell)))
    return found


def _moved(sized: Sized) -> Figure:
    """MB/s of payload with its interval, the server's CPU per MB and p99, and its loop's lag where counted; at 0
    bytes, calls/s and CPU per call. Its number is the MB/s (the calls/s at 0 bytes) with its interval."""
    rates, cost, size = sized.rates, sized.cost, SIZED[sized.scenario][1]
    high = rates.high if math.isfinite(rates.high) else math.inf
    bounded = None if math.isinf(high) else high
    if size == 0:
        per_call = "—" if cost is None else f"{cost:.3f} ms per call"
        text = f"{rates.value:,.0f} [{rates.low:,.0f}, {high:,.0f}] calls/s, {per_call}, {ms(sized.p99)}"
        return Figure(rates.value, text, rates.low, bounded, "OK calls/s")
    megabytes = size / MB
    per_mb = "—" if cost is None else f"{cost / megabytes:,.1f}"
    moved = f"{rates.value * megabytes:,.1f} [{rates.low * megabytes:,.1f}, {high * megabytes:,.1f}]"
    lag = "" if sized.lag_ms is None else f", loop {sized.lag_ms:,.1f} ms late"
    text = f"{moved}, {per_mb}, {ms(sized.p99)}{lag}"
    scaled = None if bounded is None else bounded * megabytes
    return Figure(rates.value * megabytes, text, rates.low * megabytes, scaled, "MB/s")


def size_table(sized: Sequence[Sized], direction: str) -> list[Block]:
    """MB/s of reply (or request) payload by stack and wire (rows) and size (columns), with the server's CPU per
    MB and p99."""
    names = [
        each.name
        for each in SIZE_SCENARIOS
        if SIZED[each.name][0] == direction and any(found.scenario == each.name for found in sized)
    ]
    if not names:
        return []
    sizes = [SIZED[name][1] for name in names]
    lag = {size: ", loop lag" if size >= LAG_FROM else "" for size in sizes}
    heads = [f"{size_label(size)}: MB/s [95% CI], server CPU ms per MB, p99{lag[size]}" for size in sizes]
    table = Table(f"{direction} sizes", ["stack", *heads])
    for label in dict.fromkeys(found.label for found in sized if found.scenario in names):
        values: list[Cell] = []
        for name in names:
            match = [found for found in sized if (found.scenario, found.label) == (name, label)]
            values.append(_moved(match[0]) if match else "—")
        table.add(label, values)
    return [
        f"{direction.capitalize()} payload moved, at {SIZE_LEVEL} workers (loadgen) on one connection per HTTP/2 "
        "stack (one per worker for REST on HTTP/1.1), by stack in plaintext and over TLS: the OK calls/s times the "
        f"{direction}'s bytes, with the interval of the label's rate over its rounds, the server's CPU "
        "milliseconds per MB moved (median over its windows), and the p99 latency of the OK calls of all its "
        f"windows; at 0 bytes, calls/s and CPU per call. From {size_label(LAG_FROM)} on, an event-loop server "
        f"also says how late its loop woke on average, by a {LAG_INTERVAL * 1000:.0f} ms sleep it keeps on the "
        "loop: how long a message held every other call up (a thread pool has no loop).",
        "",
        table,
        "",
    ]


def size_chart(run: StudyRun, sized: Sequence[Sized]) -> bytes:
    """MB/s against reply size, one line per stack and wire (a stack's colour, TLS dashed), each point's 95%
    interval drawn; replies of 0 bytes move none and are left off the logarithmic axes."""
    points: list[dict[str, Any]] = [
        {
            "stack": found.label.split("+")[0],
            "wire": "TLS" if "+" in found.label else "plaintext",
            "size": size,
            "rate": found.rates.value * size / MB,
            "low": found.rates.low * size / MB,
            "high": (found.rates.high if math.isfinite(found.rates.high) else found.rates.value) * size / MB,
        }
        for found in sized
        if SIZED[found.scenario][0] == REPLY and (size := SIZED[found.scenario][1]) > 0 and found.rates.value > 0
    ]
    drawn = lines(
        sorted(points, key=lambda point: point["size"]),
        Axis("size", "reply payload", log=True, base=2, ticks=sorted({p["size"] for p in points}), labels=BYTES),
        Axis("rate", "MB/s of payload (OK calls only), 95% CI", log=True),
        "stack",
        dash=Dash("wire", "plaintext", "TLS"),
        bounds=True,
    )
    return png(drawn, chart_title(run, f"Reply payload moved at {SIZE_LEVEL} workers"))
