"""run-all: every cell of the matrix, measured with ghz, recorded as it finishes."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness.backends import BENCH_BUCKET, BENCH_OBJECTS, seed_bucket, start_backends
from harness.ghz import GhzError, GhzReport, ghz_argv, run_ghz
from harness.matrix import (
    CONCURRENCY_LEVELS,
    REPEATS,
    SCENARIOS,
    SERVER_VARIANTS,
    TARGET_RUN_SECONDS,
    Cell,
    Scenario,
    ServerVariant,
    expand,
    measured_requests,
)
from harness.processes import ProcessError
from harness.resources import ResourceSampler
from harness.results import (
    SCHEMA,
    CellRecord,
    CellResult,
    Repeat,
    environment,
    load_cells,
    save_cell,
    save_ghz,
    write_json_atomic,
)
from harness.serving import running_server
from harness.tools import GHZ, ensure_go_tool

GHZ_RUN_TIMEOUT = 600.0
NOISE_THRESHOLD = 0.10
TIME_TARGET_SECONDS = 20 * 60


@dataclass(frozen=True)
class RunOptions:
    """What run-all measures and where it writes."""

    out_dir: Path
    servers: tuple[ServerVariant, ...] = SERVER_VARIANTS
    scenarios: tuple[Scenario, ...] = SCENARIOS
    levels: tuple[int, ...] = CONCURRENCY_LEVELS
    repeats: int = REPEATS
    requests: int | None = None  # fixed requests per measured run; None sizes runs from the warm-up
    warmup_requests: int | None = None  # None: the scenario's own
    server_cpus: tuple[int, ...] = ()
    objects: int = BENCH_OBJECTS
    available_cpus: tuple[int, ...] = field(default_factory=lambda: tuple(sorted(os.sched_getaffinity(0))))

    def __post_init__(self) -> None:
        if not (self.servers and self.scenarios and self.levels):
            raise ValueError("the matrix is empty: give at least one server, scenario and concurrency level")
        if min(self.levels) < 1:
            raise ValueError("concurrency levels must be >= 1")
        if self.repeats < 1:
            raise ValueError("repeats must be >= 1")
        if self.requests is not None and self.requests < max(self.levels):
            raise ValueError(f"requests ({self.requests}) must be >= the highest concurrency ({max(self.levels)})")
        unknown = set(self.server_cpus) - set(self.available_cpus)
        if unknown:
            raise ValueError(f"server CPUs {sorted(unknown)} are not available (have {list(self.available_cpus)})")
        if self.server_cpus and not self.other_cpus:
            raise ValueError("the server cannot have every CPU: ghz and the backends need one")

    @property
    def other_cpus(self) -> tuple[int, ...]:
        """Where ghz, the backends and the harness run."""
        return tuple(cpu for cpu in self.available_cpus if cpu not in self.server_cpus)

    @property
    def is_default_matrix(self) -> bool:
        """True when this is the full default matrix (the one the time target is for)."""
        return (self.servers, self.scenarios, self.levels, self.repeats, self.requests, self.objects) == (
            SERVER_VARIANTS,
            SCENARIOS,
            CONCURRENCY_LEVELS,
            REPEATS,
            None,
            BENCH_OBJECTS,
        )

    def matrix(self) -> dict[str, Any]:
        return {
            "servers": [server.name for server in self.servers],
            "server_commands": {server.name: server.command for server in self.servers},
            "scenarios": [each.name for each in self.scenarios],
            "scenario_calls": {each.name: each.call for each in self.scenarios},
            "concurrency": list(self.levels),
            "repeats": self.repeats,
            "requests": self.requests or f"sized for {TARGET_RUN_SECONDS} s from the warm-up",
            "bucket": {"name": BENCH_BUCKET, "objects": self.objects},
        }


def default_server_cpus() -> tuple[int, ...]:
    """The last available core, or none on a one-core machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[-1],) if len(cpus) > 1 else ()


