"""`python -m harness compare`: two small fixture runs, golden output."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.render.compare import compare, ratio_changes
from harness.render.findings import differences
from tests.runs import make_brief_run, make_legacy_run, make_run
from tests.test_report import check_golden


def test_compare_two_runs_matches_golden(tmp_path: Path) -> None:
    a = make_run(tmp_path, "20260101T000000Z", "Test CPU A")
    b = make_run(tmp_path, "20260102T000000Z", "Test CPU A", scale=1.0, skew=0.2)
    text = compare(a, b)
    check_golden("compare.txt", text)
    assert "warning" not in text
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("stacks/")}
    # skew 0 for the first server: three runs each 3% apart cannot tell 1.00 from a 5% change either way
    assert lines["stacks/hello/sync-w10/c50"].split()[3:6] == ["1.00", "[0.94,", "1.06]"]
    assert lines["stacks/hello/sync-w10/c50"].endswith("unresolved")
    assert lines["stacks/hello/aio-uvloop/c50"].endswith("faster")  # x1.4, its interval wholly above the band
    assert "a tie in 0, unresolved in 4" in text


def test_a_change_inside_the_tie_band_is_never_called_faster(tmp_path: Path) -> None:
    a = make_run(tmp_path, "20260101T000000Z", "Test CPU A")
    b = make_run(tmp_path, "20260102T000000Z", "Test CPU A", scale=1.02)
    text = compare(a, b)
    assert "B faster in 0, slower in 0" in text


def test_different_cpu_models_are_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_legacy_run(tmp_path)
    make_run(tmp_path, "20260102T000000Z", "Test CPU A")
    assert main(["compare", "20250101T000000Z", "20260102T000000Z", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "warning: the runs come from different CPU models (Legacy CPU vs Test CPU A)" in out
    assert "stacks/hello/sync-w10/c50" in out


def test_an_unknown_run_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "nosuch", "other", "--out", str(tmp_path)]) == 2
    assert "no run 'nosuch'" in capsys.readouterr().err


def test_a_ratio_that_moved_between_runs_beyond_their_spread_is_told_apart_from_those_that_held(
    tmp_path: Path,
) -> None:
    """Two runs of the brief's matrix in blocks, the second with grpclib-uvloop 30% faster on hello only: that
    ratio moved up; every other ratio, its blocks the same in both runs, held."""
    a = make_brief_run(tmp_path, "20260107T000000Z")
    b = make_brief_run(tmp_path, "20260108T000000Z", "2026-01-08", shift=1.3)
    found = ratio_changes(a, b, ["stacks"])
    said = {(row[0], row[1]): row[-1] for row in found["rows"]}
    assert said[("stacks/hello/c50", "grpclib-uvloop × sync-w10")] == "moved up"
    assert said[("stacks/hello/c2", "grpclib-uvloop × sync-w10")] == "moved up"
    others = {
        verdict for key, verdict in said.items() if not (key[0].startswith("stacks/hello/") and "grpclib" in key[1])
    }
    assert others == {"held"} and found["tau"] == 0.0
    assert "Ratios in blocks" in compare(a, b) and "moved up" in compare(a, b)


def test_two_runs_differences_are_said_in_words() -> None:
    before = {
        "commit": "a" * 40,
        "class": "AuthenticAMD 25/1/1, 2 cores",
        "platform": "Linux-6.18",
        "python": "3.11.7",
        "speed": {"start": 0.31, "end": 0.33},
        "tools": {"ghz": "0.120.0"},
        "packages": {"grpcio": "1.76.0", "uvloop": "0.21.0", "six": "1.16"},
    }
    after = {
        **before,
        "commit": "b" * 40,
        "platform": "Linux-6.19",
        "speed": {"start": 0.45, "end": 0.30},
        "packages": {"grpcio": "1.77.0", "uvloop": "0.21.0", "attrs": "25.1"},
    }
    assert differences(before, after) == [
        f"commit {'a' * 12} → {'b' * 12}",
        "kernel Linux-6.18 → Linux-6.19",
        "speed: a Python loop 0.31 s → 0.45 s (more than 10% apart)",
        "3 packages: attrs none → 25.1, grpcio 1.76.0 → 1.77.0, six 1.16 → none",
    ]
    assert differences(before, {**before, "speed": {"start": 0.33}}) == []  # within 10%: the same speed
