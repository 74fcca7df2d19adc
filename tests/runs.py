"""Small, deterministic runs on disk for the report and compare tests (the files a real run writes), and
the processes a live run must leave behind: none."""

from __future__ import annotations

import copy
import json
import os
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from harness.method.comparison_record import ComparisonRecord, Stop
from harness.method.verdicts import FRESH, Method
from harness.paths import ROOT
from harness.results.files import write_json_atomic
from harness.results.histogram import encode_latencies
from harness.results.load import HISTOGRAM_KEY
from harness.results.records import CellRecord, Repeat, ResourceUsage, save_cell, save_comparison
from harness.results.run_meta import Thresholds
from harness.run.processes import PORTS
from harness.studies.capacity.report import SETTINGS as CAPACITY_SETTINGS
from harness.studies.readers import READER_OF, READER_SCENARIOS, READER_STREAMS
from harness.studies.readers.report import SETTINGS as READERS_SETTINGS
from harness.studies.stacks.targets import SETTINGS as STACKS_SETTINGS

FIXTURES = Path(__file__).parent / "fixtures"
SERVERS = {"sync-w10": 10, "grpclib-uvloop": None, "aio-uvloop": None, "sync-w10-p2": 20}


# Each label's slices scatter in their own way, so that no two labels' ratios are exact and every interval has a
# width (identical arrays made "0.80 [0.80, 0.80]").
WOBBLE = [
    [1.0, 1.01, 0.99, 1.0, 1.02],
    [0.99, 1.0, 1.01, 1.02, 0.99],
    [1.01, 0.98, 1.0, 1.02, 0.99],
    [1.0, 0.99, 1.02, 0.98, 1.01],
]


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
        "endReason": "normal",
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
# The kinds of process the harness starts: programs by their executable's name, and the servers and the MongoDB
# launcher by an argument (python -m servers.sync, java ... Launcher.java). Only the executable's name is matched,
# so that an unrelated command mentioning one (a compiler building grpcio's third_party/envoy-api) is no match.
PROGRAMS = ("envoy", "versitygw", "toxiproxy", "ghz", "loadgen", "h2load")
SERVER_MODULES = tuple(f"servers.{module}" for module in ("sync", "async", "aio", "connect", "rest"))


def started_by_harness() -> set[int]:
    """The PIDs of every running process of a kind the harness starts (to see that it left none behind). Under
    pytest-xdist, this worker's alone: those that inherited its BENCH_PORTS (conftest), an orphan's too."""
    ours = os.environ.get(PORTS)
    pids = set()
    for process in psutil.process_iter(["pid", "cmdline"]):
        argv = process.info["cmdline"] or []
        if not argv:
            continue
        program = Path(argv[0]).name
        started = any(name in program for name in PROGRAMS) or any(
            arg in SERVER_MODULES or arg.endswith("Launcher.java") for arg in argv[1:]
        )
        if started and (ours is None or worker_of(process) in (ours, None)):
            pids.add(process.info["pid"])
    return pids


def worker_of(process: psutil.Process) -> str | None:
    """The BENCH_PORTS a process was started with (a test worker's); None where it has none or cannot be read, ""
    where it is gone."""
    try:
        return process.environ().get(PORTS)
    except psutil.NoSuchProcess:
        return ""
    except psutil.Error:
        return None


INTERRUPTED_GRACE = 60.0  # seconds an interrupted `python -m harness` gets to stop what it started
# pytest-timeout's limit on a test unless it is marked with its own (pyproject.toml).
TEST_TIMEOUT = float(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["timeout"])


def within(test_timeout: float) -> float:
    """How long a test may wait on the harness, so that an interrupted harness still stops what it started
    (INTERRUPTED_GRACE) before the test's own timeout fails it."""
    return test_timeout - INTERRUPTED_GRACE - 20


