"""Pinned external tools, built or fetched once into a git-ignored cache (`.cache/tools`)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from harness.paths import ROOT

TOOLS_DIR = Path(os.environ.get("BENCH_TOOLS_DIR", ROOT / ".cache" / "tools"))
MONGO_JAVA_SERVER_VERSION = "1.46.0"
MONGO_LAUNCHER = ROOT / "harness" / "run" / "mongo" / "Launcher.java"


class MissingPrerequisite(RuntimeError):
    """A program the project cannot install itself is not on PATH."""


@dataclass(frozen=True)
class GoTool:
    """A Go program installed with `go install module@version`."""

    name: str
    module: str
    version: str
    built_as: str = ""  # the binary's name when it is not the tool's name

    @property
    def path(self) -> Path:
        return TOOLS_DIR / f"{self.name}-{self.version}" / self.name

    def build(self, go: str, gobin: Path) -> Path:
        """Build into gobin; returns the binary."""
        subprocess.run([go, "install", f"{self.module}@{self.version}"], env=_go_env(GOBIN=str(gobin)), check=True)
        return gobin / (self.built_as or self.name)


@dataclass(frozen=True)
class LocalGoTool:
    """A Go program of this repository (its own module, dependencies pinned in go.sum), built with
    `go build`; a change to its sources is a new version, built on next use."""

    name: str
    source: Path

    @cached_property
    def version(self) -> str:
        """A hash of the sources: read once per process (the sources do not change under a run)."""
        digest = hashlib.sha256()
        for path in sorted(self.source.rglob("*")):
            if path.suffix in {".go", ".mod", ".sum"}:
                digest.update(path.relative_to(self.source).as_posix().encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()[:12]

    @property
    def path(self) -> Path:
        return TOOLS_DIR / f"{self.name}-{self.version}" / self.name

    def build(self, go: str, gobin: Path) -> Path:
        """Build into gobin; returns the binary."""
        binary = gobin / self.name
        subprocess.run([go, "build", "-trimpath", "-o", str(binary), "."], cwd=self.source, env=_go_env(), check=True)
        return binary


@dataclass(frozen=True)
class DebianTool:
    """A program from a Debian package, unpacked (not installed) into the cache with the libraries it needs
    that a Debian system may lack: `apt-get download`, `dpkg-deb -x`, and a wrapper that finds those
    libraries. No root needed once the package lists are there; as root, `apt-get update` fetches them."""

    name: str
    package: str
    version: str  # the upstream version it must be (Debian's revision, security fixes, may move)
    libraries: tuple[str, ...]  # packages of the libraries it loads beyond libc, libssl, libstdc++, zlib

    @property
    def path(self) -> Path:
        return TOOLS_DIR / f"{self.name}-{self.version}" / self.name


def _go_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "CGO_ENABLED": "0", **extra}


GHZ = GoTool("ghz", "github.com/bojand/ghz/cmd/ghz", "v0.121.0")
VERSITYGW = GoTool("versitygw", "github.com/versity/versitygw/cmd/versitygw", "v1.8.0")
TOXIPROXY = GoTool("toxiproxy", "github.com/Shopify/toxiproxy/v2/cmd/server", "v2.12.0", built_as="server")
LOADGEN = LocalGoTool("loadgen", ROOT / "loadgen")  # our driver for what ghz cannot express
# protoc's Go plugins, for loadgen's stubs (`make protos`); the versions loadgen/go.mod pins.
PROTOC_GEN_GO = GoTool("protoc-gen-go", "google.golang.org/protobuf/cmd/protoc-gen-go", "v1.36.12")
PROTOC_GEN_GO_GRPC = GoTool("protoc-gen-go-grpc", "google.golang.org/grpc/cmd/protoc-gen-go-grpc", "v1.6.2")
# h2load, the protocols study's cross-check of REST over HTTP/2 (Debian bookworm's nghttp2 1.52).
H2LOAD = DebianTool("h2load", "nghttp2-client", "1.52.0", ("libnghttp2-14", "libev4", "libjansson4", "libjemalloc2"))
Tool = GoTool | LocalGoTool | DebianTool


def require(program: str, what: str) -> str:
    """The path of program, or MissingPrerequisite saying what to install."""
    path = shutil.which(program)
    if path is None:
        raise MissingPrerequisite(f"`{program}` is not on PATH: install {what}")
    return path


def ensure_go_tool(tool: GoTool | LocalGoTool) -> Path:
    """The tool's binary, built into the cache the first time."""
    if tool.path.exists():
        return tool.path
    go = require("go", f"Go 1.26 or newer, needed to build {tool.name}")
    tool.path.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tool.path.parent.parent) as gobin:
        built = tool.build(go, Path(gobin))
        tool.path.parent.mkdir(exist_ok=True)
        os.replace(built, tool.path)
    return tool.path


