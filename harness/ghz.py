"""ghz: the command line built from a cell (pure), and its JSON report parsed strictly."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.matrix import Cell

NANOSECONDS = 1e9
CALL_TIMEOUT = "120s"
PERCENTILES = (50, 90, 95, 99)
_REQUIRED = ("count", "total", "average", "fastest", "slowest", "rps", "statusCodeDistribution")


class GhzError(RuntimeError):
    """ghz failed, timed out or printed something that is not its JSON report."""


def ghz_argv(ghz: Path | str, cell: Cell, target: str, requests: int) -> list[str]:
    """The ghz command for `requests` calls of cell's scenario at cell's concurrency (count mode)."""
    if requests < cell.concurrency:
        raise ValueError(f"ghz needs at least one request per worker: {requests} < {cell.concurrency}")
    return [
        str(ghz),
        "--insecure",
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
        target,
    ]


@dataclass(frozen=True)
class GhzReport:
    """One ghz run. Times are seconds; `ok_rps` counts OK responses only."""

    count: int
    total: float
    average: float
    fastest: float
    slowest: float
    ghz_rps: float  # ghz's own figure: every response, errors included
    status_codes: dict[str, int]
    errors: dict[str, int]
    percentiles: dict[int, float]

    @property
    def ok(self) -> int:
        return self.status_codes.get("OK", 0)

    @property
    def non_ok(self) -> int:
        return self.count - self.ok

    @property
    def ok_rps(self) -> float:
        """OK responses per second of the run's wall time."""
        return self.ok / self.total if self.total > 0 else 0.0

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> GhzReport:
        """Parse ghz's JSON report; anything missing or malformed raises GhzError."""
        missing = [key for key in _REQUIRED if key not in raw]
        if missing:
            raise GhzError(f"ghz report lacks {', '.join(missing)}")
        try:
            distribution = {
                int(entry["percentage"]): entry["latency"] / NANOSECONDS
                for entry in raw.get("latencyDistribution") or ()
            }
            report = cls(
                count=int(raw["count"]),
                total=raw["total"] / NANOSECONDS,
                average=raw["average"] / NANOSECONDS,
                fastest=raw["fastest"] / NANOSECONDS,
                slowest=raw["slowest"] / NANOSECONDS,
                ghz_rps=float(raw["rps"]),
                status_codes={str(code): int(n) for code, n in raw["statusCodeDistribution"].items()},
                errors={str(error): int(n) for error, n in (raw.get("errorDistribution") or {}).items()},
                percentiles={p: distribution[p] for p in PERCENTILES if p in distribution},
            )
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise GhzError(f"malformed ghz report: {error!r}") from error
        if sum(report.status_codes.values()) != report.count:
            raise GhzError(f"ghz status codes add up to {sum(report.status_codes.values())}, not count {report.count}")
        return report


def strip_details(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The report without its per-request `details` list (large, and not needed)."""
    return {key: value for key, value in raw.items() if key != "details"}


def run_ghz(argv: list[str], timeout: float) -> dict[str, Any]:
    """Run ghz and return its report, details stripped; GhzError on failure or timeout."""
    try:
        finished = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as error:
        raise GhzError(f"ghz did not finish within {timeout:.0f} s") from error
    if finished.returncode != 0:
        raise GhzError(f"ghz exited with status {finished.returncode}: {finished.stderr.strip()[-500:]}")
    try:
        raw = json.loads(finished.stdout)
    except json.JSONDecodeError as error:
        raise GhzError(f"ghz printed no JSON report: {finished.stdout[:200]!r}") from error
    if not isinstance(raw, dict):
        raise GhzError("ghz's report is not a JSON object")
    stripped = strip_details(raw)
    GhzReport.from_json(stripped)
    return stripped
