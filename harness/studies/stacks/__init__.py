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
# The comparisons that decide the study's questions: scenario -> concurrency. hello: the server's own cost per
# call; hello-wait: waiting on I/O; s3-unary: parsing an S3 listing in every call (at 10, two waves of calls
# per worker fit in a window of a few seconds).
DECISIVE = {"hello": 50, "hello-wait": 50, "s3-unary": 10}
