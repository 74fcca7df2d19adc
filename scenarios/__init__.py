"""The work each server does, independent of any gRPC framework: a sync and an async implementation."""
