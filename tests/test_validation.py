"""The validation of intervals by drawing blocks of many-block runs (harness.method.validation, `harness validate`):
on a synthetic run of known spread the plain t-interval is compatible with the blocks left out about 95% of the
time, as it is exact there, and the moderated one keeps that while narrower; a run's comparisons are read back as
their log ratios by block."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from harness.analysis.read_back import many_blocks
from harness.cli import main
from harness.method.validation import (
    ALL_CLASSES,
    LEAST_CLASS_RUNS,
    MODERATED,
    PLAIN,
    WEIGHTED,
    Calibration,
    Held,
    ManyBlocks,
    coverage,
    draw,
    weighted,
)
from harness.results.calibration import NAME as CALIBRATION
from harness.results.calibration import load_calibration, write_calibration
from tests.runs import make_blocks_run


def normal_run(seed: int, blocks: int = 12, labels: int = 10) -> list[ManyBlocks]:
    """Two comparisons of labels sharing their reference's noise, every block alike: the t-interval is exact."""
    rng = random.Random(seed)
    found = []
    for number in range(2):
        reference = {block: rng.gauss(0, 0.05) for block in range(blocks)}
        logs = {
            f"label{index}": {block: 0.1 * index + rng.gauss(0, 0.05) - reference[block] for block in range(blocks)}
            for index in range(labels)
        }
        found.append(ManyBlocks(("s/hello", "s", "run"), f"s/hello/c{number}", logs))
    return found


@pytest.mark.parametrize("drawn", [2, 3])
def test_an_exact_interval_is_compatible_with_the_blocks_left_out_about_95_percent_of_the_time(drawn: int) -> None:
    runs = [normal_run(seed) for seed in range(30)]
    found = {each.method: each for each in coverage(runs, drawn, draws=20, seed=1)}
    assert 0.93 <= found[PLAIN].compatible <= 0.975
    assert found[MODERATED].compatible >= 0.93 and found[MODERATED].half_width < found[PLAIN].half_width
    assert found[PLAIN].held < found[PLAIN].compatible  # the left-out mean's own error, which `held` ignores
    assert found[PLAIN].intervals == found[WEIGHTED].intervals == 30 * 20 * 2 * 10


def test_a_draw_takes_the_same_blocks_for_every_label_of_a_comparison_and_keeps_the_rest_as_the_truth() -> None:
    comparison = ManyBlocks(
        ("g", "run"), "c", {"a": {b: float(b) for b in range(8)}, "b": {b: 10.0 + b for b in range(8)}}, {}
    )
    (first, second) = draw([comparison], 2, random.Random(3))
    assert first.row.logs == tuple(each - 10.0 for each in second.row.logs)
    chosen = set(first.row.logs)
    assert first.left == pytest.approx(sum(b for b in range(8) if b not in chosen) / 6)
    assert first.weights == (1.0, 1.0)  # no block noise read: every block alike
    noisy = ManyBlocks(("g", "run"), "c", comparison.logs, {b: 0.01 * (1 + b) for b in range(8)})
    (weighted_row, _) = draw([noisy], 2, random.Random(3))
    assert sum(weighted_row.weights) == pytest.approx(2.0) and len(set(weighted_row.weights)) == 2


def test_weighted_least_squares_with_equal_weights_is_the_plain_mean_and_variance() -> None:
    logs = [0.1, 0.4, 0.25]
    mean, residual, total = weighted(logs, [1.0, 1.0, 1.0])
    assert (mean, total, residual) == pytest.approx((0.25, 3.0, 0.0225))
    heavy, _, _ = weighted(logs, [2.0, 0.5, 0.5])
    assert heavy == pytest.approx((0.2 + 0.2 + 0.125) / 3)


def test_a_run_s_comparisons_are_read_as_each_label_s_log_ratio_by_block(tmp_path: Path) -> None:
    run_dir = make_blocks_run(tmp_path)
    assert many_blocks(run_dir) == []  # five blocks: fewer than a draw needs to leave enough out
    (found,) = many_blocks(run_dir, least=5)
    assert found.comparison == "stacks/hello/c50" and found.groups == ("stacks/hello", "stacks", "run")
    assert set(found.logs) == {"aio-uvloop", "grpclib-uvloop", "sync-w10~aa"} and found.blocks == [1, 2, 3, 4, 5]
    assert all(math.isfinite(value) for logs in found.logs.values() for value in logs.values())
    assert found.block_noise == {}  # one window a label a block


def test_a_run_s_comparisons_read_by_cost_are_each_label_s_calls_per_server_cpu_second_over_the_reference_s(
    tmp_path: Path,
) -> None:
    run_dir = make_blocks_run(tmp_path)
    (by_rate,) = many_blocks(run_dir, least=5)
    (by_cost,) = many_blocks(run_dir, least=5, by_cost=True)
    # every window of the synthetic run spends the same server CPU over the same seconds: the ratios are the rates'
    assert set(by_cost.logs) == set(by_rate.logs)
    for label, logs in by_cost.logs.items():
        assert logs == pytest.approx(by_rate.logs[label])


def test_validate_says_so_when_no_run_has_blocks_enough(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_blocks_run(tmp_path)
    assert main(["validate", "--out", str(tmp_path)]) == 2
    assert "no run under" in capsys.readouterr().err


def held_at(blocks: int, compatible: float = 0.95, good: float = 0.99, runs: int = LEAST_CLASS_RUNS) -> Held:
    return Held(blocks, compatible, 0.95, good, 1000, 200, 100, runs)


def test_a_row_is_trusted_from_the_fewest_blocks_at_which_its_class_keeps_every_claim() -> None:
    found = Calibration(
        {
            "mine": (held_at(2, good=0.92), held_at(3), held_at(4)),
            "few": (held_at(2, compatible=0.80, runs=LEAST_CLASS_RUNS - 1),),  # too few runs: judged by all
            ALL_CLASSES: (held_at(2), held_at(3)),
        }
    )
    assert found.least_trusted("mine") == 3 and not found.trusted(2, "mine") and found.trusted(7, "mine")
    assert found.least_trusted("few") == 2 and found.least_trusted("new class") == 2
    assert not found.trusted(1, "new class") and Calibration({}).least_trusted("any") is None
    twins_short = Held(2, 0.95, 0.91, 0.99, 1000, 200, 100, LEAST_CLASS_RUNS)
    assert twins_short.measured and not twins_short.holds
    assert not Held(2, math.nan, math.nan, math.nan, 0, 0, 0, 9).measured


def test_a_calibration_is_written_and_read_back_whole(tmp_path: Path) -> None:
    found = Calibration({ALL_CLASSES: (held_at(2), Held(6, math.nan, math.nan, math.nan, 0, 0, 0, 1))})
    write_calibration(tmp_path / CALIBRATION, found, {ALL_CLASSES: ["r1"]}, 10, 0)
    load_calibration.cache_clear()
    again = load_calibration(tmp_path)
    assert again.by_class[ALL_CLASSES][0] == held_at(2) and again.by_class[ALL_CLASSES][1].intervals == 0
    load_calibration.cache_clear()
