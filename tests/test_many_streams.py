"""2,000 concurrent streams on each event-loop stack: each served or refused, and the server stays up."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from harness.backends import Backends
from harness.matrix import BENCH_BUCKET, SERVER_VARIANTS, ServerVariant
from harness.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc

STREAMS = 2000
# One per event-loop server module and loop; the MongoDB-driver and multi-process variants serve alike.
# grpc.aio ends about one stream in ten CANCELLED (details "CANCELLED", nothing in the server's log)
# when 2,000 arrive at once on one connection: found here, not yet explained (issue 12); strict, so the
# day it passes is noticed.
AIO_CANCELS = pytest.mark.xfail(
    strict=True, reason="grpc.aio cancels ~10% of 2,000 simultaneous streams instead of serving or refusing them"
)
EVENT_LOOP_STACKS = [
    pytest.param(v, id=v.name, marks=[AIO_CANCELS] if v.module == "servers.aio" else [])
    for v in SERVER_VARIANTS
    if v.slots is None and v.only is None and v.min_cpus == 1
]


async def many_streams(target: str) -> dict[str, int]:
    """Open every stream at once; count how each ended."""
    request = bench_pb2.ListObjectsRequest(bucket=BENCH_BUCKET, prefix="obj-0000", batch_size=10)
    async with grpc.aio.insecure_channel(target) as channel:
        store = bench_pb2_grpc.ObjectStoreStub(channel)

        async def one() -> str:
            try:
                messages = [message async for message in store.StreamObjects(request, timeout=120)]
            except grpc.aio.AioRpcError as error:
                return error.code().name
            return "OK" if sum(len(m.objects) for m in messages) == 10 else "WRONG"

        outcomes = await asyncio.gather(*(one() for _ in range(STREAMS)))
    return {outcome: outcomes.count(outcome) for outcome in set(outcomes)}


@pytest.mark.parametrize("variant", EVENT_LOOP_STACKS)
def test_two_thousand_streams_are_served_or_refused(backends: Backends, variant: ServerVariant) -> None:
    with running_server(variant, backends.env()) as (target, child):
        outcomes = asyncio.run(many_streams(target))
        assert set(outcomes) <= {"OK", "RESOURCE_EXHAUSTED"}, outcomes
        assert sum(outcomes.values()) == STREAMS
        with grpc.insecure_channel(target) as channel:
            reply = bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="after"), timeout=10)
        assert reply.message == "Hello after"
        assert child.stop() == 0
