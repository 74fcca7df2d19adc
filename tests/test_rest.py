"""The REST server on both HTTP versions, over real HTTP (httpx, with h2 for HTTP/2 cleartext): status codes and
bodies for good and bad input, the version each one speaks, and a clean stop on SIGTERM."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import replace

import httpx
import psutil
import pytest

from harness.plan.servers import REST_VARIANTS, ServerVariant
from harness.run.serving import running_server
from scenarios.objects import MAX_REPLY_BYTES, MAX_WORK, reply_payload
from tests.conftest import CONNECTIONS, answering

pytestmark = pytest.mark.usefixtures("tools")  # every test here starts a server or a tool


@pytest.fixture(scope="module", params=REST_VARIANTS, ids=lambda variant: variant.name)
def rest(request: pytest.FixtureRequest) -> Iterator[tuple[ServerVariant, httpx.Client]]:
    variant: ServerVariant = request.param
    http2 = variant.name == "rest-h2"
    with (
        running_server(variant, {}) as (target, child),
        # HTTP/2 by prior knowledge, as a gRPC client and h2load speak it to a cleartext server.
        httpx.Client(base_url=f"http://{target}", http1=not http2, http2=http2, timeout=10) as client,
    ):
        yield variant, client
        assert child.stop() == 0, child.log_tail()


def test_each_server_speaks_its_http_version(rest: tuple[ServerVariant, httpx.Client]) -> None:
    variant, client = rest
    response = client.get("/v1/hello", params={"name": "ann"})
    assert response.status_code == 200 and response.json() == {"message": "Hello ann", "payload": ""}
    assert response.http_version == ("HTTP/2" if variant.name == "rest-h2" else "HTTP/1.1")


@pytest.mark.parametrize("size", [1, 64 * 1024, MAX_REPLY_BYTES])
def test_hello_carries_the_bytes_asked_for_in_json_or_raw(rest: tuple[ServerVariant, httpx.Client], size: int) -> None:
    _, client = rest
    response = client.get("/v1/hello", params={"name": "p", "reply_bytes": size})
    assert response.status_code == 200 and response.json()["message"] == "Hello p"
    assert base64.b64decode(response.json()["payload"]) == reply_payload(size)
    raw = client.get("/v1/hello", params={"reply_bytes": size}, headers={"Accept": "application/octet-stream"})
    assert raw.status_code == 200 and raw.headers["content-type"] == "application/octet-stream"
    assert raw.content == reply_payload(size)


@pytest.mark.parametrize(
    ("size", "reason"),
    [
        (MAX_REPLY_BYTES + 1, f"reply_bytes: {MAX_REPLY_BYTES + 1} is above the maximum of {MAX_REPLY_BYTES}"),
        (-1, "query.reply_bytes: Input should be greater than or equal to 0"),
        ("lots", "query.reply_bytes: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_a_bad_reply_size_is_400_naming_the_field(
    rest: tuple[ServerVariant, httpx.Client], size: int | str, reason: str
) -> None:
    _, client = rest
    response = client.get("/v1/hello", params={"name": "p", "reply_bytes": size})
    assert response.status_code == 400 and response.json() == {"success": False, "reason": reason}


def test_hello_computes_the_work_asked_for_and_refuses_too_much(rest: tuple[ServerVariant, httpx.Client]) -> None:
    _, client = rest
    assert client.get("/v1/hello", params={"name": "w", "work": 5}).json()["message"] == "Hello w"
    response = client.get("/v1/hello", params={"name": "w", "work": MAX_WORK + 1})
    assert response.status_code == 400
    assert response.json()["reason"] == f"work: {MAX_WORK + 1} is above the maximum of {MAX_WORK}"


def test_good_info_is_kept(rest: tuple[ServerVariant, httpx.Client]) -> None:
    _, client = rest
    for age in (30, 31):
        response = client.post("/v1/info", json={"name": "ann", "age": age, "height": 170})
        assert response.status_code == 200 and response.json() == {"success": True, "reason": ""}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"name": "", "age": 1, "height": 1}, "name: must not be empty"),
        ({"name": "a", "age": -1, "height": 1}, "age: must be 0 or more, got -1"),
        ({"name": "a", "age": 1, "height": -5}, "height: must be 0 or more, got -5"),
        ({"name": "a", "age": "old", "height": 1}, "age: Input should be a valid integer"),
        ({"name": 7, "age": 1, "height": 1}, "name: Input should be a valid string"),
    ],
)
def test_bad_info_is_400_with_the_reason(
    rest: tuple[ServerVariant, httpx.Client], body: dict[str, object], reason: str
) -> None:
    _, client = rest
    response = client.post("/v1/info", json=body)
    assert response.status_code == 400
    assert response.json() == {"success": False, "reason": reason}


def test_one_connection_serves_more_than_a_thousand_requests(rest: tuple[ServerVariant, httpx.Client]) -> None:
    _, client = rest  # hypercorn's default closed a connection after 1,000 requests
    codes = {
        client.post("/v1/info", json={"name": "many", "age": age % 90, "height": 1}).status_code for age in range(1100)
    }
    assert codes == {200}


def test_a_body_that_is_not_json_is_400_and_the_server_goes_on(rest: tuple[ServerVariant, httpx.Client]) -> None:
    _, client = rest
    response = client.post("/v1/info", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert response.json()["success"] is False and "JSON" in response.json()["reason"]
    assert client.post("/v1/info", json={"name": "b", "age": 1, "height": 1}).status_code == 200


@pytest.mark.parametrize("variant", REST_VARIANTS, ids=lambda variant: variant.name)
def test_two_processes_share_the_port_and_sigterm_stops_them_all(variant: ServerVariant) -> None:
    two = replace(variant, args=(*variant.args, "-p", "2"))
    with running_server(two, {}) as (target, child):
        workers = psutil.Process(child.pid).children()
        assert len(workers) == 2
        port = int(target.rpartition(":")[2])
        clients = [httpx.Client(base_url=f"http://{target}", timeout=10) for _ in range(CONNECTIONS)]
        try:
            for client in clients:  # a client each: a connection each
                assert client.get("/v1/hello", params={"name": "p"}).json() == {"message": "Hello p", "payload": ""}
            assert answering(workers, port) == {worker.pid for worker in workers}
        finally:
            for client in clients:
                client.close()
        assert child.stop() == 0, child.log_tail()
    assert not any(worker.is_running() for worker in workers)
