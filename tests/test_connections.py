"""The connections study read from a small run on disk: each way of connecting in its own column, the S3
client per process against per request, and an answer whose figures come from the cells."""

from __future__ import annotations

from pathlib import Path

from harness.render.table import markdown, markdown_lines
from harness.results.records import load_study
from harness.studies.connections import report as connections
from tests.runs import CONNECTION_WAYS, make_connections_run


def test_each_way_of_connecting_has_its_column_and_the_answer_divides_by_one_shared(tmp_path: Path) -> None:
    run = load_study(make_connections_run(tmp_path), "connections")
    cells = connections.by_cell(run)
    assert {key[2] for key in cells if key[0] == "hello"} == set(CONNECTION_WAYS)
    table = markdown(connections.client_table(run, "hello"))
    assert "| sync-w10 | 3,000, " in table and "1,500, " in table  # the median run of each way
    answer = connections.answer([run])
    assert "new per call 0.50x" in answer and "one per client 0.90x" in answer and "pool of 10 1.10x" in answer
    assert "the Go study: one per client" not in answer  # the Go study measured no connection per client
    assert "sync-w10 20 calls/s" in answer and "sync-w10's 10 worker threads 20" in answer
    assert "sync-w10 on s3-unary 0.25x the calls/s" in answer


def test_the_s3_table_sets_per_request_beside_per_process(tmp_path: Path) -> None:
    run = load_study(make_connections_run(tmp_path), "connections")
    (line,) = [each for each in markdown_lines(connections.s3_table(run)) if each.startswith("| sync-w10 ")]
    assert "| 400.0 | 100.0 **30 of 330 calls not OK (9%): Unavailable** | 0.25x |" in line
    files = connections.render(run)
    assert files["charts/connections.png"].startswith(b"\x89PNG")
    assert b"connections/" not in files["README.md"]  # its links are relative to results/connections/
