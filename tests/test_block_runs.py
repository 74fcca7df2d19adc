"""How a comparison's block runs on servers (harness.run.blocks), with the servers, warm-ups and slices stood in
for: in the blocks design every server of the block starts once, side by side, and each slice runs on its label's
server in the plan's order; in the fresh design each window has a start of its own. Needs no tool."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness.method.verdicts import BLOCKS, FRESH, Method, control_of
from harness.plan.matrix import Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.run.blocks import ComparisonMeasurement, StudyEnvironment, server_of
from harness.run.drivers.registry import DRIVERS
from harness.run.measure import CellContext
from harness.run.planning import Comparison


class Child:
    """A stand-in for a server's process: what a block reads of it."""

    def __init__(self, label: str) -> None:
        self.pid = hash(label) & 0xFFFF


class Quiet:
    """A progress display that shows nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def measurement(tmp_path: Path, design: str) -> tuple[ComparisonMeasurement, list[str], list[tuple[str, str]]]:
    """A comparison of two ways of connecting to one server (one start between them) and a second server, with its
    A/A twin; `serve`, `warm` and `measure_slice` stood in for, recording what started and what ran where."""
    hello = scenario("hello")
    sync, aio = server_variant("sync-w10"), server_variant("aio-uvloop")
    comparison = Comparison(
        "hello/c50",
        ("shared", Cell(sync, hello, 50)),
        (("per-worker", Cell(sync, hello, 50, "per-worker")), ("aio", Cell(aio, hello, 50))),
        controlled=True,
    )
    options = RunOptions(tmp_path, server_cpus=(1,), available_cpus=(0, 1))
    where = StudyEnvironment(options, None, None, Path("ghz"), tmp_path)
    context = CellContext(DRIVERS["ghz"], Path("ghz"), options, 1, tmp_path)
    measured = ComparisonMeasurement(comparison, where, context, Method(design=design), Quiet())
    starts: list[str] = []
    slices: list[tuple[str, str]] = []

    @contextmanager
    def serve(label: str) -> Iterator[tuple[str, Any]]:
        starts.append(label)
        yield f"server-of-{label}", Child(label)

    def measure_slice(label: str, number: int, index: int | None, server: Any, idle: Any, driving: Any) -> float:
        slices.append((label, server[0]))
        return 100.0

    measured.serve = serve  # type: ignore[method-assign]
    measured.warm = lambda *args, **kwargs: None  # type: ignore[method-assign]
    measured.measure_slice = measure_slice  # type: ignore[method-assign]
    return measured, starts, slices


def test_a_block_starts_each_server_once_and_runs_every_slice_on_its_label_s_server(tmp_path: Path) -> None:
    measured, starts, slices = measurement(tmp_path, BLOCKS)
    twin = control_of("shared")
    plan = ["aio", "shared", twin, "per-worker", "per-worker", twin, "shared", "aio"]
    assert measured.block(1, plan) == [100.0] * len(plan)
    # shared and per-worker are one server's ways of connecting: one start; the twin and aio a start each
    assert sorted(starts) == sorted(["aio", "shared", twin])
    server = {"aio": "aio", "shared": "shared", "per-worker": "shared", twin: twin}
    assert slices == [(label, f"server-of-{server[label]}") for label in plan]


def test_the_fresh_design_starts_a_server_for_every_window(tmp_path: Path) -> None:
    measured, starts, slices = measurement(tmp_path, FRESH)
    plan = ["per-worker", "shared", "aio"]
    assert measured.block(1, plan) == [100.0] * 3
    assert starts == plan and [label for label, _ in slices] == plan


def test_labels_share_a_start_only_on_one_variant_wire_and_route(tmp_path: Path) -> None:
    measured, _, _ = measurement(tmp_path, BLOCKS)
    comparison, options = measured.comparison, measured.where.options
    keys = {label: server_of(comparison, label, options) for label in ("shared", "per-worker", "aio")}
    assert keys["shared"] == keys["per-worker"] != keys["aio"]
    assert server_of(comparison, control_of("shared"), options) == (control_of("shared"),)


@pytest.mark.parametrize("design", [BLOCKS, FRESH])
def test_a_server_that_fails_to_start_fails_its_labels_slices_and_the_rest_run(tmp_path: Path, design: str) -> None:
    from harness.run.processes import ProcessError

    measured, _, slices = measurement(tmp_path, design)
    working = measured.serve

    @contextmanager
    def serve(label: str) -> Iterator[tuple[str, Any]]:
        if label == "aio":
            raise ProcessError("aio-uvloop exited with status 1")
        with working(label) as server:
            yield server

    measured.serve = serve  # type: ignore[method-assign]
    plan = ["aio", "shared", "shared", "aio"] if design == BLOCKS else ["aio", "shared"]
    rates = measured.block(1, plan)
    assert [rate is None for rate in rates] == [label == "aio" for label in plan]
    assert all(label == "shared" for label, _ in slices)
    assert "aio, block 1" in measured.failures["aio"]
