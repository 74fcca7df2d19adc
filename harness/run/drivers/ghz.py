"""ghz: the command line built from a cell (pure), and its JSON report kept without per-call details.

ghz prints every call in `details` (large); the stored report replaces them with an HdrHistogram of
the OK calls' latencies, so percentiles can pool a cell's runs.
"""

from __future__ import annotations

import json
import resource
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.paths import ROOT
from harness.plan.matrix import SHARED, Cell, connection_count
from harness.results.histogram import Latencies, encode_latencies
from harness.results.load import HISTOGRAM_KEY, NANOSECONDS, DriverError, DriverRun, LoadReport
from harness.run.tls import Wire

CALL_TIMEOUT = "120s"
# The contract ghz reads its methods from: no reflection call before a run, and servers without reflection (a
# stack's floor) are driven alike.
PROTO = ROOT / "protos" / "bench" / "v1" / "bench.proto"


def ghz_argv(ghz: Path | str, cell: Cell, target: str, requests: int) -> list[str]:
    """The ghz command for `requests` calls of cell's scenario at cell's concurrency (count mode), its
    workers spread over the cell's connections (ghz keeps every connection for the run: no new one per call)."""
    if requests < cell.concurrency:
        raise ValueError(f"ghz needs at least one request per worker: {requests} < {cell.concurrency}")
    connections = connection_count(cell.connections, cell.concurrency)
    if connections is None:
        raise ValueError(f"ghz keeps its connections for the run: it cannot open one per call ({cell.key})")
    spread = [] if cell.connections == SHARED else ["--connections", str(connections)]
    return [
        str(ghz),
        "--insecure",
        "--proto",
        str(PROTO),
        "--call",
        cell.scenario.call,
        "--data",
        json.dumps(cell.scenario.data, sort_keys=True),
        "--total",
        str(requests),
        "--concurrency",
        str(cell.concurrency),
        "--timeout",
        CALL_TIMEOUT,
        "--format",
        "json",
        *spread,
        target,
    ]


def ghz_wire(argv: list[str], wire: Wire) -> list[str]:
    """argv speaking the wire: over TLS, trusting the run's CA (and presenting the client certificate under
    mutual TLS) in place of --insecure."""
    if wire.certificates is None:
        return argv
    at = argv.index("--insecure")
    return [*argv[:at], *wire.client_flags("--"), *argv[at + 1 :]]


def ghz_open_loop_argv(
    ghz: Path | str, cell: Cell, target: str, rate: int, requests: int, timeout: str = CALL_TIMEOUT
) -> list[str]:
    """The ghz command for `requests` calls started at `rate` per second whether or not earlier ones finished.

    `--async` makes each tick of the rate start a call (open loop); cell.concurrency workers take the ticks.
    """
    if rate < 1:
        raise ValueError(f"an open-loop rate is a whole number of calls/s, at least 1 (ghz --rps), got {rate}")
    argv = ghz_argv(ghz, cell, target, requests)
    argv[argv.index("--timeout") + 1] = timeout
    return [*argv[:-1], "--async", "--rps", str(rate), argv[-1]]


def compact(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The report with `details` replaced by an HdrHistogram of the OK calls' latencies."""
    try:
        ok_latencies = [
            detail["latency"] / NANOSECONDS for detail in raw.get("details") or () if detail["status"] == "OK"
        ]
    except (TypeError, KeyError) as error:
        raise DriverError(f"malformed ghz details: {error!r}") from error
    stripped = {key: value for key, value in raw.items() if key != "details"}
    stripped[HISTOGRAM_KEY] = encode_latencies(ok_latencies)
    return stripped


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_tool(name: str, argv: list[str], timeout: float) -> tuple[str, float]:
    """Run a load tool to its end: its standard output and its own CPU seconds; DriverError on failure or timeout."""
    # Children's CPU counts once they are waited for: the delta is the tool's own (servers and backends still run).
    cpu_before = _children_cpu()
    try:
        finished = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise DriverError(f"{name} did not finish within {timeout:.0f} s") from error
    cpu_seconds = _children_cpu() - cpu_before
    if finished.returncode != 0:
        raise DriverError(f"{name} exited with status {finished.returncode}: {finished.stderr.strip()[-500:]}")
    return finished.stdout, cpu_seconds


def run_reporting_tool(name: str, argv: list[str], timeout: float) -> DriverRun:
    """Run a tool that prints a ghz-shaped JSON report (ghz, or our loadgen), keep the report compact, and
    measure the tool's CPU time; DriverError on failure or timeout."""
    stdout, cpu_seconds = run_tool(name, argv, timeout)
    return read_report(name, parse_report(name, stdout), cpu_seconds)


def parse_report(name: str, stdout: str) -> dict[str, Any]:
    """The JSON object a tool printed; DriverError where it printed none."""
    try:
        raw = json.loads(stdout)
    except json.JSONDecodeError as error:
        raise DriverError(f"{name} printed no JSON report: {stdout[:200]!r}") from error
    if not isinstance(raw, dict):
        raise DriverError(f"{name}'s report is not a JSON object")
    return raw


def read_report(name: str, raw: dict[str, Any], cpu_seconds: float) -> DriverRun:
    """A ghz-shaped report, kept compact; DriverError where its OK calls and its details disagree."""
    stripped = compact(raw)
    report = LoadReport.from_json(stripped)
    if Latencies([report.histogram]).count != report.ok:
        raise DriverError(
            f"{name} listed {Latencies([report.histogram]).count} OK calls in its details, not {report.ok}"
        )
    return DriverRun(stripped, report, round(cpu_seconds, 3))


def run_ghz(argv: list[str], timeout: float) -> DriverRun:
    """Run ghz: its report kept compact, its CPU time measured."""
    return run_reporting_tool("ghz", argv, timeout)
