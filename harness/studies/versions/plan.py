"""The versions study's plan: each chosen stack under the pinned versions against the project's own, per scenario
and level, in blocks of warm servers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.plan.interpreter import NotFound
from harness.plan.matrix import Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.pythons import Prepared
from harness.plan.servers import ServerVariant, server_variant
from harness.plan.virtualenvs import pinned_versions, pins_of
from harness.run.measure import measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan, cells_of
from harness.studies.interpreters.plan import GREETER
from harness.studies.versions import LEVEL, NAME, SCENARIO_NAMES, STACK_NAMES


@dataclass(frozen=True)
class Side:
    """One side of the comparison: its label ("grpcio-1.75.0") and the pins its virtualenv takes (none: the
    project's own versions)."""

    label: str
    pins: Mapping[str, str]


def label_of(versions: Mapping[str, str]) -> str:
    """A side's label from its versions: grpcio-1.75.0, several joined by +."""
    return "+".join(f"{name}-{version}" for name, version in sorted(versions.items()))


def sides(packages: Sequence[str]) -> tuple[Side, Side]:
    """The pinned side (the reference) and the project's own, labelled by the versions of the pinned packages."""
    pins = pins_of(packages)
    own = pinned_versions()
    return Side(label_of(pins), pins), Side(label_of({name: own.get(name, "?") for name in pins}), {})


def under(server: ServerVariant, side: Side, prepared: Prepared | None) -> ServerVariant:
    """The variant in a side's virtualenv (planning alone, before it is prepared: by its label only). A side that
    cannot run the stack stops the run with the reason: without both sides there is nothing to compare."""
    if prepared is None:
        return server.under(side.label, "")
    if not prepared.runs(server.module):
        why = prepared.unavailable.get("*") or prepared.unavailable.get(server.module, "")
        raise NotFound(f"the {side.label} virtualenv cannot run {server.name} ({server.module}): {why}")
    return server.under(side.label, prepared.python)


def comparisons(options: RunOptions) -> list[Comparison]:
    """Per scenario, stack and level, the stack under the project's versions against the pinned ones; REST only
    where it serves the call (SayHello), driven by loadgen."""
    if not options.packages:
        return []
    prepared = {each.name: each for each in options.interpreters}
    pinned, own = sides(options.packages)
    found = []
    for each in options.scenarios or tuple(scenario(name) for name in SCENARIO_NAMES):
        for server in options.servers or tuple(server_variant(name) for name in STACK_NAMES):
            if not server.runs(each.name) or (server.protocol == "http" and each.call != GREETER):
                continue
            before, after = (under(server, side, prepared.get(side.label)) for side in (pinned, own))
            for level in options.levels or (LEVEL,):
                found.append(
                    Comparison(
                        f"upgrade/{each.name}/{server.name}/c{level}",
                        (pinned.label, Cell(before, each, level)),
                        ((own.label, Cell(after, each, level)),),
                        driver="loadgen" if server.protocol == "http" else None,
                        deciding=False,  # an estimate of the change, known once its interval is narrow enough
                    )
                )
    return found


PLAN = StudyPlan(
    name=NAME,
    axes=(Axis("server", STACK_NAMES, "--servers"), Axis("scenario", SCENARIO_NAMES, "--scenarios")),
    driver="ghz",
    repeats=3,
    cells=cells_of(comparisons),
    measure=measure_closed_loop,
    checkers=("loadgen",),
    comparisons=comparisons,
    full_comparisons=comparisons,  # its comparisons are its whole matrix: --full measures them in blocks
)
