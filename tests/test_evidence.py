"""Evidence across runs (harness.analysis.evidence) as a run's race starts from it: the earlier runs of a machine
class that measured a comparison the same way with the same code seed each row, a label whose code changed starts
afresh, and the race spends its blocks on the rows they left open."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis.evidence import Planned, driver_of, earlier_runs, method_of, pooled_with, seeds
from harness.analysis.read_back import read_comparisons
from harness.method.contest import Contest, Race
from harness.method.pooling import Estimate
from harness.method.verdicts import BLOCKS, HELD, Method
from harness.results.files import read_json, write_json_atomic
from harness.results.records import load_study, read_meta
from harness.results.run_meta import RunMeta
from harness.run.runner import seeded_text
from harness.studies import study
from harness.studies.stacks.brief import STREAM_QUESTION
from tests.runs import make_brief_run, meta

HOW = (BLOCKS, "process", "ghz")


def planned(workload: str = "hello/c50") -> Planned:
    servers = {name: name for name in ("sync-w10", "sync-w1", "grpclib-uvloop")}
    return Planned("stacks", workload, "hello", HOW, "sync-w10", "sync-w10~aa", servers)


def test_a_run_is_seeded_by_the_earlier_runs_of_its_machine_class_that_ran_its_code(tmp_path: Path) -> None:
    first = make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07")
    second = make_brief_run(tmp_path, "20260108T000000Z", "2026-01-08")
    meta = read_meta(first)
    how = method_of(Method(), "ghz")  # how the brief runs measured their comparisons
    here = tmp_path / "runs" / "20260109T000000Z"  # a run about to start, with the same code
    meta = replace(meta, run_id=here.name, date="2026-01-09T00:00:00")
    assert [path.name for path in earlier_runs(here, meta)] == [second.name, first.name]
    found = seeds(here, meta, [Planned(**{**planned().__dict__, "how": how})])["stacks/hello/c50"]
    assert len(found.readings) == 2 and found.codes["sync-w1"] == "sync-code"
    estimates = found.earlier("sync-w1", "sync-w10")
    assert len(estimates) == 2 and all(each.blocks == 5 for each in estimates)
    assert found.tau_freedom >= 1  # the scenario's rows ran in two earlier runs
    other_how = seeds(here, meta, [Planned(**{**planned().__dict__, "how": (BLOCKS, HELD, "loadgen")})])
    assert other_how["stacks/hello/c50"].readings == ()  # measured another way: nothing to pool with
    changed = replace(meta, environment=replace(meta.environment, module_codes={"servers.sync": "new-code"}))
    fresh = seeds(here, changed, [Planned(**{**planned().__dict__, "how": how})])["stacks/hello/c50"]
    assert fresh.earlier("sync-w1", "sync-w10") == []  # its code changed: the row starts afresh


def test_a_seeded_race_pools_its_rows_and_says_what_the_earlier_runs_left_open() -> None:
    settled = [Estimate(math.log(0.5), 0.0004, 20, 3), Estimate(math.log(0.52), 0.0004, 20, 3)]
    open_ = [Estimate(math.log(1.02), 0.004, 20, 3), Estimate(math.log(0.99), 0.004, 20, 3)]

    rows = {"slow": settled, "close": open_}

    def earlier(first: str, second: str) -> list[Estimate]:
        """Each earlier run's estimate of first over second, from their rows over the reference."""
        if second == "ref":
            return rows.get(first, [])
        if first in rows and second in rows:
            pairs = zip(rows[first], rows[second], strict=True)
            return [Estimate(a.mean - b.mean, a.variance + b.variance, 20, 3) for a, b in pairs]
        return []

    rounds = Contest("hello/c50", "ref", ("slow", "close", "new"), False, deciding=True)
    race = Race(rounds, Method(), 1, earlier, (0.0001, 40.0))
    labels, pair = race.settled_before()
    # The pick by the earlier runs, close, is not certified: new, which they never measured, holds its bound down
    # (slow is clearly behind; ref is not yet told within 5%).
    assert labels == ["close", "new"] and pair == ("close", "new")
    race.rates = {"ref": {1: 100.0, 2: 100.0}, "slow": {1: 51.0, 2: 50.0}, "close": {1: 99.0, 2: 103.0}}
    pooled = race.ratio("slow", "ref")
    alone = race.ratio("slow", "ref", pooled=False)
    assert pooled is not None and alone is not None and pooled.blocks == 8 and pooled.half_width < alone.half_width
    text = seeded_text([race], 2)
    assert text.startswith("2 earlier runs of this machine class: 2 of 3 label rows open, 1 of 1 decision rows")
    assert text.endswith("this run targets hello/c50 (close × new)")
    assert seeded_text([race], 0) == "No earlier run of this machine class: all 3 label rows and 1 decision rows open."


