"""Orchestration: pinned tools, backends, the benchmark matrix, ghz runs and results."""
