"""The glossary: each word the decision table and its answers use that a backend engineer might not, defined
once."""

# The words the decision table and its answers use that a backend engineer might not: each defined once, here, and
# shown by both renderings (README's "Words" and the page's glossary).
GLOSSARY = (
    (
        "sync-w1, sync-w10, sync-w50",
        "grpcio's thread-pool server with 1, 10 or 50 worker threads (50: a thread for each client at every level)",
    ),
    ("grpclib-asyncio, grpclib-uvloop", "grpclib's server on asyncio's own event loop or on uvloop"),
    ("aio-asyncio, aio-uvloop", "grpcio's asyncio server (grpc.aio) on asyncio's loop or uvloop"),
    ("connect-pyvoy, connect-hypercorn", "a Connect RPC app (speaking gRPC too) served by pyvoy (Envoy) or hypercorn"),
    ("rest-h1, rest-h2", "a FastAPI REST server over HTTP/1.1 (uvicorn) or HTTP/2 (hypercorn)"),
    ("…-minimal, floor", "a stack's own hello example and nothing else: what the stack costs before our code"),
    (
        "hello, hello-wait, s3-unary, s3-stream, s3-mongo",
        "the work a handler does: none; a 100 ms wait; list 893 S3 objects into one reply; stream them one a "
        "message; list them and upsert one MongoDB document each (S3 and MongoDB on loopback)",
    ),
    (
        "…-region",
        "the same S3 work with its backends where a cloud region has them: S3 100 ms to the first byte (AWS's "
        "guidance), MongoDB 1 ms away",
    ),
    (
        "…-pymongo",
        "the same stack archiving to MongoDB by PyMongo's native async client instead of Motor (the default)",
    ),
    (
        "fetch-all-20ms, one-message, info, s3-client",
        "the decision studies' workloads: fetching a 10,000-object listing with S3 20 ms away; a one-message reply; "
        "the Info flow (a small request and reply); the server's S3 client held per process or made per request",
    ),
    ("ghz, loadgen, h2load", "the load generators: ghz (gRPC), our Go loadgen (gRPC, REST, Connect), h2load (HTTP/2)"),
    ("c50, 50 clients", "calls in flight at once (the brief's levels: 2, 10, 25, 50)"),
    ("shared, per-worker, pool-10, per-call", "clients on one connection, one each, a pool of 10, a new one a call"),
    ("p2+per-worker", "two server processes sharing the port, the clients on a connection each"),
    (
        "+tls, p1, p2, @3.14t",
        "over TLS; one server process, or two sharing the port; on the free-threaded Python 3.14",
    ),
    (
        "threads@3.14t",
        "one sync grpcio process on the free-threaded Python 3.14 with ten worker threads per core (the GIL off): "
        "threads in place of processes",
    ),
    (
        "× [95% CI]",
        "one rate over another, and the range that holds the true ratio with 95% confidence; a run's comparisons "
        "of the same work lend each other how much a block scatters (moderated), so two or three blocks suffice",
    ),
    ("block", "one round in which every alternative serves a short slice, in a shuffled order"),
    (
        "certified, could be as fast, not yet, leading",
        "a pick that, with 95% confidence over every rival at once, is the fastest or within 5% of the fastest; the "
        "rivals that may be as fast; not yet: the candidates the evidence cannot yet choose between; leading: the "
        "fastest of them so far, not yet a pick",
    ),
    (
        "known to ±5%",
        "a cost (what TLS or an upgrade costs) measured closely enough: its 95% interval reaches at most 5% either "
        "side of it, whatever the cost",
    ),
    ("tie", "the interval lies within ±5% of 1: either will do"),
    ("faster, slower", "the interval lies wholly above or below that band"),
    (
        "not told apart (unresolved)",
        "the interval reaches across the band: the run cannot say which is faster, nor that they are equal; "
        "0.94 [0.89, 0.98] unresolved does not mean it costs 6%",
    ),
    (
        "A/A control, noise floor",
        "the reference against a second start of itself; its interval's half-width is "
        "the smallest difference the run could see",
    ),
    (
        "not trusted",
        "said where a row is not: its blocks fewer than `harness validate` finds keep the intervals' and the picks' "
        "claims on this machine type, its study's A/A control separated, its driver was busy, "
        "or its run predates blocks",
    ),
    (
        "open loop, capacity",
        "calls sent at a fixed rate whatever the replies; the highest rate whose p99 meets the SLO",
    ),
    (
        "over 3 runs on 2 days; this run alone; the runs disagree",
        "the ratio pooled over every run of this machine type in which both sides ran the same code (runs made "
        "for one question too, where they measured the same cells), allowing for how far runs of one day and "
        "another differ; beside it the newest run's own reading; the runs disagree when they sit further apart than "
        "their intervals allow",
    ),
    (
        "paging, stream, parallel-10; lockstep, pipelined",
        "a large listing fetched as pages of calls, as one server stream, or by the server listing 10 parts at "
        "once; a request stream that waits for each reply before the next message, or keeps several in flight",
    ),
    (
        "reader stopped, one-a-second; bounded, buffering; readings",
        "a client that reads a stream's first message and then none, or one message a second; a server whose memory "
        "grew at most six pages of the S3 listing a stream (flow control held it back), or more than that in every "
        "reading (it kept producing into its own buffers); a reading is one slow reader against a fresh server",
    ),
)
