"""The Info contract on every gRPC stack, over real gRPC: SetInfo and SetInfos, good and bad input, replies in
order on a stream used in lockstep and on one pipelined; and the InfoStore itself."""

from __future__ import annotations

import queue
from collections.abc import Iterator

import grpc
import pytest

from harness.run.backends import Backends
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.errors import InvalidArgument
from scenarios.info import Info, InfoStore
from tests.conftest import STACKS

BAD = [
    (bench_pb2.InfoRequest(name="", age=1, height=1), "name: must not be empty"),
    (bench_pb2.InfoRequest(name="a", age=-1, height=1), "age: must be 0 or more, got -1"),
    (bench_pb2.InfoRequest(name="a", age=1, height=-5), "height: must be 0 or more, got -5"),
]


def test_the_store_keeps_the_latest_info_and_refuses_bad_input_without_change() -> None:
    store = InfoStore()
    store.set("ann", 30, 170)
    store.set("ann", 31, 171)
    assert store.get("ann") == Info(31, 171)
    with pytest.raises(InvalidArgument, match="age: must be 0 or more, got -2"):
        store.set("ann", -2, 171)
    assert store.get("ann") == Info(31, 171)
    assert store.refusal("", 1, 1) == "name: must not be empty"
    assert store.refusal("bob", 0, 0) == "" and store.get("bob") == Info(0, 0)


@pytest.fixture(scope="module", params=STACKS, ids=lambda variant: variant.name)
def info(request: pytest.FixtureRequest, backends: Backends) -> Iterator[bench_pb2_grpc.InfoStub]:
    with running_server(request.param, backends.env()) as (target, child), grpc.insecure_channel(target) as opened:
        yield bench_pb2_grpc.InfoStub(opened)
        assert child.stop() == 0, child.log_tail()


def test_set_info_succeeds_and_bad_input_is_invalid_argument(info: bench_pb2_grpc.InfoStub) -> None:
    reply = info.SetInfo(bench_pb2.InfoRequest(name="ann", age=30, height=170), timeout=10)
    assert reply.success and reply.reason == ""
    for request, reason in BAD:
        with pytest.raises(grpc.RpcError) as raised:
            info.SetInfo(request, timeout=10)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.details() == reason
    assert info.SetInfo(bench_pb2.InfoRequest(name="ann", age=31, height=171), timeout=10).success


def test_a_pipelined_stream_gets_one_reply_per_request_in_order_and_goes_on_after_bad_input(
    info: bench_pb2_grpc.InfoStub,
) -> None:
    good = [bench_pb2.InfoRequest(name=f"p{index}", age=index, height=100 + index) for index in range(200)]
    requests = [*good[:100], *(bad for bad, _ in BAD), *good[100:]]
    replies = list(info.SetInfos(iter(requests), timeout=30))  # every request sent without waiting for a reply
    assert len(replies) == len(requests)
    assert [(reply.success, reply.reason) for reply in replies[100:103]] == [(False, reason) for _, reason in BAD]
    assert all(reply.success and reply.reason == "" for reply in [*replies[:100], *replies[103:]])


def test_a_stream_in_lockstep_gets_each_reply_before_it_sends_the_next(info: bench_pb2_grpc.InfoStub) -> None:
    outgoing: queue.Queue[bench_pb2.InfoRequest | None] = queue.Queue()
    replies = info.SetInfos(iter(outgoing.get, None), timeout=30)
    for index in range(20):
        outgoing.put(bench_pb2.InfoRequest(name=f"l{index}", age=index % 3 - 1, height=1))  # every third is bad
        reply = next(replies)
        assert reply.success == (index % 3 != 0)
        assert reply.reason == ("" if reply.success else "age: must be 0 or more, got -1")
    outgoing.put(None)
    assert list(replies) == []
    assert replies.code() == grpc.StatusCode.OK
