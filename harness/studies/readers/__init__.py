"""The readers study: does a stream reader slower than the server make the server's memory grow?

Each chosen stack serves READER_STREAMS StreamObjects streams of the long-keys bucket at once, one object a message
(about 1 KB), to our Go driver's slow reader (`loadgen slow`). The reader holds every stream's HTTP/2 window fixed at
64 KiB, reads each stream's first message, then one a second or none at all for READER_SECONDS, and cancels every
stream. Each reading gets a server of its own, warmed by reading the whole listing twice; its memory is then sampled
throughout: what it grew by over the reading, a stream, against what a stream's listing weighs, over READER_REPEATS
readings. Every stack lists S3 a page (1,000 objects) at a time, so a server that flow control holds back still
holds about a page a stream (a tenth of the listing); one that keeps producing into its own buffers grows toward
the whole listing a stream. Loss: none; each stream ends Canceled, by the client, as it meant to. Opt-in:
`run-all --study readers`, about 40 s a stack and reading.
"""

from __future__ import annotations

from harness.plan.matrix import LONG_KEY_BYTES, LONG_KEYS_BUCKET, LONG_KEYS_OBJECTS, Scenario

NAME = "readers"
QUESTION = "Does a slow stream reader make the server's memory grow?"
STACK_NAMES = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "connect-pyvoy")
READER_STREAMS = 10  # as many as sync-w10 has workers: every stream is served at once on every stack
READER_SECONDS = 15
READER_REPEATS = 3  # each on a fresh server: the spread of a stack's growth a stream is over these
# The readers: one message a second, or the first and then none.
READERS = {"stopped": 0, "one-a-second": 1000}
PAGE_OBJECTS = 1_000  # what one S3 ListObjectsV2 call returns
# About what one object weighs in a ListObjectsReply of one: its key, then size, etag and time.
LISTING_BYTES_AN_OBJECT = LONG_KEY_BYTES + 80
LISTING_BYTES = LONG_KEYS_OBJECTS * LISTING_BYTES_AN_OBJECT  # a stream's whole listing, as sent
# A stream may hold this much of the server's memory and still count as bounded: six pages' weight as sent, 60% of a
# stream's listing. A server that flow control holds back keeps a 64 KiB window, the transport's write buffers and
# the page it is sending from, that page held three ways (S3's XML, botocore's dicts, the messages made from them):
# grpcio sync and grpc.aio and grpclib on uvloop held 4.0 to 4.8 MiB a stream, flat from the third second on, here
# (2026-11-28). One that buffers the whole listing holds it as Python objects too, several times the 10 MiB sent.
BOUNDED_BYTES_A_STREAM = 6 * PAGE_OBJECTS * LISTING_BYTES_AN_OBJECT
# Stacks the study has found to buffer under a stopped reader (run 20261129T000142Z: connect-pyvoy 20.7 to 25.7 MiB a
# stream over 3 readings, 208% of a stream's listing). Its test holds each to what the study decides from a reading,
# never to a byte count read on one machine: a stack named here still grows past the bound, every other stays within.
BUFFERING = frozenset({"connect-pyvoy"})


def reader_scenario(reader: str, repeat: int) -> Scenario:
    """StreamObjects of the long-keys bucket, one object a message, read as `reader` reads: its `repeat`th reading,
    a scenario of its own so that each gets a server of its own (a server's memory does not give back what an
    earlier reading took)."""
    every_ms = READERS[reader]
    return Scenario(
        f"slow-reader-{reader}-{repeat}",
        "bench.v1.ObjectStore.StreamObjects",
        {"bucket": LONG_KEYS_BUCKET, "batch_size": 1, "every_ms": every_ms, "seconds": READER_SECONDS},
        f"StreamObjects of the {LONG_KEYS_OBJECTS:,}-object long-keys bucket, one object a message, read "
        + ("once and then not at all" if every_ms == 0 else f"one message every {every_ms} ms")
        + f" for {READER_SECONDS} s, then cancelled (reading {repeat} of {READER_REPEATS})",
        0,
        bucket=LONG_KEYS_BUCKET,
    )


# Every reader READER_REPEATS times, the repeats outermost: a stack's readings of a reader fall apart in time.
READER_SCENARIOS = tuple(
    reader_scenario(reader, repeat) for repeat in range(1, READER_REPEATS + 1) for reader in READERS
)
READER_OF = {each.name: reader for each, reader in zip(READER_SCENARIOS, [*READERS] * READER_REPEATS, strict=True)}
