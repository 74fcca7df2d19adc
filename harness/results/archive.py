"""One file a run: a finished run's folder packed into `runs/<run-id>.json.gz`, which is what the repository keeps,
and unpacked back into its folder (git-ignored) before anything reads it.

A run writes its records as many small JSON files while it measures, each written whole (harness.results.files);
once it has finished, `pack` gathers them, path by path and byte for byte, into one gzipped JSON document with a
schema version, written atomically (pyperf's `BenchmarkSuite.dump` to `.json.gz`; asv's `Results.save` with an
`api_version`). `unpacked` restores every packed run whose folder is missing, so the readers of a run's records
read the same files from a clean clone as on the machine that ran it."""

from __future__ import annotations

import gzip
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.results.files import write_bytes_atomic

ARCHIVE_SCHEMA = 1
SUFFIX = ".json.gz"


def archive_path(run_dir: Path) -> Path:
    """Where a run's folder is packed: beside it, `<run-id>.json.gz`."""
    return run_dir.with_name(run_dir.name + SUFFIX)


def pack(run_dir: Path) -> Path:
    """A finished run's folder as one file beside it: every file's text by its path within the run. The folder
    stays, as the file unpacks to."""
    files = {
        path.relative_to(run_dir).as_posix(): path.read_text()
        for path in sorted(run_dir.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }
    if "run.json" not in files:
        raise FileNotFoundError(f"{run_dir} holds no run.json: not a run to pack")
    document = {"schema": ARCHIVE_SCHEMA, "run_id": run_dir.name, "files": files}
    target = archive_path(run_dir)
    # mtime=0: the same run packs to the same bytes, so that packing again changes nothing git sees
    write_bytes_atomic(target, gzip.compress(json.dumps(document, ensure_ascii=False).encode(), mtime=0))
    return target


def read_archive(archive: Path) -> dict[str, Any]:
    """A packed run's document, its schema checked."""
    document = json.loads(gzip.decompress(archive.read_bytes()))
    if document.get("schema") != ARCHIVE_SCHEMA:
        raise ValueError(f"{archive}: archive schema {document.get('schema')!r}, this harness reads {ARCHIVE_SCHEMA}")
    return dict(document)


def unpack(archive: Path) -> Path:
    """A packed run's folder beside its file, whole or not at all (written aside, then renamed into place); where
    another process unpacked it first, theirs stands."""
    target = archive.with_name(archive.name.removesuffix(SUFFIX))
    if (target / "run.json").is_file():  # unpacked before: nothing to read
        return target
    document = read_archive(archive)
    with tempfile.TemporaryDirectory(prefix=f".{target.name}.", dir=archive.parent) as scratch:
        folder = Path(scratch) / target.name
        for name, text in document["files"].items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        if target.exists() and not (target / "run.json").is_file():  # a folder left half-made, not a run's
            shutil.rmtree(target)
        try:
            folder.rename(target)
        except OSError:
            if not (target / "run.json").is_file():
                raise
    return target


def unpacked(runs_dir: Path) -> None:
    """Every run packed under runs_dir that has no folder yet, unpacked beside its file."""
    if not runs_dir.is_dir():
        return
    for archive in sorted(runs_dir.glob(f"*{SUFFIX}")):
        unpack(archive)


def run_files(runs_dir: Path) -> list[Path]:
    """Every run's run.json under runs_dir, oldest first, the packed ones unpacked first."""
    unpacked(runs_dir)
    return sorted(runs_dir.glob("*/run.json"))
