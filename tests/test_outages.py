"""A backend outage gives UNAVAILABLE naming the backend; the server keeps serving and recovers."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from harness.plan.servers import SERVER_VARIANTS, ServerVariant
from harness.run.backends import Backends, backend_env, seed_bucket, versitygw
from harness.run.processes import free_port
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc

BUCKET = "outage"
OBJECTS = 20
variants = pytest.mark.parametrize("variant", SERVER_VARIANTS, ids=lambda variant: variant.name)


def assert_unavailable(call: Callable[..., object], backend: str) -> None:
    with pytest.raises(grpc.RpcError) as raised:
        call(bench_pb2.ListObjectsRequest(bucket=BUCKET), timeout=30)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert f"{backend} is unavailable" in str(raised.value.details())


def assert_still_serving(channel: grpc.Channel) -> None:
    reply = bench_pb2_grpc.GreeterStub(channel).SayHello(bench_pb2.HelloRequest(name="x"), timeout=5)
    assert reply.message == "Hello x"


@variants
def test_s3_stopped_mid_test_is_unavailable_then_recovers(variant: ServerVariant, backends: Backends) -> None:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="outage-s3-") as data, versitygw(Path(data), port) as gateway:
        config = gateway.config(backends.config)
        seed_bucket(config, BUCKET, OBJECTS)
        with (
            running_server(variant, backend_env(config)) as (target, _),
            grpc.insecure_channel(target) as channel,
        ):
            store = bench_pb2_grpc.ObjectStoreStub(channel)
            assert len(store.ListObjects(bench_pb2.ListObjectsRequest(bucket=BUCKET), timeout=30).objects) == OBJECTS

            gateway.child.stop()
            for call in (store.ListObjects, store.ArchiveObjects):
                assert_unavailable(call, "S3")
            with pytest.raises(grpc.RpcError) as raised:
                list(store.StreamObjects(bench_pb2.ListObjectsRequest(bucket=BUCKET), timeout=30))
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
            assert_still_serving(channel)

            with versitygw(Path(data), port, gateway.credentials):
                reply = store.ListObjects(bench_pb2.ListObjectsRequest(bucket=BUCKET), timeout=30)
                assert len(reply.objects) == OBJECTS


@variants
def test_mongo_unreachable_is_unavailable(variant: ServerVariant, backends: Backends) -> None:
    config = replace(backends.config, mongo_uri=f"mongodb://127.0.0.1:{free_port()}")
    seed_bucket(config, BUCKET, OBJECTS)
    with (
        running_server(variant, backend_env(config)) as (target, _),
        grpc.insecure_channel(target) as channel,
    ):
        assert_unavailable(bench_pb2_grpc.ObjectStoreStub(channel).ArchiveObjects, "MongoDB")
        assert_still_serving(channel)
