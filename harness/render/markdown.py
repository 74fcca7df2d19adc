"""results/README.md (the decision table and short answers), each study's page with its tables and charts, and
results/report.html, rendered from the run files only.

Each study renders from its newest run but one made --aside (told under aside/ on its page), pooled with the earlier
runs of its machine class and code; its page also sees the newest full default run of the study on every other CPU
model, so machines stand side by side, and the newest run of its full matrix.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.analysis.judging import forget_analyses
from harness.analysis.saved import write_analyses
from harness.render.cross_study import same_workloads
from harness.render.decisions import ANSWER_WORDS, DECISION_COLUMNS, NOT_TRUSTED, Row, study_command
from harness.render.durations import Duration, durations, how_long
from harness.render.findings import Findings, findings, matrix_run, newest_soak, only_in_matrix
from harness.render.glossary import GLOSSARY
from harness.render.leaderboard import Boards, board_tables, leaderboards
from harness.render.page import FINDINGS_JSON, findings_json, page
from harness.render.soak import SOAK_DOC
from harness.render.summaries import trouble
from harness.render.table import Block, Table, markdown, written_tables
from harness.results.files import write_bytes_atomic, write_text_atomic
from harness.results.records import StudyRun, all_runs, load_study, read_meta
from harness.results.run_meta import RunMeta
from harness.studies import DEFAULT_STUDIES, STUDIES, StudyReport


def runs_of(study: StudyReport, metas: dict[Path, RunMeta], machine: str | None = None) -> list[StudyRun]:
    """The run the study decides from (`deciding_run`, of `machine`'s class where one is named and holds the study),
    then the newest full default run on each other CPU model; runs made --aside only where the study has no other.
    metas: each run's run.json, oldest first."""
    holding = [run for run, meta in reversed(metas.items()) if study.name in meta.studies]
    if deciding := [run for run in holding if not metas[run].aside]:
        holding = deciding
    if not holding:
        return []
    first = deciding_run([run for run in holding if metas[run].cpu_class == machine] or holding)
    chosen = [load_study(first, study.name)]
    models = {chosen[0].cpu_model}
    for run in holding:
        candidate = load_study(run, study.name) if run != first else chosen[0]
        if candidate.cpu_model not in models and candidate.entry.default_matrix:
            chosen.append(candidate)
            models.add(candidate.cpu_model)
    return chosen


def deciding_run(holding: Sequence[Path]) -> Path:
    """The newest run that may decide (the machine you ran on last): its rows pool with the earlier runs of its
    machine class and code alone (harness.analysis.evidence), so a team's own `make bench` answers for its own
    machine, and runs of older code or of other classes stand on the study's page. holding: the runs that may
    decide, newest first."""
    return holding[0]


def asides_of(study: StudyReport, metas: dict[Path, RunMeta], chosen: StudyRun) -> list[StudyRun]:
    """The runs made --aside that hold the study, newest first, but the one its page is told from."""
    return [
        load_study(run, study.name)
        for run, meta in reversed(metas.items())
        if run.name != chosen.run_id and meta.aside and study.name in meta.studies
    ]


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


def verdicts_line(rows: Sequence[Row]) -> str:
    """How to read the decision table, in three sentences, with how many rows it answers."""
    sure = [each for each in rows if each.answered and each.trusted]
    return (
        f"**{len(sure)} of {len(rows)} questions are answered and trusted**, each from its study's newest run on this "
        "machine type, pooled with that type's earlier runs of the same code. A pick is **certified** when, with 95% "
        "confidence over every rival at once, it is the fastest or within 5% of the fastest; every × comes with its "
        "95% interval. Terms are defined under [Words](#words), and the method in "
        "[docs/DESIGN.md](../docs/DESIGN.md)."
    )


def words() -> list[str]:
    """The glossary: each term the table and answers use, once."""
    return ["## Words", "", *[f"- **{term}**: {meaning}." for term, meaning in GLOSSARY], ""]


def decide(found: Findings) -> list[str]:
    """The decision table: one row per question."""
    lines = ["## Decide", ""]
    if not found.rows:
        return [*lines, "No comparison has run yet: `python -m harness run-all`.", ""]
    table = Table("decisions", ["question", *DECISION_COLUMNS])
    for each in found.rows:
        runs = ", ".join(f"`{run}` ({machine})" for run, machine in each.evidence)
        table.add(
            each.question,
            [
                f"**{each.lead}**",
                each.sure if each.trusted else f"**{NOT_TRUSTED}**: {each.why}. {each.sure}",
                each.avoid,
                each.floor,
                f"[{each.study}]({each.study}/README.md), {runs}; {each.pooled}"
                + "".join(f"; {clause}" for clause in each.elsewhere),
            ],
        )
    return [*lines, verdicts_line(found.rows), "", *table.markdown(), ""]


def answers(found: Findings, chosen: dict[StudyReport, list[StudyRun]]) -> list[str]:
    """A short answer per question, each linking its study's page; then the studies with no row yet."""
    lines = ["## The answers", ""]
    for told in found.rows:
        lines += [f"**{told.question}** {told.answer} [More]({told.study}/README.md).", ""]
    answered = {told.study for told in found.rows}
    for study, runs in chosen.items():  # a study whose newest run has no decision row: its answer's opening
        if study.name not in answered:
            lines += [f"**{study.question}** {opening(answer(study, runs))} [More]({study.name}/README.md).", ""]
    for study in STUDIES:
        if study not in chosen:
            lines += [f"**{study.question}** Not measured yet: `{study.command}`.", ""]
    return lines


def elsewhere(others: Sequence[StudyRun]) -> str:
    """The newest full runs on other machine types, which the page does not tell: where their files are."""
    if not others:
        return ""
    listed = ", ".join(f"[`{each.run_id}`](../runs/{each.run_id}) ({each.cpu_model})" for each in others)
    return (
        f" Its newest full runs on other machine types: {listed}; their rows pool only with their own machine "
        "type's runs, and report.html tells those older than this one."
    )


def opening(text: str, words: int = ANSWER_WORDS) -> str:
    """A text's first sentences, as many as fit in `words` (at least the first, cut at that many words)."""
    kept: list[str] = []
    for sentence in text.replace("\n", " ").split(". "):
        if kept and len(" ".join([*kept, sentence]).split()) > words:
            break
        kept.append(sentence)
    told = " ".join(". ".join(kept).split()[:words])
    return told if told.endswith(".") else told + "."


def study_page(
    study: StudyReport,
    runs: Sequence[StudyRun],
    matrix: StudyRun | None,
    matrix_section: str,
    tables: bool,
    asides: Sequence[StudyRun] = (),
    took: Duration | None = None,
) -> str:
    """results/<study>/README.md: the study's answer, section and tables from its newest runs, then the newest run
    of its full matrix where that is another run (its section as results/README.md would tell it), each marked
    with its run and machine; then links to the runs made --aside."""
    newest = runs[0]
    minutes = newest.meta.wall_seconds / 60
    command = study_command(study.name)
    lines = [
        f"# {study.name}",
        "",
        f"*{study.question}* Follows {study.follows}.",
        "",
        f"Measured by `{command}`"
        + ("" if study.default else " (not in the default run)")
        + (f", which takes {took.text}" if took else "")
        + f"; the run it decides from, `{newest.run_id}`, took {minutes:.0f} min: the study's newest. Run it again "
        "and its rows pool the new run with the earlier ones of your machine type and code." + elsewhere(runs[1:]),
        "",
        "## The answer",
        "",
        relocated(answer(study, runs), study.name),
        "",
        relocated(study.section(runs), study.name),
        "",
        *([f"Every table of run `{runs[0].run_id}`: [tables.md](tables.md).", ""] if tables else []),
    ]
    if matrix is not None:
        lines += [
            f"## History: the full matrix cell by cell, run `{matrix.run_id}`, {matrix.cpu_model}",
            "",
            "Kept as history: measured cell by cell (every variant at every level, a few runs a cell, their median, "
            "no interval and no A/A control), before the default run measured the brief's matrix in blocks, with "
            "its own method and machine: compare within it only, and decide nothing from it. "
            + (
                f"It answers what the default run does not measure: {', '.join(only)}."
                if (only := only_in_matrix(matrix, runs[0]))
                else "It measured the scenarios the default run compares, at more levels."
            ),
            "",
            relocated(matrix_section, study.name, MATRIX),
            "",
            f"Every table of run `{matrix.run_id}`: [{MATRIX}/README.md]({MATRIX}/README.md).",
            "",
        ]
    if asides:
        lines += [
            "## Runs aside",
            "",
            "Each answered one question (a narrow comparison, a fix's before and after); none decides the answer "
            "above. Compare within one run only.",
            "",
            *(
                f"- [`{each.run_id}`]({ASIDE}/{each.run_id}/README.md), {each.cpu_model}: "
                f"{', '.join(sorted({cell.record.server for cell in each.cells}))} on "
                f"{', '.join(sorted({cell.record.scenario for cell in each.cells}))}"
                for each in asides
            ),
            "",
        ]
    return "\n".join(lines)


MATRIX = "matrix"  # under results/<study>/: the files of the study's newest full-matrix run
ASIDE = "aside"  # under results/<study>/: a folder of each run made --aside


def relocated(text: str, study: str, folder: str = "", depth: int = 1) -> str:
    """Markdown written for results/README.md, with its links made relative to a page `depth` folders below
    results/ whose files are under `folder`."""
    inside = f"]({folder}/" if folder else "]("
    up = "../" * depth
    return (
        text.replace(f"]({study}/", inside).replace("](runs/", f"]({up}runs/").replace(f"](#{study})", "](README.md)")
    )


def soak_section(found: dict[str, Any] | None) -> list[str]:
    """The newest soak run (findings.newest_soak): per server, the verdict on each criterion, with its report and
    chart."""
    if found is None:
        return []
    folder = found["folder"]
    lines = [
        "# soak",
        "",
        "*Does each stack keep serving through backend faults, without leaking?* `python -m harness soak` "
        f"drives a mixed load at concurrency 20 while S3 and MongoDB fail on a schedule ({SOAK_DOC}). "
        f"Newest soak: [`{found['run']}`]({folder}), {found['machine']}, "
        f"{found['minutes']:g} min per server, {found['status']}.",
        "",
    ]
    for each in found["servers"]:
        server, failed = each["server"], each["failed"]
        lines += [
            f"### {server}: {'passed' if not failed else 'FAILED: ' + '; '.join(failed)}",
            "",
            f"![{server}]({each['chart']})",
            "",
            f"Load generator: {each['driver_share']:.0%} of a core"
            + (" (**driver-busy**: the load was below what was asked)" if each["driver_busy"] else "")
            + f"; {each['load']}"
            + f". Report: [`{server}.json`]({each['report']}).",
            "",
            *[f"- {'ok' if passed else '**FAILED**'}: {name}: {detail}" for name, passed, detail in each["checks"]],
            "",
        ]
    return lines


def summary(
    found: Findings,
    chosen: dict[StudyReport, list[StudyRun]],
    runs: Sequence[Path],
    soak: bool,
    boards: Boards,
    took: dict[str, Duration],
) -> str:
    """results/README.md: the decision table, the short answers, and links to each study's page, the soak, the
    page and the runs."""
    lines: list[Block] = [
        "# Results",
        "",
        "Rendered by `python -m harness report` from the raw files under [`runs/`](runs); no figure here is typed by "
        "hand. Explore the same findings in a browser, offline: [`report.html`](report.html) (filters, every "
        "comparison's forest plot and blocks, every study's tables, each run's provenance). Each table is also saved "
        "as CSV beside its page, under `tables/`.",
        "",
        *leaderboards(*boards),
        *decide(found),
        *answers(found, chosen),
        *same_workloads([study_runs[0] for study_runs in chosen.values()]),
        *words(),
        *how_long(took),
        "## Each study",
        "",
        *[f"- [{each.name}]({each.name}/README.md): {each.question}" for each in chosen],
        *(
            ["- [soak](soak/README.md): Does each stack keep serving through backend faults, without leaking?"]
            if soak
            else []
        ),
        "",
        f"Runs: {len(runs)} under [`runs/`](runs), the newest `{runs[-1].name}`.",
    ]
    return markdown(lines) + "\n"


def stacks_meta(chosen: dict[StudyReport, list[StudyRun]]) -> RunMeta | None:
    """The run.json of the run the stacks study decides from (the leaderboards'); None where it has none."""
    return next((runs[0].meta for each, runs in chosen.items() if each.name == "stacks"), None)


def write_report(out_dir: Path, newest: Path | None = None, machine: str | None = None) -> list[Path]:
    """Render every study's page and files, results/README.md and results/report.html into out_dir; returns the
    files written (`render_report`)."""
    return render_report(out_dir, newest, machine)[0]


def render_report(
    out_dir: Path, newest: Path | None = None, machine: str | None = None
) -> tuple[list[Path], list[Row]]:
    """Render every study's page and files, results/README.md and results/report.html into out_dir; returns the
    files written and the decision table's rows.

    newest: render from this run and those before it (default: every run under out_dir/runs); machine: the machine
    class whose newest runs decide (default: the newest run's, study by study).
    """
    forget_analyses()
    runs = all_runs(out_dir)
    if newest is not None:
        runs = [run for run in runs if run.name <= newest.name] if newest in runs else [newest]
    if not runs:
        raise FileNotFoundError(f"no run under {out_dir / 'runs'}: run `python -m harness run-all` first")
    metas = {run: read_meta(run) for run in runs}  # each read once, oldest first
    if machine is not None and machine not in (classes := {meta.cpu_class for meta in metas.values()}):
        raise ValueError(f"no run on machine class {machine!r}; the runs' classes: {', '.join(sorted(classes))}")
    chosen = {each: study_runs for each in STUDIES if (study_runs := runs_of(each, metas, machine))}
    took = durations(metas, DEFAULT_STUDIES, {each.name: each.command for each in STUDIES})
    matrices = {each: matrix_run(each, metas, study_runs[0]) for each, study_runs in chosen.items()}
    asides = {each: asides_of(each, metas, study_runs[0]) for each, study_runs in chosen.items()}
    written = []
    study_tables: dict[
        str, list[dict[str, Any]]
    ] = {}  # each study's tables from its newest run, as report.html shows them
    for each, study_runs in chosen.items():
        folder = out_dir / each.name
        if folder.is_dir():
            shutil.rmtree(folder)
        matrix = matrices[each]
        matrix_section = "" if matrix is None else each.section([matrix])
        files = {**each.render(study_runs[0])}
        study_tables[each.name] = written_tables(files)
        if matrix is not None:
            files |= {f"{MATRIX}/{name}": content for name, content in each.render(matrix).items()}
            files.setdefault(f"{MATRIX}/README.md", relocated(matrix_section, each.name, depth=2).encode())
        for aside in asides[each]:
            folder_name = f"{ASIDE}/{aside.run_id}"
            files |= {f"{folder_name}/{name}": content for name, content in each.render(aside).items()}
            told = relocated(each.section([aside]), each.name, depth=3)
            files.setdefault(f"{folder_name}/README.md", told.encode())
        if "README.md" in files:  # a run measured cell by cell tells its tables in a file of that name
            files["tables.md"] = files.pop("README.md")
        tables = "tables.md" in files
        files["README.md"] = study_page(
            each, study_runs, matrix, matrix_section, tables, asides[each], took.get(study_command(each.name))
        ).encode()
        for relative, content in files.items():
            path = folder / relative
            write_bytes_atomic(path, content)
            written.append(path)
    newest_soaked = newest_soak(out_dir)
    if soak := soak_section(newest_soaked):
        path = out_dir / "soak" / "README.md"
        write_text_atomic(path, relocated("\n".join(soak), "soak") + "\n")
        written.append(path)
    found = findings(chosen, metas, matrices, asides)
    boards = board_tables(found.comparisons, stacks_meta(chosen))
    written += write_analyses(out_dir)
    for name, text in (
        ("README.md", summary(found, chosen, runs, bool(soak), boards, took)),
        ("report.html", page(found, study_tables, newest_soaked, boards)),
        (FINDINGS_JSON, findings_json(found)),
    ):
        path = out_dir / name
        write_text_atomic(path, text)
        written.append(path)
    return written, list(found.rows)
