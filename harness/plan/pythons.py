"""Interpreters as an axis: find a CPython (pyenv, one built here, PATH, or a path), build one the machine lacks
from Debian's source package, give each a virtualenv of the servers' pinned packages, and read what it is.

The load generator and the harness stay on the harness's own interpreter; only the servers run under these.
Everything goes into git-ignored caches: built interpreters under `.cache/pythons/<name>`, their virtualenvs
under `.cache/venvs/<name>-<digest>`. Each is complete once its marker file is written, last; a directory without
it is half-made and is made again.
"""

from __future__ import annotations

import fcntl
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
from harness.plan.servers import ISOLATED
from harness.run.tools import MissingPrerequisite

PYTHONS_DIR = ROOT / ".cache" / "pythons"
VENVS_DIR = ROOT / ".cache" / "venvs"
CONSTRAINTS = ROOT / "constraints.txt"
MARKER = ".complete.json"

# What the servers import, pinned by constraints.txt; grpcio first, since it is the one that may need building.
SERVER_REQUIREMENTS = (
    "grpcio",
    "grpcio-health-checking",
    "grpcio-reflection",
    "protobuf",
    "grpclib",
    "uvloop",
    "boto3",
    "aioboto3",
    "pymongo",
    "motor",
    "fastapi",
    "uvicorn",
    "httptools",
    "hypercorn",
    "connectrpc",
    "pyvoy",
)

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
# grpcio's Cython module asks for the GIL unless built with this define (its cygrpc sources, Cython 3.1+). Its
# setup.py takes extra compiler flags from GRPC_PYTHON_CFLAGS alone (CFLAGS does not reach its compile), and that
# variable replaces its defaults on Linux, so they come first.
GRPCIO_LINUX_CFLAGS = "-std=c++17 -fvisibility=hidden -fno-wrapv -fno-exceptions"
FREE_THREADING_CFLAGS = "-DCYTHON_FREETHREADING_COMPATIBLE=1"
GRPCIO_FREE_THREADED_CFLAGS = f"{GRPCIO_LINUX_CFLAGS} {FREE_THREADING_CFLAGS}"
NAME = re.compile(r"(3\.\d+)(t?)")


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


@dataclass(frozen=True)
class Environment:
    """An interpreter's virtualenv of the servers' packages: its python, and the packages it could not install
    (name -> the installer's last words)."""

    interpreter: Interpreter
    python: Path
    missing: dict[str, str]
    seconds: float | None = None  # what making it took (pip's builds from source with it); None: not recorded


