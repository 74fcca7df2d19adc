"""results/report.html in a real browser: Debian's headless Chromium driven by Playwright, every request that
is not the page itself refused. Marked `browser` (and so left out of `make test-fast`): `make test` installs
Chromium with `apt-get` when it is missing."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.judging import run_verdicts
from harness.paths import ROOT
from harness.render.browser import chromium, launched, opened, picture
from harness.render.findings import machine_classes
from harness.render.markdown import write_report
from harness.render.summaries import rate
from harness.render.views import comparison_id
from harness.results.records import all_runs, read_meta
from tests.runs import (
    make_blocks_run,
    make_brief_run,
    make_capacity_run,
    make_connections_blocks_run,
    make_interpreters_run,
    make_wire_run,
)

pytestmark = pytest.mark.browser

CHROMIUM = chromium()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two studies' runs in blocks, rendered."""
    root = tmp_path_factory.mktemp("results")
    make_blocks_run(root)
    make_connections_blocks_run(root)
    write_report(root)
    return root


@pytest.fixture(scope="module")
def browser() -> Any:
    if CHROMIUM is None:
        pytest.fail("no chromium on PATH: `make test` installs Debian's (apt-get install chromium)")
    with launched(CHROMIUM) as started:
        yield started


def test_the_page_draws_every_chart_offline_without_an_error(browser: Any, results: Path) -> None:
    page, errors, fetched = opened(browser, results / "report.html")
    page.evaluate("window.drawAll()")  # the charts far below the window are drawn as the reader scrolls to them
    assert errors == [] and fetched == []
    charts = page.locator("div.chart")
    assert charts.count() == 2
    for index in range(charts.count()):  # each forest plot drew its intervals and its points
        assert charts.nth(index).locator("svg .mark-rule line, svg .mark-rule path").count() >= 3
        assert charts.nth(index).locator("svg .mark-symbol path").count() >= 3
    page.close()


