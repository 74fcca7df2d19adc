"""Tables as data: drawn as markdown where they stand, written beside their page as CSV and JSON, and read back for
report.html, each once."""

from __future__ import annotations

import csv
import io
import json

from harness.method.verdicts import Interval
from harness.render.table import Figure, Table, interval_figure, markdown, page_files, written_tables


def test_a_table_draws_as_a_markdown_table_and_saves_as_csv_without_its_marks() -> None:
    table = Table("comparison hello/c50", ["stack", "OK calls/s", "verdict"])
    table.add("**sync-w10**", ["6,088", "—"])
    table.add("aio-uvloop", ["3,078 `x`", "**slower**"])
    assert markdown(["Before.", "", table, ""]) == (
        "Before.\n\n| stack | OK calls/s | verdict |\n|---|---|---|\n| **sync-w10** | 6,088 | — |\n"
        "| aio-uvloop | 3,078 `x` | **slower** |\n"
    )
    assert list(csv.reader(io.StringIO(table.csv()))) == [
        ["stack", "OK calls/s", "verdict"],
        ["sync-w10", "6,088", "—"],
        ["aio-uvloop", "3,078 x", "slower"],
    ]
    assert table.slug == "comparison-hello-c50"


def test_a_column_of_figures_draws_its_texts_and_saves_its_numbers() -> None:
    """A page shows a figure's text; its CSV and JSON hold the value, the interval's bounds and the unit, each a
    number a spreadsheet reads, and a text in such a column ("—") as no number."""
    table = Table("leaderboard hello/c50", ["stack", "OK calls/s [95% CI]", "p99 ms", "verdict"])
    found = Interval(5619.0, 5102.5, float("inf"), 2)
    table.add(
        "sync-w10", [interval_figure(found, "5,619 [5,103, ∞]", "OK calls/s"), Figure(16.25, "16.2", unit="ms"), "—"]
    )
    table.add("sync-w1", ["—", Figure(None, "—", unit="ms"), "**slower**"])
    assert markdown([table]).splitlines()[2:] == [
        "| sync-w10 | 5,619 [5,103, ∞] | 16.2 | — |",
        "| sync-w1 | — | — | **slower** |",
    ]
    rows = list(csv.reader(io.StringIO(table.csv())))
    assert rows[0] == [
        "stack",
        *("OK calls/s [95% CI]", "OK calls/s [95% CI]: low", "OK calls/s [95% CI]: high", "OK calls/s [95% CI]: unit"),
        *("p99 ms", "p99 ms: low", "p99 ms: high", "p99 ms: unit"),
        "verdict",
    ]
    assert rows[1] == ["sync-w10", "5619", "5102.5", "", "OK calls/s", "16.25", "", "", "ms", "—"]
    assert rows[2] == ["sync-w1", "", "", "", "", "", "", "", "ms", "slower"]
    assert float(rows[1][1]) == 5619.0
    data = table.data()
    assert data["rows"][0][1] == "5,619 [5,103, ∞]" and data["values"][1][1:3] == [5619, 5102.5]


def test_a_page_writes_its_tables_beside_it_and_the_page_reads_each_once() -> None:
    first, twin = Table("cells", ["cell", "rate"], [["a", "1"]]), Table("cells", ["cell", "rate"], [["b", "2"]])
    files = page_files("brief/level-2.md", ["# Level 2", first, twin])
    assert set(files) == {
        "brief/level-2.md",
        "brief/tables/level-2.json",
        "brief/tables/level-2/cells.csv",
        "brief/tables/level-2/cells-2.csv",  # a second table of one name is told apart
    }
    assert files["brief/level-2.md"].decode().startswith("# Level 2\n| cell | rate |")
    assert [each["csv"] for each in json.loads(files["brief/tables/level-2.json"])] == [
        "level-2/cells.csv",
        "level-2/cells-2.csv",
    ]
    assert page_files("plain.md", ["no table"]) == {"plain.md": b"no table\n"}

    files |= page_files("comparisons.md", [first])  # the first table again, on a shallower page
    files |= page_files("brief/level-10.md", [Table("cells", ["cell", "rate"], [["c", "3"]])])
    found = written_tables(files)
    assert [(each["page"], each["csv"], each["rows"]) for each in found] == [
        ("comparisons.md", "tables/comparisons/cells.csv", [["a", "1"]]),  # once, where it stands first
        ("brief/level-2.md", "brief/tables/level-2/cells-2.csv", [["b", "2"]]),
        ("brief/level-10.md", "brief/tables/level-10/cells.csv", [["c", "3"]]),  # level 2 before level 10
    ]