def ensure_tool(tool: Tool) -> Path:
    """Any pinned tool's binary, fetched or built into the cache the first time."""
    return ensure_debian_tool(tool) if isinstance(tool, DebianTool) else ensure_go_tool(tool)


def ensure_debian_tool(tool: DebianTool) -> Path:
    """The tool's wrapper, unpacked into the cache the first time from the distribution's current packages."""
    if tool.path.exists():
        return tool.path
    apt_get = require("apt-get", f"a Debian system's apt-get, to fetch {tool.package}")
    dpkg_deb = require("dpkg-deb", f"dpkg-deb, to unpack {tool.package}")
    tool.path.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tool.path.parent.parent) as partial:
        download = [apt_get, "download", "-q", tool.package, *tool.libraries]
        fetched = subprocess.run(download, cwd=partial, capture_output=True, text=True)
        if fetched.returncode != 0 and os.geteuid() == 0:  # the package lists may be missing or stale
            subprocess.run([apt_get, "update", "-qq"], check=False)
            fetched = subprocess.run(download, cwd=partial, capture_output=True, text=True)
        if fetched.returncode != 0:
            raise MissingPrerequisite(
                f"apt-get could not download {tool.package} ({fetched.stderr.strip()[-300:]}); "
                "run `apt-get update` as root, then again"
            )
        debs = sorted(Path(partial).glob("*.deb"))
        version = next(deb.name.split("_")[1] for deb in debs if deb.name.startswith(f"{tool.package}_"))
        if not version.startswith(tool.version):
            raise MissingPrerequisite(f"{tool.package} {version} is not the pinned {tool.version}")
        root = Path(partial) / "root"
        for deb in debs:
            subprocess.run([dpkg_deb, "-x", str(deb), str(root)], check=True)
        wrapper = Path(partial) / tool.name
        wrapper.write_text(
            "#!/bin/sh\n"
            f"# {tool.name} from Debian's {tool.package} {version}, with its libraries beside it.\n"
            'here=$(dirname "$(readlink -f "$0")")\n'
            'LD_LIBRARY_PATH="$(echo "$here"/root/usr/lib/*-linux-gnu)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" '
            f'exec "$here/root/usr/bin/{tool.name}" "$@"\n'
        )
        wrapper.chmod(0o755)
        os.replace(partial, tool.path.parent)
        os.mkdir(partial)  # the TemporaryDirectory removes what it made
    return tool.path


def mongo_jars() -> list[Path]:
    """mongo-java-server and its dependencies, fetched from Maven Central into the cache the first time."""
    target = TOOLS_DIR / f"mongo-java-server-{MONGO_JAVA_SERVER_VERSION}"
    if not target.exists():
        mvn = require("mvn", "Apache Maven (and a JDK 11+), needed to fetch mongo-java-server")
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as partial:
            subprocess.run(
                [
                    mvn,
                    "-q",
                    "-B",
                    "-f",
                    str(MONGO_LAUNCHER.with_name("pom.xml")),
                    "dependency:copy-dependencies",
                    f"-Dmongo-java-server.version={MONGO_JAVA_SERVER_VERSION}",
                    f"-DoutputDirectory={partial}/jars",
                ],
                check=True,
            )
            os.replace(Path(partial) / "jars", target)
    return sorted(target.glob("*.jar"))


def java() -> str:
    """The java launcher (11+ runs Launcher.java from source)."""
    return require("java", "a JDK 11 or newer, needed to run mongo-java-server")


def ensure_all() -> dict[str, str]:
    """Install every pinned tool; returns what is installed where."""
    pinned: tuple[Tool, ...] = (GHZ, VERSITYGW, TOXIPROXY, LOADGEN, PROTOC_GEN_GO, PROTOC_GEN_GO_GRPC, H2LOAD)
    tools = {tool.name: str(ensure_tool(tool)) for tool in pinned}
    tools["mongo-java-server"] = str(mongo_jars()[0].parent)
    return tools
