"""A table as data: its column heads and rows of cell texts. A study's markdown page draws its tables where they
stand (`markdown`), and `page_files` writes them beside it, each as CSV and all of the page's as one JSON file, from
which report.html draws the same rows."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

MARKUP = re.compile(r"\*\*|`")  # markdown's bold and code marks: a CSV cell keeps the text alone


def _line(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@dataclass
class Table:
    """`columns` head the table, the first heading the rows' labels; each row is its label, then a cell a column.
    `name` is what its CSV and JSON are called."""

    name: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def add(self, label: str, cells: Sequence[str]) -> None:
        self.rows.append(row(label, cells))

    def markdown(self) -> list[str]:
        return [_line(self.columns), "|---|" + "---|" * (len(self.columns) - 1), *(_line(each) for each in self.rows)]

    def csv(self) -> str:
        """The table as CSV, its cells without markdown's marks."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        for each in [self.columns, *self.rows]:
            writer.writerow([MARKUP.sub("", cell) for cell in each])
        return out.getvalue()

    def data(self) -> dict[str, Any]:
        return {"name": self.name, "columns": self.columns, "rows": self.rows}

    @property
    def slug(self) -> str:
        """Its name as a file's: `comparison hello/c50` -> `comparison-hello-c50`."""
        return re.sub(r"[^a-z0-9.]+", "-", self.name.lower()).strip("-") or "table"


def row(label: str, cells: Sequence[str]) -> list[str]:
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
