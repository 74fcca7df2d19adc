"""The interpreters study's report: its comparisons in rounds (tables with intervals, verdicts), how every
compared interpreter was built and whether its GIL stayed off, and for the cores comparisons the server's
calls/s per busy core and how its processes shared the work; rows for the decision table."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from harness.analysis.decision import NO, YES, Decision, Standing
from harness.analysis.judging import Judged, judged_comparisons
from harness.method.verdicts import Interval
from harness.plan.matrix import PER_WORKER
from harness.plan.servers import server_variant
from harness.render.table import Block, Figure, Table, row
from harness.render.wording import ratio_text
from harness.results.records import StudyRun
from harness.results.run_context import InterpreterRecord
from harness.studies.base import StudyReport
from harness.studies.interpreters import CORES_LEVEL, FREE_THREADED, LEVEL, NAME, QUESTION, REFERENCE, SCENARIOS
from harness.studies.interpreters.cores import cores_table, shared_by_process, shares_text
from harness.studies.reading import driver_not_busy, medians, study_readme
from harness.studies.telling import (
    Telling,
    across,
    answer_opening,
    blocks_decisions,
    blocks_files,
    blocks_section,
    in_blocks,
    told,
    with_blocks,
)

OFFICIAL_BUILDS = (
    "Every interpreter here is configured as pyenv configured the machine's 3.11 to 3.13 (a shared libpython, "
    "no PGO, no LTO), so the ratios set like against like. The official python images add "
    "`--enable-optimizations --with-lto`: their rates are higher than these, and this run does not say by how much."
)


def _minutes(seconds: float | None) -> Figure:
    """How long a build took, in minutes ("—": not built here, or not timed)."""
    return Figure(None, "—") if seconds is None else Figure(seconds / 60, f"{seconds / 60:.1f} min", unit="min")


def interpreters_table(run: StudyRun) -> list[Block]:
    """How each compared interpreter was found or built, and what it could run."""
    found = run.meta.interpreters
    if not found:
        return []
    heads = [
        "version",
        "from",
        "configured",
        "GIL after import",
        "protobuf",
        "compiled here",
        "built in",
        "packages in",
        "could not run",
    ]
    table = Table("interpreters", ["interpreter", *heads])
    for name, about in found.items():
        gil = about.gil_enabled_after_import
        gil_text = ", ".join(f"{module.removeprefix('servers.')} {'on' if on else 'off'}" for module, on in gil.items())
        flags = " ".join(
            flag.strip("'")
            for flag in (about.config_args or "").split()
            if flag.strip("'").startswith(("--enable", "--disable", "--with"))
        )
        unavailable = "; ".join(
            f"{module.removeprefix('servers.')}: {why}" for module, why in about.unavailable.items()
        )
        table.add(
            name,
            [
                about.version or "—",
                about.origin or "—",
                f"`{flags}`" if flags else "—",
                gil_text or "—",
                about.protobuf_implementation or "—",
                ", ".join(about.compiled_here) or "—",
                _minutes(about.build_seconds),
                _minutes(about.venv_seconds),
                unavailable[:400] or "—",
            ],
        )
    return [
        "Interpreters compared (each server in a virtualenv of the same pinned packages; protobuf is the "
        "implementation it ran, upb in C or pure Python where no wheel has upb; compiled here, the packages pip "
        "built from source for want of a wheel; built in, the minutes building CPython took here, and packages in, "
        "making its virtualenv, those builds included; once a machine, cached after):",
        "",
        table,
        "",
        OFFICIAL_BUILDS,
        "",
    ]


def render(run: StudyRun) -> dict[str, bytes]:
    if in_blocks(run):
        return blocks_files(run, TELLING, [*interpreters_table(run), *cores_table(judged_comparisons(run))])
    cells = [row(each.result.record.key, [f"{each.report.ok_rps:,.0f}{each.not_ok}"]) for each in medians(run)]
    blocks = [Table("cells", ["cell", "OK calls/s"], cells), "", *interpreters_table(run)]
    return {"README.md": study_readme(NAME, f"# Interpreters: {run.title}", blocks)}


def section(runs: Sequence[StudyRun]) -> str:
    newest = runs[0]
    return blocks_section(runs, TELLING, [*interpreters_table(newest), *cores_table(judged_comparisons(newest))])


def free_threaded(run: StudyRun) -> str:
    """What each free-threaded build could run, and whether the GIL stayed off once each stack was imported."""
    parts = []
    for name, about in run.meta.interpreters.items():
        # Recorded by the probe; a build that was never probed (not found, not built) is known by its name.
        if not (name.endswith("t") if about.free_threaded is None else about.free_threaded):
            continue
        gil = {module.removeprefix("servers."): on for module, on in about.gil_enabled_after_import.items()}
        off, on = [module for module, held in gil.items() if not held], [module for module, held in gil.items() if held]
        unavailable = [module.removeprefix("servers.") for module in about.unavailable]
        said = []
        if off:
            said.append(
                f"the GIL stayed off once {', '.join(off)} had imported {'its' if len(off) == 1 else 'their'} stack"
            )
        if on:
            said.append(f"it came back on importing {', '.join(on)}")
        defines = [flag for flag in (about.grpcio_cflags or "").split() if flag.startswith("-D")]
        if defines:
            said.append(f"grpcio was compiled here with `{' '.join(defines)}`")
        if about.protobuf_implementation == "python":
            said.append("protobuf ran its pure-Python implementation (no free-threaded wheel has upb)")
        if unavailable:
            said.append(f"{', '.join(unavailable)} could not run (see the interpreters table)")
        parts.append(f"Under {name} ({about.version or '?'}), " + "; ".join(said or ["nothing ran"]) + ".")
    return " ".join(parts)


def answer(runs: Sequence[StudyRun]) -> str:
    """Each interpreter against 3.11 per scenario, told across the stacks at once; the cores comparisons one by
    one; what the free-threaded build could run."""
    newest = runs[0]
    if not in_blocks(newest):
        return "Not measured in rounds yet: `python -m harness run-all --study interpreters`."
    judgeds = judged_comparisons(newest)
    by_scenario: dict[str, list[Judged]] = {}
    for judged in judgeds:
        if judged.record.topic == "interpreter":
            by_scenario.setdefault(judged.record.workload.split("/")[1], []).append(judged)
    parts = [answer_opening(newest, TELLING, judgeds)]
    if by_scenario:
        parts.append(
            f"{TELLING.questions['interpreter']} Each × {REFERENCE} [95% CI], on the stack where it did worst to the "
            "one where it did best, and the verdicts:"
        )
        for scenario, group in by_scenario.items():
            stacks = ", ".join(each.record.workload.split("/")[2] for each in group)
            parts.append(f"{scenario} on {stacks}: {across(group)}.")
        parts += [
            f"The A/A control {ratio_text(control.ratio)} ({control.verdict})."
            for each in judgeds
            if (control := each.control)
        ]
    parts += [told(newest, TELLING, each) for each in judgeds if each.record.topic == "cores"]
    parts.append(free_threaded(newest))
    return " ".join(part for part in parts if part)


# A row that answers in words, not as a pick over a runner-up: the fields of such a pair, cleared.
NO_PAIR: dict[str, Any] = {
    "pick": "—",
    "runner_up": "—",
    "over_point": None,
    "over_note": "",
    "avoid": "—",
    "avoided": "",
    "word": "",
    "standing": Standing.DECIDED,
    "over": None,
    "worst": None,
    "labels": (),
    "certified": None,
    "lowest": None,
    "binding": "",
    "contenders": (),
}


def worded(made: Decision, **said: Any) -> Decision:
    """A comparison's row made into one that answers in words (`said`), its pick-over-runner-up fields cleared."""
    return replace(made, **(NO_PAIR | said))


