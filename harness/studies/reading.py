"""Reading a study's run for its tables: each cell's median run of a role, with its raw report (for what
our driver reports beyond ghz's shape), the CPU the server and the driver used in it, and what failed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.plan.matrix import SHARED
from harness.render.summaries import driver_share, not_ok_mark, or_dash, spread
from harness.render.table import Block, Figure, Table, markdown
from harness.results.files import read_json
from harness.results.load import LoadReport
from harness.results.records import (
    CellResult,
    Repeat,
    StudyRun,
)
from harness.results.run_meta import RunMeta, Target

WARMUP = "warmup"  # a cell's kept warm-up report, where a study keeps it: <cell>-warmup.json


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

    def driver_cpu(self, meta: RunMeta) -> float | None:
        """The driver's CPU as a share of the CPUs it had."""
        return driver_share(self.repeat, meta)

    @property
    def segments_per_call(self) -> float | None:
        """The TCP segments the machine sent per OK call (both ways over loopback); None where not read."""
        ok, segments = self.report.ok, self.repeat.tcp_segments
        return segments / ok if ok and segments is not None else None

    @property
    def not_ok(self) -> str:
        """Beside the cell's figure: the share and statuses of its runs' calls (of this role) that were not OK."""
        role = self.repeat.role
        runs = zip(self.result.record.repeats, self.result.reports, strict=True)
        return not_ok_mark([report for repeat, report in runs if repeat.role == role])


def medians(run: StudyRun, role: str = "measured") -> list[Measured]:
    """Each cell's median run of that role (by OK calls/s), for cells that finished OK, in the run's order."""
    found = []
    where = run.folder
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


def busiest_window(run: StudyRun) -> float:
    """The highest driver CPU over every run of every cell (of any role), as a share of the CPUs it had."""
    return max(
        (
            share
            for cell in run.cells
            for repeat in cell.record.repeats
            if (share := driver_share(repeat, run.meta)) is not None
        ),
        default=0.0,
    )


def driver_not_busy(run: StudyRun, wall_seconds: float = 0.0, full_matrix: bool = False) -> dict[str, Target]:
    """A study's target that its driver was never the limit: below the busy threshold in every window
    (reported, not gating)."""
    highest = busiest_window(run)
    return {"driver_not_busy": Target(highest < run.thresholds.driver_busy, {"highest": round(highest, 3)})}


def busiest_driver(run: StudyRun, runs: Sequence[Measured | None]) -> str:
    """The highest driver CPU among the runs, as a share of the CPUs the driver had: it was not the limit."""
    shares = [share for each in runs if each is not None and (share := each.driver_cpu(run.meta)) is not None]
    return f"{max(shares):.0%}" if shares else "—"


def failures(run: StudyRun) -> list[str]:
    """Failed cells, each with its reason."""
    return [f"{c.record.key}: {c.record.reason}" for c in run.cells if c.record.status == "failed"]


def _errors(report: LoadReport) -> str:
    return "; ".join(f"{count} × {error}" for error, count in sorted(report.errors.items())) or str(report.status_codes)


def calls_not_ok(run: StudyRun) -> list[str]:
    """Runs (and kept warm-ups) with calls that were not OK: which cell, which run, how many, and why."""
    found = []
    where = run.folder
    for result in run.cells:
        record = result.record
        runs = [(f"{repeat.role} run", report) for repeat, report in zip(record.repeats, result.reports, strict=True)]
        warmup = where / f"{record.stem}-{WARMUP}.json"
        if warmup.is_file():
            runs.insert(0, ("warm-up", LoadReport.from_json(read_json(warmup))))
        found += [
            f"{record.key}, {label}: {report.non_ok} of {report.count} failed: {_errors(report)}"
            for label, report in runs
            if report.non_ok
        ]
    return found


def failed_cells(run: StudyRun) -> list[str]:
    """The lines under a study's tables that list its failed cells and the runs with calls that were not OK."""
    failed, calls = failures(run), calls_not_ok(run)
    lines = ["Failed cells:", "", *[f"- {each}" for each in failed], ""] if failed else []
    if calls:
        lines += ["Calls that were not OK (the throughput above counts OK calls only):", ""]
        lines += [*[f"- {each}" for each in calls], ""]
    return lines


def study_readme(study: str, heading: str, lines: Sequence[Block]) -> bytes:
    """results/<study>/README.md: the heading and the section's lines, its links made relative to it."""
    text = markdown([heading, "", *lines]).replace(f"]({study}/", "](")
    return (text + "\n").encode()


def driver_cross_check_table(
    run: StudyRun, pairs: dict[str, tuple[Measured, Measured]], unit: str = "OK calls/s", checker: str = "ghz"
) -> list[Block]:
    """Our driver's median run against the checker's (ghz, h2load) on the same server start, per stack: rates,
    their difference, what each run cost the server per call, the TCP segments a call took, and each driver's own
    CPU."""
    labels = [f"loadgen {unit}", f"{checker} {unit}", "difference", f"server CPU per call: loadgen / {checker}"]
    columns = [*labels, f"TCP segments per call: loadgen / {checker}", "loadgen CPU", f"{checker} CPU"]
    table = Table(f"loadgen-against-{checker}", ["stack", *columns])
    for server, (mine, theirs) in pairs.items():
        ours_rps, ghz_rps = mine.report.ok_rps, theirs.report.ok_rps
        costs = mine.server_ms_per_call, theirs.server_ms_per_call
        segments = mine.segments_per_call, theirs.segments_per_call
        table.add(
            server,
            [
                Figure(ours_rps, f"{ours_rps:,.0f}", unit=unit),
                Figure(ghz_rps, f"{ghz_rps:,.0f}", unit=unit),
                Figure(100 * (ours_rps / ghz_rps - 1), f"{ours_rps / ghz_rps - 1:+.1%}", unit="%"),
                "—" if None in costs else f"{costs[0]:.3f} / {costs[1]:.3f} ms",
                "—" if None in segments else f"{segments[0]:.2f} / {segments[1]:.2f}",
                or_dash(mine.driver_cpu(run.meta), ".0%"),
                or_dash(theirs.driver_cpu(run.meta), ".0%"),
            ],
        )
    return [table]


