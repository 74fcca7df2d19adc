"""The protocols study: would REST do, and which call shape should a request/response flow take?

The Info flow (name, age, height -> success; no I/O) as gRPC unary SetInfo calls, as one SetInfos stream
per client worker used in lockstep (send, wait for the reply, send the next), as one stream pipelined (a
sender and a receiver, at most IN_FLIGHT unanswered), and as REST (FastAPI) over HTTP/1.1 with a
connection per worker and over HTTP/2 on one connection; the Connect RPC stacks serve the gRPC shapes and
SetInfo in Connect's own unary protocol with JSON over HTTP/1.1. Client workers: 1, 16 and 50. One driver
(loadgen) for every shape and protocol keeps the client's own cost equal; SetInfo at CROSS_CHECK_WORKERS
is also driven by ghz, and REST over HTTP/2 by h2load, to cross-check it. Each message (a request and its
reply) counts once.
"""

from __future__ import annotations

from harness.plan.matrix import HTTP_SHAPES, IN_FLIGHT, INFO_SHAPES, Scenario

NAME = "protocols"
QUESTION = "Would REST do, and which call shape should a request/response flow take?"
GRPC_SERVERS = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy", "connect-hypercorn")
# The comparison in rounds runs the gRPC shapes on this stack unless --servers names another (grpc.aio: no
# stream waits for a worker thread), against REST on each REST server and Connect's JSON on CONNECT_JSON_ON.
COMPARED_ON = "aio-uvloop"
CONNECT_JSON_ON = "connect-pyvoy"
CONNECT_MODULE = "servers.connect"  # a stack that also speaks the Connect protocol
REST_SERVERS = {"rest-h1": "1.1", "rest-h2": "2"}  # variant -> the HTTP version it speaks
GRPC_SHAPES = ("unary", "lockstep", "pipelined")
WORKERS = (1, 16, 50)
CROSS_CHECK_WORKERS = 16
WARMUP_MESSAGES = 500
INFO_REQUEST = {"name": "w0", "age": 30, "height": 170}  # ghz's request; loadgen sends one like it per message
RUN_SECONDS = 2.5  # Info messages are cheap: longer runs for steadier figures


def info_scenario(shape: str, http: str = "") -> Scenario:
    """The Info flow in one shape; a REST or Connect JSON scenario names its HTTP version."""
    name = f"info-{shape}-h{http.split('.')[0]}" if shape in HTTP_SHAPES else f"info-{shape}"
    data: dict[str, object] = {"shape": shape, **INFO_REQUEST}
    if shape == "pipelined":
        data["in_flight"] = IN_FLIGHT
    if shape in HTTP_SHAPES:
        data["http"] = http
    described = {
        "unary": "SetInfo calls",
        "lockstep": "a SetInfos stream per worker, in lockstep",
        "pipelined": f"a SetInfos stream per worker, pipelined ({IN_FLIGHT} in flight at most)",
        "rest": f"POST /v1/info (JSON) over HTTP/{http}",
        "connect": f"SetInfo in Connect's unary protocol, JSON over HTTP/{http}",
    }[shape]
    return Scenario(name, INFO_SHAPES[shape], data, described, WARMUP_MESSAGES, run_seconds=RUN_SECONDS)


GRPC_SCENARIOS = tuple(info_scenario(shape) for shape in GRPC_SHAPES)
REST_SCENARIOS = {server: info_scenario("rest", http) for server, http in REST_SERVERS.items()}
CONNECT_JSON = info_scenario("connect", "1.1")
REST_H2 = REST_SCENARIOS["rest-h2"]
UNARY = GRPC_SCENARIOS[0]
SHAPE_LABELS = (
    {UNARY.name: "unary", GRPC_SCENARIOS[1].name: "lockstep", GRPC_SCENARIOS[2].name: "pipelined"}
    | {each.name: f"REST HTTP/{each.data['http']}" for each in REST_SCENARIOS.values()}
    | {CONNECT_JSON.name: f"Connect JSON HTTP/{CONNECT_JSON.data['http']}"}
)
HTTP_SCENARIOS = {*(each.name for each in REST_SCENARIOS.values()), CONNECT_JSON.name}  # JSON over HTTP
