"""A plan's shards made one run (issue 56): the shards of a plan that ran on one machine class become one run,
`<plan>` (a second class's, `<plan>-c2`, and so on: shards of different classes stay apart), its studies' cells and
comparisons the union of theirs (each shard measured its own comparisons, so no file is written twice), its
run.json their entries merged, and the shards listed with how each ended. Written beside, then renamed into place;
the shards' own folders go once the merged run stands. Report-side and offline: it reads and writes result files."""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.results.files import read_json, write_json_atomic
from harness.results.run_meta import RunMeta

SHARD_RUN = re.compile(r"^(?P<plan>.+)-s(?P<index>\d+)$")
PILOT = "pilot"  # a run's pilot folder (harness.method.pilot.NAME): read during the run only


def shard_runs(runs_dir: Path, plan: str) -> list[Path]:
    """The runs of a plan's shards under runs_dir, by shard number."""
    found = []
    for run in runs_dir.iterdir():
        match = SHARD_RUN.match(run.name)
        if match and match.group("plan") == plan and (run / "run.json").is_file():
            found.append((int(match.group("index")), run))
    return [run for _, run in sorted(found)]


def merged_entry(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A study's entries in its shards as one: complete only where every shard completed it; each target met only
    where every shard met it (its details those of the first that missed it, else the first's); the longest wall
    time."""
    first = dict(entries[0])
    statuses = [str(each.get("status", "pending")) for each in entries]
    targets: dict[str, Any] = {}
    for each in entries:
        for name, target in each.get("targets", {}).items():
            if name not in targets or (targets[name].get("met") and not target.get("met")):
                targets[name] = target
    return {
        **first,
        "status": "complete"
        if all(status == "complete" for status in statuses)
        else next(status for status in statuses if status != "complete"),
        "wall_seconds": max(float(each.get("wall_seconds", 0.0)) for each in entries),
        "targets": targets,
    }


def merged_meta(run_id: str, plan: str, metas: Sequence[Mapping[str, Any]], count: int) -> dict[str, Any]:
    """run.json of a plan's shards of one machine class as one run: the first shard's, with every study's entries
    merged, the longest wall time, complete only where every shard completed, and each shard listed."""
    first = dict(metas[0])
    names = list(dict.fromkeys(name for meta in metas for name in RunMeta.from_json(dict(meta)).studies))
    studies = {
        name: merged_entry([meta["studies"][name] for meta in metas if name in meta.get("studies", {})])
        for name in names
    }
    shards = [
        {"index": meta["shard"]["index"], "run": meta["run_id"], "status": meta.get("status", "")} for meta in metas
    ]
    complete = len(metas) == count and all(meta.get("status") == "complete" for meta in metas)
    return {
        **first,
        "run_id": run_id,
        "studies": studies,
        "status": "complete" if complete else "incomplete",
        "wall_seconds": max(float(meta.get("wall_seconds", 0.0)) for meta in metas),
        "shard": {"plan": plan, "count": count, "shards": shards},
    }


def merge_shards(runs_dir: Path, plan: str) -> list[Path]:
    """The plan's shards under runs_dir merged into one run per machine class (`<plan>`, then `<plan>-c2`, ...);
    the merged runs' folders."""
    shards = shard_runs(runs_dir, plan)
    if not shards:
        return []
    metas = {run: read_json(run / "run.json") for run in shards}
    count = int(next(iter(metas.values()))["shard"]["count"])
    classes: dict[str, list[Path]] = {}
    for run, meta in metas.items():
        classes.setdefault(RunMeta.from_json(meta).cpu_class, []).append(run)
    written = []
    for number, (_, runs) in enumerate(sorted(classes.items(), key=lambda each: each[1][0].name), start=1):
        run_id = plan if number == 1 else f"{plan}-c{number}"
        with tempfile.TemporaryDirectory(prefix=".merge-", dir=runs_dir) as scratch:
            merged = Path(scratch) / run_id
            merged.mkdir()
            for index, run in enumerate(runs):
                for part in run.iterdir():
                    if part.is_dir() and not (index and part.name == PILOT):  # the first shard's pilot stands
                        shutil.copytree(part, merged / part.name, dirs_exist_ok=True)
            write_json_atomic(merged / "run.json", merged_meta(run_id, plan, [metas[run] for run in runs], count))
            target = runs_dir / run_id
            if target.exists():
                shutil.rmtree(target)
            merged.rename(target)
        for run in runs:
            shutil.rmtree(run)
        written.append(target)
    return written
