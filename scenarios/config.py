"""Where the backends are: read once from the standard environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

DEFAULT_MONGO_URI = "mongodb://127.0.0.1:27017"
DEFAULT_MONGO_DB = "bench"
DEFAULT_REGION = "us-east-1"
# Seconds, overridable through these variables: an operator keeps them below the callers' deadlines so
# that a hung backend frees a worker thread before the caller gives up.
CONNECT_TIMEOUT_VARIABLE = "BACKEND_CONNECT_TIMEOUT"
READ_TIMEOUT_VARIABLE = "BACKEND_READ_TIMEOUT"


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name)
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds, got {text!r}") from None


@dataclass(frozen=True)
class BackendConfig:
    """S3 and MongoDB endpoints and credentials; `s3_endpoint=None` means real AWS."""

    s3_endpoint: str | None = None
    s3_region: str = DEFAULT_REGION
    s3_access_key: str | None = field(default=None, repr=False)
    s3_secret_key: str | None = field(default=None, repr=False)
    mongo_uri: str = DEFAULT_MONGO_URI
    mongo_db: str = DEFAULT_MONGO_DB
    # Seconds before an unreachable backend is reported UNAVAILABLE rather than waited on.
    connect_timeout: float = 2.0
    read_timeout: float = 30.0

    def __post_init__(self) -> None:
        if not self.mongo_uri.startswith(("mongodb://", "mongodb+srv://")):
            raise ValueError(f"MONGO_URI must start with mongodb:// or mongodb+srv://, got {self.mongo_uri!r}")
        if not self.mongo_db:
            raise ValueError("MONGO_DB must not be empty")
        if self.connect_timeout <= 0 or self.read_timeout <= 0:
            raise ValueError("backend timeouts must be positive")

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> BackendConfig:
        """Read AWS_ENDPOINT_URL, AWS_* credentials and region, MONGO_URI, MONGO_DB and the backend timeouts."""
        return cls(
            s3_endpoint=env.get("AWS_ENDPOINT_URL") or None,
            s3_region=env.get("AWS_DEFAULT_REGION") or env.get("AWS_REGION") or DEFAULT_REGION,
            s3_access_key=env.get("AWS_ACCESS_KEY_ID") or None,
            s3_secret_key=env.get("AWS_SECRET_ACCESS_KEY") or None,
            mongo_uri=env.get("MONGO_URI") or DEFAULT_MONGO_URI,
            mongo_db=env.get("MONGO_DB") or DEFAULT_MONGO_DB,
            connect_timeout=_seconds(env, CONNECT_TIMEOUT_VARIABLE, cls.connect_timeout),
            read_timeout=_seconds(env, READ_TIMEOUT_VARIABLE, cls.read_timeout),
        )
