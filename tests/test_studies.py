"""The study registry and each study's expansion of its axes into cells, without running anything."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from harness.analysis.judging import Judged
from harness.arguments import parser
from harness.cli import main, named_scenario, run_options
from harness.method.verdicts import Interval
from harness.plan.matrix import CONCURRENCY_LEVELS, SCENARIOS, SHARED, Scenario, scenario
from harness.plan.options import RunOptions
from harness.plan.servers import SERVER_VARIANTS, STACKS, ServerVariant, server_variant
from harness.run.drivers.registry import DRIVERS
from harness.run.planning import between_servers
from harness.studies import DEFAULT_STUDIES, STUDIES, plan, study
from harness.studies.choosing import chosen_studies
from harness.studies.stacks.brief import control_of_run
from harness.studies.wire import HELLO
from harness.studies.wire.plan import cells as wire_cells
from harness.studies.wire.plan import comparisons as wire_comparisons

OUT = Path("out")


def test_every_study_is_registered_data_with_a_known_driver() -> None:
    names = [each.name for each in STUDIES]
    assert len(names) == len(set(names))
    for each in STUDIES:
        assert each.question.endswith("?")
        planned = plan(each.name)
        assert each.follows and planned.axes and planned.repeats >= 1
        assert planned.driver in DRIVERS and set(planned.checkers) <= set(DRIVERS)
        for axis in planned.axes:  # every axis is set by a run-all option that takes its default values
            parser().parse_args(["run-all", axis.option, ",".join(axis.values)])
    assert "stacks" in DEFAULT_STUDIES


def test_unknown_study_says_what_exists() -> None:
    with pytest.raises(KeyError, match="unknown study 'nosuch'; known: stacks"):
        study("nosuch")


def test_stacks_expands_to_the_original_matrix_and_a_connection_per_worker_at_50() -> None:
    cells = plan("stacks").cells(RunOptions(OUT, full=True))
    pairs = [(server, each) for server in SERVER_VARIANTS for each in SCENARIOS if server.runs(each.name)]
    shared = [cell for cell in cells if cell.connections == SHARED]
    assert len(shared) == len(pairs) * len(CONCURRENCY_LEVELS) == 512
    assert [cell.key for cell in cells if cell.connections != SHARED] == [
        f"{each.name}/{server.name}/c50+per-worker" for server, each in sorted_pairs(pairs)
    ]
    assert len({cell.key for cell in cells}) == len(cells)
    assert cells[0].key == "hello/sync-w1/c2"
    # one scenario at a time, each variant's levels ascending together, then c50 on a connection per worker:
    # one server start serves them
    assert [cell.key.split("/")[-1] for cell in cells[:5]] == ["c2", "c10", "c25", "c50", "c50+per-worker"]
    assert not any(cell.server.name.endswith("-pymongo") and "mongo" not in cell.scenario.name for cell in cells)


def sorted_pairs(pairs: list[tuple[ServerVariant, Scenario]]) -> list[tuple[ServerVariant, Scenario]]:
    """(server, scenario) in the matrix's order: one scenario at a time."""
    return sorted(pairs, key=lambda pair: (SCENARIOS.index(pair[1]), SERVER_VARIANTS.index(pair[0])))


def test_connections_option_replaces_the_ways_and_refuses_one_ghz_cannot_drive() -> None:
    options = RunOptions(
        OUT, servers=(server_variant("sync-w1"),), scenarios=(scenario("hello"),), levels=(10,), full=True
    )
    pooled = replace(options, connections=("pool-5", "per-worker"))
    assert [cell.key for cell in plan("stacks").cells(pooled)] == [
        "hello/sync-w1/c10+pool-5",
        "hello/sync-w1/c10+per-worker",
    ]
    with pytest.raises(ValueError, match="cannot open one per call"):
        plan("stacks").cells(replace(options, connections=("per-call",)))
    with pytest.raises(ValueError, match="pool-N with 1 <= N <= 10"):
        replace(options, connections=("pool-11",))
    with pytest.raises(ValueError, match="got 'twice'"):
        run_options(parser().parse_args(["run-all", "--connections", "twice"]))


