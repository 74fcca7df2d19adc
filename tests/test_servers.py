"""Every server variant, over real gRPC on TCP, against the real backends: data and status codes."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS
from harness.run.backends import expected_etag, seed_objects
from harness.run.serving import serving_processes
from protos.bench.v1 import bench_pb2
from scenarios.objects import MAX_REPLY_BYTES, MAX_WORK, reply_payload
from tests.conftest import LARGE_BUCKET, LARGE_OBJECTS, Server


def request(bucket: str = BENCH_BUCKET, prefix: str = "", batch_size: int = 0) -> bench_pb2.ListObjectsRequest:
    return bench_pb2.ListObjectsRequest(bucket=bucket, prefix=prefix, batch_size=batch_size)


def expected(count: int) -> list[tuple[str, int, str]]:
    return [(key, len(body), expected_etag(body)) for key, body in seed_objects(count).items()]


def described(objects: list[bench_pb2.ObjectInfo]) -> list[tuple[str, int, str]]:
    return [(info.key, info.size, info.etag) for info in objects]


def test_health_reports_serving(server: Server) -> None:
    health = health_pb2_grpc.HealthStub(server.channel)
    for service in ("", "bench.v1.Greeter", "bench.v1.ObjectStore"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, service


def test_say_hello(server: Server) -> None:
    reply = server.greeter.SayHello(bench_pb2.HelloRequest(name="world"), timeout=5)
    assert reply.message == "Hello world"


WAIT = 0.2


def test_hello_wait_returns_after_the_delay(server: Server) -> None:
    begun = time.monotonic()
    reply = server.greeter.SayHello(bench_pb2.HelloRequest(name="w", delay_ms=int(WAIT * 1000)), timeout=5)
    assert reply.message == "Hello w"
    assert time.monotonic() - begun >= WAIT


def test_two_waits_overlap_unless_the_server_has_one_slot(server: Server) -> None:
    """With a slot each, a short wait sent while a long one runs ends first: an order, which a loaded machine cannot
    flip, where a bound on the time could. With one worker thread the second wait starts after the first: the pair
    takes at least both waits (a lower bound, which a loaded machine only makes easier to meet)."""
    greeter = server.greeter

    def wait(name: str, seconds: float) -> Any:
        return greeter.SayHello.future(bench_pb2.HelloRequest(name=name, delay_ms=int(seconds * 1000)), timeout=60)

    if server.variant.slots == 1:
        begun = time.monotonic()
        for each in [wait("first", WAIT), wait("second", WAIT)]:
            each.result()
        assert time.monotonic() - begun >= 2 * WAIT  # the second call waits for the first
        return
    long = wait("long", 150 * WAIT)
    assert greeter.SayHello(bench_pb2.HelloRequest(name="now"), timeout=30).message == "Hello now"  # long has begun
    short = wait("short", WAIT)
    assert short.result().message == "Hello short"
    assert not long.done()  # the waits overlap
    long.cancel()  # its wait ends with the call (test_cancellation)


def test_a_delay_above_the_maximum_is_invalid(server: Server) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        server.greeter.SayHello(bench_pb2.HelloRequest(name="w", delay_ms=60_001), timeout=5)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "delay_ms: 60001 is above the maximum of 60000" in str(raised.value.details())


@pytest.mark.parametrize("size", [0, 1024, 64 * 1024, MAX_REPLY_BYTES])
def test_a_reply_carries_the_bytes_asked_for_and_a_request_may_carry_bytes(server: Server, size: int) -> None:
    asked = bench_pb2.HelloRequest(name="p", reply_bytes=size, payload=b"\x07" * size)
    for reply in (server.greeter.SayHello(asked, timeout=10), *server.greeter.SayHelloStream(asked, timeout=10)):
        assert reply.message == "Hello p" and reply.payload == reply_payload(size) and len(reply.payload) == size


def test_a_reply_above_the_maximum_is_invalid_and_names_the_field(server: Server) -> None:
    too_big = bench_pb2.HelloRequest(name="p", reply_bytes=MAX_REPLY_BYTES + 1)
    for call in (server.greeter.SayHello, lambda asked, timeout: list(server.greeter.SayHelloStream(asked, timeout))):
        with pytest.raises(grpc.RpcError) as raised:
            call(too_big, timeout=5)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert f"reply_bytes: {MAX_REPLY_BYTES + 1} is above the maximum of {MAX_REPLY_BYTES}" in str(
            raised.value.details()
        )


def test_a_handler_that_computes_takes_cpu_and_refuses_work_above_the_maximum(server: Server) -> None:
    before = sum(process.cpu_times().user for process in serving_processes(server.child.pid))
    for call in (server.greeter.SayHello, lambda asked, timeout: next(server.greeter.SayHelloStream(asked, timeout))):
        assert call(bench_pb2.HelloRequest(name="w", work=20), timeout=10).message == "Hello w"
    used = sum(process.cpu_times().user for process in serving_processes(server.child.pid)) - before
    assert used > 0.005  # 40 units of about 1 ms: some of it, however fast the machine (not a speed check)
    with pytest.raises(grpc.RpcError) as raised:
        server.greeter.SayHello(bench_pb2.HelloRequest(name="w", work=MAX_WORK + 1), timeout=5)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"work: {MAX_WORK + 1} is above the maximum of {MAX_WORK}" in str(raised.value.details())


def test_list_objects_returns_every_object_in_key_order(server: Server) -> None:
    reply = server.store.ListObjects(request(), timeout=30)
    assert described(list(reply.objects)) == expected(BENCH_OBJECTS)
    assert all(info.last_modified.seconds > 0 for info in reply.objects)


def test_list_objects_follows_every_page(server: Server) -> None:
    reply = server.store.ListObjects(request(LARGE_BUCKET), timeout=30)
    assert described(list(reply.objects)) == expected(LARGE_OBJECTS)


def test_list_objects_with_prefix(server: Server) -> None:
    reply = server.store.ListObjects(request(prefix="obj-001"), timeout=30)
    assert [info.key for info in reply.objects] == [f"obj-{i:05d}" for i in range(100, 200)]


@pytest.mark.parametrize(("batch_size", "messages"), [(0, 893), (1, 893), (10, 90), (1000, 1)])
def test_stream_objects_in_batches(server: Server, batch_size: int, messages: int) -> None:
    replies = list(server.store.StreamObjects(request(batch_size=batch_size), timeout=30))
    assert len(replies) == messages
    assert all(len(reply.objects) == max(batch_size, 1) for reply in replies[:-1])
    assert described([info for reply in replies for info in reply.objects]) == expected(BENCH_OBJECTS)


def test_stream_objects_across_pages(server: Server) -> None:
    replies = list(server.store.StreamObjects(request(LARGE_BUCKET, batch_size=1000), timeout=30))
    assert [len(reply.objects) for reply in replies] == [1000, 500]
    assert described([info for reply in replies for info in reply.objects]) == expected(LARGE_OBJECTS)


def test_archive_stores_one_document_per_object_and_repeats_as_updates(server: Server) -> None:
    server.archive.drop()
    first = server.store.ArchiveObjects(request(), timeout=60)
    assert (first.listed, first.inserted, first.updated) == (BENCH_OBJECTS, BENCH_OBJECTS, 0)
    assert server.archive.count_documents({}) == BENCH_OBJECTS
    body = seed_objects(1)["obj-00000"]
    document = server.archive.find_one({"_id": f"{BENCH_BUCKET}/obj-00000"})
    assert document is not None
    assert (document["bucket"], document["key"], document["size"], document["etag"]) == (
        BENCH_BUCKET,
        "obj-00000",
        len(body),
        expected_etag(body),
    )
    assert document["last_modified"] is not None

    again = server.store.ArchiveObjects(request(), timeout=60)
    assert (again.listed, again.inserted, again.updated) == (BENCH_OBJECTS, 0, BENCH_OBJECTS)
    assert server.archive.count_documents({}) == BENCH_OBJECTS


def test_concurrent_archives_leave_one_document_per_object(server: Server) -> None:
    server.archive.drop()
    with ThreadPoolExecutor(max_workers=10) as pool:
        replies = list(pool.map(lambda _: server.store.ArchiveObjects(request(), timeout=120), range(10)))
    assert server.archive.count_documents({}) == BENCH_OBJECTS
    assert sum(reply.inserted for reply in replies) == BENCH_OBJECTS
    assert all(reply.inserted + reply.updated == BENCH_OBJECTS for reply in replies)


INVALID_REQUESTS = {
    "empty bucket": (request(""), "bucket: must not be empty"),
    "uppercase bucket": (request("Bench"), "bucket: 'Bench' is not a valid S3 bucket name"),
    "short bucket": (request("ab"), "bucket: 'ab' is not a valid S3 bucket name"),
    "ip-address bucket": (request("192.168.1.1"), "an IP address"),
    "batch too large": (request(batch_size=1001), "batch_size: 1001 is above the maximum of 1000"),
}


@pytest.mark.parametrize("case", INVALID_REQUESTS, ids=list(INVALID_REQUESTS))
def test_invalid_arguments(server: Server, case: str) -> None:
    bad, message = INVALID_REQUESTS[case]
    calls: list[Callable[[], object]] = [lambda: list(server.store.StreamObjects(bad, timeout=10))]
    if bad.batch_size == 0:
        calls += [
            lambda: server.store.ListObjects(bad, timeout=10),
            lambda: server.store.ArchiveObjects(bad, timeout=10),
        ]
    for call in calls:
        with pytest.raises(grpc.RpcError) as raised:
            call()
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert message in str(raised.value.details())
        assert "Traceback" not in str(raised.value.details())
    assert server.greeter.SayHello(bench_pb2.HelloRequest(name="again"), timeout=5).message == "Hello again"


def test_missing_bucket_is_not_found(server: Server) -> None:
    for call in (server.store.ListObjects, server.store.ArchiveObjects):
        with pytest.raises(grpc.RpcError) as raised:
            call(request("no-such-bucket"), timeout=10)
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert "no-such-bucket" in str(raised.value.details())
    with pytest.raises(grpc.RpcError) as raised:
        list(server.store.StreamObjects(request("no-such-bucket"), timeout=10))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert server.store.ListObjects(request(prefix="obj-0000"), timeout=10).objects


def test_reflection_finds_the_file_of_a_method(server: Server) -> None:
    """ghz resolves `--call bench.v1.Greeter.SayHello` by asking for the method's file."""
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
    asks = [
        reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)
        for symbol in ("bench.v1.Greeter.SayHello", "bench.v1.ObjectStore.StreamObjects")
    ]
    for reply in stub.ServerReflectionInfo(iter(asks), timeout=10):
        assert reply.WhichOneof("message_response") == "file_descriptor_response"
        assert b"protos/bench/v1/bench.proto" in reply.file_descriptor_response.file_descriptor_proto[0]


