"""The capacity study's pure parts: the rate search on a fake with a known knee, open-loop argv, expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.plan.matrix import Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import server_variant
from harness.render.decisions import closing, picked
from harness.results.histogram import encode_latencies
from harness.results.load import HISTOGRAM_KEY, LoadReport
from harness.results.records import CellRecord, CellResult, Repeat, ResourceUsage, load_study
from harness.results.run_meta import RunMeta
from harness.run.drivers.ghz import ghz_open_loop_argv
from harness.studies import DEFAULT_STUDIES, plan, study
from harness.studies.capacity import DECIDING, JITTER, PRECISION, WORKERS, held, kept_up, settled
from harness.studies.capacity.cells import CapacityCell, by_scenario
from harness.studies.capacity.plan import REPEAT_FACTOR, agreed, open_loop_cell, rate_search, step_calls
from harness.studies.capacity.report import MEASURE, SETTINGS
from tests.runs import make_searched_run, meta

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("knee", "start"), [(137.0, 10), (3.3, 10), (1999.0, 100), (10.0, 10), (1.5, 20)])
def test_rate_search_finds_the_knee_within_one_step(knee: float, start: int) -> None:
    tried: list[int] = []

    def passes(rate: int) -> bool:
        tried.append(rate)
        return rate <= knee

    search = rate_search(passes, start)
    assert search.capacity <= knee < search.failed_at
    assert search.failed_at - search.capacity <= max(1, search.capacity * PRECISION)  # the last step
    assert all(isinstance(step.rate, int) for step in search.steps)  # ghz --rps takes whole numbers
    assert [step.rate for step in search.steps] == tried  # every step kept, in order
    assert len(search.steps) <= 16


@pytest.mark.parametrize(("knee", "start"), [(1305.0, 1300), (1180.0, 1300), (1500.0, 1300), (2.5, 3)])
def test_a_repeated_search_brackets_near_the_first_one_s_capacity_in_few_rates(knee: float, start: int) -> None:
    search = rate_search(lambda rate: rate <= knee, start, factor=REPEAT_FACTOR)
    assert search.capacity <= knee < search.failed_at
    assert search.failed_at - search.capacity <= max(1, search.capacity * PRECISION)
    assert len(search.steps) <= (3 if abs(knee / start - 1) < 0.05 else 6)


def test_rate_search_with_nothing_passing_reports_zero() -> None:
    search = rate_search(lambda rate: False, 8)
    assert search.capacity == 0
    assert [step.rate for step in search.steps] == [8, 4, 2, 1]


def test_open_loop_argv_is_async_at_a_rate() -> None:
    cell = Cell(server_variant("aio-uvloop"), scenario("s3-unary-100ms"), 50)
    argv = ghz_open_loop_argv("ghz", cell, "127.0.0.1:5000", 37, 375, "60s")
    assert argv[-4:] == ["--async", "--rps", "37", "127.0.0.1:5000"]
    assert argv[argv.index("--total") + 1] == "375"
    assert argv[argv.index("--timeout") + 1] == "60s"
    assert argv[argv.index("--concurrency") + 1] == "50"
    with pytest.raises(ValueError, match="whole number of calls/s"):
        ghz_open_loop_argv("ghz", cell, "t", 0, 375)


def test_steps_last_at_least_10_seconds_and_workers_fit_the_calls() -> None:
    assert step_calls(2100) == 21_000
    assert step_calls(20) == 200
    assert step_calls(1) == 10
    cell = Cell(server_variant("sync-w1"), scenario("hello-wait"), WORKERS)
    assert open_loop_cell(cell, 10).concurrency == 10
    assert open_loop_cell(cell, 2000).concurrency == WORKERS


@pytest.mark.parametrize(
    ("outcomes", "held_", "taken"),
    [
        ([True, True], True, 2),
        ([False, False], False, 2),
        ([True, False, False], False, 3),
        ([False, True, True], True, 3),
    ],
)
def test_a_rate_counts_as_held_or_failed_only_when_two_steps_agree(
    outcomes: list[bool], held_: bool, taken: int
) -> None:
    steps = iter(outcomes)
    taken_steps: list[bool] = []

    def step() -> bool:
        taken_steps.append(next(steps))
        return taken_steps[-1]

    assert agreed(step) is held_ and len(taken_steps) == taken
    assert settled(outcomes) is held_
    assert settled([True]) and not settled([False]) and not settled([True, False])


def test_a_saturation_step_holds_when_the_server_keeps_up_at_any_latency() -> None:
    raw = json.loads((FIXTURES / "ghz-ok.json").read_text())
    report = LoadReport.from_json({**raw, "options": {"rps": 100, "async": True}})
    assert kept_up(report) is (report.ok_rps >= 95)


def test_a_report_knows_the_rate_it_was_offered() -> None:
    raw = json.loads((FIXTURES / "ghz-ok.json").read_text())
    assert LoadReport.from_json(raw).offered_rps is None  # closed loop: ghz's rps option is 0
    raw["options"]["rps"] = 40
    assert LoadReport.from_json(raw).offered_rps == 40.0


def test_a_step_holds_with_no_failure_and_p99_within_the_slo() -> None:
    raw = json.loads((FIXTURES / "ghz-ok.json").read_text())
    fast = LoadReport.from_json({**raw, HISTOGRAM_KEY: encode_latencies([0.005] * 40)})
    slow = LoadReport.from_json({**raw, HISTOGRAM_KEY: encode_latencies([0.005] * 38 + [0.02] * 2)})
    assert held(fast, 0.010)
    assert not held(slow, 0.010)
    failing = LoadReport.from_json({**raw, "statusCodeDistribution": {"OK": 39, "Unavailable": 1}})
    assert not held(failing, 10.0)


def test_capacity_cells_cover_the_brief_s_stacks_and_the_peers_where_the_row_reads_them() -> None:
    capacity = plan("capacity")
    cells = capacity.cells(RunOptions(Path("out")))
    stacks = ["sync-w1", "sync-w10", "grpclib-asyncio", "grpclib-uvloop", "sync-w50", "aio-uvloop", "connect-pyvoy"]
    assert [cell.key for cell in cells] == [f"{each}/{stack}/c50" for each in DECIDING for stack in stacks]
    named = capacity.cells(RunOptions(Path("out"), scenarios=(scenario("s3-mongo-100ms"), JITTER)))
    keys = {cell.key for cell in named}
    assert "s3-mongo-100ms/aio-uvloop/c50" in keys and not any("pymongo" in key for key in keys)
    jittered = [cell for cell in named if cell.scenario == JITTER]
    assert jittered and all(cell.server.slots is None for cell in jittered)  # the convoy check, asked for
    assert JITTER.jitter_ms == 20 and JITTER.s3_latency_ms == 100
    assert "capacity" not in DEFAULT_STUDIES
    only_hello = capacity.cells(RunOptions(Path("out"), scenarios=(scenario("hello"),)))
    assert {cell.scenario.name for cell in only_hello} == {"hello"}


def _repeat(cpu_seconds: float, counters: dict[str, float], role: str) -> Repeat:
    return Repeat("r.json", 1000, ResourceUsage(10.0, cpu_seconds, 100.0, 1), 1.0, role, counters)


def _counters(switches: float, gc_seconds: float = 0.0, lag_seconds: float = 0.0, late: int = 0) -> dict[str, float]:
    return {
        "gc_seconds": gc_seconds,
        "gc_collections": 3,
        "lag_checks": 200,
        "lag_seconds": lag_seconds,
        "late_5ms": late,
        "late_50ms": late,
        "voluntary_switches": switches,
        "involuntary_switches": 0,
    }


def _capacity_cell(
    knee: Repeat, offered: tuple[int, int, int], slots: int | None = None, alone: float = 0.001
) -> CapacityCell:
    """A cell whose low-load run costs 1 ms per call (each taking `alone` s), whose step at offered[1] holds
    and offered[2] fails."""
    raw = json.loads((FIXTURES / "ghz-ok.json").read_text())

    def report(rate: int, latency: float, ok: int) -> dict[str, object]:
        return {
            **raw,
            "options": {**raw["options"], "rps": rate},
            HISTOGRAM_KEY: encode_latencies([latency] * 40),
            "statusCodeDistribution": {"OK": ok},
            "count": ok,
        }

    low = _repeat(1.0, _counters(1000), "low-load")  # 1,000 calls in 1 s of CPU: 1 ms each
    passing = _repeat(5.0, _counters(5000), "step")
    record = CellRecord("hello", "stack", WORKERS, "ok", repeats=[passing, knee, low])
    reports = [report(offered[1], 0.002, 1000), report(offered[2], 0.050, 1000), report(offered[0], alone, 1000)]
    result = CellResult(record, [LoadReport.from_json(each) for each in reports])
    return CapacityCell(result, RunMeta.from_json(meta("r", "cpu")), SETTINGS, slots)


def test_the_reason_names_thread_hand_offs_when_the_core_is_saturated() -> None:
    knee = _repeat(9.5, _counters(3000, gc_seconds=0.02), "step")  # 95% of one core, 3 switches per call
    cell = _capacity_cell(knee, (50, 500, 700))
    assert cell.capacity == 500 and cell.cpu_bound == pytest.approx(1000)
    reason = cell.reason()
    assert "700 calls/s the server used 95% of its core" in reason
    assert "a call cost 9.50x its low-load CPU" in reason
    assert "3.0 context switches per call against 1.0 at low load (thread hand-offs)" in reason
    assert "GC took 2.0 ms per second" in reason


def test_the_reason_names_loop_lag_when_the_core_is_not_saturated() -> None:
    knee = _repeat(6.0, _counters(1000, lag_seconds=2.0, late=40), "step")  # 60% of one core
    reason = _capacity_cell(knee, (50, 500, 700)).reason()
    assert "used 60% of its core, so something other than the CPU held the tail" in reason
    assert "the loop woke 10.0 ms late on average, 20% of wake-ups by 50 ms or more" in reason
    assert "thread hand-offs" not in reason


def test_the_reason_names_the_wait_bound_of_a_thread_pool() -> None:
    knee = _repeat(0.8, _counters(1000), "step")  # 8% of one core
    cell = _capacity_cell(knee, (1, 9, 10), slots=1, alone=0.1)
    assert cell.wait_bound == pytest.approx(10, rel=0.01)
    reason = cell.reason()
    assert reason.startswith("its 1 worker thread held a call for 100")
    assert "at most 10.0 calls/s (the wait bound)" in reason
    assert "at 10.0 calls/s the core was 8% busy" in reason


def test_repeated_searches_give_each_capacity_an_interval_and_the_row_a_certified_pick(tmp_path: Path) -> None:
    """Three searches a stack: the pick is certified where it takes the most load within the SLO, or within 5% of
    the most, over every rival at once; a race the searches cannot yet call says how many would."""
    close = {"sync-w10": [(1300, 1340), (1280, 1320), (1310, 1350)], "aio-uvloop": [(1250, 1290), (1260, 1300)]}
    close["aio-uvloop"].append((1240, 1280))
    run = load_study(make_searched_run(tmp_path / "close", close), "capacity")
    (cell, _) = by_scenario(run)["hello"]
    assert cell.name == "sync-w10" and len(cell.searches) == 3 and (cell.capacity, cell.failed_at) == (1300, 1340)
    found = cell.over_searches
    assert found is not None and found.blocks == 3 and found.low < 1310 < found.high
    (row,) = study("capacity").decisions([run])
    assert (row.pick, row.certified, row.binding, row.measure) == ("sync-w10", True, "aio-uvloop", MEASURE)
    assert row.lowest is not None and row.lowest >= 0.95 and not row.closing
    assert picked(row).startswith("Pick sync-w10: the most load within the SLO, or within 5% of the most (95%)")
    wide = {"sync-w10": [(1300, 1340), (1000, 1040)], "aio-uvloop": [(1250, 1290), (1150, 1190)]}
    (open_,) = study("capacity").decisions([load_study(make_searched_run(tmp_path / "wide", wide), "capacity")])
    assert open_.certified is False and picked(open_).startswith("Not yet: aio-uvloop or sync-w10")
    assert "searches a stack in place of 2" in open_.closing and "--study capacity --repeats " in open_.command


def test_a_row_searched_once_says_how_many_searches_would_close_it(tmp_path: Path) -> None:
    once = {"sync-w10": [(1300, 1340)], "aio-uvloop": [(1290, 1330)]}
    (row,) = study("capacity").decisions([load_study(make_searched_run(tmp_path, once), "capacity")])
    assert row.certified is None and row.verdict == "unresolved (the capacities overlap)"
    assert row.closing.startswith("repeated searches of each capacity, for an interval over them: 3 a stack (about ")
    assert row.command == "python -m harness run-all --study capacity --repeats 3"
    told = closing([row])
    assert told.count("by `") == 1 and told.endswith("--repeats 3`.")  # its own command, said once
