"""Result files: typed, versioned JSON written atomically, and the run's metadata.

Layout of one run (`<out>/runs/<run id>/`):
  run.json                                           metadata, each study's matrix, wall time and targets
  <study>/cells/<scenario>/<server>/c<N>.json        one cell: status or failure reason, sizing, resources
  <study>/cells/<scenario>/<server>/c<N>-r<k>.json   the driver's report of repeat k (an HdrHistogram, no details)
  <study>/cells/<scenario>/<server>/c<N>+<how>.json  a cell whose driver did not share one connection
                                                     (+per-worker, +pool-10, +per-call), its reports likewise
  <study>/cells/<scenario>/<server>/probe.json       calls one at a time, for the bounds (bounded scenarios)

Runs of schema 1 (before studies) hold one study, `stacks`, with `cells/` at the run's top.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.drivers.report import LoadReport
from harness.matrix import CELL_NAME, SHARED, cell_name
from harness.resources import ResourceUsage
from harness.tools import ROOT

SCHEMA = 2
READABLE_SCHEMAS = (1, 2)
LEGACY_STUDY = "stacks"  # the only study of a schema-1 run
PACKAGES = ("grpcio", "grpclib", "uvloop", "protobuf", "boto3", "aioboto3", "pymongo", "motor")


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write path so that a reader sees the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False) as temporary:
        try:
            temporary.write(data)
            temporary.flush()
            os.fsync(temporary.fileno())
        except BaseException:
            os.unlink(temporary.name)
            raise
    os.replace(temporary.name, path)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


@dataclass(frozen=True)
class Repeat:
    """One measured run of a cell: the driver's report file, the server's resources and the driver's CPU."""

    report_file: str
    requests: int
    resources: ResourceUsage
    driver_cpu_seconds: float | None = None  # None in runs from before it was measured
    # What the run was for within its cell: "measured" (a repeat), or a study's own role ("step", "low-load", ...).
    role: str = "measured"
    # What the server counted about itself during the run (servers/diagnostics.py), when the study asked.
    server_counters: dict[str, float] | None = None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Repeat:
        return cls(
            raw.get("report_file") or raw["ghz_file"],
            raw["requests"],
            ResourceUsage(**raw["resources"]),
            raw.get("driver_cpu_seconds"),
            raw.get("role", "measured"),
            raw.get("server_counters"),
        )


@dataclass(frozen=True)
class CellRecord:
    """What happened in one cell. A failed cell keeps its reason and whatever repeats finished."""

    scenario: str
    server: str
    concurrency: int
    status: str  # "ok", "failed" or "skipped"
    reason: str = ""
    warmup_requests: int = 0
    warmup_ok_rps: float = 0.0
    repeats: list[Repeat] = field(default_factory=list)
    seconds: float = 0.0
    s3_latency_ms: int = 0
    mongo_latency_ms: int = 0
    jitter_ms: int = 0
    probe_file: str = ""  # the report of calls made one at a time, for the cell's bounds
    connections: str = SHARED  # how the driver's workers held their connections (harness.matrix)
    schema: int = SCHEMA

    @property
    def stem(self) -> str:
        return f"cells/{self.key}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def key(self) -> str:
        """scenario/server/c<N>[+connections]: the cell's name within its study, as Cell.key."""
        return f"{self.scenario}/{self.server}/{cell_name(self.concurrency, self.connections)}"

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CellRecord:
        if raw.get("schema") not in READABLE_SCHEMAS:
            raise ValueError(f"cell record schema {raw.get('schema')!r}, expected one of {READABLE_SCHEMAS}")
        repeats = [Repeat.from_json(r) for r in raw["repeats"]]
        return cls(**{**raw, "repeats": repeats})


@dataclass(frozen=True)
class CellResult:
    """A cell record with its driver reports loaded."""

    record: CellRecord
    reports: list[LoadReport]
    probe: LoadReport | None = None


def save_cell(study_dir: Path, record: CellRecord) -> None:
    write_json_atomic(study_dir / f"{record.stem}.json", record.to_json())


