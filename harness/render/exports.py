"""report.html's tables as files a team can keep: the decision table and every comparison's ratios as CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from harness.render.decisions import DECISION_COLUMNS, Row


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def decision_csv(rows: Sequence[Row]) -> str:
    """The decision table as CSV: its columns, the evidence as run ids."""
    head = ("question", *DECISION_COLUMNS[:-1], "trusted", "why not trusted", "runs")
    return _csv(
        [
            head,
            *(
                (
                    r.question,
                    r.lead,
                    r.sure,
                    r.avoid,
                    r.floor,
                    int(r.trusted),
                    r.why,
                    " ".join(run for run, _ in r.evidence),
                )
                for r in rows
            ),
        ]
    )


COMPARISON_COLUMNS = ("study", "run", "machine", "workload", "reference")
LABEL_COLUMNS = ("label", "value", "low", "high", "verdict", "blocks", "control")


def ratios_csv(views: Sequence[dict[str, Any]]) -> str:
    """Every comparison's ratios as CSV: one line a label, its ratio to the reference with the 95% interval and
    the blocks behind it."""
    return _csv(
        [
            (*COMPARISON_COLUMNS, "label", "ratio", "low", "high", "verdict", "blocks", "aa_control"),
            *(
                (*(v[key] for key in COMPARISON_COLUMNS), *(each[key] for key in LABEL_COLUMNS))
                for v in views
                for each in v["labels"]
            ),
        ]
    )