def cross_check_gaps(mine: Measured, theirs: Measured) -> dict[str, float]:
    """How far our driver's median run lies from the checker's: in OK calls/s and, where measured, in the
    server's CPU per call (each as our figure over theirs, less one)."""
    gaps = {"rate": mine.report.ok_rps / theirs.report.ok_rps - 1}
    costs = mine.server_ms_per_call, theirs.server_ms_per_call
    if costs[0] is not None and costs[1]:
        gaps["server_cpu_per_call"] = costs[0] / costs[1] - 1
    return gaps


def role_spread(each: Measured) -> float:
    """How far the farthest run of the median run's role lies from their median OK rate."""
    role = each.repeat.role
    rates = [
        report.ok_rps
        for repeat, report in zip(each.result.record.repeats, each.result.reports, strict=True)
        if repeat.role == role
    ]
    return spread(rates)


def cross_check_within(gaps: Mapping[str, float], tolerance: float) -> bool:
    """Whether every gap of a cross-check (cross_check_gaps) lies within the tolerance."""
    return all(abs(gap) <= tolerance for gap in gaps.values())


def cross_check_sentence(
    run: StudyRun, pairs: dict[str, tuple[Measured, Measured]], what: str, checker: str = "ghz"
) -> str:
    """The cross-check in a sentence: each stack's rate and server CPU per call under our driver against the
    checker's; where either misses the tolerance, it is flagged with each driver's own spread, and the TCP
    segments a call took under each, which say whether the drivers sent their calls alike."""
    if not pairs:
        return ""
    runs = max(len([r for r in mine.result.record.repeats if r.role == mine.repeat.role]) for mine, _ in pairs.values())
    gaps = {server: cross_check_gaps(mine, theirs) for server, (mine, theirs) in pairs.items()}
    parts = []
    for server, gap in gaps.items():
        cost = f", server CPU per call {gap['server_cpu_per_call']:+.1%}" if "server_cpu_per_call" in gap else ""
        parts.append(f"{server} OK calls/s {gap['rate']:+.1%}{cost}")
    sentence = (
        f"Our driver against {checker} on {what} (medians of {runs} runs each, the drivers taking turns): "
        + "; ".join(parts)
        + "."
    )
    tolerance = run.thresholds.cross_check
    for server, (mine, theirs) in pairs.items():
        if cross_check_within(gaps[server], tolerance):
            continue
        sentence += (
            f" **Flagged: beyond {tolerance:.0%} on {server}.** Each driver's own runs lay up to "
            f"{role_spread(mine):.0%} (loadgen) and {role_spread(theirs):.0%} ({checker}) from their median"
        )
        segments = mine.segments_per_call, theirs.segments_per_call
        if segments[0] is not None and segments[1] is not None:
            sentence += (
                f"; a call took {segments[0]:.2f} TCP segments under loadgen and {segments[1]:.2f} under {checker} "
                "(fewer a call where a driver sends several calls a write and the server reads them together; "
                "see docs/DESIGN.md, one cost per call)"
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
    run: StudyRun, checks: Mapping[str, dict[str, tuple[Measured, Measured]]]
) -> dict[str, Target]:
    """For each checker (ghz, h2load), each stack's rate and server CPU per call under our driver against the
    checker's, all within the run's cross-check tolerance (reported and flagged, not a gate: the tables show both
    drivers' figures)."""
    found: dict[str, Target] = {}
    tolerance = run.thresholds.cross_check
    for name, checked in checks.items():
        if not checked:  # a run that measured no cross-check cell
            continue
        gaps = {server: cross_check_gaps(mine, theirs) for server, (mine, theirs) in checked.items()}
        found[f"driver_within_{tolerance:.0%}_of_{name}".replace("%", "_percent")] = Target(
            bool(gaps) and all(cross_check_within(each, tolerance) for each in gaps.values()),
            {
                "by_server": {server: round(each["rate"], 3) for server, each in gaps.items()},
                "server_cpu_per_call_by_server": {
                    server: round(each["server_cpu_per_call"], 3)
                    for server, each in gaps.items()
                    if "server_cpu_per_call" in each
                },
            },
        )
    return found


def newest_run_section(runs: Sequence[StudyRun], tables: Callable[[StudyRun], list[Block]], driver: str) -> str:
    """A study's part of results/README.md: its newest run, what drove it, where its raw reports are, and its
    tables."""
    newest = runs[0]
    return markdown(
        [
            f"Newest run: {newest.title}; {newest.entry.wall_seconds / 60:.1f} min. Driven by {driver}; "
            f"raw reports: [`runs/{newest.run_id}`](runs/{newest.run_id}).",
            "",
            *tables(newest),
        ]
    )
