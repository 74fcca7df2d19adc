"""Interpreters as an axis: finding them, the interpreters study's plan, and a server run by another interpreter's
virtualenv (live, skipped where the machine lacks the interpreter)."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from harness.analysis.decision import answered
from harness.plan import pythons
from harness.plan.interpreter import GRPCIO_FREE_THREADED_CFLAGS, MARKER, NotFound
from harness.plan.matrix import HELLO_WORK, Cell, scenario
from harness.plan.options import RunOptions
from harness.plan.pythons import Prepared
from harness.plan.servers import server_variant
from harness.render.table import markdown
from harness.results.records import StudyRun, load_study
from harness.results.run_context import InterpreterRecord
from harness.results.run_meta import RunMeta
from harness.run.backends import Backends
from harness.run.blocks import window_cpus
from harness.run.drivers.loadgen import loadgen_argv
from harness.run.serving import running_server
from harness.studies import study
from harness.studies.interpreters import CORES_LEVEL, LEVEL, REFERENCE
from harness.studies.interpreters.plan import comparisons
from harness.studies.interpreters.report import SPREAD_QUESTION, free_threaded, interpreters_table
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from tests.runs import make_interpreters_run, meta


def _prepared(name: str, *, unavailable: dict[str, str] | None = None, gil: bool = True) -> Prepared:
    modules = ("servers.sync", "servers.async", "servers.aio", "servers.rest")
    return Prepared(
        name, f"/venvs/{name}/bin/python", {"version": name}, dict.fromkeys(modules, gil), unavailable or {}
    )


def test_a_name_is_a_version_a_free_threaded_version_or_a_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(pythons, "PYTHONS_DIR", tmp_path / "built")
    with pytest.raises(NotFound, match=r"3\.X, 3\.Xt"):
        pythons.find("python-latest")
    with pytest.raises(NotFound, match="not an executable"):
        pythons.find(str(tmp_path / "nowhere" / "python"))
    with pytest.raises(NotFound, match=r"pythons build 3\.14t"):  # the one the project can build says how
        pythons.find("3.14t")
    with pytest.raises(NotFound) as missing:
        pythons.find("3.9")
    assert "pythons build" not in str(missing.value)
    for version in ("3.12.1", "3.12.10", "3.12.2t"):  # the newest patch of the build asked for
        (tmp_path / "pyenv" / "versions" / version / "bin").mkdir(parents=True)
        (
            tmp_path / "pyenv" / "versions" / version / "bin" / f"python3.12{'t' if version.endswith('t') else ''}"
        ).touch()
    assert pythons.find("3.12").executable == tmp_path / "pyenv/versions/3.12.10/bin/python3.12"
    assert pythons.find("3.12t").executable == tmp_path / "pyenv/versions/3.12.2t/bin/python3.12t"
    assert pythons.find("3.12t").free_threaded and not pythons.find("3.12").free_threaded
    assert pythons.find(sys.executable).origin == "path given"


def test_building_asks_for_an_interpreter_it_has_sources_for() -> None:
    with pytest.raises(NotFound, match=r"can build 3\.14, 3\.14t"):
        pythons.build("3.13")


def test_every_interpreter_is_set_against_3_11_and_rest_only_where_it_serves_the_call(tmp_path: Path) -> None:
    prepared = (_prepared("3.11"), _prepared("3.12"), _prepared("3.14t", unavailable={"servers.sync": "no grpcio"}))
    options = RunOptions(tmp_path, pythons=("3.11", "3.12", "3.14t"), interpreters=prepared)
    found = {each.workload: each for each in comparisons(options)}
    sync = found[f"interpreter/hello-work/sync-w10/c{LEVEL}"]
    assert sync.reference[0] == REFERENCE and [label for label, _ in sync.alternatives] == ["3.12"]
    assert sync.reference[1].server.python == "/venvs/3.11/bin/python"
    assert sync.reference[1].server.name == "sync-w10@3.11"
    aio = found[f"interpreter/hello/aio-uvloop/c{LEVEL}"]
    assert [label for label, _ in aio.alternatives] == ["3.12", "3.14t"]
    rest = found[f"interpreter/hello/rest-h1/c{LEVEL}"]
    assert rest.driver == "loadgen"
    assert not any(name.startswith("interpreter/s3-unary-100ms/rest-h1") for name in found)
    cores = found[f"cores/sync-w10/c{CORES_LEVEL}"]
    assert cores.unpinned and [label for label, _ in cores.alternatives] == ["p2", "p2+per-worker"]
    assert cores.alternatives[0][1].server.args[-2:] == ("-p", "2")


def test_scenarios_narrow_the_study_to_its_rows_and_hello_work_alone_keeps_the_cores_comparisons(
    tmp_path: Path,
) -> None:
    prepared = (_prepared("3.11"), _prepared("3.12"))
    work = RunOptions(tmp_path, pythons=("3.11", "3.12"), interpreters=prepared, scenarios=(HELLO_WORK,))
    found = [each.workload for each in comparisons(work)]
    assert all(name.startswith(("interpreter/hello-work/", "cores/")) for name in found)
    assert f"cores/sync-w10/c{CORES_LEVEL}" in found and f"interpreter/hello-work/sync-w10/c{LEVEL}" in found
    hello = RunOptions(tmp_path, pythons=("3.11", "3.12"), interpreters=prepared, scenarios=(scenario("hello"),))
    assert all(each.workload.startswith("interpreter/hello/") for each in comparisons(hello))


def test_the_free_threaded_build_adds_threads_where_grpcio_left_the_gil_off(tmp_path: Path) -> None:
    prepared = (_prepared("3.11"), _prepared("3.14t", gil=False))
    options = RunOptions(tmp_path, pythons=("3.11", "3.14t"), interpreters=prepared, available_cpus=(0, 1))
    found = {each.workload: each for each in comparisons(options)}
    labels = dict(found[f"cores/sync-w10/c{CORES_LEVEL}"].alternatives)
    assert labels["threads@3.14t"].server.name == "sync-w20@3.14t"
    assert "threads@3.14t" not in dict(found[f"cores/aio-uvloop/c{CORES_LEVEL}"].alternatives)  # no thread pool
    held = (_prepared("3.11"), _prepared("3.14t", gil=True))
    options = RunOptions(tmp_path, pythons=("3.11", "3.14t"), interpreters=held, available_cpus=(0, 1))
    assert "threads@3.14t" not in dict(
        {each.workload: each for each in comparisons(options)}[f"cores/sync-w10/c{CORES_LEVEL}"].alternatives
    )


def test_loadgen_drives_rest_hello_with_the_scenarios_fields() -> None:
    argv = loadgen_argv("loadgen", Cell(server_variant("rest-h1"), HELLO_WORK, 50), "127.0.0.1:1", 500)
    assert argv[argv.index("-work") + 1] == "10" and argv[argv.index("-http") + 1] == "1.1"
    grpc_argv = loadgen_argv("loadgen", Cell(server_variant("sync-w10"), scenario("hello"), 5), "127.0.0.1:1", 50)
    assert "-http" not in grpc_argv and "-work" not in grpc_argv


OTHER = "3.12"


@pytest.mark.live
def test_a_server_runs_under_another_interpreters_virtualenv(backends: Backends) -> None:
    try:
        interpreter = pythons.find(OTHER)
    except NotFound as missing:
        pytest.skip(f"this machine lacks CPython {OTHER}: {missing}")
    prepared = pythons.prepare(OTHER, ["servers.sync"])
    assert prepared.runs("servers.sync"), prepared.unavailable
    assert prepared.about["version"].startswith(OTHER) and prepared.gil["servers.sync"] is True
    variant = server_variant("sync-w10").under(OTHER, prepared.python)
    with running_server(variant, backends.env()) as (target, child), grpc.insecure_channel(target) as channel:
        reply = bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="x", work=1), timeout=10)
        assert reply.message
        executable = Path(os.readlink(f"/proc/{child.pid}/exe"))
    assert executable.resolve() == interpreter.executable.resolve()
    assert json.loads((Path(prepared.python).parent.parent / MARKER).read_text())["missing"] == {}


def test_an_unpinned_comparison_names_every_cpu_for_its_server(tmp_path: Path) -> None:
    # Left without taskset, the server would inherit the harness's affinity, which is off the server's CPUs.
    options = RunOptions(tmp_path, server_cpus=(1,), available_cpus=(0, 1))
    pinned = next(each for each in comparisons(options) if not each.unpinned)
    unpinned = next(each for each in comparisons(options) if each.unpinned)
    assert window_cpus(unpinned, options) == (0, 1) and window_cpus(pinned, options) == (1,)


def test_the_free_threaded_outcome_names_its_evidence(tmp_path: Path) -> None:
    about = {
        "version": "3.14.7",
        "free_threaded": True,
        "gil_enabled_after_import": {"servers.sync": False, "servers.rest": False, "servers.async": True},
        "grpcio_cflags": GRPCIO_FREE_THREADED_CFLAGS,
        "protobuf_implementation": "python",
        "compiled_here": ["grpcio"],
        "unavailable": {"servers.connect": "ImportError: no pyvoy"},
    }
    prepared = {"3.11": InterpreterRecord(version="3.11.7"), "3.14t": InterpreterRecord.from_json(about)}
    run = StudyRun("interpreters", tmp_path, replace(RunMeta.from_json(meta("r", "cpu")), interpreters=prepared), [])
    said = free_threaded(run)
    assert said.startswith("Under 3.14t (3.14.7), the GIL stayed off once sync, rest had imported their stack")
    assert "it came back on importing async" in said and "connect could not run" in said
    assert "grpcio was compiled here with `-DCYTHON_FREETHREADING_COMPATIBLE=1`" in said
    assert "protobuf ran its pure-Python implementation" in said
    assert "3.11" not in said  # only free-threaded builds are told
    table = markdown(interpreters_table(run))
    assert (
        "| 3.14t | 3.14.7 | — | — | sync off, rest off, async on | python | grpcio | — | — | "
        "connect: ImportError: no pyvoy |" in table
    )


def test_the_cores_comparison_says_whether_so_reuseport_spread_the_calls_over_the_processes(tmp_path: Path) -> None:
    run = load_study(make_interpreters_run(tmp_path), "interpreters")
    (row,) = [each for each in study("interpreters").decisions([run]) if each.question == SPREAD_QUESTION]
    assert row.told == (
        "Yes: on a connection per worker (p2+per-worker, 51% / 49%), not on one shared connection (p2, 100% / 0%)"
    )
    assert row.verdict == "spread on a connection per worker" and row.pick == "p2+per-worker" and answered(row)
