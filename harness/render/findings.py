"""What results/README.md and results/report.html show, as data: the decision table (one row per question, with
its short answer), every comparison of the runs the report draws on (each alternative's ratio with its interval,
and each block's), each run's provenance, and, where a study has run more than once, its two newest runs side by
side. `harness.render.markdown` renders it as markdown, `harness.render.page` as one HTML page; neither computes a
figure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.analysis.decision import Decision
from harness.analysis.judging import judged_comparisons
from harness.paths import ROOT
from harness.plan.wires import TLS
from harness.render.compare import compare_rows, ratio_changes
from harness.render.decisions import Row, decision_rows
from harness.render.soak import checks_text, load_line
from harness.render.views import comparison_view
from harness.results.code import run_code
from harness.results.files import read_json
from harness.results.records import StudyRun, comparison_files, load_study
from harness.results.run_context import DIRTY
from harness.results.run_meta import RunMeta, Thresholds
from harness.results.soak_meta import read_soak_meta
from harness.studies import StudyReport


# The work a team's handlers do, as the "which stack" view offers it (its key in the URL: #work=s3-mongo): what it
# is called, the scenario that measures it, and the studies that set the stacks side by side on it (the stacks study;
# the wire study the large messages, and the S3 work over TLS). The S3 work is where production has it, its backends a
# region away; on loopback, where botocore's parsing alone sets the rate, under its own key.
@dataclass(frozen=True)
class Work:
    label: str
    scenario: str
    studies: tuple[str, ...] = ("stacks",)


WORK = {
    "hello": Work("no I/O", "hello"),
    "hello-wait": Work("waiting on I/O (100 ms)", "hello-wait"),
    "s3-unary": Work("S3 listing, one reply (S3 100 ms away)", "s3-unary-region", ("stacks", "wire")),
    "s3-stream": Work("S3 listing, streamed (S3 100 ms away)", "s3-stream-region"),
    "s3-mongo": Work("S3 to MongoDB (S3 100 ms, MongoDB 1 ms away)", "s3-mongo-region", ("stacks", "wire")),
    "s3-unary-loopback": Work("S3 listing, one reply (on loopback)", "s3-unary"),
    "s3-stream-loopback": Work("S3 listing, streamed (on loopback)", "s3-stream"),
    "s3-mongo-loopback": Work("S3 to MongoDB (on loopback)", "s3-mongo"),
    **{
        name: Work(f"{size} {kind}", name, ("wire",))
        for name, size, kind in (
            ("reply-64KiB", "64 KiB", "replies"),
            ("reply-1MiB", "1 MiB", "replies"),
            ("request-64KiB", "64 KiB", "requests"),
            ("request-1MiB", "1 MiB", "requests"),
        )
    },
}
WORK_OF = {work.scenario: key for key, work in WORK.items()}  # scenario -> its key in the view
TLS_MARK = "+tls"


def stack_choices(views: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The "which stack for my service" view: for each kind of work (WORK), in plaintext and where measured over TLS
    (its key then ends in +tls), and each number of clients its study measured it at, every stack it measured (not
    a floor, not the A/A twin), fastest first, each as its rate over the fastest's with its 95% interval paired by
    block (pooled over runs where it pools), and its own OK calls/s and p50 and p99 latency (with its interval over
    blocks), from the newest run that measured it."""
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for view in views:
        topic, _, level = view["workload"].partition("/")
        key = WORK_OF.get(topic)
        if key is None or view["study"] not in WORK[key].studies:
            continue
        if not level.startswith("c") or "/" in level:
            continue
        level = level.split("+")[0]  # the wire a comparison's name says: its labels' cells tell it
        for group, ranking in view["ranked"].items():
            by_clients = found.setdefault(key + (TLS_MARK if group == TLS else ""), {})
            if level[1:] in by_clients:
                continue  # an older run's
            to_best = sorted(ranking["to_best"].items(), key=lambda each: -each[1]["value"])
            first = {"value": 1.0, "text": "1 (the fastest)", "verdict": ""}
            by_clients[level[1:]] = [
                {
                    **ratio,
                    **view["absolute"].get(label, {}),
                    "stack": label.removesuffix(TLS_MARK),
                    "run": view["run"],
                    "floor": view["floor"],
                }
                for label, ratio in [(ranking["best"], first), *to_best]
            ]
    return found


