"""Sensors and page tokens, alone: which sensors exist, fan-out from one reading per tick, a session's
answers, and tokens a client cannot forge."""

from __future__ import annotations

import pytest

from protos.bench.v1 import bench_pb2
from scenarios.errors import InvalidArgument
from scenarios.objects import (
    PageTokens,
    effective_page_size,
    effective_parallelism,
    next_page_token,
    page_request,
    top_level_prefixes,
)
from scenarios.sensors import SensorHub, WatchSession, is_sensor, reading


@pytest.mark.parametrize(
    ("sensor", "known"),
    [("temp", True), ("s0", True), ("s9999", True), ("s10000", False), ("s01", False), ("", False), ("TEMP", False)],
)
def test_the_known_sensors(sensor: str, known: bool) -> None:
    assert is_sensor(sensor) is known


def test_one_reading_per_sensor_per_tick_reaches_every_watcher() -> None:
    hub = SensorHub()
    inboxes: dict[str, list[bench_pb2.WatchResponse]] = {"a": [], "b": [], "c": []}
    hub.subscribe("temp", 1, inboxes["a"].append)
    hub.subscribe("temp", 2, inboxes["b"].append)
    hub.subscribe("pres", 3, inboxes["c"].append)
    assert hub.tick(1_000_000_000) == 3
    assert inboxes["a"][0] is inboxes["b"][0]  # the same message: one reading, fanned out
    assert inboxes["a"][0].timestamp.ToNanoseconds() == 1_000_000_000
    hub.unsubscribe("temp", 1)
    assert hub.tick() == 2 and len(inboxes["a"]) == 1


def test_a_session_answers_create_cancel_and_now_and_unsubscribes_when_closed() -> None:
    hub, sent = SensorHub(), list[bench_pb2.WatchResponse]()
    session = WatchSession(hub, sent.append)
    session.handle(bench_pb2.WatchRequest(create_request=bench_pb2.WatchCreateRequest(sensor_id="temp")))
    session.handle(bench_pb2.WatchRequest(create_request=bench_pb2.WatchCreateRequest(sensor_id="nope")))
    session.handle(bench_pb2.WatchRequest(now_request=bench_pb2.WatchNowRequest(sensor_id="light")))
    assert [(r.sensor_id, r.created, r.canceled, bool(r.error)) for r in sent] == [
        ("temp", True, False, False),
        ("nope", False, True, True),
        ("light", False, False, False),
    ]
    assert sent[2].HasField("timestamp")
    assert hub.tick() == 1  # temp only: now does not subscribe
    session.handle(bench_pb2.WatchRequest(cancel_request=bench_pb2.WatchCancelRequest(sensor_id="temp")))
    assert sent[-1].canceled and hub.tick() == 0
    session.handle(bench_pb2.WatchRequest(create_request=bench_pb2.WatchCreateRequest(sensor_id="pres")))
    session.close()
    assert hub.tick() == 0


def test_a_reading_depends_on_the_sensor_and_the_tenth_of_a_second() -> None:
    assert reading("temp", 10**9).value == reading("temp", 10**9 + 50_000_000).value
    assert 0 <= reading("s5", 10**9).value < 1000


def test_page_tokens_round_trip_and_refuse_what_the_server_did_not_issue() -> None:
    tokens = PageTokens(b"secret")
    token = tokens.issue("bucket", "p/", "p/obj-00009")
    assert tokens.read(token, "bucket", "p/") == "p/obj-00009"
    assert tokens.read("", "bucket", "p/") == ""
    for forged, bucket, prefix in (
        (token, "other", "p/"),
        (token, "bucket", ""),
        ("x" + token, "bucket", "p/"),
        ("%%%.00", "bucket", "p/"),
    ):
        with pytest.raises(InvalidArgument, match="page_token"):
            tokens.read(forged, bucket, prefix)
    with pytest.raises(InvalidArgument):
        PageTokens(b"another").read(token, "bucket", "p/")


def test_next_page_token_is_empty_after_the_last_page() -> None:
    tokens = PageTokens(b"k")
    page = {"Contents": [{"Key": "a"}, {"Key": "b"}], "IsTruncated": True}
    assert tokens.read(next_page_token(tokens, "bkt", "", page), "bkt", "") == "b"
    assert next_page_token(tokens, "bkt", "", {**page, "IsTruncated": False}) == ""


def test_sizes_parallelism_and_page_requests() -> None:
    assert effective_page_size(0) == 1000 and effective_page_size(7) == 7
    assert effective_parallelism(0) == 1 and effective_parallelism(64) == 64
    with pytest.raises(InvalidArgument, match="page_size"):
        effective_page_size(1001)
    with pytest.raises(InvalidArgument, match="parallelism"):
        effective_parallelism(65)
    tokens = PageTokens(b"k")
    assert page_request(tokens, "bkt", "p", 5, "") == {"Bucket": "bkt", "Prefix": "p", "MaxKeys": 5}
    assert page_request(tokens, "bkt", "p", 0, tokens.issue("bkt", "p", "k"))["StartAfter"] == "k"
    with pytest.raises(InvalidArgument, match="bucket"):
        page_request(tokens, "B!", "p", 5, "")


def test_top_level_prefixes_and_the_objects_beside_them() -> None:
    pages = [
        {"CommonPrefixes": [{"Prefix": "p0/"}], "Contents": [{"Key": "top"}]},
        {"CommonPrefixes": [{"Prefix": "p1/"}]},
    ]
    prefixes, direct = top_level_prefixes(pages)
    assert prefixes == ["p0/", "p1/"] and [entry["Key"] for entry in direct] == ["top"]
