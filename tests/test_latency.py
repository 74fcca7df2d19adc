"""Emulated latency: toxiproxy really delays the backend, and MongoDB URIs are rewritten to reach it."""

from __future__ import annotations

import time

import pytest

from harness.plan.matrix import BENCH_BUCKET
from harness.run.backends import Backends, s3_client
from harness.run.latency import LatencyRoutes, replace_mongo_host, toxiproxy
from scenarios.config import BackendConfig

LATENCY_MS = 100


def timed_list(config: BackendConfig) -> float:
    client = s3_client(config)
    try:
        client.list_objects_v2(Bucket=BENCH_BUCKET, MaxKeys=1)  # connect first: time one request, not the dial
        begun = time.monotonic()
        client.list_objects_v2(Bucket=BENCH_BUCKET, MaxKeys=1)
        return time.monotonic() - begun
    finally:
        client.close()


def test_the_proxy_adds_the_asked_latency(backends: Backends) -> None:
    direct = timed_list(backends.config)
    with toxiproxy() as proxy:
        routes = LatencyRoutes(proxy, backends.config)
        delayed = routes.config(s3_latency_ms=LATENCY_MS)
        assert delayed.s3_endpoint != backends.config.s3_endpoint
        assert routes.config(s3_latency_ms=LATENCY_MS) == delayed  # one proxy per latency, reused
        jittered = routes.config(s3_latency_ms=LATENCY_MS, jitter_ms=10)
        assert jittered.s3_endpoint not in (delayed.s3_endpoint, backends.config.s3_endpoint)  # a proxy of its own
        proxied = timed_list(delayed)
    assert proxied >= LATENCY_MS / 1000  # a lower bound: a loaded machine only adds to it
    assert direct < proxied  # an order, not a bound on the direct call's time


def test_mongo_latency_route_keeps_the_database_reachable(backends: Backends) -> None:
    import pymongo

    with toxiproxy() as proxy:
        config = LatencyRoutes(proxy, backends.config).config(mongo_latency_ms=20)
        client: pymongo.MongoClient[dict[str, object]] = pymongo.MongoClient(config.mongo_uri)
        try:
            client.admin.command("ping")
            begun = time.monotonic()
            client.admin.command("ping")
            assert time.monotonic() - begun >= 0.02
        finally:
            client.close()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("mongodb://127.0.0.1:27017", "mongodb://10.0.0.9:1/?directConnection=true"),
        ("mongodb://u:p@db:27017/bench?w=1", "mongodb://u:p@10.0.0.9:1/bench?w=1&directConnection=true"),
        ("mongodb://db:27017/?directConnection=false", "mongodb://10.0.0.9:1/?directConnection=true"),
        ("mongodb://db?tls=true", "mongodb://10.0.0.9:1/?tls=true&directConnection=true"),
    ],
)
def test_replace_mongo_host(uri: str, expected: str) -> None:
    assert replace_mongo_host(uri, "10.0.0.9:1") == expected


@pytest.mark.parametrize("uri", ["mongodb://a:1,b:2/?replicaSet=rs", "mongodb+srv://cluster.example"])
def test_replace_mongo_host_refuses_what_a_proxy_cannot_front(uri: str) -> None:
    with pytest.raises(ValueError, match="latency emulation"):
        replace_mongo_host(uri, "10.0.0.9:1")