def test_connections_study_drives_every_stack_every_way_then_s3_per_process_and_per_request() -> None:
    cells = plan("connections").cells(RunOptions(OUT, full=True))
    client = [cell for cell in cells if cell.scenario.name.startswith("hello")]
    stacks = [variant for variant in STACKS if variant.name != "sync-w1"]
    assert len(client) == 2 * len(stacks) * 4
    assert {cell.concurrency for cell in client} == {100}
    assert [cell.connections for cell in client[:4]] == ["shared", "per-worker", "pool-10", "per-call"]
    assert client[-1].key == f"hello-wait-500ms/{stacks[-1].name}/c100+per-call"
    assert client[-1].scenario.data["delay_ms"] == 500
    s3 = [cell for cell in cells if cell not in client]
    assert [cell.key for cell in s3[:2]] == ["s3-unary/sync-w10/c50", "s3-unary/sync-w10-s3-per-request/c50"]
    assert s3[1].server.args[-2:] == ("--s3-client", "per-request")
    assert len(s3) == 2 * 2 * len(stacks)


def test_options_narrow_the_axes() -> None:  # no c50 here: no cell on a connection per worker
    options = RunOptions(
        OUT, servers=(server_variant("sync-w1"),), scenarios=(scenario("hello"),), levels=(3, 4), full=True
    )
    assert [cell.key for cell in plan("stacks").cells(options)] == ["hello/sync-w1/c3", "hello/sync-w1/c4"]
    assert not plan("stacks").is_default_matrix(options)


def test_stacks_measures_the_brief_s_matrix_in_comparisons_against_sync_w10_by_default() -> None:
    comparisons = plan("stacks").comparisons(RunOptions(OUT))
    brief = [
        f"{scenario}/c{level}"
        for scenario in ("hello", "s3-unary", "s3-stream", "s3-mongo")
        for level in (2, 10, 25, 50)
    ]
    region = [f"{scenario}-region/c50" for scenario in ("s3-unary", "s3-stream", "s3-mongo")]
    assert [each.workload for each in comparisons] == [
        "hello/c50",
        *(w for w in brief if w != "hello/c50"),
        "hello-wait/c50",
        *region,
    ]
    assert {each.reference[0] for each in comparisons} == {"sync-w10"}
    stacks = ["sync-w1", "grpclib-asyncio", "grpclib-uvloop", "sync-w50", "aio-uvloop", "connect-pyvoy"]
    brief = ["sync-w1", "grpclib-asyncio", "grpclib-uvloop"]  # where no decision row reads the peers
    by_workload = {each.workload: [label for label, _ in each.alternatives] for each in comparisons}
    assert by_workload["hello/c50"] == [*stacks, "aio-asyncio"] and by_workload["hello/c2"] == brief  # no floors
    assert by_workload["hello/c25"] == by_workload["s3-mongo/c25"] == brief
    assert by_workload["s3-mongo/c50"] == brief  # the S3 rows read it a region away
    pymongo = ["grpclib-asyncio-pymongo", "grpclib-uvloop-pymongo", "aio-uvloop-pymongo"]
    assert by_workload["s3-mongo-region/c50"] == stacks[1:] + pymongo  # Motor and PyMongo's async client side by side
    assert by_workload["s3-unary-region/c50"] == stacks[1:]
    assert by_workload["hello-wait/c50"] == [*stacks[1:], "aio-asyncio"]  # sync-w1 waits alone: not asked
    assert [each.slow for each in comparisons] == [False] * 4 + [True] * 12 + [False] + [True] * 3
    alone = plan("stacks").comparisons(RunOptions(OUT, scenarios=(scenario("s3-mongo"),), levels=(50,)))
    assert [label for label, _ in alone[0].alternatives] == stacks  # no region twin: its row reads it on loopback
    assert [each.deciding for each in comparisons] == [
        each.workload.endswith("/c50") for each in comparisons
    ]  # the decision rows read every scenario at its highest level
    narrowed = RunOptions(OUT, servers=(server_variant("aio-uvloop"), server_variant("sync-w10")), levels=(50,))
    (first, *_) = plan("stacks").comparisons(replace(narrowed, scenarios=(scenario("hello"),), floors=True))
    assert (first.workload, first.reference[0], [label for label, _ in first.alternatives]) == (
        "hello/c50",
        "sync-w10",
        ["aio-uvloop", "aio-uvloop-minimal", "sync-w10-minimal"],
    )
    with pytest.raises(ValueError, match="at least two server variants"):
        plan("stacks").comparisons(RunOptions(OUT, servers=(server_variant("sync-w1"),)))


