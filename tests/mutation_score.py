"""`make mutation`'s report: reads `mutmut results --all true` (one "name: status" line a mutant) and writes
docs/MUTATION.md, the score and, by function, the mutants that survived or that no selected test reached.

Score = killed / (killed + survived): a mutant no selected test reaches is listed apart, not counted as killed.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

TARGET = 0.85  # issue 43: kill at least this share
# mutmut names a mutant `harness.method.verdicts.x_interval__mutmut_3`, a method's
# `harness.method.verdicts.xǁMethodǁfrom_json__...`
NAME = re.compile(r"^\s*(?P<module>[\w.]+?)\.x(?:ǁ(?P<cls>\w+)ǁ|_)(?P<function>\w+?)__mutmut_\d+: (?P<status>.+)$")


def read(lines: list[str]) -> dict[str, Counter[str]]:
    """Each function's mutants counted by status."""
    found: dict[str, Counter[str]] = defaultdict(Counter)
    for line in lines:
        match = NAME.match(line)
        if match:
            owner = f"{match['cls']}." if match["cls"] else ""
            found[f"{match['module']}.{owner}{match['function']}"][match["status"].strip()] += 1
    return found


def report(found: dict[str, Counter[str]]) -> str:
    total: Counter[str] = sum(found.values(), Counter())
    judged = total["killed"] + total["survived"]
    score = total["killed"] / judged if judged else 0.0
    lines = [
        "# Mutation testing",
        "",
        "Written by `make mutation` (mutmut over pyproject's `[tool.mutmut]`: the modules that decide verdicts, each "
        "mutant against the tests that need no tool). Score: killed over killed and survived.",
        "",
        f"**{total['killed']} of {judged} mutants killed: {score:.0%}** (target {TARGET:.0%}"
        f"{', met' if score >= TARGET else ', not met'}); {total['no tests']} more in functions no selected test "
        f"reaches; {sum(total.values())} mutants in all.",
        "",
        "Every survivor was read (`mutmut show NAME`). Those left are equivalent in practice: `zip(..., "
        "strict=True)` made loose (the lists are equal by construction); an error's message padded or recased (the "
        "tests match it by search); a comparison moved at a boundary only an exact float reaches (`<` for `<=` in "
        "the precise and calibrated rules, Cochran's Q, the '±0%' cut); one falsy value for another (`why = None` "
        'for ""); a default an older record never lacks; a turn guard no race meets (none closes within its '
        "least blocks); a budget of nothing shared by estimates of nothing. Gaps left: the design's `least` default "
        "and a design that fits exactly `least` blocks, the race's 1 ms floor on a block's length, rounding to one "
        "digit more. `server_code` and `code_at` read git "
        "history: the report tests, outside this selection, reach them.",
        "",
        "| function | killed | survived | no tests |",
        "|---|---|---|---|",
    ]
    for name, counts in sorted(found.items(), key=lambda item: -(item[1]["survived"] + item[1]["no tests"])):
        if counts["survived"] or counts["no tests"]:
            lines.append(f"| `{name}` | {counts['killed']} | {counts['survived']} | {counts['no tests']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    found = read(Path(argv[0]).read_text().splitlines())
    text = report(found)
    target = Path(argv[1]) if len(argv) > 1 else Path("docs/MUTATION.md")
    temporary = target.with_suffix(".tmp")
    temporary.write_text(text)
    temporary.replace(target)
    print(text.split("\n\n")[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
