"""Fixtures: the real backends (embedded, or the ones the environment names) and each server variant."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pymongo
import pytest

from harness.backends import Backends, seed_bucket, start_backends
from harness.matrix import BENCH_BUCKET, BENCH_OBJECTS, SERVER_VARIANTS, ServerVariant
from harness.processes import Child
from harness.serving import running_server
from protos.bench.v1 import bench_pb2_grpc

LARGE_BUCKET = "bench-large"
LARGE_OBJECTS = 1500  # more than one ListObjectsV2 page


@pytest.fixture(scope="session")
def backends() -> Iterator[Backends]:
    with start_backends(os.environ) as started:
        seed_bucket(started.config, BENCH_BUCKET, BENCH_OBJECTS)
        seed_bucket(started.config, LARGE_BUCKET, LARGE_OBJECTS)
        yield started


@dataclass
class Server:
    """A running server variant, a channel to it and the MongoDB collection it archives into."""

    variant: ServerVariant
    target: str
    child: Child
    channel: grpc.Channel
    archive: pymongo.collection.Collection[dict[str, Any]]

    @property
    def greeter(self) -> bench_pb2_grpc.GreeterStub:
        return bench_pb2_grpc.GreeterStub(self.channel)

    @property
    def store(self) -> bench_pb2_grpc.ObjectStoreStub:
        return bench_pb2_grpc.ObjectStoreStub(self.channel)


@pytest.fixture(scope="module", params=SERVER_VARIANTS, ids=lambda variant: variant.name)
def server(request: pytest.FixtureRequest, backends: Backends) -> Iterator[Server]:
    """Each variant in turn, archiving into a database of its own; it must exit 0 when stopped."""
    variant: ServerVariant = request.param
    mongo_db = f"test_{variant.name.replace('-', '_')}"
    env = {**backends.env(), "MONGO_DB": mongo_db}
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(backends.config.mongo_uri)
    mongo.drop_database(mongo_db)
    try:
        with running_server(variant, env) as (target, child), grpc.insecure_channel(target) as channel:
            yield Server(variant, target, child, channel, mongo[mongo_db]["objects"])
            assert child.stop() == 0, child.log_tail()
    finally:
        mongo.drop_database(mongo_db)
        mongo.close()
