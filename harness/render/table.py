"""A table as data: its column heads and rows of cells, each a text or a Figure (a number with its interval, its
unit and the text a page shows). A study's markdown page draws its tables where they stand (`markdown`), and
`page_files` writes them beside it, each as CSV and all of the page's as one JSON file, from which report.html draws
the same rows. The CSV holds numbers: a column of figures becomes its value, low, high and unit columns."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from harness.method.verdicts import Interval

MARKUP = re.compile(r"\*\*|`")  # markdown's bold and code marks: a CSV cell keeps the text alone


@dataclass(frozen=True)
class Figure:
    """A number a table shows: its value (None: none, as "—"), the text a page draws for it, and where it has them
    its interval's bounds (or a range's) and its unit."""

    value: float | None
    text: str
    low: float | None = None
    high: float | None = None  # None beside a low: unbounded
    unit: str = ""

    def __str__(self) -> str:
        return self.text


Cell = str | Figure
FIGURE_PARTS = ("low", "high", "unit")  # the columns a column of figures adds in its CSV, after its value's


def interval_figure(found: Interval, text: str, unit: str) -> Figure:
    """An interval as a table's figure."""
    return Figure(found.value, text, found.low, found.high if math.isfinite(found.high) else None, unit)


def _line(cells: Sequence[Cell]) -> str:
    return "| " + " | ".join(map(str, cells)) + " |"


def _number(value: float | None) -> float | int | str:
    if value is None or not math.isfinite(value):
        return ""
    return int(value) if float(value).is_integer() else round(value, 6)


@dataclass
class Table:
    """`columns` head the table, the first heading the rows' labels; each row is its label, then a cell a column.
    `name` is what its CSV and JSON are called."""

    name: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)

    def add(self, label: str, cells: Sequence[Cell]) -> None:
        self.rows.append(row(label, cells))

    def markdown(self) -> list[str]:
        return [_line(self.columns), "|---|" + "---|" * (len(self.columns) - 1), *(_line(each) for each in self.rows)]

    def figured(self) -> list[bool]:
        """Which columns hold figures (any of their cells a Figure)."""
        return [any(isinstance(each[index], Figure) for each in self.rows) for index in range(len(self.columns))]

    def values(self) -> list[list[float | int | str]]:
        """The table as numbers: its head, then each row; a column of figures as its value, low, high and unit (a
        text in it, "—" say, as no value), every other column as its text without markdown's marks."""
        figured = self.figured()
        head: list[float | int | str] = []
        for name, numbers in zip(self.columns, figured, strict=True):
            head += [name, *(f"{name}: {part}" for part in FIGURE_PARTS)] if numbers else [name]
        found = [head]
        for each in self.rows:
            cells: list[float | int | str] = []
            for cell, numbers in zip(each, figured, strict=True):
                if not numbers:
                    cells.append(MARKUP.sub("", str(cell)))
                elif isinstance(cell, Figure):
                    cells += [_number(cell.value), _number(cell.low), _number(cell.high), cell.unit]
                else:
                    cells += ["", "", "", ""]
            found.append(cells)
        return found

    def csv(self) -> str:
        """The table as CSV, in numbers where it holds figures (`values`)."""
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(self.values())
        return out.getvalue()

    def data(self) -> dict[str, Any]:
        """The table as its JSON holds it: the texts a page draws, and its numbers as its CSV has them."""
        texts = [[str(cell) for cell in each] for each in self.rows]
        return {"name": self.name, "columns": self.columns, "rows": texts, "values": self.values()}

    @property
    def slug(self) -> str:
        """Its name as a file's: `comparison hello/c50` -> `comparison-hello-c50`."""
        return re.sub(r"[^a-z0-9.]+", "-", self.name.lower()).strip("-") or "table"


def row(label: str, cells: Sequence[Cell]) -> list[Cell]:
    """A table's row: its label, then its cells."""
    return [label, *cells]


Block = str | Table  # a markdown page's parts: its lines of text, and its tables as data


def markdown_lines(blocks: Sequence[Block]) -> list[str]:
    """A page's parts as markdown lines, each table drawn where it stands."""
    return [line for block in blocks for line in (block.markdown() if isinstance(block, Table) else [block])]


def markdown(blocks: Sequence[Block]) -> str:
    return "\n".join(markdown_lines(blocks))


TABLES = "tables"  # beside a markdown page: its tables' folder


def page_files(name: str, blocks: Sequence[Block]) -> dict[str, bytes]:
    """A markdown page, `name`, and its tables beside it: each as CSV, and all of them as one JSON file, each
    there with its CSV's path relative to it (for results/stacks/comparisons.md: tables/comparisons/<table>.csv and
    tables/comparisons.json)."""
    files = {name: (markdown(blocks) + "\n").encode()}
    tables = [block for block in blocks if isinstance(block, Table)]
    if not tables:
        return files
    page = PurePosixPath(name)
    folder = page.parent / TABLES
    seen: Counter[str] = Counter()
    found = []
    for table in tables:
        seen[table.slug] += 1  # a second table of one name on a page is <name>-2
        csv_name = f"{page.stem}/{table.slug}" + (f"-{seen[table.slug]}" if seen[table.slug] > 1 else "") + ".csv"
        files[str(folder / csv_name)] = table.csv().encode()
        found.append({**table.data(), "csv": csv_name})
    files[str(folder / f"{page.stem}.json")] = (json.dumps(found, indent=1, ensure_ascii=False) + "\n").encode()
    return files


def written_tables(files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """The tables `page_files` wrote among a study's `files`, each once (a table two pages show, at its first):
    each with the page it stands on and its CSV, both relative to the study's folder; a folder's own pages
    first."""
    found: dict[str, dict[str, Any]] = {}
    written = [PurePosixPath(name) for name in files if name.endswith(".json")]
    for path in sorted((each for each in written if each.parent.name == TABLES), key=_reading_order):
        for table in json.loads(files[str(path)]):
            key = json.dumps([table["name"], table["columns"], table["rows"]])
            page, csv_path = path.parent.parent / f"{path.stem}.md", path.parent / table["csv"]
            found.setdefault(key, {**table, "page": str(page), "csv": str(csv_path)})
    return list(found.values())


def _reading_order(path: PurePosixPath) -> tuple[int, list[int | str]]:
    """Shallower pages first, then by name with its numbers as numbers (level-2 before level-10)."""
    return len(path.parts), [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(path))]
