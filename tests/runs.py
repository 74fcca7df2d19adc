"""Small, deterministic runs on disk for the report and compare tests (the files a real run writes), and
the processes a live run must leave behind: none."""

from __future__ import annotations

import copy
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from harness.drivers.histogram import encode_latencies
from harness.drivers.report import HISTOGRAM_KEY
from harness.results import CellRecord, Repeat, ResourceUsage, save_cell, write_json_atomic

FIXTURES = Path(__file__).parent / "fixtures"
SERVERS = {"sync-w10": 10, "grpclib-uvloop": None, "aio-uvloop": None, "sync-w10-p2": 20}


def ghz_report(ok: int, seconds: float, latency_ms: float, failed: int = 0) -> dict[str, Any]:
    """A ghz-shaped report of ok calls (and failed ones) over seconds, each OK call taking about latency_ms."""
    latencies = [latency_ms * (1 + (index % 10) / 100) / 1000 for index in range(ok)]
    total = ok + failed
    codes = {"OK": ok} | ({"Unavailable": failed} if failed else {})
    return {
        "count": total,
        "total": round(seconds * 1e9),
        "average": round(sum(latencies) / max(1, ok) * 1e9),
        "fastest": round(min(latencies, default=0) * 1e9),
        "slowest": round(max(latencies, default=0) * 1e9),
        "rps": total / seconds,
        "statusCodeDistribution": codes,
        "errorDistribution": {"rpc error: code = Unavailable": failed} if failed else {},
        "latencyDistribution": [],
        HISTOGRAM_KEY: encode_latencies(latencies),
    }


def meta(run_id: str, cpu_model: str, wall_seconds: float = 600.0) -> dict[str, Any]:
    """run.json of a complete schema-2 run of the stacks study."""
    return {
        "schema": 2,
        "run_id": run_id,
        "date": "2026-01-01T00:00:00+00:00",
        "status": "complete",
        "wall_seconds": wall_seconds,
        "environment": {
            "git_commit": "0123456789abcdef",
            "cpu_model": cpu_model,
            "cpu_count": 2,
            "platform": "Linux",
            "python": "3.11.7",
            "packages": {"grpcio": "1.0", "grpclib": "0.4"},
            "ghz": "ghz v0.121.0",
        },
        "pinning": {"server_cpus": [1], "ghz_and_backend_cpus": [0]},
        "backends": {"s3": "versitygw v1.8.0 (posix)", "mongo": "mongo-java-server 1.46.0 (in memory)"},
        "studies": {
            "stacks": {
                "question": "Which gRPC server stack should we run, and when does async pay off?",
                "status": "complete",
                "default_matrix": True,
                "wall_seconds": wall_seconds - 20,
                "matrix": {
                    "servers": list(SERVERS),
                    "server_slots": SERVERS,
                    "scenarios": ["hello", "hello-wait"],
                    "concurrency": [2, 50],
                    "repeats": 3,
                    "requests": 40,
                    "buckets": {},
                },
            }
        },
    }


# (scenario, server, concurrency) -> (OK calls per run, seconds per run, latency ms) for the first run.
CELLS: dict[tuple[str, str, int], tuple[int, float, float]] = {
    ("hello", "sync-w10", 2): (2000, 1.0, 0.9),
    ("hello", "grpclib-uvloop", 2): (1500, 1.0, 1.3),
    ("hello", "aio-uvloop", 2): (1800, 1.0, 1.1),
    ("hello", "sync-w10", 50): (3000, 1.0, 16.0),
    ("hello", "grpclib-uvloop", 50): (2000, 1.0, 25.0),
    ("hello", "aio-uvloop", 50): (2600, 1.0, 19.0),
    ("hello", "sync-w10-p2", 50): (5400, 1.0, 9.0),
    ("hello-wait", "sync-w10", 50): (150, 1.5, 505.0),
    ("hello-wait", "grpclib-uvloop", 50): (700, 1.5, 104.0),
    ("hello-wait", "aio-uvloop", 50): (690, 1.5, 105.0),
}


# (scenario, server, concurrency) -> the first run as in CELLS, for the cells also driven on a connection per worker.
PER_WORKER_CELLS: dict[tuple[str, str, int], tuple[int, float, float]] = {
    ("hello", "sync-w10", 50): (3300, 1.0, 15.0),
    ("hello", "aio-uvloop", 50): (2340, 1.0, 21.0),
}


