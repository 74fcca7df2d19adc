"""A run's machine as its record says it (harness.run.machine measures it): the fingerprint, whose class makes runs
comparable, the speed index at the run's start and end, and the CPU time stolen."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fingerprint:
    """The CPU and kernel a run ran on, read from /proc and the platform."""

    vendor: str
    family: str
    model: str
    stepping: str
    model_name: str = ""
    microcode: str = ""
    cache: str = ""
    flags: int = 0
    flags_sha256: str = ""
    kernel: str = ""
    clocksource: str = ""
    cores_seen: int | None = None
    cores_usable: int | None = None

    @property
    def machine_class(self) -> str:
        """What makes runs comparable: the CPU (vendor, family, model, stepping) and the cores seen, e.g.
        "AuthenticAMD 25/1/1, 2 cores"."""
        return f"{self.vendor} {self.family}/{self.model}/{self.stepping}, {self.cores_seen} cores"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Speed:
    """The speed index: the best of five timings of a pure-Python loop and of a native one."""

    python_seconds: float
    native_seconds: float

    def to_json(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Machine:
    """What a run recorded of its machine: the fingerprint, the speed index by when it was taken ("start", "end"),
    and the share of CPU time stolen over the run (None until it ends)."""

    fingerprint: Fingerprint
    speed: dict[str, Speed] = field(default_factory=dict)
    steal_share: float | None = None

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Machine:
        speeds = {when: Speed(**found) for when, found in raw.get("speed", {}).items()}
        return cls(Fingerprint(**raw["fingerprint"]), speeds, raw.get("steal_share"))

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "fingerprint": self.fingerprint.to_json(),
            "speed": {when: each.to_json() for when, each in self.speed.items()},
        }
        return found if self.steal_share is None else {**found, "steal_share": self.steal_share}

    @property
    def speed_text(self) -> str:
        """The speed index in a phrase: "Python loop 0.21 s, native 0.05 s (start); 0.22 s, 0.05 s (end)"."""
        parts = []
        for when in ("start", "end"):
            if found := self.speed.get(when):
                python, native = found.python_seconds, found.native_seconds
                parts.append(f"Python loop {python:.2f} s, native {native:.2f} s ({when})")
        return "; ".join(parts)
