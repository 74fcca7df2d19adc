"""What the page's "which stack for my service" view ranks, read from fixture runs: each stack against the fastest
on the same wire, with its own rate and latency."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.analysis.judging import judged_comparisons
from harness.render.findings import stack_choices
from harness.render.views import comparison_view
from harness.results.files import read_json, write_json_atomic
from harness.results.records import load_study
from tests.runs import make_blocks_run, make_wire_run


def views_of(run_dir: Path, study: str) -> list[dict[str, object]]:
    run = load_study(run_dir, study)
    return [comparison_view(run, judged, "?") for judged in judged_comparisons(run)]


def test_large_messages_rank_the_stacks_within_plaintext_and_within_tls(tmp_path: Path) -> None:
    """reply-1MiB measured sync-w10 (400 calls/s, 300 over TLS) and aio-uvloop (500, 350): in plaintext aio-uvloop
    is the fastest and sync-w10 about 0.8 of it; over TLS, about 0.86. A wire comparison of TLS on one stack, and a
    size the view does not offer (1 KiB), rank nothing."""
    choices = stack_choices(views_of(make_wire_run(tmp_path), "wire"))
    assert set(choices) == {"reply-1MiB", "reply-1MiB+tls"}
    for key, ratio in (("reply-1MiB", 400 / 500), ("reply-1MiB+tls", 300 / 350)):
        (ranked,) = choices[key].values()
        assert [each["stack"] for each in ranked] == ["aio-uvloop", "sync-w10"], key
        assert ranked[0]["value"] == 1.0 and ranked[1]["value"] == pytest.approx(ratio, rel=0.05), key
        assert ranked[1]["low"] < ranked[1]["value"] < ranked[1]["high"] < 1.0, key
    fastest = choices["reply-1MiB+tls"]["10"][0]
    assert fastest["rate"] == pytest.approx(350 * 0.97, rel=0.05)  # times the fixture's drift (geometric mean)
    assert fastest["rate_low"] < fastest["rate"] < fastest["rate_high"]
    assert 0 < fastest["p50"] <= fastest["p99"] and fastest["blocks"] == 5


def test_a_stacks_run_ranks_each_level_in_plaintext_without_the_floors_or_the_twin(tmp_path: Path) -> None:
    choices = stack_choices(views_of(make_blocks_run(tmp_path), "stacks"))
    assert choices and not any(key.endswith("+tls") for key in choices)
    stacks = {each["stack"] for by in choices.values() for ranked in by.values() for each in ranked}
    assert stacks and not any(stack.endswith(("-minimal", "~aa")) for stack in stacks)
    for by in choices.values():
        for ranked in by.values():
            assert [each["value"] for each in ranked] == sorted((each["value"] for each in ranked), reverse=True)
            assert all(each["rate_text"] and each["blocks"] >= 2 for each in ranked)


@pytest.mark.parametrize("wire", ["tls", "mtls"])
def test_a_run_made_over_tls_or_mutual_tls_ranks_its_stacks_over_tls(tmp_path: Path, wire: str) -> None:
    """A stacks run made with --tls or --mtls (its wire recorded for the whole run): every level ranks under TLS."""
    run_dir = make_blocks_run(tmp_path)
    meta = read_json(run_dir / "run.json")
    write_json_atomic(run_dir / "run.json", meta | {"wire": {"name": wire}})
    choices = stack_choices(views_of(run_dir, "stacks"))
    assert choices and all(key.endswith("+tls") for key in choices)
