"""The registry of studies: each is one module and one entry here; run-all, the report and the tests read it."""

from __future__ import annotations

from harness.studies.base import Axis, Study
from harness.studies.capacity import CAPACITY
from harness.studies.connections import CONNECTIONS
from harness.studies.protocols import PROTOCOLS
from harness.studies.stacks import STACKS
from harness.studies.streaming import STREAMING

STUDIES: tuple[Study, ...] = (STACKS, CAPACITY, STREAMING, PROTOCOLS, CONNECTIONS)
DEFAULT_STUDIES: tuple[str, ...] = tuple(each.name for each in STUDIES if each.default)


def study(name: str) -> Study:
    """The registered study called name."""
    for each in STUDIES:
        if each.name == name:
            return each
    raise KeyError(f"unknown study {name!r}; known: {', '.join(each.name for each in STUDIES)}")


__all__ = ["DEFAULT_STUDIES", "STUDIES", "Axis", "Study", "study"]