SPREAD_QUESTION = "Does SO_REUSEPORT spread the calls over a server's processes?"
EVEN = 1.25  # the busiest process's calls over the idlest's, at most, for the load to count as spread


def _serving(label: str) -> str:
    """How a cores label's clients held their connections, in words."""
    return "a connection per worker" if label.endswith(f"+{PER_WORKER}") else "one shared connection"


def spread(judged: Judged, made: Decision) -> Decision | None:
    """How evenly a cores comparison's server of several processes took the calls, on each way its clients held
    connections: each process's share of the calls it counted over the label's windows, spread where the busiest
    took at most EVEN times the idlest's; None where no label counted several processes. Trusted as its comparison."""
    told = []
    for label, cell in judged.cells.items():
        windows = [repeat.process_calls for repeat in cell.record.repeats if repeat.role == "round"]
        shares = shared_by_process(windows)
        if len(shares) < 2:
            continue
        even = shares[-1] > 0 and shares[0] / shares[-1] <= EVEN
        told.append((label, even, f"on {_serving(label)} ({label}, {shares_text(shares)})"))
    if not told:
        return None
    spread_on = [label for label, even, _ in told if even]
    spread_text = ", ".join(text for _, even, text in told if even)
    not_text = ", ".join(text for _, even, text in told if not even)
    but = f", not {not_text}" if not_text else ""
    return worded(
        made,
        question=SPREAD_QUESTION,
        word=YES if spread_on else NO,
        lead=f"{spread_text}{but}" if spread_on else not_text,
        pick=spread_on[0] if spread_on else "—",
        runner_up=next((label for label, even, _ in told if not even), "—"),
        verdict=f"spread on {', '.join(_serving(label) for label in spread_on)}" if spread_on else "not spread",
        closing="" if made.trusted else made.closing,  # what would give its comparison the evidence it lacks
    )


