"""The registry of studies. A study is a package of two halves: `plan.py` (its axes, cells and measurement)
and `report.py` (its tables, charts, answer and targets), with what both need in its `__init__.py`.

Importing this registry imports only the report halves, so `python -m harness report` renders anywhere the
Python dependencies are; `plan(name)` imports a study's plan half when a run needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from harness.studies.base import StudyReport
from harness.studies.capacity.report import REPORT as CAPACITY
from harness.studies.connections.report import REPORT as CONNECTIONS
from harness.studies.interpreters.report import REPORT as INTERPRETERS
from harness.studies.protocols.report import REPORT as PROTOCOLS
from harness.studies.readers.report import REPORT as READERS
from harness.studies.stacks.report import REPORT as STACKS
from harness.studies.streaming.report import REPORT as STREAMING
from harness.studies.versions.report import REPORT as VERSIONS
from harness.studies.wire.report import REPORT as WIRE

if TYPE_CHECKING:  # the plan halves' type, without importing the measuring modules
    from harness.run.planning import StudyPlan

STUDIES: tuple[StudyReport, ...] = (
    STACKS,
    CAPACITY,
    STREAMING,
    PROTOCOLS,
    CONNECTIONS,
    WIRE,
    INTERPRETERS,
    VERSIONS,
    READERS,
)
DEFAULT_STUDIES: tuple[str, ...] = tuple(each.name for each in STUDIES if each.default)


def study(name: str) -> StudyReport:
    """The registered study called name (its report half)."""
    for each in STUDIES:
        if each.name == name:
            return each
    raise KeyError(f"unknown study {name!r}; known: {', '.join(each.name for each in STUDIES)}")


def plan(name: str) -> StudyPlan:
    """The plan half of the registered study called name, imported now (it imports the measuring modules)."""
    module = importlib.import_module(f"{__name__}.{study(name).name}.plan")
    found: StudyPlan = module.PLAN
    return found


__all__ = ["DEFAULT_STUDIES", "STUDIES", "StudyReport", "plan", "study"]
