"""What code a run's servers ran, read from the checkout's git history: runs that ran the same code on one machine
class pool (harness.method.pooling). Report-side: it reads git, never runs a server."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.results.records import DIRTY


def server_code(meta: Mapping[str, Any], root: Path) -> str:
    """What identifies the code a run's servers ran: the git trees of servers/, scenarios/ and protos/ at the run's
    commit (as recorded, or read from the checkout's history for a run that recorded none); "" for a run made from
    uncommitted code or a commit this checkout does not hold."""
    env = meta.get("environment", {})
    if recorded := env.get("server_code"):
        return str(recorded)
    commit = str(env.get("git_commit", ""))
    if not commit or commit.endswith(DIRTY) or commit == "unknown":
        return ""
    return code_at(commit, root)


def code_at(commit: str, root: Path) -> str:
    """The git trees of the server-side code at a commit, joined; "" where git cannot tell."""
    try:
        trees = subprocess.run(
            ["git", "rev-parse", *(f"{commit}:{folder}" for folder in SERVER_CODE)],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return "+".join(tree[:12] for tree in trees)


SERVER_CODE = ("servers", "scenarios", "protos")  # what a run's servers are made of
