"""A run's analysis written down beside its report: every comparison a report read of the run, with each label's
ratio to the reference, its intervals (plain, moderated and pooled over runs) and verdicts, as numbers. The pages
are rendered from the same analysis, so a figure on them can be checked against this file (`harness validate
--across-runs` reads the pooled ratios back)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.analysis.judging import Judged, analyses
from harness.results.files import write_json_atomic

ANALYSIS_SCHEMA = 1
FOLDER = "analysis"  # under the results directory: analysis/<run id>.json


def comparison_json(judged: Judged) -> dict[str, Any]:
    """One comparison as analysed: its workload, reference and blocks, and every outcome (each with the runs it
    pools)."""
    return {
        "workload": judged.record.workload,
        "reference": judged.record.reference,
        "blocks": len(judged.record.orders),
        "outcomes": [outcome.to_json() for outcome in judged.outcomes],
    }


def analysis_document(run_id: str, studies: Mapping[str, Sequence[Judged]]) -> dict[str, Any]:
    """A run's analysis as one document, with its schema: each study's comparisons, by workload."""
    return {
        "schema": ANALYSIS_SCHEMA,
        "run_id": run_id,
        "studies": {
            study: [comparison_json(judged) for judged in sorted(judgeds, key=lambda each: each.record.workload)]
            for study, judgeds in sorted(studies.items())
        },
    }


def write_analyses(out_dir: Path) -> list[Path]:
    """Each run this report analysed, its analysis written down under analysis/, the folder's files from earlier
    reports removed first; the files written."""
    folder = out_dir / FOLDER
    if folder.is_dir():
        shutil.rmtree(folder)
    written = []
    for run_id, studies in sorted(analyses().items()):
        path = folder / f"{run_id}.json"
        write_json_atomic(path, analysis_document(run_id, studies))
        written.append(path)
    return written
