"""The streaming contract on every stack, over real gRPC against the real backends: paging, parallel
streams, a stream for a unary reply, and the Sensor.Watch control stream."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from harness.plan.servers import server_variant
from harness.run.backends import Backends, seed_bucket, seed_objects
from harness.run.serving import running_server
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from tests.conftest import LARGE_BUCKET, LARGE_OBJECTS, STACKS
from tests.waiting import until

PREFIXED_BUCKET = "bench-prefixed"
PREFIXES = 10
PREFIXED_OBJECTS = 1100


@pytest.fixture(scope="module", params=STACKS, ids=lambda variant: variant.name)
def channel(request: pytest.FixtureRequest, backends: Backends) -> Iterator[grpc.Channel]:
    seed_bucket(backends.config, PREFIXED_BUCKET, PREFIXED_OBJECTS, PREFIXES)
    with running_server(request.param, backends.env()) as (target, child), grpc.insecure_channel(target) as opened:
        yield opened
        assert child.stop() == 0, child.log_tail()


def keys(objects: list[bench_pb2.ObjectInfo]) -> list[str]:
    return [each.key for each in objects]


def test_following_the_page_tokens_returns_what_list_objects_returns(channel: grpc.Channel) -> None:
    store = bench_pb2_grpc.ObjectStoreStub(channel)
    whole = store.ListObjects(bench_pb2.ListObjectsRequest(bucket=LARGE_BUCKET), timeout=30).objects
    for page_size, pages in ((0, 2), (400, 4)):  # 0 means 1,000 per page
        fetched: list[bench_pb2.ObjectInfo] = []
        token, count = "", 0
        while True:
            request = bench_pb2.ListObjectsPageRequest(bucket=LARGE_BUCKET, page_size=page_size, page_token=token)
            reply = store.ListObjectsPage(request, timeout=30)
            fetched += reply.objects
            token, count = reply.next_page_token, count + 1
            if not token:
                break
        assert count == pages
        assert list(fetched) == list(whole) and len(fetched) == LARGE_OBJECTS


@pytest.mark.parametrize(
    ("request_fields", "field_name"),
    [
        ({"page_size": 1001}, "page_size"),
        ({"page_token": "forged"}, "page_token"),
        ({"page_token": "b2JqLTAwMDAx.0123456789abcdef0123456789abcdef"}, "page_token"),
    ],
)
def test_a_bad_page_size_or_token_is_invalid(
    channel: grpc.Channel, request_fields: dict[str, Any], field_name: str
) -> None:
    store = bench_pb2_grpc.ObjectStoreStub(channel)
    with pytest.raises(grpc.RpcError) as raised:
        store.ListObjectsPage(bench_pb2.ListObjectsPageRequest(bucket=LARGE_BUCKET, **request_fields), timeout=30)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field_name in (raised.value.details() or "")


def test_a_token_is_good_only_for_its_own_prefix(channel: grpc.Channel) -> None:
    store = bench_pb2_grpc.ObjectStoreStub(channel)
    first = store.ListObjectsPage(bench_pb2.ListObjectsPageRequest(bucket=LARGE_BUCKET, page_size=5), timeout=30)
    other = bench_pb2.ListObjectsPageRequest(
        bucket=LARGE_BUCKET, prefix="obj-0", page_size=5, page_token=first.next_page_token
    )
    with pytest.raises(grpc.RpcError) as raised:
        store.ListObjectsPage(other, timeout=30)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("parallelism", [4, 10])
def test_parallel_streams_send_every_object_once_in_key_order_within_a_prefix(
    channel: grpc.Channel, parallelism: int
) -> None:
    store = bench_pb2_grpc.ObjectStoreStub(channel)
    request = bench_pb2.ListObjectsRequest(bucket=PREFIXED_BUCKET, batch_size=7, parallelism=parallelism)
    messages = list(store.StreamObjects(request, timeout=60))
    received = [key for message in messages for key in keys(list(message.objects))]
    assert sorted(received) == sorted(seed_objects(PREFIXED_OBJECTS, PREFIXES))
    assert len(received) == len(set(received))
    for prefix in {key.split("/")[0] for key in received}:
        within = [key for key in received if key.startswith(prefix + "/")]
        assert within == sorted(within)
    assert all(len({key.split("/")[0] for key in keys(list(m.objects))}) == 1 for m in messages)


def test_parallelism_above_64_is_refused(channel: grpc.Channel) -> None:
    store = bench_pb2_grpc.ObjectStoreStub(channel)
    request = bench_pb2.ListObjectsRequest(bucket=PREFIXED_BUCKET, parallelism=65)
    with pytest.raises(grpc.RpcError) as raised:
        list(store.StreamObjects(request, timeout=30))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "parallelism" in (raised.value.details() or "")


def test_say_hello_stream_sends_exactly_one_message(channel: grpc.Channel) -> None:
    replies = list(bench_pb2_grpc.GreeterStub(channel).SayHelloStream(bench_pb2.HelloRequest(name="s"), timeout=10))
    assert [reply.message for reply in replies] == ["Hello s"]


@dataclass
class Watcher:
    """One Watch stream from a test: requests go in through a queue, responses are kept in the order they came.

    A position in that order (`mark`) is the test's clock: a subscribed sensor's readings arrive every 100 ms of
    the server's time, so "ten more readings of pres" is a second of it, however loaded the machine."""

    channel: grpc.Channel
    requests: queue.Queue[bench_pb2.WatchRequest | None] = field(default_factory=queue.Queue)
    received: list[bench_pb2.WatchResponse] = field(default_factory=list)
    error: grpc.RpcError | None = None

    def __post_init__(self) -> None:
        self._responses = bench_pb2_grpc.SensorStub(self.channel).Watch(iter(self.requests.get, None), timeout=120)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for response in self._responses:
                self.received.append(response)
        except grpc.RpcError as error:
            self.error = error

    def mark(self) -> int:
        """The position the next response will take."""
        return len(self.received)

    def create(self, sensor: str) -> None:
        self.requests.put(bench_pb2.WatchRequest(create_request=bench_pb2.WatchCreateRequest(sensor_id=sensor)))

    def cancel(self, sensor: str) -> None:
        self.requests.put(bench_pb2.WatchRequest(cancel_request=bench_pb2.WatchCancelRequest(sensor_id=sensor)))

    def now(self, sensor: str) -> None:
        self.requests.put(bench_pb2.WatchRequest(now_request=bench_pb2.WatchNowRequest(sensor_id=sensor)))

    def close(self) -> grpc.StatusCode:
        self.requests.put(None)
        self._reader.join(30)
        return self.error.code() if self.error else self._responses.code()

    def of(self, sensor: str, since: int = 0) -> list[bench_pb2.WatchResponse]:
        """The sensor's responses from position `since` on."""
        return [response for response in self.received[since:] if response.sensor_id == sensor]

    def wait_for(self, sensor: str, predicate: str) -> tuple[bench_pb2.WatchResponse, int]:
        """The sensor's first response with `predicate` set, and the position after it."""

        def found() -> tuple[bench_pb2.WatchResponse, int] | None:
            for position, response in enumerate(list(self.received)):
                if response.sensor_id == sensor and getattr(response, predicate):
                    return response, position + 1
            return None

        return until(found, f"a {predicate} response for {sensor} (received: {self.received})")

    def readings_past(self, sensor: str, count: int, since: int = 0) -> int:
        """Wait for `count` readings of the sensor from position `since` on; the position after the last of them."""

        def after() -> int:
            seen = 0
            for position, response in enumerate(list(self.received)[since:], start=since):
                seen += response.HasField("timestamp") and response.sensor_id == sensor
                if seen == count:
                    return position + 1
            return 0

        return until(after, f"{count} readings of {sensor} from position {since} on")