def test_the_readmes_picture_is_drawn_from_the_page_or_not_written(browser: Any, results: Path, tmp_path: Path) -> None:
    picture(browser, results / "report.html", tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(FileNotFoundError, match="python -m harness report"):
        picture(browser, tmp_path / "missing.html", tmp_path / "other.png")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.png"]


def test_the_first_view_shows_a_leaderboard_whole_and_the_first_answer(browser: Any, results: Path) -> None:
    """Opened in a 1280 x 800 window, unscrolled: a workload's leaderboard, every row, and the decision table's
    first answer, as docs/report.png shows them."""
    page, errors, _ = opened(browser, results / "report.html")
    assert errors == [] and page.viewport_size == {"width": 1280, "height": 800}
    board = page.locator("#boards table").first
    assert board.locator("tbody tr").count() >= 3  # a row a stack of the run
    box = board.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800
    first_answer = page.locator("h2:text-is('Decide') + table tbody tr").first.bounding_box()
    assert first_answer is not None and first_answer["y"] < 800
    page.close()


def test_a_filter_hides_the_others_and_lives_in_the_url(browser: Any, results: Path) -> None:
    page, errors, _ = opened(browser, results / "report.html")
    page.select_option("#f-stack", "sync-w10")
    page.wait_for_function("location.hash === '#stack=sync-w10'")
    visible = page.locator("section.cmp:visible")
    assert visible.count() == 1 and visible.first.get_attribute("data-study") == "stacks"
    assert page.locator("tbody tr[data-row]:visible").count() == 1
    page.close()
    again, errors, _ = opened(browser, results / "report.html", "#study=connections")
    assert again.locator("section.cmp:visible").first.get_attribute("data-study") == "connections"
    assert again.locator("section.cmp:visible").count() == 1
    assert again.input_value("#f-study") == "connections"
    assert errors == []
    machine = again.locator("#f-machine option").nth(1).get_attribute("value")
    assert machine is not None and again.locator("#f-machine option").count() == 2  # "all" and the one class
    again.select_option("#f-machine", machine)
    again.wait_for_function("location.hash.includes('machine=')")
    assert again.locator("section.cmp:visible").count() == 1  # the study's filter still holds, the machine's too
    assert again.locator("tbody tr[data-row]:visible").count() == 1
    other, _, _ = opened(browser, results / "report.html", "#machine=" + urllib.parse.quote("Another CPU, 4 cores"))
    assert other.locator("section.cmp:visible").count() == 0  # a machine class's runs kept apart from another's
    assert other.locator("tbody tr[data-row]:visible").count() == 0


def test_the_stack_filter_keeps_capacity_and_interpreter_rows_and_the_workload_filter_lists_every_scenario(
    browser: Any, tmp_path: Path
) -> None:
    """#stack=aio-uvloop shows every row that measured aio-uvloop: the capacity row (no comparisons in blocks,
    its stacks named in its answer) and the interpreter rows (labels like aio-uvloop@3.14); the workload filter
    lists capacity's scenarios too, though no comparison drew them."""
    make_capacity_run(tmp_path)
    make_interpreters_run(tmp_path)
    write_report(tmp_path)
    page, errors, _ = opened(browser, tmp_path / "report.html", "#stack=aio-uvloop")
    shown = page.locator("tbody tr[data-row]:visible")
    studies = {shown.nth(index).get_attribute("data-study") for index in range(shown.count())}
    assert studies == {"capacity", "interpreters"}
    workloads = page.locator("#f-workload option").all_inner_texts()
    assert {"hello", "s3-unary-100ms"} <= set(workloads)
    assert errors == []
    page.close()


def test_the_decision_rows_match_the_verdicts(browser: Any, results: Path) -> None:
    """Each row opens a comparison that `python -m harness verdicts --json` lists, and picks one of its labels
    that was not slower than the reference."""
    page, _, _ = opened(browser, results / "report.html")
    rows = page.locator("tbody tr[data-row]")
    assert rows.count() == 2
    for index in range(rows.count()):
        row = rows.nth(index)
        (shown,) = row.get_attribute("data-ids").split()
        study, run_id, workload = shown.split("/", 2)
        outcomes = [each for each in run_verdicts(results / "runs" / run_id) if each.workload == workload]
        assert comparison_id(study, run_id, outcomes[0].workload) == shown
        verdicts = {each.alternative: each.verdict for each in outcomes if not each.control}
        pick = row.get_attribute("data-pick")
        assert pick == outcomes[0].reference or verdicts[pick] != "slower"
        assert pick in {*verdicts, outcomes[0].reference}


def test_the_which_stack_view_ranks_the_stacks_from_the_url(browser: Any, results: Path) -> None:
    """#work=hello&clients=50 ranks every stack the stacks study measured there, fastest first, each against the
    fastest with its interval, then its own rate and latency; what the chart draws against the clients (a ratio,
    the rate, p50 or p99) is chosen in the page and kept in the URL."""
    page, errors, _ = opened(browser, results / "report.html", "#work=hello&clients=50")
    ranked = page.locator("#ranked tbody tr")
    assert ranked.count() == 3
    cells = [ranked.nth(index).locator("td").nth(1).inner_text() for index in range(3)]
    assert cells == ["aio-uvloop", "grpclib-uvloop", "sync-w10"]
    assert ranked.nth(0).locator("td").nth(2).inner_text() == "1 (the fastest)"
    assert ranked.nth(2).locator("td").nth(2).inner_text().startswith("0.7")  # [low, high] follows
    assert page.input_value("#c-work") == "hello" and errors == []
    assert page.evaluate("window.clientsDrawn") == "hello"  # the same work at every level, drawn
    assert page.locator("#by-clients svg .mark-symbol.role-mark path").count() == 3  # a point a stack at its one level
    fastest = [ranked.nth(0).locator("td").nth(column).inner_text() for column in (4, 5, 6)]
    assert re.fullmatch(r"[\d,]+ \[[\d,]+, [\d,]+\]", fastest[0]), fastest  # OK calls/s [95% CI]
    assert 0 < float(fastest[1]) <= float(fastest[2]), fastest  # p50 and p99, in ms
    assert "× the fastest" in " ".join(page.locator("#by-clients svg .role-axis-title").all_text_contents())
    page.select_option("#c-show", "p99")
    page.wait_for_function("location.hash.includes('show=p99')")
    assert page.evaluate("window.clientsDrawn") == "hello"
    assert (
        "p99 latency, ms (its blocks' geometric mean, 95% CI)"
        in page.locator("#by-clients svg .role-axis-title").all_text_contents()
    )
    assert errors == []
    page.close()


def test_the_which_stack_view_ranks_large_messages_over_tls_from_the_url(browser: Any, tmp_path: Path) -> None:
    """A wire run measured 1 MiB replies from two stacks in plaintext and over TLS: &tls=1 ranks the stacks over
    TLS (aio-uvloop 350 calls/s, sync-w10 300); unticking it ranks them in plaintext, and the URL follows."""
    make_wire_run(tmp_path)
    write_report(tmp_path)
    page, errors, _ = opened(browser, tmp_path / "report.html", "#work=reply-1MiB&clients=10&tls=1")
    ranked = page.locator("#ranked tbody tr")
    assert [ranked.nth(index).locator("td").nth(1).inner_text() for index in range(ranked.count())] == [
        "aio-uvloop",
        "sync-w10",
    ]
    assert page.is_checked("#c-tls") and page.evaluate("window.clientsDrawn") == "reply-1MiB+tls"
    assert ranked.nth(1).locator("td").nth(2).inner_text().startswith("0.8")  # 300 / 350, [low, high] follows
    page.uncheck("#c-tls")
    page.wait_for_function("!location.hash.includes('tls=1')")
    assert page.evaluate("window.clientsDrawn") == "reply-1MiB"
    fastest = ranked.nth(0).locator("td").nth(4).inner_text()  # aio-uvloop: 500 calls/s times the fixture's drift
    assert 440 < float(fastest.split()[0].replace(",", "")) < 520, fastest
    assert errors == []
    page.close()


def test_the_tables_save_as_csv_and_json_from_the_page(browser: Any, results: Path) -> None:
    """The decision table and every comparison's ratios save as CSV, the rows and comparisons as JSON, from links
    the page holds whole (data: URLs: nothing fetched), and they say what the page and `verdicts --json` say."""
    page, errors, fetched = opened(browser, results / "report.html")

    def saved(name: str) -> str:
        href = page.get_attribute(f"a[download='{name}']", "href")
        assert href is not None and href.startswith("data:")
        return urllib.parse.unquote(href.split(",", 1)[1])

    def beside(name: str) -> str:  # written beside the page, which links it
        href = page.get_attribute(f"a[href='{name}']", "href")
        assert href == name
        return (results / name).read_text()

    decisions = list(csv.DictReader(io.StringIO(saved("decisions.csv"))))
    assert [row["answer"] for row in decisions] == [
        page.locator("tbody tr[data-row]").nth(index).locator("td").nth(1).inner_text()
        for index in range(len(decisions))
    ]
    assert len(decisions) == page.locator("tbody tr[data-row]").count() == 2
    ratios = list(csv.DictReader(io.StringIO(saved("ratios.csv"))))
    outcomes = [each for run in all_runs(results) for each in run_verdicts(run)]
    assert sorted((row["workload"], row["label"], row["verdict"]) for row in ratios) == sorted(
        (each.workload, each.alternative, each.verdict) for each in outcomes
    )
    found = json.loads(beside("findings.json"))
    assert [row["lead"] for row in found["rows"]] == [row["answer"] for row in decisions]
    assert len(found["comparisons"]) == page.locator("section.cmp").count()
    said = page.locator("details summary").filter(has_text="Run ").all_inner_texts()
    assert any(": against " in each for each in said) and any("the oldest run shown" in each for each in said)
    assert errors == [] and fetched == []
    page.close()


def test_every_table_of_a_study_shows_the_rows_its_markdown_shows_and_saves_beside_it(
    browser: Any, results: Path
) -> None:
    """Each study's tables from its newest run, drawn from the JSON written beside its markdown pages: the rows its
    page holds, a CSV link that resolves to those rows, and the study filter keeps only that study's."""
    page, errors, fetched = opened(browser, results / "report.html", "#study=stacks")
    stacks = page.locator("details.tables[data-study='stacks']")
    assert page.locator("details.tables[data-study='connections']").is_hidden()
    stacks.locator("summary").click()
    table, link = stacks.locator("table").first, stacks.locator("h4 a").first.get_attribute("href")
    assert link is not None and link.startswith("stacks/tables/comparisons/")
    shown = [[cell.inner_text() for cell in row.locator("td").all()] for row in table.locator("tbody tr").all()]
    with (results / link).open(encoding="utf-8") as saved:
        head, *rows = list(csv.reader(saved))
    # the same rows, saved in numbers: the OK calls/s column as its value, bounds and unit
    assert [row[0] for row in rows] == [row[0] for row in shown]
    assert head[1:5] == ["OK calls/s [95% CI]", *(f"OK calls/s [95% CI]: {part}" for part in ("low", "high", "unit"))]
    assert all(float(row[2]) < float(row[1]) and row[4] == "OK calls/s" for row in rows)
    assert [rate(float(row[1])) for row in rows] == [row[1].split(" [")[0] for row in shown]
    markdown_page = (results / "stacks" / "comparisons.md").read_text()
    assert all(f"| {row[0]} |" in markdown_page.replace("**", "") for row in shown)
    assert errors == [] and fetched == []
    page.close()


@pytest.fixture(scope="module")
def placed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs of one machine class, one made before fingerprints, and the newest soak, rendered."""
    root = tmp_path_factory.mktemp("placed")
    make_blocks_run(root)  # Test CPU A, no fingerprint
    newest = make_brief_run(root)
    data = json.loads((newest / "run.json").read_text())
    data["machine"] = {"fingerprint": {"vendor": "TestVendor", "family": 6, "model": 1, "stepping": 2, "cores_seen": 2}}
    (newest / "run.json").write_text(json.dumps(data))
    soaks = sorted((ROOT / "results" / "soak").glob("*/run.json"))
    shutil.copytree(soaks[-1].parent, root / "soak" / soaks[-1].parent.name)
    write_report(root)
    return root


def test_one_machine_class_is_one_entry_and_a_run_before_fingerprints_joins_its_cpu_s_class(
    browser: Any, placed: Path
) -> None:
    page, errors, _ = opened(browser, placed / "report.html")
    options = page.locator("#f-machine option").all_inner_texts()
    assert options == ["all", "TestVendor 6/1/2, 2 cores"] and errors == []
    page.close()


def test_a_link_to_a_work_opens_on_its_ranking_and_offers_only_the_clients_it_was_measured_at(
    browser: Any, placed: Path
) -> None:
    page, errors, _ = opened(browser, placed / "report.html", "#work=hello-wait")
    assert page.locator("#c-clients option").all_inner_texts() == ["50"]
    top = page.evaluate("document.getElementById('which').getBoundingClientRect().top")
    assert page.evaluate("window.scrollY") > 0 and -1 <= top < 900  # brought into view
    page.select_option("#c-work", "hello")
    page.wait_for_function("location.hash.includes('work=hello&')")
    assert page.locator("#c-clients option").all_inner_texts() == ["2", "50"]
    assert errors == []
    page.close()


def test_the_filters_and_the_chooser_keep_each_other_s_state(browser: Any, placed: Path) -> None:
    page, errors, _ = opened(browser, placed / "report.html", "#work=hello&clients=2")
    page.select_option("#f-study", "stacks")
    page.wait_for_function("location.hash.includes('study=stacks')")
    assert "work=hello" in page.evaluate("location.hash") and "clients=2" in page.evaluate("location.hash")
    page.check("#c-tls")
    page.wait_for_function("location.hash.includes('tls=1')")
    assert "study=stacks" in page.evaluate("location.hash") and page.input_value("#f-study") == "stacks"
    assert errors == []
    page.close()


def test_the_stack_filter_keeps_the_rows_that_set_that_stack_side_by_side(browser: Any, placed: Path) -> None:
    """#stack=grpclib-uvloop keeps the rows that compared grpclib-uvloop, not grpcio's one thread or ten."""
    page, errors, _ = opened(browser, placed / "report.html", "#stack=grpclib-uvloop")
    shown = page.locator("tbody tr[data-row]:visible td:first-child").all_inner_texts()
    assert "Handlers without I/O: which stack?" in shown
    assert "grpcio sync: one worker thread or ten?" not in shown
    assert errors == []
    page.close()


def test_the_newest_soak_is_on_the_page_and_the_p99_is_drawn_with_its_interval(browser: Any, placed: Path) -> None:
    page, errors, fetched = opened(browser, placed / "report.html", "#work=hello&show=p99")
    assert page.locator("#soak").count() == 1
    assert page.locator("details[data-study='soak']").count() >= 1
    assert "(its blocks' geometric mean, 95% CI)" in " ".join(
        page.locator("#by-clients svg .role-axis-title").all_text_contents()
    )
    assert page.locator("#by-clients svg .mark-rule line, #by-clients svg .mark-rule path").count() >= 2
    assert errors == [] and fetched == []
    page.close()


COMMITTED = ROOT / "results" / "report.html"
MOST_BYTES = int(2.5 * 2**20)  # the page holds what it draws, however many runs are committed


def test_the_committed_report_ranks_the_stacks_for_s3_to_mongodb_over_tls_and_stays_small(browser: Any) -> None:
    """The committed results/report.html, as a reader opens it: at most 2.5 MB with every committed run, one
    machine-filter entry per machine class, the newest soak, and `#work=s3-mongo&clients=50&tls=1` ranking at
    least four stacks, each with its interval."""
    assert COMMITTED.stat().st_size <= MOST_BYTES
    page, errors, fetched = opened(browser, COMMITTED, "#work=s3-mongo&clients=50&tls=1")
    ranked = page.locator("#ranked tbody tr")
    assert ranked.count() >= 4
    intervals = [ranked.nth(index).locator("td").nth(2).inner_text() for index in range(1, ranked.count())]
    assert all(re.search(r"\[[\d.]+, [\d.]+\]", each) for each in intervals), intervals
    metas = [read_meta(run) for run in all_runs(ROOT / "results")]
    offered = page.locator("#f-machine option").all_inner_texts()[1:]  # after "all"
    assert set(offered) <= set(machine_classes(metas).values()) and len(set(offered)) == len(offered)
    assert page.locator("#soak").count() == 1
    assert errors == [] and fetched == []
    page.close()
    page, errors, fetched = opened(browser, COMMITTED)
    charts = page.locator("div.chart")
    assert page.locator("div.chart > svg").count() < charts.count()  # the charts far below wait for the reader
    charts.last.scroll_into_view_if_needed()
    charts.last.locator("svg").wait_for(timeout=10_000)  # drawn as it comes near the window
    assert errors == [] and fetched == []
    page.close()
