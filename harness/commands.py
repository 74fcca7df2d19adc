"""The harness's commands, each a plain function a test can call: what `python -m harness` runs once the
command line is parsed (harness.cli)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from harness.analysis.judging import run_verdicts
from harness.method.soak_verdict import passed
from harness.plan import pythons, virtualenvs
from harness.plan.matrix import SCENARIOS, Cell
from harness.plan.options import RunOptions
from harness.plan.servers import MINIMAL_VARIANTS, REST_VARIANTS, SERVER_VARIANTS, ServerVariant
from harness.render.compare import compare
from harness.render.lines import answer_line
from harness.render.markdown import render_report, write_report
from harness.render.soak import checks_text, draw_soak, load_line
from harness.render.targets import missed_targets
from harness.render.wording import pilot_text, ratio_text
from harness.results.archive import pack
from harness.results.records import CellRecord, all_runs, resolve_run
from harness.run.backends import seed_bucket, start_backends
from harness.run.pilot import measure_noise
from harness.run.provenance import cpu_model
from harness.run.runner import failed_gates, run_all
from harness.run.soak import soak
from harness.run.tools import ensure_all
from harness.studies import DEFAULT_STUDIES, STUDIES, plan
from harness.studies.choosing import chosen_studies, with_interpreters
from scenarios.config import BackendConfig
from servers.common import StopSignal


def tools() -> int:
    """Install every pinned tool into the cache and say where."""
    for name, path in ensure_all().items():
        print(f"{name:20} {path}")
    return 0


def seed(bucket: str, objects: int) -> int:
    """Seed the bucket named in the environment's S3 (AWS_ENDPOINT_URL, or real AWS)."""
    written = seed_bucket(BackendConfig.from_env(), bucket, objects)
    print(f"bucket {bucket}: {objects} objects ({written} written now)")
    return 0


def backends(bucket: str, objects: int) -> int:
    """Start the embedded backends, seed the bucket, print their environment, wait for Ctrl-C."""
    with start_backends(os.environ) as started:
        seed_bucket(started.config, bucket, objects)
        print("# backends are up; in another shell:")
        for name, value in started.env().items():
            print(f"export {name}={shlex.quote(value)}")
        print("# Ctrl-C stops them", flush=True)
        StopSignal().wait()
    return 0


def servers() -> int:
    """List the registered server variants: gRPC, REST, then each stack's floor (hello alone)."""
    for variant in (*SERVER_VARIANTS, *REST_VARIANTS, *MINIMAL_VARIANTS):
        slots = "unbounded" if variant.slots is None else str(variant.slots)
        print(f"{variant.name:26} {variant.command:58} slots={slots:10} {variant.description}")
    return 0


def scenarios() -> int:
    """List the scenarios."""
    for each in SCENARIOS:
        print(f"{each.name:12} {each.call:38} {each.description}")
    return 0


def studies(out_dir: Path) -> int:
    """List the studies: name, question, default axes, driver, and how many cells they expand to."""
    options = RunOptions(out_dir)
    for each in STUDIES:
        default = " (default)" if each.name in DEFAULT_STUDIES else ""
        planned = plan(each.name)
        print(f"{each.name}{default}: {each.question}")
        print(f"  follows {each.follows}")
        full = f"{len(planned.cells(replace(options, full=True)))} cells, {planned.repeats} measured runs each"
        compared = planned.comparisons(options)
        if compared:
            cells = sum(len(each.cells) for each in compared)
            print(f"  driver {planned.driver}; {len(compared)} comparisons of {cells} cells in rounds; --full: {full}")
        else:
            print(f"  driver {planned.driver}; {full}")
        for axis in planned.axes:
            print(f"  {axis.name:12} {axis.option:14} {', '.join(axis.values)}")
    return 0


def verdicts_command(out_dir: Path, run: str | None, as_json: bool) -> int:
    """Print every comparison of a run (default: the newest) as a JSON list or a table."""
    runs = all_runs(out_dir)
    if run is None and not runs:
        raise FileNotFoundError(f"no run under {out_dir / 'runs'}: run `python -m harness run-all` first")
    run_dir = resolve_run(out_dir, run) if run else runs[-1]
    found = run_verdicts(run_dir)
    if as_json:
        print(json.dumps([each.to_json() for each in found], indent=2))
        return 0
    if not found:
        print(f"run {run_dir.name} holds no comparison in rounds")
        return 0
    head = ("study", "workload", "alternative", "reference", "ratio [95% CI]", "verdict", "runs", "this run alone")
    rows = [
        (
            each.study,
            each.workload,
            each.alternative + (" (A/A)" if each.control else ""),
            each.reference,
            ratio_text(each.ratio),
            each.verdict,
            str(each.runs),
            f"{ratio_text(each.alone)} {each.alone_verdict}" if each.alone else "",
        )
        for each in found
    ]
    widths = [max(len(line[i]) for line in (head, *rows)) for i in range(len(head))]
    for line in (head, *rows):
        print("  ".join(value.ljust(width) for value, width in zip(line, widths, strict=True)).rstrip())
    return 0


def compare_command(out_dir: Path, run_a: str, run_b: str) -> int:
    """Print every cell two runs share, with ratios and significance."""
    print(compare(resolve_run(out_dir, run_a), resolve_run(out_dir, run_b)), end="")
    return 0


