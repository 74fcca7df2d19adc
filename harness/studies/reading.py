"""Reading a study's run for its tables: each cell's median run of a role, with its raw report (for what
our driver reports beyond ghz's shape), and the CPU the server and the driver used in it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.drivers import LoadReport
from harness.matrix import SHARED
from harness.results import CellResult, Repeat, StudyRun, read_json, study_dir
from harness.studies.base import run_targets
from harness.summaries import driver_cpus, header, row, spread

CROSS_CHECK_TOLERANCE = 0.10  # our driver's OK rate within this share of ghz's on the same cell


@dataclass(frozen=True)
class Measured:
    """A cell's median run of a role (by OK calls/s), with its raw report."""

    result: CellResult
    repeat: Repeat
    report: LoadReport
    raw: dict[str, Any]

    @property
    def server_cpu(self) -> float:
        """The server's CPU as a share of one core over the run."""
        return self.repeat.resources.average_cpu_percent / 100

    @property
    def server_ms_per_call(self) -> float | None:
        """The server's CPU milliseconds per OK call."""
        ok = self.report.ok
        return self.repeat.resources.cpu_seconds * 1000 / ok if ok else None

    def driver_cpu(self, meta: dict[str, Any]) -> float | None:
        """The driver's CPU as a share of the CPUs it had."""
        seconds, wall = self.repeat.driver_cpu_seconds, self.repeat.resources.wall_seconds
        return None if seconds is None or wall <= 0 else seconds / (wall * driver_cpus(meta))


