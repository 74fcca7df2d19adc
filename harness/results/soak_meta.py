"""soak/<run>/run.json as a typed record: when and where a soak ran, for how long, which servers, how it ended."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.results.files import read_json, write_json_atomic
from harness.results.run_context import Environment


@dataclass(frozen=True)
class SoakMeta:
    """A soak run: each server served for `minutes` in turn, on the CPUs it was pinned to."""

    run_id: str
    date: str
    environment: Environment
    minutes: float
    servers: list[str]
    server_cpus: list[int]
    status: str = "running"  # running, complete, interrupted

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SoakMeta:
        return cls(
            raw["run_id"],
            raw["date"],
            Environment(**raw["environment"]),
            raw["minutes"],
            raw["servers"],
            raw["pinning"]["server_cpus"],
            raw["status"],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "date": self.date,
            "environment": self.environment.to_json(),
            "minutes": self.minutes,
            "servers": self.servers,
            "pinning": {"server_cpus": self.server_cpus},
            "status": self.status,
        }

    def save(self, run_dir: Path) -> None:
        write_json_atomic(run_dir / "run.json", self.to_json())


def read_soak_meta(run_dir: Path) -> SoakMeta:
    return SoakMeta.from_json(read_json(run_dir / "run.json"))
