"""The committed stubs are what `make protos` generates from bench.proto today."""

from __future__ import annotations

from protos.generate import stale_files


def test_generated_stubs_are_fresh() -> None:
    assert stale_files() == []
