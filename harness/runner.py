"""run-all: every cell of the matrix, measured with ghz, recorded as it finishes."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from harness.backends import LatencyRoutes, backend_env, seed_bucket, start_backends, toxiproxy
from harness.bounds import cell_bounds
from harness.ghz import GhzError, GhzReport, ghz_argv, run_ghz
from harness.matrix import (
    BENCH_BUCKET,
    BENCH_OBJECTS,
    CONCURRENCY_LEVELS,
    REPEATS,
    S3_LATENCY_MS,
    SCENARIOS,
    SERVER_VARIANTS,
    SMALL_BUCKET,
    SMALL_OBJECTS,
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
PROBE_REQUESTS = 10  # calls made one at a time to measure a call's latency alone
# The efficiency targets: (scenario, concurrency, least efficiency).
EFFICIENCY_TARGETS = (("hello-wait", 50, 0.90), (f"s3-unary-{S3_LATENCY_MS}ms", 50, 0.80))


# The options that change what is measured (not where it runs or is written).
MATRIX_FIELDS = (
    "servers",
    "scenarios",
    "levels",
    "repeats",
    "requests",
    "warmup_requests",
    "objects",
    "latency_bucket_objects",
    "s3_latency_ms",
    "mongo_latency_ms",
    "jitter_ms",
)


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
    latency_bucket_objects: int = SMALL_OBJECTS
    s3_latency_ms: int = 0  # added to every scenario's S3 traffic that has no latency of its own
    mongo_latency_ms: int = 0
    jitter_ms: int = 0
    available_cpus: tuple[int, ...] = field(default_factory=lambda: tuple(sorted(os.sched_getaffinity(0))))

    def __post_init__(self) -> None:
        if not expand(self.servers, self.scenarios, self.levels):
            raise ValueError("the matrix is empty: give at least one server, scenario and concurrency level")
        if min(self.levels) < 1:
            raise ValueError("concurrency levels must be >= 1")
        if self.repeats < 1:
            raise ValueError("repeats must be >= 1")
        if self.requests is not None and self.requests < max(self.levels):
            raise ValueError(f"requests ({self.requests}) must be >= the highest concurrency ({max(self.levels)})")
        if min(self.s3_latency_ms, self.mongo_latency_ms, self.jitter_ms) < 0:
            raise ValueError("latencies and jitter must be >= 0 ms")
        if min(self.objects, self.latency_bucket_objects) < 1:
            raise ValueError("buckets need at least one object")
        unknown = set(self.server_cpus) - set(self.available_cpus)
        if unknown:
            raise ValueError(f"server CPUs {sorted(unknown)} are not available (have {list(self.available_cpus)})")

    @property
    def other_cpus(self) -> tuple[int, ...]:
        """Where ghz, the backends and the harness run: the CPUs the server does not get, or all if none is left."""
        return tuple(cpu for cpu in self.available_cpus if cpu not in self.server_cpus) or self.available_cpus

    @property
    def server_cpu_count(self) -> int:
        return len(self.server_cpus or self.available_cpus)

    @property
    def is_default_matrix(self) -> bool:
        """True when this is the full default matrix (the one the time target is for)."""
        default = RunOptions(self.out_dir, available_cpus=self.available_cpus)
        return all(getattr(self, name) == getattr(default, name) for name in MATRIX_FIELDS)

    def latencies(self, scenario: Scenario) -> tuple[int, int]:
        """The emulated (S3, MongoDB) latency in ms for a scenario's cells."""
        return scenario.s3_latency_ms or self.s3_latency_ms, self.mongo_latency_ms

    def buckets(self) -> dict[str, int]:
        """The buckets the chosen scenarios list, with their object counts."""
        counts = {BENCH_BUCKET: self.objects, SMALL_BUCKET: self.latency_bucket_objects}
        return {each.bucket: counts[each.bucket] for each in self.scenarios if each.bucket}

    def skip_reason(self, cell: Cell) -> str:
        """Why a cell is not run here, or "" when it is."""
        if cell.server.min_cpus > self.server_cpu_count:
            return (
                f"needs {cell.server.min_cpus} server CPUs, given {self.server_cpu_count} "
                "(--server-cpus; on 2 cores the server would then share them with ghz and the backends)"
            )
        return ""

    def matrix(self) -> dict[str, Any]:
        return {
            "servers": [server.name for server in self.servers],
            "server_commands": {server.name: server.command for server in self.servers},
            "server_slots": {server.name: server.slots for server in self.servers},
            "scenarios": [each.name for each in self.scenarios],
            "scenario_calls": {each.name: each.call for each in self.scenarios},
            "scenario_latency_ms": {each.name: self.latencies(each) for each in self.scenarios},
            "concurrency": list(self.levels),
            "repeats": self.repeats,
            "requests": self.requests
            or {each.name: f"sized for {each.run_seconds} s from the warm-up" for each in self.scenarios},
            "buckets": self.buckets(),
            "jitter_ms": self.jitter_ms,
        }


def default_server_cpus() -> tuple[int, ...]:
    """The last available core, or none on a one-core machine."""
    cpus = sorted(os.sched_getaffinity(0))
    return (cpus[-1],) if len(cpus) > 1 else ()


