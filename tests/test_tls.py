"""TLS and mutual TLS on every stack, over real TCP with a throwaway CA (harness.run.tls, trustme): good handshakes
serve the contract (and health and reflection); a plaintext client, a client trusting another CA, a client
without a certificate under mutual TLS and one with an expired certificate are refused at the handshake, and the
server goes on serving."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import grpc
import httpx
import pytest
import trustme
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from harness.plan.servers import ServerVariant, server_variant
from harness.run.backends import Backends
from harness.run.serving import running_server
from harness.run.tls import PLAIN, Certificates, Wire, make_certificates
from protos.bench.v1 import bench_pb2, bench_pb2_grpc
from servers.common import parse_config

# One variant of every stack: grpcio sync, grpclib, grpc.aio, Connect on pyvoy and on hypercorn, REST on
# uvicorn (HTTP/1.1) and on hypercorn (HTTP/2).
STACKS = ["sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy", "connect-hypercorn", "rest-h1", "rest-h2"]
HELLO = bench_pb2.HelloRequest(name="tls", reply_bytes=1024)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Certificates]:
    """The run's CA and its certificates; another CA's; and the run's CA's, expired."""
    root = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    return {
        "good": make_certificates(root / "good", ca=ca),
        "other": make_certificates(root / "other"),
        "expired": make_certificates(root / "expired", ca=ca, expired=True),
    }


@dataclass(frozen=True)
class Serving:
    variant: ServerVariant
    target: str
    wire: Wire
    certificates: dict[str, Certificates]


@pytest.fixture(scope="module", params=[(name, mutual) for name in STACKS for mutual in (False, True)], ids=str)
def serving(
    request: pytest.FixtureRequest, backends: Backends, certificates: dict[str, Certificates]
) -> Iterator[Serving]:
    name, mutual = request.param
    variant = server_variant(name)
    wire = Wire(certificates["good"], mutual)
    with running_server(variant, backends.env(), wire=wire) as (target, child):
        yield Serving(variant, target, wire, certificates)
        assert child.stop() == 0, child.log_tail()


def hello(serving: Serving, wire: Wire) -> str:
    """One SayHello over wire (gRPC), or GET /v1/hello (REST); the greeting."""
    if serving.variant.protocol == "http":
        context = wire.ssl_context()
        http2 = serving.variant.name == "rest-h2"
        with httpx.Client(
            base_url=f"{wire.scheme}://{serving.target}", verify=context or False, http2=http2, timeout=10
        ) as client:
            response = client.get("/v1/hello", params={"name": HELLO.name, "reply_bytes": HELLO.reply_bytes})
            response.raise_for_status()
            assert response.http_version == ("HTTP/2" if http2 else "HTTP/1.1")
            return str(response.json()["message"])
    with wire.channel(serving.target) as channel:
        reply = bench_pb2_grpc.GreeterStub(channel).SayHello(HELLO, timeout=10)
        assert len(reply.payload) == HELLO.reply_bytes
        return str(reply.message)


def refused(serving: Serving, wire: Wire) -> str:
    """What a client over wire is told when the handshake fails: the gRPC status, or the HTTP client's error."""
    if serving.variant.protocol == "http":
        with pytest.raises(httpx.TransportError) as raised:  # refused at the handshake, however it surfaces
            hello(serving, wire)
        return type(raised.value).__name__
    with pytest.raises(grpc.RpcError) as failed:
        hello(serving, wire)
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE, failed.value
    return str(failed.value.details())


def client_wire(serving: Serving, certificates: str, mutual: bool | None = None) -> Wire:
    found = serving.certificates[certificates]
    return Wire(found, serving.wire.mutual if mutual is None else mutual)


def test_a_good_handshake_serves_the_contract(serving: Serving) -> None:
    assert hello(serving, serving.wire) == "Hello tls"
    if serving.variant.protocol == "http":
        return
    with serving.wire.channel(serving.target) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        ask = reflection_pb2.ServerReflectionRequest(list_services="")
        (answer,) = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(iter([ask]), timeout=10)
        assert "bench.v1.Greeter" in {service.name for service in answer.list_services_response.service}


def test_a_plaintext_client_is_refused_and_the_server_goes_on(serving: Serving) -> None:
    refused(serving, PLAIN)
    assert hello(serving, serving.wire) == "Hello tls"


def test_a_client_trusting_another_ca_is_refused_and_the_server_goes_on(serving: Serving) -> None:
    said = refused(serving, client_wire(serving, "other"))
    if serving.variant.protocol != "http":
        assert "handshake" in said.lower() or "certificate" in said.lower() or "ssl" in said.lower(), said
    assert hello(serving, serving.wire) == "Hello tls"


def test_under_mutual_tls_a_client_without_a_good_certificate_is_refused(serving: Serving) -> None:
    if not serving.wire.mutual:
        assert hello(serving, client_wire(serving, "good", mutual=False)) == "Hello tls"  # no client certificate
        return
    refused(serving, client_wire(serving, "good", mutual=False))
    good, expired = serving.certificates["good"], serving.certificates["expired"]
    refused(serving, Wire(replace(good, client_chain=expired.client_chain, client_key=expired.client_key), True))
    assert hello(serving, serving.wire) == "Hello tls"


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (["--tls-cert", "/no/such.pem", "--tls-key", "/no/such.key"], "--tls-cert: no such file: /no/such.pem"),
    ],
)
def test_bad_tls_flags_are_a_usage_error_naming_the_flag(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        parse_config(flags, prog="server", description="a server", stack="threads")
    assert exited.value.code == 2 and message in capsys.readouterr().err