def save_report(study_dir: Path, relative: str, raw: dict[str, Any]) -> str:
    """Store one driver report at study_dir/relative; returns relative."""
    write_json_atomic(study_dir / relative, raw)
    return relative


def load_cells(study_dir: Path) -> list[CellResult]:
    """Every cell record of a study in a run, with its reports, from the files alone."""
    results = []
    for path in sorted((study_dir / "cells").glob("*/*/c*.json")):
        if not CELL_NAME.fullmatch(path.stem):  # a driver's report, not a cell
            continue
        record = CellRecord.from_json(read_json(path))
        reports = [LoadReport.from_json(read_json(study_dir / repeat.report_file)) for repeat in record.repeats]
        probe = LoadReport.from_json(read_json(study_dir / record.probe_file)) if record.probe_file else None
        results.append(CellResult(record, reports, probe))
    return results


@dataclass(frozen=True)
class StudyRun:
    """One study's cells in one run, with the run's metadata."""

    study: str
    run_dir: Path
    meta: dict[str, Any]
    cells: list[CellResult]

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])

    @property
    def cpu_model(self) -> str:
        return str(self.meta["environment"]["cpu_model"])

    @property
    def matrix(self) -> dict[str, Any]:
        """The study's matrix as the run recorded it."""
        return dict(self.meta["studies"][self.study]["matrix"]) if "studies" in self.meta else self.meta["matrix"]

    @property
    def info(self) -> dict[str, Any]:
        """The study's entry in run.json: wall time, targets, whether it was the full default matrix."""
        if "studies" in self.meta:
            return dict(self.meta["studies"][self.study])
        targets = self.meta.get("targets", {})
        return {
            "wall_seconds": self.meta.get("wall_seconds", 0.0),
            "targets": targets,
            "default_matrix": targets.get("wall_time", {}).get("applies", False),
        }

    @property
    def title(self) -> str:
        """Run, CPU model and count, pinning: what every table names."""
        env, pinning = self.meta["environment"], self.meta["pinning"]
        return (
            f"run `{self.run_id}`, {env['cpu_model']} ({env['cpu_count']} CPUs), server on CPU "
            f"{_cpus(pinning['server_cpus'])}, load generator and backends on CPU "
            f"{_cpus(pinning['ghz_and_backend_cpus'])}"
        )


def _cpus(cpus: list[int]) -> str:
    return ",".join(map(str, cpus)) if cpus else "any (not pinned)"


def studies_in(meta: dict[str, Any]) -> list[str]:
    """The studies a run holds, in the order it ran them."""
    return list(meta["studies"]) if "studies" in meta else [LEGACY_STUDY]


def study_dir(run_dir: Path, meta: dict[str, Any], study: str) -> Path:
    """Where a study's files are in a run."""
    return run_dir if "studies" not in meta else run_dir / study


def load_study(run_dir: Path, study: str) -> StudyRun:
    """One study of a run, from its files; FileNotFoundError when the run does not hold it."""
    meta = read_json(run_dir / "run.json")
    if study not in studies_in(meta):
        raise FileNotFoundError(f"run {run_dir.name} holds no {study} study (it holds {', '.join(studies_in(meta))})")
    return StudyRun(study, run_dir, meta, load_cells(study_dir(run_dir, meta, study)))


def all_runs(out_dir: Path) -> list[Path]:
    """Every run directory under out_dir/runs, oldest first."""
    return sorted(path.parent for path in (out_dir / "runs").glob("*/run.json"))


def resolve_run(out_dir: Path, name: str) -> Path:
    """A run given by id (under out_dir/runs) or by directory."""
    for candidate in (Path(name), out_dir / "runs" / name):
        if (candidate / "run.json").is_file():
            return candidate
    raise FileNotFoundError(f"no run {name!r}: give a run id under {out_dir / 'runs'} or a run directory")


def _git_commit() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}{'+dirty' if dirty else ''}"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment(ghz_version: str) -> dict[str, Any]:
    """Where and with what the run was made: never credentials."""
    return {
        "git_commit": _git_commit(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": {package: _version(package) for package in PACKAGES},
        "ghz": ghz_version,
    }
