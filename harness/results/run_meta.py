"""run.json as typed records: a run's metadata (RunMeta), each study's entry in it, the targets it judged and
the thresholds it judged them by; read back from a run of any readable schema."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.results.files import SCHEMA, write_json_atomic


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
    # A shard of a plan (run-all --shard i/n, harness.plan.shards): {"plan", "index", "count"}; {} for a whole run.
    shard: dict[str, Any] = field(default_factory=dict)
    # The earlier runs whose readings seeded the race (harness.analysis.evidence.seeds): [] for a fresh run.
    seeded_by: list[str] = field(default_factory=list)
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
