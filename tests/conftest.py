"""Fixtures: the pinned tools, the real backends (embedded, or the ones the environment names) and each server
variant. A test that uses any of them (the `tools` fixture underlies them all) is marked `live` on collection;
`make test-fast` runs the others, which need only the Python dependencies."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import psutil
import pymongo
import pytest

from harness.method.validation import ALL_CLASSES, BLOCKS_DRAWN, Calibration, Held
from harness.plan.matrix import BENCH_BUCKET, BENCH_OBJECTS
from harness.plan.servers import SERVER_VARIANTS, ServerVariant
from harness.plan.servers import STACKS as SINGLE_PROCESS_STACKS
from harness.results import calibration as calibration_file
from harness.run.backends import Backends, seed_bucket, start_backends
from harness.run.processes import PORTS, Child
from harness.run.serving import running_server
from harness.run.tools import ensure_all
from protos.bench.v1 import bench_pb2_grpc
from servers.common import GRPCIO_CLIENT_OPTIONS

LARGE_BUCKET = "bench-large"
LARGE_OBJECTS = 1500  # more than one ListObjectsV2 page
STACKS = list(SINGLE_PROCESS_STACKS)
CONNECTIONS = 16  # to a -p 2 server: 2 * 0.5**16 is the chance the kernel hands every connection to one process


def answering(workers: list[psutil.Process], port: int) -> set[int]:
    """The pids of a multi-process server's workers that hold an established connection on port."""
    return {
        worker.pid
        for worker in workers
        for connection in worker.net_connections(kind="tcp")
        if connection.laddr.port == port and connection.status == psutil.CONN_ESTABLISHED
    }


LIVE = "live"
WORKER_PORTS = 3000  # ports a pytest-xdist worker hands out, from 20000 up: four workers below the ephemeral range


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, each worker hands out ports from a range of its own (harness.run.processes.PORTS), and
    every process it starts inherits the range, by which `tests.runs.started_by_harness` tells them apart."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, ...
    if worker.startswith("gw") and worker[2:].isdigit():
        low = 20000 + int(worker[2:]) * WORKER_PORTS
        os.environ[PORTS] = f"{low}-{low + WORKER_PORTS - 1}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs a tool, a server or a backend (it uses the `tools` fixture) as live."""
    for item in items:
        if "tools" in getattr(item, "fixturenames", ()):
            item.add_marker(LIVE)


@pytest.fixture(scope="session", autouse=True)
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Calibration]:
    """The calibration a results tree without its own reads (harness.results.calibration): a fixed one in which 2
    blocks hold on every machine class, so that no test's verdict of trust turns on the committed validation."""
    held = tuple(Held(blocks, 0.95, 0.95, 0.98, 1000, 200, 100, 30) for blocks in BLOCKS_DRAWN)
    found = Calibration({ALL_CLASSES: held})
    path = tmp_path_factory.mktemp("calibration") / calibration_file.NAME
    calibration_file.write_calibration(path, found, {ALL_CLASSES: ["synthetic"]}, 1, 0)
    committed, calibration_file.CHECKOUT = calibration_file.CHECKOUT, path
    calibration_file.load_calibration.cache_clear()
    yield found
    calibration_file.CHECKOUT = committed
    calibration_file.load_calibration.cache_clear()


@pytest.fixture(scope="session")
def tools() -> dict[str, str]:
    """Every pinned tool (ghz, versitygw, toxiproxy, loadgen, h2load, mongo-java-server), installed once."""
    return ensure_all()


@pytest.fixture(scope="session")
def backends(tools: dict[str, str]) -> Iterator[Backends]:
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
        with (
            running_server(variant, env) as (target, child),
            grpc.insecure_channel(target, options=GRPCIO_CLIENT_OPTIONS) as channel,
        ):
            yield Server(variant, target, child, channel, mongo[mongo_db]["objects"])
            assert child.stop() == 0, child.log_tail()
    finally:
        mongo.drop_database(mongo_db)
        mongo.close()
