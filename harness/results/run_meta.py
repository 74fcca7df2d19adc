"""run.json as typed records: a run's metadata (RunMeta), each study's entry in it, the targets it judged and
the thresholds it judged them by; read back from a run of any readable schema."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.method.pilot import Pilot
from harness.results.files import READABLE_SCHEMAS, SCHEMA, write_json_atomic
from harness.results.machines import Machine
from harness.results.run_context import Environment, InterpreterRecord, Pinning, RunWire


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
LEGACY_STUDY = "stacks"  # the only study of a schema-1 run


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
    settings: dict[str, Any] | None  # None in runs of schema 2, which judged by SCHEMA_DEFAULTS
    status: str = "pending"  # pending, running, complete, interrupted
    wall_seconds: float = 0.0
    targets: dict[str, Target] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> StudyEntry:
        return cls(
            raw["question"],
            raw["default_matrix"],
            raw["matrix"],
            raw.get("settings"),
            raw.get("status", "pending"),
            raw.get("wall_seconds", 0.0),
            {name: Target.from_json(target) for name, target in raw.get("targets", {}).items()},
        )

    def to_json(self) -> dict[str, Any]:
        found = {**asdict(self), "targets": {name: target.to_json() for name, target in self.targets.items()}}
        return found if self.settings is not None else {key: value for key, value in found.items() if key != "settings"}


@dataclass(frozen=True)
class RunMeta:
    """run.json: the run, where and with what it was made, and each study's entry."""

    run_id: str
    date: str
    environment: Environment
    drivers: dict[str, str]
    pinning: Pinning
    thresholds: Thresholds | None  # None in runs of schema 2, which judged by SCHEMA_DEFAULTS
    studies: dict[str, StudyEntry]
    status: str = "running"  # running, complete, interrupted
    backends: dict[str, Any] = field(default_factory=dict)
    target: dict[str, str] | None = None  # the server measured when the harness did not start it
    wall_seconds: float = 0.0
    budget_seconds: float | None = None  # the time the run's comparisons shared (--budget-minutes), or none
    wire: RunWire = field(default_factory=RunWire)  # what the servers spoke
    # Each interpreter the servers ran under, where a study compared them.
    interpreters: dict[str, InterpreterRecord] = field(default_factory=dict)
    # What the pilot found of the machine's noise and costs before the comparisons (harness.method.pilot), or None.
    pilot: Pilot | None = None
    # A run for one question (--aside: a narrow comparison, a fix's before and after): shown on its studies' pages,
    # never the run a study's answer and decision rows come from.
    aside: bool = False
    # The machine (harness.run.machine): its fingerprint, its speed index at the run's start and end, the CPU time
    # stolen; None for runs before fingerprints.
    machine: Machine | None = None
    # A shard of a plan (run-all --shard i/n, harness.plan.shards): {"plan", "index", "count"}; {} for a whole run.
    shard: dict[str, Any] = field(default_factory=dict)
    # The earlier runs whose readings seeded the race (harness.analysis.evidence.seeds): [] for a fresh run.
    seeded_by: list[str] = field(default_factory=list)
    schema: int = SCHEMA
    # A run of schema 1 held one study, LEGACY_STUDY, with its files at the run's top rather than in its folder.
    legacy_layout: bool = False

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> RunMeta:
        """run.json of any readable schema. Schema 1 (before studies) gives its matrix and targets to one entry."""
        if raw["schema"] not in READABLE_SCHEMAS:
            raise ValueError(f"run {raw.get('run_id')} has schema {raw['schema']}; this code reads {READABLE_SCHEMAS}")
        legacy = "studies" not in raw
        if legacy:
            targets = raw.get("targets", {})
            default = bool(targets.get("wall_time", {}).get("applies", False))
            entry = {"question": "", "default_matrix": default, "matrix": raw["matrix"], "status": raw["status"]}
            studies = {LEGACY_STUDY: {**entry, "wall_seconds": raw.get("wall_seconds", 0.0), "targets": targets}}
        else:
            studies = raw["studies"]
        thresholds, interpreters = raw.get("thresholds"), raw.get("interpreters", {})
        return cls(
            run_id=raw["run_id"],
            date=raw.get("date", ""),
            environment=Environment(**raw["environment"]),
            drivers=raw.get("drivers", {}),
            pinning=Pinning(**raw["pinning"]),
            thresholds=None if thresholds is None else Thresholds(**thresholds),
            studies={name: StudyEntry.from_json(entry) for name, entry in studies.items()},
            status=raw.get("status", ""),
            backends=raw.get("backends", {}),
            target=raw.get("target"),
            wall_seconds=raw.get("wall_seconds", 0.0),
            budget_seconds=raw.get("budget_seconds"),
            wire=RunWire(**raw.get("wire", {})),
            interpreters={name: InterpreterRecord.from_json(each) for name, each in interpreters.items()},
            pilot=Pilot.from_json(raw["pilot"]) if raw.get("pilot") else None,
            aside=bool(raw.get("aside", False)),
            machine=Machine.from_json(raw["machine"]) if raw.get("machine") else None,
            shard=raw.get("shard") or {},
            seeded_by=raw.get("seeded_by") or [],
            schema=raw["schema"],
            legacy_layout=legacy,
        )

    def to_json(self) -> dict[str, Any]:
        raw: dict[str, Any] = {
            "run_id": self.run_id,
            "date": self.date,
            "environment": self.environment.to_json(),
            "drivers": self.drivers,
            "pinning": self.pinning.to_json(),
            "studies": {name: entry.to_json() for name, entry in self.studies.items()},
            "status": self.status,
            "backends": self.backends,
            "wall_seconds": self.wall_seconds,
            "budget_seconds": self.budget_seconds,
            "wire": self.wire.to_json(),
            "interpreters": {name: each.to_json() for name, each in self.interpreters.items()},
            "pilot": self.pilot.to_json() if self.pilot else {},
            "aside": self.aside,
            "machine": self.machine.to_json() if self.machine else {},
            "shard": self.shard,
            "seeded_by": self.seeded_by,
            "schema": self.schema,
        }
        if self.thresholds is not None:
            raw["thresholds"] = self.thresholds.to_json()
        if self.target is not None:
            raw["target"] = self.target
        return raw

    def save(self, run_dir: Path) -> None:
        write_json_atomic(run_dir / "run.json", self.to_json())

    @property
    def judged_by(self) -> Thresholds:
        """The thresholds the run's tables and prose judge by: as it recorded them, or as they held for its schema."""
        if self.thresholds is not None:
            return self.thresholds
        return Thresholds(**SCHEMA_DEFAULTS[self.schema]["thresholds"])

    @property
    def cpu_class(self) -> str:
        """The machine class runs are pooled within: the fingerprint's class, or for a run before fingerprints its
        CPU model and count."""
        if self.machine is not None:
            return self.machine.fingerprint.machine_class
        return f"{self.environment.cpu_model}, {self.environment.cpu_count} cores"

    @property
    def server_cpus(self) -> int:
        """How many CPUs the server under test could use: those it was pinned to, or all."""
        return len(self.pinning.server_cpus) or self.environment.cpus

    @property
    def driver_cpus(self) -> int:
        """How many CPUs the load generator (with the backends) could use: those it was pinned to, or all."""
        return len(self.pinning.ghz_and_backend_cpus) or self.environment.cpus

    @property
    def whole(self) -> bool:
        """A complete run of its whole plan (not a shard), made to decide (not aside)."""
        return self.status == "complete" and not self.shard and not self.aside

    def study_dir(self, run_dir: Path, study: str) -> Path:
        """Where a study's files are in the run."""
        return run_dir if self.legacy_layout else run_dir / study
