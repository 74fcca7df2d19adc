"""The versions study: what a dependency's upgrade does to a stack's speed, paired.

Each chosen stack runs twice, side by side in the same blocks: under the versions `run-all --packages` pins
(grpcio==1.75.0, say) and under the project's own (constraints.txt), each in a virtualenv of its own made the same
way (harness.plan.pythons, on the harness's own interpreter). The pinned side is the reference, so a ratio is what
the project's versions do against the pinned ones: 0.96 is 4% slower. Opt-in:
`run-all --study versions --packages grpcio==1.75.0`.
"""

from __future__ import annotations

NAME = "versions"
QUESTION = "Did this upgrade change speed?"
STACK_NAMES = ("sync-w10", "aio-uvloop")
SCENARIO_NAMES = ("hello",)
LEVEL = 50