def readings(responses: list[bench_pb2.WatchResponse]) -> list[bench_pb2.WatchResponse]:
    return [r for r in responses if r.HasField("timestamp")]


def test_watch_follows_the_go_studys_sequence(channel: grpc.Channel) -> None:
    watcher = Watcher(channel)
    watcher.create("temp")
    assert watcher.wait_for("temp", "created")[0].created
    watcher.readings_past("temp", 2)  # one every 100 ms
    watcher.create("pres")
    watcher.wait_for("pres", "created")
    watcher.create("nope")
    unknown, _ = watcher.wait_for("nope", "canceled")
    assert "nope" in unknown.error
    asked = watcher.mark()
    watcher.now("light")
    watcher.readings_past("light", 1, asked)
    watcher.readings_past("pres", 10, asked)  # a second of the server's ticks
    assert len(readings(watcher.of("light", asked))) == 1  # one reading, no subscription
    cancelled_at = watcher.mark()
    watcher.cancel("temp")
    _, acknowledged = watcher.wait_for("temp", "canceled")
    quiet_from = watcher.readings_past("pres", 3, acknowledged)  # past readings on their way when the cancel came
    watcher.readings_past("pres", 10, quiet_from)
    assert readings(watcher.of("temp", quiet_from)) == []
    assert len(readings(watcher.of("pres", cancelled_at))) >= 10  # pres still flows
    first = readings(watcher.of("temp"))[0]
    assert abs(first.timestamp.ToNanoseconds() / 1e9 - time.time()) < 60  # the server's wall clock
    assert watcher.close() == grpc.StatusCode.OK


def test_a_one_worker_sync_server_serves_a_second_watch_only_after_the_first_ends(backends: Backends) -> None:
    one = server_variant("sync-w1")
    with running_server(one, backends.env()) as (target, child), grpc.insecure_channel(target) as opened:
        first = Watcher(opened)
        first.create("temp")
        first.wait_for("temp", "created")
        # The second call starts only now: started together, either could take the only worker.
        second = Watcher(opened)
        second.create("pres")
        first.readings_past("temp", 10, first.mark())  # a second of the first stream's readings
        assert second.of("pres") == []  # queued for the only worker thread
        assert first.close() == grpc.StatusCode.OK
        second.wait_for("pres", "created")
        assert second.close() == grpc.StatusCode.OK
        assert child.stop() == 0
