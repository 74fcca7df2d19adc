"""A call that ends early (deadline, cancel) stops the server's work on every variant: no further S3 page."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import grpc
import pytest

from harness.plan.matrix import BENCH_BUCKET
from harness.plan.servers import SERVER_VARIANTS, ServerVariant
from harness.run.backends import Backends, s3_client, seed_bucket
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from tests.s3_counter import CountingProxy

HUGE_BUCKET = "bench-huge"
HUGE_OBJECTS = 10_000  # ten ListObjectsV2 pages
S3_DELAY = 0.1
# The page requests of our own, through the proxy and one at a time, that stand for time: had the server gone on
# listing, it would have asked for a page about as often (each waits S3_DELAY there), several in this many.
SETTLE_PAGES = 15


@pytest.fixture(scope="session")
def huge_bucket(backends: Backends) -> str:
    seed_bucket(backends.config, HUGE_BUCKET, HUGE_OBJECTS)
    return HUGE_BUCKET


@dataclass
class Counted:
    """A server whose S3 traffic crosses a counting proxy, and an S3 client of the test's own through it."""

    channel: grpc.Channel
    proxy: CountingProxy
    s3: Any

    @property
    def greeter(self) -> bench_pb2_grpc.GreeterStub:
        return bench_pb2_grpc.GreeterStub(self.channel)

    @property
    def store(self) -> bench_pb2_grpc.ObjectStoreStub:
        return bench_pb2_grpc.ObjectStoreStub(self.channel)

    def pages_after_settling(self) -> int:
        """The list requests the server made, counted once SETTLE_PAGES of the test's own have crossed the proxy one
        after another: the proxy's delay is the clock, so a loaded machine slows both alike."""
        for _ in range(SETTLE_PAGES):
            self.s3.list_objects_v2(Bucket=BENCH_BUCKET, MaxKeys=1)
        return self.proxy.list_requests - SETTLE_PAGES


@pytest.fixture(scope="module", params=SERVER_VARIANTS, ids=lambda variant: variant.name)
def counted(request: pytest.FixtureRequest, backends: Backends, huge_bucket: str) -> Iterator[Counted]:
    variant: ServerVariant = request.param
    endpoint = backends.config.s3_endpoint or ""
    host, _, port = endpoint.removeprefix("http://").rpartition(":")
    with CountingProxy(host, int(port), S3_DELAY) as proxy:
        env = {**backends.env(), "AWS_ENDPOINT_URL": proxy.endpoint}
        s3 = s3_client(replace(backends.config, s3_endpoint=proxy.endpoint))
        with running_server(variant, env) as (target, child), grpc.insecure_channel(target) as channel:
            yield Counted(channel, proxy, s3)
            s3.close()
            assert child.stop() == 0, child.log_tail()


def test_a_wait_past_its_deadline_is_deadline_exceeded_and_frees_its_slot(counted: Counted) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        counted.greeter.SayHello(bench_pb2.HelloRequest(name="late", delay_ms=60_000), timeout=0.1)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # With one worker thread, this call would wait for the first one's minute unless its wait ended.
    reply = counted.greeter.SayHello(bench_pb2.HelloRequest(name="next"), timeout=20)
    assert reply.message == "Hello next"


def test_a_listing_past_its_deadline_requests_no_further_page(counted: Counted, huge_bucket: str) -> None:
    counted.proxy.reset()
    with pytest.raises(grpc.RpcError) as raised:
        counted.store.ListObjects(bench_pb2.ListObjectsRequest(bucket=huge_bucket), timeout=0.05)
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert counted.pages_after_settling() <= 2  # the page in flight at the deadline, at most one more


def test_cancelling_a_stream_after_its_first_message_stops_the_listing(counted: Counted, huge_bucket: str) -> None:
    counted.proxy.reset()
    call = counted.store.StreamObjects(bench_pb2.ListObjectsRequest(bucket=huge_bucket, batch_size=1000), timeout=30)
    first = next(call)
    assert len(first.objects) == 1000
    call.cancel()
    assert counted.pages_after_settling() <= 3  # ten pages had it gone on
    reply = counted.store.ListObjects(bench_pb2.ListObjectsRequest(bucket="bench", prefix="obj-0000"), timeout=10)
    assert reply.objects  # and it serves the next call