def run_harness(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -m harness` with these arguments from the project's root, its output captured. If the wait ends
    early (its timeout, or pytest-timeout failing the test), the harness is interrupted as Ctrl-C would, so that
    it stops every server and backend it started, and killed only if it has not ended within INTERRUPTED_GRACE."""
    with subprocess.Popen(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            process.send_signal(signal.SIGINT)
            try:
                process.communicate(timeout=INTERRUPTED_GRACE)
            finally:
                process.kill()
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


# --- a small run of every study, for golden tests of its tables and answer ------------------------------------

Run = tuple[str, dict[str, Any]]  # (role, raw report) of one run of a cell


def study_meta(run_id: str, study: str, servers: dict[str, int | None], scenarios: list[str]) -> dict[str, Any]:
    """run.json of a complete schema-2 run holding one study (its settings from the schema's defaults)."""
    data = meta(run_id, "Test CPU")
    entry = data["studies"].pop("stacks")
    entry["matrix"] |= {"servers": list(servers), "server_slots": servers, "scenarios": scenarios}
    data["studies"] = {study: entry | {"wall_seconds": 300.0}}
    return data


def write_cell(
    study_dir: Path,
    key: tuple[str, str, int],
    runs: list[Run],
    status: str = "ok",
    reason: str = "",
    counters: dict[str, float] | None = None,
    cpu_share: float = 0.9,
) -> None:
    """One cell whose runs are the given (role, report) pairs, the server busy cpu_share of each run."""
    scenario, server, level = key
    record = CellRecord(scenario, server, level, status, reason, seconds=5.0)
    repeats = []
    for number, (role, raw) in enumerate(runs, start=1):
        relative = f"{record.stem}-{role}{number}.json"
        write_json_atomic(study_dir / relative, raw)
        seconds = raw["total"] / 1e9
        usage = ResourceUsage(seconds, seconds * cpu_share, 100.0 * cpu_share, 50 * 1024 * 1024)
        repeats.append(Repeat(relative, raw["count"], usage, seconds * 0.3, role, counters))
    save_cell(study_dir, replace(record, repeats=repeats))


def measured_runs(ok: int, seconds: float, latency_ms: float, role: str = "measured", **extra: Any) -> list[Run]:
    """Three runs of a role within 3% of each other, each report carrying `extra` (what loadgen adds)."""
    return [(role, ghz_report(round(ok * wobble), seconds, latency_ms) | extra) for wobble in (1.0, 0.98, 1.03)]


def make_streaming_run(root: Path) -> Path:
    """Two stacks on every part of the streaming study; one watch cell failed, one fetch-all not OK."""
    run_id = "20260103T000000Z"
    servers = {"sync-w10": 10, "aio-uvloop": None}
    run_dir = root / "runs" / run_id
    write_json_atomic(run_dir / "run.json", study_meta(run_id, "streaming", servers, []))
    where = run_dir / "streaming"
    patterns = {"paging": (10, 10), "stream": (1, 10), "parallel-4": (1, 10), "parallel-10": (1, 10)}
    for index, server in enumerate(servers):
        for latency in (0, 20):
            for pattern, (rpcs, messages) in patterns.items():
                name = f"fetch-{pattern}-{latency}ms"
                seconds = 2.0 + latency / 20 - index * 0.3 - (0.2 if pattern == "parallel-10" else 0.0)
                counts = {"rpcs": rpcs * 5, "messages": messages * 5, "objects": 50_000}
                alone = ghz_report(5, 5 * seconds, seconds * 1000) | counts
                write_cell(where, (name, server, 1), [("measured", alone)])
                failed = 2 if (server, pattern, latency) == ("aio-uvloop", "parallel-4", 20) else 0
                crowd = {"rpcs": rpcs * 8, "messages": messages * 8, "objects": 80_000}
                together = ghz_report(8 - failed, 16.0, 2000.0, failed) | crowd
                write_cell(where, (name, server, 4), [("measured", together)])
        for level in (10, 50):
            unary, stream = 3000 - index * 500, 2700 - index * 200
            write_cell(where, ("hello", server, level), measured_runs(unary, 1.0, 5.0))
            write_cell(where, ("hello-stream", server, level), measured_runs(stream, 1.0, 6.0))
        ours = measured_runs(3000 - index * 500, 1.0, 5.0)
        theirs = measured_runs(2900 - index * 500, 1.0, 5.0, "ghz")
        write_cell(where, ("hello", server, 50), [each for pair in zip(ours, theirs, strict=True) for each in pair])
        for size, rate in ((1, 40), (10, 52), (100, 60), (1000, 61)):
            write_cell(where, (f"batch-{size}", server, 10), measured_runs(rate * (1 + index), 1.0, 200.0))
        for streams in (10, 100, 1000):
            if (server, streams) == ("aio-uvloop", 1000):
                write_cell(where, ("watch", server, streams), [], "failed", "loadgen: too many open files")
                continue
            late = 0 if streams <= (servers[server] or 10_000) else streams - 10
            outcome = {
                "streams": streams,
                "established": streams - late,
                "established_late": late,
                "not_established": 0,
                "expected_readings": (streams - late) * 100,
                "ended": {"OK": streams},
            }
            readings = ghz_report((streams - late) * 100, 10.0, 1.5) | outcome
            write_cell(where, ("watch", server, streams), [("measured", readings)])
    return run_dir


def make_protocols_run(root: Path) -> Path:
    """Every call shape on a gRPC stack, a Connect stack and both REST servers, at 1 and 16 workers, with the
    cross-checks at 16; the Connect JSON cell had calls that were not OK."""
    run_id = "20260104T000000Z"
    servers = {"sync-w10": 10, "connect-pyvoy": None, "rest-h1": None, "rest-h2": None}
    run_dir = root / "runs" / run_id
    write_json_atomic(run_dir / "run.json", study_meta(run_id, "protocols", servers, []))
    where = run_dir / "protocols"
    rates = {"info-unary": 4000, "info-lockstep": 9000, "info-pipelined": 30000, "info-connect-h1": 3000}
    for server, scale in (("sync-w10", 1.0), ("connect-pyvoy", 0.8)):
        for scenario, rate in rates.items():
            if scenario == "info-connect-h1" and server != "connect-pyvoy":
                continue
            for level in (1, 16):
                ok = round(rate * scale * (level / 16 if level == 1 else 1))
                runs = measured_runs(ok, 2.5, 1000 * level / rate)
                if scenario == "info-connect-h1" and level == 16:
                    runs = [("measured", ghz_report(ok, 2.5, 5.0, failed=25))] * 3
                if scenario == "info-unary" and level == 16:
                    ghz = measured_runs(round(ok * 0.97), 2.5, 4.0, "ghz")
                    runs = [each for pair in zip(runs, ghz, strict=True) for each in pair]
                write_cell(where, (scenario, server, level), runs)
    for server, rate in (("rest-h1", 5000), ("rest-h2", 2500)):
        scenario = f"info-rest-h{server[-1]}"
        for level in (1, 16):
            runs = measured_runs(round(rate * (level / 16 if level == 1 else 1)), 2.5, 3.0)
            if server == "rest-h2" and level == 16:
                h2load = measured_runs(round(rate * 1.01), 2.5, 3.0, "h2load")
                runs = [each for pair in zip(runs, h2load, strict=True) for each in pair]
            write_cell(where, (scenario, server, level), runs)
    return run_dir


def saturation_step(offered: int, ok_rps: int, p99_ms: float) -> dict[str, Any]:
    """A step of the saturation search: 10 s of calls at the offered rate, served at ok_rps."""
    calls = offered * 10
    return ghz_report(calls, calls / ok_rps, p99_ms / 1.09) | {"options": {"rps": offered, "async": True}}


def open_loop_report(offered: int, ok: int, p99_ms: float, failed: int = 0) -> dict[str, Any]:
    """An open-loop step: `ok` calls over the seconds the offered rate takes, their p99 near p99_ms."""
    seconds = (ok + failed) / offered
    raw = ghz_report(ok, seconds, p99_ms / 1.09, failed)
    return raw | {"options": {"rps": offered, "async": True}}


def make_capacity_run(root: Path) -> Path:
    """A thread pool and an event loop searched on hello (SLO 10 ms) and s3-unary-100ms (300 ms), with their
    counters; the event loop also on the jittered route."""
    run_id = "20260105T000000Z"
    servers = {"sync-w10": 10, "aio-uvloop": None}
    run_dir = root / "runs" / run_id
    data = study_meta(run_id, "capacity", servers, ["hello", "s3-unary-100ms", "s3-unary-100ms-jitter20"])
    data |= {"schema": 3, "thresholds": Thresholds().to_json()}  # with the settings of repeated steps
    data["studies"]["capacity"]["settings"] = dict(CAPACITY_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    where = run_dir / "capacity"
    counters = {"gc_seconds": 0.05, "lag_seconds": 0.2, "lag_checks": 100, "late_50ms": 3}
    counters |= {"voluntary_switches": 4000, "involuntary_switches": 1000}
    Step = tuple[int, int, float]
    # (scenario, server) -> closed-loop OK calls/s, then (offered, OK, p99 ms) per step, and the low-load run
    searches: dict[tuple[str, str], tuple[int, list[Step], Step]] = {
        ("hello", "sync-w10"): (
            2500,
            [
                (100, 100, 2),
                (200, 200, 3),
                (400, 400, 4),
                (800, 800, 6),
                (1600, 1500, 40),
                (1200, 1200, 9),
                (1400, 1380, 14),
                (1400, 1390, 9.8),
                (1400, 1385, 12),
                (1300, 1300, 9.5),
                (1300, 1300, 9.6),
            ],
            (130, 130, 1),
        ),
        ("hello", "aio-uvloop"): (
            2000,
            [
                (100, 100, 2),
                (200, 200, 2),
                (400, 400, 3),
                (800, 800, 5),
                (1600, 1550, 30),
                (1200, 1200, 8),
                (1400, 1390, 12),
            ],
            (120, 120, 1),
        ),
        ("s3-unary-100ms", "sync-w10"): (
            95,
            [(20, 20, 105), (40, 40, 110), (80, 80, 150), (160, 95, 2000), (120, 90, 900), (100, 96, 400)],
            (8, 8, 101),
        ),
        ("s3-unary-100ms", "aio-uvloop"): (
            300,
            [
                (20, 20, 105),
                (40, 40, 106),
                (80, 80, 108),
                (160, 160, 115),
                (320, 300, 600),
                (240, 240, 250),
                (280, 270, 400),
            ],
            (24, 24, 102),
        ),
    }
    # The saturation search of hello on sync-w10, from its capacity up: (offered, OK, p99 ms) per step.
    saturation = [(1300, 1300, 9), (1300, 1300, 9), (2600, 1700, 900), (2600, 1720, 950), (1950, 1800, 300)]
    saturation += [(1950, 1850, 280), (1625, 1600, 40), (1625, 1610, 45)]
    for (scenario, server), (closed, steps, low) in searches.items():
        runs: list[Run] = [("closed-loop", ghz_report(closed * 2, 2.0, 20.0))]
        runs += [("step", open_loop_report(rate, ok, p99, 1 if p99 > 1000 else 0)) for rate, ok, p99 in steps]
        if (scenario, server) == ("hello", "sync-w10"):
            runs += [("saturation", saturation_step(*each)) for each in saturation]
        runs.append(("low-load", open_loop_report(*low)))
        write_cell(where, (scenario, server, 50), runs, counters=counters, cpu_share=0.6)
    write_cell(where, ("s3-unary-100ms-jitter20", "aio-uvloop", 50), [("closed-loop", ghz_report(560, 2.0, 150.0))])
    return run_dir


def make_searched_run(root: Path, brackets: dict[str, list[tuple[int, int]]]) -> Path:
    """A capacity run of hello searched several times a stack (`--repeats`): per stack, each search's (held,
    failed) rates, each settled by two agreeing steps; the steps of search N carry round N."""
    run_id = "20260109T000000Z"
    run_dir = root / "runs" / run_id
    data = study_meta(run_id, "capacity", {name: 10 for name in brackets}, ["hello"])
    data |= {"schema": 3, "thresholds": Thresholds().to_json()}
    data["studies"]["capacity"]["settings"] = dict(CAPACITY_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    where = run_dir / "capacity"
    for server, searches in brackets.items():
        record = CellRecord("hello", server, 50, "ok", seconds=5.0)
        repeats = []
        steps = [
            (number, rate, p99)
            for number, (held, failed) in enumerate(searches, start=1)
            for rate, p99 in ((held, 8.0), (held, 8.5), (failed, 14.0), (failed, 15.0))
        ]
        for index, (number, rate, p99) in enumerate(steps, start=1):
            raw = open_loop_report(rate, rate * 10, p99)
            relative = f"{record.stem}-step{index}.json"
            write_json_atomic(where / relative, raw)
            usage = ResourceUsage(10.0, 6.0, 60.0, 50 * 1024 * 1024)
            repeats.append(Repeat(relative, raw["count"], usage, 3.0, "step", None, number))
        save_cell(where, replace(record, repeats=repeats))
    return run_dir


def make_connections_run(root: Path) -> Path:
    """hello and hello with a 500 ms wait on sync-w10 every way of connecting; the S3 client per process and
    per request, the latter with calls that were not OK (a finding, not a failed run)."""
    run_id = "20260101T000000Z"
    run_dir = root / "runs" / run_id
    data = study_meta(run_id, "connections", {"sync-w10": 10, "aio-uvloop": None}, ["hello", "hello-wait-500ms"])
    write_json_atomic(run_dir / "run.json", data)
    where = run_dir / "connections"
    for way, ok in CONNECTION_WAYS.items():
        write_cells(where, {("hello", "sync-w10", 100): (ok, 1.0, 30.0)}, way)
        write_cells(where, {("hello-wait-500ms", "sync-w10", 100): (20, 1.0, 500.0)}, way)
    write_cells(where, {("s3-unary", "sync-w10", 50): (400, 1.0, 100.0)})
    fresh = [("measured", ghz_report(100, 1.0, 400.0, failed=10 * number)) for number in range(3)]
    write_cell(where, ("s3-unary", "sync-w10-s3-per-request", 50), fresh)
    return run_dir


# OK calls per run of hello at 100 clients by way of connecting (the other two runs within 3% of it).
CONNECTION_WAYS = {"shared": 3000, "per-worker": 2700, "pool-10": 3300, "per-call": 1500}


def make_blocks_run(root: Path) -> Path:
    """A stacks run in rounds: hello at c=50, sync-w10 (the reference, and its A/A twin), aio-uvloop 30% faster,
    grpclib-uvloop within 2% of the reference; every round drifts, every window has its own noise."""
    run_id = "20260106T000000Z"
    servers = {"sync-w10": 10, "aio-uvloop": None, "grpclib-uvloop": None}
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    entry = data["studies"]["stacks"]
    entry["matrix"] |= {"servers": list(servers), "server_slots": servers, "scenarios": ["hello"], "concurrency": [50]}
    entry["settings"] = dict(STACKS_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    cells = {server: CellRecord("hello", server, 50, "ok", seconds=60.0) for server in servers}
    base = {"sync-w10": 3000, "aio-uvloop": 3900, "grpclib-uvloop": 3050}
    noise = {"sync-w10": [1.0, 1.01, 0.99, 1.0, 1.02], "sync-w10~aa": [0.99, 1.0, 1.01, 1.02, 0.99]}
    noise |= {"aio-uvloop": [1.01, 0.98, 1.0, 1.02, 0.99], "grpclib-uvloop": [1.0, 1.0, 0.99, 1.01, 1.0]}
    stops = {"aio-uvloop": Stop(5, "clear"), "grpclib-uvloop": Stop(5, "precise")}
    write_blocks(run_dir / "stacks", "hello/c50", cells, base, noise, stops, name_cells=False, method=Method())
    return run_dir


# Each server module's code as a run records it (harness.results.code): every brief run of these tests ran this code.
MODULE_CODES = {f"servers.{name}": f"{name}-code" for name in ("sync", "async", "aio", "connect", "minimal", "rest")}


def make_brief_run(root: Path, run_id: str = "20260107T000000Z", day: str = "2026-01-07", shift: float = 1.0) -> Path:
    """A stacks run of the brief's matrix in blocks, cut down: hello, s3-unary and s3-stream at 2 and 50 clients on
    sync-w10 (the reference; its A/A twin on hello at 50), sync-w1 and grpclib-uvloop, and s3-mongo at 50 with
    grpclib-uvloop on Motor and on PyMongo's async client. grpclib-uvloop serves hello 20% faster than sync-w10
    (times `shift`: a run's own day); sync-w1 ties it on S3 (botocore-bound) and serves hello at 90%; a stream is
    15% faster than one reply on grpclib-uvloop; PyMongo's async client ties Motor; on hello-wait at 50,
    grpclib-uvloop serves 4.6x sync-w10. Its server code is recorded."""
    servers = {"sync-w10": 10, "sync-w1": 1, "grpclib-uvloop": None, "grpclib-uvloop-pymongo": None}
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json(), "date": f"{day}T00:00:00"}
    data["environment"]["module_codes"] = dict(MODULE_CODES)
    entry = data["studies"]["stacks"]
    scenarios = ["hello", "hello-wait", "s3-unary", "s3-stream", "s3-mongo"]
    entry["matrix"] |= {
        "servers": list(servers),
        "server_slots": servers,
        "scenarios": scenarios,
        "concurrency": [2, 50],
    }
    entry["settings"] = dict(STACKS_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    blocks = Method(cycles=1, mirrored=False)
    rates: dict[str, dict[str, float]] = {
        "hello": {"sync-w10": 3000, "sync-w1": 2700, "grpclib-uvloop": round(3600 * shift)},
        "s3-unary": {"sync-w10": 10, "sync-w1": 10, "grpclib-uvloop": 8},
        "s3-stream": {"sync-w10": 9, "sync-w1": 9, "grpclib-uvloop": 9.2},
        "s3-mongo": {"sync-w10": 6, "grpclib-uvloop": 7, "grpclib-uvloop-pymongo": 7},
        "hello-wait": {"sync-w10": 100, "grpclib-uvloop": 460},
    }
    for topic, base in rates.items():
        for level in (2, 50) if topic not in ("s3-mongo", "hello-wait") else (50,):
            controlled = (topic, level) == ("hello", 50)
            labels = [*base, *(["sync-w10~aa"] if controlled else [])]
            noise = {label: WOBBLE[index % 3] for index, label in enumerate(labels)}
            cells = {server: CellRecord(topic, server, level, "ok", seconds=60.0) for server in base}
            scaled = {server: round(rate * (1 if topic == "hello" else 100)) for server, rate in base.items()}
            stops = {label: Stop(5, "cap") for label in base if label != "sync-w10"}
            write_blocks(
                run_dir / "stacks",
                f"{topic}/c{level}",
                cells,
                scaled,
                noise,
                stops,
                controlled=controlled,
                method=blocks,
            )
    return run_dir


def make_wait_run(
    root: Path,
    rates: dict[str, int],
    cpu: dict[str, float],
    run_id: str = "20260109T000000Z",
    latency: dict[str, float] | None = None,
) -> Path:
    """A stacks run of hello-wait alone at 50 clients in blocks: each label's OK calls/s and its server's CPU
    seconds a window (the first label the reference), and where named its calls' latency in ms."""
    servers = {"sync-w10": 10, "sync-w50": 50, "grpclib-uvloop": None}
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    data["environment"]["module_codes"] = dict(MODULE_CODES)
    entry = data["studies"]["stacks"]
    entry["matrix"] |= {
        "servers": list(rates),
        "server_slots": servers,
        "scenarios": ["hello-wait"],
        "concurrency": [50],
    }
    entry["settings"] = dict(STACKS_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    labels = [*rates, "sync-w10~aa"]
    noise = {label: WOBBLE[index % 3] for index, label in enumerate(labels)}
    cells = {server: CellRecord("hello-wait", server, 50, "ok", seconds=60.0) for server in rates}
    stops = {label: Stop(5, "cap") for label in rates if label != "sync-w10"}
    method = Method(cycles=1, mirrored=False)
    write_blocks(
        run_dir / "stacks", "hello-wait/c50", cells, rates, noise, stops, method=method, cpu=cpu, latency=latency
    )
    return run_dir


def make_connections_blocks_run(root: Path) -> Path:
    """A connections run in rounds, its alternatives ways of connecting to one server: hello at 100 clients on
    aio-uvloop sharing one connection (the reference), a pool of 10 within 1%, a new connection per call at half
    the rate."""
    run_id = "20260107T000000Z"
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    entry = data["studies"].pop("stacks")
    entry["matrix"] |= {"servers": ["aio-uvloop"], "scenarios": ["hello"], "concurrency": [100], "driver": "loadgen"}
    entry["matrix"]["connections"] = ["shared", "pool-10", "per-call"]
    entry["question"] = "How should clients hold connections, and servers their S3 client?"
    data["studies"]["connections"] = entry
    write_json_atomic(run_dir / "run.json", data)
    ways = ("shared", "pool-10", "per-call")
    cells = {way: CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0, connections=way) for way in ways}
    base = {"shared": 3000, "pool-10": 3010, "per-call": 1500}
    noise = {"shared": [1.0, 1.01, 0.99, 1.0, 1.02], "shared~aa": [0.99, 1.0, 1.01, 1.02, 0.99]}
    noise |= {"pool-10": [1.0, 1.0, 0.99, 1.01, 1.0], "per-call": [1.01, 0.98, 1.0, 1.02, 0.99]}
    stops = {"pool-10": Stop(5, "precise"), "per-call": Stop(5, "clear")}
    write_blocks(run_dir / "connections", "hello/aio-uvloop/c100", cells, base, noise, stops)
    return run_dir


def make_wire_run(root: Path) -> Path:
    """A wire run in rounds: hello on sync-w10 in plaintext (the reference, with the study's A/A twin), TLS 8%
    slower, mutual TLS 9% slower; 1 KiB and 1 MiB replies from sync-w10 and aio-uvloop, each in plaintext and TLS; on
    aio-uvloop one shared connection against a new one per call, in plaintext and TLS, TLS 10% slower on the shared
    one (each window 2.4 s of server CPU: a slower way costs more a call). aio-uvloop's loop woke 4.2 ms late on
    average on 1 MiB replies in plaintext, 7.5 ms over TLS."""
    run_id = "20260108T000000Z"
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    entry = data["studies"].pop("stacks")
    entry["matrix"] |= {"servers": ["sync-w10", "aio-uvloop"], "scenarios": ["hello", "reply-1MiB"]}
    entry["question"] = "What do TLS and large messages cost, and how should clients hold connections under TLS?"
    data["studies"]["wire"] = entry
    data["wire"] = {"name": "per cell", "key_type": "ECDSA"}
    write_json_atomic(run_dir / "run.json", data)
    handshake = "TLSv1.3 TLS_AES_128_GCM_SHA256, h2"
    wires = {"plaintext": "plaintext", "tls": "tls", "mtls": "mtls"}
    cells = {
        label: CellRecord(
            "hello", "sync-w10", 50, "ok", seconds=60.0, wire=wire, tls="" if wire == "plaintext" else handshake
        )
        for label, wire in wires.items()
    }
    base = {"plaintext": 6000, "tls": 5520, "mtls": 5460}
    noise = {"plaintext": [1.0, 1.01, 0.99, 1.0, 1.02], "plaintext~aa": [0.99, 1.0, 1.01, 1.02, 0.99]}
    noise |= {"tls": [1.0, 1.0, 0.99, 1.01, 1.0], "mtls": [1.01, 0.98, 1.0, 1.02, 0.99]}
    write_blocks(run_dir / "wire", "tls/sync-w10/c50", cells, base, noise, {"tls": Stop(5, "clear")})
    sized = {
        f"{server}{suffix}": CellRecord("reply-1MiB", server, 10, "ok", seconds=60.0, wire=wire)
        for server in ("sync-w10", "aio-uvloop")
        for suffix, wire in (("", "plaintext"), ("+tls", "tls"))
    }
    base = {"sync-w10": 400, "sync-w10+tls": 300, "aio-uvloop": 500, "aio-uvloop+tls": 350}
    noise = {label: WOBBLE[index % len(WOBBLE)] for index, label in enumerate(sized)}  # each its own: a real spread
    lag = {
        "aio-uvloop": {"lag_checks": 50.0, "lag_seconds": 0.21},
        "aio-uvloop+tls": {"lag_checks": 40, "lag_seconds": 0.3},
    }
    write_blocks(run_dir / "wire", "reply-1MiB/c10", sized, base, noise, {}, controlled=False, counters=lag)
    small = {label: replace(record, scenario="reply-1KiB") for label, record in sized.items()}
    base = {"sync-w10": 5000, "sync-w10+tls": 2600, "aio-uvloop": 3000, "aio-uvloop+tls": 2900}
    write_blocks(run_dir / "wire", "reply-1KiB/c10", small, base, noise, {}, controlled=False)
    ways = {
        "shared": CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0),
        "per-call": CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0, connections="per-call"),
        "shared+tls": CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0, wire="tls", tls=handshake),
        "per-call+tls": CellRecord(
            "hello", "aio-uvloop", 100, "ok", seconds=60.0, connections="per-call", wire="tls", tls=handshake
        ),
    }
    base = {"shared": 3000, "per-call": 1800, "shared+tls": 2700, "per-call+tls": 1200}
    noise = {label: WOBBLE[index % len(WOBBLE)] for index, label in enumerate(ways)}
    write_blocks(run_dir / "wire", "connections-tls/aio-uvloop/c100", ways, base, noise, {}, controlled=False)
    return run_dir


def make_interpreters_run(root: Path) -> Path:
    """An interpreters run in rounds: hello-work on sync-w10 under 3.11 (the reference, with the study's A/A
    twin), 3.12 4% slower, 3.14 12% faster, and on aio-uvloop 3.12 20% slower, 3.14 10% faster; the cores
    comparison on sync-w10: two processes on one shared connection no faster than one (one process took every
    call), on a connection per worker 1.9 times as fast."""
    run_id = "20260109T000000Z"
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    entry = data["studies"].pop("stacks")
    entry["matrix"] |= {"servers": ["sync-w10"], "scenarios": ["hello-work"]}
    entry["question"] = "Which interpreter should the servers run on, and should a host's cores serve as processes?"
    data["studies"]["interpreters"] = entry
    flags = "'--prefix=/x' '--enable-shared' 'LDFLAGS=-Wl,-rpath,/x/lib'"
    data["interpreters"] = {
        name: {
            "version": version,
            "origin": origin,
            "config_args": flags,
            "gil_enabled_after_import": {"servers.sync": True},
            "unavailable": {},
        }
        for name, version, origin in (
            ("3.11", "3.11.7", "pyenv"),
            ("3.12", "3.12.1", "pyenv"),
            ("3.14", "3.14.7", "built here"),
        )
    }
    data["interpreters"]["3.14t"] = {
        "version": "3.14.7",
        "origin": "built here",
        "config_args": flags + " '--disable-gil'",
        "gil_enabled_after_import": {},
        "unavailable": {"servers.sync": "ImportError: no grpc"},
    }
    write_json_atomic(run_dir / "run.json", data)
    versions = {
        name: CellRecord("hello-work", f"sync-w10@{name}", 50, "ok", seconds=60.0) for name in ("3.11", "3.12", "3.14")
    }
    noise = {"3.11": WOBBLE[0], "3.11~aa": WOBBLE[1], "3.12": WOBBLE[2], "3.14": WOBBLE[3]}  # each its own spread
    where = run_dir / "interpreters"
    write_blocks(
        where, "interpreter/hello-work/sync-w10/c50", versions, {"3.11": 95, "3.12": 91, "3.14": 106}, noise, {}
    )
    on_aio = {
        name: CellRecord("hello-work", f"aio-uvloop@{name}", 50, "ok", seconds=60.0)
        for name in ("3.11", "3.12", "3.14")
    }
    base = {"3.11": 90, "3.12": 72, "3.14": 99}
    write_blocks(where, "interpreter/hello-work/aio-uvloop/c50", on_aio, base, noise, {}, controlled=False)
    ways = {
        "p1": CellRecord("hello-work", "sync-w10@3.11", 20, "ok", seconds=60.0),
        "p2": CellRecord("hello-work", "sync-w10-p2@3.11", 20, "ok", seconds=60.0),
        "p2+per-worker": CellRecord("hello-work", "sync-w10-p2@3.11", 20, "ok", seconds=60.0, connections="per-worker"),
    }
    shares = {"p2": [2.3, 0.1, 0.0], "p2+per-worker": [1.2, 1.1, 0.1]}
    base = {"p1": 95, "p2": 96, "p2+per-worker": 180}
    write_blocks(
        where,
        "cores/sync-w10/c20",
        ways,
        base,
        {label: WOBBLE[index % len(WOBBLE)] for index, label in enumerate(ways)},
        {},
        controlled=False,
        processes=shares,
        calls={"p2": [240, 0], "p2+per-worker": [230, 220]},
    )
    return run_dir


def write_blocks(
    where: Path,
    workload: str,
    cells: dict[str, CellRecord],
    base: dict[str, int],
    noise: dict[str, list[float]],
    stops: dict[str, Stop],
    name_cells: bool = True,
    controlled: bool = True,
    processes: dict[str, list[float]] | None = None,
    calls: dict[str, list[int]] | None = None,
    method: Method | None = None,
    cpu: dict[str, float] | None = None,
    driver: float = 0.8,
    latency: dict[str, float] | None = None,
    counters: dict[str, dict[str, float]] | None = None,
) -> None:
    """A comparison's five rounds into a study's directory: every label's windows (the first label is the
    reference, its A/A twin's, if controlled, in its cell), drifting together round by round, each with its own
    noise. Without name_cells, the record names no cells, as runs before comparisons of other things than stacks
    did. processes: a label's server CPU seconds by process in every window (a server of several); calls: the calls
    each of its processes counted in every window; cpu: a label's server CPU seconds in every window (2.4 s
    unless named); driver: the driver's CPU seconds in every window (of 2.5 s); latency: a label's OK calls' latency
    in ms (50,000 over its calls a window unless named); counters: what a label's server counted about itself in
    every window (servers.diagnostics)."""
    reference, *alternatives = cells
    control = reference + "~aa"
    twin = [control] if controlled else []
    drift = [1.0, 0.8, 1.15, 0.9, 1.05]
    windows: dict[str, list[tuple[str, dict[str, Any]]]] = {label: [] for label in cells}
    for index, factor in enumerate(drift):
        for label in (reference, *twin, *alternatives):
            owner, role = (reference, "control") if label == control else (label, "round")
            ok = round(base[owner] * factor * noise[label][index] * 2.5)
            windows[owner].append((role, ghz_report(ok, 2.5, (latency or {}).get(owner, 50_000 / ok))))
    for label, found in windows.items():
        record = cells[label]
        repeats = []
        rounds: dict[str, int] = {}
        for role, raw in found:
            number = rounds[role] = rounds.get(role, 0) + 1
            relative = f"{record.stem}-{role}{number}.json"
            write_json_atomic(where / relative, raw)
            usage = ResourceUsage(
                2.5,
                (cpu or {}).get(label, 2.4),
                99.0,
                50 * 1024 * 1024,
                process_cpu_seconds=(processes or {}).get(label, []),
            )
            taken = (calls or {}).get(label, [])
            counted = (counters or {}).get(label)
            repeats.append(Repeat(relative, raw["count"], usage, driver, role, counted, number, taken))
        save_cell(where, replace(record, repeats=repeats))
    orders = [[*alternatives, *twin, reference]] * len(drift)
    named = {label: record.key for label, record in cells.items()} if name_cells else {}
    compared = ComparisonRecord(
        workload,
        reference,
        tuple(alternatives),
        42,
        method or Method(design=FRESH, max_blocks=20),
        orders,
        stops,
        300.0,
        named,
        controlled,
    )
    save_comparison(where, compared)


def make_versions_run(root: Path) -> Path:
    """A versions run in blocks: hello at 50 clients on sync-w10, grpcio 1.85.1 4% slower than the pinned 1.75.0
    (the reference, with the study's A/A twin), and on aio-uvloop the two alike; each side's virtualenv as the
    run prepared it."""
    run_id = "20260110T000000Z"
    run_dir = root / "runs" / run_id
    data = meta(run_id, "Test CPU A") | {"schema": 3, "thresholds": Thresholds().to_json()}
    entry = data["studies"].pop("stacks")
    entry["matrix"] |= {"servers": ["sync-w10", "aio-uvloop"], "scenarios": ["hello"], "concurrency": [50]}
    entry["question"] = "Did this upgrade change speed?"
    data["studies"]["versions"] = entry
    packages = {"grpcio": "1.75.0", "grpcio-tools": "1.75.0", "protobuf": "6.33.1", "uvloop": "0.23.0"}
    data["interpreters"] = {
        "grpcio-1.85.1": {"version": "3.11.7", "packages": packages | {"grpcio": "1.85.1", "protobuf": "7.36.2"}},
        "grpcio-1.75.0": {"version": "3.11.7", "packages": packages, "pins": {"grpcio": "1.75.0"}},
    }
    write_json_atomic(run_dir / "run.json", data)
    steady = [[1.0, 1.002, 0.998, 1.0, 1.001], [0.999, 1.0, 1.001, 1.0, 0.999], [1.001, 0.999, 1.0, 1.0, 1.0]]
    for stack, own in (("sync-w10", 2880), ("aio-uvloop", 3000)):
        sides = {"grpcio-1.75.0": 3000, "grpcio-1.85.1": own}
        cells = {label: CellRecord("hello", f"{stack}@{label}", 50, "ok", seconds=60.0) for label in sides}
        noise = {"grpcio-1.75.0": steady[0], "grpcio-1.85.1": steady[1], "grpcio-1.75.0~aa": steady[2]}
        stops = {"grpcio-1.85.1": Stop(5, "precise")}
        controlled = stack == "sync-w10"  # the study's A/A control, in its first comparison
        workload = f"upgrade/hello/{stack}/c50"
        write_blocks(run_dir / "versions", workload, cells, sides, noise, stops, controlled=controlled)
    return run_dir


def slow_report(streams: int, read: int, ended: dict[str, int], every_ms: int = 0) -> dict[str, Any]:
    """loadgen slow's report: `read` messages a stream (each an OK entry), how the streams ended."""
    return ghz_report(streams * read, 20.0, 1.0) | {
        "streams": streams,
        "connections": 1,
        "every_ms": every_ms,
        "seconds": 20.0,
        "window_bytes": 65535,
        "opened": streams if read else 0,
        "messages": [read] * streams,
        "bytes": [read * 100] * streams,
        "ended": ended,
        "stream_errors": {},
    }


def make_readers_run(
    root: Path, grown: Mapping[str, tuple[int, ...]], ended: dict[str, dict[str, int]] | None = None
) -> Path:
    """A readers run: each stack under the stopped reader, READER_STREAMS streams, a reading for each of its growths
    (bytes a stream), every stream Canceled unless `ended` says otherwise (in its every reading)."""
    run_id = "20260111T000000Z"
    run_dir = root / "runs" / run_id
    stopped = [each for each in READER_SCENARIOS if READER_OF[each.name] == "stopped"]
    readings = max(len(each) for each in grown.values())
    data = study_meta(run_id, "readers", dict.fromkeys(grown), [each.name for each in stopped[:readings]])
    data["studies"]["readers"]["settings"] = dict(READERS_SETTINGS)
    write_json_atomic(run_dir / "run.json", data)
    where = run_dir / "readers"
    for server, growths in grown.items():
        for scenario, each in zip(stopped, growths, strict=False):
            record = CellRecord(scenario.name, server, READER_STREAMS, "ok", seconds=25.0)
            raw = slow_report(READER_STREAMS, 1, (ended or {}).get(server, {"Canceled": READER_STREAMS}))
            relative = f"{record.stem}-r1.json"
            write_json_atomic(where / relative, raw)
            start = 60 * 1024 * 1024
            usage = ResourceUsage(20.0, 4.0, 60.0, start + READER_STREAMS * each, start_rss_bytes=start)
            save_cell(where, replace(record, repeats=[Repeat(relative, raw["count"], usage, 1.0)]))
    return run_dir


RUN_TIMEOUT = 900  # seconds a test of a whole run-all may take: its pytest-timeout (a run here takes 1 to 2 min)


def harness(*args: str, timeout: float = within(RUN_TIMEOUT)) -> subprocess.CompletedProcess[str]:
    """`python -m harness` with these arguments from the project's root: it must exit 0 and leave no process it
    started."""
    before = started_by_harness()
    finished = run_harness(*args, timeout=timeout)
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert started_by_harness() <= before
    return finished


def served_over(run_dir: Path, wire: str) -> None:
    """Every cell of a run served and driven over this wire, and no certificate kept."""
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["status"] == "complete" and meta["wire"] == {"name": wire, "key_type": "ECDSA"}
    cells = [json.loads(path.read_text()) for path in run_dir.glob("*/cells/*/*/c*.json") if "-" not in path.stem]
    assert cells and all(cell["status"] == "ok" for cell in cells)
    assert all(cell["tls"].startswith("TLSv1.") for cell in cells), {cell["server"]: cell["tls"] for cell in cells}
    assert not list(run_dir.rglob("*.key")) and not list(run_dir.rglob("*.pem"))  # the certificates are not kept
