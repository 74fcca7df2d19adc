"""ghz's command line from a cell, and its JSON report parsed strictly (real reports kept as fixtures)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from harness.ghz import GhzError, GhzReport, ghz_argv, run_ghz, strip_details
from harness.matrix import Cell, scenario, server_variant

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict[str, object]:
    return dict(json.loads((FIXTURES / name).read_text()))


def test_ghz_argv_uses_count_mode_and_reflection() -> None:
    cell = Cell(server_variant("sync-w1"), scenario("s3-stream"), 25)
    argv = ghz_argv("/tools/ghz", cell, "127.0.0.1:5000", 100)
    assert argv == [
        "/tools/ghz",
        "--insecure",
        "--call",
        "bench.v1.ObjectStore.StreamObjects",
        "--data",
        '{"batch_size": 1, "bucket": "bench"}',
        "--total",
        "100",
        "--concurrency",
        "25",
        "--timeout",
        "120s",
        "--format",
        "json",
        "127.0.0.1:5000",
    ]
    assert "--duration" not in argv and "-z" not in argv


def test_ghz_argv_needs_a_request_per_worker() -> None:
    with pytest.raises(ValueError, match="at least one request per worker"):
        ghz_argv("ghz", Cell(server_variant("sync-w1"), scenario("hello"), 50), "t", 49)


def test_parse_a_clean_report() -> None:
    report = GhzReport.from_json(load("ghz-ok.json"))
    assert (report.count, report.ok, report.non_ok) == (40, 40, 0)
    assert report.total == pytest.approx(0.203635296)
    assert report.ok_rps == pytest.approx(40 / 0.203635296)
    assert report.percentiles[99] == pytest.approx(0.087145345)
    assert sorted(report.percentiles) == [50, 90, 95, 99]


def test_throughput_counts_ok_responses_only() -> None:
    report = GhzReport.from_json(load("ghz-errors.json"))
    assert report.status_codes == {"NotFound": 30}
    assert report.ghz_rps > 400  # ghz counts the failures
    assert report.ok_rps == 0.0
    assert report.non_ok == 30
    assert report.errors == {"rpc error: code = NotFound desc = bucket 'nosuch' does not exist": 30}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"count": None}, "malformed"),
        ({"statusCodeDistribution": {"OK": 39}}, "add up to 39, not count 40"),
        ({"latencyDistribution": [{"percentage": 50}]}, "malformed"),
    ],
)
def test_malformed_reports_raise(change: dict[str, object], message: str) -> None:
    with pytest.raises(GhzError, match=message):
        GhzReport.from_json({**load("ghz-ok.json"), **change})


def test_a_report_missing_fields_raises() -> None:
    raw = load("ghz-ok.json")
    del raw["total"]
    with pytest.raises(GhzError, match="lacks total"):
        GhzReport.from_json(raw)


def test_strip_details() -> None:
    assert "details" not in strip_details({**load("ghz-ok.json"), "details": [{"latency": 1}]})


def fake_ghz(tmp_path: Path, script: str) -> str:
    """A stand-in executable, to test run_ghz's own handling of what a program prints."""
    path = tmp_path / "ghz"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_run_ghz_rejects_output_that_is_not_a_report(tmp_path: Path) -> None:
    with pytest.raises(GhzError, match="printed no JSON report"):
        run_ghz([fake_ghz(tmp_path, "echo 'Summary: fine'")], timeout=10)


def test_run_ghz_reports_a_failing_exit(tmp_path: Path) -> None:
    with pytest.raises(GhzError, match="exited with status 3: connection refused"):
        run_ghz([fake_ghz(tmp_path, "echo connection refused >&2; exit 3")], timeout=10)


def test_run_ghz_strips_details(tmp_path: Path) -> None:
    report = json.dumps({**load("ghz-ok.json"), "details": [{"latency": 1}]})
    (tmp_path / "report.json").write_text(report)
    raw = run_ghz([fake_ghz(tmp_path, f"cat {tmp_path / 'report.json'}")], timeout=10)
    assert "details" not in raw
    assert raw["count"] == 40