def test_an_earlier_run_on_another_machine_class_or_made_later_does_not_seed(tmp_path: Path) -> None:
    first = make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07")
    data = read_json(first / "run.json")
    data["machine"] = {"fingerprint": {"vendor": "Other", "family": 1, "model": 2, "stepping": 3, "cores_seen": 2}}
    write_json_atomic(first / "run.json", data)
    later = make_brief_run(tmp_path, "20260110T000000Z", "2026-01-10")
    here = tmp_path / "runs" / "20260109T000000Z"
    meta = replace(read_meta(later), run_id=here.name)
    assert earlier_runs(here, meta) == []


def test_one_reply_or_a_stream_pools_its_unpaired_ratio_over_the_runs_of_its_code(tmp_path: Path) -> None:
    """One reply and a stream are two comparisons, so their ratio is unpaired: Welch's estimate in each run that ran
    both with the stack's code, pooled over those runs, and trusted on all their blocks."""
    make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07")
    newest = load_study(make_brief_run(tmp_path, "20260108T000000Z", "2026-01-08"), "stacks")
    rows = [each for each in study("stacks").decisions([newest]) if each.question == STREAM_QUESTION]
    row = next(each for each in rows if each.workload == "s3-unary/c50/grpclib-uvloop")
    assert row.pick == "a stream" and row.over is not None and row.over.value == pytest.approx(9.2 / 8, rel=0.03)
    assert (row.runs, row.days, row.over.blocks) == (2, 2, 10) and row.trusted


def test_a_run_made_aside_after_a_run_pools_into_that_run_s_rows(tmp_path: Path) -> None:
    """A question closed by a run aside closes the row of the run before it, as an aside made before a run pools
    into the run's rows; a run made aside does not decide rows itself."""
    first = make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07")
    aside = make_brief_run(tmp_path, "20260108T000000Z", "2026-01-08")
    write_json_atomic(aside / "run.json", read_json(aside / "run.json") | {"aside": True})
    assert [path.name for path in pooled_with(first, read_meta(first))] == [aside.name]
    assert pooled_with(aside, read_meta(aside)) == [first]  # an aside pools with the runs before it
    rows = study("stacks").decisions([load_study(first, "stacks")])
    row = next(each for each in rows if each.workload == "s3-unary/c50/grpclib-uvloop")
    assert (row.runs, row.days) == (2, 2)


def test_who_ran_a_comparison_s_windows_is_its_record_s_or_for_older_runs_its_reports(tmp_path: Path) -> None:
    """Runs pool only where one driver ran a comparison's windows: the record's; in records from before they said,
    the one its stored reports show (ghz writes an end reason, loadgen, held or not, does not)."""
    run = make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07")
    (read, *_) = read_comparisons(load_study(run, "stacks"))
    plain = RunMeta.from_json(meta("r", "cpu"))
    wire = replace(plain, studies={"stacks": replace(plain.studies["stacks"], matrix={"driver": "loadgen"})})
    assert read.record.driver == "" and read.window_driver == "ghz" and driver_of(read, wire, "stacks") == "ghz"
    said = replace(read, record=replace(read.record, driver="loadgen"))
    assert driver_of(said, plain, "stacks") == "loadgen"
    unknown = replace(read, window_driver="")  # no report stored: the study's driver
    assert driver_of(unknown, wire, "stacks") == "loadgen" and driver_of(unknown, plain, "stacks") == "ghz"
    for report in (run / "stacks" / "cells").rglob("*.json"):  # as a held loadgen writes them
        found = read_json(report)
        if found.pop("endReason", None):
            write_json_atomic(report, found)
    assert all(each.window_driver == "loadgen" for each in read_comparisons(load_study(run, "stacks")))