NEWEST_QUESTION = "What do 3.14 and free-threaded 3.14t give the server?"
NEWEST = ("3.14", FREE_THREADED)


def _span(found: Sequence[Interval]) -> str:
    """The least and most of ratios by their estimates: "0.97 to 1.04", or one "0.97 [0.91, 1.03]"."""
    if len(found) == 1:
        return ratio_text(found[0])
    ordered = sorted(each.value for each in found)
    return f"{ordered[0]:.2f} to {ordered[-1]:.2f}"


def _state(run: StudyRun, name: str, stacks: Sequence[str]) -> str:
    """The GIL's state after the stacks' imports and protobuf's backend under an interpreter, in a clause; "" where
    the run did not record them (a build without the GIL says whether it came back; one with it says nothing of
    it)."""
    about = run.meta.interpreters.get(name, InterpreterRecord())
    gil = about.gil_enabled_after_import
    modules = [server_variant(stack).module for stack in stacks]
    said = []
    if about.free_threaded and (known_state := [gil[module] for module in modules if module in gil]):
        off = sum(1 for on in known_state if not on)
        said.append(f"GIL off on {off} of {len(known_state)} stacks" if off else "the GIL comes back on import")
    if backend := about.protobuf_implementation:
        said.append("protobuf in pure Python" if backend == "python" else f"protobuf {backend}")
    return f" ({', '.join(said)})" if said else ""


def newest_row(run: StudyRun, judgeds: Sequence[Judged], rows: Sequence[Decision]) -> Decision | None:
    """The newest interpreters against REFERENCE on hello-work, each as the least and most of its ratio over the
    stacks (pooled over the runs), with the GIL's state and protobuf's backend; None where the run compared neither.
    Trusted where every stack's row is."""
    compared = [each for each in judgeds if each.record.workload.startswith("interpreter/hello-work/")]
    parts, stacks = [], sorted({each.record.workload.split("/")[2] for each in compared})
    for name in NEWEST:
        found = [over.ratio for each in compared if name in each.rates and (over := each.over(name, REFERENCE))]
        if found:
            parts.append(f"{name} {_span(found)} × {REFERENCE}{_state(run, name, stacks)}")
    made = next((each for each in rows if each.workload.startswith("interpreter/hello-work/")), None)
    if not parts or made is None:
        return None
    hello_work = [each for each in rows if each.workload.startswith("interpreter/hello-work/")]
    return worded(
        made,
        question=NEWEST_QUESTION,
        workload="interpreter/hello-work",
        lead="; ".join(parts),
        verdict=f"over {len(stacks)} stacks ({', '.join(stacks)})",
        trusted=all(each.trusted for each in hello_work),
        closing="",
    )


def decisions(runs: Sequence[StudyRun]) -> list[Decision]:
    """The handler that computes decides the rows: which interpreter (per stack), what the newest give, and
    processes or threads; and the cores comparisons say how the kernel spread the calls over a server's
    processes."""
    judgeds = judged_comparisons(runs[0])
    rows = blocks_decisions(runs, TELLING, judgeds)
    by_workload = {each.record.workload: each for each in judgeds}
    spreads = [
        found
        for each in rows
        if each.workload.startswith("cores/") and (found := spread(by_workload[each.workload], each)) is not None
    ]
    newest = newest_row(runs[0], judgeds, rows)
    return [
        *(each for each in rows if each.workload.startswith(("interpreter/hello-work", "cores/"))),
        *([newest] if newest else []),
        *spreads,
    ]


def _describe(topic: str) -> str:
    if topic == "cores":
        return (
            f"hello-work (about 10 ms of pure-Python work a call) by {CORES_LEVEL} ghz workers, the server free to use "
            "every CPU of the machine (the load generator and backends share CPU 0 with it): one process, N "
            "processes on one port driven on one shared connection and on a connection per worker, and, where "
            "grpcio ran without the GIL, one free-threaded process with N times the threads"
        )
    names = ", ".join(each.name for each in SCENARIOS)
    return (
        f"one of {names} at {LEVEL} workers (ghz; REST's GET /v1/hello by loadgen), the server run by each "
        f"interpreter against {REFERENCE}, each in a virtualenv of the same pinned packages, on the server core"
    )


TELLING = Telling(
    NAME,
    {
        "interpreter": "Which interpreter should the server run on?",
        "cores": "Processes or threads for handlers that compute?",
    },
    _describe,
    "interpreter or serving",
    unpinned=frozenset({"cores"}),
)

REPORT = with_blocks(
    StudyReport(
        name=NAME,
        question=QUESTION,
        follows="grpc/grpc#43222 (grpc.aio unary calls: 3.12 about 9% below 3.11 on 16 vCPUs)",
        render=render,
        section=section,
        answer=answer,
        targets=driver_not_busy,
        default=False,
    ),
    TELLING,
)
REPORT = replace(REPORT, render=render, section=section, answer=answer, decisions=decisions)
