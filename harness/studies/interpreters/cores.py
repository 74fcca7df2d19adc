"""The interpreters study's cores comparisons told: OK calls per busy server core, cores busy, and how a server's
processes shared the calls and the CPU."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.costs import block_calls_per_core
from harness.analysis.judging import Judged
from harness.render.table import Block, Cell, Figure, Table, interval_figure
from harness.render.wording import rate_text
from harness.results.records import CellResult
from harness.studies.interpreters import CORES_LEVEL


def shared_by_process(columns: Sequence[Sequence[float]]) -> list[float]:
    """Each process's share of a total, summed over windows whose lists run most first; [] where none."""
    width = max((len(each) for each in columns), default=0)
    summed = [sum(each[rank] for each in columns if rank < len(each)) for rank in range(width)]
    total = sum(summed)
    return [each / total for each in summed] if total > 0 else []


def shares_text(shares: Sequence[float]) -> str:
    """Each process's share as the page says it: "52% / 48%"."""
    return " / ".join(f"{100 * each:.0f}%" for each in shares)


def _shares(columns: Sequence[Sequence[float]]) -> Figure:
    """Each process's share of a total, drawn as the table says it ("52% / 48%"): its value the busiest's share
    in %, its range the idlest's to the busiest's; "—" where none."""
    found = shared_by_process(columns)
    if not found:
        return Figure(None, "—")
    return Figure(100 * found[0], shares_text(found), 100 * found[-1], 100 * found[0], "% of the whole, busiest")


ONE_PROCESS = Figure(100.0, "one process", unit="% of the whole, busiest")


def _core_use(cell: CellResult) -> list[Cell] | None:
    """A cores cell over its round windows: OK calls/s per busy server core with its interval, the median cores
    busy, and how its processes shared the calls (their own counters) and the CPU (the whole tree's)."""
    per_core = block_calls_per_core(cell)
    windows = [repeat for repeat in cell.record.repeats if repeat.role == "round" and repeat.resources.wall_seconds]
    if per_core is None or not windows:
        return None
    busy = sorted(repeat.resources.cpu_seconds / repeat.resources.wall_seconds for repeat in windows)
    several = any(repeat.resources.process_cpu_seconds for repeat in windows)
    middle = busy[len(busy) // 2]
    return [
        interval_figure(per_core, rate_text(per_core), "OK calls/s a core"),
        Figure(middle, f"{middle:.2f}", unit="cores"),
        _shares([repeat.process_calls for repeat in windows]) if several else ONE_PROCESS,
        _shares([repeat.resources.process_cpu_seconds for repeat in windows]) if several else ONE_PROCESS,
    ]


def cores_table(judgeds: Sequence[Judged]) -> list[Block]:
    """Per cores comparison and label: OK calls/s per busy server core, cores busy, and the processes' shares of
    the calls and of the CPU."""
    heads = ["OK calls/s per busy core [95% CI]", "server cores busy", "calls by process", "CPU by process"]
    table = Table("cores", ["stack, serving", *heads])
    for judged in judgeds:
        if judged.record.topic != "cores":
            continue
        stack = judged.record.workload.split("/")[1]
        for label, cell in judged.cells.items():
            measured = _core_use(cell)
            if measured is not None:
                table.add(f"{stack}, {label}", measured)
    if not table.rows:
        return []
    return [
        f"How the cores served hello-work at {CORES_LEVEL} workers, the server free to use every CPU, over each "
        "label's windows: OK calls per second of one busy server core (its interval over the windows), the median "
        "cores busy, and how the processes shared the calls (each counts the calls it took) and the CPU (the whole "
        "process tree, a launcher included), the busiest first. SO_REUSEPORT spreads connections, not calls: one "
        "shared connection goes to one process.",
        "",
        table,
        "",
    ]
