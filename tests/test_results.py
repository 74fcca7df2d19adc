"""Result files: atomic writes, typed records that round-trip, metadata without credentials."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from harness.paths import ROOT
from harness.results.archive import pack, unpack
from harness.results.files import read_json, write_json_atomic
from harness.results.records import (
    CellRecord,
    Repeat,
    ResourceUsage,
    all_runs,
    load_cells,
    resolve_run,
    save_cell,
)
from harness.results.run_context import DIRTY
from harness.results.run_meta import RunMeta
from harness.run import provenance
from harness.run.backends import Backends
from harness.run.provenance import environment
from scenarios.config import BackendConfig
from tests.runs import ghz_report, meta


def test_atomic_write_leaves_the_old_file_whole_on_failure(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    write_json_atomic(path, {"status": "complete"})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"status": object()})
    assert json.loads(path.read_text()) == {"status": "complete"}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_atomic_write_replaces_and_creates_parents(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b.json"
    write_json_atomic(path, [1])
    write_json_atomic(path, [2])
    assert json.loads(path.read_text()) == [2]


def test_cell_record_round_trips() -> None:
    usage = ResourceUsage(wall_seconds=2.0, cpu_seconds=1.5, peak_cpu_percent=99.5, peak_rss_bytes=123)
    record = CellRecord("hello", "sync-w1", 10, "ok", repeats=[Repeat("cells/x-r1.json", 100, usage, 0.7)], seconds=4.5)
    again = CellRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert again == record
    assert again.repeats[0].resources.average_cpu_percent == pytest.approx(75.0)
    assert record.stem == "cells/hello/sync-w1/c10"


def test_a_cell_not_on_one_shared_connection_is_named_by_how_and_loaded_apart_from_its_reports(
    tmp_path: Path,
) -> None:
    usage = ResourceUsage(wall_seconds=1.0, cpu_seconds=0.5, peak_cpu_percent=50.0, peak_rss_bytes=1)
    for connections in ("shared", "per-worker", "pool-10"):
        record = CellRecord("hello", "sync-w1", 10, "ok", connections=connections)
        report = f"{record.stem}-r1.json"
        write_json_atomic(tmp_path / report, ghz_report(ok=10, seconds=1.0, latency_ms=1.0))
        save_cell(tmp_path, replace(record, repeats=[Repeat(report, 10, usage)]))
    loaded = {cell.record.key: cell for cell in load_cells(tmp_path)}
    assert sorted(loaded) == ["hello/sync-w1/c10", "hello/sync-w1/c10+per-worker", "hello/sync-w1/c10+pool-10"]
    assert loaded["hello/sync-w1/c10+pool-10"].record.connections == "pool-10"
    assert all(cell.reports[0].ok == 10 for cell in loaded.values())


def test_a_repeat_from_before_driver_cpu_was_measured_reads() -> None:
    usage = {"wall_seconds": 1.0, "cpu_seconds": 0.5, "peak_cpu_percent": 60.0, "peak_rss_bytes": 1}
    old = Repeat.from_json({"ghz_file": "cells/a-r1.json", "requests": 5, "resources": usage})
    assert (old.report_file, old.driver_cpu_seconds) == ("cells/a-r1.json", None)


def test_a_legacy_run_holds_one_study_whose_folder_is_the_run_itself(tmp_path: Path) -> None:
    raw = meta("r", "cpu")
    legacy = {**raw, "schema": 1, "matrix": raw["studies"]["stacks"]["matrix"], "targets": {}}
    del legacy["studies"]
    old, new = RunMeta.from_json(legacy), RunMeta.from_json(raw)
    assert list(old.studies) == ["stacks"] and old.studies["stacks"].matrix == new.studies["stacks"].matrix
    assert old.study_dir(tmp_path, "stacks") == tmp_path
    assert new.study_dir(tmp_path, "stacks") == tmp_path / "stacks"


def test_every_committed_run_reads_back_typed_and_keeps_each_recorded_field() -> None:
    """RunMeta.from_json over every committed run, then to_json: each field a run of schema 2 or 3 recorded is
    written back as it was (a field it did not record may be added, at its default)."""

    def lost(raw: Any, written: Any, where: str) -> list[str]:
        if not isinstance(raw, dict):
            return [] if raw == written else [f"{where}: {raw!r} became {written!r}"]
        if not isinstance(written, dict):
            return [f"{where}: {raw!r} became {written!r}"]
        return [
            found
            for key, value in raw.items()
            if value is not None or written.get(key) is not None
            for found in (lost(value, written[key], f"{where}/{key}") if key in written else [f"{where}/{key} lost"])
        ]

    runs = all_runs(ROOT / "results")
    assert runs
    for run in runs:
        raw = read_json(run / "run.json")
        meta_read = RunMeta.from_json(raw)
        assert meta_read.run_id == run.name and meta_read.studies
        if raw["schema"] >= 2:
            assert lost(raw, meta_read.to_json(), run.name) == []


def test_a_run_is_found_by_id_or_directory(tmp_path: Path) -> None:
    write_json_atomic(tmp_path / "runs" / "20260101T000000Z" / "run.json", {})
    assert resolve_run(tmp_path, "20260101T000000Z") == tmp_path / "runs" / "20260101T000000Z"
    assert resolve_run(tmp_path, str(tmp_path / "runs" / "20260101T000000Z")).name == "20260101T000000Z"
    with pytest.raises(FileNotFoundError, match="no run 'x'"):
        resolve_run(tmp_path, "x")


def test_cell_record_refuses_another_schema() -> None:
    with pytest.raises(ValueError, match="schema"):
        CellRecord.from_json({"schema": 99})


def test_environment_metadata_names_every_installed_package_and_the_tools_run() -> None:
    env = environment({"ghz": "ghz v0.121.0 (it reports `dev`)"})
    assert env["ghz"] == env["tools"]["ghz"] == "ghz v0.121.0 (it reports `dev`)"
    assert env["cpu_count"] >= 1
    expected = {"grpcio", "grpclib", "uvloop", "boto3", "aioboto3", "pymongo", "motor", "fastapi", "hypercorn"}
    assert set(env["packages"]) >= expected | {"connectrpc", "pyvoy", "uvicorn", "pytest"}
    assert env["packages"]["grpcio"][0].isdigit()
    assert len(env["git_commit"]) >= 40 or env["git_commit"] == "unknown"


def test_a_checkout_is_dirty_for_changed_code_but_not_for_rendered_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True)

    (tmp_path / "results").mkdir()
    for name in ("code.py", "results/README.md"):
        (tmp_path / name).write_text("one\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    monkeypatch.setattr(provenance, "ROOT", tmp_path)
    (tmp_path / "results" / "README.md").write_text("rendered by the run before\n")
    assert not provenance.git_commit().endswith(DIRTY)
    (tmp_path / "code.py").write_text("two\n")
    assert provenance.git_commit().endswith(DIRTY)


def test_backend_description_never_holds_credentials() -> None:
    config = BackendConfig(
        s3_endpoint="http://127.0.0.1:9000",
        s3_access_key="AKIDSECRET",
        s3_secret_key="very-secret",
        mongo_uri="mongodb://user:hunter2@db:27017/x",
    )
    described = json.dumps(Backends(config, "versitygw", "external").describe())
    for secret in ("AKIDSECRET", "very-secret", "hunter2", "user:"):
        assert secret not in described
    assert "db:27017" in described


def test_a_run_packs_into_one_file_and_unpacks_byte_for_byte(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20260101T000000Z"
    write_json_atomic(run / "run.json", {"run_id": run.name})
    write_json_atomic(run / "stacks" / "cells" / "hello" / "sync-w10" / "c2.json", {"ok": 1, "name": "ß"})
    files = {path.relative_to(run): path.read_bytes() for path in run.rglob("*") if path.is_file()}
    archive = pack(run)
    assert archive == tmp_path / "runs" / "20260101T000000Z.json.gz"
    assert pack(run).read_bytes() == archive.read_bytes()  # packing again changes nothing git sees
    shutil.rmtree(run)
    assert all_runs(tmp_path) == [run]  # unpacked before it is listed
    assert {path.relative_to(run): path.read_bytes() for path in run.rglob("*") if path.is_file()} == files
    assert unpack(archive) == run  # a folder already there stands


def test_an_archive_of_another_schema_is_refused_by_name(tmp_path: Path) -> None:
    archive = tmp_path / "20260101T000000Z.json.gz"
    archive.write_bytes(gzip.compress(json.dumps({"schema": 99, "run_id": "x", "files": {}}).encode()))
    with pytest.raises(ValueError, match="archive schema 99"):
        unpack(archive)
    assert not (tmp_path / "x").exists()


def test_a_folder_without_run_json_is_not_packed(tmp_path: Path) -> None:
    (tmp_path / "20260101T000000Z").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no run\.json"):
        pack(tmp_path / "20260101T000000Z")
