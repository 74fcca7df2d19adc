"""Result files: typed, versioned JSON written atomically, a run's cells and comparisons (its metadata: run_meta).

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

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.method.comparison_record import ComparisonRecord
from harness.plan.matrix import CELL_NAME, SHARED, cell_name
from harness.plan.wires import PLAINTEXT
from harness.results.archive import run_files, unpacked
from harness.results.files import READABLE_SCHEMAS, SCHEMA, read_json, write_json_atomic
from harness.results.load import LoadReport
from harness.results.run_meta import SCHEMA_DEFAULTS, RunMeta, StudyEntry, Target, Thresholds


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
    start_rss_bytes: int = 0  # its memory as the run began (0 in runs from before it was kept): peak less it grew

    @property
    def average_cpu_percent(self) -> float:
        return 100.0 * self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else 0.0


def loop_lag_ms(counters: Mapping[str, float]) -> float | None:
    """How late a server's event loop woke on average, in ms, by the counters it kept (servers.diagnostics); None
    where it checked no loop (a thread pool, or no counters)."""
    checks = counters.get("lag_checks", 0)
    return 1000 * counters.get("lag_seconds", 0.0) / checks if checks else None


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
    block: int | None = None  # the block of a comparison this window was measured in (harness.method.contest)
    # The calls each process of a several-process server took (its own counters, most first), when counted.
    process_calls: list[int] = field(default_factory=list)
    # In a block: the slice's place in the block's order, and the CPU seconds the block's other servers, idle
    # beside it, spent while it ran (runs before blocks: None).
    slice: int | None = None
    neighbour_cpu_seconds: float | None = None
    # The TCP segments the machine sent during the run (harness.run.resources.tcp_segments; None where not read).
    tcp_segments: int | None = None
    # The CPU seconds the latency proxy between the server and its backends spent during the run (None: no proxy).
    proxy_cpu_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        return {**{key: value for key, value in found.items() if key != "block"}, "round": self.block}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Repeat:
        return cls(
            raw.get("report_file") or raw["ghz_file"],
            raw["requests"],
            ResourceUsage(**raw["resources"]),
            raw.get("driver_cpu_seconds"),
            raw.get("role", "measured"),
            raw.get("server_counters"),
            raw.get("round"),  # the key records have kept since blocks were rounds
            raw.get("process_calls", []),
            raw.get("slice"),
            raw.get("neighbour_cpu_seconds"),
            raw.get("tcp_segments"),
            raw.get("proxy_cpu_seconds"),
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
        return {**asdict(self), "repeats": [repeat.to_json() for repeat in self.repeats]}

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
    meta: RunMeta
    cells: list[CellResult]

    @property
    def run_id(self) -> str:
        return self.meta.run_id

    @property
    def cpu_model(self) -> str:
        return self.meta.environment.cpu_model

    @property
    def entry(self) -> StudyEntry:
        """The study's entry in run.json: its matrix, wall time, targets, whether it was the full default matrix."""
        return self.meta.studies[self.study]

    @property
    def matrix(self) -> dict[str, Any]:
        """The study's matrix as the run recorded it."""
        return dict(self.entry.matrix)

    @property
    def folder(self) -> Path:
        """Where the study's files are in the run."""
        return self.meta.study_dir(self.run_dir, self.study)

    @property
    def title(self) -> str:
        """Run, CPU model and count, pinning, and uncommitted code if so: what every table names."""
        env, pinning = self.meta.environment, self.meta.pinning
        return (
            f"run `{self.run_id}`, {env.cpu_model} ({env.cpu_count} CPUs), server on CPU "
            f"{_cpus(pinning.server_cpus)}, load generator and backends on CPU "
            f"{_cpus(pinning.ghz_and_backend_cpus)}" + self.machine_text + self.provenance
        )

    @property
    def machine_text(self) -> str:
        """The machine's class and speed index where the run recorded them (harness.run.machine), "" where not."""
        machine = self.meta.machine
        if machine is None:
            return ""
        speed, stolen = machine.speed_text, machine.steal_share
        return (
            f"; machine {machine.fingerprint.machine_class}"
            + (f", speed index: {speed}" if speed else "")
            + (f", {stolen:.1%} of CPU time stolen" if stolen is not None else "")
        )

    @property
    def uncommitted(self) -> str:
        """The commit the run's code had uncommitted changes to; "" for a run from a clean commit."""
        return self.meta.environment.uncommitted

    @property
    def provenance(self) -> str:
        """What a title must add about the code the run was made from: "" for a clean commit."""
        return f"; **made from uncommitted changes** to `{self.uncommitted[:12]}`" if self.uncommitted else ""

    @property
    def thresholds(self) -> Thresholds:
        return self.meta.judged_by

    @property
    def settings(self) -> dict[str, Any]:
        """The values the study's report judges by, as the run recorded them (or as they held for its schema)."""
        if self.entry.settings is not None:
            return dict(self.entry.settings)
        return dict(SCHEMA_DEFAULTS[self.meta.schema]["settings"][self.study])

    def processes(self, server: str) -> int:
        """How many server processes a variant ran."""
        recorded_here = self.matrix.get("server_processes")
        table = recorded_here if recorded_here is not None else SCHEMA_DEFAULTS[self.meta.schema]["server_processes"]
        return int(table.get(server) or 1)  # a --target's processes are unknown: it counts as one

    @property
    def targets(self) -> dict[str, Target]:
        return self.entry.targets


def _cpus(cpus: list[int]) -> str:
    return ",".join(map(str, cpus)) if cpus else "any (not pinned)"


def read_meta(run_dir: Path) -> RunMeta:
    """A run's run.json, typed."""
    return RunMeta.from_json(read_json(run_dir / "run.json"))


def load_study(run_dir: Path, study: str) -> StudyRun:
    """One study of a run, from its files; FileNotFoundError when the run does not hold it."""
    meta = read_meta(run_dir)
    if study not in meta.studies:
        raise FileNotFoundError(f"run {run_dir.name} holds no {study} study (it holds {', '.join(meta.studies)})")
    return StudyRun(study, run_dir, meta, load_cells(meta.study_dir(run_dir, study)))


def all_runs(out_dir: Path) -> list[Path]:
    """Every run directory under out_dir/runs, oldest first."""
    return [path.parent for path in run_files(out_dir / "runs")]


def resolve_run(out_dir: Path, name: str) -> Path:
    """A run given by id (under out_dir/runs) or by directory."""
    unpacked(out_dir / "runs")
    for candidate in (Path(name), out_dir / "runs" / name):
        if (candidate / "run.json").is_file():
            return candidate
    raise FileNotFoundError(f"no run {name!r}: give a run id under {out_dir / 'runs'} or a run directory")
