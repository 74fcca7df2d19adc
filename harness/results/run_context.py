"""Where and with what a run was made, as run.json records it: the environment, the CPUs each side was pinned to,
what the servers spoke, and each interpreter a study compared. Each is read back by the type that wrote it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from harness.plan.wires import PLAINTEXT

DIRTY = "+dirty"  # the suffix of a commit with changes that were not committed


def _present(found: dict[str, Any]) -> dict[str, Any]:
    """A record's fields less those it does not know (None), as older runs left them out."""
    return {key: value for key, value in found.items() if value is not None}


@dataclass(frozen=True)
class Environment:
    """The code, interpreter, packages and tools a run was made with, and the CPU as the OS names it; never
    credentials."""

    cpu_model: str
    cpu_count: int
    git_commit: str = ""
    platform: str = ""
    python: str = ""
    packages: dict[str, str] = field(default_factory=dict)
    tools: dict[str, str] = field(default_factory=dict)
    ghz: str = ""
    # Each server module's code (harness.results.code); None for runs before it was kept.
    module_codes: dict[str, str] | None = None
    server_code: str | None = None  # the servers' code as one hash, in runs before module_codes

    @property
    def uncommitted(self) -> str:
        """The commit the run's code had uncommitted changes to; "" for a run from a clean commit."""
        return self.git_commit.removesuffix(DIRTY) if self.git_commit.endswith(DIRTY) else ""

    @property
    def cpus(self) -> int:
        return self.cpu_count or 1

    def to_json(self) -> dict[str, Any]:
        return _present(asdict(self))


@dataclass(frozen=True)
class Pinning:
    """The CPUs the server under test ran on, and those the load generator and backends ran on ([]: not pinned)."""

    server_cpus: list[int]
    ghz_and_backend_cpus: list[int]

    def to_json(self) -> dict[str, list[int]]:
        return asdict(self)


@dataclass(frozen=True)
class RunWire:
    """What the servers spoke: plaintext, tls, mtls or "per cell" (the wire study's), and over TLS the
    certificates' key type."""

    name: str = PLAINTEXT
    key_type: str | None = None

    def to_json(self) -> dict[str, str]:
        return _present(asdict(self))


@dataclass(frozen=True)
class InterpreterRecord:
    """An interpreter the servers ran under, as the run prepared it (harness.plan.pythons.Prepared): what it is,
    how it was built, its virtualenv's packages, and per server module whether the GIL stayed on or why the module
    could not run there."""

    version: str = ""
    origin: str = ""
    executable: str = ""
    free_threaded: bool | None = None  # None for a build never probed (not found, not built)
    gil_enabled_after_import: dict[str, bool] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    packages: dict[str, str] = field(default_factory=dict)
    build: str | None = None
    compiler: str | None = None
    config_args: str | None = None
    compiled_here: list[str] = field(default_factory=list)
    protobuf_implementation: str | None = None
    grpcio_cflags: str | None = None
    build_seconds: float | None = None
    venv_seconds: float | None = None
    pins: dict[str, str] = field(default_factory=dict)  # the packages the versions study pinned on this side
    not_installed: dict[str, str] = field(default_factory=dict)  # package -> why pip could not install it

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> InterpreterRecord:
        known = {each.name for each in fields(cls)}
        if unknown := sorted(set(raw) - known):
            raise ValueError(f"an interpreter's record holds fields no reader knows: {', '.join(unknown)}")
        return cls(**raw)

    def to_json(self) -> dict[str, Any]:
        return _present(asdict(self))
