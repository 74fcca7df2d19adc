"""Every study's report half, rendered from a small run on disk: its tables and its answer against golden
files, its charts as PNGs, and what the run's gates say of it. Regenerate the golden files after an intended
change with `UPDATE_GOLDEN=1 pytest tests/test_study_reports.py`."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from harness.analysis.decision import answered
from harness.analysis.judging import judged_comparisons
from harness.cli import main
from harness.method.validation import ALL_CLASSES, LEAST_CLASS_RUNS, Calibration, Held
from harness.method.verdicts import Method
from harness.paths import ROOT
from harness.render.cross_study import same_workloads
from harness.render.decisions import decision_rows
from harness.render.markdown import answer, write_report
from harness.render.table import TABLES, markdown, markdown_lines
from harness.results.calibration import NAME as CALIBRATION
from harness.results.calibration import load_calibration, write_calibration
from harness.results.files import read_json, write_json_atomic
from harness.results.records import CellRecord, load_study, read_meta
from harness.results.run_meta import RunMeta, StudyEntry, Thresholds
from harness.run.cells import finished_entry
from harness.run.runner import failed_gates
from harness.studies import STUDIES, plan, study
from harness.studies.choosing import chosen as chosen_of
from harness.studies.comparing import decision, distrust
from harness.studies.stacks.report import TELLING
from harness.studies.telling import Finding, comparison_lines
from tests.runs import (
    make_blocks_run,
    make_brief_run,
    make_capacity_run,
    make_connections_blocks_run,
    make_connections_run,
    make_interpreters_run,
    make_protocols_run,
    make_readers_run,
    make_run,
    make_streaming_run,
    make_versions_run,
    make_wire_run,
    study_meta,
    write_blocks,
)
from tests.test_report import check_golden

MAKERS: dict[str, Callable[[Path], Path]] = {
    "stacks": lambda root: make_run(root, "20260102T000000Z", "Test CPU A"),
    "capacity": make_capacity_run,
    "streaming": make_streaming_run,
    "protocols": make_protocols_run,
    "connections": make_connections_run,
    "wire": make_wire_run,
    "interpreters": make_interpreters_run,
    "versions": make_versions_run,
    "readers": lambda root: make_readers_run(
        root, {"sync-w10": (4_200_000, 4_500_000, 4_400_000), "connect-pyvoy": (19_000_000, 21_000_000, 20_000_000)}
    ),
}


def test_every_registered_study_has_a_fixture_run() -> None:
    assert set(MAKERS) == {each.name for each in STUDIES}


@pytest.mark.parametrize("name", list(MAKERS))
def test_tables_and_answer_match_golden(name: str, tmp_path: Path) -> None:
    run = load_study(MAKERS[name](tmp_path), name)
    files = study(name).render(run)
    for relative, content in sorted(files.items()):
        if relative.endswith(".png"):
            assert content.startswith(b"\x89PNG")
        elif TABLES in relative.split("/"):  # the tables the golden markdown shows, as data (tests/test_table.py)
            assert relative.endswith((".csv", ".json"))
        elif name != "stacks":  # the stacks study's tables have golden tests of their own (test_report.py)
            check_golden(f"{name}/{relative}", content.decode())
    check_golden(f"{name}/answer.txt", answer(study(name), [run]) + "\n")


def test_an_answer_names_failed_cells_and_calls_that_were_not_ok(tmp_path: Path) -> None:
    told = answer(study("streaming"), [load_study(make_streaming_run(tmp_path), "streaming")])
    assert "1 cells failed (listed under the tables): watch/aio-uvloop/c1000." in told
    assert "fetch-parallel-4-20ms/aio-uvloop/c4 **2 of 8 calls not OK (25%): Unavailable**" in told


def test_a_run_from_uncommitted_code_says_so_in_titles_and_answer(tmp_path: Path) -> None:
    run = load_study(make_protocols_run(tmp_path), "protocols")
    dirty = replace(run, meta=replace(run.meta, environment=replace(run.meta.environment, git_commit="abc123+dirty")))
    assert dirty.title.endswith("; **made from uncommitted changes** to `abc123`")
    assert "Run `20260104T000000Z` was **made from uncommitted changes** to `abc123`" in answer(
        study("protocols"), [dirty]
    )
    assert "uncommitted" not in run.title + answer(study("protocols"), [run])


def finished(name: str, run_dir: Path) -> RunMeta:
    """The run's metadata as run-all finishes it: each study's entry with its targets, gates included."""
    run = load_study(run_dir, name)
    chosen = chosen_of(study(name), plan(name), [])
    entry = StudyEntry(run.entry.question, False, run.matrix, run.settings)
    done = finished_entry(chosen, entry, run, "complete", 60.0)
    return RunMeta(run.run_id, "today", run.meta.environment, {}, run.meta.pinning, Thresholds(), {name: done})


def test_a_failed_cell_in_a_study_other_than_stacks_fails_the_run(tmp_path: Path) -> None:
    reasons = failed_gates(finished("streaming", make_streaming_run(tmp_path)))
    assert reasons == [
        "streaming: target no_failed_cell not met",
        "streaming: target no_unexpected_non_ok not met",
    ]


def test_calls_a_study_measures_on_purpose_do_not_fail_the_run(tmp_path: Path) -> None:
    meta = finished("connections", make_connections_run(tmp_path))
    assert failed_gates(meta) == []  # the per-request S3 client's failures are the finding
    gates = {name for name, target in meta.studies["connections"].targets.items() if target.gate}
    assert gates == {"no_failed_cell", "no_unexpected_non_ok"}


def test_an_interrupted_study_fails_the_run(tmp_path: Path) -> None:
    meta = finished("connections", make_connections_run(tmp_path))
    stopped = replace(meta, studies={"connections": replace(meta.studies["connections"], status="interrupted")})
    assert failed_gates(stopped) == ["connections: interrupted"]


def test_run_all_exits_non_zero_when_a_gate_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import commands
    from harness.plan.options import RunOptions

    run_dir = make_streaming_run(tmp_path)
    meta = finished("streaming", run_dir)
    monkeypatch.setattr(commands, "run_all", lambda options, plans, display: (run_dir, meta))
    assert commands.run_all_command(RunOptions(tmp_path, studies=("streaming",))) == 1
    passing = replace(meta, studies={"streaming": replace(meta.studies["streaming"], targets={})})
    monkeypatch.setattr(commands, "run_all", lambda options, plans, display: (run_dir, passing))
    assert commands.run_all_command(RunOptions(tmp_path, studies=("streaming",))) == 0


# What measures: none of it may be imported to render a report.
MEASURING = (
    "harness.run.measure",
    "harness.run.runner",
    "harness.run.processes",
    "harness.run.backends",
    "harness.run.serving",
    "harness.run.resources",
    "harness.run.tools",
    "harness.run.provenance",
    "harness.run.soak",
    "harness.run.drivers.registry",
    "harness.run.drivers.ghz",
    "harness.run.drivers.loadgen",
    "harness.run.drivers.h2load",
    "harness.run.planning",
)


def test_reports_render_with_every_measuring_module_blocked(tmp_path: Path) -> None:
    """Import every report half and render every study's fixture run in a process where importing a measuring
    module (or any plan half) raises: `python -m harness report` needs the Python dependencies alone."""
    for make in MAKERS.values():
        make(tmp_path)
    script = textwrap.dedent(
        f"""
        import importlib.abc, sys
        from pathlib import Path

        class Blocked(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name in {MEASURING!r} or (name.startswith("harness.studies.") and name.endswith(".plan")):
                    raise ImportError(f"{{name}} measures: a report must not import it")
                return None

        sys.meta_path.insert(0, Blocked())
        from harness.render.compare import compare
        from harness.render.markdown import write_report
        from harness.studies import STUDIES

        written = write_report(Path({str(tmp_path)!r}))
        print(len(STUDIES), len(written))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    studies, written = map(int, done.stdout.split())
    assert studies == len(STUDIES) and written > len(STUDIES)
    assert {path.name for path in tmp_path.iterdir()} >= {each.name for each in STUDIES}


def test_a_run_in_rounds_tells_its_comparisons_with_intervals_and_decides(tmp_path: Path) -> None:
    run = load_study(make_blocks_run(tmp_path), "stacks")
    files = study("stacks").render(run)
    check_golden("stacks/rounds-comparisons.md", files["comparisons.md"].decode())
    assert files["charts/verdicts.png"].startswith(b"\x89PNG") and "charts/hello.png" not in files
    check_golden("stacks/rounds-answer.txt", answer(study("stacks"), [run]) + "\n")
    write_report(tmp_path)
    summary = (tmp_path / "README.md").read_text()
    decide = summary.split("## Decide", 1)[1].split("\n## ", 1)[0]
    assert summary.index("## Decide") < summary.index("## The answers")
    assert (
        "| Handlers without I/O: which stack? | **Pick aio-uvloop: the fastest, or within 5% of the fastest (95%)** | "
        "at least 1.26 × every rival (grpclib-uvloop binds); 1.28 [1.26, 1.30] × grpclib-uvloop | "
        "sync-w10 (0.77 [0.76, 0.79] of the pick) | ±2.1% | [stacks]"
    ) in decide


def test_a_finding_is_told_after_a_comparison_that_measured_what_it_explains(tmp_path: Path) -> None:
    run = load_study(make_blocks_run(tmp_path), "stacks")  # hello: sync-w10, aio-uvloop, grpclib-uvloop
    found = {
        "hello": Finding(("aio-uvloop", "sync-w10"), "Found of both."),
        "hello-wait": Finding(("aio-uvloop",), "Found on another topic."),
    }
    told = markdown(comparison_lines(run, replace(TELLING, found=found), judged_comparisons(run)))
    assert "Found of both." in told and "Found on another topic." not in told
    unmeasured = {"hello": Finding(("aio-uvloop", "connect-pyvoy"), "Found of one not measured.")}
    told = markdown(comparison_lines(run, replace(TELLING, found=unmeasured), judged_comparisons(run)))
    assert "Found of one not measured." not in told


def test_a_run_made_aside_is_shown_on_its_study_s_page_and_decides_nothing(tmp_path: Path) -> None:
    deciding = make_blocks_run(tmp_path)
    aside = tmp_path / "runs" / "20260108T000000Z"
    shutil.copytree(deciding, aside)
    meta = json.loads((aside / "run.json").read_text()) | {"run_id": aside.name, "aside": True}
    write_json_atomic(aside / "run.json", meta)
    write_report(tmp_path)
    page = (tmp_path / "stacks" / "README.md").read_text()
    answered, told = page.split("## Runs aside", 1)
    assert deciding.name in answered and aside.name not in answered
    assert f"- [`{aside.name}`](aside/{aside.name}/README.md), Test CPU A: aio-uvloop, grpclib-uvloop" in told
    assert "sync-w10 on hello" in told
    assert (tmp_path / "stacks" / "aside" / aside.name / "README.md").is_file()
    summary = (tmp_path / "README.md").read_text()
    assert aside.name not in summary.split("Runs: ", 1)[0]  # no row, no pair of runs side by side
    drawn, told = (tmp_path / "report.html").read_text().split("<h2>Runs aside</h2>", 1)
    card = f'id="stacks/{aside.name}/hello/c50"'
    assert card not in drawn and card in told.split("<h2>", 1)[0]  # drawn among the runs aside alone
    assert f"<code>{aside.name}</code>" in told.split("<h2>Provenance</h2>", 1)[1]


def test_a_comparison_of_ways_to_connect_is_told_by_its_labels_and_joins_the_decision_table(tmp_path: Path) -> None:
    run = load_study(make_connections_blocks_run(tmp_path), "connections")
    files = study("connections").render(run)
    assert {"comparisons.md", "charts/verdicts.png", "tables/comparisons.json"} <= set(files)
    check_golden("connections/rounds-comparisons.md", files["comparisons.md"].decode())
    check_golden("connections/rounds-answer.txt", answer(study("connections"), [run]) + "\n")
    write_report(tmp_path)
    decide = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
    assert (
        "| How should clients hold connections, and servers their S3 client? | **Pick shared: the fastest, or within "
        "5% of the fastest (95%); pool-10 could be as fast** | **not trusted**: a run before blocks. at least 0.99 × "
        "every rival (pool-10 binds); "
        "1.00 [0.99, 1.02] × pool-10; to close it: 1 run in blocks (about 10 min, as this run took) | per-call (0.50 "
        "[0.49, 0.51] of the pick) |"
    ) in decide  # made before blocks: certified, yet not trusted until a run in blocks


def test_verdicts_prints_every_comparison_of_the_newest_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_blocks_run(tmp_path)
    assert main(["verdicts", "--json", "--out", str(tmp_path)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(each["alternative"], each["verdict"], each["control"]) for each in found] == [
        ("aio-uvloop", "faster", False),
        ("grpclib-uvloop", "tie", False),
        ("sync-w10~aa", "tie", True),
    ]
    assert set(found[0]) == {
        "study",
        "workload",
        "alternative",
        "reference",
        "ratio",
        "low",
        "high",
        "verdict",
        "rounds",
        "control",
        "freedom",
        "plain",
        "moderated",
        "pooled",
    }
    assert found[0]["study"] == "stacks" and found[0]["workload"] == "hello/c50" and found[0]["rounds"] == 5
    assert found[0]["low"] < found[0]["ratio"] < found[0]["high"]
    assert main(["verdicts", "20260106T000000Z", "--out", str(tmp_path)]) == 0
    assert "aio-uvloop" in capsys.readouterr().out


def test_one_workload_measured_by_two_studies_of_a_run_is_set_side_by_side(tmp_path: Path) -> None:
    run_dir = make_blocks_run(tmp_path)  # the stacks study: hello/aio-uvloop/c50 among others, by ghz
    meta = json.loads((run_dir / "run.json").read_text())
    meta["studies"]["streaming"] = copy.deepcopy(meta["studies"]["stacks"]) | {"question": "streaming?"}
    meta["studies"]["streaming"]["matrix"]["driver"] = "loadgen"
    write_json_atomic(run_dir / "run.json", meta)
    cells = {
        "unary": CellRecord("hello", "aio-uvloop", 50, "ok", seconds=60.0),
        "stream": CellRecord("hello-stream", "aio-uvloop", 50, "ok", seconds=60.0),
    }
    noise = {"unary": [1.0, 1.01, 0.99, 1.0, 1.02], "unary~aa": [0.99, 1.0, 1.01, 1.02, 0.99]}
    noise["stream"] = [1.0, 1.0, 0.99, 1.01, 1.0]
    write_blocks(run_dir / "streaming", "one-message/aio-uvloop/c50", cells, {"unary": 3100, "stream": 2900}, noise, {})
    lines = markdown_lines(same_workloads([load_study(run_dir, "stacks"), load_study(run_dir, "streaming")]))
    (shared,) = [line for line in lines if line.startswith("| hello/aio-uvloop/c50 |")]
    assert "stacks (ghz): 3," in shared and "streaming (loadgen): 3," in shared
    assert shared.endswith("| 0.80 [0.65, 0.98] | unresolved: by loadgen against ghz | 0.244, 0.310 |")


def test_a_study_s_rows_are_trusted_by_its_one_a_a_control(tmp_path: Path) -> None:
    run_dir = make_blocks_run(tmp_path)  # hello/c50 with the study's control, a tie
    servers = ("sync-w10", "aio-uvloop")
    cells = {server: CellRecord("hello-wait", server, 50, "ok", seconds=60.0) for server in servers}
    noise = {"sync-w10": [1.0, 1.01, 0.99, 1.0, 1.02], "aio-uvloop": [1.0, 1.0, 0.99, 1.01, 1.0]}
    base = {"sync-w10": 95, "aio-uvloop": 460}
    write_blocks(run_dir / "stacks", "hello-wait/c50", cells, base, noise, {}, controlled=False, method=Method())

    def decide() -> list[str]:
        write_report(tmp_path)
        text = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
        return [line for line in text.splitlines() if line.startswith("| Handlers")]

    rows = decide()
    assert len(rows) == 2 and all("| ±" in row and "not trusted" not in row for row in rows)
    cells = {server: CellRecord("hello", server, 50, "ok", seconds=60.0) for server in servers}
    noise = {"sync-w10": [1.0, 1.01, 0.99, 1.0, 1.02], "sync-w10~aa": [1.2, 0.85, 1.15, 0.9, 1.1]}
    noise["aio-uvloop"] = [1.0, 1.0, 0.99, 1.01, 1.0]
    write_blocks(
        run_dir / "stacks", "hello/c50", cells, {"sync-w10": 3000, "aio-uvloop": 3900}, noise, {}, method=Method()
    )
    rows = decide()  # a control that holds 1 but is wider than the band: the floor is its half-width, rows stand
    assert len(rows) == 2 and all("| ±18.5% | [stacks]" in row and "not trusted" not in row for row in rows)
    noise["sync-w10~aa"] = [1.2, 1.21, 1.19, 1.2, 1.22]  # a control that excludes 1: the method failed here
    write_blocks(
        run_dir / "stacks", "hello/c50", cells, {"sync-w10": 3000, "aio-uvloop": 3900}, noise, {}, method=Method()
    )
    rows = decide()
    assert len(rows) == 2 and all("**not trusted**: the A/A control separated, 1.20 [" in row for row in rows)


def test_what_tls_costs_stays_open_until_its_cost_is_known_and_says_what_would_know_it(tmp_path: Path) -> None:
    """The way to hold connections under TLS is certified, but TLS's cost scatters (about ±15% over 5 blocks): the
    row is not answered, says why beside the certified way, and how many more blocks would know the cost."""
    run_dir = make_wire_run(tmp_path)
    handshake = "TLSv1.3 TLS_AES_128_GCM_SHA256, h2"
    ways = {
        "shared": CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0),
        "shared+tls": CellRecord("hello", "aio-uvloop", 100, "ok", seconds=60.0, wire="tls", tls=handshake),
        "per-call+tls": CellRecord(
            "hello", "aio-uvloop", 100, "ok", seconds=60.0, connections="per-call", wire="tls", tls=handshake
        ),
    }
    base = {"shared": 3000, "shared+tls": 2700, "per-call+tls": 1200}
    noise = {"shared": [1.0] * 5, "shared+tls": [1.0, 1.2, 0.82, 1.18, 0.85], "per-call+tls": [1.0] * 5}
    write_blocks(run_dir / "wire", "connections-tls/aio-uvloop/c100", ways, base, noise, {}, controlled=False)
    (tls,) = [
        each
        for each in study("wire").decisions([load_study(run_dir, "wire")])
        if each.workload.startswith("connections-tls")
    ]
    assert tls.pick == "shared+tls" and not answered(tls)
    assert tls.verdict == "certified; TLS's cost not yet known to ±5%"
    assert tls.closing.startswith("about ") and " more blocks: " in tls.closing  # the verdict says what is unknown


def test_yes_or_no_questions_are_answered_yes_or_no_first(tmp_path: Path) -> None:
    """What TLS costs leads with TLS against plaintext on the same connection, then how to hold connections under
    it (not a plaintext way, which no TLS user can pick); would REST do leads with REST against gRPC unary, then the
    fastest shape."""
    (tls,) = [
        each
        for each in study("wire").decisions([load_study(make_wire_run(tmp_path), "wire")])
        if each.workload.startswith("connections-tls")
    ]
    assert tls.pick == "shared+tls"  # the way to pick under TLS, never a plaintext one
    assert tls.told.startswith("TLS serves 0.90 [") and "× plaintext on one shared connection (slower, known to ±" in (
        tls.told
    )
    assert tls.told.split("; ")[1] == "under TLS: Pick shared+tls: the fastest, or within 5% of the fastest (95%)"
    assert tls.certified and tls.over is not None and tls.over.value > 2.2  # over per-call+tls
    run_dir = tmp_path / "runs" / "20260109T000000Z"
    write_json_atomic(run_dir / "run.json", study_meta("20260109T000000Z", "protocols", {"aio-uvloop": None}, []))
    shapes = {"unary": 4000, "pipelined": 30000, "rest-h1": 6000, "rest-h2": 2000}
    cells = {
        label: CellRecord(f"info-{label}", label if label.startswith("rest") else "aio-uvloop", 16, "ok", seconds=60.0)
        for label in shapes
    }
    noise = {label: [1.0, 1.01, 0.99, 1.0, 1.02] for label in [*shapes, "unary~aa"]}
    write_blocks(run_dir / "protocols", "info/aio-uvloop/c16", cells, shapes, noise, {})
    (rest,) = study("protocols").decisions([load_study(run_dir, "protocols")])
    assert rest.told.startswith("Yes: rest-h1 serves 1.50 [") and rest.told.endswith(
        "× gRPC unary; the call shape: Pick pipelined: the fastest, or within 5% of the fastest (95%)"
    )


def test_the_wire_sizes_table_gives_mb_per_second_cpu_per_mb_and_p99(tmp_path: Path) -> None:
    run = load_study(make_wire_run(tmp_path), "wire")
    told = study("wire").section([run])
    check_golden("wire/sizes.md", told[told.index("Reply payload moved") :])


def test_a_run_of_the_brief_s_matrix_tells_its_levels_and_decides_the_brief_s_questions(tmp_path: Path) -> None:
    run = load_study(make_brief_run(tmp_path), "stacks")
    files = study("stacks").render(run)
    assert {"brief/level-2.md", "brief/level-50.md", "charts/s3-unary-by-clients.png"} <= set(files)
    assert "charts/s3-mongo-by-clients.png" not in files  # one level: no line to draw
    level = files["brief/level-50.md"].decode()
    assert "### s3-mongo/c50" in level and "### hello/c2" not in level
    assert "| stack | OK calls/s [95% CI] | × sync-w10 [95% CI] | verdict | this run alone | p50 | p99 |" in level
    section = study("stacks").section([run])
    assert (
        "**s3-unary across levels**" in section and "| sync-w1 | 974 [846, 1,122] × 1.00 [0.97, 1.02] tie |" in section
    )
    rows = {(each.question, each.workload): each for each in study("stacks").decisions([run])}
    hello = rows[("Handlers without I/O: which stack?", "hello/c50")]
    assert (hello.pick, hello.runner_up, hello.trusted) == ("grpclib-uvloop", "sync-w10", True)
    mongo = rows[("S3 to MongoDB on an event loop: Motor or PyMongo's async client?", "s3-mongo/c50/grpclib-uvloop")]
    assert mongo.certified and mongo.contenders == ("Motor", "PyMongo's async client")  # they tie: either will do
    assert mongo.comparison == "s3-mongo/c50"
    stream = rows[("An S3 listing: one reply or a stream?", "s3-unary/c50/grpclib-uvloop")]
    assert stream.pick == "a stream" and stream.over is not None and 1.10 < stream.over.value < 1.20
    waits = rows[("Handlers waiting on I/O: does async pay off, and on which stack?", "hello-wait/c50")]
    assert waits.told.startswith("Yes: grpclib-uvloop serves 4.59 [4.4") and waits.told.endswith(
        "× sync-w10, the fastest sync server"
    )
    threads = rows[("grpcio sync: one worker thread or ten?", "hello/c50/hello")]
    assert (threads.pick, threads.verdict, threads.contenders) == ("ten threads", "certified", ("ten threads",))
    tied = rows[("grpcio sync: one worker thread or ten?", "s3-unary/c50/s3-unary")]
    assert tied.certified and len(tied.contenders) == 2
    write_report(tmp_path)
    decide = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
    assert "| S3 to MongoDB on an event loop: Motor or PyMongo's async client? | **" in decide


def test_a_row_is_trusted_on_the_blocks_validation_holds_at_on_its_machine_class(tmp_path: Path) -> None:
    run_dir = make_brief_run(tmp_path)
    machine = read_meta(run_dir).cpu_class

    def held(blocks: int, good: float) -> Held:
        return Held(blocks, 0.95, 0.95, good, 1000, 200, 100, LEAST_CLASS_RUNS)

    two_fail = Calibration({machine: (held(2, 0.90), held(3, 0.97)), ALL_CLASSES: (held(2, 0.98),)})
    write_calibration(tmp_path / CALIBRATION, two_fail, {machine: ["r"], ALL_CLASSES: ["r"]}, 10, 0)
    load_calibration.cache_clear()
    run = load_study(run_dir, "stacks")
    judged = next(each for each in judged_comparisons(run) if each.record.workload == "hello/c2")
    assert judged.least_trusted == 3
    cut = replace(
        judged, rates={label: dict(list(rates.items())[:2]) for label, rates in judged.rates.items()}, pool=None
    )
    why = "validation does not hold at 2 blocks"
    assert distrust(cut, run, ["grpclib-uvloop", "sync-w10"]) == why
    assert distrust(judged, run, ["grpclib-uvloop", "sync-w10"]) == ""
    made = decision("q?", cut, run, "")
    assert made is not None and not made.trusted and made.why == why
    row = decision_rows([made])[0]
    assert not row.trusted and row.why == why and f"Not to be trusted yet ({why})" in row.answer
    assert replace(cut, least_trusted=2).trusted_at(2)  # where 2 blocks hold, the same row is trusted
    load_calibration.cache_clear()


def test_what_it_would_take_to_close_a_comparison_is_the_blocks_its_spread_needs() -> None:
    from harness.analysis.closing import MOST_BLOCKS_SAID, blocks_to_close

    assert blocks_to_close(0.0, 0.05) == 2
    assert blocks_to_close(0.05, 0.05) == 7  # t(6) 2.447 x 5% / sqrt 7 = 4.6% <= log 1.05; six give 5.25%
    assert blocks_to_close(0.10, 0.05) > blocks_to_close(0.05, 0.05)
    assert blocks_to_close(5.0, 0.05) == MOST_BLOCKS_SAID + 1


def test_a_row_is_pooled_over_the_runs_of_its_machine_class_and_code(tmp_path: Path) -> None:
    make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07", shift=1.0)
    make_brief_run(tmp_path, "20260108T120000Z", "2026-01-08", shift=1.1)
    write_report(tmp_path)
    decide = (tmp_path / "README.md").read_text().split("## Decide", 1)[1].split("\n## ", 1)[0]
    hello = next(line for line in decide.splitlines() if line.startswith("| Handlers without I/O: which stack?"))
    assert "over 2 runs on 2 days (the runs disagree); this run alone: 1.31 [1.28, 1.35], faster" in hello
    newest = load_study(tmp_path / "runs" / "20260108T120000Z", "stacks")
    judged = next(each for each in judged_comparisons(newest) if each.record.workload == "hello/c50")
    pooled, alone = judged.over("sync-w1", "sync-w10"), judged.alone("sync-w1", "sync-w10")
    assert pooled is not None and alone is not None and pooled.runs == 2 and pooled.ratio.blocks == 10
    assert not pooled.disagree and pooled.ratio.value == pytest.approx(alone.value)  # two runs that agree
    apart = judged.over("grpclib-uvloop", "sync-w10")  # runs 10% apart, beyond their errors: wider, and said
    lone = judged.alone("grpclib-uvloop", "sync-w10")
    assert apart is not None and lone is not None and apart.disagree and apart.ratio.half_width > lone.half_width
    outcome = judged.outcome("grpclib-uvloop")
    assert outcome is not None and outcome.runs == 2 and outcome.alone is not None


def test_a_change_to_one_server_module_keeps_the_pools_of_every_label_that_does_not_run_it(tmp_path: Path) -> None:
    make_brief_run(tmp_path, "20260107T000000Z", "2026-01-07", shift=1.0)
    newest_dir = make_brief_run(tmp_path, "20260108T120000Z", "2026-01-08", shift=1.1)
    data = json.loads((newest_dir / "run.json").read_text())
    data["environment"]["module_codes"]["servers.async"] = "async-code-changed"  # grpclib's module changed
    write_json_atomic(newest_dir / "run.json", data)
    judged = next(
        each for each in judged_comparisons(load_study(newest_dir, "stacks")) if each.record.workload == "hello/c50"
    )
    sync_w1, grpclib = judged.over("sync-w1", "sync-w10"), judged.over("grpclib-uvloop", "sync-w10")
    assert sync_w1 is not None and sync_w1.runs == 2  # neither runs servers/async.py: it still pools
    assert grpclib is not None and grpclib.runs == 1  # grpclib's code changed: this run alone
    twin = judged.control
    assert twin is not None and twin.runs == 2  # the A/A twin runs the reference's code


def test_the_newest_interpreters_row_gives_each_ratio_and_its_gil_and_protobuf(tmp_path: Path) -> None:
    """3.14 against 3.11 over the stacks it ran on, as its least and most ratio, and what each build did: a
    free-threaded one says whether the GIL stayed off; protobuf's backend where the run recorded it."""
    run_dir = make_interpreters_run(tmp_path)
    data = read_json(run_dir / "run.json")
    data["interpreters"]["3.14"]["protobuf_implementation"] = "upb"
    write_json_atomic(run_dir / "run.json", data)
    (newest,) = [
        each
        for each in study("interpreters").decisions([load_study(run_dir, "interpreters")])
        if each.question.startswith("What do 3.14")
    ]
    lead = newest.lead
    assert lead.startswith("3.14 1.1") and lead.endswith("× 3.11 (protobuf upb)"), lead
    assert "3.14t" not in lead  # it could not run the stacks: no ratio to give
    assert newest.verdict == "over 2 stacks (aio-uvloop, sync-w10)"