def medians(run: StudyRun, role: str = "measured") -> list[Measured]:
    """Each cell's median run of that role (by OK calls/s), for cells that finished OK, in the run's order."""
    found = []
    where = study_dir(run.run_dir, run.meta, run.study)
    for result in run.cells:
        record = result.record
        runs = [
            (repeat, report)
            for repeat, report in zip(record.repeats, result.reports, strict=True)
            if repeat.role == role
        ]
        if record.status != "ok" or not runs:
            continue
        repeat, report = sorted(runs, key=lambda each: each[1].ok_rps)[len(runs) // 2]
        found.append(Measured(result, repeat, report, read_json(where / repeat.report_file)))
    return found


def measured(run: StudyRun, role: str = "measured") -> dict[tuple[str, str, int], Measured]:
    """(scenario, server, concurrency) -> the cell's median run of that role, for cells that finished OK whose
    driver shared one connection."""
    return {
        (record.scenario, record.server, record.concurrency): each
        for each in medians(run, role)
        if (record := each.result.record).connections == SHARED
    }


def busiest_driver(run: StudyRun, runs: Sequence[Measured | None]) -> str:
    """The highest driver CPU among the runs, as a share of the CPUs the driver had: it was not the limit."""
    shares = [share for each in runs if each is not None and (share := each.driver_cpu(run.meta)) is not None]
    return f"{max(shares):.0%}" if shares else "—"


def failures(run: StudyRun) -> list[str]:
    """Failed cells, each with its reason."""
    return [f"{c.record.key}: {c.record.reason}" for c in run.cells if c.record.status == "failed"]


def failed_cells(run: StudyRun) -> list[str]:
    """The lines that list a run's failed cells under its tables, or none."""
    failed = failures(run)
    return ["Failed cells:", "", *[f"- {each}" for each in failed], ""] if failed else []


def study_readme(study: str, heading: str, lines: Sequence[str]) -> bytes:
    """results/<study>/README.md: the heading and the section's lines, its links made relative to it."""
    text = "\n".join([heading, "", *lines]).replace(f"]({study}/", "](")
    return (text + "\n").encode()


def or_dash(value: float | None, form: str) -> str:
    return "—" if value is None else format(value, form)


def driver_cross_check_table(
    run: StudyRun, pairs: dict[str, tuple[Measured, Measured]], unit: str = "OK calls/s", checker: str = "ghz"
) -> list[str]:
    """Our driver's median run against the checker's (ghz, h2load) on the same server start, per stack: rates,
    their difference, what each run cost the server per call, and each driver's own CPU."""
    labels = [f"loadgen {unit}", f"{checker} {unit}", "difference", f"server CPU per call: loadgen / {checker}"]
    lines = header([*labels, "loadgen CPU", f"{checker} CPU"], "stack")
    for server, (mine, theirs) in pairs.items():
        ours_rps, ghz_rps = mine.report.ok_rps, theirs.report.ok_rps
        costs = mine.server_ms_per_call, theirs.server_ms_per_call
        lines.append(
            row(
                server,
                [
                    f"{ours_rps:,.0f}",
                    f"{ghz_rps:,.0f}",
                    f"{ours_rps / ghz_rps - 1:+.1%}",
                    "—" if None in costs else f"{costs[0]:.3f} / {costs[1]:.3f} ms",
                    or_dash(mine.driver_cpu(run.meta), ".0%"),
                    or_dash(theirs.driver_cpu(run.meta), ".0%"),
                ],
            )
        )
    return lines


def role_spread(each: Measured) -> float:
    """How far the farthest run of the median run's role lies from their median OK rate."""
    role = each.repeat.role
    rates = [
        report.ok_rps
        for repeat, report in zip(each.result.record.repeats, each.result.reports, strict=True)
        if repeat.role == role
    ]
    return spread(rates)


def cross_check_sentence(
    run: StudyRun, pairs: dict[str, tuple[Measured, Measured]], what: str, checker: str = "ghz"
) -> str:
    """The cross-check in a sentence; where it missed the tolerance, each driver's own spread and the
    server's CPU per call under each, which say whether the gap is noise, the driver, or the server."""
    if not pairs:
        return ""
    runs = max(len([r for r in mine.result.record.repeats if r.role == mine.repeat.role]) for mine, _ in pairs.values())
    sentence = (
        f"Our driver against {checker} on {what} (medians of {runs} runs each, the drivers taking turns): "
        + ", ".join(
            f"{server} {mine.report.ok_rps / theirs.report.ok_rps - 1:+.1%}" for server, (mine, theirs) in pairs.items()
        )
        + "."
    )
    for server, (mine, theirs) in pairs.items():
        if abs(mine.report.ok_rps / theirs.report.ok_rps - 1) <= CROSS_CHECK_TOLERANCE:
            continue
        costs = mine.server_ms_per_call, theirs.server_ms_per_call
        sentence += (
            f" Beyond {CROSS_CHECK_TOLERANCE:.0%} on {server}: each driver's own runs lay up to "
            f"{role_spread(mine):.0%} (loadgen) and {role_spread(theirs):.0%} ({checker}) from their median"
        )
        if None not in costs:
            sentence += (
                f", and the server spent {costs[0]:.3f} ms of CPU per call under loadgen against {costs[1]:.3f} ms "
                f"under {checker} at {mine.server_cpu:.0%} and {theirs.server_cpu:.0%} of its core"
            )
        sentence += "."
    return sentence


def cross_check_pairs(
    run: StudyRun, scenario: str, level: int, servers: Sequence[str], checker: str = "ghz"
) -> dict[str, tuple[Measured, Measured]]:
    """server -> (loadgen's, the checker's) median run of the cross-checked cell, same server start."""
    ours, theirs = measured(run), measured(run, checker)
    return {
        server: (ours[key], theirs[key])
        for server in servers
        if (key := (scenario, server, level)) in ours and key in theirs
    }


def cross_checked_targets(
    run: StudyRun, checks: Mapping[str, dict[str, tuple[Measured, Measured]]], wall_seconds: float, full_matrix: bool
) -> dict[str, Any]:
    """run.json's targets of a study whose driver is cross-checked: for each checker (ghz, h2load), each stack's
    difference from it, all within CROSS_CHECK_TOLERANCE; no failed cell; the wall time."""
    found: dict[str, Any] = {}
    for name, checked in checks.items():
        differences = {
            server: mine.report.ok_rps / theirs.report.ok_rps - 1 for server, (mine, theirs) in checked.items()
        }
        within = bool(differences) and all(abs(each) <= CROSS_CHECK_TOLERANCE for each in differences.values())
        found[f"driver_within_10_percent_of_{name}"] = {
            "by_server": {server: round(difference, 3) for server, difference in differences.items()},
            "met": within,
        }
    return {**found, **run_targets(run, wall_seconds, full_matrix)}


def newest_run_section(runs: Sequence[StudyRun], tables: Callable[[StudyRun], list[str]], driver: str) -> str:
    """A study's part of results/README.md: its newest run, what drove it, where its raw reports are, and its
    tables."""
    newest = runs[0]
    return "\n".join(
        [
            f"Newest run: {newest.title}; {newest.info.get('wall_seconds', 0) / 60:.1f} min. Driven by {driver}; "
            f"raw reports: [`runs/{newest.run_id}`](runs/{newest.run_id}).",
            "",
            *tables(newest),
        ]
    )
