"""The sensors behind `Sensor.Watch`: which exist, their readings, and one source per sensor fanned out.

A hub keeps, per sensor, the deliveries of every stream watching it; each tick makes one reading per
watched sensor and hands that same message to each of its watchers (fan-out), so a thousand streams
watching one sensor cost one reading, not a thousand timers. A session is one Watch stream's view:
it answers create, cancel and now requests and unsubscribes everything when the stream ends. Thread-pool
servers tick the hub from a thread, event-loop servers from a task (sync.py, aio.py); the meaning is here.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Callable

from protos.bench.v1 import bench_pb2

NAMED_SENSORS = frozenset({"temp", "pres", "light"})
NUMBERED_SENSORS = 10_000  # s0 to s9999
_NUMBERED = re.compile(r"^s(0|[1-9][0-9]{0,3})$")
DEFAULT_INTERVAL_MS = 100

Deliver = Callable[[bench_pb2.WatchResponse], None]


def is_sensor(sensor_id: str) -> bool:
    """Whether the server knows the sensor: temp, pres, light, or s0 to s9999."""
    return sensor_id in NAMED_SENSORS or bool(_NUMBERED.match(sensor_id))


def unknown(sensor_id: str) -> str:
    return f"unknown sensor {sensor_id!r}: the sensors are temp, pres, light and s0 to s{NUMBERED_SENSORS - 1}"


def reading(sensor_id: str, now_ns: int) -> bench_pb2.WatchResponse:
    """A sensor's reading at a time: a value that depends on the sensor and the tenth of a second."""
    value = zlib.crc32(f"{sensor_id}|{now_ns // 100_000_000}".encode()) % 1000
    response = bench_pb2.WatchResponse(sensor_id=sensor_id, value=value)
    response.timestamp.FromNanoseconds(now_ns)
    return response


class SensorHub:
    """Every sensor some stream watches, and who watches it; `tick()` delivers one reading per sensor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # streams subscribe from their own threads on a thread-pool server
        self._watchers: dict[str, dict[int, Deliver]] = {}

    def subscribe(self, sensor_id: str, session: int, deliver: Deliver) -> None:
        with self._lock:
            self._watchers.setdefault(sensor_id, {})[session] = deliver

    def unsubscribe(self, sensor_id: str, session: int) -> None:
        with self._lock:
            watchers = self._watchers.get(sensor_id, {})
            watchers.pop(session, None)
            if not watchers:
                self._watchers.pop(sensor_id, None)

    def tick(self, now_ns: int | None = None) -> int:
        """One reading of every watched sensor, to each watcher; returns how many were delivered."""
        now_ns = time.time_ns() if now_ns is None else now_ns
        with self._lock:
            fan_out = [(sensor_id, list(watchers.values())) for sensor_id, watchers in self._watchers.items()]
        delivered = 0
        for sensor_id, deliveries in fan_out:
            message = reading(sensor_id, now_ns)
            for deliver in deliveries:
                deliver(message)
            delivered += len(deliveries)
        return delivered


class WatchSession:
    """One Watch stream: its answers to requests, and the sensors it watches on the hub."""

    def __init__(self, hub: SensorHub, deliver: Deliver) -> None:
        self._id = id(self)  # the hub's key for this stream's deliveries while it lives
        self._hub = hub
        self._deliver = deliver
        self._watching: set[str] = set()

    def handle(self, request: bench_pb2.WatchRequest) -> None:
        """Answer a request on the stream (through `deliver`, as readings go), subscribing or unsubscribing."""
        kind = request.WhichOneof("request")
        if kind == "create_request":
            sensor_id = request.create_request.sensor_id
            if not is_sensor(sensor_id):
                self._deliver(bench_pb2.WatchResponse(sensor_id=sensor_id, canceled=True, error=unknown(sensor_id)))
                return
            self._watching.add(sensor_id)
            self._deliver(bench_pb2.WatchResponse(sensor_id=sensor_id, created=True))  # before any reading
            self._hub.subscribe(sensor_id, self._id, self._deliver)
        elif kind == "cancel_request":
            sensor_id = request.cancel_request.sensor_id
            self._watching.discard(sensor_id)
            self._hub.unsubscribe(sensor_id, self._id)
            error = "" if is_sensor(sensor_id) else unknown(sensor_id)
            self._deliver(bench_pb2.WatchResponse(sensor_id=sensor_id, canceled=True, error=error))
        elif kind == "now_request":
            sensor_id = request.now_request.sensor_id
            known = is_sensor(sensor_id)
            answer = reading(sensor_id, time.time_ns()) if known else None
            self._deliver(answer or bench_pb2.WatchResponse(sensor_id=sensor_id, error=unknown(sensor_id)))

    def close(self) -> None:
        """The stream ended: stop every reading to it."""
        for sensor_id in self._watching:
            self._hub.unsubscribe(sensor_id, self._id)
        self._watching.clear()


def interval_seconds(interval_ms: int) -> float:
    if interval_ms < 1:
        raise ValueError(f"sensor interval must be >= 1 ms, got {interval_ms}")
    return interval_ms / 1000
