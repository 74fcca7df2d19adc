"""`python -m harness compare RUN_A RUN_B`: every cell two runs share, side by side (after pyperf compare_to).

A difference counts as significant when it is larger than the spread (highest minus lowest run) of
both cells. Runs from different CPU models are compared all the same, with a warning first.
"""

from __future__ import annotations

import math
from pathlib import Path

from harness.results import load_study, read_json, studies_in
from harness.summaries import CellSummary, ms, rate


def _label(run: Path) -> tuple[str, str]:
    meta = read_json(run / "run.json")
    return str(meta["run_id"]), str(meta["environment"]["cpu_model"])


def _summaries(run: Path, study: str) -> dict[str, CellSummary]:
    loaded = load_study(run, study)
    return {
        f"{study}/{cell.record.key}": summary
        for cell in loaded.cells
        if not (summary := CellSummary(cell, loaded.meta)).failed
    }


def significant(a: CellSummary, b: CellSummary) -> bool:
    """True when the medians differ by more than either cell's spread between its runs."""
    widths = [high - low for low, high in (a.ok_rps_range, b.ok_rps_range)]
    return abs(b.ok_rps - a.ok_rps) > max(widths)


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or a == 0 else f"{b / a:.2f}"


def compare(run_a: Path, run_b: Path) -> str:
    """The comparison as text: a warning if the CPU models differ, a table, and a geometric mean."""
    (id_a, cpu_a), (id_b, cpu_b) = _label(run_a), _label(run_b)
    lines = [f"A: {id_a} ({cpu_a})", f"B: {id_b} ({cpu_b})"]
    if cpu_a != cpu_b:
        lines.append(
            f"warning: the runs come from different CPU models ({cpu_a} vs {cpu_b}): "
            "absolute figures do not compare; ranks may."
        )
    shared_studies = [
        s for s in studies_in(read_json(run_a / "run.json")) if s in studies_in(read_json(run_b / "run.json"))
    ]
    rows: list[tuple[str, ...]] = []
    ratios = []
    for study in shared_studies:
        cells_a, cells_b = _summaries(run_a, study), _summaries(run_b, study)
        for key in [key for key in cells_a if key in cells_b]:
            a, b = cells_a[key], cells_b[key]
            if a.ok_rps and b.ok_rps:
                ratios.append(b.ok_rps / a.ok_rps)
            p99_a, p99_b = a.percentile(99), b.percentile(99)
            verdict = "significant" if significant(a, b) else "within spread"
            rows.append(
                (
                    key,
                    rate(a.ok_rps),
                    rate(b.ok_rps),
                    _ratio(a.ok_rps, b.ok_rps),
                    ms(p99_a),
                    ms(p99_b),
                    _ratio(p99_a, p99_b),
                    verdict,
                )
            )
    if not rows:
        lines.append("the runs share no measured cell")
        return "\n".join(lines) + "\n"
    head = ("cell", "A OK calls/s", "B OK calls/s", "B/A", "A p99", "B p99", "B/A p99", "difference")
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    for row in (head, *rows):
        lines.append(
            "  ".join(
                value.ljust(width) if i == 0 else value.rjust(width)
                for i, (value, width) in enumerate(zip(row, widths, strict=True))
            )
        )
    faster = sum(1 for row in rows if row[-1] == "significant" and float(row[3]) > 1)
    slower = sum(1 for row in rows if row[-1] == "significant" and float(row[3]) < 1)
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    lines.append(
        f"{len(rows)} shared cells: B significantly faster in {faster}, slower in {slower}; "
        f"geometric mean of B/A OK calls/s: {mean:.2f}"
    )
    return "\n".join(lines) + "\n"
