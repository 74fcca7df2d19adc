"""Transport adapters: one module per gRPC framework, each serving the same scenarios."""