def run_cell(cell: Cell, env: dict[str, str], ghz: Path, options: RunOptions, run_dir: Path) -> CellRecord:
    """Start the server, warm up, probe, run the measured repeats, stop; a failure becomes the record's reason."""
    begun = time.monotonic()
    s3_ms, mongo_ms = options.latencies(cell.scenario)
    record = CellRecord(
        cell.scenario.name,
        cell.server.name,
        cell.concurrency,
        status="ok",
        warmup_requests=max(cell.concurrency, options.warmup_requests or cell.scenario.warmup_requests),
        s3_latency_ms=s3_ms,
        mongo_latency_ms=mongo_ms,
        jitter_ms=options.jitter_ms if s3_ms or mongo_ms else 0,
    )
    repeats: list[Repeat] = []
    try:
        with running_server(cell.server, env, cpus=options.server_cpus) as (target, child):
            warmup = GhzReport.from_json(run_ghz(ghz_argv(ghz, cell, target, record.warmup_requests), GHZ_RUN_TIMEOUT))
            record = replace(record, warmup_ok_rps=warmup.ok_rps)
            if warmup.ok == 0:
                raise GhzError(f"no OK response in the warm-up: {warmup.status_codes} {warmup.errors}")
            if cell.scenario.bounded:
                alone = replace(cell, concurrency=1)
                raw = run_ghz(ghz_argv(ghz, alone, target, PROBE_REQUESTS), GHZ_RUN_TIMEOUT)
                record = replace(record, probe_file=save_ghz(run_dir, record.stem, "probe", raw))
            requests = options.requests or measured_requests(warmup.ok_rps, cell.concurrency, cell.scenario.run_seconds)
            for number in range(1, options.repeats + 1):
                with ResourceSampler(child.pid) as sampler:
                    raw = run_ghz(ghz_argv(ghz, cell, target, requests), GHZ_RUN_TIMEOUT)
                assert sampler.usage is not None
                repeats.append(Repeat(save_ghz(run_dir, record.stem, f"r{number}", raw), requests, sampler.usage))
                if child.process.poll() is not None:
                    raise ProcessError(f"server exited with status {child.process.returncode} during the run")
    except (ProcessError, GhzError, OSError) as error:
        record = replace(record, status="failed", reason=str(error).strip().splitlines()[0][:500])
    return replace(record, repeats=repeats, seconds=round(time.monotonic() - begun, 3))


def spread(values: Sequence[float]) -> float:
    """How far the farthest value lies from the median, as a fraction of the median."""
    if not values:
        return 0.0
    middle = statistics.median(values)
    return max(abs(value - middle) for value in values) / middle if middle else 0.0


def check_targets(
    results: list[CellResult], wall_seconds: float, full_matrix: bool, meta: dict[str, Any]
) -> dict[str, Any]:
    """The issues' benchmark targets, measured."""
    with_errors = [
        f"{r.record.scenario}/{r.record.server}/c{r.record.concurrency}"
        for r in results
        if r.record.status == "failed" or any(report.non_ok for report in r.reports)
    ]
    hello = {
        f"{r.record.server}/c{r.record.concurrency}": round(spread([rep.ok_rps for rep in r.reports]), 4)
        for r in results
        if r.record.scenario == "hello" and len(r.reports) > 1
    }
    efficiency: dict[str, Any] = {}
    for scenario, level, least in EFFICIENCY_TARGETS:
        measured = {}
        for r in results:
            if (r.record.scenario, r.record.concurrency) != (scenario, level):
                continue
            bounds = cell_bounds(r, meta)
            if bounds:
                measured[r.record.server] = round(bounds.efficiency, 3)
        if measured:
            efficiency[f"{scenario}/c{level}"] = {
                "least": least,
                "by_server": measured,
                "met": all(value >= least for value in measured.values()),
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
        "efficiency": efficiency,
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
        "pinning": {"server_cpus": list(options.server_cpus), "ghz_and_backend_cpus": list(options.other_cpus)},
        "matrix": options.matrix(),
    }
    write_json_atomic(run_dir / "run.json", meta)
    try:
        with ExitStack() as stack:
            backends = stack.enter_context(start_backends(os.environ))
            meta["backends"] = backends.describe()
            for bucket, objects in options.buckets().items():
                seed_bucket(backends.config, bucket, objects)
            routes = None
            if any(options.latencies(cell.scenario) != (0, 0) for cell in cells):
                routes = LatencyRoutes(stack.enter_context(toxiproxy()), backends.config, options.jitter_ms)
                meta["backends"]["latency_proxy"] = "toxiproxy v2.12.0"
            write_json_atomic(run_dir / "run.json", meta)
            for index, cell in enumerate(cells, start=1):
                progress.cell_started(cell, index, len(cells))
                skip = options.skip_reason(cell)
                if skip:
                    record = CellRecord(cell.scenario.name, cell.server.name, cell.concurrency, "skipped", skip)
                else:
                    config = routes.config(*options.latencies(cell.scenario)) if routes else backends.config
                    record = run_cell(cell, backend_env(config), ghz, options, run_dir)
                save_cell(run_dir, record)
                progress.cell_finished(cell, record)
        meta["status"] = "complete"
    finally:
        if meta["status"] == "running":
            meta["status"] = "interrupted"
        wall = time.monotonic() - begun
        meta["wall_seconds"] = round(wall, 1)
        meta["targets"] = check_targets(load_cells(run_dir), wall, options.is_default_matrix, meta)
        write_json_atomic(run_dir / "run.json", meta)
        os.sched_setaffinity(0, own_cpus)
    return run_dir, meta