class ProgressDisplay:
    """A rich progress bar with the current cell and the time left, and one line per finished cell."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
        )
        self._task = self._progress.add_task("starting backends", total=None)
        self._study = ""

    def __enter__(self) -> ProgressDisplay:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._progress.stop()

    def planned(self, text: str) -> None:
        self._console.log(f"planned: {text}")

    def study_started(self, name: str, cells: int) -> None:
        self._study = name
        self._progress.reset(self._task, total=cells, description=f"{name}: starting")

    def cell_started(self, cell: Cell, index: int, total: int) -> None:
        self._progress.update(self._task, description=f"{self._study}: {cell.key}", total=total)

    def block_finished(self, study: str, workload: str, blocks: int, still_open: int, seconds_left: float) -> None:
        ends = (datetime.now(UTC) + timedelta(seconds=seconds_left)).strftime("%H:%M UTC")
        self._console.log(
            f"{study} {workload}: block {blocks} done; {still_open} comparisons still open; "
            f"the run should end about {ends} ({seconds_left / 60:.0f} min)"
        )

    def cell_finished(self, cell: Cell, record: CellRecord) -> None:
        self._progress.advance(self._task)
        if record.status != "ok":
            self._console.log(
                f"{'[yellow]' if record.status == 'skipped' else '[red]'}{cell.key}: {record.status}: {record.reason}"
            )
            return
        runs = f"{len(record.repeats)} x {record.repeats[0].requests} requests" if record.repeats else "no runs"
        self._console.log(
            f"{cell.key}: {runs} in {record.seconds:.0f} s (warm-up {record.warmup_ok_rps:,.1f} OK req/s)"
        )


def run_all_command(options: RunOptions) -> int:
    """Run the studies, render the report, print each study's wall time and targets; 1 when a study did not
    complete or missed a target that gates (a failed cell, calls that were not OK where none were expected)."""
    console = Console(stderr=True)
    options = with_interpreters(options)
    plans = chosen_studies(options)
    with ProgressDisplay(console) as display:
        run_dir, meta = run_all(options, plans, display)
    packed = pack(run_dir)
    written, rows = render_report(options.out_dir, run_dir)
    studies = ", ".join(f"{name} {entry.wall_seconds / 60:.0f}" for name, entry in meta.studies.items())
    print(f"run {meta.run_id}: {meta.status} in {meta.wall_seconds / 60:.1f} min ({studies} min)")
    sure = sum(1 for row in rows if row.answered and row.trusted)
    if rows:
        print(f"This machine's answers, {sure} of {len(rows)} answered and trusted:")
    else:
        print("This machine's answers: none yet (no comparison in blocks answers a question)")
    for row in rows:
        print(f"  {answer_line(row)}")
    for line in missed_targets(meta):
        print(f"  missed: {line}")
    print(f"raw results: {packed} (unpacked in {run_dir})")
    print(f"answers:     {options.out_dir / 'README.md'} and {options.out_dir / 'report.html'} ({len(written)} files)")
    failed = failed_gates(meta)
    for reason in failed:
        print(f"FAILED {reason}", file=sys.stderr)
    return 1 if failed else 0


def noise_command(
    minutes: float, design: str, server_cpus: tuple[int, ...], seed: int | None, slice_seconds: float, slicer: str
) -> int:
    """Run the pilot alone and print how precise this machine can be, before anything else is run."""
    options = RunOptions(Path(tempfile.gettempdir()), server_cpus=server_cpus, design=design, seed=seed, slicer=slicer)
    console = Console(stderr=True)
    console.log(f"measuring an A/A pair for {minutes:g} min; nothing else should run meanwhile")
    with ProgressDisplay(console) as display:
        pilot = measure_noise(options, minutes, display, slice_seconds)
    print(pilot_text(pilot, cpu_model()))
    return 0


def soak_command(variants: list[ServerVariant], minutes: float, out_dir: Path, server_cpus: tuple[int, ...]) -> int:
    """Soak each variant in turn, print every criterion, re-render the summary; 1 if any criterion failed."""
    run_dir, reports = soak(variants, minutes, out_dir, server_cpus)
    draw_soak(run_dir)
    for each in reports:
        print(
            f"{each['server']}: {'PASS' if passed(each) else 'FAIL'} in {each['seconds'] / 60:.1f} min, "
            f"load generator {each['driver']['cpu_share']:.0%} of a core; {load_line(each['load'])}"
        )
        for name, ok, detail in checks_text(each["verdict"]):
            print(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if all_runs(out_dir):
        write_report(out_dir)
    print(f"reports: {run_dir}")
    return 0 if all(passed(each) for each in reports) else 1


def fleet_command(argv: list[str], count: int, out_dir: Path, address: str | None, pairs: int) -> int:
    """A plan's shards on a Dask cluster (or this host's core pairs), merged into one run a machine class; the
    report re-rendered; 1 when a shard failed or was lost."""
    from harness.run.fleet import run_fleet

    status = run_fleet(argv, count, out_dir, address, pairs)
    if all_runs(out_dir):
        write_report(out_dir)
    return status


def report(out_dir: Path, run: Path | None, machine: str | None = None) -> int:
    """Re-render the tables, charts and answers from the runs' raw files (those of one machine class where named)."""
    written = write_report(out_dir, run.resolve() if run else None, machine)
    print(f"rendered {len(written)} files into {out_dir}")
    return 0


def pythons_command(command: str, names: Sequence[str], venv: bool) -> int:
    """List interpreters (where each is, how it was configured), or build the ones the machine lacks."""
    for name in names:
        interpreter = pythons.build(name) if command == "build" else pythons.find(name)
        described = pythons.describe(interpreter.executable, "sysconfig") if command == "list" else {}
        print(f"{interpreter.name}: {interpreter.executable} ({interpreter.origin}) {described.get('version', '')}")
        if described:
            print(f"  configured: {described['config_args']}")
        if venv:
            made = virtualenvs.environment(interpreter)
            for package, why in made.missing.items():
                print(f"  no {package}: {why}")
    return 0
