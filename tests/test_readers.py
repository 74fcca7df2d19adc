"""The readers study (a stream reader slower than the server): its command line and report (pure), its rows from a
run, and, live, the reliability it exists for: under a reader that stopped, a stack's memory stays within the
study's bound a stream (flow control holds the server back), or the study names the stack as one that buffers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis.decision import answered
from harness.plan.matrix import LONG_KEY_BYTES, LONG_KEYS_BUCKET, LONG_KEYS_OBJECTS, Cell
from harness.plan.servers import server_variant
from harness.results.load import DriverError, SlowOutcome
from harness.results.records import load_study
from harness.run.backends import Backends, seed_bucket
from harness.run.drivers.loadgen import loadgen_argv, run_loadgen
from harness.run.resources import ResourceSampler
from harness.run.serving import running_server
from harness.run.tools import LOADGEN, ensure_go_tool
from harness.studies import study
from harness.studies.readers import (
    BOUNDED_BYTES_A_STREAM,
    BUFFERING,
    LISTING_BYTES,
    READER_SCENARIOS,
    READER_SECONDS,
    STACK_NAMES,
)
from harness.studies.readers.plan import WARMUP_LISTINGS, whole_listing
from tests.runs import make_readers_run, slow_report

STREAMS = 10
SECONDS = 8  # the bounded stacks are flat from the third second; a buffering one has grown past the bound by then
MIB = 1024 * 1024


def test_a_slow_reader_cell_states_its_streams_reader_and_window() -> None:
    cell = Cell(server_variant("aio-uvloop"), READER_SCENARIOS[1], 250)
    argv = loadgen_argv("/tools/loadgen", cell, "127.0.0.1:5000", 1)
    assert argv[:4] == ["/tools/loadgen", "slow", "-target", "127.0.0.1:5000"]
    flags = dict(zip(argv[4::2], argv[5::2], strict=True))
    assert flags == {
        "-bucket": LONG_KEYS_BUCKET,
        "-batch": "1",
        "-streams": "250",
        "-connections": "3",  # 100 streams a connection at most
        "-every": "1000ms",
        "-seconds": f"{READER_SECONDS}s",
        "-window": "65535",
    }


def test_a_slow_report_whose_streams_do_not_add_up_is_refused() -> None:
    good = slow_report(4, 1, {"Canceled": 4})
    assert SlowOutcome.from_json(good).clean
    assert not SlowOutcome.from_json(slow_report(4, 1, {"Canceled": 3, "Unavailable": 1})).clean
    with pytest.raises(DriverError, match="do not count 4"):
        SlowOutcome.from_json(good | {"ended": {"Canceled": 3}})
    with pytest.raises(DriverError, match="malformed"):
        SlowOutcome.from_json({key: value for key, value in good.items() if key != "messages"})


def test_the_row_names_the_stack_that_buffers_and_by_how_much_a_stream(tmp_path: Path) -> None:
    grown = {"sync-w10": (2 * MIB, 2 * MIB, 3 * MIB), "aio-uvloop": (9 * MIB, 7 * MIB, 8 * MIB)}
    run = load_study(make_readers_run(tmp_path, grown), "readers")
    readers = study("readers")
    (row,) = readers.decisions([run])
    assert row.told == (
        "Yes: aio-uvloop +8.0 MiB a stream [7.0 to 9.0 over 3 readings], buffering (78% of a stream's listing)"
    ), row.told
    assert row.pick == "sync-w10" and row.avoid == "aio-uvloop (+8.0 MiB a stream)" and row.trusted
    assert row.verdict == "buffering: aio-uvloop" and answered(row)
    targets = readers.targets(run, 60.0, False)
    assert targets["streams_end_clean"].met and targets["streams_end_clean"].gate
    assert not targets["memory_bounded"].met and not targets["memory_bounded"].gate


def test_readings_on_both_sides_of_the_bound_are_not_told_and_fewer_than_three_not_trusted(tmp_path: Path) -> None:
    readers = study("readers")
    straddling = {"sync-w10": (2 * MIB, 2 * MIB, 2 * MIB), "aio-uvloop": (2 * MIB, 3 * MIB, 7 * MIB)}
    (row,) = readers.decisions([load_study(make_readers_run(tmp_path / "a", straddling), "readers")])
    assert row.told.startswith("Not told yet: aio-uvloop +3.0 MiB a stream [2.0 to 7.0 over 3 readings], unsettled")
    assert not row.trusted and row.why == "readings on both sides of the bound" and not answered(row)
    (row,) = readers.decisions([load_study(make_readers_run(tmp_path / "b", {"sync-w10": (MIB, MIB)}), "readers")])
    assert row.told.startswith("No: every stack's memory stayed within 6.2 MiB a stream (sync-w10 +1.0 MiB")
    assert not row.trusted and row.why == "only 2 readings" and row.verdict == "bounded"


def test_a_stream_that_failed_fails_the_run(tmp_path: Path) -> None:
    grown = {"sync-w10": (2 * MIB,) * 3, "aio-uvloop": (3 * MIB,) * 3}
    run = load_study(make_readers_run(tmp_path, grown, {"aio-uvloop": {"Canceled": 9, "Internal": 1}}), "readers")
    readers = study("readers")
    (row,) = readers.decisions([run])
    assert row.told.startswith("No: every stack's memory stayed within 6.2 MiB a stream (sync-w10 +2.0 MiB"), row.told
    assert not readers.targets(run, 60.0, False)["streams_end_clean"].met


@pytest.fixture(scope="module")
def long_keys(backends: Backends) -> Backends:
    seed_bucket(backends.config, LONG_KEYS_BUCKET, LONG_KEYS_OBJECTS, key_bytes=LONG_KEY_BYTES)
    return backends


@pytest.mark.parametrize("stack", STACK_NAMES)
def test_under_a_stopped_reader_a_server_s_memory_stays_bounded_or_the_study_says_it_buffers(
    long_keys: Backends, stack: str
) -> None:
    stopped = READER_SCENARIOS[0]
    cell = Cell(server_variant(stack), replace(stopped, data={**stopped.data, "seconds": SECONDS}), STREAMS)
    loadgen = ensure_go_tool(LOADGEN)
    with running_server(cell.server, long_keys.env()) as (target, child):
        warmed = run_loadgen(loadgen_argv(loadgen, whole_listing(cell), target, WARMUP_LISTINGS), 120.0)
        assert warmed.report.ok == WARMUP_LISTINGS, warmed.report.status_codes
        with ResourceSampler(child.pid) as sampler:
            finished = run_loadgen(loadgen_argv(loadgen, cell, target, STREAMS), 60.0)
    outcome = SlowOutcome.from_json(finished.raw)
    assert outcome.clean and outcome.ended == {"Canceled": STREAMS}, outcome.ended
    assert sampler.usage is not None and sampler.usage.start_rss_bytes > 0
    grown = (sampler.usage.peak_rss_bytes - sampler.usage.start_rss_bytes) / STREAMS
    standing = "buffering" if grown > BOUNDED_BYTES_A_STREAM else "bounded"  # as the study tells a reading
    expected = "buffering" if stack in BUFFERING else "bounded"
    assert standing == expected, (
        f"{stack}: +{grown / MIB:,.1f} MiB a stream under a stopped reader ({grown / LISTING_BYTES:.0%} of its "
        f"listing), {standing} where the study says {expected}: the bound is {BOUNDED_BYTES_A_STREAM / MIB:,.1f} MiB"
    )
