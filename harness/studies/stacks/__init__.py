"""The stacks study: which gRPC server stack, and when does async pay off?

Every server variant serves every scenario at several concurrency levels in closed loop (ghz, one
connection), the original 2020 study's method; at CONNECTIONS_LEVEL also with one connection per client
worker, as grpc_bench drives. Tables: one per scenario, level and way of connecting; a chart per scenario
(one connection).
"""

from __future__ import annotations

NAME = "stacks"
QUESTION = "Which gRPC server stack should we run, and when does async pay off?"
CONNECTIONS_LEVEL = 50  # where each cell of the full matrix also runs with one connection per client worker
REFERENCE = "sync-w10"  # what every comparison sets the other stacks against
# The project's brief: these servers serve these scenarios at these levels, a table per level. By default each
# (scenario, level) is a comparison against REFERENCE, with PEERS beside the brief's servers: a sync server sized
# to the load (a thread per client), grpc.aio and Connect RPC.
BRIEF_SERVERS = ("sync-w1", "sync-w10", "grpclib-asyncio", "grpclib-uvloop")
PEERS = ("sync-w50", "aio-uvloop", "connect-pyvoy")
BRIEF_SCENARIOS = ("hello", "s3-unary", "s3-stream", "s3-mongo")
BRIEF_LEVELS = (2, 10, 25, 50)
PYMONGO = ("grpclib-asyncio-pymongo", "grpclib-uvloop-pymongo", "aio-uvloop-pymongo")
# grpc.aio on asyncio's own loop beside aio-uvloop, so that "does uvloop pay off" answers for grpc.aio as for grpclib:
# where the loop's own cost shows (handlers that compute nothing, and that wait), at the level the rows read; its
# slices are short there, so it costs the default run about a minute.
LOOP_PEER, LOOP_SCENARIOS = "aio-asyncio", ("hello", "hello-wait")
# Beyond the brief, the comparison that decides whether async pays off when handlers wait: scenario -> level.
DECISIVE = {"hello-wait": 50}
# Beyond the brief, its S3 work with the backends a cloud region away (S3 100 ms, MongoDB 1 ms): scenario -> the
# levels it is compared at (the one its decision rows read); each event-loop stack with PyMongo's async client beside
# Motor on s3-mongo here.
DISTANT = {"s3-unary-region": (50,), "s3-stream-region": (50,), "s3-mongo-region": (50,)}
