"""Pinned external tools, built or fetched once into a git-ignored cache (`.cache/tools`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS_DIR = Path(os.environ.get("BENCH_TOOLS_DIR", ROOT / ".cache" / "tools"))
MONGO_JAVA_SERVER_VERSION = "1.46.0"
MONGO_LAUNCHER = ROOT / "harness" / "mongo" / "Launcher.java"


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


GHZ = GoTool("ghz", "github.com/bojand/ghz/cmd/ghz", "v0.121.0")
VERSITYGW = GoTool("versitygw", "github.com/versity/versitygw/cmd/versitygw", "v1.8.0")
TOXIPROXY = GoTool("toxiproxy", "github.com/Shopify/toxiproxy/v2/cmd/server", "v2.12.0", built_as="server")


def require(program: str, what: str) -> str:
    """The path of program, or MissingPrerequisite saying what to install."""
    path = shutil.which(program)
    if path is None:
        raise MissingPrerequisite(f"`{program}` is not on PATH: install {what}")
    return path


def ensure_go_tool(tool: GoTool) -> Path:
    """The tool's binary, built with `go install` into the cache the first time."""
    if tool.path.exists():
        return tool.path
    go = require("go", f"Go 1.22 or newer, needed to build {tool.name}")
    tool.path.parent.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=tool.path.parent.parent) as gobin:
        subprocess.run(
            [go, "install", f"{tool.module}@{tool.version}"],
            env={**os.environ, "GOBIN": gobin, "CGO_ENABLED": "0"},
            check=True,
        )
        tool.path.parent.mkdir(exist_ok=True)
        os.replace(Path(gobin) / (tool.built_as or tool.name), tool.path)
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
    tools = {tool.name: str(ensure_go_tool(tool)) for tool in (GHZ, VERSITYGW, TOXIPROXY)}
    tools["mongo-java-server"] = str(mongo_jars()[0].parent)
    return tools
