"""What the interpreter axis's parts share: where built interpreters and their virtualenvs are cached, the marker
that says one is complete, and the interpreter itself (harness.plan.pythons finds and builds them,
harness.plan.virtualenvs gives them their packages)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.paths import ROOT

PYTHONS_DIR = ROOT / ".cache" / "pythons"
VENVS_DIR = ROOT / ".cache" / "venvs"
CONSTRAINTS = ROOT / "constraints.txt"
MARKER = ".complete.json"

# grpcio's Cython module asks for the GIL unless built with this define (its cygrpc sources, Cython 3.1+). Its
# setup.py takes extra compiler flags from GRPC_PYTHON_CFLAGS alone (CFLAGS does not reach its compile), and that
# variable replaces its defaults on Linux, so they come first.
GRPCIO_LINUX_CFLAGS = "-std=c++17 -fvisibility=hidden -fno-wrapv -fno-exceptions"
FREE_THREADING_CFLAGS = "-DCYTHON_FREETHREADING_COMPATIBLE=1"
GRPCIO_FREE_THREADED_CFLAGS = f"{GRPCIO_LINUX_CFLAGS} {FREE_THREADING_CFLAGS}"


class NotFound(LookupError):
    """No interpreter answers to a name, or one cannot be built or given its packages; says why."""


@dataclass(frozen=True)
class Interpreter:
    """One CPython: the name it was asked for and where it was found."""

    name: str  # "3.12", "3.14t", or the path given
    executable: Path
    origin: str  # "pyenv", "built here", "PATH", "path given"

    @property
    def free_threaded(self) -> bool:
        return self.name.endswith("t") or self.executable.name.endswith("t")
