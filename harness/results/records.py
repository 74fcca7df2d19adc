"""Result files: typed, versioned JSON written atomically, and the run's metadata.

Layout of one run (`<out>/runs/<run id>/`):
  run.json                                           metadata, each study's matrix, wall time and targets
  <study>/cells/<scenario>/<server>/c<N>.json        one cell: status or failure reason, sizing, resources
  <study>/cells/<scenario>/<server>/c<N>-r<k>.json   the driver's report of repeat k (an HdrHistogram, no details)
  <study>/cells/<scenario>/<server>/c<N>+<how>.json  a cell whose driver did not share one connection
                                                     (+per-worker, +pool-10, +per-call), its reports likewise
  <study>/cells/<scenario>/<server>/probe.json       calls one at a time, for the bounds (bounded scenarios)
  <study>/cells/<scenario>/<server>/c<N>-round<k>-<j>.json  slice j of block k of a comparison (the A/A twin's:
                                                     -control<k>-<j>.json, in the reference's cell); runs before
                                                     blocks: -round<k>.json, one window of round k
  <study>/comparisons/<scenario>__c<N>.json          a comparison in rounds: the seed, each round's order, when
                                                     and why each alternative stopped (harness.method.verdicts)

Runs of schema 1 (before studies) hold one study, `stacks`, with `cells/` at the run's top.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.method.verdicts import ComparisonRecord
from harness.plan.matrix import CELL_NAME, SHARED, cell_name
from harness.run.drivers.report import LoadReport
from harness.run.machine import machine_class, speed_text
from harness.run.tls import PLAINTEXT

SCHEMA = 3
READABLE_SCHEMAS = (1, 2, 3)
LEGACY_STUDY = "stacks"  # the only study of a schema-1 run
DIRTY = "+dirty"  # the suffix of a commit with changes that were not committed


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
class ResourceUsage:
    """Server CPU time and memory over one measured run. CPU% is of one core (200% = two cores)."""

    wall_seconds: float
    cpu_seconds: float
    peak_cpu_percent: float
    peak_rss_bytes: int
    sampled: bool = True  # False for a server the harness did not start: only the wall time is known
    # The CPU seconds of each process of a server with several (largest first): how its port spread the load.
    process_cpu_seconds: list[float] = field(default_factory=list)

    @property
    def average_cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0


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
    round: int | None = None  # the round (block) of a comparison this window was measured in (harness.method.rounds)
    # The calls each process of a several-process server took (its own counters, most first), when counted.
    process_calls: list[int] = field(default_factory=list)
    # In a block: the slice's place in the block's order, and the CPU seconds the block's other servers, idle
    # beside it, spent while it ran (runs before blocks: None).
    slice: int | None = None
    neighbour_cpu_seconds: float | None = None
    # The TCP segments the machine sent during the run (harness.run.resources.tcp_segments; None where not read).
    tcp_segments: int | None = None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Repeat:
        return cls(
            raw.get("report_file") or raw["ghz_file"],
            raw["requests"],
            ResourceUsage(**raw["resources"]),
            raw.get("driver_cpu_seconds"),
            raw.get("role", "measured"),
            raw.get("server_counters"),
            raw.get("round"),
            raw.get("process_calls", []),
            raw.get("slice"),
            raw.get("neighbour_cpu_seconds"),
            raw.get("tcp_segments"),
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
    connections: str = SHARED  # how the driver's workers held their connections (harness.plan.matrix)
    wire: str = PLAINTEXT  # plaintext, tls or mtls
    # What a handshake with the cell's server settled (protocol, cipher suite, ALPN); "" over plaintext.
    tls: str = ""
    schema: int = SCHEMA

    @property
    def stem(self) -> str:
        return f"cells/{self.key}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def key(self) -> str:
        """scenario/server/c<N>[+connections]: the cell's name within its study, as Cell.key."""
        return f"{self.scenario}/{self.server}/{cell_name(self.concurrency, self.connections, self.wire)}"

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


def comparison_file(study_dir: Path, workload: str) -> Path:
    """Where a comparison's record lies: <study>/comparisons/<scenario>__c<N>.json."""
    return study_dir / "comparisons" / ("__".join(workload.split("/")) + ".json")


def save_comparison(study_dir: Path, record: ComparisonRecord) -> None:
    write_json_atomic(comparison_file(study_dir, record.workload), record.to_json())


def comparison_files(study_dir: Path) -> list[Path]:
    """The files of the comparisons a study ran in rounds, sorted; none in runs before rounds."""
    return sorted((study_dir / "comparisons").glob("*.json"))


