"""The interpreters study: should we upgrade the interpreter, and how should a host's cores serve handlers that
compute?

Two kinds of comparison in interleaved rounds. The interpreter comparison: each of SCENARIO_NAMES at LEVEL
workers on each of STACK_NAMES, the server run by every interpreter found or built (harness.plan.pythons) against
REFERENCE, each in a virtualenv of the same pinned packages, on the run's server core. The cores comparison:
hello-work at CORES_LEVEL workers with the server free to use every CPU of the machine, one process against N
processes on one port (N = the machine's CPUs; SO_REUSEPORT spreads connections, not calls, so N processes are
driven both on one shared connection and on a connection per worker), and, where grpcio runs without the GIL on
the free-threaded build, one sync process of N x its threads. Opt-in: `run-all --study interpreters`.
"""

from __future__ import annotations

from harness.plan.matrix import HELLO_WORK, Scenario, scenario

NAME = "interpreters"
QUESTION = "Which interpreter should the servers run on, and should a host's cores serve as processes or threads?"
STACK_NAMES = ("sync-w10", "grpclib-uvloop", "aio-uvloop", "rest-h1")
REFERENCE = "3.11"
LEVEL = 50
SCENARIOS: tuple[Scenario, ...] = (HELLO_WORK, scenario("hello"), scenario("s3-unary-100ms"))
CORES_STACKS = ("sync-w10", "aio-uvloop")
CORES_LEVEL = 20  # enough calls in flight to keep every process of N busy at about 10 ms a call
FREE_THREADED = "3.14t"
