"""What run-all measures and where it writes: one frozen dataclass, validated once, read by every study."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness.method.verdicts import BLOCKS, DESIGNS, HELD, PROCESS, SLICERS
from harness.plan.matrix import (
    BENCH_BUCKET,
    BENCH_OBJECTS,
    LONG_KEYS_BUCKET,
    LONG_KEYS_OBJECTS,
    SMALL_BUCKET,
    SMALL_OBJECTS,
    WIDE_BUCKET,
    WIDE_OBJECTS,
    Scenario,
    connection_count,
)
from harness.plan.pythons import Prepared
from harness.plan.servers import ServerVariant
from harness.plan.shards import Shard
from harness.plan.virtualenvs import pinned_versions, pins_of
from harness.plan.wires import PLAINTEXT, WIRES


@dataclass(frozen=True)
class RunOptions:
    """The run's choices. An axis left as None takes the study's own default values."""

    out_dir: Path
    studies: tuple[str, ...] = ()  # () runs the default studies
    servers: tuple[ServerVariant, ...] | None = None
    scenarios: tuple[Scenario, ...] | None = None
    levels: tuple[int, ...] | None = None
    connections: tuple[str, ...] | None = None  # how the driver's workers hold connections (harness.plan.matrix)
    repeats: int | None = None
    requests: int | None = None  # fixed requests per measured run; None sizes runs from the warm-up
    warmup_requests: int | None = None  # None: the scenario's own
    server_cpus: tuple[int, ...] = ()
    objects: int = BENCH_OBJECTS
    latency_bucket_objects: int = SMALL_OBJECTS
    s3_latency_ms: int = 0  # added to every scenario's S3 traffic that has no latency of its own
    mongo_latency_ms: int = 0
    jitter_ms: int = 0
    available_cpus: tuple[int, ...] = field(default_factory=lambda: tuple(sorted(os.sched_getaffinity(0))))
    full: bool = (
        False  # every cell of a study's matrix: in blocks where the study has comparisons of it, else cell by cell
    )
    # Every cell measured on its own, one after another (the method before blocks): a smoke run (--quick), a server
    # the harness did not start (--target).
    by_cell: bool = False
    blocks: int | None = None  # comparisons run exactly this many blocks (a smoke test); None: the stopping rule
    cycles: int | None = None  # with blocks: a block's mirrored cycles of slices; None: the method's (2)
    # How comparisons are measured: "blocks" of warm servers alternated in slices, or "fresh" (a start per window).
    design: str = "blocks"
    # Who runs a block's slices: one loadgen held for the block, or a driver process each (harness.method.verdicts).
    slicer: str = HELD
    aside: bool = False  # a run for one question: it decides no row of the report (results.RunMeta.aside)
    # Race as if no earlier run existed: by default a run's race starts from what earlier runs of its machine class
    # and code tell each row (harness.analysis.evidence.seeds) and spends its budget on the rows they left open.
    fresh: bool = False
    # Set each stack against its floor (servers/minimal.py) on hello at its highest level: a run aside for that
    # question (issue 41), not the default run's, which spends its minutes on the brief.
    floors: bool = False
    # Measure one shard of the plan (harness.plan.shards): its part of the comparisons, as a run of its own.
    shard: Shard | None = None
    seed: int | None = None  # the seed of the rounds' order; None: one drawn for the run (and recorded)
    # The time the run's comparisons share: none starts a round that would end past it. None: no budget.
    budget_minutes: float | None = None
    # What every server of the run speaks: plaintext, tls, or mtls (a client certificate too), with certificates
    # made for the run (harness.run.tls).
    wire: str = "plaintext"
    # The interpreters the servers run under where a study compares them (3.X, 3.Xt or a path; () the study's
    # own), and each as prepared for the run (harness.plan.pythons): filled by the runner before it plans.
    pythons: tuple[str, ...] = ()
    interpreters: tuple[Prepared, ...] = ()
    # The versions study's pins (name==version, --packages), measured against the project's own versions; each
    # side's virtualenv is prepared with the interpreters, under the labels harness.studies.versions gives them.
    packages: tuple[str, ...] = ()

    @property
    def slices_by(self) -> str:
        """Who runs the slices: the slicer asked for in blocks; a design of fresh starts, a driver process a window."""
        return self.slicer if self.design == BLOCKS else PROCESS

    @property
    def target(self) -> str:
        """HOST:PORT of the one server measured when it is not the harness's own (--target), else ""."""
        external = [server.address for server in self.servers or () if server.address]
        return external[0] if external else ""

    def __post_init__(self) -> None:
        if self.servers is not None and not self.servers:
            raise ValueError("give at least one server variant")
        if self.target and len(self.servers or ()) > 1:
            raise ValueError("a --target is measured alone: give no other server")
        if self.scenarios is not None and not self.scenarios:
            raise ValueError("give at least one scenario")
        if self.levels is not None and (not self.levels or min(self.levels) < 1):
            raise ValueError("concurrency levels must be >= 1")
        if self.connections is not None and not self.connections:
            raise ValueError("give at least one way to hold connections")
        for each in self.connections or ():
            connection_count(each, min(self.levels or (1_000_000,)))
        if self.blocks is not None and self.blocks < 2:
            raise ValueError("blocks must be >= 2: a ratio's interval needs two")
        if self.cycles is not None and (self.cycles < 1 or self.blocks is None):
            raise ValueError("cycles must be >= 1, and only with blocks: the pilot fits them otherwise")
        if self.budget_minutes is not None and self.budget_minutes <= 0:
            raise ValueError("the budget must be > 0 minutes")
        if self.design not in DESIGNS:
            raise ValueError(f"the design is one of {', '.join(DESIGNS)}, got {self.design!r}")
        if self.slicer not in SLICERS:
            raise ValueError(f"the slicer is one of {', '.join(SLICERS)}, got {self.slicer!r}")
        if self.wire not in WIRES:
            raise ValueError(f"the wire is one of {', '.join(WIRES)}, got {self.wire!r}")
        if self.wire != PLAINTEXT and "wire" in self.studies:
            raise ValueError("the wire study sets each cell's wire itself: run it without --tls or --mtls")
        if self.packages and "versions" not in self.studies:
            raise ValueError("--packages pins versions for the versions study: add --study versions")
        if "versions" in self.studies and not self.packages:
            raise ValueError(
                "the versions study sets pinned versions against the project's: give --packages grpcio==1.75.0"
            )
        own = pinned_versions()
        for name, version in pins_of(self.packages).items():
            if own.get(name) == version:
                raise ValueError(f"{name}=={version} is the project's own version: pin another")
        if self.repeats is not None and self.repeats < 1:
            raise ValueError("repeats must be >= 1")
        if self.requests is not None and self.levels and self.requests < max(self.levels):
            raise ValueError(f"requests ({self.requests}) must be >= the highest concurrency ({max(self.levels)})")
        if min(self.s3_latency_ms, self.mongo_latency_ms, self.jitter_ms) < 0:
            raise ValueError("latencies and jitter must be >= 0 ms")
        if min(self.objects, self.latency_bucket_objects) < 1:
            raise ValueError("buckets need at least one object")
        unknown = set(self.server_cpus) - set(self.available_cpus)
        if unknown:
            raise ValueError(f"server CPUs {sorted(unknown)} are not available (have {list(self.available_cpus)})")

    @property
    def other_cpus(self) -> tuple[int, ...]:
        """Where the driver, the backends and the harness run: the CPUs the server does not get, or all."""
        return tuple(cpu for cpu in self.available_cpus if cpu not in self.server_cpus) or self.available_cpus

    @property
    def server_cpu_count(self) -> int:
        return len(self.server_cpus or self.available_cpus)

    def latencies(self, scenario: Scenario) -> tuple[int, int, int]:
        """The emulated (S3, MongoDB) latency and their jitter in ms for a scenario's cells."""
        s3_ms = scenario.s3_latency_ms or self.s3_latency_ms
        mongo_ms = scenario.mongo_latency_ms or self.mongo_latency_ms
        return s3_ms, mongo_ms, (scenario.jitter_ms or self.jitter_ms) if s3_ms or mongo_ms else 0

    def bucket_objects(self, bucket: str) -> int:
        """How many objects a seeded bucket holds."""
        sizes = {
            BENCH_BUCKET: self.objects,
            SMALL_BUCKET: self.latency_bucket_objects,
            WIDE_BUCKET: WIDE_OBJECTS,
            LONG_KEYS_BUCKET: LONG_KEYS_OBJECTS,
        }
        return sizes[bucket]

    def skip_reason(self, server: ServerVariant, scenario: Scenario | None = None) -> str:
        """Why a server variant (on a scenario) is not run here, or "" when it is."""
        if server.address and scenario is not None and self.latencies(scenario) != (0, 0, 0):
            return "emulated latency routes the backends of a server the harness starts; a --target uses its own"
        if server.min_cpus > self.server_cpu_count:
            return (
                f"needs {server.min_cpus} server CPUs, given {self.server_cpu_count} "
                "(--server-cpus; on 2 cores the server would then share them with the driver and the backends)"
            )
        return ""
