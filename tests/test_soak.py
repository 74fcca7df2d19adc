"""The soak's schedule and its verdict, on reports built here (pure), and one short soak against a live stack."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from harness.method.soak_verdict import NEEDS, RECOVERY_SECONDS, load_summary, passed, verdict
from harness.render.soak import checks_text
from harness.run.soak import FAULTS, schedule
from tests.runs import TEST_TIMEOUT, run_harness, started_by_harness, within

MiB = 2**20


def test_a_ten_minute_soak_injects_each_fault_twice_away_from_its_start_and_end() -> None:
    plan = schedule(600)
    assert [name for name, _, _ in plan] == [name for name, _ in FAULTS] * 2
    starts = [start for _, _, start in plan]
    assert starts == sorted(starts) and starts[0] >= 150 and starts[-1] <= 480
    assert min(b - a for a, b in itertools.pairwise(starts)) > 5 + RECOVERY_SECONDS
    assert [name for name, _, _ in schedule(60)] == [name for name, _ in FAULTS]


def _report() -> dict[str, Any]:
    """A 300 s soak that met every criterion: one S3 fault at 100-105 s, one MongoDB fault at 200-205 s."""
    samples = [{"second": float(second), "rss_bytes": 100 * MiB, "fds": 40, "threads": 12} for second in range(0, 301)]
    return {
        "server": "stack",
        "seconds": 300.0,
        "schedule": [
            {"name": "s3-timing-out", "backend": "s3", "start": 100.0, "end": 105.0},
            {"name": "mongodb-unreachable", "backend": "mongodb", "start": 200.0, "end": 205.0},
        ],
        "failures": [
            {"rpc": "s3-unary", "started": 99.0, "ended": 104.0, "code": "DEADLINE_EXCEEDED", "message": ""},
            {"rpc": "s3-mongo", "started": 201.0, "ended": 203.0, "code": "UNAVAILABLE", "message": "mongodb"},
            # Started in the S3 window's recovery: still excused.
            {"rpc": "s3-stream", "started": 106.5, "ended": 106.9, "code": "UNAVAILABLE", "message": "s3"},
        ],
        "server_samples": samples,
        "archive": {"objects": 893, "documents": 893, "distinct_keys": 893},
        "server_alive_at_end": True,
    }


def _failed_checks(report: dict[str, Any]) -> list[str]:
    return [name for name, check in verdict(report).items() if not check["passed"]]


def test_a_soak_whose_failures_all_fall_in_their_windows_passes() -> None:
    assert _failed_checks(_report()) == []


@pytest.mark.parametrize(
    ("failure", "broken"),
    [
        ({"rpc": "hello", "started": 101.0, "ended": 102.0, "code": "UNAVAILABLE"}, "hello_never_failed"),
        (
            {"rpc": "s3-unary", "started": 150.0, "ended": 150.5, "code": "UNAVAILABLE"},
            "failures_in_windows",
        ),
        ({"rpc": "s3-unary", "started": 201.0, "ended": 202.0, "code": "UNAVAILABLE"}, "failures_of_needing_calls"),
        ({"rpc": "s3-unary", "started": 101.0, "ended": 102.0, "code": "INTERNAL"}, "failures_of_needing_calls"),
    ],
)
def test_a_failure_the_fault_does_not_explain_fails_the_soak(failure: dict[str, Any], broken: str) -> None:
    report = _report()
    report["failures"].append({**failure, "message": ""})
    assert broken in _failed_checks(report)


def test_growing_memory_descriptors_or_threads_fail_the_soak() -> None:
    report = _report()
    for sample in report["server_samples"]:
        if sample["second"] >= 290:
            sample.update(rss_bytes=120 * MiB, fds=41, threads=13)
    assert set(_failed_checks(report)) == {"rss_growth", "fds_back", "threads_back"}


def _grown_threads(pool_bound: int) -> dict[str, Any]:
    """The passing report, but from 150 s on three more workers in a pool (of at most pool_bound) and one
    more native thread."""
    report = _report()
    for sample in report["server_samples"]:
        grown = sample["second"] >= 150
        sample.update(threads=12 + 3 * grown + grown, python_threads=4 + 3 * grown)
    pools = {"ThreadPoolExecutor-0": pool_bound}
    report["python_threads"] = {
        "before_first_fault": {"names": {"MainThread": 1, "ThreadPoolExecutor-0": 3}, "pools": pools},
        "end": {"names": {"MainThread": 1, "ThreadPoolExecutor-0": 6}, "pools": pools},
    }
    return report


def test_grown_threads_are_named_python_by_name_and_the_rest_native() -> None:
    check = verdict(_grown_threads(pool_bound=5))["threads_back"]
    assert not check["passed"]
    assert check["grown"] == {
        "python": [{"name": "ThreadPoolExecutor-0", "change": 3, "pool": None}],
        "native": 1,
        "explained": 0,
    }
    (*_, (name, met, detail)) = checks_text({"threads_back": check})
    assert (name, met) == ("threads back to their starting level", False)
    assert detail.endswith("Python threads changed: ThreadPoolExecutor-0 +3; native threads +1")


def test_a_pool_grown_within_its_bound_is_not_a_leak_but_a_native_thread_is() -> None:
    report = _grown_threads(pool_bound=10)
    check = verdict(report)["threads_back"]
    assert not check["passed"]  # the native thread
    assert check["grown"]["python"] == [{"name": "ThreadPoolExecutor-0", "change": 3, "pool": 10}]
    assert "ThreadPoolExecutor-0 +3 (a pool of at most 10)" in checks_text({"threads_back": check})[0][2]
    for sample in report["server_samples"]:
        sample["threads"] -= sample["second"] >= 150
    assert verdict(report)["threads_back"]["passed"]


def test_the_load_summary_leaves_out_the_fault_windows() -> None:
    report = _report()
    for sample in report["server_samples"]:
        busy = 99 <= sample["second"] <= 107  # the S3 fault and its recovery, give or take a second
        sample["cpu_seconds"] = sample["second"] * 0.5 + (sample["second"] - 99) * 0.5 * busy
    report["per_second"] = {str(second): {"hello": {"OK": 30}} for second in range(300)}
    report["per_second"]["102"] = {"hello": {"OK": 1}}
    assert load_summary(report) == {
        "server_cpu_share": 0.5,
        "ok_calls_per_second": {"hello": 30, "s3-unary": 0, "s3-stream": 0, "s3-mongo": 0},
    }


def test_a_duplicated_archive_or_a_dead_server_fails_the_soak() -> None:
    report = copy.deepcopy(_report())
    report["archive"]["documents"] = 894
    report["server_alive_at_end"] = False
    assert set(_failed_checks(report)) == {"archive_per_object", "server_alive"}


def test_every_rpc_of_the_mix_names_the_backends_it_needs() -> None:
    assert NEEDS["hello"] == frozenset() and NEEDS["s3-mongo"] == {"s3", "mongodb"}


@pytest.mark.slow
@pytest.mark.usefixtures("tools")
def test_a_short_soak_on_a_live_stack_injects_every_fault_and_leaves_nothing_running(tmp_path: Path) -> None:
    """Slow (about 80 s here): a soak of one minute, its faults injected while the load runs, is the shortest that
    injects each fault away from its start and end."""
    before = started_by_harness()
    finished = run_harness(
        "soak", "--minutes", "1", "--servers", "sync-w10", "--out", str(tmp_path), timeout=within(TEST_TIMEOUT)
    )
    assert started_by_harness() <= before
    (run_dir,) = (tmp_path / "soak").iterdir()
    report = json.loads((run_dir / "sync-w10.json").read_text())
    assert [fault["name"] for fault in report["schedule"]] == [name for name, _ in FAULTS]
    assert sum(codes.get("OK", 0) for second in report["per_second"].values() for codes in second.values()) > 0
    assert (run_dir / "sync-w10.png").stat().st_size > 0
    # The exit status is the verdict's: 0 when every criterion passed, else 1 and the failed one named.
    assert finished.returncode == (0 if passed(report) else 1), finished.stderr[-3000:]
    words = checks_text(report["verdict"])
    assert all(f"FAIL {name}" in finished.stdout for name, met, _ in words if not met)
    assert "MainThread" in report["python_threads"]["end"]["names"]
    assert all(0 < sample["python_threads"] <= sample["threads"] for sample in report["server_samples"])
    verdicts = report["verdict"]
    assert all(f"{'ok  ' if met else 'FAIL'} {name}: {detail}" in finished.stdout for name, met, detail in words)
    # What a minute of faults cannot blur: hello is never hurt, the server lives, the archive is exact.
    for name in ("hello_never_failed", "server_alive", "archive_per_object"):
        assert verdicts[name]["passed"], verdicts[name]
