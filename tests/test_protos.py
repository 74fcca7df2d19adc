"""The committed stubs are what `make protos` generates from bench.proto today, our Go driver's too."""

from __future__ import annotations

import pytest

from harness.run.tools import PROTOC_GEN_GO, PROTOC_GEN_GO_GRPC, ensure_go_tool
from protos.generate import stale_files


@pytest.mark.usefixtures("tools")
def test_generated_stubs_are_fresh() -> None:
    assert stale_files((ensure_go_tool(PROTOC_GEN_GO), ensure_go_tool(PROTOC_GEN_GO_GRPC))) == []
