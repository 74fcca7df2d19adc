"""Who holds the S3 client (`--s3-client`), on every stack: the process, whose pooled connection serves
call after call, or each request, which opens a connection of its own and closes it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import grpc
import pytest

from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS
from harness.plan.servers import ServerVariant
from harness.run.backends import Backends
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from scenarios.clients import S3_CLIENT_SCOPES
from servers.common import parse_config
from tests.conftest import STACKS
from tests.s3_counter import CountingProxy

CALLS = 5


@pytest.fixture(scope="module")
def proxy(backends: Backends) -> Iterator[CountingProxy]:
    host, _, port = (backends.config.s3_endpoint or "").removeprefix("http://").rpartition(":")
    with CountingProxy(host, int(port), 0.0) as counting:
        yield counting


@pytest.mark.parametrize("scope", S3_CLIENT_SCOPES)
@pytest.mark.parametrize("variant", STACKS, ids=lambda variant: variant.name)
def test_s3_connections_follow_the_client_scope(
    backends: Backends, proxy: CountingProxy, variant: ServerVariant, scope: str
) -> None:
    served = replace(variant, args=(*variant.args, "--s3-client", scope))
    env = {**backends.env(), "AWS_ENDPOINT_URL": proxy.endpoint}
    with running_server(served, env) as (target, child), grpc.insecure_channel(target) as channel:
        store = bench_pb2_grpc.ObjectStoreStub(channel)
        proxy.reset()
        for _ in range(CALLS):
            reply = store.ListObjects(bench_pb2.ListObjectsRequest(bucket=BENCH_BUCKET), timeout=30)
            assert len(reply.objects) == BENCH_OBJECTS
        paged = store.ListObjectsPage(bench_pb2.ListObjectsPageRequest(bucket=BENCH_BUCKET, page_size=10), timeout=30)
        assert len(paged.objects) == 10
        assert proxy.list_requests == CALLS + 1
        # Calls one after another: the process's pool keeps one connection; a client per request opens one each.
        assert proxy.connections == (1 if scope == "per-process" else CALLS + 1)
        assert child.stop() == 0, child.log_tail()


def test_an_unknown_scope_is_refused_with_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_config(["--s3-client", "per-thread"], prog="server", description="", stack="threads")
    assert "per-process" in capsys.readouterr().err
