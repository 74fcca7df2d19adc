"""Each stack's floor (servers/minimal.py) keeps the hello part of the contract: SayHello answers "Hello " + name,
and a bad request gets its stack's status (an unknown method UNIMPLEMENTED; REST a 405 or 404), the server
serving on. They are server variants like the others, listed by `python -m harness servers`."""

from __future__ import annotations

import http.client
from collections.abc import Iterator

import grpc
import pytest

from harness.plan.servers import MINIMAL_VARIANTS, ServerVariant, minimal_of, server_variant
from harness.run.backends import Backends
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc


@pytest.fixture(params=MINIMAL_VARIANTS, ids=lambda variant: variant.name)
def floor(request: pytest.FixtureRequest, backends: Backends) -> Iterator[tuple[ServerVariant, str]]:
    variant: ServerVariant = request.param
    with running_server(variant, backends.env()) as (target, child):
        yield variant, target
        assert child.process.poll() is None, child.log_tail()


def test_every_stack_of_ours_has_a_floor_named_for_it() -> None:
    for each in MINIMAL_VARIANTS:
        assert each.name == each.floor_of + "-minimal" and each.only == ("hello",)
        assert minimal_of(server_variant(each.floor_of)) == each
        assert server_variant(each.name) == each


def test_a_floor_says_hello_and_refuses_what_it_does_not_serve(floor: tuple[ServerVariant, str]) -> None:
    variant, target = floor
    if variant.protocol == "http":
        connection = http.client.HTTPConnection(target, timeout=5)
        connection.request("GET", "/v1/hello?name=ann")
        answer = connection.getresponse()
        assert answer.status == 200 and b'"Hello ann"' in answer.read()
        connection.request("POST", "/v1/hello")
        unserved = connection.getresponse()
        unserved.read()
        assert unserved.status in (404, 405)
        connection.close()
        return
    with grpc.insecure_channel(target) as channel:
        greeter = bench_pb2_grpc.GreeterStub(channel)
        assert greeter.SayHello(bench_pb2.HelloRequest(name="ann"), timeout=5).message == "Hello ann"
        store = bench_pb2_grpc.ObjectStoreStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            store.ListObjects(bench_pb2.ListObjectsRequest(bucket="bench"), timeout=5)
        # Stock hypercorn may end the connection a refused call was on instead (it answers before reading the
        # request: the bug servers/hypercorn_serving.py mends for our servers); the server serves on regardless.
        stock_hypercorn = "hypercorn" in variant.args
        expected = {grpc.StatusCode.UNIMPLEMENTED, *([grpc.StatusCode.UNAVAILABLE] if stock_hypercorn else [])}
        assert refused.value.code() in expected
    # A connection of its own: channels to one target share their connections unless told not to.
    with grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)]) as channel:
        greeter = bench_pb2_grpc.GreeterStub(channel)
        assert greeter.SayHello(bench_pb2.HelloRequest(name="bo"), timeout=5).message == "Hello bo"
