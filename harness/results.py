"""Result files: typed, versioned JSON written atomically, and the run's metadata.

Layout of one run (`<out>/runs/<run id>/`):
  run.json                                   metadata, the matrix, status, wall time, targets
  cells/<scenario>/<server>/c<N>.json        one cell: status or failure reason, sizing, resources
  cells/<scenario>/<server>/c<N>-r<k>.json   ghz's report of repeat k, per-request details stripped
  cells/<scenario>/<server>/c<N>-probe.json  calls one at a time, for the bounds (bounded scenarios)
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

from harness.ghz import GhzReport
from harness.resources import ResourceUsage
from harness.tools import ROOT

SCHEMA = 1
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
    """One measured run of a cell: its ghz report file and the server's resources meanwhile."""

    ghz_file: str
    requests: int
    resources: ResourceUsage


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
    probe_file: str = ""  # ghz's report of calls made one at a time, for the cell's bounds
    schema: int = SCHEMA

    @property
    def stem(self) -> str:
        return f"cells/{self.scenario}/{self.server}/c{self.concurrency}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> CellRecord:
        if raw.get("schema") != SCHEMA:
            raise ValueError(f"cell record schema {raw.get('schema')!r}, expected {SCHEMA}")
        repeats = [Repeat(r["ghz_file"], r["requests"], ResourceUsage(**r["resources"])) for r in raw["repeats"]]
        return cls(**{**raw, "repeats": repeats})


@dataclass(frozen=True)
class CellResult:
    """A cell record with its ghz reports loaded."""

    record: CellRecord
    reports: list[GhzReport]
    probe: GhzReport | None = None


def save_cell(run_dir: Path, record: CellRecord) -> None:
    write_json_atomic(run_dir / f"{record.stem}.json", record.to_json())


def save_ghz(run_dir: Path, record_stem: str, run: str, raw: dict[str, Any]) -> str:
    """Store one ghz report (run "r1", "r2", ... or "probe"); returns its path relative to the run directory."""
    relative = f"{record_stem}-{run}.json"
    write_json_atomic(run_dir / relative, raw)
    return relative


def load_cells(run_dir: Path) -> list[CellResult]:
    """Every cell record of a run, with its ghz reports, from the files alone."""
    results = []
    for path in sorted((run_dir / "cells").glob("*/*/c*.json")):
        if "-" in path.stem:
            continue
        record = CellRecord.from_json(read_json(path))
        reports = [GhzReport.from_json(read_json(run_dir / repeat.ghz_file)) for repeat in record.repeats]
        probe = GhzReport.from_json(read_json(run_dir / record.probe_file)) if record.probe_file else None
        results.append(CellResult(record, reports, probe))
    return results


def latest_run(out_dir: Path) -> Path:
    """The newest run directory under out_dir/runs."""
    runs = sorted(path.parent for path in (out_dir / "runs").glob("*/run.json"))
    if not runs:
        raise FileNotFoundError(f"no run under {out_dir / 'runs'}: run `python -m harness run-all` first")
    return runs[-1]


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