def test_sigterm_lets_a_running_stream_finish(server: Server) -> None:
    """Runs last in the module: the server is gone afterwards."""
    stream = server.store.StreamObjects(request(LARGE_BUCKET, batch_size=1), timeout=60)
    first = next(stream)
    server.child.signal(signal.SIGTERM)
    rest = list(stream)
    assert len(rest) + 1 == LARGE_OBJECTS
    assert [first.objects[0].key, rest[-1].objects[0].key] == ["obj-00000", f"obj-{LARGE_OBJECTS - 1:05d}"]
    assert server.child.process.wait(timeout=15) == 0, server.child.log_tail()


def test_the_grpc_aio_server_registers_no_method_and_resolves_every_one_generically() -> None:
    """grpc.aio waits on one pending request per registered method each time a call arrives (servers.aio
    GenericHandlersOnly): ours registers none, and its generic handlers still find every method it serves."""
    from servers.aio import CallsInFlight, add_services

    registered: list[str] = []
    generic: list[Any] = []

    async def build() -> None:  # grpc.aio makes its server on the running loop
        server: Any = grpc.aio.server()
        server.add_registered_method_handlers = lambda service, handlers: registered.append(service)
        server.add_generic_rpc_handlers = generic.extend
        add_services(server, scenarios=Any, calls=CallsInFlight(None))  # type: ignore[arg-type]  # stored only

    asyncio.run(build())
    assert registered == []

    class Call(grpc.HandlerCallDetails):
        def __init__(self, method: str) -> None:
            self.method, self.invocation_metadata = method, ()

    methods = [
        f"/{service.full_name}/{method.name}"
        for service in bench_pb2.DESCRIPTOR.services_by_name.values()
        for method in service.methods
    ]
    methods += ["/grpc.health.v1.Health/Check", "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]
    assert all(any(handler.service(Call(method)) for handler in generic) for method in methods)