def provenance(meta: RunMeta) -> dict[str, Any]:
    """What a run was made from and on: commit and whether it was clean, machine, interpreter, every package and
    tool version, pinning, the method's values, budget and wall time."""
    env = meta.environment
    return {
        "run": meta.run_id,
        "date": meta.date,
        "commit": env.git_commit.removesuffix(DIRTY),
        "clean": not env.git_commit.endswith(DIRTY),
        "machine": f"{env.cpu_model} ({env.cpu_count} CPUs)",
        "platform": env.platform,
        "python": env.python,
        "tools": env.tools,
        "packages": env.packages,
        "pinning": meta.pinning.to_json(),
        "thresholds": meta.thresholds.to_json() if meta.thresholds else {},
        "pilot": meta.pilot.to_json() if meta.pilot else None,
        "studies": list(meta.studies),
        "budget_minutes": round(meta.budget_seconds / 60, 1) if meta.budget_seconds else None,
        "wall_minutes": round(meta.wall_seconds / 60, 1),
        "status": meta.status,
        "class": meta.cpu_class,
        "speed": {when: found.python_seconds for when, found in meta.machine.speed.items()} if meta.machine else {},
    }


def differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What changed from one run's provenance to another's, in words: the commit, the machine class, the kernel,
    the interpreter, the speed index, tools and packages (each changed one named with both versions)."""
    said = []
    for key, name in (("commit", "commit"), ("class", "machine"), ("platform", "kernel"), ("python", "interpreter")):
        if before.get(key) != after.get(key):
            old, new = str(before.get(key) or "?"), str(after.get(key) or "?")
            said.append(f"{name} {old[:12] if key == 'commit' else old} → {new[:12] if key == 'commit' else new}")
    speeds = [run.get("speed", {}).get("start") for run in (before, after)]
    if all(speeds) and abs(math.log(speeds[1] / speeds[0])) > math.log(1.1):
        said.append(f"speed: a Python loop {speeds[0]:.2f} s → {speeds[1]:.2f} s (more than 10% apart)")
    for key, name in (("tools", "tool"), ("packages", "package")):
        old, new = before.get(key, {}), after.get(key, {})
        changed = [
            f"{each} {old.get(each, 'none')} → {new.get(each, 'none')}"
            for each in sorted({*old, *new})
            if old.get(each) != new.get(each)
        ]
        if changed:
            said.append(f"{len(changed)} {name}{'s' if len(changed) > 1 else ''}: " + ", ".join(changed))
    return said


def side_by_side(runs: Mapping[Path, RunMeta], study: str) -> dict[str, Any] | None:
    """A study's two newest of the runs (each with its run.json) but those made --aside, cell by cell (what
    `python -m harness compare` prints); None with one run."""
    holding = [run for run, meta in runs.items() if study in meta.studies and not meta.aside]
    if len(holding) < 2:
        return None
    found = compare_rows(holding[-2], holding[-1], (study,))
    moved = ratio_changes(holding[-2], holding[-1], (study,))
    differ = differences(provenance(runs[holding[-2]]), provenance(runs[holding[-1]]))
    return {"study": study, **found, "moved": moved, "differ": differ} if found["rows"] or moved["rows"] else None


def matrix_run(study: StudyReport, metas: dict[Path, RunMeta], newest: StudyRun) -> StudyRun | None:
    """The newest complete run of the study measured cell by cell (its full matrix), if not the newest run; metas:
    each run's run.json, oldest first."""
    for run, meta in reversed(metas.items()):
        entry = meta.studies.get(study.name)
        if entry and entry.status == "complete" and not comparison_files(meta.study_dir(run, study.name)):
            return None if run.name == newest.run_id else load_study(run, study.name)
    return None


def only_in_matrix(matrix: StudyRun, newest: StudyRun) -> list[str]:
    """The scenarios a full-matrix run measured that the newest run did not."""
    measured = {cell.record.scenario for cell in newest.cells}
    return sorted({cell.record.scenario for cell in matrix.cells} - measured)


