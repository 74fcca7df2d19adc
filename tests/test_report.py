"""Tables and summary rendered from raw files only, checked against golden files.

Regenerate the golden files after an intended change with `UPDATE_GOLDEN=1 pytest tests/test_report.py`.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.report import write_report
from harness.resources import ResourceUsage
from harness.results import CellRecord, Repeat, save_cell, write_json_atomic

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
RUN_ID = "20260101T000000Z"

META: dict[str, Any] = {
    "schema": 1,
    "run_id": RUN_ID,
    "date": "2026-01-01T00:00:00+00:00",
    "status": "complete",
    "wall_seconds": 600.0,
    "environment": {
        "git_commit": "0123456789abcdef",
        "cpu_model": "Test CPU",
        "cpu_count": 2,
        "platform": "Linux",
        "python": "3.11.7",
        "packages": {"grpcio": "1.0", "grpclib": "0.4"},
        "ghz": "ghz v0.121.0",
    },
    "pinning": {"server_cpus": [1], "ghz_and_backend_cpus": [0]},
    "matrix": {
        "servers": ["sync-w1", "sync-w10", "grpclib-uvloop"],
        "server_slots": {"sync-w1": 1, "sync-w10": 10, "grpclib-uvloop": None},
        "scenarios": ["s3-unary", "hello-wait"],
        "concurrency": [2],
        "repeats": 2,
        "requests": 40,
        "buckets": {"bench": 893},
    },
    "backends": {"s3": "versitygw v1.8.0 (posix)", "mongo": "mongo-java-server 1.46.0 (in memory)"},
    "targets": {
        "wall_time": {"target_seconds": 1200, "measured_seconds": 600.0, "applies": False, "met": True},
        "zero_non_ok": {"cells_with_non_ok_or_failed": ["s3-unary/sync-w10/c2"], "met": False},
        "hello_repeats_within_10_percent": {"spread_by_cell": {}, "met": True},
    },
}


def make_run(root: Path) -> Path:
    """A run directory holding real ghz reports: a clean cell, one with errors, one failed."""
    run_dir = root / "runs" / RUN_ID
    write_json_atomic(run_dir / "run.json", META)
    usage = ResourceUsage(wall_seconds=0.2, cpu_seconds=0.15, peak_cpu_percent=99.0, peak_rss_bytes=80 * 1024 * 1024)
    cells = {"sync-w1": "ghz-ok.json", "sync-w10": "ghz-errors.json"}
    for server, fixture in cells.items():
        stem = f"cells/s3-unary/{server}/c2"
        (run_dir / stem).parent.mkdir(parents=True)
        repeats = []
        for number in (1, 2):
            shutil.copy(FIXTURES / fixture, run_dir / f"{stem}-r{number}.json")
            repeats.append(Repeat(f"{stem}-r{number}.json", 40, usage))
        save_cell(run_dir, CellRecord("s3-unary", server, 2, "ok", repeats=repeats, seconds=3.0))
    save_cell(run_dir, CellRecord("s3-unary", "grpclib-uvloop", 2, "failed", reason="server exited with status 1"))
    stem = "cells/hello-wait/sync-w1/c2"
    (run_dir / stem).parent.mkdir(parents=True)
    for run in ("probe", "r1"):
        shutil.copy(FIXTURES / "ghz-ok.json", run_dir / f"{stem}-{run}.json")
    bounded = CellRecord(
        "hello-wait",
        "sync-w1",
        2,
        "ok",
        repeats=[Repeat(f"{stem}-r1.json", 40, usage)],
        s3_latency_ms=100,
        probe_file=f"{stem}-probe.json",
    )
    save_cell(run_dir, bounded)
    return run_dir


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    write_report(make_run(tmp_path), tmp_path)
    return tmp_path


def test_concurrency_table_matches_golden(rendered: Path) -> None:
    check_golden("s3-unary-concurrency-2.md", (rendered / "s3-unary" / "concurrency-2.md").read_text())


def test_bounded_table_shows_bounds_and_efficiency(rendered: Path) -> None:
    check_golden("hello-wait-concurrency-2.md", (rendered / "hello-wait" / "concurrency-2.md").read_text())


def test_summary_matches_golden(rendered: Path) -> None:
    check_golden("README.md", (rendered / "README.md").read_text())


def test_chart_is_a_png(rendered: Path) -> None:
    assert (rendered / "charts" / "s3-unary.png").read_bytes().startswith(b"\x89PNG")


def test_report_reads_only_the_files(tmp_path: Path) -> None:
    """Rendering twice from the same files gives the same text: nothing else feeds it."""
    run_dir = make_run(tmp_path)
    write_report(run_dir, tmp_path / "a")
    write_report(run_dir, tmp_path / "b")
    for name in ("README.md", "s3-unary/concurrency-2.md"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


def test_stale_tables_are_removed(rendered: Path) -> None:
    stale = rendered / "hello" / "concurrency-99.md"
    stale.parent.mkdir()
    stale.write_text("old")
    write_report(rendered / "runs" / RUN_ID, rendered)
    assert not stale.exists()


def test_ok_rps_in_the_table_ignores_failed_calls(rendered: Path) -> None:
    table = (rendered / "s3-unary" / "concurrency-2.md").read_text()
    rps_row = next(line for line in table.splitlines() if line.startswith("| Requests/sec"))
    assert rps_row.split("|")[3].strip() == "0.0 (0.0–0.0)"  # sync-w10: every call NotFound
    assert json.loads((FIXTURES / "ghz-errors.json").read_text())["rps"] > 400
