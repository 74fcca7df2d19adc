"""Interpreters as an axis: find a CPython (pyenv, one built here, PATH, or a path), build one the machine lacks
from Debian's source package, give each a virtualenv of the servers' pinned packages
(harness.plan.virtualenvs), and read what it is.

The load generator and the harness stay on the harness's own interpreter; only the servers run under these.
Everything goes into git-ignored caches: built interpreters under `.cache/pythons/<name>`, their virtualenvs
under `.cache/venvs/<name>-<digest>`. Each is complete once its marker file is written, last; a directory without
it is half-made and is made again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.paths import ROOT
from harness.plan.interpreter import GRPCIO_FREE_THREADED_CFLAGS, MARKER, PYTHONS_DIR, Interpreter, NotFound
from harness.plan.servers import ISOLATED
from harness.plan.virtualenvs import environment, server_path
from harness.run.tools import MissingPrerequisite

# CPython sources from Debian's pool: the upstream tarball of a source package (`<name>_<version>.orig.tar.xz`),
# with the SHA-256 its .dsc gives. The pool this machine reaches serves 3.14.4 to 3.14.7 of python3.14, not the
# 3.14.10 its sid index names, so the version is pinned here rather than read from the index.
DEBIAN_POOL = "http://deb.debian.org/debian/pool/main"


@dataclass(frozen=True)
class Source:
    package: str
    version: str
    sha256: str

    @property
    def url(self) -> str:
        return f"{DEBIAN_POOL}/{self.package[0]}/{self.package}/{self.package}_{self.version}.orig.tar.xz"


SOURCES = {"3.14": Source("python3.14", "3.14.7", "3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f81")}
BUILDABLE = tuple(name for version in SOURCES for name in (version, f"{version}t"))
DEFAULT_PYTHONS = ("3.11", "3.12", "3.13", "3.14", "3.14t")
# As pyenv configures the compared builds here (their CONFIG_ARGS): a shared libpython, no PGO, no LTO.
CONFIGURE = ("--enable-shared",)
FREE_THREADED = "--disable-gil"
NAME = re.compile(r"(3\.\d+)(t?)")


def pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.name))


def find(name: str) -> Interpreter:
    """The interpreter called name: a path, or 3.X[t] from pyenv, then one built here, then PATH."""
    if "/" in name:
        path = Path(name)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NotFound(f"{name} is not an executable file")
        return Interpreter(name, path, "path given")
    match = NAME.fullmatch(name)
    if not match:
        raise NotFound(f"an interpreter is 3.X, 3.Xt (free-threaded) or a path, got {name!r}")
    version, threaded = match.groups()
    program = f"python{version}{threaded}"
    pyenv = sorted(
        (
            p
            for p in pyenv_root().glob(f"versions/{version}.*")
            if re.fullmatch(rf"{re.escape(version)}\.\d+{threaded}", p.name)
        ),
        key=_version_key,
    )
    if pyenv and (pyenv[-1] / "bin" / program).exists():
        return Interpreter(name, pyenv[-1] / "bin" / program, "pyenv")
    built = PYTHONS_DIR / name
    if (built / MARKER).exists():
        return Interpreter(name, built / "bin" / program, "built here")
    on_path = shutil.which(program)
    if on_path:
        return Interpreter(name, Path(on_path), "PATH")
    buildable = f"; `python -m harness pythons build {name}` builds it" if version in SOURCES else ""
    raise NotFound(f"no {program} in pyenv ({pyenv_root()}), .cache/pythons or PATH{buildable}")


def _fetch(source: Source, into: Path) -> Path:
    """The source tarball, downloaded and checked against its pinned digest."""
    tarball = into / source.url.rsplit("/", 1)[1]
    with urllib.request.urlopen(source.url, timeout=60) as response, tarball.open("wb") as out:
        shutil.copyfileobj(response, out)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    if digest != source.sha256:
        raise NotFound(f"{source.url} has SHA-256 {digest}, not the pinned {source.sha256}")
    return tarball


def build(name: str, jobs: int | None = None) -> Interpreter:
    """Build CPython `name` (3.X, or 3.Xt with --disable-gil) from Debian's source package into .cache/pythons,
    configured as the compared pyenv builds are; a no-op once built."""
    match = NAME.fullmatch(name)
    if not match or match.group(1) not in SOURCES:
        raise NotFound(f"can build {', '.join(f'{v}, {v}t' for v in SOURCES)}; not {name!r}")
    version, threaded = match.groups()
    prefix = PYTHONS_DIR / name
    if (prefix / MARKER).exists():
        return Interpreter(name, prefix / "bin" / f"python{version}{threaded}", "built here")
    for program in ("make", "gcc"):
        if not shutil.which(program):
            raise MissingPrerequisite(f"`{program}` is not on PATH: install build-essential to build CPython")
    source = SOURCES[version]
    begun = time.monotonic()
    shutil.rmtree(prefix, ignore_errors=True)  # a build that stopped half-way
    PYTHONS_DIR.mkdir(parents=True, exist_ok=True)
    configure = [*CONFIGURE, *([FREE_THREADED] if threaded else [])]
    with tempfile.TemporaryDirectory(dir=PYTHONS_DIR, prefix=f"build-{name}-") as work:
        with tarfile.open(_fetch(source, Path(work))) as archive:
            archive.extractall(work, filter="data")
        tree = next(path for path in Path(work).iterdir() if path.is_dir())
        flags = [f"--prefix={prefix}", *configure, f"LDFLAGS=-Wl,-rpath,{prefix}/lib"]
        subprocess.run(["./configure", "-q", *flags], cwd=tree, check=True)
        subprocess.run(["make", "-s", f"-j{jobs or os.cpu_count() or 1}"], cwd=tree, check=True)
        subprocess.run(["make", "-s", "install"], cwd=tree, check=True)
    built = Interpreter(name, prefix / "bin" / f"python{version}{threaded}", "built here")
    seconds = round(time.monotonic() - begun, 1)  # what building it took: the study's page says so
    marker = {"source": source.url, "version": source.version, "configure": flags, "seconds": seconds}
    (prefix / MARKER).write_text(json.dumps(marker))
    return built


# Run by an interpreter under test with a server module's name: imports it (and so its stack), then says what the
# interpreter is: which protobuf implementation runs (upb in C, or pure Python where no wheel has it), and which
# packages pip compiled here from source (a wheel tagged plain linux_x86_64, not manylinux). A failed import is the
# reason the variant cannot run there.
_PROBE = """
import importlib, importlib.metadata as metadata, json, platform, sys, sysconfig
error = None
try:
    importlib.import_module(sys.argv[1])