@dataclass(frozen=True)
class Findings:
    """Everything the summary and the page show."""

    rows: list[Row]
    comparisons: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    pairs: list[dict[str, Any]]
    matrices: list[dict[str, Any]]  # each study's newest full-matrix run, and what only it measured
    asides: list[dict[str, Any]]  # the comparisons of runs made --aside, which decide nothing

    @property
    def choices(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """The "which stack for my service" view's data (stack_choices)."""
        return stack_choices(self.comparisons)


def views_of(study: StudyReport, run: StudyRun) -> tuple[list[Decision], list[dict[str, Any]]]:
    """A run's decision rows (as if it were its study's newest) and its comparisons as the page draws them."""
    rows = study.decisions([run])
    asked = {row.workload: row.question for row in rows}
    views = [
        comparison_view(run, judged, asked.get(judged.record.workload, study.question))
        for judged in judged_comparisons(run)
    ]
    return rows, views


def findings(
    chosen: Mapping[StudyReport, Sequence[StudyRun]],
    metas: dict[Path, RunMeta],
    matrices: Mapping[StudyReport, StudyRun | None],
    asides: Mapping[StudyReport, Sequence[StudyRun]],
) -> Findings:
    """The findings of the run each study decides from (the first of its runs, as harness.render.markdown chooses
    them), of its newest full-matrix run and of its runs made aside, and every run's provenance (metas: each run's
    run.json, oldest first)."""
    decisions: list[Decision] = []
    views = []
    classes = machine_classes(list(metas.values()))
    elsewhere: dict[str, list[tuple[str, Row]]] = {}  # question -> (machine class, its row there)
    for each, study_runs in chosen.items():
        # A study decides from one run (markdown.deciding_run), pooled with the runs before on its machine type; its
        # runs on other machine types are named, with a link, on its page, and drawn here only when their type
        # decides (so that the page holds one type's views a study, however many types the results hold). Those of
        # the deciding run's code say beside each row whether they answer it the same way.
        rows, told = views_of(each, study_runs[0])
        decisions += rows
        views += told
        code = run_code(study_runs[0].meta, ROOT)
        for other in study_runs[1:]:
            if code and run_code(other.meta, ROOT) == code:
                for row in decision_rows(each.decisions([other])):
                    elsewhere.setdefault(row.question, []).append((classes[other.run_id], row))
    aside_views = [view for each, runs in asides.items() for run in runs for view in views_of(each, run)[1]]
    pairs = [found for each in chosen if (found := side_by_side(metas, each.name))]
    found_matrices = [
        {"study": each.name, "run": matrix.run_id, "machine": matrix.cpu_model, "only": only}
        for each, study_runs in chosen.items()
        if (matrix := matrices.get(each)) is not None and (only := only_in_matrix(matrix, study_runs[0]))
    ]
    used = {view["run"] for view in views + aside_views} | {row.run_id for row in decisions}
    used |= {m["run"] for m in found_matrices}
    return Findings(
        [
            replace(row, elsewhere=elsewhere_of(row, elsewhere.get(row.question, [])))
            for row in decision_rows(decisions)
        ],
        [{**view, "class": classes[view["run"]]} for view in views],
        [
            {**provenance(meta), "class": classes[meta.run_id]}
            for meta in reversed(metas.values())
            if meta.run_id in used
        ],
        pairs,
        found_matrices,
        [{**view, "class": classes[view["run"]]} for view in aside_views],
    )


def elsewhere_of(row: Row, others: Sequence[tuple[str, Row]]) -> tuple[str, ...]:
    """What each other machine class with runs of the same code says of a row, in a clause ("GenuineIntel 6/207/2,
    over 2 runs on 1 day: same pick")."""
    found = []
    for machine, other in others:
        if not other.answered:
            said = "not answered yet"
        elif row.answered and other.pick == row.pick:
            said = "same answer"
        else:
            said = f"answers {other.pick}"
        found.append(f"{machine}, {other.pooled}: {said}")
    return tuple(found)


NO_FINGERPRINT = " (runs before fingerprints)"


def machine_classes(metas: Sequence[RunMeta]) -> dict[str, str]:
    """Each run's machine class as the page's machine filter offers it, one entry a class: its fingerprint's
    class, or for a run made before fingerprints the class of the fingerprinted runs with its CPU model and cores,
    or where there are none its CPU model and cores, marked as recorded before fingerprints."""
    by_model: dict[tuple[str, int], str] = {}
    for meta in metas:
        if meta.machine is not None:
            by_model.setdefault((meta.environment.cpu_model, meta.environment.cpu_count), meta.cpu_class)
    found = {}
    for meta in metas:
        model = (meta.environment.cpu_model, meta.environment.cpu_count)
        known = meta.cpu_class if meta.machine is not None else by_model.get(model)
        found[meta.run_id] = known or meta.cpu_class + NO_FINGERPRINT
    return found


def newest_soak(out_dir: Path) -> dict[str, Any] | None:
    """The newest soak run as both renderings show it: its run, machine, minutes and status, and per server whether
    it passed, each criterion with its detail, the load generator's share of a core, the load in a line, and where
    its chart and report are (relative to out_dir); None without a soak."""
    soaks = sorted((out_dir / "soak").glob("*/run.json"))
    if not soaks:
        return None
    meta = read_soak_meta(soaks[-1].parent)
    folder = f"soak/{meta.run_id}"
    servers = []
    for server in meta.servers:
        path = soaks[-1].parent / f"{server}.json"
        if not path.is_file():
            continue
        report = read_json(path)
        checks = checks_text(report["verdict"])
        share = float(report["driver"]["cpu_share"])
        servers.append(
            {
                "server": server,
                "failed": [name for name, passed, _ in checks if not passed],
                "checks": checks,
                "driver_share": share,
                "driver_busy": share > Thresholds().driver_busy,
                "load": load_line(report["load"]),
                "chart": f"{folder}/{server}.png",
                "report": f"{folder}/{server}.json",
            }
        )
    return {
        "run": meta.run_id,
        "folder": folder,
        "machine": meta.environment.cpu_model,
        "minutes": meta.minutes,
        "status": meta.status,
        "servers": servers,
    }
