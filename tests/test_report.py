"""Tables, answers and the summary rendered from run files only, checked against golden files.

Regenerate the golden files after an intended change with
`UPDATE_GOLDEN=1 pytest tests/test_report.py tests/test_compare.py`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.analysis.judging import ANALYSED, judged_comparisons
from harness.render.markdown import write_report
from harness.render.summaries import CellSummary
from harness.results.files import read_json, write_json_atomic
from harness.results.records import load_study, read_meta
from harness.studies import STUDIES
from tests.runs import make_brief_run, make_legacy_run, make_run

GOLDEN = Path(__file__).parent / "golden"


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    """Three runs: a schema-1 run, an older run on CPU B, the newest on CPU A (whose ranks differ)."""
    make_legacy_run(tmp_path)
    make_run(tmp_path, "20260101T000000Z", "Test CPU B", scale=0.5, skew=0.3)
    make_run(tmp_path, "20260102T000000Z", "Test CPU A")
    write_report(tmp_path)
    return tmp_path


def test_summary_opens_with_the_answers_and_matches_golden(rendered: Path) -> None:
    text = (rendered / "README.md").read_text()
    check_golden("README.md", text)
    answers = text.split("## The answers", 1)[1].split("\n## ", 1)[0]
    for each in STUDIES:
        assert f"**{each.question}**" in answers
    assert text.index("## The answers") < text.index("## Each study") and len(text.splitlines()) <= 150
    for line in filter(None, answers.splitlines()):  # the question, at most 80 words, a link to its study's page
        assert len(line.split("** ", 1)[1].split()) <= 80 + 1


def test_answer_is_written_from_the_files(rendered: Path) -> None:
    text = (rendered / "stacks" / "README.md").read_text()
    # hello at c=50 on CPU A: sync-w10 (3000 calls in 1 s) leads; aio-uvloop 2600; the median run is the first.
    assert "async pays off on hello-wait ×4.67 (grpclib-uvloop 467 vs sync-w10 100 OK calls/s)" in text
    assert "async costs on hello ×0.87 (aio-uvloop 2,600 vs sync-w10 3,000 OK calls/s)" in text


def test_every_machine_stands_side_by_side(rendered: Path) -> None:
    text = (rendered / "stacks" / "README.md").read_text()
    assert "Test CPU A (`20260102T000000Z`)" in text and "Test CPU B (`20260101T000000Z`)" in text
    assert "Legacy CPU" in text  # a full default run on a third CPU model, schema 1


def test_a_study_decides_from_its_newest_run_and_another_machine_class_on_request(tmp_path: Path) -> None:
    """Two runs of one code on CPU B and a newer one on CPU A: the table reads A's, the machine just run on, and the
    page names B's newest; `--machine` answers for B from its newest run, naming A's."""
    runs = (("20260107T000000Z", "Test CPU B"), ("20260108T000000Z", "Test CPU B"), ("20260109T000000Z", "Test CPU A"))
    for run_id, cpu in runs:
        run_json = make_brief_run(tmp_path, run_id, f"2026-01-{run_id[6:8]}") / "run.json"
        data = read_json(run_json)
        data["environment"]["cpu_model"] = cpu
        write_json_atomic(run_json, data)
    write_report(tmp_path)
    text = (tmp_path / "stacks" / "README.md").read_text()
    assert "the run it decides from, `20260109T000000Z`" in text
    assert "other machine types: [`20260108T000000Z`](../runs/20260108T000000Z) (Test CPU B)" in text
    told = (tmp_path / "findings.json").read_text()
    assert '"run": "20260109T000000Z"' in told and '"run": "20260108T000000Z"' not in told
    machine = read_meta(tmp_path / "runs" / "20260108T000000Z").cpu_class
    write_report(tmp_path, machine=machine)
    text = (tmp_path / "stacks" / "README.md").read_text()
    assert "the run it decides from, `20260108T000000Z`" in text
    with pytest.raises(ValueError, match="no run on machine class 'Nowhere'"):
        write_report(tmp_path, machine="Nowhere")


def test_table_titles_name_run_cpu_and_pinning(rendered: Path) -> None:
    table = (rendered / "stacks" / "hello" / "concurrency-50.md").read_text()
    check_golden("hello-concurrency-50.md", table)
    assert table.splitlines()[0].endswith(
        "run `20260102T000000Z`, Test CPU A (2 CPUs), server on CPU 1, load generator and backends on CPU 0"
    )


def test_bounded_table_shows_bounds_and_efficiency(rendered: Path) -> None:
    check_golden("hello-wait-concurrency-50.md", (rendered / "stacks" / "hello-wait" / "concurrency-50.md").read_text())


def test_chart_is_a_png(rendered: Path) -> None:
    assert (rendered / "stacks" / "charts" / "hello.png").read_bytes().startswith(b"\x89PNG")


def test_report_reads_only_the_files(tmp_path: Path) -> None:
    """Rendering twice from the same files gives the same text: nothing else feeds it."""
    make_run(tmp_path, "20260102T000000Z", "Test CPU A")
    write_report(tmp_path)
    first = (tmp_path / "README.md").read_text()
    write_report(tmp_path)
    assert (tmp_path / "README.md").read_text() == first


def test_a_report_analyses_each_run_once(tmp_path: Path) -> None:
    """Every page, table, row and export of a report reads one analysis of each run and study."""
    make_brief_run(tmp_path, "20260106T000000Z", "2026-01-06", shift=1.05)
    make_brief_run(tmp_path)
    write_report(tmp_path)
    assert set(ANALYSED) == {("stacks", "20260106T000000Z"), ("stacks", "20260107T000000Z")}
    assert set(ANALYSED.values()) == {1}
    # Each analysis is written down beside the report, in numbers: the figures the pages were rendered from.
    saved = read_json(tmp_path / "analysis" / "20260107T000000Z.json")
    judged = judged_comparisons(load_study(tmp_path / "runs" / "20260107T000000Z", "stacks"))
    ratios = {
        (each["workload"], outcome["alternative"]): outcome["ratio"]
        for each in saved["studies"]["stacks"]
        for outcome in each["outcomes"]
    }
    assert ratios == {
        (each.record.workload, outcome.alternative): round(outcome.ratio.value, 4)
        for each in judged
        for outcome in each.outcomes
    }


def test_stale_tables_are_removed(rendered: Path) -> None:
    stale = rendered / "stacks" / "hello" / "concurrency-99.md"
    stale.write_text("old")
    write_report(rendered)
    assert not stale.exists()


def test_percentiles_pool_every_run_and_need_enough_calls(tmp_path: Path) -> None:
    run = load_study(make_run(tmp_path, "20260102T000000Z", "Test CPU A"), "stacks")
    cells = {cell.record.key: cell for cell in run.cells}
    hello = CellSummary(cells["hello/sync-w10/c50"], run.meta, 10)
    assert hello.ok_calls == 3000 + 2940 + 3090
    # Each call took 16 ms x (1.00 .. 1.09): the pooled median and tail, to HdrHistogram's 0.1%.
    assert hello.percentile(50) == pytest.approx(0.01664, rel=2e-3)
    assert hello.percentile(99.9) == pytest.approx(0.01744, rel=2e-3)
    waiting = CellSummary(cells["hello-wait/sync-w10/c50"], run.meta, 10)
    assert waiting.ok_calls == 150 + 147 + 154  # enough for p99, not for p99.9
    assert waiting.percentile(99) is not None
    assert waiting.percentile(99.9) is None


def test_a_legacy_run_is_read_as_the_stacks_study(tmp_path: Path) -> None:
    run = load_study(make_legacy_run(tmp_path), "stacks")
    (cell, _) = run.cells
    summary = CellSummary(cell, run.meta, 10)
    assert summary.driver_cpu is None
    assert summary.latencies is None
    assert summary.percentile(50) == pytest.approx(0.016450297)  # ghz's own median, one run
    assert summary.percentile(99) is None  # 40 calls: too few for p99
    assert run.entry.default_matrix is True
