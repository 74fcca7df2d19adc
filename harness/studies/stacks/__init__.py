"""The stacks study: which gRPC server stack, and when does async pay off?

Every server variant serves every scenario at several concurrency levels in closed loop (ghz, one
connection), the original 2020 study's method; at CONNECTIONS_LEVEL also with one connection per client
worker, as grpc_bench drives. Tables: one per scenario, level and way of connecting; a chart per scenario
(one connection).
"""

from __future__ import annotations

NAME = "stacks"
QUESTION = "Which gRPC server stack should we run, and when does async pay off?"
CONNECTIONS_LEVEL = 50  # where each cell also runs with one connection per client worker