def _digest(interpreter: Interpreter, pins: Mapping[str, str]) -> str:
    described = subprocess.run(
        [str(interpreter.executable), "-c", "import sys; print(sys.version)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    pinned = [f"{name}=={version}" for name, version in sorted(pins.items())]
    digest = hashlib.sha256(
        "\0".join(
            [str(interpreter.executable.resolve()), described, CONSTRAINTS.read_text(), *SERVER_REQUIREMENTS, *pinned]
        ).encode()
    )
    return digest.hexdigest()[:12]


# The packages a versions study may pin (run-all --packages), and what each pin moves with it. A package of the grpc
# family moves its siblings to the same version. A pin frees the constraints its own version may not accept: an
# older grpcio's tools and health checking ask for an older protobuf, an older aioboto3 pins its own aiobotocore
# and botocore, an older motor may ask for another pymongo. Those are left to pip, and the study's page records the
# versions the virtualenv ended with.
VERSIONED = ("grpcio", "grpclib", "protobuf", "uvloop", "aioboto3", "pymongo", "motor")
SIBLINGS = {"grpcio": ("grpcio-health-checking", "grpcio-reflection", "grpcio-tools")}
FREES = {
    "grpcio": ("protobuf",),
    "aioboto3": ("aiobotocore", "botocore", "boto3", "s3transfer"),
    "motor": ("pymongo",),
}
# The stubs that pin the grpc and protobuf they were generated by (bench_pb2_grpc.py refuses an older grpcio,
# bench_pb2.py an older protobuf runtime): a virtualenv with other versions of those generates its own.
STUB_PACKAGES = frozenset({"grpcio", "protobuf"})
SPEC = re.compile(r"([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+!-]+)")


def pins_of(specs: Sequence[str]) -> dict[str, str]:
    """name==version specs as a mapping, each a package the versions study may pin; says what was wrong."""
    pins: dict[str, str] = {}
    for spec in specs:
        match = SPEC.fullmatch(spec.strip())
        if not match:
            raise ValueError(f"a package is pinned as name==version (grpcio==1.75.0), got {spec!r}")
        name, version = match.group(1).lower().replace("_", "-"), match.group(2)
        if name not in VERSIONED:
            raise ValueError(f"--packages pins {', '.join(VERSIONED)}; not {name!r}")
        if name in pins:
            raise ValueError(f"{name} is pinned twice")
        pins[name] = version
    return pins


def pinned_versions() -> dict[str, str]:
    """The versions constraints.txt pins, by package name."""
    found = (SPEC.fullmatch(line.split("#", 1)[0].strip()) for line in CONSTRAINTS.read_text().splitlines())
    return {match.group(1).lower(): match.group(2) for match in found if match}


def constraints_with(pins: Mapping[str, str]) -> str:
    """constraints.txt with these pins (and their siblings) in place of its own, and the pins they free left out."""
    moved = {sibling: version for name, version in pins.items() for sibling in (name, *SIBLINGS.get(name, ()))}
    freed = {free for name in pins for free in FREES.get(name, ()) if free not in pins}
    kept = [
        line
        for line in CONSTRAINTS.read_text().splitlines()
        if not ((match := SPEC.fullmatch(line.split("#", 1)[0].strip())) and match.group(1).lower() in {*moved, *freed})
    ]
    return "\n".join([*kept, *(f"{name}=={version}" for name, version in sorted(moved.items()))]) + "\n"


# Run by a virtualenv's python: the repository's stubs generated by that virtualenv's grpc_tools (and so its
# protoc and protobuf) into a directory that goes before the repository on the server's PYTHONPATH.
_GENERATE = """
import shutil, sys
from importlib import resources
from pathlib import Path
from grpc_tools import protoc
root, out = Path(sys.argv[1]), Path(sys.argv[2])
shutil.copytree(root / "protos", out / "protos", ignore=shutil.ignore_patterns("__pycache__", "*.py[co]"))
argv = ["grpc_tools.protoc", f"--proto_path={root}", f"--proto_path={resources.files('grpc_tools') / '_proto'}",
        f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", "protos/bench/v1/bench.proto"]
sys.exit(protoc.main(argv))
"""
STUBS = "stubs"


def environment(interpreter: Interpreter, pins: Mapping[str, str] | None = None) -> Environment:
    """The interpreter's virtualenv under .cache/venvs, made the first time: each server package installed alone
    with the pinned constraints (with `pins` in place of theirs), so one without a build for this interpreter leaves
    the rest. Where the pins move grpcio or protobuf, the virtualenv also gets the messages and grpcio stubs
    generated by its own grpc_tools (`stubs/`, before the repository on its servers' path)."""
    pins = dict(pins or {})
    label = re.sub(r"[^A-Za-z0-9.]+", "_", interpreter.name).strip("_")
    home = VENVS_DIR / f"{label}-{_digest(interpreter, pins)}"
    VENVS_DIR.mkdir(parents=True, exist_ok=True)
    # One maker at a time (two test workers, or two shards, may ask for it at once): the second waits, then finds it.
    with (VENVS_DIR / f"{home.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _made(interpreter, pins, home)


def _made(interpreter: Interpreter, pins: dict[str, str], home: Path) -> Environment:
    """The virtualenv at home, made unless its marker says it is complete."""
    python = home / "bin" / "python"
    if (home / MARKER).exists():
        made = json.loads((home / MARKER).read_text())
        return Environment(interpreter, python, made["missing"], made.get("seconds"))
    begun = time.monotonic()
    shutil.rmtree(home, ignore_errors=True)
    subprocess.run([str(interpreter.executable), "-m", "venv", str(home)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    constraints = home / "constraints.txt"
    constraints.write_text(constraints_with(pins))
    env = {**os.environ, "GRPC_PYTHON_BUILD_EXT_COMPILER_JOBS": str(os.cpu_count() or 1)}
    if interpreter.free_threaded:
        env["GRPC_PYTHON_CFLAGS"] = GRPCIO_FREE_THREADED_CFLAGS
    restubbed = bool(STUB_PACKAGES & set(pins))
    missing: dict[str, str] = {}
    for requirement in (*SERVER_REQUIREMENTS, *(("grpcio-tools",) if restubbed else ())):
        installed = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-c", str(constraints), requirement],
            capture_output=True,
            text=True,
            env=env,
        )
        if installed.returncode != 0:
            missing[requirement] = " ".join(installed.stderr.split()[-40:])
    if restubbed and "grpcio-tools" not in missing:
        subprocess.run([str(python), "-c", _GENERATE, str(ROOT), str(home / STUBS)], check=True)
    seconds = round(time.monotonic() - begun, 1)
    made = {"interpreter": str(interpreter.executable), "pins": pins, "missing": missing, "seconds": seconds}
    (home / MARKER).write_text(json.dumps(made))
    return Environment(interpreter, python, missing, seconds)


def server_path(python: str | Path) -> dict[str, str]:
    """What a server run by a virtualenv's python needs on its path: the repository's own packages, after the stubs
    the virtualenv generated for itself where it did."""
    stubs = Path(python).parent.parent / STUBS
    return {"PYTHONPATH": os.pathsep.join([*([str(stubs)] if stubs.is_dir() else []), str(ROOT)])}


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
