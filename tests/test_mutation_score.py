"""`make mutation`'s report: mutmut's result lines counted by function, the score over killed and survived."""

from __future__ import annotations

from tests.mutation_score import read, report

LINES = [
    "    harness.method.verdicts.x_interval__mutmut_1: killed",
    "    harness.method.verdicts.x_interval__mutmut_2: survived",
    "    harness.method.verdicts.xǁMethodǁ__post_init____mutmut_3: no tests",
    "    harness.method.pooling.x_pooled__mutmut_12: killed",
    "    harness.method.pooling.x_pooled__mutmut_13: killed",
    "not a result line",
]


def test_mutants_are_counted_by_function_and_scored_over_killed_and_survived() -> None:
    found = read(LINES)
    assert found["harness.method.verdicts.interval"] == {"killed": 1, "survived": 1}
    assert found["harness.method.verdicts.Method.__post_init__"] == {"no tests": 1}
    text = report(found)
    assert "**3 of 4 mutants killed: 75%** (target 85%, not met); 1 more in functions" in text
    assert "| `harness.method.verdicts.interval` | 1 | 1 | 0 |" in text and "x_pooled" not in text
