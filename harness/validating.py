"""`python -m harness validate`: how often intervals and the selection rule drawn from a few blocks of the
committed many-block runs keep their claims, written to results/validation.json for the trust rule, and printed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from harness.analysis.read_back import many_blocks
from harness.method.validation import (
    ALL_CLASSES,
    BLOCKS_DRAWN,
    GOOD,
    KEPT,
    LEAST_BLOCKS,
    LEAST_CLASS_RUNS,
    Calibration,
    ManyBlocks,
    coverage,
    held,
)
from harness.results.calibration import NAME as CALIBRATION
from harness.results.calibration import write_calibration
from harness.results.records import all_runs, read_meta


def validate_command(out_dir: Path, draws: int, seed: int) -> int:
    """How often moderated intervals and the selection rule drawn from 2, 3, 4 and 6 blocks of the committed
    many-block runs keep their claims, by machine class and over all (harness.method.validation), written to
    results/validation.json for the trust rule; then how plain, moderated and weighted intervals compare, by rate
    and by CPU per call."""
    runs = {run.name: comparisons for run in all_runs(out_dir) if (comparisons := many_blocks(run))}
    if not runs:
        raise FileNotFoundError(f"no run under {out_dir / 'runs'} has a comparison of {LEAST_BLOCKS} blocks or more")
    classes: dict[str, list[str]] = {}
    for name in runs:
        classes.setdefault(read_meta(out_dir / "runs" / name).cpu_class, []).append(name)
    drawn_from = {**classes, ALL_CLASSES: list(runs)}
    found = Calibration(
        {
            name: tuple(held([runs[run] for run in names], drawn, draws, seed) for drawn in BLOCKS_DRAWN)
            for name, names in drawn_from.items()
        }
    )
    print(
        f"Runs with a comparison of {LEAST_BLOCKS} blocks or more: {len(runs)} on {len(classes)} machine classes; "
        f"{draws} draws of {', '.join(map(str, BLOCKS_DRAWN))} blocks each. compatible: a moderated interval from the "
        "drawn blocks and the mean of the blocks left out agree within both their errors (an exact 95% interval: 95%; "
        f"kept at {KEPT:.0%}); good selection: a certified pick lies within 5% of the best by all the blocks "
        f"(kept at {GOOD:.0%}). A row resting on so many blocks is trusted where its class keeps both, judged by its "
        f"own figures from {LEAST_CLASS_RUNS} runs on and by every class's together before that."
    )
    print_columns(
        ("machine class", "runs", "blocks", "intervals", "compatible", "A/A twins", "good selection", "trusted"),
        [
            (
                name,
                str(len(drawn_from[name])),
                str(each.blocks),
                str(each.intervals),
                share_text(each.compatible),
                share_text(each.twins),
                share_text(each.good),
                ("yes" if each.holds else "no" if each.measured else "not measured")
                + ("" if each.own or name == ALL_CLASSES else ", judged by all"),
            )
            for name, figures in found.by_class.items()
            for each in figures
        ],
    )
    path = out_dir / CALIBRATION
    write_calibration(path, found, drawn_from, draws, seed)
    print(f"\nwritten: {path}")
    every = list(runs.values())
    print(
        "\nThe ways of making an interval, over every run: held is the share holding the mean of the blocks left out."
    )
    print_coverage(every, draws, seed)
    costs = [comparisons for run in all_runs(out_dir) if (comparisons := many_blocks(run, by_cost=True))]
    print(
        f"\nThe same by calls per server CPU second, as a row whose driver set the rates reads it: {len(costs)} runs."
    )
    print_coverage(costs, draws, seed)
    return 0


def share_text(value: float) -> str:
    """A share as a percentage, or "no interval" where none was measured."""
    return f"{value:.1%}" if math.isfinite(value) else "no interval"


def print_coverage(runs: Sequence[list[ManyBlocks]], draws: int, seed: int) -> None:
    """Each way of making intervals from each number of blocks drawn, over these runs: how often it held the blocks
    left out, was compatible with them, and how wide it was."""
    head = ("blocks", "intervals", "method", "held", "compatible", "half-width")
    lines = [
        (
            str(drawn),
            str(each.intervals),
            each.method,
            share_text(each.held),
            share_text(each.compatible),
            f"±{each.half_width:.1%}" if math.isfinite(each.half_width) else "no interval",
        )
        for drawn in BLOCKS_DRAWN
        for each in coverage(runs, drawn, draws, seed)
    ]
    print_columns(head, lines)


def print_columns(head: Sequence[str], lines: Sequence[Sequence[str]]) -> None:
    """A table in aligned columns, its head first."""
    widths = [max(len(line[i]) for line in (head, *lines)) for i in range(len(head))]
    for line in (head, *lines):
        print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())
