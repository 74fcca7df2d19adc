"""The ghz driver: its command line from a cell, its JSON report parsed strictly, its details kept as a histogram."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from harness.plan.matrix import Cell, scenario
from harness.plan.servers import server_variant
from harness.results.histogram import Latencies, encode_latencies
from harness.results.load import HISTOGRAM_KEY, DriverError, LoadReport
from harness.run.drivers.ghz import PROTO, compact, ghz_argv, run_ghz
from harness.run.drivers.registry import DRIVERS
from harness.run.tls import PLAIN, Certificates, Wire
from harness.studies.protocols import info_scenario

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict[str, object]:
    return dict(json.loads((FIXTURES / name).read_text()))


def test_ghz_argv_uses_count_mode_and_the_proto_file() -> None:
    cell = Cell(server_variant("sync-w1"), scenario("s3-stream"), 25)
    argv = ghz_argv("/tools/ghz", cell, "127.0.0.1:5000", 100)
    assert argv == [
        "/tools/ghz",
        "--insecure",
        "--proto",
        str(PROTO),
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
    report = LoadReport.from_json(load("ghz-ok.json"))
    assert (report.count, report.ok, report.non_ok) == (40, 40, 0)
    assert report.total == pytest.approx(0.203635296)
    assert report.ok_rps == pytest.approx(40 / 0.203635296)
    assert report.percentiles[99] == pytest.approx(0.087145345)
    assert sorted(report.percentiles) == [50, 90, 95, 99]


def test_throughput_counts_ok_responses_only() -> None:
    report = LoadReport.from_json(load("ghz-errors.json"))
    assert report.status_codes == {"NotFound": 30}
    assert report.driver_rps > 400  # ghz counts the failures
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
    with pytest.raises(DriverError, match=message):
        LoadReport.from_json({**load("ghz-ok.json"), **change})


def test_a_report_missing_fields_raises() -> None:
    raw = load("ghz-ok.json")
    del raw["total"]
    with pytest.raises(DriverError, match="lacks total"):
        LoadReport.from_json(raw)


def details(latencies_ms: list[float], status: str = "OK") -> list[dict[str, object]]:
    return [{"latency": round(ms * 1e6), "status": status, "error": ""} for ms in latencies_ms]


def test_compact_keeps_ok_latencies_as_a_histogram_not_the_details() -> None:
    raw = {**load("ghz-ok.json"), "details": details([1.0] * 98 + [50.0, 100.0]) + details([7.0], "Unavailable")}
    stored = compact(raw)
    assert "details" not in stored
    latencies = Latencies([stored[HISTOGRAM_KEY]])
    assert latencies.count == 100  # the failed call is not an OK latency
    assert latencies.percentile(50) == pytest.approx(0.001, rel=1e-3)
    assert latencies.percentile(99.5) == pytest.approx(0.1, rel=1e-3)


def test_histograms_pool_runs() -> None:
    fast, slow = encode_latencies([0.001] * 90), encode_latencies([0.2] * 10)
    pooled = Latencies([fast, slow])
    assert pooled.count == 100
    assert pooled.percentile(90) == pytest.approx(0.001, rel=1e-3)
    assert pooled.percentile(95) == pytest.approx(0.2, rel=1e-3)
    assert Latencies([]).percentile(99) == 0.0


def test_malformed_details_raise() -> None:
    with pytest.raises(DriverError, match="malformed ghz details"):
        compact({**load("ghz-ok.json"), "details": [{"latency": 1}]})


def test_ghz_is_a_registered_driver() -> None:
    driver = DRIVERS["ghz"]
    assert driver.argv is ghz_argv and driver.run is run_ghz
    assert driver.tool.name == "ghz" and driver.tool.version == "v0.121.0"


def fake_ghz(tmp_path: Path, script: str) -> str:
    """A stand-in executable, to test run_ghz's own handling of what a program prints."""
    path = tmp_path / "ghz"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_run_ghz_rejects_output_that_is_not_a_report(tmp_path: Path) -> None:
    with pytest.raises(DriverError, match="printed no JSON report"):
        run_ghz([fake_ghz(tmp_path, "echo 'Summary: fine'")], timeout=10)


def test_run_ghz_reports_a_failing_exit(tmp_path: Path) -> None:
    with pytest.raises(DriverError, match="exited with status 3: connection refused"):
        run_ghz([fake_ghz(tmp_path, "echo connection refused >&2; exit 3")], timeout=10)


def test_run_ghz_keeps_a_histogram_instead_of_details(tmp_path: Path) -> None:
    report = json.dumps({**load("ghz-ok.json"), "details": details([2.0] * 40)})
    (tmp_path / "report.json").write_text(report)
    run = run_ghz([fake_ghz(tmp_path, f"cat {tmp_path / 'report.json'}")], timeout=10)
    assert "details" not in run.raw
    assert run.report.count == 40
    assert Latencies([run.report.histogram]).count == 40


def test_run_ghz_refuses_details_that_disagree_with_the_counts(tmp_path: Path) -> None:
    report = json.dumps({**load("ghz-ok.json"), "details": details([2.0] * 39)})
    (tmp_path / "report.json").write_text(report)
    with pytest.raises(DriverError, match="39 OK calls in its details, not 40"):
        run_ghz([fake_ghz(tmp_path, f"cat {tmp_path / 'report.json'}")], timeout=10)


def test_run_ghz_measures_its_cpu(tmp_path: Path) -> None:
    report = json.dumps({**load("ghz-ok.json"), "details": details([2.0] * 40)})
    (tmp_path / "report.json").write_text(report)
    busy = "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; "
    run = run_ghz([fake_ghz(tmp_path, busy + f"cat {tmp_path / 'report.json'}")], timeout=60)
    assert run.cpu_seconds > 0.05


def test_every_driver_speaks_tls_by_its_own_flags_and_h2load_refuses_mutual_tls(tmp_path: Path) -> None:
    ca, client_chain, client_key = tmp_path / "ca", tmp_path / "c.pem", tmp_path / "c.key"
    certificates = Certificates(ca, tmp_path / "s.pem", tmp_path / "s.key", client_chain, client_key, "ECDSA")
    tls, mtls = Wire(certificates), Wire(certificates, mutual=True)
    hello = Cell(server_variant("aio-uvloop"), scenario("hello"), 2)
    ghz = ghz_argv("ghz", hello, "127.0.0.1:1", 10)
    assert DRIVERS["ghz"].wire(ghz, PLAIN) == ghz
    secured = DRIVERS["ghz"].wire(ghz, mtls)
    assert "--insecure" not in secured and secured[-1] == "127.0.0.1:1"
    assert secured[1:7] == ["--cacert", str(ca), "--cert", str(client_chain), "--key", str(client_key)]
    loadgen = DRIVERS["loadgen"].argv("loadgen", hello, "127.0.0.1:1", 10)
    assert DRIVERS["loadgen"].wire(loadgen, tls)[:4] == ["loadgen", "call", "-cacert", str(ca)]
    rest = Cell(server_variant("rest-h2"), info_scenario("rest", "2"), 2)
    h2load = DRIVERS["h2load"].argv("h2load", rest, "127.0.0.1:1", 10)
    assert DRIVERS["h2load"].wire(h2load, tls)[-1].startswith("https://127.0.0.1:1/")
    with pytest.raises(ValueError, match="h2load cannot present a client certificate"):
        DRIVERS["h2load"].wire(h2load, mtls)
