"""python -m harness profile SERVER: where a server spends its CPU under a scenario's load, kept as evidence.

The server is started as a study starts it (pinned, on the embedded backends), warmed up, then driven by ghz
(or loadgen for REST) for about `seconds` while py-spy samples its serving process (Python frames, and native
ones with --native), and every thread's CPU time is read before and after from /proc (a thread's name says
whose it is: grpc's pollers, Envoy's workers, the event loop). For a pyvoy server, Envoy's own counters are read
from its admin endpoint before and after. It writes `profile.txt` (the summary: load, CPU by thread, the
functions that held the CPU longest, Envoy's counters that moved) and `stacks.txt` (py-spy's collapsed stacks,
for any flame graph tool) under the directory given; it claims no figure of a study.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import psutil

from harness.plan.matrix import Cell, Scenario, measured_requests, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import ServerVariant
from harness.plan.sizes import SIZE_SCENARIOS
from harness.run.backends import backend_env, start_backends
from harness.run.drivers.registry import DRIVERS
from harness.run.processes import off_cpus
from harness.run.provenance import cpu_model
from harness.run.serving import running_server, serving_processes
from harness.run.tools import MissingPrerequisite, ensure_tool

TOP_FUNCTIONS = 30
ADMIN_PATH = re.compile(r"--admin-address-path\s+(\S+)")


@dataclass(frozen=True)
class ThreadTimes:
    """CPU seconds of each thread of a process, by thread id, with its name."""

    seconds: dict[int, tuple[str, float]]

    @classmethod
    def read(cls, pid: int) -> ThreadTimes:
        found = {}
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
            found[int(task.name)] = (name, ticks / os.sysconf("SC_CLK_TCK"))
        return cls(found)

    def since(self, before: ThreadTimes) -> dict[str, float]:
        """CPU seconds spent since `before`, summed by thread name (grpc's pollers, Envoy's workers...)."""
        spent: dict[str, float] = {}
        for tid, (name, seconds) in self.seconds.items():
            spent[name] = spent.get(name, 0.0) + seconds - before.seconds.get(tid, (name, 0.0))[1]
        return dict(sorted(spent.items(), key=lambda pair: -pair[1]))


def envoy_stats(pid: int) -> dict[str, int]:
    """Envoy's counters and gauges from its admin endpoint (the address file named on its command line)."""
    match = ADMIN_PATH.search(" ".join(psutil.Process(pid).cmdline()))
    if match is None:
        return {}
    address = Path(match.group(1)).read_text().strip()
    with urllib.request.urlopen(f"http://{address}/stats?format=json", timeout=5) as answer:
        raw = json.loads(answer.read())
    return {each["name"]: int(each["value"]) for each in raw.get("stats", []) if "value" in each}


def profiled_scenario(name: str) -> Scenario:
    """A registered scenario, or one of the wire study's sizes (reply-1MiB, request-64KiB, ...)."""
    sizes = {each.name: each for each in SIZE_SCENARIOS}
    return sizes[name] if name in sizes else scenario(name)


def self_time(stacks: str) -> Iterator[tuple[str, int]]:
    """The functions that held the CPU longest, from py-spy's collapsed stacks: a stack's leaf frame, by samples."""
    leaves: Counter[str] = Counter()
    for line in stacks.splitlines():
        frames, _, count = line.rpartition(" ")
        if frames and count.isdigit():
            leaves[frames.split(";")[-1]] += int(count)
    yield from leaves.most_common(TOP_FUNCTIONS)


def profile(
    variant: ServerVariant, scenario: Scenario, concurrency: int, seconds: float, out: Path, native: bool
) -> Path:
    """Profile one server under one scenario's load; the summary's path."""
    spy = shutil.which("py-spy", path=os.path.dirname(sys.executable)) or shutil.which("py-spy")
    if spy is None:
        raise MissingPrerequisite("py-spy is not installed: `make setup` installs it into .venv")
    options = RunOptions(out, servers=(variant,), scenarios=(scenario,))
    cpus = options.available_cpus[-1:] if len(options.available_cpus) > 1 else ()
    # ghz speaks gRPC and takes a request on its command line: REST and large requests go by loadgen.
    driver = DRIVERS["loadgen" if variant.protocol == "http" or "request_bytes" in scenario.data else "ghz"]
    tool = ensure_tool(driver.tool)
    cell = Cell(variant, scenario, concurrency)
    out.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        stack.enter_context(off_cpus(cpus))
        backends = stack.enter_context(start_backends(os.environ))
        target, child = stack.enter_context(running_server(variant, backend_env(backends.config), cpus=cpus))
        warm = driver.run(driver.argv(tool, cell, target, max(concurrency, scenario.warmup_requests)), 300.0)
        requests = measured_requests(warm.report.ok_rps, concurrency, seconds)
        serving = serving_processes(child.pid)[0].pid
        name = psutil.Process(serving).name()
        envoy_before = envoy_stats(serving) if "envoy" in name else {}
        threads_before = ThreadTimes.read(serving)
        sampler = subprocess.Popen(
            [spy, "record", "--pid", str(serving), "--duration", str(round(seconds)), "--format", "raw",
             "--output", str(out / "stacks.txt"), "--rate", "200", "--nonblocking", *(["--native"] if native else [])],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        run = driver.run(driver.argv(tool, cell, target, requests), 600.0)
        spent = ThreadTimes.read(serving).since(threads_before)
        envoy_after = envoy_stats(serving) if envoy_before else {}
        _, errors = sampler.communicate(timeout=seconds + 60)
    moved = {
        name: envoy_after[name] - value for name, value in envoy_before.items() if envoy_after.get(name, value) != value
    }
    stacks = (out / "stacks.txt").read_text() if (out / "stacks.txt").exists() else ""
    total = sum(int(line.rpartition(" ")[2]) for line in stacks.splitlines() if line.rpartition(" ")[2].isdigit())
    wall = run.report.total
    lines = [
        f"# {variant.name} under {scenario.name} at c={concurrency}",
        "",
        f"On {cpu_model()}; server on CPU {','.join(map(str, cpus)) or 'any'}; {variant.command}.",
        f"Load: {run.report.ok} OK calls in {wall:.1f} s ({run.report.ok_rps:,.0f} OK calls/s) by {driver.name}; "
        f"the server's process {serving} ({name}) profiled by py-spy at 200 Hz"
        f"{' with native frames' if native else ''}: {total} samples.",
        "",
        "## CPU by thread (seconds over the run, % of one core)",
        "",
        *(f"- {name}: {used:.2f} s, {100 * used / wall:.0f}%" for name, used in spent.items() if used > 0),
        "",
        f"## The {TOP_FUNCTIONS} functions that held the CPU longest (py-spy samples, leaf frames)",
        "",
        *(f"- {100 * count / max(total, 1):.1f}% {frame}" for frame, count in self_time(stacks)),
        "",
    ]
    if moved:
        lines += ["## Envoy's counters that moved during the run", ""]
        lines += [f"- {name}: {value:+d}" for name, value in sorted(moved.items())]
        lines.append("")
    if errors.strip():
        lines += ["## py-spy said", "", *(f"    {line}" for line in errors.strip().splitlines()[-10:]), ""]
    summary = out / "profile.txt"
    summary.write_text("\n".join(lines))
    return summary
