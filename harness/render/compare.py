"""`python -m harness compare RUN_A RUN_B`: every cell two runs share, side by side (after pyperf compare_to).

Each cell's ratio B/A of OK calls/s comes with its 95% interval (Welch's t on the log rates of the cells'
runs, which were not paired); as criterion does, a change is declared only when the interval lies wholly outside
the tie band of run B (faster, slower), a tie when it lies inside, unresolved otherwise. Runs from different CPU
models are compared all the same, with a warning first. Then each ratio in blocks the runs share, B's against A's,
with the spread between the two runs counted (`ratio_changes`): whether it moved beyond what their days explain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.analysis.judging import judged_by_workload, without_controls
from harness.method.pooling import change_between, typical_spread
from harness.method.verdicts import FASTER, SLOWER, TIE, Interval, interval, paired_ratios, unpaired_interval, verdict
from harness.render.summaries import CellSummary, ms, rate
from harness.render.wording import ratio_text
from harness.results.records import load_study, read_meta


def _label(run: Path) -> tuple[str, str]:
    meta = read_meta(run)
    return meta.run_id, meta.environment.cpu_model


def _summaries(run: Path, study: str) -> dict[str, CellSummary]:
    loaded = load_study(run, study)
    return {
        f"{study}/{cell.record.key}": summary
        for cell in loaded.cells
        if not (summary := CellSummary(without_controls(cell), loaded.meta)).failed
    }


def change(a: CellSummary, b: CellSummary) -> Interval | None:
    """B's OK rate over A's with its 95% interval, from every run of each cell; None without OK calls."""
    rates_a = [report.ok_rps for report in a.reports if report.ok_rps > 0]
    rates_b = [report.ok_rps for report in b.reports if report.ok_rps > 0]
    return unpaired_interval(rates_a, rates_b) if rates_a and rates_b else None


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or a == 0 else f"{b / a:.2f}"


HEAD = ("cell", "A OK calls/s", "B OK calls/s", "B/A [95% CI]", "A p99", "B p99", "B/A p99", "verdict")
VERDICTS = ("faster", "slower", "tie", "unresolved")


def compare_rows(run_a: Path, run_b: Path, studies: Sequence[str] | None = None) -> dict[str, Any]:
    """Every cell the runs share (of `studies`, default all), as rows of HEAD, with the runs' ids and CPU models,
    the tie band, the count of each verdict and the geometric mean of B/A."""
    (id_a, cpu_a), (id_b, cpu_b) = _label(run_a), _label(run_b)
    theirs = read_meta(run_b)
    shared_studies = [s for s in read_meta(run_a).studies if s in theirs.studies and (studies is None or s in studies)]
    tie = theirs.judged_by.tie
    rows: list[tuple[str, ...]] = []
    ratios = []
    for study in shared_studies:
        cells_a, cells_b = _summaries(run_a, study), _summaries(run_b, study)
        for key in [key for key in cells_a if key in cells_b]:
            a, b = cells_a[key], cells_b[key]
            if a.ok_rps and b.ok_rps:
                ratios.append(b.ok_rps / a.ok_rps)
            p99_a, p99_b = a.percentile(99), b.percentile(99)
            found = change(a, b)
            rows.append(
                (
                    key,
                    rate(a.ok_rps),
                    rate(b.ok_rps),
                    "—" if found is None else ratio_text(found),
                    ms(p99_a),
                    ms(p99_b),
                    _ratio(p99_a, p99_b),
                    "—" if found is None else verdict(found, tie),
                )
            )
    return {
        "a": {"run": id_a, "machine": cpu_a},
        "b": {"run": id_b, "machine": cpu_b},
        "head": HEAD,
        "rows": rows,
        "tie": tie,
        "counts": {name: sum(1 for row in rows if row[-1] == name) for name in VERDICTS},
        "mean": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan"),
    }


RATIO_HEAD = (
    "comparison",
    "label",
    "A ratio [95% CI]",
    "B ratio [95% CI]",
    "B/A [95% CI, with the runs' spread]",
    "verdict",
)
MOVED = {FASTER: "moved up", SLOWER: "moved down", TIE: "held"}  # else: within the runs' spread


def ratio_changes(run_a: Path, run_b: Path, studies: Sequence[str]) -> dict[str, Any]:
    """Every ratio in blocks the runs share (each alternative over its reference, paired by block): A's, B's, and
    B's over A's with an interval that counts the between-run spread typical of these two runs (the median over
    their shared ratios of each one's tau), so that "moved" means more than two days on this machine explain."""
    pairs: list[tuple[str, str, list[float], list[float]]] = []
    for study in studies:
        found_a, found_b = judged_by_workload(load_study(run_a, study)), judged_by_workload(load_study(run_b, study))
        for workload in [each for each in found_a if each in found_b]:
            reference, twin = found_a[workload].record.reference, found_a[workload].record.control
            rates_a, rates_b = found_a[workload].rates, found_b[workload].rates
            for label in [each for each in rates_b if each not in (reference, twin) and each in rates_a]:
                ratios_a, ratios_b = paired_ratios(rates_a, label, reference), paired_ratios(rates_b, label, reference)
                if len(ratios_a) >= 2 and len(ratios_b) >= 2:
                    pairs.append((f"{study}/{workload}", f"{label} × {reference}", ratios_a, ratios_b))
    tau = typical_spread([[a, b] for _, _, a, b in pairs])
    tie = read_meta(run_b).judged_by.tie
    rows = []
    for where, label, ratios_a, ratios_b in pairs:
        moved = change_between(ratios_a, ratios_b, tau)
        said = MOVED.get(verdict(moved, tie), "within the runs' spread")
        rows.append(
            (where, label, ratio_text(interval(ratios_a)), ratio_text(interval(ratios_b)), ratio_text(moved), said)
        )
    note = (
        f"Each B/A interval counts the runs' spread (±{math.expm1(tau):.1%}, the median between-run spread of their "
        "shared ratios): 'moved' is a change beyond what two days on this machine explain and the tie band, 'held' "
        "one inside the band."
    )
    return {"head": RATIO_HEAD, "rows": rows, "tau": tau, "tie": tie, "note": note}


def _aligned(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    return [
        "  ".join(
            value.ljust(width) if i == 0 else value.rjust(width)
            for i, (value, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in (head, *rows)
    ]


def compare(run_a: Path, run_b: Path) -> str:
    """The comparison as text: a warning if the CPU models differ, a table, and a geometric mean."""
    found = compare_rows(run_a, run_b)
    (id_a, cpu_a), (id_b, cpu_b) = found["a"].values(), found["b"].values()
    lines = [f"A: {id_a} ({cpu_a})", f"B: {id_b} ({cpu_b})"]
    if cpu_a != cpu_b:
        lines.append(
            f"warning: the runs come from different CPU models ({cpu_a} vs {cpu_b}): "
            "absolute figures do not compare; ranks may."
        )
    rows = found["rows"]
    if not rows:
        lines.append("the runs share no measured cell")
        return "\n".join(lines) + "\n"
    lines += _aligned(HEAD, rows)
    counts = found["counts"]
    lines.append(
        f"{len(rows)} shared cells, tie band 1 ± {found['tie']:.0%}: B faster in {counts['faster']}, slower in "
        f"{counts['slower']}, a tie in {counts['tie']}, unresolved in {counts['unresolved']}; geometric mean of "
        f"B/A OK calls/s: {found['mean']:.2f}"
    )
    shared = [s for s in read_meta(run_a).studies if s in read_meta(run_b).studies]
    moved = ratio_changes(run_a, run_b, shared)
    if moved["rows"]:
        lines += ["", "Ratios in blocks, each alternative over its reference paired by block: B's against A's"]
        lines += _aligned(moved["head"], moved["rows"])
        lines.append(moved["note"])
    return "\n".join(lines) + "\n"
