"""The harness's rooms import one way (docs/DESIGN.md): what measures and what it stores know nothing of the
studies or the page, and the page knows of studies/ only the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "harness"


def imported(room: str) -> dict[str, set[str]]:
    """Each module a room's files import, with the files that import it (relative to harness/)."""
    found: dict[str, set[str]] = {}
    for path in sorted((HARNESS / room).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                found.setdefault(name, set()).add(path.relative_to(HARNESS).as_posix())
    return found


@pytest.mark.parametrize("room", ["run", "plan", "results", "method", "analysis"])
def test_what_measures_and_stores_imports_no_study_and_no_page(room: str) -> None:
    wrong = {
        module: sorted(files)
        for module, files in imported(room).items()
        if module.startswith(("harness.studies", "harness.render"))
    }
    assert wrong == {}


def test_the_page_imports_of_the_studies_only_their_registry() -> None:
    wrong = {
        module: sorted(files) for module, files in imported("render").items() if module.startswith("harness.studies.")
    }
    assert wrong == {}


def test_the_statistics_import_nothing_that_measures_or_renders() -> None:
    wrong = {
        module: sorted(files)
        for module, files in imported("method").items()
        if module.startswith(("harness.run", "harness.plan", "harness.render", "harness.analysis"))
    }
    assert wrong == {}


def test_no_harness_module_is_over_400_lines() -> None:
    long = {
        path.relative_to(HARNESS).as_posix(): lines
        for path in HARNESS.rglob("*.py")
        if (lines := len(path.read_text().splitlines())) > 400
    }
    assert long == {}
