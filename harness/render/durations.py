"""How long each command takes, from the committed runs' wall times: one figure a command, computed here alone,
which results/README.md, each study's page and report.html read. A run's set-up (the virtualenv and tools, once
a machine) is not in its wall time."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.render.table import Block, Figure, Table
from harness.results.run_meta import RunMeta

BENCH = "make bench"


@dataclass(frozen=True)
class Duration:
    """The minutes a command took: the median of its committed runs, their least and most, and how many."""

    command: str
    minutes: float
    low: float
    high: float
    runs: int

    @property
    def text(self) -> str:
        """ "28 min (27.9 to 28.1 over 12 runs)", or "28 min (1 run)"."""
        if self.runs == 1:
            return f"{self.minutes:.0f} min (1 run)"
        return f"{self.minutes:.0f} min ({self.low:.1f} to {self.high:.1f} over {self.runs} runs)"

    def figure(self) -> Figure:
        return Figure(self.minutes, self.text, self.low, self.high, "min")


def durations(
    metas: Mapping[Path, RunMeta], default_studies: Sequence[str], commands: Mapping[str, str]
) -> dict[str, Duration]:
    """Per command, its minutes over the committed runs that ran it: `make bench` over the runs of every default
    study at the newest run's budget (an older budget is another command), and each other study's command over
    the runs of that study alone. commands: study -> the command that measures it alone."""
    taken: dict[str, list[float]] = {}
    timed = [meta for meta in metas.values() if meta.whole]
    bench = [meta for meta in timed if set(default_studies) <= meta.studies.keys()]
    if bench:
        budget = bench[-1].budget_seconds
        taken[BENCH] = [meta.wall_seconds / 60 for meta in bench if meta.budget_seconds == budget]
    for meta in timed:
        ran = meta.studies
        if len(ran) == 1 and (study := next(iter(ran))) not in default_studies and study in commands:
            taken.setdefault(commands[study], []).append(meta.wall_seconds / 60)
    return {
        command: Duration(command, statistics.median(minutes), min(minutes), max(minutes), len(minutes))
        for command, minutes in taken.items()
        if minutes
    }


def how_long(found: Mapping[str, Duration]) -> list[Block]:
    """results/README.md's section: each command's minutes."""
    if not found:
        return []
    table = Table("how long", ["command", "minutes of run"])
    for each in sorted(found.values(), key=lambda duration: (duration.command != BENCH, duration.command)):
        table.add(f"`{each.command}`", [each.figure()])
    return [
        "## How long",
        "",
        "Each command's minutes as its committed runs took them (the median, and the least and most), on the machines "
        "they ran on; set-up comes first, once a machine, and is not in them.",
        "",
        table,
        "",
    ]