except Exception as exc:
    error = f"{type(exc).__name__}: {exc}"
gil = getattr(sys, "_is_gil_enabled", None)
try:
    from google.protobuf.internal import api_implementation
    protobuf = api_implementation.Type()
except Exception:
    protobuf = None
def wheel_tag(dist):
    wheel = dist.read_text("WHEEL") or ""
    return next((line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")), "")
dists = list(metadata.distributions())
print(json.dumps({
    "version": sys.version.split()[0],
    "build": platform.python_build()[1],
    "compiler": platform.python_compiler(),
    "config_args": sysconfig.get_config_var("CONFIG_ARGS"),
    "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    "gil_enabled": True if gil is None else gil(),
    "import_error": error,
    "packages": {d.metadata["Name"].lower(): d.version for d in dists},
    "protobuf_implementation": protobuf,
    "compiled_here": sorted(d.metadata["Name"].lower() for d in dists if wheel_tag(d).endswith("-linux_x86_64")),
}))
"""


def describe(python: Path, module: str) -> dict[str, Any]:
    """What an interpreter is once it has imported a server module: version, configure flags, whether the GIL
    is on, its packages, and the import's error if it failed."""
    probed = subprocess.run(
        [str(python), *ISOLATED, "-c", _PROBE, module],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **server_path(python)},
        check=True,
    )
    described: dict[str, Any] = json.loads(probed.stdout)
    return described


@dataclass(frozen=True)
class Prepared:
    """An interpreter ready to run servers: its virtualenv's python, what it is, and for each server module
    whether the GIL was on once the module had imported its stack, or why the module cannot run there."""

    name: str
    python: str  # "" when it could not be prepared
    about: dict[str, Any]  # origin, executable, version, configure flags, free-threaded, packages
    gil: dict[str, bool]  # server module -> the GIL enabled after importing it
    unavailable: dict[str, str]  # server module (or "*" for every one) -> why it cannot run here

    def runs(self, module: str) -> bool:
        return bool(self.python) and "*" not in self.unavailable and module not in self.unavailable

    def to_json(self) -> dict[str, Any]:
        return {**self.about, "gil_enabled_after_import": self.gil, "unavailable": self.unavailable}


def own_interpreter() -> Interpreter:
    """The interpreter the harness's own virtualenv was made from."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return Interpreter(version, Path(sys.base_prefix) / "bin" / f"python{version}", "the harness's own")


def built_seconds(interpreter: Interpreter) -> float | None:
    """What building an interpreter built here took, as its marker recorded it; None for one found elsewhere, or
    built before builds were timed."""
    marker = PYTHONS_DIR / interpreter.name / MARKER
    if interpreter.origin != "built here" or not marker.exists():
        return None
    seconds = json.loads(marker.read_text()).get("seconds")
    return None if seconds is None else float(seconds)


def prepare(
    name: str, modules: Sequence[str], pins: Mapping[str, str] | None = None, interpreter: Interpreter | None = None
) -> Prepared:
    """Find the interpreter (the one called name, unless given), give it its virtualenv (with `pins` in place of the
    project's versions), and import each server module under it. An interpreter that is missing, or a package
    without a build for it, is a reason to skip, never an error of the run."""
    try:
        interpreter = interpreter or find(name)
        made = environment(interpreter, pins)
    except (NotFound, subprocess.CalledProcessError, OSError) as error:
        return Prepared(name, "", {}, {}, {"*": str(error)})
    about: dict[str, Any] = {
        "origin": interpreter.origin,
        "executable": str(interpreter.executable),
        "build_seconds": built_seconds(interpreter),
        "venv_seconds": made.seconds,
    }
    if pins:
        about["pins"] = dict(pins)
    gil: dict[str, bool] = {}
    unavailable: dict[str, str] = {}
    for module in modules:
        described = describe(made.python, module)
        about |= {key: value for key, value in described.items() if key not in ("gil_enabled", "import_error")}
        if described["import_error"]:
            unavailable[module] = described["import_error"] + "".join(
                f"; pip could not install {package}: {why}" for package, why in made.missing.items()
            )
        else:
            gil[module] = described["gil_enabled"]
    if made.missing:
        about["not_installed"] = made.missing
    if interpreter.free_threaded and "grpcio" in about.get("compiled_here", ()):
        about["grpcio_cflags"] = GRPCIO_FREE_THREADED_CFLAGS
    return Prepared(name, str(made.python), about, gil, unavailable)
