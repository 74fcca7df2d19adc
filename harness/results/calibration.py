"""results/validation.json: what `harness validate` measured of the method, by machine class and blocks drawn,
written whole and read back as a harness.method.validation.Calibration. The trust rule reads it; a results tree
without one (a test's, a new clone's scratch directory) reads the checkout's."""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.method.validation import Calibration, Held
from harness.results.files import read_json, write_json_atomic

NAME = "validation.json"
SCHEMA = 1
CHECKOUT = Path(__file__).resolve().parents[2] / "results" / NAME


def calibration_json(found: Calibration, runs: dict[str, list[str]], draws: int, seed: int) -> dict[str, Any]:
    """The file's content: the schema, how it was drawn, the runs each class drew from, and each class's figures
    (a share not measured is null)."""

    def share(value: float) -> float | None:
        return round(value, 4) if math.isfinite(value) else None

    return {
        "schema": SCHEMA,
        "draws": draws,
        "seed": seed,
        "runs": runs,
        "classes": {
            name: [
                {
                    "blocks": each.blocks,
                    "compatible": share(each.compatible),
                    "twins": share(each.twins),
                    "good": share(each.good),
                    "intervals": each.intervals,
                    "twin_intervals": each.twin_intervals,
                    "certified": each.certified,
                    "runs": each.runs,
                }
                for each in held
            ]
            for name, held in found.by_class.items()
        },
    }


def write_calibration(path: Path, found: Calibration, runs: dict[str, list[str]], draws: int, seed: int) -> None:
    write_json_atomic(path, calibration_json(found, runs, draws, seed))


def parse_calibration(data: dict[str, Any]) -> Calibration:
    """A Calibration from the file's content; a schema this code does not know raises."""
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{NAME}: schema {data.get('schema')!r}, this code reads {SCHEMA}")

    def share(value: float | None) -> float:
        return math.nan if value is None else float(value)

    return Calibration(
        {
            name: tuple(
                Held(
                    int(each["blocks"]),
                    share(each["compatible"]),
                    share(each["twins"]),
                    share(each["good"]),
                    int(each["intervals"]),
                    int(each["twin_intervals"]),
                    int(each["certified"]),
                    int(each["runs"]),
                )
                for each in held
            )
            for name, held in data["classes"].items()
        }
    )


@lru_cache(maxsize=8)
def load_calibration(results: Path) -> Calibration:
    """The calibration of a results tree (results/validation.json), else the checkout's; none measured where neither
    has one."""
    for path in (results / NAME, CHECKOUT):
        if path.is_file():
            return parse_calibration(read_json(path))
    return Calibration({})
