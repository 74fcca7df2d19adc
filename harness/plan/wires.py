"""The wires a run's servers may speak, by name: what a plan, a record and a page say; harness.run.tls makes them."""

PLAINTEXT, TLS, MTLS = "plaintext", "tls", "mtls"
WIRES = (PLAINTEXT, TLS, MTLS)