def run_cell(cell: Cell, env: dict[str, str], ghz: Path, options: RunOptions, run_dir: Path) -> CellRecord:
    """Start the server, warm up, run the measured repeats, stop; a failure becomes the record's reason."""
    begun = time.monotonic()
    stem = CellRecord(cell.scenario.name, cell.server.name, cell.concurrency, "ok").stem
    warmup_n = max(cell.concurrency, options.warmup_requests or cell.scenario.warmup_requests)
    repeats: list[Repeat] = []
    warmup = None
    try:
        with running_server(cell.server, env, cpus=options.server_cpus) as (target, child):
            warmup = GhzReport.from_json(run_ghz(ghz_argv(ghz, cell, target, warmup_n), GHZ_RUN_TIMEOUT))
            if warmup.ok == 0:
                raise GhzError(f"no OK response in the warm-up: {warmup.status_codes} {warmup.errors}")
            requests = options.requests or measured_requests(warmup.ok_rps, cell.concurrency)
            for number in range(1, options.repeats + 1):
                with ResourceSampler(child.pid) as sampler:
                    raw = run_ghz(ghz_argv(ghz, cell, target, requests), GHZ_RUN_TIMEOUT)
                assert sampler.usage is not None
                repeats.append(Repeat(save_ghz(run_dir, stem, number, raw), requests, sampler.usage))
                if child.process.poll() is not None:
                    raise ProcessError(f"server exited with status {child.process.returncode} during the run")
        status, reason = "ok", ""
    except (ProcessError, GhzError, OSError) as error:
        status, reason = "failed", str(error).strip().splitlines()[0][:500]
    return CellRecord(
        scenario=cell.scenario.name,
        server=cell.server.name,
        concurrency=cell.concurrency,
        status=status,
        reason=reason,
        warmup_requests=warmup_n,
        warmup_ok_rps=warmup.ok_rps if warmup else 0.0,
        repeats=repeats,
        seconds=round(time.monotonic() - begun, 3),
    )


def spread(values: Sequence[float]) -> float:
    """How far the farthest value lies from the median, as a fraction of the median."""
    if not values:
        return 0.0
    middle = statistics.median(values)
    return max(abs(value - middle) for value in values) / middle if middle else 0.0


def check_targets(results: list[CellResult], wall_seconds: float, full_matrix: bool) -> dict[str, Any]:
    """The issue's benchmark targets, measured."""
    with_errors = [
        f"{r.record.scenario}/{r.record.server}/c{r.record.concurrency}"
        for r in results
        if r.record.status != "ok" or any(report.non_ok for report in r.reports)
    ]
    hello = {
        f"{r.record.server}/c{r.record.concurrency}": round(spread([rep.ok_rps for rep in r.reports]), 4)
        for r in results
        if r.record.scenario == "hello" and len(r.reports) > 1
    }
    return {
        "wall_time": {
            "target_seconds": TIME_TARGET_SECONDS,
            "measured_seconds": round(wall_seconds, 1),
            "applies": full_matrix,
            "met": wall_seconds <= TIME_TARGET_SECONDS,
        },
        "zero_non_ok": {"cells_with_non_ok_or_failed": with_errors, "met": not with_errors},
        "hello_repeats_within_10_percent": {
            "spread_by_cell": hello,
            "met": all(value <= NOISE_THRESHOLD for value in hello.values()),
        },
    }


def _ghz_version(ghz: Path) -> str:
    finished = subprocess.run([ghz, "--version"], capture_output=True, text=True, check=False)
    return f"ghz {(finished.stdout or finished.stderr).strip()}"


class RunProgress(Protocol):
    """Told when each cell starts and finishes (a progress display, or nothing)."""

    def cell_started(self, cell: Cell, index: int, total: int) -> None: ...

    def cell_finished(self, cell: Cell, record: CellRecord) -> None: ...


def run_all(options: RunOptions, progress: RunProgress) -> tuple[Path, dict[str, Any]]:
    """Run the matrix into a new run directory; returns it and the final run metadata."""
    begun = time.monotonic()
    run_id = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    run_dir = options.out_dir / "runs" / run_id
    ghz = ensure_go_tool(GHZ)
    cells = expand(options.servers, options.scenarios, options.levels)
    own_cpus = os.sched_getaffinity(0)
    if options.server_cpus:
        os.sched_setaffinity(0, options.other_cpus)  # ghz and the backends inherit it
    meta: dict[str, Any] = {
        "schema": SCHEMA,
        "run_id": run_id,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "status": "running",
        "environment": environment(_ghz_version(ghz)),
        "pinning": {
            "server_cpus": list(options.server_cpus),
            "ghz_and_backend_cpus": list(options.other_cpus),
        },
        "matrix": options.matrix(),
    }
    write_json_atomic(run_dir / "run.json", meta)
    try:
        with start_backends(os.environ) as backends:
            meta["backends"] = backends.describe()
            seed_bucket(backends.config, BENCH_BUCKET, options.objects)
            write_json_atomic(run_dir / "run.json", meta)
            for index, cell in enumerate(cells, start=1):
                progress.cell_started(cell, index, len(cells))
                record = run_cell(cell, backends.env(), ghz, options, run_dir)
                save_cell(run_dir, record)
                progress.cell_finished(cell, record)
        meta["status"] = "complete"
    finally:
        if meta["status"] == "running":
            meta["status"] = "interrupted"
        wall = time.monotonic() - begun
        meta["wall_seconds"] = round(wall, 1)
        meta["targets"] = check_targets(load_cells(run_dir), wall, options.is_default_matrix)
        write_json_atomic(run_dir / "run.json", meta)
        os.sched_setaffinity(0, own_cpus)
    return run_dir, meta
