"""One comparison as the page and the markdown charts draw it: each label's ratio to the reference with its interval
and verdict, each block's ratio, the stacks a team could pick ranked by wire, and each label's own rate and latency."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from harness.analysis.judging import Judged, absolute, mean_cost, peak_memory
from harness.method.verdicts import Interval, noise_floor, verdict
from harness.plan.servers import is_floor
from harness.plan.wires import MTLS, PLAINTEXT, TLS
from harness.render.wording import rate_text, ratio_text
from harness.results.records import StudyRun


def comparison_id(study: str, run_id: str, workload: str) -> str:
    """A comparison's id on the page and in its links: `stacks/20261125T173916Z/hello/c50`."""
    return f"{study}/{run_id}/{workload}"


def _ratio(found: Interval) -> dict[str, float | None]:
    return {"value": found.value, "low": found.low, "high": found.high if math.isfinite(found.high) else None}


def comparison_view(run: StudyRun, judged: Judged, question: str) -> dict[str, Any]:
    """One comparison as the page draws it: each label's ratio to the reference with its 95% interval and
    verdict, and each block's ratio (paired within the block), so that drift and outliers show."""
    record = judged.record
    reference = judged.rates.get(record.reference, {})
    labels = [
        {
            **_ratio(each.ratio),
            "label": each.alternative,
            "verdict": each.verdict,
            "control": each.control,
            "blocks": each.ratio.blocks,
            "text": ratio_text(each.ratio),
            "runs": each.runs,
            "days": each.days,
            "alone": None if each.alone is None else ratio_text(each.alone),
        }
        for each in judged.outcomes
    ]
    whole = {each.alternative: each.ratio.value for each in judged.outcomes}
    # the labels a team could pick (neither the A/A twin nor a stack's floor), by the wire they served over
    wire = run.meta.wire.name
    pickable: dict[str, list[str]] = {}
    for label in [record.reference, *(e.alternative for e in judged.outcomes if not e.control)]:
        if not is_floor(label):
            pickable.setdefault(TLS if encrypted(judged, label, wire) else PLAINTEXT, []).append(label)
    ranked = {group: _ranking(judged, labels, whole) for group, labels in pickable.items()}
    blocks = [
        {
            "label": label,
            "block": block,
            "ratio": rate / reference[block],
            "apart": rate / reference[block] / whole[label],
        }
        for label, rates in judged.rates.items()
        if label in whole
        for block, rate in sorted(rates.items())
        if reference.get(block)
    ]
    control = judged.control
    absolute = {label: absolute_row(judged, label) for label, rates in judged.rates.items() if len(rates) >= 2}
    return {
        "id": comparison_id(run.study, run.run_id, record.workload),
        "study": run.study,
        "run": run.run_id,
        "machine": run.cpu_model,
        "class": run.meta.cpu_class,
        "workload": record.workload,
        "scenario": record.topic,
        "question": question,
        "reference": record.reference,
        "tie": record.method.tie,
        "design": record.method.design,
        "stacks": sorted({cell.record.server for cell in judged.cells.values()}),
        "labels": labels,
        "rounds": blocks,
        "floor": None if control is None else noise_floor(control.ratio),
        "ranked": ranked,  # by wire: the fastest label, and each other's rate over it
        "absolute": absolute,  # each label's OK calls/s over its blocks and its latency, as this run's machine gave
    }


def encrypted(judged: Judged, label: str, run_wire: str) -> bool:
    """Whether a label was served over TLS, mutual or not: by its cell's wire (the wire study's `+tls` labels), or,
    for a run that recorded its wire for the whole run alone, the run's (`--tls`, `--mtls`)."""
    cell = judged.cells.get(label)
    return run_wire in (TLS, MTLS) or (cell is not None and cell.record.wire != PLAINTEXT)


def _ranking(judged: Judged, labels: Sequence[str], whole: Mapping[str, float]) -> dict[str, Any]:
    """The fastest of these labels (by its ratio to the reference), and each other's rate over it, paired by block,
    with its 95% interval and verdict, pooled over the runs it pools with (how many: `runs`)."""
    best = max(labels, key=lambda label: whole.get(label, 1.0))
    to_best = {
        label: {
            **_ratio(found.ratio),
            "verdict": verdict(found.ratio, judged.record.method.tie),
            "text": ratio_text(found.ratio),
            "runs": found.runs,
        }
        for label in labels
        if label != best and (found := judged.over(label, best)) is not None
    }
    return {"best": best, "to_best": to_best}


def absolute_row(judged: Judged, label: str) -> dict[str, Any]:
    """A label's OK calls/s and its p50 and p99 in milliseconds (judging.absolute), as the page shows them."""
    found = absolute(judged, label)
    assert found is not None  # a label the view keeps ran its blocks
    cost = mean_cost(judged, label)
    memory = peak_memory(judged, label)
    return {
        "blocks": found.blocks,
        # the server's CPU milliseconds an OK call (the geometric mean over blocks) and its peak RSS in MiB
        "cpu_ms": round(cost * 1000, 4) if math.isfinite(cost) else None,
        "rss_mib": round(max(memory.values()) / 2**20, 1) if memory else None,
        "rate": found.rate.value,
        "rate_low": found.rate.low,
        "rate_high": found.rate.high if math.isfinite(found.rate.high) else None,
        "rate_text": rate_text(found.rate),
        **{f"p{p}": None if at is None else round(at * 1000, 3) for p, at in ((50, found.p50), (99, found.p99))},
        # the p99 over blocks (each block's calls pooled): the geometric mean the chart draws, with its interval
        **(
            {
                "p99_blocks": round(found.p99_blocks.value * 1000, 3),
                "p99_low": round(found.p99_blocks.low * 1000, 3),
                "p99_high": round(found.p99_blocks.high * 1000, 3),
            }
            if found.p99_blocks and math.isfinite(found.p99_blocks.high)
            else {}
        ),
    }
