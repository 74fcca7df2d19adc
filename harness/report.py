"""results/README.md and every study's tables and charts, rendered from the run files only.

Each study renders from the newest run that holds it; its answer and section also see the newest
full default run of the study on every other CPU model, so machines stand side by side.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from harness.results import (
    StudyRun,
    Thresholds,
    all_runs,
    load_study,
    read_json,
    studies_in,
    write_bytes_atomic,
    write_text_atomic,
)
from harness.soak_verdict import SOAK_DOC, load_line
from harness.studies import STUDIES, StudyReport
from harness.studies.comparing import same_workloads
from harness.studies.reading import judged_comparisons, trouble
from harness.verdicts import TIE, separated


def runs_of(study: StudyReport, runs: Sequence[Path]) -> list[StudyRun]:
    """The newest run holding the study, then the newest full default run on each other CPU model."""
    holding = [run for run in reversed(runs) if study.name in studies_in(read_json(run / "run.json"))]
    if not holding:
        return []
    chosen = [load_study(holding[0], study.name)]
    models = {chosen[0].cpu_model}
    for run in holding[1:]:
        candidate = load_study(run, study.name)
        if candidate.cpu_model not in models and candidate.info.get("default_matrix"):
            chosen.append(candidate)
            models.add(candidate.cpu_model)
    return chosen


def answer(study: StudyReport, runs: Sequence[StudyRun]) -> str:
    """A study's answer, then what every answer must say of its newest run: uncommitted code, failed cells,
    and cells with calls that were not OK."""
    newest = runs[0]
    told = [study.answer(runs)]
    if newest.uncommitted:
        told.append(
            f"Run `{newest.run_id}` was **made from uncommitted changes** to `{newest.uncommitted[:12]}`: rerun "
            "from a clean commit before you rely on it."
        )
    if problems := trouble(newest):
        told.append(problems)
    return " ".join(told)


def decide(chosen: dict[StudyReport, list[StudyRun]]) -> list[str]:
    """The decision table: one row per question a team asks, from each study's newest run in rounds."""
    decided = {each: found for each, runs in chosen.items() if (found := each.decisions(runs))}
    rows = [(each, row_) for each, found in decided.items() for row_ in found]
    lines = ["## Decide", ""]
    if not rows:
        return [*lines, "No comparison has run in rounds yet: `python -m harness run-all`.", ""]
    controls = [
        control for each in decided for judged in judged_comparisons(chosen[each][0]) if (control := judged.control)
    ]
    ties = sum(1 for control in controls if control.verdict == TIE)
    apart = sum(1 for control in controls if separated(control.ratio))
    lines += [
        "Each row compares alternatives on one workload, in blocks of warm servers alternated in short slices (runs "
        "before 2026-11-25: rounds of fresh starts); ratios are paired within a block and carry their 95% interval "
        "over blocks. **tie**: the interval lies inside the tie band, either will do; **faster**: wholly above it; "
        "**unresolved**: neither. Each study's A/A control (its reference against an independent start of itself) "
        "calibrates its rows: **separated** (its interval excludes 1) marks them untrustworthy; otherwise its "
        "half-width is the **noise floor**, the smallest difference the run could resolve. Compare only within one "
        "run and machine.",
        "",
        "| question | workload | pick | runner-up | pick × runner-up [95% CI] | pick × reference [95% CI] | verdict "
        "| avoid | A/A control, noise floor | trusted | evidence |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, each in rows:
        lines.append(
            f"| {each.question} | {each.workload} | **{each.pick}** | {each.runner_up} | {each.over_runner_up} | "
            f"{each.over_reference} | {each.verdict} | {each.avoid} | {each.calibration} | "
            f"{'yes' if each.trusted else '**no**'} | {each.evidence} |"
        )
    lines += [
        "",
        f"A/A controls: {ties} of {len(controls)} a tie, {apart} separated, the rest hold 1 but are wider than the "
        "band.",
        "",
    ]
    return lines + same_workloads([runs[0] for runs in chosen.values()])


def answers(chosen: dict[StudyReport, list[StudyRun]]) -> list[str]:
    """The answers section: one paragraph per registered study, its question in bold."""
    lines = ["## The answers", ""]
    for each in STUDIES:
        if each in chosen:
            lines += [f"**{each.question}** {answer(each, chosen[each])} ([{each.name}](#{each.name}))", ""]
        else:
            lines += [f"**{each.question}** Not measured yet: `python -m harness run-all --study {each.name}`.", ""]
    return lines


def soak_section(out_dir: Path) -> list[str]:
    """The newest soak run: per server, the verdict on each criterion, with its report and chart."""
    soaks = sorted(path for path in (out_dir / "soak").glob("*/run.json"))
    if not soaks:
        return []
    meta = read_json(soaks[-1])
    folder = f"soak/{meta['run_id']}"
    lines = [
        "## soak",
        "",
        "*Does each stack keep serving through backend faults, without leaking?* `python -m harness soak` "
        f"drives a mixed load at concurrency 20 while S3 and MongoDB fail on a schedule ({SOAK_DOC}). "
        f"Newest soak: [`{meta['run_id']}`]({folder}), {meta['environment']['cpu_model']}, "
        f"{meta['minutes']:g} min per server, {meta['status']}.",
        "",
    ]
    for server in meta["servers"]:
        path = soaks[-1].parent / f"{server}.json"
        if not path.is_file():
            continue
        report = read_json(path)
        verdicts = report["verdict"]
        failed = [name for name, check in verdicts.items() if not check["passed"]]
        lines += [
            f"### {server}: {'passed' if not failed else 'FAILED: ' + '; '.join(failed)}",
            "",
            f"![{server}]({folder}/{server}.png)",
            "",
            f"Load generator: {report['driver']['cpu_share']:.0%} of a core"
            + (
                " (**driver-busy**: the load was below what was asked)"
                if report["driver"]["cpu_share"] > Thresholds().driver_busy
                else ""
            )
            + f"; {load_line(report['load'])}"
            + f". Report: [`{server}.json`]({folder}/{server}.json).",
            "",
            *[
                f"- {'ok' if check['passed'] else '**FAILED**'}: {name}: {check['detail']}"
                for name, check in verdicts.items()
            ],
            "",
        ]
    return lines


def summary(chosen: dict[StudyReport, list[StudyRun]], runs: Sequence[Path], out_dir: Path | None = None) -> str:
    """results/README.md: the answers first, then each study's section, then the runs it draws on."""
    lines = [
        "# Results",
        "",
        "Generated by `python -m harness report` from the raw files under [`runs/`](runs); no figure here is "
        "typed by hand. Figures from different machines are never compared in absolute terms: compare ranks, "
        "or run `python -m harness compare RUN_A RUN_B`.",
        "",
        *decide(chosen),
        *answers(chosen),
    ]
    for each, study_runs in chosen.items():
        lines += [f"## {each.name}", "", f"*{each.question}* Follows {each.follows}.", "", each.section(study_runs)]
    if out_dir is not None:
        lines += soak_section(out_dir)
    lines += ["## Runs", ""]
    for run in reversed(runs):
        meta = read_json(run / "run.json")
        env = meta["environment"]
        lines.append(
            f"- [`{meta['run_id']}`](runs/{meta['run_id']}): {env['cpu_model']} ({env['cpu_count']} CPUs), "
            f"studies {', '.join(studies_in(meta))}, {meta['status']}, {meta.get('wall_seconds', 0) / 60:.1f} min"
        )
    return "\n".join(lines) + "\n"


def write_report(out_dir: Path, newest: Path | None = None) -> list[Path]:
    """Render every study's files and the summary into out_dir; returns the files written.

    newest: render from this run and those before it (default: every run under out_dir/runs).
    """
    runs = all_runs(out_dir)
    if newest is not None:
        runs = [run for run in runs if run.name <= newest.name] if newest in runs else [newest]
    if not runs:
        raise FileNotFoundError(f"no run under {out_dir / 'runs'}: run `python -m harness run-all` first")
    chosen = {each: study_runs for each in STUDIES if (study_runs := runs_of(each, runs))}
    written = []
    for each, study_runs in chosen.items():
        folder = out_dir / each.name
        if folder.is_dir():
            shutil.rmtree(folder)
        for relative, content in each.render(study_runs[0]).items():
            path = folder / relative
            write_bytes_atomic(path, content)
            written.append(path)
    path = out_dir / "README.md"
    write_text_atomic(path, summary(chosen, runs, out_dir))
    written.append(path)
    return written