def write_cells(
    study_dir: Path,
    cells: dict[tuple[str, str, int], tuple[int, float, float]],
    connections: str = "shared",
    factor_of: Any = lambda server: 1.0,
) -> None:
    """Each cell with three runs whose rates are scaled by factor_of(server), driven on those connections."""
    for (scenario, server, level), (ok, seconds, latency) in cells.items():
        factor = factor_of(server)
        record = CellRecord(scenario, server, level, "ok", seconds=5.0, connections=connections)
        repeats = []
        for number, wobble in enumerate((1.0, 0.98, 1.03), start=1):
            calls = round(ok * factor * wobble)
            report = f"{record.stem}-r{number}.json"
            write_json_atomic(study_dir / report, ghz_report(calls, seconds, latency / factor))
            usage = ResourceUsage(seconds + 0.1, seconds * 0.9, 99.0, 60 * 1024 * 1024)
            repeats.append(Repeat(report, calls, usage, driver_cpu_seconds=seconds * 0.4))
        probe = ""
        if scenario == "hello-wait":
            probe = f"cells/{scenario}/{server}/probe.json"
            write_json_atomic(study_dir / probe, ghz_report(10, 1.0, 100.5))
        save_cell(study_dir, replace(record, repeats=repeats, probe_file=probe))


def make_run(root: Path, run_id: str, cpu_model: str, scale: float = 1.0, skew: float = 0.0) -> Path:
    """A stacks run: every cell of CELLS, and of PER_WORKER_CELLS on a connection per worker, with three
    runs whose rates are scaled, and skewed per server."""
    run_dir = root / "runs" / run_id
    data = meta(run_id, cpu_model)
    write_json_atomic(run_dir / "run.json", data)

    def factor_of(server: str) -> float:
        return scale * (1 + skew * list(SERVERS).index(server))

    write_cells(run_dir / "stacks", CELLS, factor_of=factor_of)
    write_cells(run_dir / "stacks", PER_WORKER_CELLS, "per-worker", factor_of)
    return run_dir


LEGACY_META: dict[str, Any] = {
    "schema": 1,
    "run_id": "20250101T000000Z",
    "date": "2025-01-01T00:00:00+00:00",
    "status": "complete",
    "wall_seconds": 1680.0,
    "environment": copy.deepcopy(meta("x", "Legacy CPU")["environment"]),
    "pinning": {"server_cpus": [1], "ghz_and_backend_cpus": [0]},
    "matrix": {
        "servers": ["sync-w10", "grpclib-uvloop"],
        "server_slots": {"sync-w10": 10, "grpclib-uvloop": None},
        "scenarios": ["hello"],
        "concurrency": [50],
        "repeats": 1,
        "requests": 40,
        "buckets": {},
    },
    "targets": {
        "wall_time": {"target_seconds": 1200, "measured_seconds": 1680.0, "applies": True, "met": False},
        "zero_non_ok": {"cells_with_non_ok_or_failed": [], "met": True},
        "hello_repeats_within_10_percent": {"spread_by_cell": {}, "met": True},
    },
}


def make_legacy_run(root: Path) -> Path:
    """A schema-1 run (before studies): cells at the run's top, ghz's own percentiles, no driver CPU."""
    run_dir = root / "runs" / str(LEGACY_META["run_id"])
    write_json_atomic(run_dir / "run.json", LEGACY_META)
    usage = ResourceUsage(wall_seconds=0.2, cpu_seconds=0.15, peak_cpu_percent=99.0, peak_rss_bytes=80 * 1024 * 1024)
    for server in LEGACY_META["matrix"]["servers"]:
        stem = f"cells/hello/{server}/c50"
        (run_dir / stem).parent.mkdir(parents=True)
        shutil.copy(FIXTURES / "ghz-ok.json", run_dir / f"{stem}-r1.json")
        record = CellRecord("hello", server, 50, "ok", repeats=[Repeat(f"{stem}-r1.json", 40, usage)], schema=1)
        raw = record.to_json()
        raw["repeats"][0]["ghz_file"] = raw["repeats"][0].pop("report_file")
        del raw["repeats"][0]["driver_cpu_seconds"]
        write_json_atomic(run_dir / f"{stem}.json", raw)
    return run_dir


# What the harness starts: servers, backends, proxies and the load generator.
CHILDREN = ("servers.sync", "servers.async", "servers.aio", "versitygw", "Launcher.java", "toxiproxy", "ghz")


def started_by_harness() -> set[int]:
    """The PIDs of every running process of a kind the harness starts (to see that it left none behind)."""
    pids = set()
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or ())
        if any(name in cmdline for name in CHILDREN):
            pids.add(process.info["pid"])
    return pids
