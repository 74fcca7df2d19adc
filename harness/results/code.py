"""What code a run's servers ran, read from the checkout's git history: the runs of one machine class that ran a
label's code pool its rows (harness.analysis.evidence). Report-side: it reads git, never runs a server.

A label's code is its server module's (servers/<module>.py), with every servers/ module it imports (the shared
server code), the scenarios and the protos, at the run's commit. A change to one server module leaves every label
that does not run it pooling with the runs before."""

from __future__ import annotations

import functools
import hashlib
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

from harness.plan.servers import server_variant
from harness.results.run_context import DIRTY
from harness.results.run_meta import RunMeta

SHARED_FOLDERS = ("scenarios", "protos")  # what every server runs
SERVERS = "servers"
IMPORTED = re.compile(r"^\s*(?:from\s+servers\.(\w+)\s+import|import\s+servers\.(\w+)|from\s+servers\s+import\s+(.+))")


def run_commit(meta: RunMeta) -> str:
    """The commit a run was made from; "" where its code was not committed or is unknown."""
    commit = meta.environment.git_commit
    return "" if not commit or commit.endswith(DIRTY) or commit == "unknown" else commit


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, input=stdin).stdout


def imports_of(source: str) -> set[str]:
    """The servers/ modules a server module's source imports (by name, without the package)."""
    found: set[str] = set()
    for line in source.splitlines():
        if match := IMPORTED.match(line):
            first, second, listed = match.groups()
            found |= {first or second} if first or second else {name.strip() for name in listed.split(",")}
    return {name for name in found if name}


def module_codes_of(blobs: Mapping[str, str], sources: Mapping[str, str]) -> dict[str, str]:
    """Each server module's code (`servers.<name>` -> a short hash): the blobs of its own file and of every servers/
    module it imports, directly or not, and of servers/__init__.py, scenarios/ and protos/. blobs: path -> blob id
    of every file under those folders; sources: servers/<name>.py -> its text."""
    shared = sorted(
        (path, blob)
        for path, blob in blobs.items()
        if path.split("/")[0] in SHARED_FOLDERS or path == f"{SERVERS}/__init__.py"
    )
    modules = {Path(path).stem: path for path in sources}
    graph = {name: imports_of(sources[path]) & set(modules) for name, path in modules.items()}
    found = {}
    for name in modules:
        closure, pending = set(), [name]
        while pending:
            each = pending.pop()
            if each not in closure:
                closure.add(each)
                pending += graph[each]
        own = sorted((modules[each], blobs[modules[each]]) for each in closure)
        digest = hashlib.sha1(repr((shared, own)).encode()).hexdigest()[:12]
        found[f"{SERVERS}.{name}"] = digest
    return found


@functools.lru_cache(maxsize=512)
def module_codes(commit: str, root: Path) -> dict[str, str]:
    """Each server module's code at a commit (module_codes_of), from git; {} where git cannot tell."""
    try:
        listing = _git(root, "ls-tree", "-r", commit, "--", SERVERS, *SHARED_FOLDERS)
        blobs = {path: line.split()[2] for line in listing.splitlines() for path in [line.split("\t", 1)[1]]}
        python = [path for path in blobs if path.startswith(f"{SERVERS}/") and path.endswith(".py")]
        batch = _git(root, "cat-file", "--batch", stdin="".join(f"{blobs[path]}\n" for path in python))
    except (OSError, subprocess.CalledProcessError, IndexError):
        return {}
    return module_codes_of(blobs, dict(zip(python, split_batch(batch), strict=True)))


def split_batch(output: str) -> list[str]:
    """The contents `git cat-file --batch` printed, object by object ("<id> blob <size>" then the bytes)."""
    data, found, at = output.encode(), [], 0
    while at < len(data):
        header_end = data.index(b"\n", at)
        size = int(data[at:header_end].split()[2])
        found.append(data[header_end + 1 : header_end + 1 + size].decode())
        at = header_end + 1 + size + 1  # the object's bytes, then a newline
    return found


def label_code(meta: RunMeta, server: str, root: Path) -> str:
    """The code a label's server ran in a run (its module's, module_codes), as the run recorded it or as the
    checkout's history tells; the interpreter it ran under (`sync-w10@3.14t`) is part of its name, not of its code.
    "" for a server the harness did not start, uncommitted code or an unknown commit: such a label never pools."""
    try:
        module = server_variant(server.split("@")[0]).module
    except KeyError:
        return ""
    recorded = meta.environment.module_codes
    if recorded:
        return str(recorded.get(module, ""))
    commit = run_commit(meta)
    return module_codes(commit, root).get(module, "") if commit else ""


def run_code(meta: RunMeta, root: Path) -> str:
    """The code of every server a run could start (each module's, module_codes), as one key: two runs with the same
    key pool every label they share. "" for uncommitted code or an unknown commit."""
    recorded = meta.environment.module_codes
    commit = run_commit(meta)
    codes = recorded or (module_codes(commit, root) if commit else {})
    return repr(sorted(codes.items())) if codes else ""
