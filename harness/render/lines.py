"""A decision row in one line, as the end of run-all prints it."""

from __future__ import annotations

import re

from harness.render.decisions import Row

# Each question's short name, for the one line a row gets at the end of run-all; a question not named here is
# shortened to its words before the first colon or question mark.
SHORT_NAMES = {
    "Handlers waiting on I/O: does async pay off, and on which stack?": "async, handlers waiting",
    "Handlers without I/O: which stack?": "stack, no I/O",
    "S3 to MongoDB, S3 100 ms and MongoDB 1 ms away as in a cloud region: which stack?": "stack, S3 to MongoDB",
    "Streaming an S3 listing object by object, S3 100 ms away: which stack?": "stack, S3 stream",
    "Listing S3 in every call, S3 100 ms away as in a cloud region: which stack?": "stack, S3 list",
    "S3 to MongoDB on an event loop: Motor or PyMongo's async client?": "Motor or PyMongo",
    "An S3 listing: one reply or a stream?": "reply or stream",
    "grpcio sync: one worker thread or ten?": "sync threads",
    "Does uvloop pay off, and on which stack?": "uvloop",
    "The load one core takes within its p99 SLO: which stack?": "capacity at SLO",
    "Fetching a large listing: paging, one stream, or the server in parallel?": "large listing",
    "One-message replies: a unary call or a stream?": "one-message replies",
    "Would REST do, and which call shape should a request/response flow take?": "REST, call shape",
    "How should clients hold connections, and servers their S3 client?": "connections",
    "What does TLS cost, and how should clients hold connections under it?": "TLS",
    "Which stack moves large messages, in plaintext or TLS?": "large messages",
    "Which stack serves the brief's S3 work a region away over TLS?": "S3 over TLS",
    "Processes or threads for handlers that compute?": "processes or threads",
    "Which interpreter should the server run on?": "interpreter",
    "What do 3.14 and free-threaded 3.14t give the server?": "3.14 and 3.14t",
    "Does SO_REUSEPORT spread the calls over a server's processes?": "SO_REUSEPORT",
    "Did this upgrade change speed?": "upgrade",
    "A stream reader slower than the server: does the server's memory grow?": "slow reader",
}
LINE_CHARACTERS = 100  # the most a row's line at the end of run-all takes
# The selection rule's long words, said shortly on a terminal line.
TERSE = (
    (re.compile(r": the (fastest|most [^,]+), or within \d+% of the (fastest|most) \(95%\)"), " (certified)"),
    (re.compile(r" could (be as fast|do as well)"), " close"),
)


def short_name(question: str) -> str:
    """A question's short name (SHORT_NAMES), else its words before the first colon or question mark."""
    return SHORT_NAMES.get(question) or re.split(r"[:?]", question, maxsplit=1)[0]


def answer_line(row: Row) -> str:
    """A row in one line of at most LINE_CHARACTERS: its short name, whether it is answered and trusted, then its
    answer, cut with an ellipsis where longer."""
    said = row.lead
    for pattern, shorter in TERSE:
        said = pattern.sub(shorter, said)
    mark = "" if row.answered and row.trusted else " (open)" if row.trusted else " (not trusted)"
    line = f"{short_name(row.question)}{mark}: {said}"
    return line if len(line) <= LINE_CHARACTERS else line[: LINE_CHARACTERS - 1].rstrip() + "…"
