"""The leaderboards that open results/README.md: one table a workload at 50 clients, every pickable stack fastest
first with its absolute figures, the machine stated once above them (harness.render.leaderboard)."""

from __future__ import annotations

from pathlib import Path

from harness.render.leaderboard import COLUMNS
from harness.render.markdown import write_report
from tests.runs import make_blocks_run


def test_the_results_open_with_a_leaderboard_of_absolute_figures_fastest_first(tmp_path: Path) -> None:
    make_blocks_run(tmp_path)  # hello at 50 clients: aio-uvloop about 3,900 calls/s, grpclib-uvloop and sync-w10 3,000
    write_report(tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert text.index("## Leaderboards at 50 clients") < text.index("## Decide")
    board = text.split("## Leaderboards at 50 clients", 1)[1].split("## Decide", 1)[0]
    assert "**Measured on** Test CPU A" in board and "run `20260106T000000Z`" in board
    lines = [line for line in board.splitlines() if line.startswith("| ")]
    assert lines[0] == "| " + " | ".join(COLUMNS) + " |"
    stacks = [line.split(" | ")[0].removeprefix("| ") for line in lines[1:]]
    assert stacks == ["aio-uvloop", "grpclib-uvloop", "sync-w10"]  # fastest first; no A/A twin
    first = lines[1].split(" | ")
    assert first[2] == "1"  # the fastest, over itself
    rate = float(first[1].split(" [")[0].replace(",", ""))
    assert 3_700 < rate < 4_100
    assert lines[2].split(" | ")[2].startswith("0.7")  # grpclib-uvloop over aio-uvloop, with its interval
    page = (tmp_path / "report.html").read_text()
    assert page.index("<section id='boards'>") < page.index("<h2>Decide</h2>")
    assert "<details class='board' open><summary><b>hello</b>: no I/O</summary>" in page
