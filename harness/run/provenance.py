"""Where and with what a run was made: commit, machine, every installed Python package, the tools' versions.

Measuring code calls this once per run (run-all, soak); reports only read what it recorded.
"""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.paths import ROOT
from harness.results.code import module_codes
from harness.results.run_context import DIRTY
from harness.run.tools import Tool, ensure_tool

RESULTS = "results"  # the rendered output, which does not make a checkout dirty


def git_commit() -> str:
    """HEAD, with DIRTY when tracked files differ from it; "unknown" outside a checkout. What a run renders into
    results/ is its output, not its code: a run right after another (which rewrote results/README.md) is clean."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", f":(exclude){RESULTS}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit}{DIRTY if dirty else ''}"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def installed_packages() -> dict[str, str]:
    """Every Python package installed beside the harness, name -> version, sorted by name."""
    found = {dist.metadata["Name"].lower(): dist.version for dist in metadata.distributions() if dist.metadata["Name"]}
    return dict(sorted(found.items()))


def tool_version(tool: Tool) -> str:
    """The pinned version of a tool the run used, and what the binary says of itself where that differs
    (ghz built by `go install` calls itself `dev`)."""
    path = ensure_tool(tool)
    try:
        finished = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
        own = (finished.stdout or finished.stderr).strip().splitlines()[0] if finished.stdout or finished.stderr else ""
    except (OSError, subprocess.TimeoutExpired):
        own = ""
    pinned = f"{tool.name} {tool.version}"
    return pinned if not own or tool.version.lstrip("v") in own else f"{pinned} (it reports `{own}`)"


def environment(tools: dict[str, str]) -> dict[str, Any]:
    """The run's environment: never credentials. tools: name -> version of each tool the run uses."""
    commit = git_commit()
    return {
        "git_commit": commit,
        # Each server module's code (harness.results.code): a label's rows pool over runs that ran its code.
        "module_codes": {} if DIRTY in commit or commit == "unknown" else module_codes(commit, ROOT),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "packages": installed_packages(),
        "tools": tools,
        "ghz": tools.get("ghz", "ghz not used"),
    }