def test_the_stacks_study_calibrates_its_slow_comparisons_by_an_a_a_control_of_their_own() -> None:
    """Slices of a second (hello/c50) and slices of a wave (s3-unary a region away) each hold a twin; a row reads
    its own design's, unless either separated."""
    (chosen,) = chosen_studies(RunOptions(OUT, studies=("stacks",)))
    assert [each.workload for each in chosen.comparisons if each.controlled] == ["hello/c50", "s3-unary-region/c50"]

    def judged(mirrored: bool, control: Interval) -> Judged:
        record = SimpleNamespace(method=SimpleNamespace(mirrored=mirrored))
        return cast(Judged, SimpleNamespace(record=record, control=SimpleNamespace(ratio=control)))

    fast, slow = Interval(1.01, 0.97, 1.05, 6), Interval(0.98, 0.85, 1.13, 2)
    rows = [judged(True, fast), judged(False, slow)]
    assert control_of_run(rows, rows[0]) == fast and control_of_run(rows, rows[1]) == slow
    assert control_of_run(rows) == slow  # the widest, for a row over both designs
    away = Interval(0.90, 0.85, 0.95, 2)
    apart = [rows[0], judged(False, away)]
    assert control_of_run(apart, apart[0]) == away  # a separated control untrusts every row


def test_every_default_study_decides_its_questions_by_comparisons_of_labelled_cells() -> None:
    found = {
        name: {each.workload: each for each in plan(name).comparisons(RunOptions(OUT))}
        for name in ("streaming", "protocols", "connections")
    }
    fetch = found["streaming"]["fetch-all-20ms/aio-uvloop/c1"]
    assert list(fetch.labelled) == ["paging", "stream", "parallel-10"]
    assert {cell.scenario.s3_latency_ms for cell in fetch.cells} == {20}
    assert [cell.key for cell in found["streaming"]["one-message/aio-uvloop/c50"].cells] == [
        "hello/aio-uvloop/c50",
        "hello-stream/aio-uvloop/c50",
    ]
    # The study's A/A control goes with its first comparison: the one of second-long slices, not the fetch-alls.
    assert next(iter(found["streaming"])) == "one-message/aio-uvloop/c50"
    info = found["protocols"]["info/aio-uvloop/c16"]
    assert list(info.labelled) == ["unary", "lockstep", "pipelined", "rest-h1", "rest-h2", "connect-json-h1"]
    assert info.labelled["rest-h2"].key == "info-rest-h2/rest-h2/c16"
    ways = found["connections"]["hello/aio-uvloop/c100"]
    assert [cell.connections for cell in ways.cells] == ["shared", "per-worker", "pool-10", "per-call"]
    s3 = found["connections"]["s3-client/aio-uvloop/c10"]
    assert [cell.server.name for cell in s3.cells] == ["aio-uvloop", "aio-uvloop-s3-per-request"]
    # Without --full, a study's cells are its comparisons' cells, each once.
    for name in found:
        cells = [cell.key for cell in plan(name).cells(RunOptions(OUT))]
        assert cells == [cell.key for each in found[name].values() for cell in each.cells]
        assert len(set(cells)) == len(cells)
    with pytest.raises(ValueError, match="one gRPC stack"):
        plan("protocols").comparisons(
            RunOptions(OUT, servers=(server_variant("sync-w10"), server_variant("aio-uvloop")))
        )
    with pytest.raises(ValueError, match="distinct"):
        between_servers(scenario("hello"), 2, server_variant("sync-w10"), [server_variant("sync-w10")])


def test_the_default_options_are_the_default_matrix() -> None:
    options = run_options(parser().parse_args(["run-all", "--server-cpus", ""]))
    assert plan("stacks").is_default_matrix(options)
    assert [each.name for each in chosen_studies(options)] == list(DEFAULT_STUDIES)
    assert not plan("stacks").is_default_matrix(run_options(parser().parse_args(["run-all", "--repeats", "5"])))


def test_study_flag_picks_studies_and_refuses_unknown_ones(capsys: pytest.CaptureFixture[str]) -> None:
    options = run_options(parser().parse_args(["run-all", "--study", "stacks"]))
    assert options.studies == ("stacks",)
    with pytest.raises(SystemExit):
        main(["run-all", "--study", "stacks,nosuch"])
    assert "unknown study 'nosuch'" in capsys.readouterr().err