def load_comparisons(study_dir: Path) -> list[ComparisonRecord]:
    """Every comparison a study ran in rounds, in the order their files sort."""
    return [ComparisonRecord.from_json(read_json(path)) for path in comparison_files(study_dir)]


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
        """Run, CPU model and count, pinning, and uncommitted code if so: what every table names."""
        env, pinning = self.meta["environment"], self.meta["pinning"]
        return (
            f"run `{self.run_id}`, {env['cpu_model']} ({env['cpu_count']} CPUs), server on CPU "
            f"{_cpus(pinning['server_cpus'])}, load generator and backends on CPU "
            f"{_cpus(pinning['ghz_and_backend_cpus'])}" + self.machine_text + self.provenance
        )

    @property
    def machine_text(self) -> str:
        """The machine's class and speed index where the run recorded them (harness.run.machine), "" where not."""
        machine = self.meta.get("machine") or {}
        if not machine:
            return ""
        speed = speed_text(machine.get("speed", {}))
        stolen = machine.get("steal_share")
        return (
            f"; machine {machine_class(machine['fingerprint'])}"
            + (f", speed index: {speed}" if speed else "")
            + (f", {stolen:.1%} of CPU time stolen" if stolen is not None else "")
        )

    @property
    def uncommitted(self) -> str:
        """The commit the run's code had uncommitted changes to; "" for a run from a clean commit."""
        commit = str(self.meta["environment"].get("git_commit", ""))
        return commit.removesuffix(DIRTY) if commit.endswith(DIRTY) else ""

    @property
    def provenance(self) -> str:
        """What a title must add about the code the run was made from: "" for a clean commit."""
        return f"; **made from uncommitted changes** to `{self.uncommitted[:12]}`" if self.uncommitted else ""

    @property
    def thresholds(self) -> Thresholds:
        return thresholds_of(self.meta)

    @property
    def settings(self) -> dict[str, Any]:
        """The values the study's report judges by, as the run recorded them (or as they held for its schema)."""
        entry = self.meta.get("studies", {}).get(self.study, {})
        if "settings" in entry:
            return dict(entry["settings"])
        return dict(SCHEMA_DEFAULTS[self.meta["schema"]]["settings"][self.study])

    def processes(self, server: str) -> int:
        """How many server processes a variant ran."""
        recorded_here = self.matrix.get("server_processes")
        table = recorded_here if recorded_here is not None else SCHEMA_DEFAULTS[self.meta["schema"]]["server_processes"]
        return int(table.get(server) or 1)  # a --target's processes are unknown: it counts as one

    @property
    def targets(self) -> dict[str, Target]:
        return {name: Target.from_json(raw) for name, raw in (self.info.get("targets") or {}).items()}


def _cpus(cpus: list[int]) -> str:
    return ",".join(map(str, cpus)) if cpus else "any (not pinned)"


def studies_in(meta: dict[str, Any]) -> list[str]:
    """The studies a run holds, in the order it ran them."""
    return list(meta["studies"]) if "studies" in meta else [LEGACY_STUDY]


def is_aside(meta: dict[str, Any]) -> bool:
    """A run made --aside: it answers one question and decides no row (runs before the flag decided)."""
    return bool(meta.get("aside"))


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


# --- what a run records about itself ----------------------------------------------------------------------


@dataclass(frozen=True)
class Thresholds:
    """The values every study's tables and prose judge by, recorded in each run."""

    tie: float = 0.05  # two throughputs within this share of each other are a tie
    noise: float = 0.10  # a cell whose runs stray more than this from their median is noisy
    driver_busy: float = 0.80  # a driver above this share of its CPUs may have been the limit
    # Our driver's OK rate and the server's CPU per call under it within this share of the checking driver's: the
    # tie band (runs before 2026-11-26 checked the rate alone, within 10%).
    cross_check: float = 0.05

    def to_json(self) -> dict[str, float]:
        return asdict(self)


