"""The registry of load drivers: a study names its driver, and the run loop finds it in `DRIVERS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.plan.matrix import Cell
from harness.results.load import DriverRun
from harness.run.drivers.ghz import ghz_argv, ghz_open_loop_argv, ghz_wire, run_ghz
from harness.run.drivers.h2load import h2load_argv, h2load_wire, run_h2load
from harness.run.drivers.loadgen import loadgen_argv, loadgen_wire, run_loadgen
from harness.run.tls import Wire
from harness.run.tools import GHZ, H2LOAD, LOADGEN, Tool


@dataclass(frozen=True)
class Driver:
    """A load tool: where it comes from, the command for a run of a cell, and how a run is read."""

    name: str
    tool: Tool
    argv: Callable[[Path | str, Cell, str, int], list[str]]
    run: Callable[[list[str], float], DriverRun]
    # argv -> argv speaking a wire (TLS, mutual TLS); a ValueError where the tool cannot.
    wire: Callable[[list[str], Wire], list[str]]
    # (tool, cell, target, calls per second, calls, call timeout) -> argv of an open-loop run; None if it has none.
    open_loop_argv: Callable[[Path | str, Cell, str, int, int, str], list[str]] | None = None


DRIVERS: dict[str, Driver] = {
    "ghz": Driver("ghz", GHZ, ghz_argv, run_ghz, ghz_wire, ghz_open_loop_argv),
    "loadgen": Driver("loadgen", LOADGEN, loadgen_argv, run_loadgen, loadgen_wire),
    "h2load": Driver("h2load", H2LOAD, h2load_argv, run_h2load, h2load_wire),  # REST over HTTP/2 only: a cross-check
}
