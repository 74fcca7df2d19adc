"""Every run's cross-check of loadgen against ghz: which cells it measures, the TCP segments a run records, and the
flag raised when the rate or the server's CPU per call under the two drivers differ by more than the tie band."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.results.files import write_json_atomic
from harness.results.records import CellRecord, Repeat, ResourceUsage, load_study, save_cell
from harness.run.resources import tcp_segments
from harness.run.runner import planned_text, run_method
from harness.studies.choosing import chosen_studies
from harness.studies.streaming import CROSS_CHECK_LEVEL, DRIVER_CHECK
from harness.studies.streaming.plan import checks
from harness.studies.streaming.report import answer, targets
from harness.studies.streaming.tables import cross_check_runs
from tests.runs import ghz_report, study_meta

SNMP = """Ip: Forwarding DefaultTTL
Ip: 1 64
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs
Tcp: 1 200 120000 -1 10 9 0 0 4 123456 654321
Udp: InDatagrams NoPorts
Udp: 5 0
"""


def test_the_segments_sent_are_read_from_the_kernels_tcp_counters(tmp_path: Path) -> None:
    snmp = tmp_path / "snmp"
    snmp.write_text(SNMP)
    assert tcp_segments(snmp) == 654321
    snmp.write_text("Ip: Forwarding\nIp: 1\n")
    assert tcp_segments(snmp) is None
    assert tcp_segments(tmp_path / "absent") is None


def test_every_run_in_blocks_checks_the_driver_on_a_thread_pool_and_an_event_loop(tmp_path: Path) -> None:
    assert [cell.key for cell in checks(RunOptions(tmp_path))] == [
        f"{DRIVER_CHECK.name}/sync-w10/c{CROSS_CHECK_LEVEL}",
        f"{DRIVER_CHECK.name}/aio-uvloop/c{CROSS_CHECK_LEVEL}",
    ]
    named = RunOptions(tmp_path, servers=(server_variant("aio-uvloop"), server_variant("grpclib-uvloop")))
    assert [cell.server.name for cell in checks(named)] == ["aio-uvloop"]
    streaming = next(each for each in chosen_studies(RunOptions(tmp_path)) if each.name == "streaming")
    assert streaming.checks and all(cell.key not in {c.key for c in streaming.cells} for cell in streaming.checks)
    assert "check cells one by one" in planned_text([streaming], run_method(RunOptions(tmp_path)), 28.0)
    (by_cell,) = chosen_studies(RunOptions(tmp_path, studies=("streaming",), full=True))
    assert by_cell.checks == []  # the full matrix drives its own SayHello cells by both drivers


def check_run(root: Path, ghz_cpu_seconds: float, segments: tuple[int, int]) -> Path:
    """A streaming run holding only the driver check: three loadgen and three ghz runs of 3,000 OK calls a second on
    each stack, the server spending 0.9 s of CPU a loadgen run and `ghz_cpu_seconds` a ghz run, the machine sending
    `segments` TCP segments a run (loadgen's, ghz's)."""
    run_id = "20260104T000000Z"
    run_dir = root / "runs" / run_id
    write_json_atomic(run_dir / "run.json", study_meta(run_id, "streaming", {"sync-w10": 10, "aio-uvloop": None}, []))
    where = run_dir / "streaming"
    for server in ("sync-w10", "aio-uvloop"):
        record = CellRecord(DRIVER_CHECK.name, server, CROSS_CHECK_LEVEL, "ok", seconds=6.0)
        repeats = []
        for number in (1, 2, 3):
            for role, cpu, sent in (("measured", 0.9, segments[0]), ("ghz", ghz_cpu_seconds, segments[1])):
                relative = f"{record.stem}-{role}{number}.json"
                write_json_atomic(where / relative, ghz_report(3000, 1.0, 16.0))
                usage = ResourceUsage(1.0, cpu, 100.0 * cpu, 50 * 1024 * 1024)
                repeats.append(Repeat(relative, 3000, usage, 0.3, role, tcp_segments=sent))
        save_cell(where, replace(record, repeats=repeats))
    return run_dir


def test_drivers_that_agree_are_not_flagged(tmp_path: Path) -> None:
    run = load_study(check_run(tmp_path, 0.88, (8000, 7900)), "streaming")
    assert set(cross_check_runs(run)) == {"sync-w10", "aio-uvloop"}
    told = answer([run])
    assert "sync-w10 OK calls/s +0.0%, server CPU per call +2.3%" in told and "Flagged" not in told
    (checked,) = targets(run, 60.0, False).values()
    assert checked.met


def test_a_server_working_harder_under_one_driver_is_flagged_with_the_segments_a_call_took(tmp_path: Path) -> None:
    run = load_study(check_run(tmp_path, 0.72, (8100, 4500)), "streaming")
    told = answer([run])
    assert "server CPU per call +25.0%" in told  # the rates agree; the cost a call does not
    beyond = f"**Flagged: beyond {run.thresholds.cross_check:.0%} on"
    assert f"{beyond} sync-w10.**" in told and f"{beyond} aio-uvloop.**" in told
    assert "a call took 2.70 TCP segments under loadgen and 1.50 under ghz" in told
    (checked,) = targets(run, 60.0, False).values()
    assert not checked.met and not checked.gate
    assert checked.details["server_cpu_per_call_by_server"] == {"sync-w10": 0.25, "aio-uvloop": 0.25}