# What runs of older schemas did not record, as it held when they were made: one table per schema version.
# Never edit an entry: a new value is recorded by new runs, and these keep judging the old ones as they were.
_SCHEMA_2_DEFAULTS: dict[str, Any] = {
    "thresholds": {"tie": 0.05, "noise": 0.10, "driver_busy": 0.80, "cross_check": 0.10},
    "server_processes": {"sync-w10-p2": 2, "grpclib-uvloop-p2": 2, "aio-uvloop-p2": 2},
    "settings": {
        "stacks": {
            "time_target_seconds": 900,
            "cpu_bound_share": 0.90,
            "pays_off": 1.10,
            "baseline": "sync-w10",
            "efficiency_targets": [["hello-wait", 50, 0.90], ["s3-unary-100ms", 50, 0.80]],
        },
        "capacity": {
            "slo_seconds": {"hello": 0.010, "hello-wait": 0.150, "s3-unary-100ms": 0.300, "s3-mongo-100ms": 0.300},
            "step_calls": 2000,
            "step_seconds": 10.0,
            "precision": 0.05,
            "low_load_share": 0.10,
            "target_share": 0.80,
            "convoy": 1.10,
            "wait_bound_share": 0.80,
            "saturated": 0.90,
            "hand_offs": 1.5,
        },
        "streaming": {"cpu_bound_share": 0.80, "established_share": 0.99},
        "protocols": {},
        "connections": {},
    },
}
SCHEMA_DEFAULTS: dict[int, dict[str, Any]] = {1: _SCHEMA_2_DEFAULTS, 2: _SCHEMA_2_DEFAULTS}


@dataclass(frozen=True)
class Target:
    """A benchmark target measured on a finished study: met or not, what was measured, and whether a miss fails
    the run (a gate) or is only reported."""

    met: bool
    details: dict[str, Any] = field(default_factory=dict)
    gate: bool = False

    def to_json(self) -> dict[str, Any]:
        return {**self.details, "met": self.met, "gate": self.gate}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Target:
        """A recorded target; an older group of targets without its own `met` is met when all of them are."""
        if "met" not in raw:
            parts = [cls.from_json(value) for value in raw.values() if isinstance(value, dict)]
            return cls(all(part.met for part in parts), dict(raw))
        details = {key: value for key, value in raw.items() if key not in ("met", "gate")}
        return cls(bool(raw["met"]), details, bool(raw.get("gate", False)))


@dataclass(frozen=True)
class StudyEntry:
    """A study's entry in run.json: what it measured, the values its report judges by, how it ended."""

    question: str
    default_matrix: bool
    matrix: dict[str, Any]
    settings: dict[str, Any]
    status: str = "pending"  # pending, running, complete, interrupted
    wall_seconds: float = 0.0
    targets: dict[str, Target] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "targets": {name: target.to_json() for name, target in self.targets.items()}}


@dataclass(frozen=True)
class RunMeta:
    """run.json: the run, where and with what it was made, and each study's entry."""

    run_id: str
    date: str
    environment: dict[str, Any]
    drivers: dict[str, str]
    pinning: dict[str, list[int]]
    thresholds: Thresholds
    studies: dict[str, StudyEntry]
    status: str = "running"  # running, complete, interrupted
    backends: dict[str, Any] = field(default_factory=dict)
    target: dict[str, str] | None = None  # the server measured when the harness did not start it
    wall_seconds: float = 0.0
    budget_seconds: float | None = None  # the time the run's comparisons shared (--budget-minutes), or none
    # What the servers spoke: {"name": plaintext, tls or mtls} and, over TLS, the certificates' key type.
    wire: dict[str, str] = field(default_factory=lambda: {"name": "plaintext"})
    # Each interpreter the servers ran under (harness.plan.pythons.Prepared.to_json), where a study compared them.
    interpreters: dict[str, Any] = field(default_factory=dict)
    # What the pilot found of the machine's noise and costs before the comparisons (harness.method.pilot), or nothing.
    pilot: dict[str, Any] = field(default_factory=dict)
    # A run for one question (--aside: a narrow comparison, a fix's before and after): shown on its studies' pages,
    # never the run a study's answer and decision rows come from.
    aside: bool = False
    # The machine (harness.run.machine): its fingerprint, its speed index at the run's start and end, the CPU time
    # stolen.
    machine: dict[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA

    def to_json(self) -> dict[str, Any]:
        raw = {
            **asdict(self),
            "thresholds": self.thresholds.to_json(),
            "studies": {name: entry.to_json() for name, entry in self.studies.items()},
        }
        if self.target is None:
            del raw["target"]
        return raw

    def save(self, run_dir: Path) -> None:
        write_json_atomic(run_dir / "run.json", self.to_json())


def recorded(meta: dict[str, Any], key: str) -> Any:
    """A run-level value the run recorded, or for an older schema the value that held then."""
    return meta[key] if key in meta else SCHEMA_DEFAULTS[meta["schema"]][key]


def thresholds_of(meta: dict[str, Any]) -> Thresholds:
    """The thresholds a run's tables and prose judge by."""
    return Thresholds(**recorded(meta, "thresholds"))
