"""The interpreters study's plan: every interpreter against 3.11 on each stack and scenario, and one process
against N on a host's every core; with --full the same cells, each measured on its own."""

from __future__ import annotations

from dataclasses import replace

from harness.plan.matrix import HELLO_WORK, PER_WORKER, Cell, Scenario
from harness.plan.options import RunOptions
from harness.plan.pythons import DEFAULT_PYTHONS, Prepared
from harness.plan.servers import ServerVariant, server_variant
from harness.run.measure import measure_closed_loop
from harness.run.planning import Axis, Comparison, StudyPlan, cells_of
from harness.studies.interpreters import (
    CORES_LEVEL,
    CORES_STACKS,
    FREE_THREADED,
    LEVEL,
    NAME,
    REFERENCE,
    SCENARIOS,
    STACK_NAMES,
)

GREETER = "bench.v1.Greeter.SayHello"  # the one call a REST server serves of these scenarios


def interpreters(options: RunOptions) -> dict[str, Prepared | None]:
    """Each interpreter compared, as prepared for the run (None before: planning alone, as `studies` lists)."""
    prepared = {each.name: each for each in options.interpreters}
    return {name: prepared.get(name) for name in options.pythons or DEFAULT_PYTHONS}


def under(server: ServerVariant, name: str, prepared: Prepared | None) -> ServerVariant | None:
    """The variant under the interpreter, or None where it cannot run there."""
    if prepared is None:
        return server.under(name, "")
    return server.under(name, prepared.python) if prepared.runs(server.module) else None


def processes(server: ServerVariant, count: int) -> ServerVariant:
    """The variant as `count` processes sharing its port (SO_REUSEPORT), named `<name>-p<count>`."""
    return replace(
        server,
        name=f"{server.name}-p{count}",
        args=(*server.args, "-p", str(count)),
        description=f"{server.description}, {count} processes",
        min_cpus=count,
    )


def threads(server: ServerVariant, count: int) -> ServerVariant:
    """A thread-pool variant with `count` worker threads, named `sync-w<count>`."""
    flags = list(server.args)
    flags[flags.index("-w") + 1] = str(count)
    name = server.name.rsplit("-w", 1)[0] + f"-w{count}"
    return replace(server, name=name, args=tuple(flags), description=f"{server.description} ({count} threads)")


def asked_scenarios(options: RunOptions) -> tuple[Scenario, ...]:
    """The study's scenarios that --scenarios names (all of them where it names none): the cores comparisons run
    hello-work alone."""
    asked = {each.name for each in options.scenarios or SCENARIOS}
    return tuple(each for each in SCENARIOS if each.name in asked)


def interpreter_comparisons(options: RunOptions) -> list[Comparison]:
    """Each stack on each scenario under every interpreter against REFERENCE; REST only where it serves the
    call (SayHello), driven by loadgen."""
    found = []
    chosen = interpreters(options)
    stacks = options.servers or tuple(server_variant(name) for name in STACK_NAMES)
    for each in asked_scenarios(options):
        for server in stacks:
            if server.protocol == "http" and each.call != GREETER:
                continue
            runnable = [
                (name, variant) for name, prepared in chosen.items() if (variant := under(server, name, prepared))
            ]
            labelled = {name: Cell(variant, each, LEVEL) for name, variant in runnable}
            if REFERENCE not in labelled or len(labelled) < 2:
                continue
            reference = (REFERENCE, labelled.pop(REFERENCE))
            found.append(
                Comparison(
                    f"interpreter/{each.name}/{server.name}/c{LEVEL}",
                    reference,
                    tuple(labelled.items()),
                    driver="loadgen" if server.protocol == "http" else None,
                )
            )
    return found


def cores_comparisons(options: RunOptions) -> list[Comparison]:
    """hello-work on every CPU of the machine: one process against N on one shared connection and on one per
    worker, and one process of N x the threads under the free-threaded build where grpcio left the GIL off."""
    count = len(options.available_cpus)
    if HELLO_WORK not in asked_scenarios(options):
        return []
    chosen = interpreters(options)
    found = []
    asked = [server.name for server in options.servers or ()]
    for name in [each for each in CORES_STACKS if each in asked] if asked else CORES_STACKS:
        base, prepared = server_variant(name), chosen.get(REFERENCE)
        one, many = under(base, REFERENCE, prepared), under(processes(base, count), REFERENCE, prepared)
        if one is None or many is None or count < 2:
            continue
        alternatives = [
            (f"p{count}", Cell(many, HELLO_WORK, CORES_LEVEL)),
            (f"p{count}+{PER_WORKER}", Cell(many, HELLO_WORK, CORES_LEVEL, PER_WORKER)),
        ]
        free = chosen.get(FREE_THREADED)
        if "-w" in base.args and free is not None and free.runs(base.module) and not free.gil.get(base.module, True):
            wide = under(threads(base, 10 * count), FREE_THREADED, free)
            if wide is not None:
                alternatives.append((f"threads@{FREE_THREADED}", Cell(wide, HELLO_WORK, CORES_LEVEL)))
        found.append(
            Comparison(
                f"cores/{name}/c{CORES_LEVEL}",
                ("p1", Cell(one, HELLO_WORK, CORES_LEVEL)),
                tuple(alternatives),
                unpinned=True,
            )
        )
    return found


def comparisons(options: RunOptions) -> list[Comparison]:
    """The interpreter comparisons (the first holds the study's A/A control), then the cores comparisons."""
    return [*interpreter_comparisons(options), *cores_comparisons(options)]


PLAN = StudyPlan(
    name=NAME,
    axes=(Axis("server", STACK_NAMES, "--servers"), Axis("python", DEFAULT_PYTHONS, "--pythons")),
    driver="ghz",
    repeats=3,
    cells=cells_of(comparisons),
    measure=measure_closed_loop,
    checkers=("loadgen",),
    comparisons=comparisons,
    full_comparisons=comparisons,  # its comparisons are its whole matrix: --full measures them in blocks
    diagnostics=True,  # each process counts the calls it took: how SO_REUSEPORT spread them in the cores comparison
    own_scenarios=(HELLO_WORK,),  # --scenarios hello-work: its rows alone, in a run aside
    least_blocks=3,  # a row from fewer is not trusted (the race stopped its certified picks at 2 on 2026-11-29)
)