def test_studies_command_lists_questions_and_cell_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "stacks (default): Which gRPC server stack should we run, and when does async pay off?" in out
    assert "20 comparisons of 96 cells in rounds; --full: 640 cells, 3 measured runs each" in out


def test_the_wire_study_sets_rest_beside_the_grpc_stacks_and_sizes_both_ways(tmp_path: Path) -> None:
    found = {each.workload: each for each in wire_comparisons(RunOptions(tmp_path))}
    assert found["tls/rest-h1/c50"].driver == "loadgen" and found["tls/sync-w10/c50"].driver is None
    assert {"reply-0B/c10", "reply-1MiB/c10", "request-1KiB/c10", "request-1MiB/c10"} <= set(found)
    assert "request-0B/c10" not in found  # the reply comparison's 0 bytes
    replies = dict(found["reply-1MiB/c10"].labelled)
    assert {"rest-h1", "rest-h1+tls"} <= set(replies) and found["reply-1MiB/c10"].driver == "loadgen"
    requests = dict(found["request-1MiB/c10"].labelled)
    assert "rest-h1" not in requests and requests["aio-uvloop+tls"].scenario.data["request_bytes"] == 1024 * 1024
    assert {"reply-4MiB/c10", "reply-16MiB/c10", "request-4MiB/c10", "request-16MiB/c10"} <= set(found)
    assert found["request-16MiB/c10"].labelled["sync-w10"].scenario.data["request_bytes"] == 16 * 1024 * 1024
    # the servers count their loop's lag from 1 MiB on, where a slice can spare the wait for their counters
    assert {name for name, each in found.items() if each.counted} == {
        f"{direction}-{size}/c10" for direction in ("reply", "request") for size in ("1MiB", "4MiB", "16MiB")
    }
    full = wire_cells(RunOptions(tmp_path, full=True))  # ghz alone: no REST, no MiB on its command line
    assert not [cell for cell in full if cell.server.protocol == "http" or "request_bytes" in cell.scenario.data]


def test_the_wire_study_measures_the_scenarios_it_is_told_and_names_them_when_it_is_told_none(tmp_path: Path) -> None:
    sizes = {each.name: each for each in plan("wire").own_scenarios}
    chosen = RunOptions(tmp_path, scenarios=(sizes["request-1MiB"], sizes["reply-1MiB"]))
    assert [each.workload for each in wire_comparisons(chosen)] == ["reply-1MiB/c10", "request-1MiB/c10"]
    hello = {each.workload.split("/")[0] for each in wire_comparisons(RunOptions(tmp_path, scenarios=(HELLO,)))}
    assert hello == {"tls", "connections-tls"}
    with pytest.raises(ValueError, match="compares on hello, reply-0B"):
        wire_comparisons(RunOptions(tmp_path, scenarios=(scenario("s3-unary"),)))
    assert named_scenario("request-1MiB", ("wire",)) == sizes["request-1MiB"]
    with pytest.raises(KeyError, match="unknown scenario 'request-1MiB'"):
        named_scenario("request-1MiB", ("stacks",))  # the wire study's own


def test_full_measures_the_whole_stacks_matrix_in_blocks_and_quick_cell_by_cell() -> None:
    options = RunOptions(OUT, studies=("stacks",), full=True, available_cpus=(0, 1), server_cpus=(1,))
    found = plan("stacks").full_comparisons(options)  # type: ignore[misc]
    workloads = [each.workload for each in found]
    assert workloads[0] == "hello/c50" and "hello/c50+per-worker" in workloads and "s3-mongo-100ms/c25" in workloads
    assert len(workloads) == len(SCENARIOS) * len(CONCURRENCY_LEVELS) + len(SCENARIOS)  # c=50 twice
    labels = {label for each in found for label, _ in each.alternatives}
    assert "sync-w10-p2" not in labels  # it needs two server CPUs: one is given
    assert {"aio-asyncio-pymongo", "connect-hypercorn", "aio-uvloop-minimal"} <= labels
    (chosen,) = chosen_studies(options)
    assert [each.workload for each in chosen.comparisons] == workloads
    assert chosen.cells == [cell for each in chosen.comparisons for cell in each.cells]
    (by_cell,) = chosen_studies(replace(options, by_cell=True))
    assert by_cell.comparisons == [] and len(by_cell.cells) > len(found)
    (streaming,) = chosen_studies(replace(options, studies=("streaming",)))  # no comparisons of its whole matrix
    assert streaming.comparisons == []
