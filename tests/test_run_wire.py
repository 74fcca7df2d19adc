"""The wire study end to end: plaintext, TLS and mutual TLS, the ways to connect over TLS, large messages and the
brief's S3 work over TLS, in three small run-alls in blocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.results.records import all_runs
from tests.runs import RUN_TIMEOUT, harness

# Every test here reads a run-all of real servers and tools, its own: each gets a run's timeout.
pytestmark = [pytest.mark.usefixtures("tools"), pytest.mark.timeout(RUN_TIMEOUT)]


def wire_run(tmp_path: Path, scenarios: str) -> tuple[Path, set[tuple[str, str]]]:
    """A wire study's run of these scenarios on a thread pool, an event loop and REST, two blocks of one cycle:
    its run directory and its comparisons' (workload, alternative) pairs."""
    args = ["--study", "wire", "--servers", "sync-w10,aio-uvloop,rest-h1", "--scenarios", scenarios, "--requests", "20"]
    harness("run-all", *args, "--blocks", "2", "--cycles", "1", "--seed", "5", "--out", str(tmp_path))
    (run_dir,) = all_runs(tmp_path)
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["wire"] == {"name": "per cell", "key_type": "ECDSA"}
    shown = json.loads(harness("verdicts", "--json", "--out", str(tmp_path), timeout=60).stdout)
    return run_dir, {(each["workload"], each["alternative"]) for each in shown}


@pytest.mark.slow
def test_the_wire_study_compares_wires_and_ways_to_connect_over_them_in_blocks(tmp_path: Path) -> None:
    """Slow (about 70 s here): hello over plaintext, TLS and mutual TLS on each stack, and the ways to connect over
    TLS, a TLS handshake a server start."""
    run_dir, found = wire_run(tmp_path, "hello")
    assert {("tls/sync-w10/c50", "tls"), ("tls/aio-uvloop/c50", "mtls"), ("tls/rest-h1/c50", "mtls")} <= found
    assert ("connections-tls/aio-uvloop/c100", "per-call+tls") in found
    tls = json.loads((run_dir / "wire" / "cells" / "hello" / "sync-w10" / "c50+tls.json").read_text())
    assert tls["wire"] == "tls" and tls["tls"].startswith("TLSv1.3")


@pytest.mark.slow
def test_the_wire_study_compares_large_messages_each_way_in_blocks(tmp_path: Path) -> None:
    """Slow (about 70 s here): a 1 MiB reply and a 1 MiB request, in plaintext and TLS; the sizes up to 16 MiB
    each cost minutes: tests/test_loadgen.py moves the largest."""
    _, found = wire_run(tmp_path, "reply-1MiB,request-1MiB")
    assert {("reply-1MiB/c10", "aio-uvloop+tls"), ("request-1MiB/c10", "aio-uvloop")} <= found
    assert (tmp_path / "wire" / "charts" / "sizes.png").is_file()
    assert "Which stack moves large messages, in plaintext or TLS?" in (tmp_path / "README.md").read_text()
    assert "Request payload moved" in (tmp_path / "wire" / "README.md").read_text()


@pytest.mark.slow
def test_the_wire_study_compares_an_empty_reply_and_the_brief_s_s3_work_over_tls_in_blocks(tmp_path: Path) -> None:
    """Slow (about 60 s here): an empty reply in plaintext and TLS, REST beside gRPC, and the S3 work a region away
    (100 ms a listing) over TLS."""
    _, found = wire_run(tmp_path, "reply-0B,s3-mongo-region")
    assert ("reply-0B/c10", "rest-h1+tls") in found
    # the S3 work a region away over TLS, every gRPC stack side by side (the drivers call REST's hello alone)
    assert ("s3-mongo-region/c50+tls", "aio-uvloop+tls") in found
    assert not any(workload.startswith("s3-") and "rest-h1" in label for workload, label in found)
    assert "Which stack serves the brief's S3 work a region away over TLS?" in (tmp_path / "README.md").read_text()
